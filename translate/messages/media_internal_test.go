package messages

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// TestSourceIsTheMarshalledSource holds the hand-written source to the
// bytes Marshal writes, and to declining what only Marshal can write.
func TestSourceIsTheMarshalledSource(t *testing.T) {
	for _, s := range []source{
		{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="},
		{Type: "url", URL: "https://example.com/a.png?x=1&y=<2>"},
		{Type: "file", FileID: "file_011CNha8iCJcU1wXNR6q4V8w"},
		{Type: "text", MediaType: "text/plain", Data: "a \"quoted\" line\nand a tab\t, é, \u2028, \x7f"},
		{Type: "base64"},
	} {
		want, err := jsonx.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := s.appendTo(nil)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("appendTo(%+v) = %s, %v; Marshal writes %s", s, got, ok, want)
		}
	}
	for _, s := range []source{
		{Type: "text", MediaType: "text/plain", Data: "not UTF-8: \xff"},
		{Type: "url", URL: "https://x", Unknown: jsonx.Unknown{"cache": jsontext.Value(`true`)}},
	} {
		if got, ok := s.appendTo(nil); ok {
			t.Errorf("appendTo(%+v) = %s, want it declined", s, got)
		}
	}
}
