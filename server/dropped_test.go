package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDroppedSettingsAreNamed: what a client asked for that the serving
// upstream's dialect cannot carry is named in X-Parley-Dropped, never
// lost without a word: canonical settings the dialect has no field for,
// and members of the client's dialect that have no canonical field at all
// (the messages style's automatic cache_control and context editing, the
// responses style's server-side compaction). Toward an upstream of the
// client's own dialect nothing is dropped.
func TestDroppedSettingsAreNamed(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, d := range dialectList {
		g.fakes[d.name].set("text", nil)
	}
	for _, tc := range []struct {
		name, path, body string
		want             string // the header, "" for none
	}{
		{"messages to messages", "/v1/messages",
			`{"model":"via-messages","max_tokens":64,"cache_control":{"type":"ephemeral"},"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"messages":[{"role":"user","content":"Hi"}]}`, ""},
		{"messages to chat", "/v1/messages",
			`{"model":"via-chat_completions","max_tokens":64,"cache_control":{"type":"ephemeral"},"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"messages":[{"role":"user","content":"Hi"}]}`, "cache_control, context_management"},
		{"responses to messages", "/v1/responses",
			`{"model":"via-messages","input":"Hi","store":false,"context_management":[{"type":"compaction","compact_threshold":200000}]}`, "context_management"},
		{"chat to messages", "/v1/chat/completions",
			`{"model":"via-messages","seed":7,"messages":[{"role":"user","content":"Hi"}]}`, "generation.seed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, g.url+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+clientKey)
			req.Header.Set("x-api-key", clientKey)
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("X-Parley-Dropped"); got != tc.want {
				t.Errorf("X-Parley-Dropped: %q, want %q", got, tc.want)
			}
		})
	}
}
