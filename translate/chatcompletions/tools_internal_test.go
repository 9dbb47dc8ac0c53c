package chatcompletions

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parleyhq/parley/translate"
)

// TestDecodedToolsOwnTheirSchemas: a function's parameters are read from
// the body in place, and the canonical tool holds its own copy: a body
// reused or changed after decoding changes nothing of the request decoded
// from it.
func TestDecodedToolsOwnTheirSchemas(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` +
		`{"type":"function","function":{"name":"read","description":"Reads a file.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"a \"path\"\n"}},"required":["path"]}}},` +
		`{"type":"function","function":{"name":"ls","parameters": { "type" : "object" , "properties" : { } } }}]}`)
	req, err := Client{}.DecodeRequest(&translate.Incoming{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, len(req.GetTools()))
	for _, tool := range req.GetTools() {
		want = append(want, protojson.Format(tool))
	}
	if len(want) != 2 || !strings.Contains(want[0], "properties") {
		t.Fatalf("decoded tools: %v", want)
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
