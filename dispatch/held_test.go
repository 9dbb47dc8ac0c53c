package dispatch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
)

// TestHeldStreamLetsGoOfTheRequestBodies: once a stream has begun, neither
// the client's body nor the body sent upstream (each as large as the
// conversation) is held while the stream waits for its upstream, whether
// the request was forwarded as it came or translated, and whether the body
// went in one write with its head (a short one) or by a reader that
// forgets it (a long one).
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
	for _, c := range []struct {
		name      string
		text      string
		forwarded bool
	}{
		{"long/forwarded", strings.Repeat("a long conversation ", 50_000), true},
		{"long/translated", strings.Repeat("a long conversation ", 50_000), false},
		{"short/forwarded", "a short question", true},
		{"short/translated", "a short question", false},
	} {
		text, forwarded := c.text, c.forwarded
		t.Run(c.name, func(t *testing.T) {
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

// writeCounter counts the writes made on the connections it dials.
type writeCounter struct {
	net.Conn
	writes *atomic.Int32
}

func (c writeCounter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestRequestWrites: a small request goes upstream in one write, its head
// and body together, as the transport sends a body it knows is in memory;
// one just larger than the write buffer (sent by a reader that forgets
// it) in the two such a request takes anyway. The body arrives whole
// whatever its size.
func TestRequestWrites(t *testing.T) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()
	var writes atomic.Int32
	tr := netTransport(time.Second, time.Second)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return writeCounter{Conn: c, writes: &writes}, nil
	}
	b, err := NewHTTPBackend("up", messages.Upstream{}, srv.URL, HTTPOptions{Transport: newUpstreamTransport(tr)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		size, writes int32
	}{{300, 1}, {writeBufferSize + 1, 2}, {1 << 20, 0}} {
		writes.Store(0)
		out := &translate.Outgoing{Path: "/v1/messages", Body: bytes.Repeat([]byte("x"), int(c.size))}
		resp, _, err := b.send(context.Background(), out)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if n := writes.Load(); c.writes > 0 && n > c.writes {
			t.Errorf("a body of %d bytes went in %d writes, want %d", c.size, n, c.writes)
		}
		if n := got.Load(); n != int64(c.size) {
			t.Errorf("the upstream read %d bytes of a body of %d", n, c.size)
		}
	}
}

// TestWaitingRequestLetsGoOfTheBodies: while the upstream thinks, before
// its reply's head, a long request holds neither the body it sent
// upstream (written, no transport sends it again) nor the client's own
// body, whether it was translated or went on as it came (another attempt
// encodes the canonical request): each is as large as the conversation,
// for as long as the model takes to begin. So over plain HTTP and
// HTTP/1.1 with TLS (Parley's transport) and over HTTP/2 with TLS
// (net/http's).
func TestWaitingRequestLetsGoOfTheBodies(t *testing.T) {
	const messagesReply = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi"}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}`
	const chatReply = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`
	var mu sync.Mutex
	var client, sent weak.Pointer[byte]
	type seen struct {
		client, sent bool
		proto        string
	}
	held := make(chan seen, 1)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		// The request is read whole; its reply has not begun. The
		// writer may not have returned from its last write yet, with
		// the end of a body in hand: a body still held a second later is
		// held while the upstream thinks.
		var s seen
		for range 100 {
			runtime.GC()
			mu.Lock()
			s = seen{client.Value() != nil, sent.Value() != nil, r.Proto}
			mu.Unlock()
			if !s.client && !s.sent {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		held <- s
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			_, _ = io.WriteString(w, messagesReply)
			return
		}
		_, _ = io.WriteString(w, chatReply)
	})
	for _, srv := range upstreamServers(t, handler) {
		for _, c := range []struct{ name, upstream string }{
			{"translated", "chat_completions"},
			// Forwarded as it came, the model's name the same: what was
			// sent is the client's body.
			{"same dialect", "messages"},
		} {
			t.Run(srv.name+"/"+c.name, func(t *testing.T) {
				cfg := &config.Config{
					Upstreams: []config.Upstream{{Name: "up", Dialect: c.upstream, BaseURL: srv.url, APIKey: "sk-upstream-key-0123456789"}},
					Models:    []config.Model{{Name: "m", Upstream: "up"}},
				}
				d, err := FromConfig(cfg, dialects.All(), BuildOptions{Transport: srv.transport})
				if err != nil {
					t.Fatal(err)
				}
				src := fmt.Appendf(nil, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":%q}]}`, strings.Repeat("a long conversation ", 50_000))
				req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: src})
				if err != nil {
					t.Fatal(err)
				}
				call := Call{Source: translate.Source{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Body: src}}
				mu.Lock()
				client = weak.Make(&src[0])
				mu.Unlock()
				src = nil
				call.Sent = func(_ string, body []byte) {
					mu.Lock()
					sent = weak.Make(&body[0])
					mu.Unlock()
				}
				if _, err := d.Generate(context.Background(), req, &call); err != nil {
					t.Fatal(err)
				}
				got := <-held
				if got.proto != srv.proto {
					t.Fatalf("the upstream was called over %s, want %s", got.proto, srv.proto)
				}
				if got.client {
					t.Error("the client's body is held while the upstream thinks")
				}
				if got.sent {
					t.Error("the body sent upstream is held while the upstream thinks")
				}
				runtime.KeepAlive(req)
			})
		}
	}
}

