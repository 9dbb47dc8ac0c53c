package dialecttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parleyhq/parley/translate"
)

// ToolsOwnTheirSchemas decodes with c a request whose tools have schemas,
// the recorded request in file (under the repository's testdata) or body
// when file is "", then overwrites the body: the decoded tools must not
// change. A dialect's quick reader takes a schema as the body's own bytes,
// and decoding must make the canonical tool's copy of it, since the body
// is not the request's to keep (a pooled buffer, say).
func ToolsOwnTheirSchemas(t *testing.T, c translate.Client, file string, body []byte) {
	t.Helper()
	if file != "" {
		var err error
		if body, err = os.ReadFile(filepath.Join(testdata, file)); err != nil {
			t.Fatal(err)
		}
	}
	req, err := c.DecodeRequest(&translate.Incoming{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, len(req.GetTools()))
	for _, tool := range req.GetTools() {
		want = append(want, protojson.Format(tool))
	}
	if len(want) == 0 || !strings.Contains(strings.Join(want, ""), "properties") {
		t.Fatalf("the request decoded with no tool schema: %v", want)
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
