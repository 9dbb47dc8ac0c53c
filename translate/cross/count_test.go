package cross_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
)

// A count request from a client of another dialect counts its system
// prompt: it travels in the generateContentRequest.
func TestCountRequestFromAnotherDialect(t *testing.T) {
	req, err := messages.Client{}.DecodeCountRequest(&translate.Incoming{Body: []byte(`{"model":"claude-sonnet-4-5","system":"You are a scientist","messages":[{"role":"user","content":"Hello, Claude"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := generatecontent.Upstream{}.EncodeCountRequest(req, translate.Target{Model: "gemini-2.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.Body), `"systemInstruction":{"parts":[{"text":"You are a scientist"}]}`) {
		t.Errorf("body %s", out.Body)
	}
}
