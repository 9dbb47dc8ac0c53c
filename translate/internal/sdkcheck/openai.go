package sdkcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

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

// ResponsesRequest checks that the SDK's request types read every member
// of a responses request body. The SDK reads its param unions (input
// items, their content, tools, filters) only in part, so each union
// member is checked against its own variant type, and the rest of the
// body against ResponseNewParams.
func ResponsesRequest(t testing.TB, body []byte) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "stream")
	if items, ok := m["input"].([]any); ok {
		for i, it := range items {
			inputItem(t, i, it.(map[string]any))
		}
		delete(m, "input")
	}
	if tools, ok := m["tools"].([]any); ok {
		for i, tl := range tools {
			responsesTool(t, i, tl.(map[string]any))
		}
		delete(m, "tools")
	}
	if tc, ok := m["tool_choice"].(map[string]any); ok {
		holds(t, "tool_choice", tc, map[string]any{
			"function": &responses.ToolChoiceFunctionParam{}, "allowed_tools": &responses.ToolChoiceAllowedParam{},
		}[typeOf(tc)], &responses.ToolChoiceTypesParam{})
		delete(m, "tool_choice")
	}
	var p responses.ResponseNewParams
	holds(t, "the request", m, &p, nil)
}

func typeOf(m map[string]any) string {
	s, _ := m["type"].(string)
	return s
}

// holds requires the SDK type v (or alt, when v is nil) to read doc and
// write it back unchanged.
func holds(t testing.TB, what string, doc any, v, alt any) {
	t.Helper()
	if v == nil {
		v = alt
	}
	if v == nil {
		t.Errorf("%s: the SDK has no type for %v", what, doc)
		return
	}
	raw, _ := json.Marshal(doc)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: the SDK cannot read it: %v", what, err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := golden.DiffJSON(raw, again, golden.IgnoreNullMembers); err != nil || diff != "" {
		t.Errorf("%s: the SDK's type does not hold it (-sent +sdk):\n%s%v", what, diff, err)
	}
}

func inputItem(t testing.TB, i int, it map[string]any) {
	t.Helper()
	what := "input[" + strconv.Itoa(i) + "]"
	typ := typeOf(it)
	if typ == "" || typ == "message" {
		if parts, ok := it["content"].([]any); ok {
			for j, p := range parts {
				pm := p.(map[string]any)
				holds(t, what+".content["+strconv.Itoa(j)+"]", pm, map[string]any{
					"input_text": &responses.ResponseInputTextParam{}, "input_image": &responses.ResponseInputImageParam{},
					"input_file": &responses.ResponseInputFileParam{}, "output_text": &responses.ResponseOutputTextParam{},
					"refusal": &responses.ResponseOutputRefusalParam{},
				}[typeOf(pm)], nil)
			}
			envelope := map[string]any{}
			for k, v := range it {
				envelope[k] = v
			}
			envelope["content"] = ""
			if _, hasID := it["id"]; hasID {
				var out responses.ResponseOutputMessageParam
				raw, _ := json.Marshal(envelope)
				if err := json.Unmarshal(raw, &out); err != nil || out.ID != it["id"] {
					t.Errorf("%s: the SDK cannot read the message's envelope: %v", what, err)
				}
				return
			}
			holds(t, what, envelope, &responses.EasyInputMessageParam{}, nil)
			return
		}
		holds(t, what, it, &responses.EasyInputMessageParam{}, nil)
		return
	}
	if typ == "function_call_output" {
		if _, isText := it["output"].(string); !isText {
			parts, _ := it["output"].([]any)
			for j, p := range parts {
				pm := p.(map[string]any)
				holds(t, what+".output["+strconv.Itoa(j)+"]", pm, map[string]any{
					"input_text": &responses.ResponseInputTextParam{}, "input_image": &responses.ResponseInputImageParam{}, "input_file": &responses.ResponseInputFileParam{},
				}[typeOf(pm)], nil)
			}
			it = copyWithout(it, "output")
			it["output"] = ""
		}
	}
	holds(t, what, it, map[string]any{
		"function_call":        &responses.ResponseFunctionToolCallParam{},
		"function_call_output": &responses.ResponseInputItemFunctionCallOutputParam{},
		"reasoning":            &responses.ResponseReasoningItemParam{},
		"item_reference":       &responses.ResponseInputItemItemReferenceParam{},
		"computer_call":        &responses.ResponseComputerToolCallParam{},
		"computer_call_output": &responses.ResponseInputItemComputerCallOutputParam{},
		"web_search_call":      &responses.ResponseFunctionWebSearchParam{},
		"file_search_call":     &responses.ResponseFileSearchToolCallParam{},
		"compaction":           &responses.ResponseCompactionItemParam{},
		"compaction_trigger":   &responses.ResponseInputItemCompactionTriggerParam{},
	}[typ], nil)
}

