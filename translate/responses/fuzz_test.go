package responses_test

import (
	"errors"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/responses"
)

// The fuzz targets are the shared ones (translate/internal/dialecttest
// says what they check), declared here because CI fuzzes each package's
// targets by these names and testdata/fuzz/<name> holds their corpus.

func FuzzDecodeRequest(f *testing.F) { dialecttest.FuzzDecodeRequest(f, dialecttest.Responses) }

func FuzzStreamDecoder(f *testing.F) { dialecttest.FuzzStreamDecoder(f, dialecttest.Responses) }

// FuzzSocketMessage: whatever a client sends on the WebSocket, the
// message is a request body or an error naming what is wrong, and a body
// it makes decodes, or fails as a request does, without a panic.
func FuzzSocketMessage(f *testing.F) {
	f.Add([]byte(`{"type":"response.create","model":"m","input":"hi"}`))
	f.Add([]byte(`{"type":"response.create","stream_id":"a","model":"m","input":[{"role":"user","content":"hi"}],"stream":false}`))
	f.Add([]byte(`{"type":"response.cancel"}`))
	f.Add([]byte(`[1,2]`))
	sock := responses.Dialect().Socket
	f.Fuzz(func(t *testing.T, msg []byte) {
		body, err := sock.Request(msg)
		if err != nil {
			if _, ok := errors.AsType[*translate.InputError](err); !ok {
				t.Fatalf("an error that names nothing: %T %v", err, err)
			}
			return
		}
		req, err := responses.Client{}.DecodeRequest(&translate.Incoming{Body: body, Stream: true})
		if err == nil && !req.GetStream() {
			t.Fatalf("a socket request that is not streamed: %s", body)
		}
	})
}
