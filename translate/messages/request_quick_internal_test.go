package messages

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
)

// TestQuickRequestIsTheMarshalledRequest: every request appendRequest
// writes is, byte for byte, the one jsonx.Marshal writes: the requests
// made from every recorded canonical request (for a messages upstream, and
// for counting), the recorded messages requests as clients send them, and
// requests in awkward forms. What it declines, Marshal writes.
func TestQuickRequestIsTheMarshalledRequest(t *testing.T) {
	var requests []*Request
	for _, req := range recorded.Canonical(t, "request.canonical.json", func() *parleyv1.Request { return &parleyv1.Request{} }) {
		for _, count := range []bool{false, true} {
			e := encoder{req: req, t: translate.Target{Model: "claude-test"}, same: req.GetExtensions().GetDialect() == thisDialect}
			if w, err := e.request(count); err == nil {
				requests = append(requests, w)
			}
		}
	}
	for _, b := range recordedClientRequests(t) {
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
			Model: text, MaxTokens: n(1024),
			Messages: []message{
				{Role: "user", Content: Content{String: true, Text: text}},
				{Role: "assistant", Content: Content{Blocks: []Block{
					{Type: "thinking", Thinking: s(text), Signature: s("EqQB")},
					{Type: "text", Text: s(text)},
					{Type: "tool_use", ID: "toolu_1", Name: text, Input: jsontext.Value(`{"q":"x y"}`), CacheControl: &cacheControl{Type: "ephemeral", TTL: "1h"}},
				}}, Unknown: jsonx.Unknown{"x": []byte(`1`)}},
				{Role: "user", Content: Content{Blocks: []Block{{Type: "tool_result", ToolUseID: "toolu_1", Content: jsontext.Value(`[{"type":"text","text":"ok"}]`), IsError: &yes}}}},
				{Role: "user", Content: Content{}},
			},
			System:        &Content{Blocks: []Block{{Type: "text", Text: s(text), CacheControl: &cacheControl{Type: "ephemeral"}}}},
			Metadata:      &metadata{UserID: s(text)},
			StopSequences: []string{text, "END"},
			Stream:        &yes, Temperature: f(0.7), TopK: n(40), TopP: f(0.95),
			Thinking:     &thinking{Type: "enabled", BudgetTokens: n(2048)},
			ToolChoice:   &toolChoice{Type: "tool", Name: text, DisableParallelToolUse: &yes},
			Tools:        []tool{{Name: text, Description: s(text), InputSchema: jsontext.Value(`{"type":"object","properties":{"q":{"type":"string"}}}`), Strict: &yes, CacheControl: &cacheControl{Type: "ephemeral"}}, {Type: "custom", Name: "f"}},
			ServiceTier:  "auto",
			OutputConfig: &outputConfig{Effort: "high", Format: &outputFormat{Type: "json_schema", Schema: jsontext.Value(`{"type":"object"}`)}},
			Unknown:      jsonx.Unknown{"container": []byte(`"c_1"`)},
		})
	}
	requests = append(requests,
		&Request{},
		&Request{Messages: []message{}, System: &Content{String: true}, StopSequences: []string{}, Tools: []tool{}, Metadata: &metadata{}},
		&Request{Tools: []tool{
			{Type: "web_search_20250305", Name: "web_search", MaxUses: n(5), AllowedDomains: []string{"a.example", "b.example"}, BlockedDomains: []string{},
				UserLocation: &userLocation{Type: "approximate", City: "London", Timezone: "Europe/London", Unknown: jsonx.Unknown{"x": []byte(`1`)}}},
			{Type: "computer_20250124", Name: "computer", DisplayWidthPx: n(1024), DisplayHeightPx: n(768), DisplayNumber: n(1)},
			{Type: "text_editor_20250728", Name: "str_replace_based_edit_tool", MaxCharacters: n(10000)},
		}},
		&Request{Tools: []tool{{Name: "f", InputSchema: jsontext.Value("{\n  \"type\": \"object\", \"description\": \"\\u00e9\"\n}")}}},
		// Declined: Marshal writes these.
		&Request{Tools: []tool{{Name: "f", InputSchema: jsontext.Value(`{"type": }`)}}},
		&Request{Temperature: f(1e-7)},
		&Request{Messages: []message{{Role: "user", Content: Content{String: true, Text: "\xff"}}}},
		&Request{Unknown: jsonx.Unknown{"a": []byte(`1`), "b": []byte(`2`)}},
	)
	recordedQuick, quick := recorded.Count(recorded.Encoded(t, requests, appendRequest), made)
	if recordedQuick < made*9/10 || quick < len(texts)+4 {
		t.Errorf("appendRequest wrote %d of %d recorded requests and %d of %d others", recordedQuick, made, quick, len(requests)-made)
	}
}

