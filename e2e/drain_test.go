package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// slowChat is a chat-completions upstream that streams n words, one every
// delay, then its finish, usage and [DONE]; a whole request that says
// "quick" gets its answer at once.
func slowChat(t *testing.T, n int, delay time.Duration) (*httptest.Server, *atomic.Int32) {
	var started atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "quick") && !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"c0","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"at once"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
			return
		}
		started.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		chunk := func(s string) {
			fmt.Fprintf(w, "data: %s\n\n", s)
			fl.Flush()
		}
		for i := range n {
			chunk(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word%d "},"finish_reason":null}]}`, i))
			select {
			case <-r.Context().Done():
				return
			case <-time.After(delay):
			}
		}
		chunk(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		chunk(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`)
		chunk("[DONE]")
	}))
	t.Cleanup(srv.Close)
	return srv, &started
}

// streamCase is one client dialect's streamed request and how its stream
// ends when it ends normally.
type streamCase struct {
	dialect, path, body, end string
}

var streamCases = []streamCase{
	{"messages", "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "event: message_stop"},
	{"chat_completions", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "data: [DONE]"},
	{"responses", "/v1/responses", `{"model":"m","input":"hi","stream":true,"store":true}`, "event: response.completed"},
	{"generate_content", "/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, `"finishReason":"STOP"`},
}

// openStreams starts one stream per client dialect and returns, per
// dialect, the whole body once the stream has ended.
func openStreams(t *testing.T, r *replica) map[string]<-chan string {
	out := map[string]<-chan string{}
	for _, c := range streamCases {
		ch := make(chan string, 1)
		out[c.dialect] = ch
		req, err := http.NewRequest(http.MethodPost, r.url+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+clientKey)
		req.Header.Set("x-api-key", clientKey)
		req.Header.Set("x-goog-api-key", clientKey)
		req.Header.Set("anthropic-version", "2023-06-01")
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				ch <- "request failed: " + err.Error()
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				ch <- string(b) + "\nread failed: " + err.Error()
				return
			}
			ch <- fmt.Sprintf("status %d\n%s", resp.StatusCode, b)
		}()
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func drainConfig(upstream, grace string) string {
	return fmt.Sprintf(`keys:
  - {name: alice, key: %s}
upstreams:
  - {name: chat, dialect: chat_completions, base_url: %q, api_key: sk-chat-upstream}
models:
  - {name: m, upstream: chat}
shutdown_grace: %s
`, clientKey, upstream, grace)
}

var responseID = regexp.MustCompile(`"id":"(resp_[A-Za-z0-9_-]+)"`)

// On SIGTERM a gateway with streams open answers readiness with 503 at
// once, refuses new connections, lets every stream finish whole in every
// dialect, keeps what the streams stored, and exits 0.
func TestDrainLetsStreamsFinish(t *testing.T) {
	up, started := slowChat(t, 10, 150*time.Millisecond)
	dir := t.TempDir()
	file := writeConfig(t, drainConfig(up.URL, "30s"))
	r := start(t, file, dir)
	r.waitReady(t)

	streams := openStreams(t, r)
	waitFor(t, "every stream reached the upstream", func() bool { return started.Load() == int32(len(streamCases)) })
	// Connections opened before the signal, as a load balancer's and an
	// orchestrator's health checkers keep them (each has served a request
	// already, so the gateway has surely taken it): readiness fails while
	// draining, liveness does not.
	probes := map[string]int{"/readyz": http.StatusServiceUnavailable, "/healthz": http.StatusServiceUnavailable, "/livez": http.StatusOK}
	type probe struct {
		c net.Conn
		r *bufio.Reader
	}
	conns := map[string]probe{}
	ask := func(p probe, path string) (int, error) {
		fmt.Fprintf(p.c, "GET %s HTTP/1.1\r\nHost: parley\r\n\r\n", path)
		got, err := http.ReadResponse(p.r, nil)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, got.Body)
		_ = got.Body.Close()
		return got.StatusCode, nil
	}
	for path := range probes {
		c, err := net.Dial("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		conns[path] = probe{c, bufio.NewReader(c)}
		if status, err := ask(conns[path], path); status != http.StatusOK {
			t.Fatalf("%s before the signal: %d %v", path, status, err)
		}
	}

	signalled := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "new connections refused", func() bool {
		c, err := net.Dial("tcp", r.addr)
		if err == nil {
			_ = c.Close()
		}
		return err != nil
	})
	// Asked at once and together: the connections already open are served
	// for a second after the signal, then closed.
	var probing sync.WaitGroup
	for path, want := range probes {
		probing.Go(func() {
			status, err := ask(conns[path], path)
			if err != nil || status != want {
				t.Errorf("%s while draining (%s after the signal): %d %v, want %d", path, time.Since(signalled), status, err, want)
			}
		})
	}
	probing.Wait()

	var stored string
	for _, c := range streamCases {
		body := <-streams[c.dialect]
		if !strings.HasPrefix(body, "status 200") || !strings.Contains(body, c.end) || !strings.Contains(body, "word9") {
			t.Errorf("%s: the stream did not finish whole:\n%s", c.dialect, body)
		}
		if c.dialect == "responses" {
			if m := responseID.FindStringSubmatch(body); m != nil {
				stored = m[1]
			}
		}
	}
	if since := time.Since(signalled); since < time.Second {
		t.Errorf("the streams ended %s after the signal: sooner than the upstream sent them", since)
	}
	<-r.done
	if r.exit != nil {
		t.Errorf("parley exited with %v after draining, want status 0", r.exit)
	}
	if !strings.Contains(r.logs.String(), "drained") {
		t.Errorf("no drain in the log:\n%s", r.logs.String())
	}

	// What the streams stored while draining is there after a restart.
	if stored == "" {
		t.Fatal("the responses stream gave no response id")
	}
	again := start(t, file, dir)
	again.waitReady(t)
	if status, out := again.call(t, http.MethodGet, "/v1/responses/"+stored, ""); status != http.StatusOK || out["id"] != stored {
		t.Errorf("the response stored during the drain, after a restart: %d %v", status, out)
	}
}

// When the grace runs out first, each stream still open ends with its
// dialect's in-stream error saying the gateway is shutting down (a kind
// clients retry, never a client error), the process exits 0, and what
// was stored before is still there.
func TestDrainGraceEndsStreamsWithAnError(t *testing.T) {
	up, started := slowChat(t, 100, 100*time.Millisecond)
	dir := t.TempDir()
	file := writeConfig(t, drainConfig(up.URL, "500ms"))
	r := start(t, file, dir)
	r.waitReady(t)
	// A response stored before the signal.
	status, out := r.call(t, http.MethodPost, "/v1/responses", `{"model":"m","input":"quick","store":true}`)
	kept, _ := out["id"].(string)
	if status != http.StatusOK || kept == "" {
		t.Fatalf("a response before the signal: %d %v", status, out)
	}
	streams := openStreams(t, r)
	waitFor(t, "every stream reached the upstream", func() bool { return started.Load() == int32(len(streamCases)) })
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{
		"messages":         "overloaded_error",
		"chat_completions": "shutting down",
		"responses":        "shutting down",
		"generate_content": "UNAVAILABLE",
	}
	for _, c := range streamCases {
		body := <-streams[c.dialect]
		t.Logf("%s:\n%s", c.dialect, tail(body, 400))
		if !strings.Contains(body, "shutting down") || !strings.Contains(body, kinds[c.dialect]) || strings.Contains(body, c.end) {
			t.Errorf("%s: want the stream ended by the shutdown error (%s):\n%s", c.dialect, kinds[c.dialect], body)
		}
		for _, wrong := range []string{"invalid_request_error", "cancelled", "INVALID_ARGUMENT"} {
			if strings.Contains(body, wrong) {
				t.Errorf("%s: the shutdown is reported as %q:\n%s", c.dialect, wrong, body)
			}
		}
	}
	<-r.done
	if r.exit != nil {
		t.Errorf("parley exited with %v, want status 0", r.exit)
	}
	again := start(t, file, dir)
	again.waitReady(t)
	if status, out := again.call(t, http.MethodGet, "/v1/responses/"+kept, ""); status != http.StatusOK || out["id"] != kept {
		t.Errorf("the response stored before the signal, after a restart: %d %v", status, out)
	}
}

// A second signal ends the streams at once.
func TestDrainSecondSignal(t *testing.T) {
	up, started := slowChat(t, 100, 100*time.Millisecond)
	r := start(t, writeConfig(t, drainConfig(up.URL, "60s")), t.TempDir())
	r.waitReady(t)
	streams := openStreams(t, r)
	waitFor(t, "every stream reached the upstream", func() bool { return started.Load() == int32(len(streamCases)) })
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	at := time.Now()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	var wg sync.WaitGroup
	for _, c := range streamCases {
		wg.Go(func() { <-streams[c.dialect] })
	}
	wg.Wait()
	<-r.done
	if took := time.Since(at); took > 3*time.Second {
		t.Errorf("the process took %s to end after a second signal", took)
	}
}

// tail is the end of a body, for logs.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// Codex on a WebSocket when the gateway drains: the response in flight on
// one connection finishes whole, then the connection closes with 1001
// (going away) so that Codex reconnects to another replica; an idle
// connection closes at once; and the process waits for both before it
// exits 0. The HTTP server's shutdown forgets upgraded connections, so
// without this the response was cut when the process exited.
func TestDrainLetsWebSocketResponsesFinish(t *testing.T) {
	up, started := slowChat(t, 10, 150*time.Millisecond)
	r := start(t, writeConfig(t, drainConfig(up.URL, "30s")), t.TempDir())
	r.waitReady(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := openai.NewClient(ooption.WithBaseURL(r.url+"/v1"), ooption.WithAPIKey(clientKey), ooption.WithMaxRetries(0))
	busy, err := client.Beta.Responses.Connect(ctx, openai.BetaResponseConnectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	idle, err := client.Beta.Responses.Connect(ctx, openai.BetaResponseConnectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = idle.Close() }()
	if err := busy.SendRaw(ctx, json.RawMessage(`{"type":"response.create","model":"m","input":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the response reached the upstream", func() bool { return started.Load() == 1 })
	signalled := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The idle connection is closed at once, going away.
	if _, err := idle.RecvRaw(ctx); websocketStatus(err) != 1001 {
		t.Errorf("the idle connection ended with %v, want a close with 1001", err)
	}
	var text strings.Builder
	completed := false
	for {
		raw, err := busy.RecvRaw(ctx)
		if err != nil {
			if !completed || websocketStatus(err) != 1001 {
				t.Errorf("the busy connection ended with %v (completed: %v), want its response whole, then a close with 1001", err, completed)
			}
			break
		}
		var ev struct {
			Type, Delta string
		}
		_ = json.Unmarshal(raw, &ev)
		text.WriteString(ev.Delta)
		completed = completed || ev.Type == "response.completed"
	}
	if !strings.Contains(text.String(), "word9") {
		t.Errorf("the response in flight was cut: %q", text.String())
	}
	if since := time.Since(signalled); since < time.Second {
		t.Errorf("the response ended %s after the signal: sooner than the upstream sent it", since)
	}
	<-r.done
	if r.exit != nil || !strings.Contains(r.logs.String(), "drained") {
		t.Errorf("parley exited with %v:\n%s", r.exit, r.logs.String())
	}
}

// websocketStatus is the close code an error from a WebSocket read
// carries, or -1.
func websocketStatus(err error) int {
	return int(websocket.CloseStatus(err))
}