// TestIdleTimeoutEndsTheAttempt: a reply that goes silent for the idle
// timeout, whole or streamed, ends with an error that says so, and its
// connection or HTTP/2 stream is closed, so the upstream stops too; over
// plain HTTP and HTTP/1.1 with TLS (Parley's transport) and over HTTP/2
// with TLS (net/http's).
func TestIdleTimeoutEndsTheAttempt(t *testing.T) {
	const head = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\"," +
		"\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n"
	gone := make(chan string, 4)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(r.URL.Path, ":streamGenerateContent"):
			// A dialect whose stream ends where its body does: cut
			// short, it must not read as whole.
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"}}]}\r\n\r\n")
		case bytes.Contains(body, []byte(`"stream":true`)):
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, head)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "200")
			_, _ = io.WriteString(w, `{"id":"msg_1","type":"message",`)
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			gone <- r.Proto
		case <-time.After(5 * time.Second):
			gone <- "kept"
		}
	})
	for _, srv := range upstreamServers(t, handler) {
		for _, c := range []struct {
			name   string
			up     translate.Upstream
			stream bool
		}{{"whole", messages.Upstream{}, false}, {"stream", messages.Upstream{}, true}, {"stream generate", generatecontent.Upstream{}, true}} {
			t.Run(srv.name+"/"+c.name, func(t *testing.T) {
				hb, err := NewHTTPBackend("up", c.up, srv.url, HTTPOptions{Transport: srv.transport, IdleTimeout: 100 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var got error
				if c.stream {
					req := &parleyv1.Request{Model: "m", Stream: true}
					for _, err := range hb.Stream(context.Background(), req, translate.Target{Model: "m"}, &Call{}) {
						if err != nil {
							got = err
						}
					}
				} else {
					_, got = hb.exchange(context.Background(), &translate.Outgoing{Path: "/v1/messages", Body: []byte(`{"model":"m"}`)})
				}
				if got == nil || !strings.Contains(got.Error(), "sent nothing for 100ms") {
					t.Fatalf("err = %v, want the idle timeout", got)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("the idle timeout took %v", d)
				}
				select {
				case p := <-gone:
					if p != srv.proto {
						t.Errorf("the upstream's request: %s, want it ended over %s", p, srv.proto)
					}
				case <-time.After(3 * time.Second):
					t.Error("the upstream's request did not end")
				}
			})
		}
	}
}

// upstreamServer is an upstream serving a test's handler, with the
// transport that reaches it and the protocol they speak.
type upstreamServer struct {
	name, url, proto string
	transport        http.RoundTripper
}

// upstreamServers serves handler over plain HTTP and over HTTP/1.1 with
// TLS, each reached by Parley's transport, and over HTTP/2 with TLS,
// reached by net/http's.
func upstreamServers(t *testing.T, handler http.Handler) []upstreamServer {
	t.Helper()
	plain := httptest.NewServer(handler)
	t.Cleanup(plain.Close)
	h2 := httptest.NewUnstartedServer(handler)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	t.Cleanup(h2.Close)
	h1 := httptest.NewTLSServer(handler)
	t.Cleanup(h1.Close)
	roots := x509.NewCertPool()
	roots.AddCert(h2.Certificate())
	roots.AddCert(h1.Certificate())
	tlsTransport := netTransport(time.Second, 10*time.Second)
	tlsTransport.TLSClientConfig = &tls.Config{RootCAs: roots}
	https := newUpstreamTransport(tlsTransport)
	learnt(t, https, h1.URL)
	return []upstreamServer{
		{"http", plain.URL, "HTTP/1.1", NewTransport(time.Second, 10*time.Second)},
		{"h2", h2.URL, "HTTP/2.0", newUpstreamTransport(tlsTransport)},
		{"https", h1.URL, "HTTP/1.1", https},
	}
}
