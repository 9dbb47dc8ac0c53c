package dialecttest

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// The benchmarks are declared in the dialects' packages (and, for pairs
// of dialects, in translate/cross) so that their numbers keep their
// names; their bodies are these. from is the client's dialect, to the
// upstream's: the same for a same-dialect route.

// BenchmarkRequest decodes from's BenchRequest as a client's request and
// encodes it for an upstream of to.
func BenchmarkRequest(b *testing.B, from, to *Spec) {
	benchmarkRequest(b, from, to, filepath.Join(from.Cases, from.BenchRequest))
}

// BenchmarkRequestText decodes the cross table's text request of from (a
// system prompt and a question, the load benchmark's shape) as a client's
// request and encodes it for an upstream of to. dir is from's folder in
// the cross table.
func BenchmarkRequestText(b *testing.B, from, to *Spec, dir string) {
	benchmarkRequest(b, from, to, filepath.Join(testdata, "cross_table", "text", dir, "request.json"))
}

// benchmarkRequest decodes the client request at path and encodes it for
// an upstream of to.
func benchmarkRequest(b *testing.B, from, to *Spec, path string) {
	body, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := from.Client.DecodeRequest(from.Incoming(nil, from.Model, body))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := to.Upstream.EncodeRequest(req, translate.Target{Model: to.Model}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReply decodes to's Reply as an upstream's reply and encodes it
// for a client of from.
func BenchmarkReply(b *testing.B, from, to *Spec) {
	body, err := os.ReadFile(filepath.Join(to.Cases, to.Reply))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := to.Upstream.DecodeResponse(translate.Target{Model: to.Model}, body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := from.Client.EncodeResponse(from.ClientRequest, resp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStream500 decodes to's Stream500 from an upstream of to and
// encodes it for a client of from. Every pass must yield at least
// to.Stream500Events events, or the stream is not the one meant.
func BenchmarkStream500(b *testing.B, from, to *Spec) {
	benchmarkStream(b, from, to, to.Stream500(), to.Stream500Events)
}

// BenchmarkStreamText decodes to's StreamText from an upstream of to and
// encodes it for a client of from.
func BenchmarkStreamText(b *testing.B, from, to *Spec) {
	if to.StreamText == "" {
		b.Skipf("%s has no recorded text stream", to.Name())
	}
	stream, err := os.ReadFile(filepath.Join(to.Cases, to.StreamText))
	if err != nil {
		b.Fatal(err)
	}
	benchmarkStream(b, from, to, stream, 1)
}

// BenchmarkDecodeStreamText decodes to's recorded text stream into
// canonical events and encodes none: what reading an upstream's stream
// costs on its own, as a same-dialect stream, relayed, pays it.
func BenchmarkDecodeStreamText(b *testing.B, to *Spec) {
	if to.StreamText == "" {
		b.Skipf("%s has no recorded text stream", to.Name())
	}
	stream, err := os.ReadFile(filepath.Join(to.Cases, to.StreamText))
	if err != nil {
		b.Fatal(err)
	}
	benchmarkDecode(b, to, stream, 1)
}

// BenchmarkDecodeStream500 decodes to's Stream500 and encodes nothing.
func BenchmarkDecodeStream500(b *testing.B, to *Spec) {
	benchmarkDecode(b, to, to.Stream500(), to.Stream500Events)
}

// benchmarkDecode decodes stream from an upstream of to; every pass must
// yield at least events events.
func benchmarkDecode(b *testing.B, to *Spec, stream []byte, events int) {
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		dec := to.Upstream.NewStreamDecoder(translate.Target{Model: to.Model})
		n := 0
		for _, err := range translate.DecodeStream(to.Upstream.Dialect(), bytes.NewReader(stream), dec, translate.StreamLimits{}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n < events {
			b.Fatalf("%d events, want at least %d", n, events)
		}
	}
}

// benchmarkStream decodes stream from an upstream of to and encodes it
// for a client of from; every pass must yield at least events events.
func benchmarkStream(b *testing.B, from, to *Spec, stream []byte, events int) {
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		w := sse.NewWriter(io.Discard)
		enc := from.Client.NewStreamEncoder(from.ClientRequest)
		dec := to.Upstream.NewStreamDecoder(translate.Target{Model: to.Model})
		n := 0
		for ev, err := range translate.DecodeStream(to.Upstream.Dialect(), bytes.NewReader(stream), dec, translate.StreamLimits{}) {
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(w, ev); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n < events {
			b.Fatalf("%d events, want at least %d", n, events)
		}
	}
}

// DecodeCase is a client's request for BenchmarkDecodeRequest: a file
// under testdata, and what came with it besides its body.
type DecodeCase struct {
	Name, File string
	Model      string
	Header     http.Header
}

// BenchmarkDecodeRequest reads each case's request into its canonical
// form with c, as the gateway reads a client's.
func BenchmarkDecodeRequest(b *testing.B, c translate.Client, cases ...DecodeCase) {
	for _, dc := range cases {
		b.Run(dc.Name, func(b *testing.B) {
			body, err := os.ReadFile(filepath.Join(testdata, dc.File))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.DecodeRequest(&translate.Incoming{Header: dc.Header, Model: dc.Model, Body: body}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
