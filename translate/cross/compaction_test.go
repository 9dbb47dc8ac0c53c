package cross_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
)

// TestAnotherServicesCompactionIsNamed: a compaction item the responses
// service made itself (its content opens for it alone) goes whole to a
// service of that dialect, and every other upstream names it in
// Outgoing.Dropped rather than lose it without a word; one Parley made
// becomes a turn holding its summary for every upstream.
func TestAnotherServicesCompactionIsNamed(t *testing.T) {
	s := dialecttest.Responses
	native := `{"model":"m","input":[{"type":"compaction","id":"cmp_1","encrypted_content":"gAAAAABnative"},{"role":"user","content":"Go on."}]}`
	ours := `{"model":"m","input":[{"type":"compaction","id":"cmp_2","encrypted_content":"` + translate.SealSummary("We fixed main.go.", parleyv1.Dialect_DIALECT_RESPONSES) + `"},{"role":"user","content":"Go on."}]}`
	for _, up := range []translate.Upstream{messages.Upstream{}, generatecontent.Upstream{}, chatcompletions.Upstream{}, converse.Upstream{}, responses.Upstream{}} {
		name := translate.DialectName(up.Dialect())
		for which, body := range map[string]string{"native": native, "ours": ours} {
			req, err := s.Client.DecodeRequest(s.Incoming(http.Header{}, "m", []byte(body)))
			if err != nil {
				t.Fatal(err)
			}
			out, err := up.EncodeRequest(req, translate.Target{Model: "anthropic.claude-sonnet-4-5"})
			if err != nil {
				t.Fatalf("%s %s: %v", name, which, err)
			}
			sent := string(out.Body)
			switch {
			case which == "ours":
				if !strings.Contains(sent, "We fixed main.go.") || strings.Contains(sent, "cmp_2") || len(out.Dropped) != 0 {
					t.Errorf("%s: Parley's compaction went as %s, dropped %v", name, sent, out.Dropped)
				}
			case name == "responses":
				if !strings.Contains(sent, "gAAAAABnative") {
					t.Errorf("the service's own compaction did not go back to it: %s", sent)
				}
			default:
				if strings.Contains(sent, "gAAAAABnative") || !slices.Contains(out.Dropped, "messages[0].parts[0]") {
					t.Errorf("%s: the service's compaction went as %s, dropped %v", name, sent, out.Dropped)
				}
			}
		}
	}
}
