package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// The baseline: net/http/httputil.ReverseProxy in front of a mock. It
// parses nothing and translates nothing, so what it costs is what any Go
// HTTP proxy must pay for the same bytes: the floor Parley is held to.

// proxyHealthPath is answered by the proxy itself, not relayed.
const proxyHealthPath = "/bench-proxy-healthz"

// serveProxy runs the reverse proxy in this process until it is killed:
// the benchmark's binary re-executed with -serve-proxy.
func serveProxy(target, listen string) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("-target: %w", err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { rewrite(r, u) }, Transport: upstreamTransport()}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == proxyHealthPath {
			w.WriteHeader(http.StatusOK)
			return
		}
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	// The same server settings as Parley's: no write timeout, since
	// streams last as long as the upstream talks.
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	return srv.Serve(ln)
}

// rewrite points the request at the upstream. A body of known length is
// handed on as exactly that many bytes: the transport reads once more
// after the declared length to check for extra bytes, and when the
// upstream has already answered, the server has closed the inbound body
// by then, so that read fails and the transport tears the upstream
// connection down mid-reply (golang/go#40747: about one stream in a
// hundred at c=1, "read error during body copy: use of closed network
// connection"). Parley reads a request's body whole before it sends
// anything, so it never meets the race.
func rewrite(r *httputil.ProxyRequest, upstream *url.URL) {
	r.SetURL(upstream)
	if r.In.ContentLength > 0 {
		r.Out.Body = io.NopCloser(io.LimitReader(r.In.Body, r.In.ContentLength))
	}
}

// upstreamTransport is the proxy's client toward the mock, set as Parley
// sets its own toward an upstream (dispatch.NewTransport): the default
// transport with 64 idle connections per host and no compression asked
// for. With the default two idle connections, the baseline would pay for
// new connections at c=32 and look slower than it is.
func upstreamTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = 120 * time.Second
	tr.MaxIdleConnsPerHost = 64
	tr.DisableCompression = true
	return tr
}

// proxyRoleEnv marks a process started to serve as the proxy, so that a
// test binary, whose main is the test runner's, knows it too.
const proxyRoleEnv = "PARLEY_BENCH_ROLE"

// startProxy runs a reverse proxy to mockURL as a process of its own,
// with env added to its environment.
func startProxy(ctx context.Context, tmp, mockURL, label string, env []string) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	return startProcess(ctx, spec{
		name: "reverse proxy", addr: addr, health: proxyHealthPath,
		log:  filepath.Join(tmp, "proxy-"+label+".log"),
		env:  append([]string{proxyRoleEnv + "=proxy"}, env...),
		argv: []string{self, "-serve-proxy", "-target", mockURL, "-listen", addr},
	})
}