func copyWithout(m map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func responsesTool(t testing.TB, i int, tl map[string]any) {
	t.Helper()
	what := "tools[" + strconv.Itoa(i) + "]"
	typ := typeOf(tl)
	if f, ok := tl["filters"].(map[string]any); ok && typ == "file_search" {
		filter(t, what+".filters", f)
		tl = copyWithout(tl, "filters")
	}
	if _, ok := tl["domains"].([]any); ok && strings.HasPrefix(typ, "web_search_preview") {
		// The spec gives web_search_preview a domains list; the SDK's
		// type has no member for it.
		tl = copyWithout(tl, "domains")
	}
	holds(t, what, tl, map[string]any{
		"function": &responses.FunctionToolParam{}, "file_search": &responses.FileSearchToolParam{},
		"computer_use_preview": &responses.ComputerUsePreviewToolParam{}, "web_search": &responses.WebSearchToolParam{},
		"web_search_preview": &responses.WebSearchPreviewToolParam{}, "web_search_preview_2025_03_11": &responses.WebSearchPreviewToolParam{},
		"custom": &responses.CustomToolParam{}, "namespace": &responses.NamespaceToolParam{},
	}[typ], nil)
}

func filter(t testing.TB, what string, f map[string]any) {
	t.Helper()
	if subs, ok := f["filters"].([]any); ok {
		for j, s := range subs {
			filter(t, what+".filters["+strconv.Itoa(j)+"]", s.(map[string]any))
		}
		holds(t, what, copyWithout(f, "filters"), &shared.CompoundFilterParam{}, nil)
		return
	}
	holds(t, what, f, &shared.ComparisonFilterParam{}, nil)
}

// ResponsesReply checks that the SDK reads a whole response object, that
// every output item is of a type it knows, and that the output converts
// for the next turn.
func ResponsesReply(t testing.TB, body []byte) responses.Response {
	t.Helper()
	var r responses.Response
	if err := r.UnmarshalJSON(body); err != nil {
		t.Fatalf("the SDK cannot read the reply: %v", err)
	}
	if r.ID == "" || r.Object != "response" || r.Status == "" {
		t.Errorf("reply envelope = %q %q %q", r.ID, r.Object, r.Status)
	}
	for i, it := range r.Output {
		if it.AsAny() == nil {
			t.Errorf("output[%d] has a type the SDK does not know: %q", i, it.Type)
		}
	}
	return r
}

// ResponsesStream reads a stream through the SDK's stream reader, checks
// every event's type against its event line and its sequence numbers, and
// returns the response the SDK's ResponseAccumulator rebuilds from it.
func ResponsesStream(t testing.TB, stream []byte) *responses.Response {
	t.Helper()
	res := openaiStream(stream, "/v1/responses")
	defer res.Body.Close()
	s := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(res), nil)
	var acc responses.ResponseAccumulator
	seq := int64(0)
	for s.Next() {
		ev := s.Current()
		if ev.AsAny() == nil {
			t.Errorf("event %q is of a type the SDK does not know", ev.Type)
		}
		if ev.SequenceNumber != seq {
			t.Errorf("event %q has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		var se responses.ResponsesServerEventUnion
		if err := json.Unmarshal([]byte(ev.RawJSON()), &se); err != nil {
			t.Fatalf("event %q: %v", ev.Type, err)
		}
		if err := acc.AddEvent(se); err != nil {
			t.Fatalf("the SDK's accumulator rejected %q: %v", ev.Type, err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("the SDK's stream reader failed: %v", err)
	}
	r, err := acc.ReconstructedResponse()
	if err != nil {
		t.Fatalf("the SDK's accumulator built no response: %v", err)
	}
	return r
}

// ResponsesStreamError reads a stream that ends in response.failed or an
// error event and requires the message in it.
func ResponsesStreamError(t testing.TB, stream []byte, message string) {
	t.Helper()
	res := openaiStream(stream, "/v1/responses")
	defer res.Body.Close()
	s := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(res), nil)
	var last responses.ResponseStreamEventUnion
	for s.Next() {
		last = s.Current()
	}
	if err := s.Err(); err != nil {
		t.Fatalf("the SDK's stream reader failed: %v", err)
	}
	switch last.Type {
	case "response.failed":
		if e := last.AsResponseFailed().Response.Error; e.Message != message || e.Code == "" {
			t.Errorf("response.failed error = %q %q, want the message %q", e.Code, e.Message, message)
		}
	case "error":
		if e := last.AsError(); e.Message != message {
			t.Errorf("error event message = %q, want %q", e.Message, message)
		}
	default:
		t.Errorf("the stream ended with %q, want response.failed or error", last.Type)
	}
}

// SameResponse requires a streamed response rebuilt by the SDK to agree
// with the whole reply of the same response.
func SameResponse(t testing.TB, want responses.Response, got *responses.Response) {
	t.Helper()
	if want.ID != got.ID || want.Status != got.Status || want.Model != got.Model {
		t.Errorf("streamed envelope = %q %q %q, whole = %q %q %q", got.ID, got.Status, got.Model, want.ID, want.Status, want.Model)
	}
	if want.Usage.InputTokens != got.Usage.InputTokens || want.Usage.OutputTokens != got.Usage.OutputTokens ||
		want.Usage.InputTokensDetails.CachedTokens != got.Usage.InputTokensDetails.CachedTokens {
		t.Errorf("streamed usage = %+v, whole = %+v", got.Usage, want.Usage)
	}
	if want.OutputText() != got.OutputText() {
		t.Errorf("streamed text = %q, whole = %q", got.OutputText(), want.OutputText())
	}
	if len(want.Output) != len(got.Output) {
		t.Fatalf("streamed %d output items, whole reply has %d", len(got.Output), len(want.Output))
	}
	for i := range want.Output {
		w, g := want.Output[i], got.Output[i]
		if w.Type != g.Type || w.CallID != g.CallID || w.Name != g.Name || w.EncryptedContent != g.EncryptedContent {
			t.Errorf("item %d: streamed %q %q %q, whole %q %q %q", i, g.Type, g.CallID, g.Name, w.Type, w.CallID, w.Name)
		}
		if w.Type == "function_call" {
			if diff, err := golden.DiffJSON([]byte(orEmpty(w.Arguments.OfString)), []byte(orEmpty(g.Arguments.OfString))); err != nil || diff != "" {
				t.Errorf("item %d arguments: %s %v", i, diff, err)
			}
		}
		if len(w.Summary) != len(g.Summary) {
			t.Errorf("item %d: streamed %d summaries, whole %d", i, len(g.Summary), len(w.Summary))
		}
	}
}
