package server_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/textlog"
)

// TestAccess checks, for every client dialect through its official SDK,
// whole and streamed: a wrong key, a missing key, a model the key may not
// use and an unknown model each get the dialect's own error status, and
// nothing reaches an upstream.
func TestAccess(t *testing.T) {
	g := startGateway(t, gwExtra{})
	cases := []struct {
		name, key, model string
		status           int
	}{
		{"wrong key", "sk-wrong-key-0000000", "via-messages", http.StatusUnauthorized},
		{"missing key", "", "via-messages", http.StatusUnauthorized},
		{"model not allowed for key", "sk-narrow-key-0001", "via-responses", http.StatusForbidden},
		{"unknown model", clientKey, "no-such-model", http.StatusNotFound},
	}
	for _, a := range dialectList {
		for _, tc := range cases {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", a.name, tc.name, stream), func(t *testing.T) {
					for _, f := range g.fakes {
						f.set("text", nil)
					}
					var res sdkResult
					if a.name == "generate_content" && tc.key == "" {
						// The SDK will not send a request without a key.
						res = rawResult(t, g.url+"/v1beta/models/via-messages:generateContent", fixture(t, "text", a.name, "request.json"), `"status":"UNAUTHENTICATED"`)
					} else {
						res = sdks[a.name](t, g.url, tc.key, tc.model, fixture(t, "text", a.name, "request.json"), stream)
					}
					if res.err == nil || res.status != tc.status {
						t.Fatalf("the SDK saw %v (status %d), want status %d", res.err, res.status, tc.status)
					}
					for name, f := range g.fakes {
						if n := len(f.requests()); n > 0 {
							t.Errorf("the %s upstream got %d requests", name, n)
						}
					}
				})
			}
		}
	}
	// The narrow key may use what its globs allow.
	res := sdks["messages"](t, g.url, "sk-narrow-key-0001", "via-messages", fixture(t, "text", "messages", "request.json"), false)
	if res.err != nil {
		t.Fatalf("the narrow key was refused a model its glob allows: %v", res.err)
	}
}

// TestBadInput checks malformed JSON (400 naming the problem) and an
// oversized body (413) in each dialect's own error shape.
func TestBadInput(t *testing.T) {
	g := startGateway(t, gwExtra{top: "limits: {max_body_bytes: 4096}\n"})
	paths := map[string]string{
		"messages": "/v1/messages", "generate_content": "/v1beta/models/via-messages:generateContent",
		"responses": "/v1/responses", "chat_completions": "/v1/chat/completions",
	}
	shapes := map[string]string{
		"messages": `"type":"error"`, "generate_content": `"status":"`, "responses": `"param":`, "chat_completions": `"param":`,
	}
	for _, a := range dialectList {
		for _, tc := range []struct {
			name, body string
			status     int
			says       string
		}{
			{"malformed JSON", `{"model": "via-messages", "messages": [`, http.StatusBadRequest, "JSON"},
			{"wrong type", `{"model": "via-messages", "messages": 7, "contents": 7, "input": 7, "max_tokens": 10}`, http.StatusBadRequest, ""},
			{"oversized body", `{"model": "via-messages", "pad": "` + strings.Repeat("x", 5000) + `"}`, http.StatusRequestEntityTooLarge, "4096"},
		} {
			t.Run(a.name+"/"+tc.name, func(t *testing.T) {
				req, _ := http.NewRequest(http.MethodPost, g.url+paths[a.name], strings.NewReader(tc.body))
				req.Header.Set("Authorization", "Bearer "+clientKey)
				req.Header.Set("x-goog-api-key", clientKey)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.says) || !strings.Contains(string(body), shapes[a.name]) {
					t.Errorf("%d %s\nwant %d, a %s error body saying %q", resp.StatusCode, body, tc.status, a.name, tc.says)
				}
				if resp.Header.Get("X-Request-Id") == "" {
					t.Error("no X-Request-Id")
				}
			})
		}
	}
}

// rawResult posts a body with no key and requires an error body in the
// expected shape.
func rawResult(t *testing.T, url string, body []byte, shape string) sdkResult {
	resp, err := http.Post(url, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), shape) {
		t.Errorf("error body %s lacks %s", b, shape)
	}
	return sdkResult{err: fmt.Errorf("%s", b), status: resp.StatusCode}
}

// lockedBuffer is a log the gateway writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAccessLine: each request leaves one line naming what an operator
// looks for (the request id the client was given, the dialects, the
// model and upstream, the status, attempts, time and tokens), whole and
// streamed; a log set above Info gets none. So with slog.TextHandler and
// with the gateway's own handler, which takes the line without a record.
func TestAccessLine(t *testing.T) {
	for name, handler := range map[string]func(io.Writer, slog.Leveler) slog.Handler{
		"slog": func(w io.Writer, l slog.Leveler) slog.Handler {
			return slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})
		},
		"textlog": func(w io.Writer, l slog.Leveler) slog.Handler { return textlog.New(w, l) },
	} {
		t.Run(name, func(t *testing.T) { testAccessLine(t, handler) })
	}
}

func testAccessLine(t *testing.T, handler func(io.Writer, slog.Leveler) slog.Handler) {
	logs := &lockedBuffer{}
	g := startGateway(t, gwExtra{logger: slog.New(handler(logs, nil))})
	g.fakes["chat_completions"].set("text", nil)
	for _, stream := range []bool{false, true} {
		body := withModel(t, fixture(t, "text", "messages", "request.json"), "via-chat_completions", stream)
		req, _ := http.NewRequest(http.MethodPost, g.url+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("x-api-key", clientKey)
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		want := regexp.MustCompile(`^time=\S+ level=INFO msg=request id=` + id +
			` dialect=messages path=/v1/messages status=200 model=via-chat_completions upstream=fake-chat_completions attempts=1 duration=\S+ input_tokens=[1-9]\d* output_tokens=[1-9]\d*$`)
		var line string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, "id="+id+" ") {
					line = strings.TrimSuffix(l, "\n")
				}
			}
			if line != "" {
				break
			}
		}
		if !want.MatchString(line) {
			t.Errorf("stream %v: access line %q, want it to match %s", stream, line, want)
		}
	}

	quiet := &lockedBuffer{}
	g = startGateway(t, gwExtra{logger: slog.New(handler(quiet, slog.LevelWarn))})
	g.fakes["chat_completions"].set("text", nil)
	if res := sdks["messages"](t, g.url, clientKey, "via-chat_completions", fixture(t, "text", "messages", "request.json"), false); res.err != nil {
		t.Fatal(res.err)
	}
	if s := quiet.String(); strings.Contains(s, "msg=request") {
		t.Errorf("a log set to warnings got an access line:\n%s", s)
	}
}
