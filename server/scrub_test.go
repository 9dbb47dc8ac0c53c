package server_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate/songgen"
)

// leakyErrors are each upstream dialect's error body and in-stream error
// event, saying what is in %s as services do when they echo a key.
var leakyErrors = map[string]struct {
	status      int
	body, event string
}{
	"messages": {401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: %s"}}`,
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"key %s is overloaded\"}}\n\n"},
	"chat_completions": {401, `{"error":{"message":"Incorrect API key provided: %s. You can find your API key at https://platform.example/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		"data: {\"error\":{\"message\":\"key %s failed mid-stream\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n"},
	"responses": {401, `{"error":{"message":"Incorrect API key provided: %s.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		"event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"key %s failed mid-stream\",\"param\":null,\"sequence_number\":9}\n\n"},
	"generate_content": {400, `{"error":{"code":400,"message":"API key not valid: %s. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`,
		"data: {\"error\":{\"code\":500,\"message\":\"key %s failed mid-stream\",\"status\":\"INTERNAL\"}}\n\n"},
}

var clientPaths = map[string]string{
	"messages":         "/v1/messages",
	"chat_completions": "/v1/chat/completions",
	"responses":        "/v1/responses",
	"generate_content": "/v1beta/models/MODEL:generateContent",
}

// An upstream that echoes its own key, or the client's, in an error (whole
// or mid-stream) reaches the client, in every dialect and through the
// same-dialect fast path, and the log, without it or a piece of it; the
// rest of the error is intact (guide §8 item 20).
func TestUpstreamErrorsAreScrubbed(t *testing.T) {
	var logs bytes.Buffer
	g := startGateway(t, gwExtra{logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for up, leak := range leakyErrors {
		secret := upstreamKey(up)
		for _, echo := range []string{secret, secret[:12] + "...", clientKey} {
			for client, path := range clientPaths {
				for _, stream := range []bool{false, true} {
					name := fmt.Sprintf("%s upstream, %s client, stream %v, echo %q", up, client, stream, echo)
					g.fakes[up].set("text", func(w http.ResponseWriter, r *http.Request, n int) {
						if !stream {
							w.Header().Set("Content-Type", "application/json")
							w.WriteHeader(leak.status)
							fmt.Fprintf(w, leak.body, echo)
							return
						}
						all := strings.ReplaceAll(string(fixture(t, "text", up, "stream.sse")), "\r\n", "\n")
						frames := strings.SplitAfterN(all, "\n\n", 3)
						w.Header().Set("Content-Type", "text/event-stream")
						_, _ = io.WriteString(w, frames[0])
						if len(frames) > 2 {
							_, _ = io.WriteString(w, frames[1])
						}
						fmt.Fprintf(w, leak.event, echo)
					})
					body := withModel(t, fixture(t, "text", client, "request.json"), "via-"+up, stream)
					p := strings.Replace(path, "MODEL", "via-"+up, 1)
					if stream && client == "generate_content" {
						p = strings.Replace(p, ":generateContent", ":streamGenerateContent?alt=sse", 1)
					}
					req, _ := http.NewRequest(http.MethodPost, g.url+p, bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+clientKey)
					req.Header.Set("x-api-key", clientKey)
					req.Header.Set("x-goog-api-key", clientKey)
					req.Header.Set("anthropic-version", "2023-06-01")
					req.Header.Set("Content-Type", "application/json")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					out, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					text := string(out)
					if strings.Contains(text, echo[:12]) {
						t.Errorf("%s: the client got the key:\n%s", name, text)
					}
					if !strings.Contains(text, "[redacted]") {
						t.Errorf("%s: the error lost its text:\n%s", name, text)
					}
				}
			}
		}
	}
	for _, k := range []string{clientKey[:12], upstreamKey("messages")[:12], upstreamKey("generate_content")[:12]} {
		if strings.Contains(logs.String(), k) {
			t.Errorf("the log holds a key:\n%s", logs.String())
		}
	}
}

// A music service that echoes its key in a refused submit or in a task's
// fail reason reaches the client without it (guide §8 item 20).
func TestMusicErrorsAreScrubbed(t *testing.T) {
	g := startMusic(t, musicOpts{})
	r := g.call(t, http.MethodPost, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "LEAKSUBMIT now"}`)
	if r.Status == http.StatusOK || strings.Contains(r.Message, musicUpstreamKey[:12]) || !strings.Contains(r.Message, "[redacted]") {
		t.Errorf("a refused submit: %d %s %q", r.Status, r.Code, r.Message)
	}
	id := g.submit(t, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "LEAKFAIL soon"}`)
	w, _ := g.await(t, aliceKey, id)
	if w.Status != songgen.StatusFail || strings.Contains(w.FailReason, musicUpstreamKey[:12]) || !strings.Contains(w.FailReason, "[redacted]") {
		t.Errorf("a failed task: %s %q", w.Status, w.FailReason)
	}
}
