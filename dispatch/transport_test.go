package dispatch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/messages"
)

// connCounter counts the connections a test server accepts and closes.
type connCounter struct {
	opened, closed atomic.Int32
}

func (c *connCounter) track(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		c.opened.Add(1)
	case http.StateClosed, http.StateHijacked:
		c.closed.Add(1)
	}
}

// countedServer starts a test server that counts its connections, its
// settings adjusted by the options.
func countedServer(t *testing.T, h http.HandlerFunc, opts ...func(*http.Server)) (*httptest.Server, *connCounter) {
	t.Helper()
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = cc.track
	for _, o := range opts {
		o(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cc
}

// post sends body to url through rt and returns the reply's status and
// body.
func post(t *testing.T, rt http.RoundTripper, ctx context.Context, url, body string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

// waitFor polls cond for up to two seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// echo answers with the request's body: in chunks, one a word, when the
// query asks for them, with a length otherwise.
func echo(w http.ResponseWriter, r *http.Request) {
	in, _ := io.ReadAll(r.Body)
	if r.URL.Query().Get("chunked") != "" {
		for _, part := range bytes.SplitAfter(in, []byte(" ")) {
			_, _ = w.Write(part)
			w.(http.Flusher).Flush()
		}
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(in)))
	_, _ = w.Write(in)
}

// echoFive sends an echoing upstream five bodies of growing size, the
// replies by length and in chunks in turn, and checks that each comes
// back whole.
func echoFive(t *testing.T, rt http.RoundTripper, url string) {
	t.Helper()
	for i, q := range []string{"", "?chunked=1", "", "?chunked=1", ""} {
		body := strings.Repeat("word ", 1000*i+1)
		status, got, err := post(t, rt, context.Background(), url+q, body)
		if err != nil || status != 200 || got != body {
			t.Fatalf("request %d: status %d, %d bytes back of %d, %v", i, status, len(got), len(body), err)
		}
	}
}

// TestTransportReusesConnections: requests one after another go on one
// connection, whatever the body's framing (a length, chunks), and every
// byte of every body arrives both ways.
func TestTransportReusesConnections(t *testing.T) {
	srv, cc := countedServer(t, echo)
	echoFive(t, NewTransport(time.Second, time.Second), srv.URL)
	if n := cc.opened.Load(); n != 1 {
		t.Errorf("5 requests one after another opened %d connections, want 1", n)
	}
}

// TestTransportHoldsNothingWhileWaiting: while a reply's body waits for
// its next bytes, the transport runs nothing of its own (net/http's keeps
// a reader and a writer goroutine per connection, which a held stream
// pays for in stacks), and its connection holds no read buffer.
func TestTransportHoldsNothingWhileWaiting(t *testing.T) {
	release := make(chan struct{})
	srv, _ := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first ")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "last")
	})
	rt := NewTransport(time.Second, time.Second)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	stacks := make([]byte, 1<<20)
	stacks = stacks[:runtime.Stack(stacks, true)]
	if bytes.Contains(stacks, []byte("net/http.(*persistConn)")) {
		t.Errorf("a held reply runs net/http's connection goroutines:\n%s", stacks)
	}
	if resp.Body.(*upstreamBody).c.in.buf != nil {
		t.Error("a waiting reply's connection holds a read buffer")
	}
	close(release)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "last" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	_ = resp.Body.Close()
}

// TestTransportIdleClosedByUpstream: an upstream that closed a connection
// while it sat idle (its keep-alive timeout) costs nothing: the next
// request sees it closed and opens another, and the POST succeeds.
func TestTransportIdleClosedByUpstream(t *testing.T) {
	srv, cc := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}, func(s *http.Server) { s.IdleTimeout = 20 * time.Millisecond })
	rt := NewTransport(time.Second, time.Second)
	for i := range 3 {
		status, got, err := post(t, rt, context.Background(), srv.URL, "{}")
		if err != nil || status != 200 || got != "ok" {
			t.Fatalf("request %d: %d %q %v", i, status, got, err)
		}
		waitFor(t, "the upstream closing the idle connection", func() bool { return cc.closed.Load() == int32(i+1) })
	}
	if n := cc.opened.Load(); n != 3 {
		t.Errorf("opened %d connections, want 3", n)
	}
}

