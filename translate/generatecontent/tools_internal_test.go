package generatecontent

import (
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parleyhq/parley/translate"
)

// TestDecodedToolsOwnTheirSchemas: a function declaration's schema is
// read from the body in place, and the canonical tool holds its own: a
// body reused or changed after decoding changes nothing of the request
// decoded from it, the Gemini CLI's tools among them.
func TestDecodedToolsOwnTheirSchemas(t *testing.T) {
	body, err := os.ReadFile("../../testdata/agent_tools/gemini_cli/request.json")
	if err != nil {
		t.Fatal(err)
	}
	req, err := Client{}.DecodeRequest(&translate.Incoming{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, len(req.GetTools()))
	for _, tool := range req.GetTools() {
		want = append(want, protojson.Format(tool))
	}
	if len(want) == 0 || !strings.Contains(strings.Join(want, ""), "properties") {
		t.Fatalf("the Gemini CLI's recorded request decoded with no schema: %v", want)
	}
	for i := range body {
		body[i] = ' '
	}
	for i, tool := range req.GetTools() {
		if got := protojson.Format(tool); got != want[i] {
			t.Errorf("tool %d changed with the body:\n got %s\nwant %s", i, got, want[i])
		}
	}
}
