package dispatch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/messages"
)

// tlsUpstream starts a test server over TLS, HTTP/1.1 alone or with
// HTTP/2 offered, that counts its connections, and returns it with an
// upstream transport that trusts its certificate (connect and header
// timeouts of a second unless the options say otherwise).
func tlsUpstream(t *testing.T, h http.HandlerFunc, h2 bool, opts ...func(*http.Server)) (*httptest.Server, *connCounter, *upstreamTransport) {
	t.Helper()
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = h2
	srv.Config.ConnState = cc.track
	for _, o := range opts {
		o(srv.Config)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	nt := netTransport(time.Second, time.Second)
	nt.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	return srv, cc, newUpstreamTransport(nt)
}

// learnt has rt take the upstream at rawURL for one that speaks HTTP/1.1,
// as its first answer through net/http's transport would have it
// (TestTransportTLSCarriesHTTP1 has that answer teach it).
func learnt(t *testing.T, rt *upstreamTransport, rawURL string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	rt.h1.Store(hostPort(u), struct{}{})
}

// TestTransportTLSCarriesHTTP1: the first request to an upstream over TLS
// goes through net/http's transport, which learns that it speaks
// HTTP/1.1; the requests after it go one after another on one connection
// of the transport's own, whatever their size and framing (a length,
// chunks, a megabyte in records of every size), and every byte arrives
// both ways.
func TestTransportTLSCarriesHTTP1(t *testing.T) {
	srv, cc, rt := tlsUpstream(t, echo, false)
	echoFive(t, rt, srv.URL)
	big := strings.Repeat("a longer word ", 80_000)
	if _, got, err := post(t, rt, context.Background(), srv.URL, big); err != nil || got != big {
		t.Fatalf("a megabyte: %d bytes back of %d, %v", len(got), len(big), err)
	}
	if n := cc.opened.Load(); n != 2 {
		t.Errorf("6 requests one after another opened %d connections, want 2 (net/http's for the first, the transport's for the rest)", n)
	}
	if _, ok := rt.h1.Load(srv.Listener.Addr().String()); !ok {
		t.Error("an upstream of HTTP/1.1 alone is not taken for one")
	}
}

// TestTransportTLSHoldsNothingWhileWaiting: a reply over TLS that waits
// for its next bytes runs none of net/http's connection goroutines and
// holds no read buffer of the transport's, as over plain HTTP.
func TestTransportTLSHoldsNothingWhileWaiting(t *testing.T) {
	release := make(chan struct{})
	srv, _, rt := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first ")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "last")
	}, false)
	learnt(t, rt, srv.URL)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		rest, err := io.ReadAll(resp.Body)
		if err != nil {
			rest = []byte(err.Error())
		}
		got <- rest
	}()
	// The reader goroutine waits on the socket, not in TLS's Read.
	waitFor(t, "the reader waiting on its socket", func() bool {
		stacks := make([]byte, 1<<20)
		stacks = stacks[:runtime.Stack(stacks, true)]
		return bytes.Contains(stacks, []byte("dispatch.(*tlsSocket).wait"))
	})
	stacks := make([]byte, 1<<20)
	stacks = stacks[:runtime.Stack(stacks, true)]
	if bytes.Contains(stacks, []byte("net/http.(*persistConn)")) {
		t.Errorf("a held reply over TLS runs net/http's connection goroutines:\n%s", stacks)
	}
	for _, g := range bytes.Split(stacks, []byte("\n\n")) {
		if bytes.Contains(g, []byte("crypto/tls.(*Conn).readRecordOrCCS")) && bytes.Contains(g, []byte("parley/dispatch.")) {
			t.Errorf("a held reply over TLS waits inside TLS's Read:\n%s", g)
		}
	}
	if resp.Body.(*upstreamBody).c.in.buf != nil {
		t.Error("a waiting reply's connection holds a read buffer")
	}
	close(release)
	if rest := <-got; string(rest) != "last" {
		t.Fatalf("rest %q", rest)
	}
}

// TestTransportTLSLeavesHTTP2ToNetHTTP: an upstream that chooses HTTP/2
// is carried by net/http's transport, on one connection; one taken for an
// upstream of HTTP/1.1 that has turned to HTTP/2 is noticed when the
// transport opens a connection to it, which it closes, and is left to
// net/http's from then on.
func TestTransportTLSLeavesHTTP2ToNetHTTP(t *testing.T) {
	for _, turned := range []bool{false, true} {
		srv, cc, rt := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, r.Proto)
		}, true)
		if turned {
			learnt(t, rt, srv.URL)
		}
		for i := range 3 {
			_, got, err := post(t, rt, context.Background(), srv.URL, "{}")
			if err != nil || got != "HTTP/2.0" {
				t.Fatalf("turned %v, request %d: %q, %v", turned, i, got, err)
			}
		}
		want := int32(1)
		if turned {
			want = 2
		}
		if n := cc.opened.Load(); n != want {
			t.Errorf("turned %v: 3 requests opened %d connections, want %d", turned, n, want)
		}
		if _, ok := rt.h1.Load(srv.Listener.Addr().String()); ok {
			t.Errorf("turned %v: an upstream of HTTP/2 is taken for one of HTTP/1.1", turned)
		}
	}
}

