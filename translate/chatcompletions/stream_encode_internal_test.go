package chatcompletions

import (
	"bytes"
	"testing"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// TestQuickChunkIsTheMarshalledChunk: the chunk quickChunk writes without
// reflection is, byte for byte, the one jsonx.Marshal writes, whatever the
// text (quotes, line breaks, HTML, control characters, non-ASCII), the
// stream's head (service tier and fingerprint after the choices) and the
// step (role, text, reasoning, refusal, tool calls, finish, usage); and it
// leaves to jsonx.Marshal what it does not write.
func TestQuickChunkIsTheMarshalledChunk(t *testing.T) {
	tier, fp := "default", "fp_7e2b"
	heads := []chunk{
		{ID: "chatcmpl-1", Object: "chat.completion.chunk", Created: 1764000000, Model: "m"},
		{ID: `id"with\quotes`, Object: "chat.completion.chunk", Created: 0, Model: "<m&m>", ServiceTier: &tier, SystemFingerprint: &fp},
		{ID: "chatcmpl-2", Object: "chat.completion.chunk", Created: -1, Model: "m", SystemFingerprint: &fp},
	}
	texts := []string{"", "Hello", "a \"quoted\" \\ line\nbreak\ttab", "<script>&amp;</script>", "\u0000\u001f\u2028\u2029", "héllo 世界 🌍"}
	stop, length := "stop", "length"
	n := func(v int64) *int64 { return &v }
	var choices [][]chunkChoice
	choices = append(choices, nil)
	for _, text := range texts {
		choices = append(choices,
			[]chunkChoice{{Index: 2, Delta: delta{Content: &text}}},
			[]chunkChoice{{Delta: delta{ReasoningContent: &text}}},
			[]chunkChoice{{Delta: delta{Reasoning: &text}}},
			[]chunkChoice{{Delta: delta{Refusal: &text}}},
			[]chunkChoice{{Delta: delta{Role: "assistant", Content: &text}}},
			[]chunkChoice{{Delta: delta{Role: "assistant", Content: &text, Refusal: &text, ReasoningContent: &text, Reasoning: &text}}},
			[]chunkChoice{{Delta: delta{ToolCalls: []deltaToolCall{{Index: 1, ID: "call_" + text, Type: "function", Function: &deltaFunction{Name: text, Arguments: &text}}}}}},
			[]chunkChoice{{Delta: delta{ToolCalls: []deltaToolCall{{Index: 0, Function: &deltaFunction{Arguments: &text}}, {Index: 3, ID: text}}}}},
		)
	}
	choices = append(choices,
		[]chunkChoice{{Delta: delta{}}},
		[]chunkChoice{{Delta: delta{ToolCalls: []deltaToolCall{}}}},
		[]chunkChoice{{Delta: delta{ToolCalls: []deltaToolCall{{Index: 0}, {Index: 1, Function: &deltaFunction{}}}}}},
		[]chunkChoice{{Index: 1, FinishReason: &stop}},
		[]chunkChoice{{Delta: delta{Role: "assistant"}, FinishReason: &length}},
		[]chunkChoice{{Delta: delta{Content: new("x")}, FinishReason: &stop}},
	)
	usages := []*usage{
		nil,
		{},
		{PromptTokens: 12, CompletionTokens: 30, TotalTokens: 42},
		{PromptTokens: 1, PromptTokensDetails: &promptDetails{}, CompletionTokensDetails: &outputDetails{}},
		{PromptTokens: 1, PromptTokensDetails: &promptDetails{CachedTokens: n(0), AudioTokens: n(2)},
			CompletionTokensDetails: &outputDetails{ReasoningTokens: n(5), AudioTokens: n(0), AcceptedPredictionTokens: n(1), RejectedPredictionTokens: n(9)}},
		{CompletionTokensDetails: &outputDetails{RejectedPredictionTokens: n(9)}},
	}
	for _, h := range heads {
		s := &streamEncoder{head: h}
		for _, cs := range choices {
			for _, u := range usages {
				got, ok := s.quickChunk(cs, u)
				if !ok {
					t.Fatalf("no quick chunk for %+v, usage %+v", cs, u)
				}
				want := h
				want.Choices, want.Usage = cs, u
				if want.Choices == nil {
					want.Choices = []chunkChoice{}
				}
				wantBytes, err := jsonx.Marshal(want)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, wantBytes) {
					t.Errorf("choices %+v, usage %+v:\n got %s\nwant %s", cs, u, got, wantBytes)
				}
			}
		}
		// What quickChunk does not write is left to jsonx.Marshal.
		kept := jsonx.Unknown{"x": []byte("1")}
		for _, c := range []struct {
			choices []chunkChoice
			usage   *usage
		}{
			{choices: []chunkChoice{{}, {Index: 1}}},
			{choices: []chunkChoice{{Logprobs: &logprobs{}}}},
			{choices: []chunkChoice{{Unknown: kept}}},
			{choices: []chunkChoice{{Delta: delta{Unknown: kept}}}},
			{choices: []chunkChoice{{Delta: delta{Annotations: []annotation{}}}}},
			{choices: []chunkChoice{{Delta: delta{ToolCalls: []deltaToolCall{{Unknown: kept}}}}}},
			{choices: []chunkChoice{{Delta: delta{ToolCalls: []deltaToolCall{{Function: &deltaFunction{Unknown: kept}}}}}}},
			{choices: []chunkChoice{{Delta: delta{Content: new("\xff")}}}},
			{usage: &usage{Unknown: kept}},
			{usage: &usage{PromptTokensDetails: &promptDetails{Unknown: kept}}},
			{usage: &usage{CompletionTokensDetails: &outputDetails{Unknown: kept}}},
		} {
			if _, ok := s.quickChunk(c.choices, c.usage); ok {
				t.Errorf("%+v, usage %+v was written as a quick chunk", c.choices, c.usage)
			}
		}
	}
	// Nor is a head with members of its own.
	for _, h := range []chunk{{Model: "m", Unknown: jsonx.Unknown{"x": []byte("1")}}, {Model: "m", Error: []byte("{}")}, {Model: "\xff"}, {ID: "\xff"}} {
		s := &streamEncoder{head: h}
		if _, ok := s.quickChunk(nil, nil); ok {
			t.Errorf("head %+v was written as a quick chunk", h)
		}
	}
}
