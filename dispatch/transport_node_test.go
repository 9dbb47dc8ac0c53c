package dispatch

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// nodeUpstream is an upstream served by Node's own HTTP server, as many
// model servers and gateways put in front of models are, with the
// keep-alive timeout short: Node closes a connection idle for longer, as
// uvicorn (vLLM's server) does after 5 s. It streams three events in
// chunks, names the connection each request came on, and says when it
// closes one.
const nodeUpstream = `
const http = require('http');
let conns = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, {'Content-Type': 'text/event-stream', 'X-Conn': String(req.socket.connId)});
    let i = 0;
    const next = () => {
      if (i === 3) { res.end('data: [DONE]\n\n'); return; }
      res.write('data: {"n":' + (i++) + '}\n\n');
      setTimeout(next, 5);
    };
    next();
  });
});
server.on('connection', (s) => { s.connId = ++conns; s.on('close', () => console.log('closed ' + s.connId)); });
server.keepAliveTimeout = 100;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`

// TestTransportAgainstNode: requests one after another share a connection
// of Node's server, and a request after Node closed the idle connection
// (its keep-alive timeout) goes on a new one and succeeds: the transport
// saw the connection closed before it sent anything on it.
func TestTransportAgainstNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is needed")
		}
		t.Skip("node is needed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", nodeUpstream)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	defer cancel()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("node printed no port")
	}
	port := lines.Text()
	closed := make(chan string, 8)
	go func() {
		for lines.Scan() {
			closed <- lines.Text()
		}
	}()
	url := "http://127.0.0.1:" + strings.TrimSpace(port) + "/v1/chat/completions"
	rt := NewTransport(time.Second, 5*time.Second)
	stream := func() string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"stream":true}`))
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if want := "data: {\"n\":0}\n\ndata: {\"n\":1}\n\ndata: {\"n\":2}\n\ndata: [DONE]\n\n"; string(body) != want {
			t.Fatalf("body %q", body)
		}
		return resp.Header.Get("X-Conn")
	}
	first, second := stream(), stream()
	if first != second {
		t.Errorf("two requests one after another came on connections %s and %s, want one", first, second)
	}
	// Node closes the idle connection after its keep-alive timeout (and
	// a second it adds).
	select {
	case c := <-closed:
		if c != "closed "+second {
			t.Fatalf("node: %s", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("node did not close the idle connection")
	}
	if third := stream(); third == second {
		t.Errorf("a request after the keep-alive timeout came on connection %s, which Node had closed", third)
	}
}
