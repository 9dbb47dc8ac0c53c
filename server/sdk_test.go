package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"
)

// sdkResult is what an official SDK made of a reply: an answer, or an
// error with the status the SDK saw.
type sdkResult struct {
	answer answer
	err    error
	status int
}

// sdkCall sends a dialect's request body through that dialect's official
// SDK, whole or streamed, to a model of the gateway, and states what the
// SDK read (through its own types and stream accumulator).
type sdkCall func(t testing.TB, gw, key, model string, body []byte, stream bool) sdkResult

var sdks = map[string]sdkCall{
	"messages":         messagesSDK,
	"generate_content": genaiSDK,
	"responses":        responsesSDK,
	"chat_completions": chatSDK,
}

// withModel sets the model (and stream) of a JSON request body.
func withModel(t testing.TB, body []byte, model string, stream bool) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["model"] = model
	if stream {
		m["stream"] = true
	} else {
		delete(m, "stream")
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func messagesSDK(t testing.TB, gw, key, model string, body []byte, stream bool) sdkResult {
	c := anthropic.NewClient(aoption.WithBaseURL(gw), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
	opt := aoption.WithRequestBody("application/json", withModel(t, body, model, stream))
	var msg *anthropic.Message
	if stream {
		s := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{}, opt)
		msg = &anthropic.Message{}
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				t.Fatalf("the SDK's accumulator rejected an event: %v", err)
			}
		}
		if err := s.Err(); err != nil {
			return errorResult(err)
		}
	} else {
		var err error
		if msg, err = c.Messages.New(context.Background(), anthropic.MessageNewParams{}, opt); err != nil {
			return errorResult(err)
		}
	}
	var a answer
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			a.Text += b.Text
		case "tool_use":
			a.Calls = append(a.Calls, call{b.Name, parseArgs(t, string(b.Input))})
		case "thinking":
			a.Reasoning = a.Reasoning || b.Thinking != ""
		}
	}
	a.Finish = map[string]string{"end_turn": "stop", "tool_use": "tool", "max_tokens": "length", "stop_sequence": "stop"}[string(msg.StopReason)]
	u := msg.Usage
	a.In, a.Out = u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens, u.OutputTokens
	return sdkResult{answer: a}
}

func openaiClient(gw, key string) openai.Client {
	return openai.NewClient(ooption.WithBaseURL(gw+"/v1"), ooption.WithAPIKey(key), ooption.WithMaxRetries(0))
}

func chatSDK(t testing.TB, gw, key, model string, body []byte, stream bool) sdkResult {
	c := openaiClient(gw, key)
	body = withModel(t, body, model, stream)
	if stream {
		// Usage in a chat stream comes only to clients that ask for it.
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		m["stream_options"] = map[string]any{"include_usage": true}
		body, _ = json.Marshal(m)
	}
	opt := ooption.WithRequestBody("application/json", body)
	var cc *openai.ChatCompletion
	if stream {
		s := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{}, opt)
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			if !acc.AddChunk(s.Current()) {
				t.Fatalf("the SDK's accumulator rejected a chunk: %s", s.Current().RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			return errorResult(err)
		}
		cc = &acc.ChatCompletion
	} else {
		var err error
		if cc, err = c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{}, opt); err != nil {
			return errorResult(err)
		}
	}
	var a answer
	if len(cc.Choices) == 0 {
		t.Fatalf("no choices in %s", cc.RawJSON())
	}
	ch := cc.Choices[0]
	a.Text = ch.Message.Content
	for _, tc := range ch.Message.ToolCalls {
		a.Calls = append(a.Calls, call{tc.Function.Name, parseArgs(t, tc.Function.Arguments)})
	}
	a.Finish = map[string]string{"stop": "stop", "tool_calls": "tool", "length": "length", "function_call": "tool"}[ch.FinishReason]
	a.In, a.Out = cc.Usage.PromptTokens, cc.Usage.CompletionTokens
	_, a.Reasoning = ch.Message.JSON.ExtraFields["reasoning_content"]
	return sdkResult{answer: a}
}

