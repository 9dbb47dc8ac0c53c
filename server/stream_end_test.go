package server_test

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLeavingAfterTheEndCutsNothing: an SDK stops reading a stream at
// the end event it knows and closes the connection, while the upstream
// may still hold its own open for a moment. Such a stream was delivered
// whole: it is a 200, not a stream the client cut (499), and is charged
// as one.
func TestLeavingAfterTheEndCutsNothing(t *testing.T) {
	g := startGateway(t, gwExtra{})
	stream := fixture(t, "text", "messages", "stream.sse")
	g.fakes["messages"].set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
		w.(http.Flusher).Flush()
		// The upstream keeps its connection a moment after its last event.
		select {
		case <-r.Context().Done():
		case <-time.After(500 * time.Millisecond):
		}
	})
	body := withModel(t, fixture(t, "text", "messages", "request.json"), "via-messages", true)
	req, _ := http.NewRequest(http.MethodPost, g.url+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("x-api-key", clientKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "message_stop") {
			break
		}
	}
	_ = resp.Body.Close() // as the SDK leaves, at the end it knows
	deadline := time.Now().Add(5 * time.Second)
	for {
		metrics := get(t, g.url+"/metrics")
		if strings.Contains(metrics, `parley_requests_total{dialect="messages",model="via-messages",status="200",upstream="fake-messages"} 1`) {
			return
		}
		if strings.Contains(metrics, `status="499"`) || time.Now().After(deadline) {
			t.Fatalf("the stream read to its end was not a 200:\n%s", grepLines(metrics, "parley_requests_total"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