// TestTransportUnsolicitedBytes: an idle connection with bytes waiting
// (a reply to nothing) is not used.
func TestTransportUnsolicitedBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := conns.Add(1)
			go func() {
				defer func() { _ = c.Close() }()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					reply := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
					if n == 1 {
						// A second reply nobody asked for.
						reply += "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nbad"
					}
					if _, err := io.WriteString(c, reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	rt := NewTransport(time.Second, time.Second)
	u := "http://" + ln.Addr().String()
	for i := range 2 {
		if i == 1 {
			time.Sleep(20 * time.Millisecond) // the extra bytes arrive
		}
		status, got, err := post(t, rt, context.Background(), u, "{}")
		if err != nil || status != 200 || got != "ok" {
			t.Fatalf("request %d: %d %q %v", i, status, got, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("opened %d connections, want 2 (the first one had bytes waiting)", n)
	}
}

// TestTransportConnectionClose: a reply that says Connection: close, and
// a body closed before its end, leave no connection in the pool.
func TestTransportConnectionClose(t *testing.T) {
	srv, cc := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("close") != "" {
			w.Header().Set("Connection", "close")
		}
		_, _ = io.WriteString(w, strings.Repeat("x", 64<<10))
	})
	rt := NewTransport(time.Second, time.Second)
	if _, _, err := post(t, rt, context.Background(), srv.URL+"?close=1", "{}"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the closed connection", func() bool { return cc.closed.Load() == 1 })
	// A body closed after its first bytes.
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Body.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 10)); err == nil {
		t.Error("a closed body could still be read")
	}
	waitFor(t, "the connection of the body closed early", func() bool { return cc.closed.Load() == 2 })
	if _, _, err := post(t, rt, context.Background(), srv.URL, "{}"); err != nil {
		t.Fatal(err)
	}
	if n := cc.opened.Load(); n != 3 {
		t.Errorf("opened %d connections, want 3", n)
	}
}

// TestTransportCancel: a request cancelled while it waits for its reply's
// head, or for its body, ends at once with the context's error, and its
// connection is not used again.
func TestTransportCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv, cc := countedServer(t, holding(release))
	checkCancel(t, NewTransport(time.Second, time.Minute), srv.URL, cc)
}

// holding answers once the request's body is read to its end (which lets
// the server notice the client leaving): with the start of a body when
// the query asks for one, then nothing until release or the client
// leaving.
func holding(release chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Query().Get("body") != "" {
			_, _ = io.WriteString(w, "start")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
}

// checkCancel cancels a request to a holding upstream while it waits for
// the head, then one while it waits for the body's next bytes: each ends
// at once with the context's error and closes its connection. A request
// whose context is already done sends nothing.
func checkCancel(t *testing.T, rt http.RoundTripper, url string, cc *connCounter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, _, err := post(t, rt, ctx, url, "{}")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting for the head: %v, want the context's error", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"?body=1", strings.NewReader("{}"))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = io.ReadAll(resp.Body)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("reading the body: %v, want the context's error", err)
	}
	_ = resp.Body.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelling took %s", d)
	}
	waitFor(t, "both connections closed", func() bool { return cc.closed.Load() == 2 })
	_, _, err = post(t, rt, ctx, url, "{}")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled request: %v", err)
	}
}

// TestTransportHeaderTimeout: an upstream that sends no head within the
// header timeout fails the request with a timeout.
func TestTransportHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv, _ := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	rt := NewTransport(time.Second, 50*time.Millisecond)
	_, _, err := post(t, rt, context.Background(), srv.URL, "{}")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%v, want a timeout", err)
	}
}

// TestTransportHeaderTimeoutIsForTheHead: a stream whose head came in
// time may take longer than the header timeout for its body.
func TestTransportHeaderTimeoutIsForTheHead(t *testing.T) {
	srv, _ := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "head ")
		w.(http.Flusher).Flush()
		time.Sleep(150 * time.Millisecond)
		_, _ = io.WriteString(w, "tail")
	})
	rt := NewTransport(time.Second, 50*time.Millisecond)
	status, got, err := post(t, rt, context.Background(), srv.URL, "{}")
	if err != nil || status != 200 || got != "head tail" {
		t.Fatalf("%d %q %v", status, got, err)
	}
}

