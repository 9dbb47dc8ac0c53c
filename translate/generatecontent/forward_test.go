package generatecontent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/golden"
)

// FuzzForward holds the same-dialect fast path to the encoder: a body it
// sends on as it came is, member for member, the body the encoder writes
// for the request decoded from it (up to null members, which a service
// reads as absent), and the encoder neither refuses it nor drops any of
// it. The seeds are the recorded requests and the spellings the decoder
// reads as one.
func FuzzForward(f *testing.F) {
	paths, err := filepath.Glob("../../testdata/generate_content/*/request.json")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no recorded requests: %v", err)
	}
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	for _, body := range forwardVariants {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkForward(t, body)
	})
}

// forwardVariants are bodies in forms the encoder writes otherwise.
var forwardVariants = []string{
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseModalities":["text"],"mediaResolution":"media_resolution_low"}}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"object","properties":{"a_b":{"type":"string"}}}}]}]}`,
	`{"contents":{"role":"user","parts":[{"text":"hi"}]}}`,
	`{"contents":[{"role":"user","parts":{"text":"hi"}}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"system_instruction":{"parts":[{"text":"be brief"}]}}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"SystemInstruction":{"parts":[{"text":"be brief"}]}}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"toolConfig":{"functionCallingConfig":{"mode":"any"}}}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"safetySettings":[{"category":"harm_category_hate_speech","threshold":"block_none"}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0.50,"topK":40.0,"thinkingConfig":{"thinkingLevel":"low"}}}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":{"googleSearch":{}}}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"x_custom":{"inline_data":1},"temperature":null}`,
	`{"contents":[{"role":"model","parts":[{"executableCode":{"language":"python","code":"1"}},{"codeExecutionResult":{"outcome":"outcome_ok","output":"1"}}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"STRING","enum":["x"],"nullable":true},"b":{"type":"ARRAY","items":{"type":"INTEGER","format":"int64"}},"c":{"anyOf":[{"type":"STRING"},{"type":"NUMBER"}]}},"required":["a"],"propertyOrdering":["a","b"]}}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"n":{"type":"NUMBER","minimum":0,"description":"d"}}}}}`,
	// Inline data in base64 the decoder reads and the encoder writes
	// otherwise: no padding, stray bits past the last byte, the URL-safe
	// alphabet, an escaped line break; then as the encoder writes it.
	`{"contents":[{"parts":[{"inlineData":{"data":"00","mimeType":"0"}}]}]}`,
	`{"contents":[{"parts":[{"inlineData":{"data":"0x==","mimeType":"image/png"}}]}]}`,
	`{"contents":[{"parts":[{"inlineData":{"data":"-_8=","mimeType":"image/png"}}]}]}`,
	`{"contents":[{"parts":[{"inlineData":{"data":"AAAA\nAAAA","mimeType":"image/png"}}]}]}`,
	`{"contents":[{"parts":[{"inlineData":{"data":"0w==","mimeType":"image/png"}}]}]}`,
	// A response with a repeated name (the last wins) is still an object.
	`{"contents":[{"parts":[{"text":"?"}]},{"parts":[{"functionResponse":{"name":"r","response":{"":2,"":""}}}]}]}`,
}

func checkForward(t *testing.T, body []byte) {
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "models/m", Body: body})
	if err != nil {
		return
	}
	target := translate.Target{Model: "m"}
	fwd, ok, err := generatecontent.Upstream{}.Forward(req, &translate.Source{Dialect: generatecontent.Dialect().Enum, Body: body}, target)
	if err != nil {
		t.Fatalf("forward: %v", err)
	}
	if !ok {
		return
	}
	out, err := generatecontent.Upstream{}.EncodeRequest(req, target)
	if err != nil {
		t.Fatalf("forwarded a body the encoder refuses (%v):\n%s", err, body)
	}
	if len(out.Dropped) > 0 {
		t.Fatalf("forwarded a body the encoder drops %v of:\n%s", out.Dropped, body)
	}
	if diff, err := golden.DiffJSON(withoutDefaults(t, out.Body), withoutDefaults(t, fwd.Body), golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Fatalf("forwarded a body the encoder writes otherwise (-encoded +forwarded):\n%s%v\n%s", diff, err, body)
	}
	if fwd.Path != out.Path || fwd.Header.Get("x-goog-api-key") != out.Header.Get("x-goog-api-key") {
		t.Fatalf("forwarded to %s, encoded to %s", fwd.Path, out.Path)
	}
}

