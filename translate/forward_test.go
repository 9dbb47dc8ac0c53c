package translate_test

import (
	"encoding/json"
	"reflect"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

func TestSetModel(t *testing.T) {
	for _, tc := range []struct{ in, model, want string }{
		{`{"model":"a","messages":[{"model":"a"}]}`, "b", `{"model":"b","messages":[{"model":"a"}]}`},
		{`{ "messages": [], "model" : "alias" , "x": 1 }`, "claude-sonnet-4-5", `{ "messages": [], "model" : "claude-sonnet-4-5" , "x": 1 }`},
		{`{"model":"say \"hi\""}`, `a"b`, `{"model":"a\"b"}`},
		{`{"model":"same"}`, "same", `{"model":"same"}`},
		{`{"model":"\u0073ame"}`, "same", `{"model":"same"}`},
		{`{"a":{"model":"x","b":["}",{"c":"\"]"}]},"model":"m","z":[1,2.5e3,true,null]}`, "n", `{"a":{"model":"x","b":["}",{"c":"\"]"}]},"model":"n","z":[1,2.5e3,true,null]}`},
		{"{\n\t\"model\" :\r\n\"m\"\n}", "n", "{\n\t\"model\" :\r\n\"n\"\n}"},
	} {
		got, err := translate.SetModel([]byte(tc.in), tc.model)
		if err != nil || string(got) != tc.want {
			t.Errorf("SetModel(%s, %q) = %s, %v; want %s", tc.in, tc.model, got, err, tc.want)
		}
	}
	for _, bad := range []string{`[]`, `{"messages":[]}`, `{"model":"a","model":"b"}`, `{"model":"a","mod\u0065l":"b"}`, `{"model":`, `{"model":"a`, `{"model" "a"}`, `{"model":"a" "b":1}`} {
		if got, err := translate.SetModel([]byte(bad), "m"); err == nil {
			t.Errorf("SetModel(%s) = %s, no error", bad, got)
		}
	}
	in := []byte(`{"model":"m"}`)
	if got, _ := translate.SetModel(in, "m"); &got[0] != &in[0] {
		t.Error("a body that already names the model was copied")
	}
}

func TestOwnOpaques(t *testing.T) {
	d := parleyv1.Dialect_DIALECT_MESSAGES
	sig := func(o *parleyv1.Origin) *parleyv1.Request {
		return &parleyv1.Request{Messages: []*parleyv1.Message{{Parts: []*parleyv1.Part{
			{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{Content: []*parleyv1.Part{
				{Signature: &parleyv1.Opaque{Value: "s", Origin: o}},
			}}}},
		}}}}
	}
	if !translate.OwnOpaques(sig(&parleyv1.Origin{Dialect: d}), d) {
		t.Error("an unsealed signature of the client's dialect is not its own")
	}
	if translate.OwnOpaques(sig(&parleyv1.Origin{Dialect: d, Upstream: "claude"}), d) {
		t.Error("a sealed signature (one that names its upstream) is the client's own")
	}
	if translate.OwnOpaques(sig(&parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_GENERATE_CONTENT}), d) {
		t.Error("another dialect's signature is the client's own")
	}
	enc := &parleyv1.Request{Instructions: []*parleyv1.Part{{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{
		EncryptedContent: &parleyv1.Opaque{Value: "e", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_RESPONSES}}}}}}}
	if translate.OwnOpaques(enc, d) {
		t.Error("another dialect's encrypted reasoning is the client's own")
	}
}

// FuzzSetModel: whatever object a decoder accepts, SetModel either refuses
// it or changes the top-level model and nothing else.
func FuzzSetModel(f *testing.F) {
	for _, s := range []string{`{"model":"a","messages":[{"model":"a"}]}`, `{"x":"}\"","model":"b"}`, `{"model":1}`, `{"a":[{"b":"]"}],"model":"c"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var before map[string]any
		if json.Unmarshal(body, &before) != nil {
			return
		}
		got, err := translate.SetModel(body, "swapped")
		if err != nil {
			return
		}
		var after map[string]any
		if err := json.Unmarshal(got, &after); err != nil {
			t.Fatalf("SetModel(%s) = %s, not JSON: %v", body, got, err)
		}
		if after["model"] != "swapped" {
			t.Fatalf("SetModel(%s) = %s: model %v", body, got, after["model"])
		}
		delete(before, "model")
		delete(after, "model")
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("SetModel(%s) = %s changed other members", body, got)
		}
	})
}
