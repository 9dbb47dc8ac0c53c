package dialecttest

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// The fuzz targets are declared in each dialect's package, as
// FuzzDecodeRequest and FuzzStreamDecoder, so that each is fuzzed on its
// own and keeps its corpus under that package's testdata/fuzz; their
// bodies are these.

// FuzzDecodeRequest: any client request body either fails to decode or
// decodes to a request that encodes for an upstream (or is refused as
// unsupported), and that encoding is JSON that decodes again. Nothing
// panics. The seeds are the golden requests.
func FuzzDecodeRequest(f *testing.F, s *Spec) {
	seeds(f, s.Cases, "request.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		in := s.Incoming(nil, "m", body)
		req, err := s.Client.DecodeRequest(in)
		if err != nil {
			return
		}
		out, err := s.Upstream.EncodeRequest(req, translate.Target{Model: "m"})
		if err != nil {
			return // e.g. a tool call whose arguments are not an object
		}
		if !json.Valid(out.Body) {
			t.Fatalf("invalid JSON toward the upstream: %s", out.Body)
		}
		again := *in
		again.Body = out.Body
		if _, err := s.Client.DecodeRequest(&again); err != nil {
			t.Fatalf("the encoded request does not decode: %v\n%s", err, out.Body)
		}
	})
}

// FuzzStreamDecoder: any upstream stream yields well-ordered canonical
// events (the accumulator accepts them) or an error, and whatever it
// yields renders for a client of every dialect, since the gateway pairs
// any upstream with any client. The seeds are the golden streams.
func FuzzStreamDecoder(f *testing.F, s *Spec) {
	seeds(f, s.Cases, "stream.sse")
	f.Fuzz(func(t *testing.T, stream []byte) {
		acc := translate.NewAccumulator()
		w := sse.NewWriter(io.Discard)
		encs := make([]translate.StreamEncoder, len(All))
		for i, c := range All {
			encs[i] = c.Client.NewStreamEncoder(&parleyv1.Request{})
		}
		dec := s.Upstream.NewStreamDecoder(translate.Target{})
		for ev, err := range translate.DecodeStream(s.Upstream.Dialect(), bytes.NewReader(stream), dec, translate.StreamLimits{MaxFrameBytes: 1 << 16}) {
			if err != nil {
				return
			}
			if err := acc.Add(ev); err != nil {
				t.Fatalf("the decoder yielded an out-of-order stream: %v", err)
			}
			for i, enc := range encs {
				if err := enc.Encode(w, ev); err != nil {
					t.Fatalf("a well-ordered stream failed to encode for a %s client: %v", All[i].Name(), err)
				}
			}
		}
	})
}

// seeds adds every golden file of the given name under dir as a fuzz seed.
func seeds(f *testing.F, dir, name string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*", name))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}
