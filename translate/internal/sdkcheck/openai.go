package sdkcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/parleyhq/parley/translate/golden"
)

// ChatRequest checks that the SDK's request type reads every member of a
// chat-completions request body: decoding into ChatCompletionNewParams and
// encoding again must give the same document.
func ChatRequest(t testing.TB, body []byte) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "stream") // set by the SDK's streaming call, not a parameter
	if tc, ok := m["tool_choice"].(map[string]any); ok {
		// The params union reads a tool-choice object only in part;
		// its variant type is checked on its own.
		delete(m, "tool_choice")
		toolChoice(t, tc)
	}
	plain, _ := json.Marshal(m)
	var p openai.ChatCompletionNewParams
	if err := json.Unmarshal(plain, &p); err != nil {
		t.Fatalf("the SDK cannot read the request: %v", err)
	}
	again, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := golden.DiffJSON(plain, again, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the SDK's request type does not hold the request (-sent +sdk):\n%s%v", diff, err)
	}
}

func toolChoice(t testing.TB, tc map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(tc)
	var again []byte
	var err error
	switch tc["type"] {
	case "function":
		var v openai.ChatCompletionNamedToolChoiceParam
		if err = json.Unmarshal(raw, &v); err == nil {
			again, err = json.Marshal(v)
		}
	case "allowed_tools":
		var v openai.ChatCompletionAllowedToolChoiceParam
		if err = json.Unmarshal(raw, &v); err == nil {
			again, err = json.Marshal(v)
		}
	default:
		t.Fatalf("tool_choice type %v is not one the SDK knows", tc["type"])
	}
	if err != nil {
		t.Fatalf("the SDK cannot read tool_choice: %v", err)
	}
	if diff, err := golden.DiffJSON(raw, again, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the SDK's tool-choice type does not hold it (-sent +sdk):\n%s%v", diff, err)
	}
}

// ChatReply checks that the SDK reads a whole reply, and that its message
// converts to a param for the next turn.
func ChatReply(t testing.TB, body []byte) openai.ChatCompletion {
	t.Helper()
	var c openai.ChatCompletion
	if err := c.UnmarshalJSON(body); err != nil {
		t.Fatalf("the SDK cannot read the reply: %v", err)
	}
	if c.ID == "" || c.Object != "chat.completion" || len(c.Choices) == 0 {
		t.Errorf("reply envelope = %q %q with %d choices", c.ID, c.Object, len(c.Choices))
	}
	for _, ch := range c.Choices {
		if ch.Message.Role != "assistant" || ch.FinishReason == "" {
			t.Errorf("choice %d: role %q, finish_reason %q", ch.Index, ch.Message.Role, ch.FinishReason)
		}
		_ = ch.Message.ToParam()
	}
	return c
}

func openaiStream(stream []byte, path string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com"+path, nil)
	return &http.Response{
		StatusCode: 200,
		Status:     "200 OK",
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(stream)),
		Request:    req,
	}
}

// ChatStream reads a stream through the SDK's stream reader and its
// ChatCompletionAccumulator, and returns what they build.
func ChatStream(t testing.TB, stream []byte) openai.ChatCompletion {
	t.Helper()
	res := openaiStream(stream, "/v1/chat/completions")
	defer res.Body.Close()
	s := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		if !acc.AddChunk(s.Current()) {
			t.Fatalf("the SDK's accumulator rejected the chunk %s", s.Current().RawJSON())
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("the SDK's stream reader failed: %v", err)
	}
	return acc.ChatCompletion
}

// ChatStreamError reads a stream that ends in an error chunk and requires
// the SDK's stream error holding the message.
func ChatStreamError(t testing.TB, stream []byte, message string) {
	t.Helper()
	res := openaiStream(stream, "/v1/chat/completions")
	defer res.Body.Close()
	s := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	var se *ssestream.StreamError
	if !errors.As(s.Err(), &se) {
		t.Fatalf("the SDK's stream ended with %v, want a stream error", s.Err())
	}
	if !strings.Contains(se.Error(), message) {
		t.Errorf("the SDK's error %q does not hold the message %q", se.Error(), message)
	}
}

// SameChatCompletion requires a streamed reply accumulated by the SDK to
// agree with the whole reply of the same response.
func SameChatCompletion(t testing.TB, want, got openai.ChatCompletion) {
	t.Helper()
	if want.ID != got.ID || want.Model != got.Model {
		t.Errorf("accumulated envelope = %q %q, whole = %q %q", got.ID, got.Model, want.ID, want.Model)
	}
	if want.Usage.PromptTokens != got.Usage.PromptTokens || want.Usage.CompletionTokens != got.Usage.CompletionTokens ||
		want.Usage.PromptTokensDetails.CachedTokens != got.Usage.PromptTokensDetails.CachedTokens {
		t.Errorf("accumulated usage = %+v, whole = %+v", got.Usage, want.Usage)
	}
	if len(want.Choices) != len(got.Choices) {
		t.Fatalf("accumulated %d choices, whole reply has %d", len(got.Choices), len(want.Choices))
	}
	for i := range want.Choices {
		w, g := want.Choices[i], got.Choices[i]
		if w.FinishReason != g.FinishReason || w.Message.Content != g.Message.Content || w.Message.Refusal != g.Message.Refusal {
			t.Errorf("choice %d: accumulated %q %q %q, whole %q %q %q", i, g.FinishReason, g.Message.Content, g.Message.Refusal, w.FinishReason, w.Message.Content, w.Message.Refusal)
		}
		if len(w.Message.ToolCalls) != len(g.Message.ToolCalls) {
			t.Fatalf("choice %d: accumulated %d tool calls, whole %d", i, len(g.Message.ToolCalls), len(w.Message.ToolCalls))
		}
		for j := range w.Message.ToolCalls {
			wc, gc := w.Message.ToolCalls[j], g.Message.ToolCalls[j]
			if wc.ID != gc.ID || wc.Function.Name != gc.Function.Name {
				t.Errorf("choice %d call %d: accumulated %q %q, whole %q %q", i, j, gc.ID, gc.Function.Name, wc.ID, wc.Function.Name)
			}
			if diff, err := golden.DiffJSON([]byte(orEmpty(wc.Function.Arguments)), []byte(orEmpty(gc.Function.Arguments))); err != nil || diff != "" {
				t.Errorf("choice %d call %d arguments: %s %v", i, j, diff, err)
			}
		}
	}
}

func orEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// OpenAIError serves an error reply to the SDK's client and requires the
// API error it returns to have the status, the type (wantType, when given)
// and the message. Both OpenAI-family dialects share the error body.
func OpenAIError(t testing.TB, status int, body []byte, wantType, message string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("the SDK returned %v, want an API error", err)
	}
	if apiErr.StatusCode != status || apiErr.Type == "" || wantType != "" && apiErr.Type != wantType || apiErr.Message != message {
		t.Errorf("the SDK read the error as %d %q %q", apiErr.StatusCode, apiErr.Type, apiErr.Message)
	}
}