// readRequestVariants are requests in awkward forms, for readRequest to
// read as jsonx.Unmarshal reads them or to decline.
var readRequestVariants = []string{
	`{"model":"claude-sonnet-4-5","max_tokens":1024,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":"a \"q\" \\ \n \u00e9 \ud83c\udf0d <&>"},{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"EqQB"},{"type":"redacted_thinking","data":"abc"},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city": "Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"18C"}],"is_error":false},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}},{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"},"title":"t","context":"c","citations":{"enabled":true}}]}],"metadata":{"user_id":"u1","x":1},"stop_sequences":["END"],"stream":true,"temperature":0.7,"top_k":40,"top_p":0.95,"thinking":{"type":"enabled","budget_tokens":2048},"tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true},"tools":[{"name":"get_weather","description":"Weather","input_schema":{"type":"object"},"strict":true,"cache_control":{"type":"ephemeral"}},{"type":"web_search_20250305","name":"web_search","max_uses":5,"allowed_domains":["a.example"],"blocked_domains":[],"user_location":{"type":"approximate","city":"London","region":"London","country":"GB","timezone":"Europe/London","x":1}},{"type":"computer_20250124","name":"computer","display_width_px":1024,"display_height_px":768,"display_number":1},{"type":"text_editor_20250728","name":"str_replace_based_edit_tool","max_characters":10000}],"service_tier":"auto","output_config":{"effort":"high","format":{"type":"json_schema","schema":{"type":"object"},"x":1},"y":2},"container":"c_1"}`,
	`{"messages":[{"role":"user","content":[],"x":{"y":[1, 2]}}],"model":"m","system":"s","stop_sequences":null,"tools":null,"metadata":null,"thinking":null,"tool_choice":null,"output_config":{"format":null},"max_tokens":null,"temperature":null,"stream":null}`,
	`{"model":"m","messages":[{"role":"user","content":[{}]},{"content":"x"}],"system":null,"tools":[],"stop_sequences":[]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":null,"citations":null}]}]}`,
	`{"model":"m","messages":[]}`,
	`{"model":"m","messages":null}`,
	`{}`,
	` { "model" : "m" , "messages" : [ { "role" : "user" , "content" : "x" } ] } `,
	`{"model":"m","messages":[{"role":"user","content":null}]}`,
	`{"model":"m","messages":[{"role":"user","content":{}}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x","content":"y"}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"tool_use","input":{"a":1,"a":2}}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":1e400}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1.5}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"stop_sequences":[1]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}]} x`,
	`{"model":"m","messages":[null]}`,
	`{"model":"m","messages":[{"role":"user","content":[null]}]}`,
}

// TestQuickReadIsTheUnmarshalledRequest: every request readRequest reads
// (the recorded ones, Claude Code's among them, and awkward forms) is the
// one jsonx.Unmarshal reads; what it declines, the general way reads.
// FuzzQuickRequest holds it to that on any input.
func TestQuickReadIsTheUnmarshalledRequest(t *testing.T) {
	bodies := recordedClientRequests(t)
	recordedQuick, others := recorded.DecodedAll(t, bodies, recorded.Variants(readRequestVariants), readRequest)
	if recordedQuick < len(bodies) || others < 8 {
		t.Errorf("readRequest read %d of %d recorded requests and %d of %d others", recordedQuick, len(bodies), others, len(readRequestVariants))
	}
}

// recordedClientRequests are the messages requests under testdata.
func recordedClientRequests(t testing.TB) [][]byte {
	return recorded.Files(t, 20, "messages/*/request.json", "cross_table/*/messages/request.json", "agent_tools/claude_code/request*.json")
}

func FuzzQuickRequest(f *testing.F) {
	for _, b := range append(recordedClientRequests(f), recorded.Variants(readRequestVariants)...) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { recorded.Decoded(t, b, readRequest) })
}
