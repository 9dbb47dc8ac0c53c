package server_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// benchGateway is Parley in front of a fake chat-completions upstream that
// answers from memory with the recorded text scenario, as the model
// "bench"; it returns the gateway and the fake.
func benchGateway(b *testing.B) (*gateway, *httptest.Server) {
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
	b.Cleanup(fake.Close)
	g := startGateway(b, gwExtra{
		keys:      "  - {name: limited, key: " + limitedBenchKey + ", limits: {requests_per_minute: 1000000000, tokens_per_minute: 1000000000000, concurrent_requests: 1000}}\n",
		upstreams: "  - {name: bench, dialect: chat_completions, base_url: \"" + fake.URL + "\", api_key: up-key-chat_completions}\n",
		models:    "  - {name: bench, upstream: bench, upstream_model: gpt-4.1}\n",
	})
	return g, fake
}

// limitedBenchKey is a key with every per-minute limit and a concurrency
// limit, none of which a benchmark reaches: its requests pay for counting.
const limitedBenchKey = "sk-bench-limited-0001"

// BenchmarkEndToEnd measures a client → Parley → fake upstream round trip
// on loopback against the same request sent to the fake directly and
// through a plain httputil.ReverseProxy, whole and streamed. The fake
// answers from memory with the recorded chat-completions text scenario.
// "parley_same" is a chat-completions client on a chat-completions
// upstream; "parley_cross" a messages client on the same upstream.
func BenchmarkEndToEnd(b *testing.B) {
	g, fake := benchGateway(b)
	target, _ := url.Parse(fake.URL)
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	defer proxy.Close()

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
	respReq := func(stream bool) []byte {
		return []byte(`{"model":"bench","instructions":"Be brief.","input":[{"role":"user","content":"Say hello."}],"max_output_tokens":1024,"store":false,"stream":` + fmt.Sprint(stream) + `}`)
	}
	genPath := func(stream bool) string {
		if stream {
			return "/v1beta/models/bench:streamGenerateContent?alt=sse"
		}
		return "/v1beta/models/bench:generateContent"
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	do := func(b *testing.B, url, key string, body []byte) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
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
			key       string
		}{
			{"direct", fake.URL + "/v1/chat/completions", chatReq(mode.stream), ""},
			{"reverseproxy", proxy.URL + "/v1/chat/completions", chatReq(mode.stream), ""},
			{"parley_same", g.url + "/v1/chat/completions", chatReq(mode.stream), ""},
			// A client that asks for usage itself, as Parley asks when it
			// encodes: the same-dialect fast path takes its streams too.
			{"parley_same_usage", g.url + "/v1/chat/completions", withUsage(chatReq(mode.stream)), ""},
			{"parley_cross", g.url + "/v1/messages", msgReq(mode.stream), ""},
			// A key with limits: admission and settlement on counters in
			// the process, and the rate-limit headers.
			{"parley_cross_limited", g.url + "/v1/messages", msgReq(mode.stream), limitedBenchKey},
			// A responses client, as agents send it (nothing stored).
			{"parley_responses", g.url + "/v1/responses", respReq(mode.stream), ""},
			{"parley_generate", g.url + genPath(mode.stream), []byte(`{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"Say hello."}]}],"generationConfig":{"maxOutputTokens":1024}}`), ""},
		} {
			key := cmp.Or(path.key, clientKey)
			b.Run(mode.name+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					do(b, path.url, key, path.body)
				}
			})
		}
	}
}

