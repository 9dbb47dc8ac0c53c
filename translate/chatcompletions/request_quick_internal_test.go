package chatcompletions

import (
	"net/http"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
)

// requestVariants are requests in awkward forms, for readRequest to read
// as the general way reads them or to decline.
var requestVariants = []string{
	`{"model":"gpt-4.1","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"a \"q\" \\ \n \u00e9 \ud83c\udf0d <&>","name":"ann"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"18C"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type": "object","properties":{"city":{"type":"string"}}},"strict":true}}],"tool_choice":"auto","parallel_tool_calls":false,"max_completion_tokens":1024,"stream":true,"stream_options":{"include_usage":true},"temperature":0.7,"top_p":1,"presence_penalty":-0.5,"frequency_penalty":0,"seed":42,"n":1,"stop":["END","\n\n"],"user":"u1","prompt_cache_key":"k","metadata":{"a":"b"},"service_tier":"auto","store":false,"reasoning_effort":"low","verbosity":"high"}`,
	`{"messages":[{"role":"user","content":"hi","x":{"y":[1, 2]}}],"model":"m","stop":"END","max_tokens":null,"temperature":null,"stream":null,"extra_body":{"k":1},"tools":null}`,
	`{"model":"m","messages":[{"role":"assistant","content":"","reasoning_content":"hmm","refusal":null,"annotations":[]}],"stop":null,"tools":[],"stream_options":null,"metadata":null}`,
	`{"model":"m","messages":[{"role":"user"},{"content":null}]}`,
	`{"model":"m","messages":[]}`,
	`{"model":"m","messages":null}`,
	`{"model":"m"}`,
	`{"model":"m","messages":[{"role":"tool","content":"x"}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"x":1}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":1e400}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1.5}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":[1]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"metadata":{"a":1}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}]} x`,
	`{"model":"m","messages":{}}`,
	`{"model":"m","messages":[null]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"user","content":"y"}],"messages":[{"role":"user","content":"z"}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO","detail":"low","x":1}},{"type":"refusal","refusal":"no"}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[]},{"role":"user","content":[{}]},{"role":"user","content":[{"type":"image_url","image_url":null}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[null]}]}`,
	`{"model":"m","messages":[{"role":"user","content":{}}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function","function":{"name":"f","x":1},"y":null}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"function":null}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","description":"d","schema":{"type": "object"},"strict":true,"x":1},"y":2}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":null}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":null,"tool_choice":null}`,
	// Declined: the general way reads these.
	`{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":{"50256":-100}}`,
	`{"model":"m","messages":[{"role":"user","content":"x","content":"y"}]}`,
}

// TestQuickRequestDecodesAsTheGeneralWay: every client request (the
// recorded ones and awkward forms) decodes to the same canonical request,
// or the same error, with readRequest as without it; and readRequest
// reads most of the recorded ones. FuzzQuickRequest holds the two to that
// on any input.
func TestQuickRequestDecodesAsTheGeneralWay(t *testing.T) {
	bodies := recordedRequests(t)
	quick, recordedQuick := 0, 0
	for i, b := range append(bodies, recorded.Variants(requestVariants)...) {
		if checkQuickRequest(t, b) {
			quick++
			if i < len(bodies) {
				recordedQuick++
			}
		}
	}
	if recordedQuick < len(bodies)*2/3 || quick-recordedQuick < 15 {
		t.Errorf("readRequest read %d of %d recorded requests and %d of %d others", recordedQuick, len(bodies), quick-recordedQuick, len(requestVariants))
	}
}

// recordedRequests are the chat-completions requests under testdata.
func recordedRequests(t testing.TB) [][]byte {
	return recorded.Files(t, 20, "chat_completions/*/request.json", "cross_table/*/chat_completions/request.json")
}

// checkQuickRequest decodes b both ways and holds them to the same
// result; read says whether readRequest read it.
func checkQuickRequest(t *testing.T, b []byte) (read bool) {
	t.Helper()
	in := &translate.Incoming{Header: http.Header{"Content-Type": {"application/json"}}, Body: b}
	generalOnly.Store(true)
	slow, slowErr := Client{}.DecodeRequest(in)
	generalOnly.Store(false)
	fast, fastErr := Client{}.DecodeRequest(in)
	switch {
	case (slowErr == nil) != (fastErr == nil):
		t.Errorf("%s:\nquick error %v\nslow error  %v", b, fastErr, slowErr)
	case slowErr != nil && slowErr.Error() != fastErr.Error():
		t.Errorf("%s:\nquick error %v\nslow error  %v", b, fastErr, slowErr)
	case slowErr == nil && !proto.Equal(fast, slow):
		t.Errorf("%s:\nquick %v\nslow  %v", b, fast, slow)
	}
	var w requestIn
	w.Messages.Fn = func(int, *message) error { return nil }
	return readRequest(b, &w)
}

func FuzzQuickRequest(f *testing.F) {
	for _, b := range append(recordedRequests(f), recorded.Variants(requestVariants)...) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkQuickRequest(t, b) })
}

