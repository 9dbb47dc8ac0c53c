package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCountTokens calls each count-tokens endpoint over each upstream
// dialect: upstreams whose dialect has a count endpoint answer (42, from
// the fake), the chat-completions upstream cannot and Parley estimates,
// saying so in X-Parley-Estimated (guide §8 item 4).
func TestCountTokens(t *testing.T) {
	g := startGateway(t, gwExtra{})
	endpoints := []struct {
		dialect, path, body, field string
	}{
		{"messages", "/v1/messages/count_tokens", `{"model":"MODEL","messages":[{"role":"user","content":"Say hello, at some length."}]}`, "input_tokens"},
		{"generate_content", "/v1beta/models/MODEL:countTokens", `{"contents":[{"role":"user","parts":[{"text":"Say hello, at some length."}]}]}`, "totalTokens"},
		{"responses", "/v1/responses/input_tokens", `{"model":"MODEL","input":"Say hello, at some length."}`, "input_tokens"},
	}
	for _, e := range endpoints {
		for _, up := range dialectList {
			t.Run(e.dialect+"_via_"+up.name, func(t *testing.T) {
				fake := g.fakes[up.name]
				fake.set("text", nil)
				model := "via-" + up.name
				req, _ := http.NewRequest(http.MethodPost, g.url+strings.ReplaceAll(e.path, "MODEL", model), strings.NewReader(strings.ReplaceAll(e.body, "MODEL", model)))
				req.Header.Set("Authorization", "Bearer "+clientKey)
				req.Header.Set("x-goog-api-key", clientKey)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				var got map[string]any
				if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil {
					t.Fatalf("%d %s", resp.StatusCode, body)
				}
				n, _ := got[e.field].(float64)
				estimated := resp.Header.Get("X-Parley-Estimated") == "true"
				if up.name == "chat_completions" {
					if !estimated || n < 5 || n == 42 || len(fake.requests()) != 0 {
						t.Errorf("want an estimate made without the upstream: %s estimated=%v upstream requests=%d", body, estimated, len(fake.requests()))
					}
					return
				}
				if estimated || n != 42 || len(fake.requests()) != 1 || !isCountPath(fake.requests()[0].Path) {
					t.Errorf("want the upstream's count: %s estimated=%v requests=%+v", body, estimated, fake.requests())
				}
			})
		}
	}
}
