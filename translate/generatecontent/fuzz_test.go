package generatecontent_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/sse"
)

func seeds(f *testing.F, name string) {
	paths, _ := filepath.Glob(filepath.Join(casesDir, "*", name))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeRequest: any body either fails with an input error or decodes
// to a request that encodes for an upstream, and that encoding decodes
// again. Nothing panics.
func FuzzDecodeRequest(f *testing.F) {
	seeds(f, "request.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "m", Body: body})
		if err != nil {
			return
		}
		out, err := generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: "m"})
		if err != nil {
			return
		}
		if !json.Valid(out.Body) {
			t.Fatalf("invalid JSON toward the upstream: %s", out.Body)
		}
		if _, err := (generatecontent.Client{}).DecodeRequest(&translate.Incoming{Model: "m", Body: out.Body}); err != nil {
			t.Fatalf("the encoded request does not decode: %v\n%s", err, out.Body)
		}
	})
}

// FuzzStreamDecoder: any upstream stream yields well-ordered canonical
// events or an error, and whatever it yields renders for a client.
func FuzzStreamDecoder(f *testing.F) {
	seeds(f, "stream.sse")
	f.Fuzz(func(t *testing.T, stream []byte) {
		acc := translate.NewAccumulator()
		var buf bytes.Buffer
		w := sse.NewWriter(&buf)
		enc := generatecontent.Client{}.NewStreamEncoder(&parleyv1.Request{})
		dec := generatecontent.Upstream{}.NewStreamDecoder(translate.Target{})
		for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_GENERATE_CONTENT, bytes.NewReader(stream), dec, translate.StreamLimits{MaxFrameBytes: 1 << 16}) {
			if err != nil {
				return
			}
			if err := acc.Add(ev); err != nil {
				t.Fatalf("the decoder yielded an out-of-order stream: %v", err)
			}
			if err := enc.Encode(w, ev); err != nil {
				t.Fatalf("a well-ordered stream failed to encode: %v", err)
			}
		}
	})
}
