package server_test

import (
	"bufio"
	"bytes"

	"net/http"
	"strings"
	"testing"
	"time"
)

// TestALoneEventLeavesAtOnce: Parley writes a stream's burst in one flush
// (translate.Pace), but an event after which the upstream pauses must not
// wait for the pause to end: the client has the text of the first delta
// while the upstream still holds the rest. Both ways a stream goes: relayed
// as it came (a messages client of a messages upstream) and rendered for
// another dialect (a chat client). The upstream's pause ends only when the
// client has read the event, so a held event fails the test at its
// deadline rather than passing late (issue 19).
func TestALoneEventLeavesAtOnce(t *testing.T) {
	// The upstream's pause is shorter than nothing Parley would end it
	// for: an idle timeout would end the stream and flush it, passing the
	// test for the wrong reason.
	g := startGateway(t, gwExtra{idle: "60s"})
	stream := fixture(t, "text", "messages", "stream.sse")
	cut := bytes.Index(stream, []byte("event: content_block_stop"))
	release := make(chan struct{}, 2)
	g.fakes["messages"].set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream[:cut])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		case <-time.After(30 * time.Second):
		}
		_, _ = w.Write(stream[cut:])
	})
	for _, tc := range streamRoutes(t) {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, g.url+tc.path, strings.NewReader(tc.body))
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			defer func() {
				select {
				case release <- struct{}{}: // a failed subtest's upstream stops waiting
				default:
				}
			}()
			got := make(chan bool, 1)
			rest := make(chan string, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					got <- false
					rest <- err.Error()
					return
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				seen := false
				var after strings.Builder
				for sc.Scan() {
					if !seen && strings.Contains(sc.Text(), "Hello there!") {
						seen = true
						got <- true
						continue
					}
					after.WriteString(sc.Text() + "\n")
				}
				if !seen {
					got <- false
				}
				rest <- after.String()
			}()
			select {
			case ok := <-got:
				if !ok {
					t.Fatal("the stream ended without the first delta")
				}
			case <-time.After(10 * time.Second): // from before the request
				t.Fatal("the first delta did not reach the client while the upstream paused")
			}
			release <- struct{}{}
			// The stream then ends as it should: the delta came while it
			// was open, not flushed by its end.
			if tail := <-rest; !strings.Contains(tail, "message_stop") && !strings.Contains(tail, "[DONE]") || strings.Contains(tail, "error") {
				t.Errorf("after the pause the stream went on with:\n%s", tail)
			}
		})
	}
}

// streamRoute is a streamed request to the messages fake upstream.
type streamRoute struct {
	name, path, body string
	header           map[string]string
}

// streamRoutes are the two ways a stream goes: relayed as it came (a
// messages client) and rendered for another dialect (a chat client).
func streamRoutes(t *testing.T) []streamRoute {
	return []streamRoute{
		{"relayed", "/v1/messages", string(withModel(t, fixture(t, "text", "messages", "request.json"), "via-messages", true)), map[string]string{"x-api-key": clientKey, "anthropic-version": "2023-06-01"}},
		{"rendered", "/v1/chat/completions", `{"model":"via-messages","stream":true,"messages":[{"role":"user","content":"Hi"}]}`, map[string]string{"Authorization": "Bearer " + clientKey}},
	}
}
