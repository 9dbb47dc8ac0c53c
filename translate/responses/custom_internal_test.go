package responses

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// TestCustomParametersAreJSON: the function a custom tool becomes takes
// its grammar in its input's description as a JSON string, whatever the
// grammar holds (quotes, line breaks, a DEL, a line separator, non-ASCII
// text), where Go's quoting would have written escapes JSON does not have
// (\x7f).
func TestCustomParametersAreJSON(t *testing.T) {
	for _, grammar := range []string{
		`start: "*** Begin Patch" LF hunk+ "*** End Patch"`,
		"a\tb\x7fc\u2028d é \U0001F600 \\ \"q\"\x00",
	} {
		format := jsonx.Quote(grammar)
		wt := &tool{Type: "custom", Name: "apply_patch",
			Unknown: jsonx.Unknown{"format": jsontext.Value(`{"type":"grammar","syntax":"lark","definition":` + string(format) + `}`)}}
		params := customFunction(wt).GetParameters()
		if !jsontext.Value(params).IsValid() {
			t.Fatalf("grammar %q: parameters are not JSON: %s", grammar, params)
		}
		var schema struct {
			Properties struct {
				Input struct {
					Description string `json:"description"`
				} `json:"input"`
			} `json:"properties"`
		}
		if err := jsonx.Unmarshal([]byte(params), &schema); err != nil {
			t.Fatal(err)
		}
		if d := schema.Properties.Input.Description; !strings.HasSuffix(d, "lark grammar:\n"+grammar) {
			t.Errorf("grammar %q: description %q", grammar, d)
		}
	}
}