// TestTransportInformational: a 103 before the reply is passed over.
func TestTransportInformational(t *testing.T) {
	srv, _ := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</a>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		_, _ = io.WriteString(w, "ok")
	})
	status, got, err := post(t, NewTransport(time.Second, time.Second), context.Background(), srv.URL, "{}")
	if err != nil || status != 200 || got != "ok" {
		t.Fatalf("%d %q %v", status, got, err)
	}
}

// TestTransportEarlyReply: an upstream that refuses a large body without
// reading it, and closes, is heard: the client gets its reply, not a
// broken write.
func TestTransportEarlyReply(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			_ = c.Close()
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo large")
		// Close with the body unread: the kernel answers the rest with a
		// reset.
		_ = c.(*net.TCPConn).SetLinger(0)
		time.Sleep(50 * time.Millisecond)
		_ = c.Close()
	}()
	status, got, err := post(t, NewTransport(time.Second, time.Second), context.Background(), "http://"+ln.Addr().String(), strings.Repeat("x", 64<<20))
	if err != nil {
		// Some kernels deliver the reset before the reply can be read:
		// then the broken write is all there is to report.
		t.Skipf("the reply was lost to the reset: %v", err)
	}
	if status != http.StatusRequestEntityTooLarge || got != "too large" {
		t.Fatalf("%d %q", status, got)
	}
}

// TestTransportRetriesNothingWritten: a request on a reused connection
// that breaks before any byte of it is written goes again on another,
// body and all; one that broke after some was written does not (a POST
// is not sent twice). So for a long body too, sent by a reader that
// forgets it and given again by GetBody until it is written.
func TestTransportRetriesNothingWritten(t *testing.T) {
	var bodies []string
	var mu sync.Mutex
	srv, _ := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	})
	var breakNext atomic.Int32 // 1: fail before writing; 2: after a byte
	rt := newUpstreamTransport(breakingTransport(&breakNext))
	if _, _, err := post(t, rt, context.Background(), srv.URL, "one"); err != nil {
		t.Fatal(err)
	}
	breakNext.Store(1)
	if _, got, err := post(t, rt, context.Background(), srv.URL, "two"); err != nil || got != "ok" {
		t.Fatalf("a request whose reused connection broke before writing: %q %v", got, err)
	}
	breakNext.Store(2)
	if _, _, err := post(t, rt, context.Background(), srv.URL, "three"); err == nil {
		t.Fatal("a request broken after its first byte succeeded")
	}
	b, err := NewHTTPBackend("up", messages.Upstream{}, srv.URL, HTTPOptions{Transport: rt})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 64<<10)
	send := func() error {
		resp, _, err := b.send(context.Background(), &translate.Outgoing{Path: "/v1/messages", Body: []byte(long)})
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	if err := send(); err != nil {
		t.Fatal(err)
	}
	breakNext.Store(1)
	if err := send(); err != nil {
		t.Fatalf("a long request whose reused connection broke before writing: %v", err)
	}
	breakNext.Store(2)
	if err := send(); err == nil {
		t.Fatal("a long request broken after its first byte succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"one", "two", long, long}; !slices.Equal(bodies, want) {
		t.Errorf("the upstream read bodies of %d bytes, want %d", lengths(bodies), lengths(want))
	}
}

func lengths(ss []string) []int {
	n := make([]int, len(ss))
	for i, s := range ss {
		n[i] = len(s)
	}
	return n
}

// breakingTransport is an upstream's net/http transport whose connections
// fail their next write as mode says (breakingConn).
func breakingTransport(mode *atomic.Int32) *http.Transport {
	nt := netTransport(time.Second, time.Second)
	dial := nt.DialContext
	nt.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		return &breakingConn{Conn: c, mode: mode}, err
	}
	return nt
}

// breakingConn fails its next write as mode says, once.
type breakingConn struct {
	net.Conn
	mode *atomic.Int32
}

func (c *breakingConn) Write(p []byte) (int, error) {
	switch c.mode.Swap(0) {
	case 1:
		return 0, errors.New("broken pipe")
	case 2:
		n, _ := c.Conn.Write(p[:1])
		_ = c.Close()
		return n, errors.New("broken pipe")
	}
	return c.Conn.Write(p)
}