func responsesSDK(t testing.TB, gw, key, model string, body []byte, stream bool) sdkResult {
	c := openaiClient(gw, key)
	opt := ooption.WithRequestBody("application/json", withModel(t, body, model, stream))
	var r *responses.Response
	if stream {
		s := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{}, opt)
		var acc responses.ResponseAccumulator
		for s.Next() {
			var se responses.ResponsesServerEventUnion
			if err := json.Unmarshal([]byte(s.Current().RawJSON()), &se); err != nil {
				t.Fatal(err)
			}
			if err := acc.AddEvent(se); err != nil {
				t.Fatalf("the SDK's accumulator rejected %q: %v", s.Current().Type, err)
			}
		}
		if err := s.Err(); err != nil {
			return errorResult(err)
		}
		var err error
		if r, err = acc.ReconstructedResponse(); err != nil {
			t.Fatalf("the SDK's accumulator built no response: %v", err)
		}
	} else {
		var err error
		if r, err = c.Responses.New(context.Background(), responses.ResponseNewParams{}, opt); err != nil {
			return errorResult(err)
		}
	}
	var a answer
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			for _, p := range item.Content {
				a.Text += p.Text
			}
		case "function_call":
			a.Calls = append(a.Calls, call{item.Name, parseArgs(t, item.Arguments.OfString)})
		case "reasoning":
			for _, s := range item.Summary {
				a.Reasoning = a.Reasoning || s.Text != ""
			}
			for _, c := range item.Content {
				a.Reasoning = a.Reasoning || c.Text != ""
			}
		}
	}
	switch {
	case r.Status == "incomplete":
		a.Finish = "length"
	case len(a.Calls) > 0:
		a.Finish = "tool"
	default:
		a.Finish = "stop"
	}
	a.In, a.Out = r.Usage.InputTokens, r.Usage.OutputTokens
	return sdkResult{answer: a}
}

// genaiRequest is a content-generation request body read into the SDK's
// own types.
type genaiRequest struct {
	Contents          []*genai.Content        `json:"contents"`
	SystemInstruction *genai.Content          `json:"systemInstruction"`
	Tools             []*genai.Tool           `json:"tools"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig"`
	SafetySettings    []*genai.SafetySetting  `json:"safetySettings"`
}

func genaiSDK(t testing.TB, gw, key, model string, body []byte, stream bool) sdkResult {
	var req genaiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	cfg := &genai.GenerateContentConfig{SystemInstruction: req.SystemInstruction, Tools: req.Tools, ToolConfig: req.ToolConfig, SafetySettings: req.SafetySettings}
	if g := req.GenerationConfig; g != nil {
		cfg.Temperature, cfg.TopP, cfg.MaxOutputTokens = g.Temperature, g.TopP, g.MaxOutputTokens
		cfg.ResponseMIMEType, cfg.ResponseSchema, cfg.ResponseJsonSchema = g.ResponseMIMEType, g.ResponseSchema, g.ResponseJsonSchema
		cfg.ThinkingConfig, cfg.StopSequences = g.ThinkingConfig, g.StopSequences
	}
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: key, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: gw},
	})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []*genai.GenerateContentResponse
	if stream {
		for ch, err := range c.Models.GenerateContentStream(context.Background(), model, req.Contents, cfg) {
			if err != nil {
				return errorResult(err)
			}
			chunks = append(chunks, ch)
		}
	} else {
		r, err := c.Models.GenerateContent(context.Background(), model, req.Contents, cfg)
		if err != nil {
			return errorResult(err)
		}
		chunks = append(chunks, r)
	}
	var a answer
	var finish genai.FinishReason
	for _, ch := range chunks {
		for _, cand := range ch.Candidates {
			if cand.FinishReason != "" {
				finish = cand.FinishReason
			}
			if cand.Content == nil {
				continue
			}
			for _, p := range cand.Content.Parts {
				switch {
				case p.Thought:
					a.Reasoning = a.Reasoning || p.Text != ""
				case p.FunctionCall != nil:
					a.Calls = append(a.Calls, call{p.FunctionCall.Name, p.FunctionCall.Args})
				default:
					a.Text += p.Text
				}
			}
		}
		if u := ch.UsageMetadata; u != nil {
			a.In, a.Out = int64(u.PromptTokenCount), int64(u.CandidatesTokenCount)+int64(u.ThoughtsTokenCount)
		}
	}
	switch {
	case finish == genai.FinishReasonMaxTokens:
		a.Finish = "length"
	case len(a.Calls) > 0:
		a.Finish = "tool"
	default:
		a.Finish = "stop"
	}
	for i := range a.Calls {
		if a.Calls[i].Args == nil {
			a.Calls[i].Args = map[string]any{}
		}
	}
	return sdkResult{answer: a}
}

// errorResult keeps the status each SDK's error type reports.
func errorResult(err error) sdkResult {
	var (
		ae *anthropic.Error
		oe *openai.Error
		ge genai.APIError
		gp *genai.APIError
	)
	switch {
	case errors.As(err, &ae):
		return sdkResult{err: err, status: ae.StatusCode}
	case errors.As(err, &oe):
		return sdkResult{err: err, status: oe.StatusCode}
	case errors.As(err, &ge):
		return sdkResult{err: err, status: ge.Code}
	case errors.As(err, &gp):
		return sdkResult{err: err, status: gp.Code}
	}
	return sdkResult{err: err, status: http.StatusTeapot}
}