// withoutDefaults is a body without its members that a service reads as
// absent: empty strings and lists and unspecified enum words (proto3's
// defaults, which the encoder leaves out or writes) and the empty arguments of a call or response of a
// function (which the encoder writes as {} when absent), and an empty
// generationConfig (which the SDKs write). Any other empty object is not
// one of them: it says that a setting or a tool is there.
func withoutDefaults(t *testing.T, body []byte) []byte {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v:\n%s", err, body)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for part, member := range map[string]string{"functionCall": "args", "functionResponse": "response"} {
				if call, ok := x[part].(map[string]any); ok {
					if args, ok := call[member].(map[string]any); ok && len(args) == 0 {
						delete(call, member)
					}
				}
			}
			for k, e := range x {
				if s, ok := e.(string); ok && (s == "" || strings.HasSuffix(s, "_UNSPECIFIED")) {
					delete(x, k)
				} else if l, ok := e.([]any); ok && len(l) == 0 {
					delete(x, k)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if top, ok := v.(map[string]any); ok {
		if gc, ok := top["generationConfig"].(map[string]any); ok && len(gc) == 0 {
			delete(top, "generationConfig")
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestForwardTakesWrittenBodies checks that the fast path takes the
// recorded requests in the written form and leaves the others.
func TestForwardTakesWrittenBodies(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0.5,"responseModalities":["TEXT"]},"x_custom":{"y":1}}`, true},
		// As an agent sends it: instructions with a role, thinking,
		// declarations in JSON Schema, a call and its response.
		{`{"contents":[{"role":"user","parts":[{"text":"list files"}]},{"role":"model","parts":[{"functionCall":{"name":"ls","args":{"path":"."}},"thoughtSignature":"c2ln"}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"output":"a.go"}}}]}],` +
			`"systemInstruction":{"role":"user","parts":[{"text":"You are an agent."}]},"generationConfig":{"temperature":0,"topP":1,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":-1}},` +
			`"tools":[{"functionDeclarations":[{"name":"ls","description":"List a directory.","parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]}]}`, true},
		{forwardVariants[0], false},
		{forwardVariants[1], false},
		{forwardVariants[2], false},
		{forwardVariants[3], false},
		{forwardVariants[4], false},
		{forwardVariants[5], false},
		{`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"contents":[]}`, false},
	} {
		req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "models/m", Body: []byte(c.body)})
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		_, ok, err := generatecontent.Upstream{}.Forward(req, &translate.Source{Dialect: generatecontent.Dialect().Enum, Body: []byte(c.body)}, translate.Target{Model: "m"})
		if err != nil || ok != c.want {
			t.Errorf("%s: forwarded %v (%v), want %v", c.body, ok, err, c.want)
		}
		checkForward(t, []byte(c.body))
	}
}

// BenchmarkForward is the upstream request of a recorded agent's turn
// (declarations in the Schema form, calls and their responses; about 2
// KB) built by the same-dialect fast path, against the encoder building
// it from the canonical request.
func BenchmarkForward(b *testing.B) {
	body, err := os.ReadFile("../../testdata/generate_content/sdk_function_calling/request.json")
	if err != nil {
		b.Fatal(err)
	}
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "models/m", Body: body})
	if err != nil {
		b.Fatal(err)
	}
	src := &translate.Source{Dialect: generatecontent.Dialect().Enum, Body: body}
	target := translate.Target{Model: "m"}
	b.Run("forwarded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok, err := (generatecontent.Upstream{}).Forward(req, src, target); !ok || err != nil {
				b.Fatalf("not forwarded: %v", err)
			}
		}
	})
	b.Run("encoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (generatecontent.Upstream{}).EncodeRequest(req, target); err != nil {
				b.Fatal(err)
			}
		}
	})
}
