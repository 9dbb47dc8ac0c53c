package dispatch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"weak"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/messages"
)

// TestHeldStreamLetsGoOfTheRequestBodies: once a stream has begun, neither
// the client's body nor the body sent upstream (each as large as the
// conversation) is held while the stream waits for its upstream, whether
// the request was forwarded as it came or translated.
func TestHeldStreamLetsGoOfTheRequestBodies(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","+
			"\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()
	defer close(release)
	d := jsonDispatcher(t, "messages", srv.URL)
	text := strings.Repeat("a long conversation ", 50_000)

	for _, forwarded := range []bool{true, false} {
		t.Run(fmt.Sprintf("forwarded=%v", forwarded), func(t *testing.T) {
			src := fmt.Appendf(nil, `{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":%q}]}`, text)
			req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: src})
			if err != nil {
				t.Fatal(err)
			}
			var call Call
			if forwarded {
				call.Source = translate.Source{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Body: src}
			}
			client := weak.Make(&src[0])
			src = nil
			var sent weak.Pointer[byte]
			call.Sent = func(_ string, body []byte) { sent = weak.Make(&body[0]) }
			events := 0
			for ev, err := range d.Stream(context.Background(), req, &call) {
				if err != nil {
					t.Fatal(err)
				}
				if events++; events > 1 {
					continue
				}
				if call.Forwarded != forwarded {
					t.Fatalf("forwarded: %v, want %v", call.Forwarded, forwarded)
				}
				if ev.GetStart() == nil {
					t.Fatalf("the first event is %v", ev)
				}
				// The stream waits for its upstream's next event.
				runtime.GC()
				runtime.GC()
				if client.Value() != nil {
					t.Error("the client's body is held by the waiting stream")
				}
				if sent.Value() != nil {
					t.Error("the body sent upstream is held by the waiting stream")
				}
				release <- struct{}{}
			}
			if events != 4 {
				t.Errorf("%d events, want 4", events)
			}
			runtime.KeepAlive(req)
		})
	}
}
