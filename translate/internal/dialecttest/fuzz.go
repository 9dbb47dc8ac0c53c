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
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
	"github.com/parleyhq/parley/translate/sse"
)

// Seeds adds every golden file of the given name under dir as a fuzz seed.
func Seeds(f *testing.F, dir, name string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*", name))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzRequest is the body of a request-decoder fuzz target: any body
// either fails to decode or decodes to a request that encodes for an
// upstream (or is refused as unsupported), and that encoding is JSON that
// decodes again. Nothing panics.
func FuzzRequest(t *testing.T, c translate.Client, u translate.Upstream, in *translate.Incoming) {
	req, err := c.DecodeRequest(in)
	if err != nil {
		return
	}
	out, err := u.EncodeRequest(req, translate.Target{Model: "m"})
	if err != nil {
		return // e.g. a tool call whose arguments are not an object
	}
	if !json.Valid(out.Body) {
		t.Fatalf("invalid JSON toward the upstream: %s", out.Body)
	}
	again := *in
	again.Body = out.Body
	if _, err := c.DecodeRequest(&again); err != nil {
		t.Fatalf("the encoded request does not decode: %v\n%s", err, out.Body)
	}
}

// FuzzStream is the body of a stream-decoder fuzz target: any upstream
// stream yields well-ordered canonical events (the accumulator accepts
// them) or an error, and whatever it yields renders for a client of every
// dialect, since the gateway pairs any upstream with any client.
func FuzzStream(t *testing.T, u translate.Upstream, stream []byte) {
	acc := translate.NewAccumulator()
	w := sse.NewWriter(io.Discard)
	encs := make([]translate.StreamEncoder, len(Clients))
	for i, c := range Clients {
		encs[i] = c.NewStreamEncoder(&parleyv1.Request{})
	}
	dec := u.NewStreamDecoder(translate.Target{})
	for ev, err := range translate.DecodeStream(u.Dialect(), bytes.NewReader(stream), dec, translate.StreamLimits{MaxFrameBytes: 1 << 16}) {
		if err != nil {
			return
		}
		if err := acc.Add(ev); err != nil {
			t.Fatalf("the decoder yielded an out-of-order stream: %v", err)
		}
		for i, enc := range encs {
			if err := enc.Encode(w, ev); err != nil {
				t.Fatalf("a well-ordered stream failed to encode for a %v client: %v", Clients[i].Dialect(), err)
			}
		}
	}
}

// Clients holds a client of every dialect.
var Clients = []translate.Client{messages.Client{}, generatecontent.Client{}, chatcompletions.Client{}, responses.Client{}}