// withUsage adds stream_options.include_usage to a streamed chat request.
func withUsage(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"stream":true`)) {
		return body
	}
	return append(body[:len(body)-1:len(body)-1], []byte(`,"stream_options":{"include_usage":true}}`)...)
}

// BenchmarkConnect measures Generate and StreamGenerate through the
// generated client (Connect protocol with binary protobuf over HTTP/1.1,
// and gRPC over cleartext HTTP/2) next to the same request through the
// messages dialect, all served by the fake chat-completions upstream of
// BenchmarkEndToEnd.
func BenchmarkConnect(b *testing.B) {
	g, _ := benchGateway(b)
	req := &parleyv1.Request{
		Model:        "bench",
		Instructions: []*parleyv1.Part{translate.TextPart("Be brief.")},
		Messages:     []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Say hello."))},
		Generation:   &parleyv1.GenerationConfig{MaxOutputTokens: proto.Int32(1024)},
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	messagesCall := func(stream bool) func(b *testing.B) {
		s := ""
		if stream {
			s = `,"stream":true`
		}
		body := []byte(`{"model":"bench","max_tokens":1024,"system":"Be brief.","messages":[{"role":"user","content":"Say hello."}]` + s + `}`)
		return func(b *testing.B) {
			r, _ := http.NewRequest(http.MethodPost, g.url+"/v1/messages", bytes.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+clientKey)
			r.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(r)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK || n == 0 {
				b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
			}
		}
	}
	// Like the messages client above, which reads the bytes and no more,
	// the stream's events are received and not accumulated.
	rpcCall := func(c rpcClient, stream bool) func(b *testing.B) {
		if !stream {
			return func(b *testing.B) {
				res, err := c.gen.Generate(b.Context(), connect.NewRequest(&parleyv1.GenerateRequest{Request: req}))
				if err != nil || len(res.Msg.GetResponse().GetCandidates()) == 0 {
					b.Fatalf("%v %v", res, err)
				}
			}
		}
		return func(b *testing.B) {
			st, err := c.gen.StreamGenerate(b.Context(), connect.NewRequest(&parleyv1.StreamGenerateRequest{Request: req}))
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for st.Receive() {
				n++
			}
			if err := st.Err(); err != nil || n == 0 {
				b.Fatalf("%d events, %v", n, err)
			}
			_ = st.Close()
		}
	}
	for _, mode := range []struct {
		name   string
		stream bool
	}{{"whole", false}, {"stream", true}} {
		for _, path := range []struct {
			name string
			call func(b *testing.B)
		}{
			{"messages", messagesCall(mode.stream)},
			{"connect", rpcCall(newRPC(b, g.url, clientKey, "connect"), mode.stream)},
			{"grpc", rpcCall(newRPC(b, g.url, clientKey, "grpc"), mode.stream)},
		} {
			b.Run(mode.name+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					path.call(b)
				}
			})
		}
	}
}

// BenchmarkStoredChain measures the 21st turn of a conversation through
// the responses dialect: continued by previous_response_id from a stored
// 20-turn chain (rebuilt from the store; with store true it is also
// saved), next to the same conversation sent whole in the request.
func BenchmarkStoredChain(b *testing.B) {
	g, fake := benchGateway(b)
	g.stop()
	g = startGateway(b, gwExtra{dataDir: b.TempDir(),
		upstreams: "  - {name: bench, dialect: chat_completions, base_url: \"" + fake.URL + "\", api_key: up-key-chat_completions}\n",
		models:    "  - {name: bench, upstream: bench, upstream_model: gpt-4.1}\n",
	})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	send := func(body map[string]any) (map[string]any, error) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, g.url+"/v1/responses", bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+clientKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer func() { _ = resp.Body.Close() }()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("status %d: %v %w", resp.StatusCode, out, err)
		}
		return out, nil
	}
	post := func(b *testing.B, body map[string]any) map[string]any {
		out, err := send(body)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	// A 20-turn chain, and the same conversation as input items.
	var history []any
	prev := ""
	for i := range 20 {
		q := fmt.Sprintf("Question %d: tell me something about the number %d, in two sentences.", i, i)
		body := map[string]any{"model": "bench", "input": q}
		if prev != "" {
			body["previous_response_id"] = prev
		}
		out := post(b, body)
		prev = out["id"].(string)
		history = append(history, map[string]any{"role": "user", "content": q})
		history = append(history, out["output"].([]any)...)
	}
	next := "One more question."
	whole := append(slices.Clone(history), map[string]any{"role": "user", "content": next})
	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"whole_in_request", map[string]any{"model": "bench", "input": whole, "store": false}},
		{"chained", map[string]any{"model": "bench", "input": next, "previous_response_id": prev, "store": false}},
		{"chained_and_stored", map[string]any{"model": "bench", "input": next, "previous_response_id": prev}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				post(b, c.body)
			}
		})
	}
	// Sixteen clients continuing the chain at once: their saves share
	// commits.
	b.Run("chained_and_stored_x16", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := send(map[string]any{"model": "bench", "input": next, "previous_response_id": prev}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
