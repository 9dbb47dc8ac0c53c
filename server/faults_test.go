package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
)

// messagesStream streams the text scenario's request through the messages
// SDK and returns the text read and the stream's error.
func messagesStream(ctx context.Context, t *testing.T, g *gateway, model string) (string, error) {
	c := anthropic.NewClient(aoption.WithBaseURL(g.url), aoption.WithAPIKey(clientKey), aoption.WithMaxRetries(0))
	s := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{},
		aoption.WithRequestBody("application/json", withModel(t, fixture(t, "text", "messages", "request.json"), model, true)))
	var msg anthropic.Message
	for s.Next() {
		if err := msg.Accumulate(s.Current()); err != nil {
			return "", err
		}
	}
	var text string
	for _, b := range msg.Content {
		text += b.Text
	}
	return text, s.Err()
}

// TestFaults puts Parley in front of an upstream that misbehaves: retries
// and fallback, errors before the first byte and mid-stream, a client that
// goes away, and timeouts. Only idle time bounds a stream: one that stalls
// past the upstream's idle timeout ends with an error, while one that
// keeps sending, and lasts twice that timeout in all, is read whole
// (guide §8 item 8).
func TestFaults(t *testing.T) {
	// The fault routes point at the chat-completions fake; patch their
	// base URL in after the fakes exist.
	g := faultGatewayWithFake(t)
	fake := g.fakes["chat_completions"]

	t.Run("429 then success is retried", func(t *testing.T) {
		fake.set("text", func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, `{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, http.StatusTooManyRequests)
				return
			}
			writeStream(w, fixture(t, "text", "chat_completions", "stream.sse"), nil)
		})
		text, err := messagesStream(context.Background(), t, g, "retrying")
		if err != nil || text == "" {
			t.Fatalf("text %q, err %v", text, err)
		}
		if n := len(fake.requests()); n != 2 {
			t.Errorf("the upstream got %d requests, want 2", n)
		}
	})

	t.Run("an error event before anything else is retried", func(t *testing.T) {
		fake.set("text", func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				writeStream(w, []byte("data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n"), nil)
				return
			}
			writeStream(w, fixture(t, "text", "chat_completions", "stream.sse"), nil)
		})
		text, err := messagesStream(context.Background(), t, g, "retrying")
		if err != nil || text == "" {
			t.Fatalf("text %q, err %v", text, err)
		}
		if n := len(fake.requests()); n != 2 {
			t.Errorf("the upstream got %d requests, want 2", n)
		}
	})

	t.Run("an error event before anything else is the reply's status", func(t *testing.T) {
		fake.set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeStream(w, []byte("data: {\"error\":{\"message\":\"slow down\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}\n\n"), nil)
		})
		_, err := messagesStream(context.Background(), t, g, "plain")
		var ae *anthropic.Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusTooManyRequests || !strings.Contains(ae.RawJSON(), `"type":"rate_limit_error"`) || !strings.Contains(ae.RawJSON(), "slow down") {
			t.Fatalf("err %v; want a 429 rate_limit_error saying slow down", err)
		}
		res := sdks["chat_completions"](t, g.url, clientKey, "plain", fixture(t, "text", "chat_completions", "request.json"), true)
		var oe *openai.Error
		if res.status != http.StatusTooManyRequests || !errors.As(res.err, &oe) || oe.Code != "rate_limit_exceeded" {
			t.Fatalf("status %d, err %v; want 429 rate_limit_exceeded", res.status, res.err)
		}
	})

	t.Run("first route down falls back", func(t *testing.T) {
		fake.set("text", nil)
		g.d.Rand = func(int) int { return 0 } // draw the dead route first
		defer func() { g.d.Rand = nil }()
		res := sdks["responses"](t, g.url, clientKey, "fallback", fixture(t, "text", "responses", "request.json"), false)
		if res.err != nil || res.answer.Text == "" {
			t.Fatalf("answer %+v, err %v", res.answer, res.err)
		}
		if n := len(fake.requests()); n != 1 {
			t.Errorf("the fallback upstream got %d requests, want 1", n)
		}
		metrics := get(t, g.url+"/metrics")
		if !strings.Contains(metrics, `parley_upstream_errors_total{code="CODE_UNAVAILABLE",upstream="dead"} 2`) {
			t.Errorf("metrics lack the dead upstream's two failures:\n%s", grepLines(metrics, "parley_upstream_errors"))
		}
	})

	t.Run("upstream error keeps Retry-After", func(t *testing.T) {
		fake.set("errors", nil)
		resp := post(t, g.url+"/v1/messages", withModel(t, fixture(t, "text", "messages", "request.json"), "plain", false))
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "7" {
			t.Errorf("status %d, Retry-After %q; want 429 and 7", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	})

	t.Run("no reply headers within the header timeout", func(t *testing.T) {
		fake.set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		})
		res := sdks["chat_completions"](t, g.url, clientKey, "mute", fixture(t, "text", "chat_completions", "request.json"), false)
		var oe *openai.Error
		if res.status != http.StatusGatewayTimeout || !errors.As(res.err, &oe) || !strings.Contains(oe.Message, "did not answer in time") {
			t.Fatalf("status %d, err %v; want 504 saying the upstream did not answer in time", res.status, res.err)
		}
	})

	t.Run("reset mid-stream becomes an in-stream error", func(t *testing.T) {
		fake.set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeStream(w, fixture(t, "text", "chat_completions", "stream.sse"), func(i int) bool {
				if i < 2 {
					return true
				}
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					_ = conn.Close()
				}
				return false
			})
		})
		_, err := messagesStream(context.Background(), t, g, "plain")
		if err == nil {
			t.Fatal("the client saw a clean end of a broken stream")
		}
		if n := len(fake.requests()); n != 1 {
			t.Errorf("a stream that had begun was retried: %d requests", n)
		}
	})

	t.Run("idle past the timeout ends the stream", func(t *testing.T) {
		fake.set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeStream(w, fixture(t, "text", "chat_completions", "stream.sse"), func(i int) bool {
				if i == 2 {
					select {
					case <-time.After(5 * time.Second):
					case <-r.Context().Done():
						return false
					}
				}
				return true
			})
		})
		_, err := messagesStream(context.Background(), t, g, "slow")
		if err == nil || !strings.Contains(err.Error(), "sent nothing for 300ms") {
			t.Fatalf("err = %v, want the idle timeout", err)
		}
	})

	t.Run("slow but steady streams outlive the idle timeout", func(t *testing.T) {
		fake.set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
			writeStream(w, fixture(t, "text", "chat_completions", "stream.sse"), func(int) bool {
				time.Sleep(150 * time.Millisecond)
				return true
			})
		})
		start := time.Now()
		text, err := messagesStream(context.Background(), t, g, "slow")
		if err != nil || text == "" {
			t.Fatalf("text %q, err %v", text, err)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Logf("the stream took %v, less than one idle timeout; the check is weak", d)
		}
	})

	t.Run("client disconnect cancels the upstream", func(t *testing.T) {
		var cancelled atomic.Bool
		done := make(chan struct{})
		fake.set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
			defer close(done)
			writeStream(w, fixture(t, "text", "chat_completions", "stream.sse"), func(i int) bool {
				if i == 2 {
					select {
					case <-r.Context().Done():
						cancelled.Store(true)
					case <-time.After(10 * time.Second):
					}
					return false
				}
				return true
			})
		})
		ctx, cancel := context.WithCancel(context.Background())
		c := anthropic.NewClient(aoption.WithBaseURL(g.url), aoption.WithAPIKey(clientKey), aoption.WithMaxRetries(0))
		s := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{},
			aoption.WithRequestBody("application/json", withModel(t, fixture(t, "text", "messages", "request.json"), "plain", true)))
		if !s.Next() {
			t.Fatalf("no first event: %v", s.Err())
		}
		cancel()
		_ = s.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the upstream handler never finished")
		}
		if !cancelled.Load() {
			t.Error("the upstream did not see the cancel")
		}
	})
}

// faultGatewayWithFake adds routes for the fault tests over a
// chat-completions fake: "retrying" (two retries), "fallback" (a dead
// upstream drawn first, then the fake) and "slow" (idle timeout 300ms).
func faultGatewayWithFake(t *testing.T) *gateway {
	probe := newFake(t, "chat_completions")
	extra := gwExtra{}
	base := faultGatewayExtra()
	extra.models = base.models
	extra.upstreams = strings.ReplaceAll(base.upstreams, "FAKE", probe.srv.URL)
	g := startGateway(t, extra)
	g.fakes["chat_completions"] = probe
	return g
}

func faultGatewayExtra() gwExtra {
	return gwExtra{
		upstreams: "  - {name: dead, dialect: messages, base_url: \"http://127.0.0.1:1\", api_key: k, max_retries: 1}\n" +
			"  - {name: patient, dialect: chat_completions, base_url: \"FAKE\", api_key: up-key-chat_completions, max_retries: 2}\n" +
			"  - {name: plain, dialect: chat_completions, base_url: \"FAKE\", api_key: up-key-chat_completions, max_retries: 0}\n" +
			"  - {name: mute, dialect: chat_completions, base_url: \"FAKE\", api_key: up-key-chat_completions, max_retries: 0, header_timeout: 200ms}\n" +
			"  - {name: slow, dialect: chat_completions, base_url: \"FAKE\", api_key: up-key-chat_completions, max_retries: 0, idle_timeout: 300ms}\n",
		models: "  - {name: retrying, upstream: patient, upstream_model: gpt-4.1}\n" +
			"  - {name: fallback, routes: [{upstream: dead, weight: 5}, {upstream: patient, upstream_model: gpt-4.1, weight: 1}]}\n" +
			"  - {name: slow, upstream: slow, upstream_model: gpt-4.1}\n" +
			"  - {name: plain, upstream: plain, upstream_model: gpt-4.1}\n" +
			"  - {name: mute, upstream: mute, upstream_model: gpt-4.1}\n",
	}
}

func get(t *testing.T, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func post(t *testing.T, url string, body []byte) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func grepLines(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return fmt.Sprint(strings.Join(out, "\n"))
}