// TestTransportTLSRefusesAnUntrustedUpstream: a certificate the roots do
// not vouch for ends the request before anything is sent, on net/http's
// connections and on the transport's own.
func TestTransportTLSRefusesAnUntrustedUpstream(t *testing.T) {
	var called atomic.Bool
	srv, _, _ := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) { called.Store(true) }, false,
		func(s *http.Server) { s.ErrorLog = log.New(io.Discard, "", 0) })
	for _, own := range []bool{false, true} {
		rt := newUpstreamTransport(netTransport(time.Second, time.Second))
		if own {
			learnt(t, rt, srv.URL)
		}
		_, _, err := post(t, rt, context.Background(), srv.URL, "{}")
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("own connection %v: %v, want a certificate's error", own, err)
		}
	}
	if called.Load() {
		t.Error("a request reached an upstream whose certificate is not trusted")
	}
}

// TestTransportTLSCancel: cancelling a request over TLS ends its wait for
// the head and for the body's next bytes at once, with the context's
// error, and closes the connection (checkCancel).
func TestTransportTLSCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv, cc, rt := tlsUpstream(t, holding(release), false)
	rt.header = time.Minute
	learnt(t, rt, srv.URL)
	checkCancel(t, rt, srv.URL, cc)
}

// TestTransportTLSHeaderTimeout: an upstream over TLS that sends no head
// within the header timeout fails the request with a timeout; one that
// accepts a connection and never answers its handshake, with a timeout
// within the connect timeout.
func TestTransportTLSHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv, _, rt := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}, false)
	rt.header = 50 * time.Millisecond
	learnt(t, rt, srv.URL)
	_, _, err := post(t, rt, context.Background(), srv.URL, "{}")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("no head: %v, want a timeout", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer func() { _ = c.Close() }()
		}
	}()
	rt = newUpstreamTransport(netTransport(100*time.Millisecond, time.Second))
	learnt(t, rt, "https://"+ln.Addr().String())
	start := time.Now()
	_, _, err = post(t, rt, context.Background(), "https://"+ln.Addr().String(), "{}")
	if !errors.As(err, &ne) || !ne.Timeout() || !strings.Contains(err.Error(), "TLS handshake timeout") {
		t.Fatalf("no handshake: %v, want the handshake's timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the handshake's timeout took %s", d)
	}
}

// TestTransportTLSIdleClosedByUpstream: an upstream over TLS that closed
// a connection while it sat idle costs nothing: the next request sees it
// closed and opens another.
func TestTransportTLSIdleClosedByUpstream(t *testing.T) {
	srv, cc, rt := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}, false, func(s *http.Server) { s.IdleTimeout = 20 * time.Millisecond })
	learnt(t, rt, srv.URL)
	for i := range 2 {
		if _, got, err := post(t, rt, context.Background(), srv.URL, "{}"); err != nil || got != "ok" {
			t.Fatalf("request %d: %q, %v", i, got, err)
		}
		waitFor(t, "the upstream closing the idle connection", func() bool { return cc.closed.Load() == int32(i+1) })
	}
	if n := cc.opened.Load(); n != 2 {
		t.Errorf("opened %d connections, want 2", n)
	}
}

// TestTransportErrorNamesTLSFailures: an upstream over TLS that cannot be
// reached is reported with why (a certificate not trusted, one for another
// name, an upstream that answers in plain HTTP), on net/http's connections
// and on the transport's own, naming no host.
func TestTransportErrorNamesTLSFailures(t *testing.T) {
	quiet := func(s *http.Server) { s.ErrorLog = log.New(io.Discard, "", 0) }
	secure, _, _ := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {}, false, quiet)
	plain, _ := countedServer(t, func(w http.ResponseWriter, r *http.Request) {}, quiet)
	trusting := func() *http.Transport {
		nt := netTransport(time.Second, time.Second)
		nt.TLSClientConfig = secure.Client().Transport.(*http.Transport).TLSClientConfig
		return nt
	}
	port := secure.Listener.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		name, url string
		fallback  *http.Transport
		want      string
	}{
		{"untrusted", secure.URL, netTransport(time.Second, time.Second), "its TLS certificate is not signed by an authority Parley trusts"},
		{"another name", "https://localhost:" + strconv.Itoa(port), trusting(), "its TLS certificate is not valid for its address"},
		{"plain HTTP", "https://" + plain.Listener.Addr().String(), trusting(), "it answered in plain HTTP, not TLS: its base_url should begin with http://"},
	} {
		for _, own := range []bool{false, true} {
			rt := newUpstreamTransport(c.fallback)
			if own {
				learnt(t, rt, c.url)
			}
			hb, err := NewHTTPBackend("up", messages.Upstream{}, c.url, HTTPOptions{Transport: rt})
			if err != nil {
				t.Fatal(err)
			}
			resp, _, err := hb.send(context.Background(), &translate.Outgoing{Path: "/v1/messages", Body: []byte("{}")})
			if err == nil {
				_ = resp.Body.Close()
				t.Fatalf("%s, own connection %v: the request went through", c.name, own)
			}
			var ue *translate.UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("%s, own connection %v: %v, want an upstream error", c.name, own, err)
			}
			want := `the upstream "up" could not be reached: ` + c.want
			if got := ue.Err.GetMessage(); got != want {
				t.Errorf("%s, own connection %v:\n got %s\nwant %s", c.name, own, got, want)
			}
			for _, host := range []string{"127.0.0.1", "localhost", "example.com"} {
				if strings.Contains(ue.Err.GetMessage(), host) {
					t.Errorf("%s: the message names %s", c.name, host)
				}
			}
		}
	}
}
