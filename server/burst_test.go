package server_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/server"
)

// countingListener counts the writes made on the connections it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int32
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int32
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestAStreamInOneBurstIsOneWrite: a stream whose upstream sent it all at
// once reaches the client in one write, its head, its events and the end
// of its body together, relayed or rendered (an event the upstream pauses
// after still leaves at once: TestALoneEventLeavesAtOnce).
func TestAStreamInOneBurstIsOneWrite(t *testing.T) {
	g := startGateway(t, gwExtra{idle: "60s"})
	stream := fixture(t, "text", "messages", "stream.sse")
	g.fakes["messages"].set("text", func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
	})
	c := countWrites(t, g)
	for _, tc := range streamRoutes(t) {
		t.Run(tc.name, func(t *testing.T) {
			if n := c.stream(t, tc, "Hello there!"); n != 1 {
				t.Errorf("a stream sent in one burst went to the client in %d writes, want 1", n)
			}
		})
	}
}

// TestAStreamEndingWithItsBodyEndsWithItsLastBurst: a content-generation
// stream has no end event; it ends with its body. When the body's end
// reaches Parley with the last burst (the upstream's last bytes and the
// end of its chunked body in one write), the last burst goes to the
// client with the end of the reply: a stream of two bursts in two writes,
// relayed or rendered, not a third for the end alone.
func TestAStreamEndingWithItsBodyEndsWithItsLastBurst(t *testing.T) {
	g := startGateway(t, gwExtra{idle: "60s"})
	first := `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hello "}]},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"gc_burst"}` + "\n\n"
	last := `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"there!"}]},"index":0,"finishReason":"STOP"}],"modelVersion":"gemini-2.5-flash","responseId":"gc_burst","usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":5,"totalTokenCount":17}}` + "\n\n"
	g.fakes["generate_content"].set("text", func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, first)
		_ = http.NewResponseController(w).Flush()
		time.Sleep(100 * time.Millisecond)
		// Written as the handler returns: the last chunk and the end of
		// the body in one write.
		_, _ = io.WriteString(w, last)
	})
	c := countWrites(t, g)
	for _, tc := range []streamRoute{
		{"relayed", "/v1beta/models/via-generate_content:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`, map[string]string{"x-goog-api-key": clientKey}},
		{"rendered", "/v1/chat/completions", `{"model":"via-generate_content","stream":true,"messages":[{"role":"user","content":"Hi"}]}`, map[string]string{"Authorization": "Bearer " + clientKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := c.stream(t, tc, "there!"); n != 2 {
				t.Errorf("a stream of two bursts, the last with the upstream body's end, went to the client in %d writes, want 2", n)
			}
		})
	}
}

// writeCounted is a server in front of g whose connections count their
// writes.
type writeCounted struct {
	srv    *httptest.Server
	writes atomic.Int32
}

func countWrites(t *testing.T, g *gateway) *writeCounted {
	c := &writeCounted{srv: httptest.NewUnstartedServer(g.server)}
	c.srv.Listener = countingListener{Listener: c.srv.Listener, writes: &c.writes}
	c.srv.Config.Protocols = server.Protocols()
	c.srv.Start()
	t.Cleanup(c.srv.Close)
	return c
}

// stream sends tc on a connection of its own and returns how many writes
// its reply took, failing unless the reply is a 200 holding want.
func (c *writeCounted) stream(t *testing.T, tc streamRoute, want string) int32 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.srv.URL+tc.path, strings.NewReader(tc.body))
	for k, v := range tc.header {
		req.Header.Set(k, v)
	}
	req.Close = true // a connection of its own, whose writes are this stream's
	c.writes.Store(0)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		t.Fatalf("status %d, %v:\n%s", resp.StatusCode, err, body)
	}
	return c.writes.Load()
}
