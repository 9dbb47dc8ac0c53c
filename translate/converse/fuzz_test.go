package converse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/sse"
)

// The fuzz targets of the upstream side (this dialect has no client side
// to fuzz). CI fuzzes each package's targets by name; the seeds are the
// golden replies and streams, and testdata/fuzz/<name> keeps the corpus.

// FuzzDecodeResponse: any reply either fails as the upstream's protocol
// error or decodes to a response that a client of every dialect can be
// given. Nothing panics.
func FuzzDecodeResponse(f *testing.F) {
	seeds(f, "response.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := converse.Upstream{}.DecodeResponse(target, body)
		if err != nil {
			if ue := (*translate.UpstreamError)(nil); !errors.As(err, &ue) {
				t.Fatalf("an error that is not the upstream's: %T %v", err, err)
			}
			return
		}
		for _, s := range dialecttest.All {
			out, err := s.Client.EncodeResponse(&parleyv1.Request{}, resp)
			if err != nil {
				t.Fatalf("a %s client cannot be given the response: %v", s.Name(), err)
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON for a %s client: %s", s.Name(), out)
			}
		}
	})
}

// FuzzStreamDecoder: any stream of events (as server-sent events; the
// decoder is the same whatever framed them) yields well-ordered canonical
// events (the checker and the accumulator accept them) or an error, and
// whatever it yields renders for a client of every dialect.
func FuzzStreamDecoder(f *testing.F) {
	seeds(f, "stream.sse")
	f.Fuzz(func(t *testing.T, stream []byte) {
		var check translate.StreamChecker
		acc := translate.NewAccumulator()
		w := sse.NewWriter(io.Discard)
		encs := make([]translate.StreamEncoder, len(dialecttest.All))
		for i, s := range dialecttest.All {
			encs[i] = s.Client.NewStreamEncoder(&parleyv1.Request{})
		}
		dec := converse.Upstream{}.NewStreamDecoder(target)
		for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_CONVERSE, bytes.NewReader(stream), dec, translate.StreamLimits{MaxFrameBytes: 1 << 16}) {
			if err != nil {
				return
			}
			if err := check.Check(ev); err != nil {
				t.Fatalf("the decoder yielded an out-of-order stream: %v", err)
			}
			if err := acc.Add(ev); err != nil {
				t.Fatalf("the accumulator refuses the stream: %v", err)
			}
			for i, enc := range encs {
				if err := enc.Encode(w, ev); err != nil {
					t.Fatalf("a well-ordered stream failed to encode for a %s client: %v", dialecttest.All[i].Name(), err)
				}
			}
		}
		if !check.Ended() {
			t.Fatal("the stream ended without done or an error")
		}
	})
}

// seeds adds every golden file of the given name as a fuzz seed.
func seeds(f *testing.F, name string) {
	paths, _ := filepath.Glob(filepath.Join(casesDir, "*", name))
	if len(paths) == 0 {
		f.Fatalf("no %s seeds", name)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}
