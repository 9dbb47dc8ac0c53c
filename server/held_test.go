package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// waitsHead and waitsTail are a messages stream, before and after the
// wait of the upstream the held tests serve it from.
const (
	waitsHead = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\"," +
		"\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
	waitsTail = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// waitsGateway is a gateway whose model "waits" is served by the
// messages upstream at url.
func waitsGateway(t *testing.T, url string) *gateway {
	t.Helper()
	return startGateway(t, gwExtra{
		upstreams: fmt.Sprintf("  - {name: waits, dialect: messages, base_url: %q, api_key: up-key-waits}\n", url),
		models:    "  - {name: waits, upstream: waits, upstream_model: m}\n",
	})
}

// TestWaitingStreamsHoldNoConversation: streams that have begun and wait
// for their upstream hold none of their request (the client's body, its
// conversation, instructions and tools in canonical form, the body sent
// upstream), whether the request was forwarded as it came or translated:
// an agent's request is tens of kilobytes to a megabyte, and a gateway
// holds thousands of such streams.
func TestWaitingStreamsHoldNoConversation(t *testing.T) {
	release := make(chan struct{})
	var opened sync.WaitGroup
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, waitsHead)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, waitsTail)
	}))
	defer up.Close()
	g := waitsGateway(t, up.URL)
	// A conversation of 1 MiB, instructions and tools of 512 KiB each:
	// a waiting stream that kept any of them would hold 512 KiB or more.
	const streams, size = 6, 1 << 20
	turn := strings.Repeat("a long conversation ", size/20)
	system := strings.Repeat("a long system prompt ", size/2/21)
	tool := fmt.Sprintf(`{"name":"read","description":%q,"input_schema":{"type":"object"}}`, strings.Repeat("reads a file ", size/2/13))
	chatTool := fmt.Sprintf(`{"type":"function","function":{"name":"read","description":%q,"parameters":{"type":"object"}}}`, strings.Repeat("reads a file ", size/2/13))
	bodies := map[string]string{
		"/v1/messages": fmt.Sprintf(`{"model":"waits","max_tokens":10,"stream":true,"system":%q,"tools":[%s],"messages":[{"role":"user","content":%q}]}`,
			system, tool, turn),
		"/v1/chat/completions": fmt.Sprintf(`{"model":"waits","stream":true,"tools":[%s],"messages":[{"role":"system","content":%q},{"role":"user","content":%q}]}`,
			chatTool, system, turn),
		// A response not stored: nothing is saved with its reply, so its
		// conversation is let go of like any other. (Its instructions
		// and tools are echoed by every snapshot, so the encoder keeps
		// them: short ones here.)
		"/v1/responses": fmt.Sprintf(`{"model":"waits","stream":true,"store":false,"instructions":"Be brief.",`+
			`"tools":[{"type":"function","name":"read","parameters":{"type":"object"}}],"input":[{"role":"user","content":%q}]}`, turn),
		"/v1beta/models/waits:streamGenerateContent?alt=sse": fmt.Sprintf(`{"systemInstruction":{"parts":[{"text":%q}]},`+
			`"tools":[{"functionDeclarations":[{"name":"read","description":%q,"parameters":{"type":"OBJECT"}}]}],`+
			`"contents":[{"role":"user","parts":[{"text":%q}]}]}`, system, strings.Repeat("reads a file ", size/2/13), turn),
	}
	for path, body := range bodies {
		t.Run(strings.TrimPrefix(strings.TrimPrefix(path, "/v1/"), "/v1beta/models/"), func(t *testing.T) {
			// Two collections empty the pools as well (sync.Pool keeps
			// what the first finds for one more).
			var before, held runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&before)
			var done sync.WaitGroup
			opened.Add(streams)
			for range streams {
				done.Go(func() {
					resp, err := http.DefaultClient.Do(clientPost(g.url+path, strings.NewReader(body)))
					if err != nil {
						t.Error(err)
						opened.Done()
						return
					}
					defer resp.Body.Close()
					r := bufio.NewReader(resp.Body)
					_, err = r.ReadString('\n')
					opened.Done()
					if err != nil {
						t.Error(err)
						return
					}
					rest, _ := io.ReadAll(r)
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(rest), "end_turn") && !strings.Contains(string(rest), `"stop"`) &&
						!strings.Contains(string(rest), "response.completed") && !strings.Contains(string(rest), `"STOP"`) {
						t.Errorf("status %d, stream %q", resp.StatusCode, rest)
					}
				})
			}
			opened.Wait()
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&held)
			for range streams {
				release <- struct{}{}
			}
			done.Wait()
			// The test's own body is one string, shared by its requests.
			perStream := (int64(held.HeapAlloc) - int64(before.HeapAlloc)) / streams
			t.Logf("%d KiB held per waiting stream, with a request of %d KiB", perStream>>10, len(body)>>10)
			if perStream > size/4 {
				t.Errorf("a waiting stream holds %d KiB, with a request of %d KiB: it holds part of it", perStream>>10, len(body)>>10)
			}
		})
	}
}

// TestWaitingRequestsHoldOneConversation: a request whose upstream has
// not begun to answer holds its conversation once, in canonical form, for
// another attempt to encode, whether its first went on as it came (an
// upstream of the client's dialect) or was translated: the client's body
// is let go of once the first attempt has made its own of it. An agent's
// request waits on its model for seconds to minutes, thousands at once.
func TestWaitingRequestsHoldOneConversation(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 16)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, waitsHead+waitsTail)
	}))
	defer up.Close()
	g := waitsGateway(t, up.URL)
	const requests, size = 6, 1 << 20
	turn := strings.Repeat("a long conversation ", size/20)
	bodies := map[string]string{
		"/v1/messages":         fmt.Sprintf(`{"model":"waits","max_tokens":10,"stream":true,"messages":[{"role":"user","content":%q}]}`, turn),
		"/v1/chat/completions": fmt.Sprintf(`{"model":"waits","stream":true,"messages":[{"role":"user","content":%q}]}`, turn),
	}
	for path, body := range bodies {
		t.Run(strings.TrimPrefix(path, "/v1/"), func(t *testing.T) {
			var before, waiting runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&before)
			var done sync.WaitGroup
			for range requests {
				done.Go(func() {
					resp, err := http.DefaultClient.Do(clientPost(g.url+path, strings.NewReader(body)))
					if err != nil {
						t.Error(err)
						return
					}
					defer resp.Body.Close()
					rest, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(rest), "end_turn") && !strings.Contains(string(rest), `"stop"`) {
						t.Errorf("status %d, stream %q", resp.StatusCode, rest)
					}
				})
			}
			for range requests {
				<-arrived
			}
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&waiting)
			close(release)
			done.Wait()
			release = make(chan struct{})
			perRequest := (int64(waiting.HeapAlloc) - int64(before.HeapAlloc)) / requests
			t.Logf("%d KiB held per waiting request, with a conversation of %d KiB", perRequest>>10, size>>10)
			if perRequest > size*3/2 {
				t.Errorf("a waiting request holds %d KiB, with a conversation of %d KiB: it holds it more than once", perRequest>>10, size>>10)
			}
		})
	}
}