// TestTransportIdleConnectionsExpire: a connection idle for longer than
// the idle timeout is closed, with nothing asking for it.
func TestTransportIdleConnectionsExpire(t *testing.T) {
	srv, cc := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	nt := netTransport(time.Second, time.Second)
	nt.IdleConnTimeout = 30 * time.Millisecond
	rt := newUpstreamTransport(nt)
	if _, _, err := post(t, rt, context.Background(), srv.URL, "{}"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the idle connection closed", func() bool { return cc.closed.Load() == 1 })
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.idle) != 0 || rt.sweeper != nil {
		t.Errorf("the pool still holds %d hosts, sweeper %v", len(rt.idle), rt.sweeper != nil)
	}
}

// TestTransportKeepsAtMostMaxIdle: connections beyond the pool's bound
// are closed when their requests end.
func TestTransportKeepsAtMostMaxIdle(t *testing.T) {
	release := make(chan struct{})
	var arrived sync.WaitGroup
	srv, cc := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
		_, _ = io.WriteString(w, "ok")
	})
	nt := netTransport(time.Second, time.Second)
	nt.MaxIdleConnsPerHost = 2
	rt := newUpstreamTransport(nt)
	var done sync.WaitGroup
	arrived.Add(5)
	for range 5 {
		done.Go(func() {
			if _, _, err := post(t, rt, context.Background(), srv.URL, "{}"); err != nil {
				t.Error(err)
			}
		})
	}
	arrived.Wait()
	close(release)
	done.Wait()
	waitFor(t, "three connections closed", func() bool { return cc.closed.Load() == 3 })
	rt.CloseIdleConnections()
	waitFor(t, "all closed", func() bool { return cc.closed.Load() == 5 })
}

// TestTransportFallback: what goes through a proxy goes through net/http's
// transport, and so does the first request to an upstream over TLS
// (transport_tls_test.go has what follows).
func TestTransportFallback(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "tls")
	}))
	defer tlsSrv.Close()
	nt := netTransport(time.Second, time.Second)
	nt.TLSClientConfig = tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		_, _ = io.WriteString(w, "proxied "+r.URL.Host)
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	nt.Proxy = func(r *http.Request) (*url.URL, error) {
		if r.URL.Hostname() == "upstream.invalid" {
			return pu, nil
		}
		return nil, nil
	}
	rt := newUpstreamTransport(nt)
	if _, got, err := post(t, rt, context.Background(), tlsSrv.URL, "{}"); err != nil || got != "tls" {
		t.Fatalf("TLS: %q %v", got, err)
	}
	for range 2 {
		if _, got, err := post(t, rt, context.Background(), "http://upstream.invalid/v1", "{}"); err != nil || got != "proxied upstream.invalid" {
			t.Fatalf("proxy: %q %v", got, err)
		}
	}
	if proxied.Load() != 2 {
		t.Errorf("the proxy saw %d requests, want 2", proxied.Load())
	}
}

// TestTransportRefusesBadHeaders: a header net/http would refuse is
// refused, naming the field and not its value.
func TestTransportRefusesBadHeaders(t *testing.T) {
	srv, cc := countedServer(t, func(w http.ResponseWriter, r *http.Request) {})
	rt := NewTransport(time.Second, time.Second)
	for _, h := range []http.Header{{"X-Key": {"secret\r\nX-Evil: 1"}}, {"Bad Name": {"v"}}, {"X-Nul": {"a\x00b"}}, {"X-Del": {"a\x7fb"}}} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
		maps.Copy(req.Header, h)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			_ = resp.Body.Close()
			t.Fatalf("%q was sent", h)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows the value: %v", err)
		}
	}
	if cc.opened.Load() != 0 {
		t.Error("a connection was opened for a request refused")
	}
}

