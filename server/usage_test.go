package server_test

import (
	"context"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
)

// A messages-dialect client streaming from an upstream that reports usage
// only at the end (chat completions, responses) reads an estimate of its
// input tokens in message_start, where libraries read it, and the
// upstream's own figure in message_delta (issue 18, item 1).
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
