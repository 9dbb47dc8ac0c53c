package messages

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// TestQuickRequestIsTheMarshalledRequest: every request appendRequest
// writes is, byte for byte, the one jsonx.Marshal writes: the requests
// made from every recorded canonical request (for a messages upstream, and
// for counting), the recorded messages requests as clients send them, and
// requests in awkward forms. What it declines, Marshal writes.
func TestQuickRequestIsTheMarshalledRequest(t *testing.T) {
	var requests []*Request
	var paths []string
	err := filepath.WalkDir("../../testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "request.canonical.json" {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		req := &parleyv1.Request{}
		golden.ReadProto(t, p, req)
		for _, count := range []bool{false, true} {
			e := encoder{req: req, t: translate.Target{Model: "claude-test"}, same: req.GetExtensions().GetDialect() == thisDialect}
			if w, err := e.request(count); err == nil {
				requests = append(requests, w)
			}
		}
	}
	raw, err := filepath.Glob("../../testdata/messages/*/request.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range raw {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var w Request
		if jsonx.Unmarshal(b, &w) == nil {
			requests = append(requests, &w)
		}
	}
	recorded := len(requests)
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
	quick, recordedQuick := 0, 0
	for i, w := range requests {
		want, err := jsonx.Marshal(w)
		got, ok := appendRequest(nil, w)
		if !ok {
			continue
		}
		quick++
		if i < recorded {
			recordedQuick++
		}
		if err != nil {
			t.Errorf("appendRequest wrote %s, which Marshal refuses: %v", got, err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}
	if recordedQuick < recorded*9/10 || quick-recordedQuick < len(texts)+4 {
		t.Errorf("appendRequest wrote %d of %d requests, %d of %d recorded", quick, len(requests), recordedQuick, recorded)
	}
}