// BenchmarkTransport sends a request of a chat's size to a loopback
// upstream and reads its reply to the end, through net/http's transport
// ("net") and through the upstream transport ("upstream"), over plain HTTP
// and over TLS ("-tls", HTTP/1.1), for a reply with a length ("whole") and
// one in chunks ("stream").
func BenchmarkTransport(b *testing.B) {
	whole := []byte(strings.Repeat(`{"text":"hello"}`, 40))
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 3 {
				_, _ = w.Write(whole[:200])
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(whole)
	})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	secure := httptest.NewTLSServer(handler)
	defer secure.Close()
	trusting := func() *http.Transport {
		nt := netTransport(time.Second, time.Minute)
		nt.TLSClientConfig = secure.Client().Transport.(*http.Transport).TLSClientConfig
		return nt
	}
	body := bytes.Repeat([]byte("x"), 900)
	for _, tr := range []struct {
		name, url string
		rt        http.RoundTripper
	}{
		{"net", srv.URL, netTransport(time.Second, time.Minute)},
		{"upstream", srv.URL, NewTransport(time.Second, time.Minute)},
		{"net-tls", secure.URL, trusting()},
		{"upstream-tls", secure.URL, func() http.RoundTripper {
			rt := newUpstreamTransport(trusting())
			rt.h1.Store(secure.Listener.Addr().String(), struct{}{})
			return rt
		}()},
	} {
		for _, path := range []string{"whole", "stream"} {
			b.Run(tr.name+"/"+path, func(b *testing.B) {
				client := &http.Client{Transport: tr.rt}
				b.ReportAllocs()
				for b.Loop() {
					req, _ := http.NewRequest(http.MethodPost, tr.url+"/"+path, bytes.NewReader(body))
					req.Header["Content-Type"] = []string{"application/json"}
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			})
		}
	}
}

// TestTransportWritesRequestsAsNetHTTP: what the upstream reads of a
// request (method, target, host, headers, framing, body) is what it reads
// of the same request sent by net/http's transport, for every kind of
// body the upstream transport writes its own way or hands to net/http,
// over plain HTTP and over TLS.
func TestTransportWritesRequestsAsNetHTTP(t *testing.T) {
	got := make(chan seenRequest, 1)
	handler := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seenRequest{r.Method, r.RequestURI, r.Host, r.Header, r.ContentLength, slices.Contains(r.TransferEncoding, "chunked"), string(body)}
	}
	plain, _ := countedServer(t, handler)
	secure := httptest.NewTLSServer(http.HandlerFunc(handler))
	defer secure.Close()
	for _, up := range []struct {
		name, url string
		net, own  func() http.RoundTripper
	}{
		{"http", plain.URL, func() http.RoundTripper { return netTransport(time.Second, time.Second) },
			func() http.RoundTripper { return NewTransport(time.Second, time.Second) }},
		{"https", secure.URL, func() http.RoundTripper {
			nt := netTransport(time.Second, time.Second)
			nt.TLSClientConfig = secure.Client().Transport.(*http.Transport).TLSClientConfig
			return nt
		}, func() http.RoundTripper {
			nt := netTransport(time.Second, time.Second)
			nt.TLSClientConfig = secure.Client().Transport.(*http.Transport).TLSClientConfig
			rt := newUpstreamTransport(nt)
			learnt(t, rt, secure.URL)
			return rt
		}},
	} {
		t.Run(up.name, func(t *testing.T) { writesAsNetHTTP(t, up.url, got, up.net(), up.own()) })
	}
}

// seenRequest is what an upstream read of a request.
type seenRequest struct {
	Method, URI, Host string
	Header            http.Header
	Length            int64
	Chunked           bool
	Body              string
}