// TestQuickRequestIsTheMarshalledRequest: every request appendRequest
// writes is, byte for byte, the one jsonx.Marshal writes: the requests
// made from every recorded canonical request for a chat-completions
// upstream, the recorded chat-completions requests as clients send them,
// and requests in awkward forms. What it declines, Marshal writes.
func TestQuickRequestIsTheMarshalledRequest(t *testing.T) {
	var requests []*Request
	for _, req := range recorded.Canonical(t, "request.canonical.json", func() *parleyv1.Request { return &parleyv1.Request{} }) {
		e := &encoder{req: req, t: translate.Target{Model: "gpt-test"}, same: req.GetExtensions().GetDialect() == thisDialect}
		if w, err := e.request(); err == nil {
			requests = append(requests, w)
		}
	}
	for _, b := range recordedRequests(t) {
		var w Request
		if jsonx.Unmarshal(b, &w) == nil {
			requests = append(requests, &w)
		}
	}
	made := len(requests)
	s := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	f := func(v float64) *float64 { return &v }
	yes := true
	texts := []string{"", "Hello", "a \"q\" \\ \n\t", "<m&m>", "\u0000\u001f\u2028", "héllo 世界 🌍"}
	for _, text := range texts {
		requests = append(requests, &Request{
			Model: text,
			Messages: []message{
				{Role: "system", Content: &Content{String: true, Text: text}},
				{Role: "user", Name: text, Content: &Content{Parts: []ContentPart{{Type: "text", Text: s(text)}, {Type: "image_url", ImageURL: &imageURL{URL: "https://example.com/a.png", Detail: "low"}}}}},
				{Role: "assistant", Content: &Content{Null: true}, ReasoningContent: s(text), Refusal: s(text), Annotations: []annotation{},
					ToolCalls: []toolCall{{ID: "call_1", Type: "function", Function: function{Name: text, Arguments: `{"q":"` + text + `"}`}}}},
				{Role: "tool", ToolCallID: "call_1", Content: &Content{String: true, Text: text}, Unknown: jsonx.Unknown{"x": []byte(`{ "y" : 1 }`)}},
				{Role: "user", Content: &Content{}},
			},
			Tools:             []tool{{Type: "function", Function: &functionDef{Name: text, Description: s(text), Parameters: jsontext.Value("{\n \"type\": \"object\"\n}"), Strict: &yes}}},
			ToolChoice:        &ToolChoice{Type: "function", Function: &namedFunc{Name: text}},
			ParallelToolCalls: &yes,
			ResponseFormat:    &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: text, Description: s(text), Schema: jsontext.Value(`{"type":"object"}`), Strict: &yes}},
			MaxTokens:         n(10), MaxCompletionTokens: n(1024), N: n(1), Seed: n(-7), Logprobs: &yes, TopLogprobs: n(3),
			Stop:            &Stop{String: true, Values: []string{text}},
			PresencePenalty: f(-0.5), FrequencyPenalty: f(0), Temperature: f(0.7), TopP: f(1),
			ReasoningEffort: "high", Verbosity: "low", Modalities: []string{"text"},
			Stream: &yes, StreamOptions: &streamOptions{IncludeUsage: &yes}, User: s(text), PromptCacheKey: s(text),
			Metadata: map[string]string{text: text}, ServiceTier: "flex", Store: &yes,
			Unknown: jsonx.Unknown{"extra_body": []byte(`{"k":1}`)},
		})
	}
	requests = append(requests,
		&Request{},
		&Request{Messages: []message{}, Stop: &Stop{}, ToolChoice: &ToolChoice{Mode: "required"}, Tools: []tool{}, Metadata: map[string]string{}},
		&Request{Stop: &Stop{String: true, Values: []string{"a", "b"}}},
		// Maps in Marshal's sorted order.
		&Request{Metadata: map[string]string{"b": "2", "a": "1", "é": "3", "Z": ""}, Unknown: jsonx.Unknown{"y": []byte(`[ 1 ]`), "x": []byte(`{}`)},
			Tools: []tool{{Type: "x", Unknown: jsonx.Unknown{"yp": []byte(`1`), "Runction": []byte(`2`)}}}},
		// Declined: Marshal writes these.
		&Request{LogitBias: map[string]float64{"50256": -100}},
		&Request{Temperature: f(1e-9)},
		&Request{ToolChoice: &ToolChoice{Type: "allowed_tools", AllowedTools: &allowedTools{Mode: "auto"}}},
		&Request{Messages: []message{{Role: "user", Content: &Content{Parts: []ContentPart{{Type: "input_audio", InputAudio: &inputAudio{Data: "UklG", Format: "wav"}}}}}}},
		&Request{Messages: []message{{Role: "user", Content: &Content{String: true, Text: "\xff"}}}},
	)
	recordedQuick, quick := recorded.Count(recorded.Encoded(t, requests, appendRequest), made)
	if recordedQuick < made*3/4 || quick < len(texts)+4 {
		t.Errorf("appendRequest wrote %d of %d recorded requests and %d of %d others", recordedQuick, made, quick, len(requests)-made)
	}
}
