package cross_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
)

// TestUnknownBlocksAreNamed: a block of a type Parley does not model,
// beside text, goes untouched to a service of the client's own dialect;
// every other upstream keeps the text and names the block in
// Outgoing.Dropped, never losing it without a word (issue 18, item 5).
func TestUnknownBlocksAreNamed(t *testing.T) {
	s := dialecttest.Messages
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"PING"},{"type":"mystery_block","x":1}]}]}`
	req, err := s.Client.DecodeRequest(s.Incoming(http.Header{}, "m", []byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	for name, up := range agentUpstreams() {
		out, err := up.Upstream.EncodeRequest(req, translate.Target{Model: up.Model})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sent := string(out.Body)
		if !strings.Contains(sent, "PING") {
			t.Errorf("%s lost the text: %s", name, sent)
		}
		if name == "messages" {
			if !strings.Contains(sent, `"mystery_block"`) {
				t.Errorf("the block did not reach its own dialect's service: %s", sent)
			}
			continue
		}
		if strings.Contains(sent, "mystery_block") || !slices.Contains(out.Dropped, "messages[0].parts[1]") {
			t.Errorf("%s: the block went as %s, dropped %v", name, sent, out.Dropped)
		}
	}
}
