package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkEndToEnd measures a client → Parley → fake upstream round trip
// on loopback against the same request sent to the fake directly and
// through a plain httputil.ReverseProxy, whole and streamed. The fake
// answers from memory with the recorded chat-completions text scenario.
// "parley_same" is a chat-completions client on a chat-completions
// upstream; "parley_cross" a messages client on the same upstream.
func BenchmarkEndToEnd(b *testing.B) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(tableDir, "text", "chat_completions", name))
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	whole, stream := read("response.json"), read("stream.sse")
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"stream":true`)) {
			writeStream(w, stream, nil)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(whole)
	}))
	defer fake.Close()
	target, _ := url.Parse(fake.URL)
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	defer proxy.Close()

	g := startGateway(b, gwExtra{
		upstreams: "  - {name: bench, dialect: chat_completions, base_url: \"" + fake.URL + "\", api_key: up-key-chat_completions}\n",
		models:    "  - {name: bench, upstream: bench, upstream_model: gpt-4.1}\n",
	})

	chatReq := func(stream bool) []byte {
		s := ""
		if stream {
			s = `,"stream":true`
		}
		return []byte(`{"model":"bench","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello."}]` + s + `}`)
	}
	msgReq := func(stream bool) []byte {
		s := ""
		if stream {
			s = `,"stream":true`
		}
		return []byte(`{"model":"bench","max_tokens":1024,"system":"Be brief.","messages":[{"role":"user","content":"Say hello."}]` + s + `}`)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	do := func(b *testing.B, url string, body []byte) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+clientKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
	for _, mode := range []struct {
		name   string
		stream bool
	}{{"whole", false}, {"stream", true}} {
		for _, path := range []struct {
			name, url string
			body      []byte
		}{
			{"direct", fake.URL + "/v1/chat/completions", chatReq(mode.stream)},
			{"reverseproxy", proxy.URL + "/v1/chat/completions", chatReq(mode.stream)},
			{"parley_same", g.url + "/v1/chat/completions", chatReq(mode.stream)},
			{"parley_cross", g.url + "/v1/messages", msgReq(mode.stream)},
		} {
			b.Run(mode.name+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					do(b, path.url, path.body)
				}
			})
		}
	}
}
