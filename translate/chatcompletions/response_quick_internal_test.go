package chatcompletions

import (
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
)

// TestQuickResponseIsTheMarshalledResponse: every reply appendResponse
// writes is, byte for byte, the one jsonx.Marshal writes: the replies
// made from every recorded canonical response, and replies in awkward
// forms. What it declines, Marshal writes.
func TestQuickResponseIsTheMarshalledResponse(t *testing.T) {
	var replies []*Response
	req := &parleyv1.Request{Model: "gpt-test"}
	for _, resp := range recorded.Canonical(t, "response.canonical.json", func() *parleyv1.Response { return &parleyv1.Response{} }) {
		w := wireResponse(req, resp)
		replies = append(replies, &w)
	}
	made := len(replies)
	s := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	texts := []string{"", "Hello", "a \"q\" \\ \n\t", "<m&m>", "\u0000\u001f\u2028", "héllo 世界 🌍"}
	for _, text := range texts {
		replies = append(replies,
			&Response{ID: text, Object: "chat.completion", Created: 1741569952, Model: text, Choices: []choice{
				{Index: 0, Message: message{Role: "assistant", Content: &Content{String: true, Text: text}, Refusal: s(text), ReasoningContent: s(text), Annotations: []annotation{}}, FinishReason: s(text)},
				{Index: 1, Message: message{Role: "assistant", Content: &Content{Null: true}, ToolCalls: []toolCall{
					{ID: text, Type: "function", Function: function{Name: text, Arguments: `{"city":"` + text + `"}`}},
					{ID: "call_2", Type: "function", Function: function{Name: "f", Arguments: ""}},
				}}},
			}, Usage: &usage{PromptTokens: 19, CompletionTokens: 10, TotalTokens: 29,
				PromptTokensDetails:     &promptDetails{CachedTokens: n(0), AudioTokens: n(3)},
				CompletionTokensDetails: &outputDetails{ReasoningTokens: n(4), RejectedPredictionTokens: n(0)}},
				ServiceTier: s(text), SystemFingerprint: s(text)},
			&Response{ID: "x", Choices: []choice{{Message: message{Role: text, Name: text, ToolCallID: text, ToolCalls: []toolCall{}}}}},
		)
	}
	replies = append(replies,
		&Response{Choices: []choice{}},
		&Response{Choices: []choice{}, Unknown: jsonx.Unknown{"x": []byte(`7`)}},
		&Response{Choices: []choice{{Message: message{Role: "assistant", Unknown: jsonx.Unknown{"audio": []byte(`null`)}}}}},
		// Declined: Marshal writes these.
		&Response{Choices: []choice{}, Unknown: jsonx.Unknown{"x": []byte(`7`), "y": []byte(`8`)}},
		&Response{Choices: []choice{}, Unknown: jsonx.Unknown{"x": []byte(`{"a": 1}`)}},
		&Response{ID: "\xff", Choices: []choice{}},
		&Response{Choices: []choice{{Message: message{Role: "assistant", Content: &Content{Parts: []ContentPart{{Type: "text", Text: s("x")}}}}}}},
		&Response{Choices: []choice{{Message: message{Role: "assistant", Annotations: []annotation{{Type: "url_citation", URLCitation: &urlCitation{URL: "https://example.com"}}}}}}},
		&Response{Choices: []choice{{Logprobs: &logprobs{}}}},
		&Response{Choices: []choice{{Unknown: jsonx.Unknown{"x": []byte(`1`)}}}},
		&Response{Choices: []choice{{Message: message{ToolCalls: []toolCall{{Unknown: jsonx.Unknown{"x": []byte(`1`)}}}}}}},
		&Response{Choices: []choice{{Message: message{ToolCalls: []toolCall{{Function: function{Unknown: jsonx.Unknown{"x": []byte(`1`)}}}}}}}},
		&Response{Choices: []choice{}, Usage: &usage{Unknown: jsonx.Unknown{"x": []byte(`1`)}}},
	)
	recordedQuick, quick := recorded.Count(recorded.Encoded(t, replies, appendResponse), made)
	if recordedQuick < 20 || quick < 2*len(texts)+3 {
		t.Errorf("appendResponse wrote %d of %d recorded replies and %d of %d others", recordedQuick, made, quick, len(replies)-made)
	}
}

// readVariants are whole replies in awkward forms, for readResponse to
// read as jsonx.Unmarshal reads them or to decline.
var readVariants = []string{
	`{"id":"chatcmpl-1","object":"chat.completion","created":1741569952,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a \"q\" \\ \n \u00e9 \ud83c\udf0d <&>","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":null},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0,"x":1}},"service_tier":"default","system_fingerprint":null}`,
	`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}","x":[1]},"y":null}],"reasoning_content":"hmm","provider_specific":{"a":1}},"finish_reason":"tool_calls","native_finish_reason":"tool_calls"}],"usage":null,"provider":"x"}`,
	`{"choices":[{"message":null},{"message":{"tool_calls":[],"annotations":null,"content":""}}],"created":null,"id":null}`,
	`{"choices":[{"message":{"tool_calls":null,"refusal":"no"},"finish_reason":null}]}`,
	`{"choices":[{"message":{"tool_calls":[{"function":null}]}}]}`,
	`{"choices":null,"usage":{"prompt_tokens_details":null,"completion_tokens_details":null,"cost":0.5}}`,
	` { "choices" : [ ] } `,
	`{}`,
	// Declined: the general way reads these.
	`{"choices":[{"message":{"content":[{"type":"text","text":"x"}]}}]}`,
	`{"choices":[{"message":{"annotations":[{"type":"url_citation","url_citation":{"url":"https://example.com"}}]}}]}`,
	`{"choices":[{"logprobs":{"content":[]}}]}`,
	`{"choices":[{"message":{"function_call":{"name":"f"}}}]}`,
	`{"choices":[{"message":{"content":"a","content":"b"}}]}`,
	`{"created":1.5}`,
	`{"created":"1"}`,
	`{"choices":[{"index":-1}]}`,
	`{"choices":{}}`,
	`{"usage":{"prompt_tokens":1e3}}`,
	`{"id":"\x"}`,
	`{} {}`,
}

// TestQuickReadIsTheUnmarshalledResponse: every reply readResponse reads
// (the recorded replies and awkward forms) is the one jsonx.Unmarshal
// reads; what it declines, the general way reads. FuzzQuickResponse holds
// it to that on any input.
func TestQuickReadIsTheUnmarshalledResponse(t *testing.T) {
	replies := recordedReplies(t)
	recordedQuick, others := recorded.DecodedAll(t, replies, recorded.Variants(readVariants), readResponse)
	if recordedQuick < 5 || others < 8 {
		t.Errorf("readResponse read %d of %d recorded replies and %d of %d others", recordedQuick, len(replies), others, len(readVariants))
	}
}

// recordedReplies are the chat-completions replies under testdata.
func recordedReplies(t testing.TB) [][]byte {
	return recorded.Files(t, 10, "chat_completions/*/response.json", "cross_table/*/chat_completions/response.json")
}

func FuzzQuickResponse(f *testing.F) {
	for _, b := range append(recordedReplies(f), recorded.Variants(readVariants)...) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { recorded.Decoded(t, b, readResponse) })
}
