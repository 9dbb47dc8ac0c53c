package chatcompletions

import (
	"bytes"
	"path/filepath"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// TestQuickResponseIsTheMarshalledResponse: every reply appendResponse
// writes is, byte for byte, the one jsonx.Marshal writes: the replies
// made from every recorded canonical response, and replies in awkward
// forms. What it declines, Marshal writes.
func TestQuickResponseIsTheMarshalledResponse(t *testing.T) {
	var replies []Response
	paths, err := filepath.Glob("../../testdata/*/*/response.canonical.json")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("../../testdata/*/*/*/response.canonical.json")
	if err != nil {
		t.Fatal(err)
	}
	req := &parleyv1.Request{Model: "gpt-test"}
	for _, p := range append(paths, more...) {
		resp := &parleyv1.Response{}
		golden.ReadProto(t, p, resp)
		replies = append(replies, wireResponse(req, resp))
	}
	recorded := len(replies)
	s := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	texts := []string{"", "Hello", "a \"q\" \\ \n\t", "<m&m>", "\u0000\u001f\u2028", "héllo 世界 🌍"}
	for _, text := range texts {
		replies = append(replies,
			Response{ID: text, Object: "chat.completion", Created: 1741569952, Model: text, Choices: []choice{
				{Index: 0, Message: message{Role: "assistant", Content: &Content{String: true, Text: text}, Refusal: s(text), ReasoningContent: s(text), Annotations: []annotation{}}, FinishReason: s(text)},
				{Index: 1, Message: message{Role: "assistant", Content: &Content{Null: true}, ToolCalls: []toolCall{
					{ID: text, Type: "function", Function: function{Name: text, Arguments: `{"city":"` + text + `"}`}},
					{ID: "call_2", Type: "function", Function: function{Name: "f", Arguments: ""}},
				}}},
			}, Usage: &usage{PromptTokens: 19, CompletionTokens: 10, TotalTokens: 29,
				PromptTokensDetails:     &promptDetails{CachedTokens: n(0), AudioTokens: n(3)},
				CompletionTokensDetails: &outputDetails{ReasoningTokens: n(4), RejectedPredictionTokens: n(0)}},
				ServiceTier: s(text), SystemFingerprint: s(text)},
			Response{ID: "x", Choices: []choice{{Message: message{Role: text, Name: text, ToolCallID: text, ToolCalls: []toolCall{}}}}},
		)
	}
	replies = append(replies,
		Response{Choices: []choice{}},
		Response{Choices: []choice{}, Unknown: jsonx.Unknown{"x": []byte(`7`)}},
		Response{Choices: []choice{{Message: message{Role: "assistant", Unknown: jsonx.Unknown{"audio": []byte(`null`)}}}}},
		// Declined: Marshal writes these.
		Response{Choices: []choice{}, Unknown: jsonx.Unknown{"x": []byte(`7`), "y": []byte(`8`)}},
		Response{Choices: []choice{}, Unknown: jsonx.Unknown{"x": []byte(`{"a": 1}`)}},
		Response{ID: "\xff", Choices: []choice{}},
		Response{Choices: []choice{{Message: message{Role: "assistant", Content: &Content{Parts: []ContentPart{{Type: "text", Text: s("x")}}}}}}},
		Response{Choices: []choice{{Message: message{Role: "assistant", Annotations: []annotation{{Type: "url_citation", URLCitation: &urlCitation{URL: "https://example.com"}}}}}}},
		Response{Choices: []choice{{Logprobs: &logprobs{}}}},
		Response{Choices: []choice{{Unknown: jsonx.Unknown{"x": []byte(`1`)}}}},
		Response{Choices: []choice{{Message: message{ToolCalls: []toolCall{{Unknown: jsonx.Unknown{"x": []byte(`1`)}}}}}}},
		Response{Choices: []choice{{Message: message{ToolCalls: []toolCall{{Function: function{Unknown: jsonx.Unknown{"x": []byte(`1`)}}}}}}}},
		Response{Choices: []choice{}, Usage: &usage{Unknown: jsonx.Unknown{"x": []byte(`1`)}}},
	)
	quick, recordedQuick := 0, 0
	for i := range replies {
		w := &replies[i]
		want, err := jsonx.Marshal(w)
		got, ok := appendResponse(nil, w)
		if !ok {
			continue
		}
		quick++
		if i < recorded {
			recordedQuick++
		}
		if err != nil {
			t.Errorf("appendResponse wrote %s, which Marshal refuses: %v", got, err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}
	if recordedQuick < 20 || quick-recordedQuick < 2*len(texts)+3 {
		t.Errorf("appendResponse wrote %d of %d replies, %d of %d recorded", quick, len(replies), recordedQuick, recorded)
	}
}
