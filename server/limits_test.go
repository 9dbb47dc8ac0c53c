package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A body nested far deeper than any request needs is refused in the
// caller's dialect with a message of a few hundred bytes: the field path
// is cut, not repeated at full depth.
func TestDeepBodyErrorIsShort(t *testing.T) {
	g := startGateway(t, gwExtra{})
	deep := strings.Repeat(`{"a":`, 12000) + "1" + strings.Repeat("}", 12000)
	long := strings.Repeat("k", 100000)
	for dialect, path := range map[string]string{
		"messages":         "/v1/messages",
		"chat_completions": "/v1/chat/completions",
		"responses":        "/v1/responses",
		"generate_content": "/v1beta/models/echo:generateContent",
	} {
		for name, body := range map[string]string{
			"deep":        `{"model":"echo","messages":[{"role":"user","content":"x"}],"input":"x","contents":[{"parts":[{"text":"x"}]}],"metadata":` + deep + `}`,
			"long member": `{"model":"echo","max_tokens":` + strings.Repeat("[", 20) + `{"` + long + `":1}` + strings.Repeat("]", 20) + `}`,
		} {
			req, _ := http.NewRequest(http.MethodPost, g.url+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+clientKey)
			req.Header.Set("x-api-key", clientKey)
			req.Header.Set("x-goog-api-key", clientKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || len(out) > 1024 || strings.Contains(string(out), "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk") {
				t.Errorf("%s, %s body: %d, %d bytes: %.300s", dialect, name, resp.StatusCode, len(out), out)
			}
		}
	}
}
