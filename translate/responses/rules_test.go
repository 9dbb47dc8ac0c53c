package responses_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/responses"
)

// Bad input gets a 400 in this dialect's error shape, naming the field.
func TestBadInputNamesTheField(t *testing.T) {
	many := map[string]string{}
	for i := range 17 {
		many[fmt.Sprint("k", i)] = "v"
	}
	manyJSON, _ := json.Marshal(many)
	cases := []struct{ body, param string }{
		{`{"model":"m","input":"hi","metadata":` + string(manyJSON) + `}`, "metadata"},
		{`{"model":"m","input":"hi","metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`, "metadata"},
		{`{"model":"m","input":"hi","metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`, "metadata.k"},
		{`{"model":"m","input":"hi","max_output_tokens":10}`, "max_output_tokens"},
		{`{"model":"m","input":"hi","temperature":2.5}`, "temperature"},
		{`{"model":"m","input":[{"role":"user","content":5}]}`, "input.[0].content"},
		{`{"model":"m","input":[{"role":"robot","content":"x"}]}`, "input.[0].role"},
		{`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"a b","schema":{}}}}`, "text.format.name"},
		{`{"model":"m","input":"hi","include":["everything"]}`, "include.[0]"},
		{`{"model":"m","input":"hi","tools":[{"type":"file_search","vector_store_ids":["vs"],"max_num_results":51}]}`, "tools.[0].max_num_results"},
		{`{"input":"hi"}`, "model"},
	}
	for _, c := range cases {
		_, err := responses.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(c.body)})
		if err == nil {
			t.Errorf("%s: accepted", c.body)
			continue
		}
		e := translate.ToProto(err)
		status, body := responses.Client{}.EncodeError(e)
		var got struct {
			Error struct {
				Type  string
				Param string
			}
		}
		_ = json.Unmarshal(body, &got)
		if status != 400 || got.Error.Type != "invalid_request_error" || got.Error.Param != c.param {
			t.Errorf("%s: %d %s, want 400 naming %s", c.body[:min(60, len(c.body))], status, body, c.param)
		}
		sdkcheck.OpenAIError(t, status, body, "invalid_request_error", e.GetMessage())
	}
}

// /v1/responses/input_tokens both ways.
func TestCount(t *testing.T) {
	req, err := responses.Client{}.DecodeCountRequest(&translate.Incoming{Body: []byte(`{"model":"gpt-5","input":"Tell me a joke.","instructions":"Be brief."}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := responses.Upstream{}.EncodeCountRequest(req, translate.Target{Model: "gpt-5", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != "/v1/responses/input_tokens" || out.Stream || !strings.Contains(string(out.Body), `"instructions":"Be brief."`) {
		t.Errorf("count request = %s %s", out.Path, out.Body)
	}
	c, err := responses.Upstream{}.DecodeCount([]byte(`{"object":"response.input_tokens","input_tokens":11}`))
	if err != nil || c.GetInputTokens() != 11 {
		t.Fatalf("count = %v, %v", c, err)
	}
	body, err := responses.Client{}.EncodeCount(&parleyv1.TokenCount{InputTokens: 11})
	if err != nil || string(body) != `{"object":"response.input_tokens","input_tokens":11}` {
		t.Errorf("count reply = %s, %v", body, err)
	}
	if _, err := (responses.Client{}).DecodeCountRequest(&translate.Incoming{Body: []byte(`{"model":"m","input":"x","stream":true}`)}); err == nil {
		t.Error("a streamed count was accepted")
	}
}

// Settings a responses upstream cannot carry are reported, not dropped
// silently; several candidates cannot be served at all.
func TestDroppedSettings(t *testing.T) {
	req := &parleyv1.Request{Model: "m", Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("hi"))},
		Generation:     &parleyv1.GenerationConfig{StopSequences: []string{"END"}, Seed: new(int64(1)), TopK: new(int32(3))},
		ResponseFormat: &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_ENUM, Schema: `{"type":"string","enum":["a"]}`}}
	out, err := responses.Upstream{}.EncodeRequest(req, translate.Target{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"generation.stop_sequences", "generation.seed", "generation.top_k", "response_format"}
	if fmt.Sprint(out.Dropped) != fmt.Sprint(want) {
		t.Errorf("dropped = %v, want %v", out.Dropped, want)
	}
	req.Generation.CandidateCount = new(int32(2))
	if _, err := (responses.Upstream{}).EncodeRequest(req, translate.Target{Model: "m"}); err == nil {
		t.Error("two candidates were accepted")
	}
}
