package responses_test

import (
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/responses"
)

// FuzzDecodeRequest: any body either fails with an input error or decodes
// to a request that encodes for an upstream, and that encoding decodes
// again. Nothing panics.
func FuzzDecodeRequest(f *testing.F) {
	dialecttest.Seeds(f, casesDir, "request.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		dialecttest.FuzzRequest(t, responses.Client{}, responses.Upstream{}, &translate.Incoming{Body: body})
	})
}

// FuzzStreamDecoder: any upstream stream yields well-ordered canonical
// events (the accumulator accepts them) or an error, and whatever it
// yields renders for a client without a panic.
func FuzzStreamDecoder(f *testing.F) {
	dialecttest.Seeds(f, casesDir, "stream.sse")
	f.Fuzz(func(t *testing.T, stream []byte) {
		dialecttest.FuzzStream(t, responses.Upstream{}, stream)
	})
}
