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

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/parleyhq/parley/translate/golden"
)

// MessagesRequest checks that the messages SDK's request type reads every
// member of a request body: decoding into BetaMessageNewParams (the
// superset of the request types) and encoding again must give the same
// document.
func MessagesRequest(t testing.TB, body []byte) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "stream") // set by the SDK's streaming call, not a parameter
	// Sampling parameters the spec lists but the SDK no longer types.
	for _, k := range []string{"temperature", "top_p", "top_k"} {
		delete(m, k)
	}
	plain, _ := json.Marshal(m)
	var p anthropic.BetaMessageNewParams
	if err := json.Unmarshal(plain, &p); err != nil {
		t.Fatalf("the SDK cannot read the request: %v", err)
	}
	again, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := golden.DiffJSON(stringResults(t, plain), stringResults(t, again), golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("the SDK's request type does not hold the request (-sent +sdk):\n%s%v", diff, err)
	}
}

// stringResults spells a string system prompt and the string content of
// tool results as one text block, as the SDK's request type holds them.
func stringResults(t testing.TB, body []byte) []byte {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if s, ok := m["system"].(string); ok {
		m["system"] = []any{map[string]any{"type": "text", "text": s}}
	}
	msgs, _ := m["messages"].([]any)
	for _, mm := range msgs {
		blocks, _ := mm.(map[string]any)["content"].([]any)
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if s, ok := bm["content"].(string); ok && bm["type"] == "tool_result" {
				bm["content"] = []any{map[string]any{"type": "text", "text": s}}
			}
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// MessagesReply checks that the SDK reads a whole reply: every block is of
// a type it knows, and the message converts to a request param for the
// next turn.
func MessagesReply(t testing.TB, body []byte) anthropic.Message {
	t.Helper()
	var m anthropic.Message
	if err := m.UnmarshalJSON(body); err != nil {
		t.Fatalf("the SDK cannot read the reply: %v", err)
	}
	if m.Role != "assistant" || m.Type != "message" || m.ID == "" {
		t.Errorf("reply envelope = %q %q %q", m.Role, m.Type, m.ID)
	}
	for i, b := range m.Content {
		if b.AsAny() == nil {
			t.Errorf("content[%d] has a type the SDK does not know: %q", i, b.Type)
		}
	}
	_ = m.ToParam()
	return m
}

func streamResponse(stream []byte) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, "https://api.anthropic.com/v1/messages", nil)
	return &http.Response{
		StatusCode: 200,
		Status:     "200 OK",
		Header:     http.Header{"Content-Type": {"text/event-stream"}, "Request-Id": {"req_stream"}},
		Body:       io.NopCloser(bytes.NewReader(stream)),
		Request:    req,
	}
}

// MessagesStream reads a stream through the SDK's stream reader and
// accumulator and returns the message they build.
func MessagesStream(t testing.TB, stream []byte) anthropic.Message {
	t.Helper()
	res := streamResponse(stream)
	defer res.Body.Close()
	s := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
	var m anthropic.Message
	for s.Next() {
		if err := m.Accumulate(s.Current()); err != nil {
			t.Fatalf("the SDK's accumulator rejected the stream: %v", err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("the SDK's stream reader failed: %v", err)
	}
	return m
}

// MessagesStreamError reads a stream that ends in an error event and
// requires the SDK's typed API error with the message and an error type:
// wantType when given, any when empty.
func MessagesStreamError(t testing.TB, stream []byte, wantType, message string) {
	t.Helper()
	res := streamResponse(stream)
	defer res.Body.Close()
	s := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
	var m anthropic.Message
	for s.Next() {
		if err := m.Accumulate(s.Current()); err != nil {
			t.Fatalf("the SDK's accumulator rejected the stream: %v", err)
		}
	}
	var apiErr *anthropic.Error
	if !errors.As(s.Err(), &apiErr) {
		t.Fatalf("the SDK's stream ended with %v, want an API error", s.Err())
	}
	if got := string(apiErr.Type()); got == "" || wantType != "" && got != wantType {
		t.Errorf("the SDK saw error type %q, want %q", got, wantType)
	}
	if !strings.Contains(apiErr.Error(), message) {
		t.Errorf("the SDK's error %q does not hold the message %q", apiErr.Error(), message)
	}
}

// SameMessage requires two messages to agree on their envelope, usage
// and blocks: a streamed reply accumulated by the SDK against the whole
// reply of the same response.
func SameMessage(t testing.TB, want, got anthropic.Message) {
	t.Helper()
	if want.ID != got.ID || want.StopReason != got.StopReason || want.StopSequence != got.StopSequence {
		t.Errorf("accumulated envelope = %q %q %q, whole = %q %q %q", got.ID, got.StopReason, got.StopSequence, want.ID, want.StopReason, want.StopSequence)
	}
	if want.Usage.InputTokens != got.Usage.InputTokens || want.Usage.OutputTokens != got.Usage.OutputTokens ||
		want.Usage.CacheReadInputTokens != got.Usage.CacheReadInputTokens {
		t.Errorf("accumulated usage = %+v, whole = %+v", got.Usage, want.Usage)
	}
	if len(want.Content) != len(got.Content) {
		t.Fatalf("accumulated %d blocks, whole reply has %d", len(got.Content), len(want.Content))
	}
	for i := range want.Content {
		w, g := want.Content[i], got.Content[i]
		if w.Type != g.Type || w.Text != g.Text || w.Thinking != g.Thinking || w.Signature != g.Signature || w.ID != g.ID || w.Name != g.Name {
			t.Errorf("block %d: accumulated %+v, whole %+v", i, g, w)
		}
		if w.Type == "tool_use" {
			if diff, err := golden.DiffJSON(w.Input, g.Input); err != nil || diff != "" {
				t.Errorf("block %d input: %s %v", i, diff, err)
			}
		}
	}
}

// MessagesError serves an error reply to the SDK's client and requires
// the API error it returns to have the status, a type (wantType, when
// given) and the message.
func MessagesError(t testing.TB, status int, body []byte, wantType, message string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{MaxTokens: 1, Model: "m", Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("x"))}})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("the SDK returned %v, want an API error", err)
	}
	if apiErr.StatusCode != status || apiErr.Type() == "" || wantType != "" && string(apiErr.Type()) != wantType || !strings.Contains(apiErr.Error(), message) {
		t.Errorf("the SDK read the error as %d %q: %v", apiErr.StatusCode, apiErr.Type(), apiErr)
	}
}