// writesAsNetHTTP sends each kind of request to the upstream at url
// through net/http's transport (theirs), then through the upstream
// transport (ours), and compares what the upstream read of each (got).
func writesAsNetHTTP(t *testing.T, url string, got chan seenRequest, theirs, ours http.RoundTripper) {
	large := strings.Repeat("conversation ", 10_000)
	srv := struct{ URL string }{url}
	cases := []struct {
		name string
		make func() *http.Request
	}{
		{"no body", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/models?page=2&q=a%20b", nil)
			return r
		}},
		{"empty POST", func() *http.Request { r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/x", nil); return r }},
		{"small in memory", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader([]byte(`{"a":1}`)))
			r.Header["Authorization"] = []string{"Bearer k"}
			r.Header["X-Multi"] = []string{"one", "two"}
			r.Header["X-Tab"] = []string{"a\tb"}
			r.Close = true
			return r
		}},
		{"small in memory, let go once sent", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", nil)
			r.Body, r.ContentLength = &onceReader{b: []byte(large[:3000])}, 3000
			return r
		}},
		{"large in memory", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", nil)
			r.Body, r.ContentLength = &onceReader{b: []byte(large)}, int64(len(large))
			return r
		}},
		{"reader of known length", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", io.NopCloser(strings.NewReader(large[:5000])))
			r.ContentLength = 5000
			return r
		}},
		{"long reader of known length", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", io.NopCloser(strings.NewReader(large)))
			r.ContentLength = int64(len(large))
			return r
		}},
		{"unknown length", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", io.NopCloser(strings.NewReader("chunks")))
			return r
		}},
		{"host set", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader("{}"))
			r.Host = "api.example.com"
			r.Header["User-Agent"] = []string{"parley"}
			return r
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want, have seenRequest
			for i, rt := range []http.RoundTripper{theirs, ours} {
				resp, err := rt.RoundTrip(c.make())
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				s := <-got
				if i == 0 {
					want = s
				} else {
					have = s
				}
			}
			if !reflect.DeepEqual(have, want) {
				t.Errorf("the upstream read\n%+v\nwant what net/http sends\n%+v", have, want)
			}
		})
	}
}

// TestDispatcherClosesIdleConnections: a dispatcher a reload replaces
// closes its upstreams' idle connections rather than leave them open until
// they expire.
func TestDispatcherClosesIdleConnections(t *testing.T) {
	srv, cc := countedServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "{}")
	})
	hb, err := NewHTTPBackend("up", messages.Upstream{}, srv.URL, HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRouter([]config.Model{{Name: "m", Upstream: "up"}, {Name: "n", Upstream: "up"}},
		map[string]UpstreamSpec{"up": {Name: "up", Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Backend: hb}})
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := hb.send(context.Background(), &translate.Outgoing{Path: "/v1/messages", Body: []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if cc.closed.Load() != 0 {
		t.Fatal("the connection closed after one request")
	}
	New(r).CloseIdleConnections()
	waitFor(t, "the idle connection closed", func() bool { return cc.closed.Load() == 1 })
}

// TestRedirectIsNotFollowed: an upstream's redirect is its answer, not
// followed: the host it names gets nothing (the upstream's key among the
// headers), and the client gets a 502 that says a redirect came, without
// saying where to.
func TestRedirectIsNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		_, _ = io.WriteString(w, "{}")
	}))
	defer other.Close()
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			http.Redirect(w, r, other.URL+"/v1/messages?account=acct-secret", status)
		}))
		d := jsonDispatcher(t, "messages", srv.URL)
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				for _, e := range d.Stream(context.Background(), chatRequest(true), &Call{}) {
					if e != nil {
						err = e
					}
				}
			} else {
				_, err = d.Generate(context.Background(), chatRequest(false), &Call{})
			}
			e := translate.ToProto(err)
			if err == nil || translate.HTTPStatusOf(e) != http.StatusBadGateway || !strings.Contains(e.GetMessage(), "redirect (HTTP "+strconv.Itoa(status)+")") {
				t.Errorf("%d, stream %v: %v (status %d), want a 502 that says a redirect came", status, stream, err, translate.HTTPStatusOf(e))
			}
			if strings.Contains(e.GetMessage(), other.URL) || strings.Contains(e.GetMessage(), "acct-secret") {
				t.Errorf("%d: the error names where the redirect points: %q", status, e.GetMessage())
			}
		}
		srv.Close()
	}
	if n := elsewhere.Load(); n > 0 {
		t.Errorf("the host a redirect named got %d requests", n)
	}
}

// TestBodyGivenAgainIsLetGoOnceTaken: the reader GetBody gives for a
// request sent again (a kept connection found closed) lets the body go
// once it is taken to its end, as the first reader does; before that,
// GetBody gives it whole.
func TestBodyGivenAgainIsLetGoOnceTaken(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 3000)
	s := &sentBody{b: body}
	first := &onceReader{b: body, sent: s}
	if _, err := io.ReadAll(io.LimitReader(first, 100)); err != nil {
		t.Fatal(err)
	}
	again, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(again)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetBody gave %d bytes (%v), want the whole body of %d", len(got), err, len(body))
	}
	if _, err := s.open(); err == nil {
		t.Error("GetBody gave the body again once a reader had taken it to its end")
	}
}
