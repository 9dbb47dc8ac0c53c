package server_test

import (
	"context"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"google.golang.org/genai"
)

// A messages-dialect client streaming from an upstream that reports usage
// only at the end (chat completions, responses) reads an estimate of its
// input tokens in message_start, where libraries read it, and the
// upstream's own figure in message_delta (issue 18, item 1; guide §8 items 3 and 18).
func TestMessageStartEstimatesInputTokens(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, up := range []string{"chat_completions", "responses"} {
		c := anthropic.NewClient(aoption.WithBaseURL(g.url), aoption.WithAPIKey(clientKey), aoption.WithMaxRetries(0))
		s := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{},
			aoption.WithRequestBody("application/json", withModel(t, fixture(t, "text", "messages", "request.json"), "via-"+up, true)))
		var start, delta int64 = -1, -1
		for s.Next() {
			switch ev := s.Current().AsAny().(type) {
			case anthropic.MessageStartEvent:
				start = ev.Message.Usage.InputTokens
			case anthropic.MessageDeltaEvent:
				delta = ev.Usage.InputTokens
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("%s: %v", up, err)
		}
		if start <= 0 {
			t.Errorf("%s upstream: message_start input_tokens %d, want an estimate above 0", up, start)
		}
		if delta != 12 {
			t.Errorf("%s upstream: message_delta input_tokens %d, want the upstream's 12", up, delta)
		}
	}
}

// A content-generation client that reads usage only from chunks whose
// candidate has content, as LangChain does, reads the upstream's whole
// usage whatever the upstream's dialect: the last chunk carries content
// beside its finish reason, as the service's does (issue 18, item 2; guide §8 item 18).
// Chunks before it carry the usage known by then.
func TestContentGenerationStreamUsageOnContent(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, up := range []string{"messages", "generate_content", "responses", "chat_completions"} {
		c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
			APIKey: clientKey, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: g.url},
		})
		if err != nil {
			t.Fatal(err)
		}
		var (
			last          *genai.GenerateContentResponseUsageMetadata
			finishSeen    bool
			chunks, usage int
		)
		for ch, err := range c.Models.GenerateContentStream(context.Background(), "via-"+up, genai.Text("Hello"), nil) {
			if err != nil {
				t.Fatalf("%s: %v", up, err)
			}
			chunks++
			if ch.UsageMetadata != nil {
				usage++
			}
			for _, cand := range ch.Candidates {
				if cand.Content == nil || len(cand.Content.Parts) == 0 {
					continue // as LangChain skips it
				}
				finishSeen = finishSeen || cand.FinishReason != ""
				if ch.UsageMetadata != nil {
					last = ch.UsageMetadata
				}
			}
		}
		if !finishSeen || last == nil || last.PromptTokenCount != 12 || last.CandidatesTokenCount != 5 || last.TotalTokenCount != 17 {
			t.Errorf("%s upstream: read from chunks with content: finish %v, usage %+v; want the upstream's 12 + 5 = 17", up, finishSeen, last)
		}
		if up == "messages" || up == "generate_content" {
			// Usage known from the start goes on every chunk.
			if usage != chunks {
				t.Errorf("%s upstream: usage on %d of %d chunks, want every one", up, usage, chunks)
			}
		}
	}
}
