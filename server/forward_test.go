package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// sentBody records the body of each request an SDK sends.
type sentBody struct{ bodies [][]byte }

func (s *sentBody) record(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	s.bodies = append(s.bodies, b)
}

// TestSameDialectForward: a request of the upstream's own dialect reaches
// it as the official SDK wrote it, byte for byte but for the model name;
// one that needs rewriting (a chat stream that did not ask for usage,
// which Parley asks for) is built again from the canonical form.
func TestSameDialectForward(t *testing.T) {
	g := startGateway(t, gwExtra{})
	ctx := context.Background()

	t.Run("messages", func(t *testing.T) {
		var sent sentBody
		c := anthropic.NewClient(aoption.WithBaseURL(g.url), aoption.WithAPIKey(clientKey), aoption.WithMaxRetries(0),
			aoption.WithMiddleware(func(r *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
				sent.record(r)
				return next(r)
			}))
		fake := g.fakes["messages"]
		fake.set("text", nil)
		msg, err := c.Messages.New(ctx, anthropic.MessageNewParams{
			Model: "via-messages", MaxTokens: 256,
			System:   []anthropic.TextBlockParam{{Text: "Be brief.", CacheControl: anthropic.NewCacheControlEphemeralParam()}},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
			Metadata: anthropic.MetadataParam{UserID: anthropic.String("u-1")},
		})
		if err != nil || len(msg.Content) == 0 {
			t.Fatalf("reply %v, err %v", msg, err)
		}
		got := fake.requests()
		if len(got) != 1 || len(sent.bodies) != 1 {
			t.Fatalf("%d upstream requests, %d sent", len(got), len(sent.bodies))
		}
		want := bytes.Replace(sent.bodies[0], []byte(`"model":"via-messages"`), []byte(`"model":"`+upstreamModel["messages"]+`"`), 1)
		if !bytes.Equal(got[0].Body, want) {
			t.Errorf("the upstream got\n%s\nnot the client's body with the model swapped\n%s", got[0].Body, want)
		}
	})

	chat := func(t *testing.T, usage bool) (sent, got []byte) {
		var s sentBody
		c := openai.NewClient(ooption.WithBaseURL(g.url+"/v1"), ooption.WithAPIKey(clientKey), ooption.WithMaxRetries(0),
			ooption.WithMiddleware(func(r *http.Request, next ooption.MiddlewareNext) (*http.Response, error) {
				s.record(r)
				return next(r)
			}))
		fake := g.fakes["chat_completions"]
		fake.set("text", nil)
		p := openai.ChatCompletionNewParams{
			Model:    "via-chat_completions",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Say hello.")},
		}
		if usage {
			p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		}
		st := c.Chat.Completions.NewStreaming(ctx, p)
		var acc openai.ChatCompletionAccumulator
		for st.Next() {
			acc.AddChunk(st.Current())
		}
		if err := st.Err(); err != nil || len(acc.Choices) == 0 {
			t.Fatalf("stream err %v, %d choices", err, len(acc.Choices))
		}
		reqs := fake.requests()
		if len(reqs) != 1 || len(s.bodies) != 1 {
			t.Fatalf("%d upstream requests, %d sent", len(reqs), len(s.bodies))
		}
		return s.bodies[0], reqs[0].Body
	}
	swap := func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"model":"via-chat_completions"`), []byte(`"model":"`+upstreamModel["chat_completions"]+`"`), 1)
	}
	t.Run("chat stream with usage", func(t *testing.T) {
		sent, got := chat(t, true)
		if !bytes.Equal(got, swap(sent)) {
			t.Errorf("the upstream got\n%s\nnot the client's body with the model swapped\n%s", got, swap(sent))
		}
	})
	t.Run("chat stream without usage", func(t *testing.T) {
		sent, got := chat(t, false)
		if bytes.Equal(got, swap(sent)) || !bytes.Contains(got, []byte(`"include_usage":true`)) {
			t.Errorf("a stream that did not ask for usage went on as it came:\n%s", got)
		}
	})
}
