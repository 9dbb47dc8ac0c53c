package dispatch

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
)

// An upstream over TLS that speaks HTTP/1.1 is carried as a plain-HTTP one
// is: on the caller's goroutine, over a connection of the transport's own
// pool (upstreamTransport). Which protocol an upstream speaks is learnt
// from net/http's transport, which carries the requests to an upstream
// until one has been answered (learn): in HTTP/2, which most services
// choose, it goes on carrying them, its connections carrying many
// requests each; in HTTP/1.1, the transport's own connections take over.
// They offer what net/http's offer (HTTP/2 and HTTP/1.1, or HTTP/1.1
// alone when the fallback does not attempt HTTP/2), so that an upstream
// that turns to HTTP/2 is noticed, and left to net/http again.
//
// net/http's transport would keep two goroutines per connection, a 4 KB
// read buffer and a write buffer: for a stream held open while its model
// thinks, more than the TLS connection itself costs (its record buffer
// and its ciphers' state).

// errChoseH2 is dialTLS's error for an upstream that chose HTTP/2: the
// request goes to the fallback.
var errChoseH2 = errors.New("the upstream chose HTTP/2")

// learn sends req, to an upstream over TLS not known to speak HTTP/1.1,
// through net/http's transport, and notes an upstream that answered in
// HTTP/1.1. A custom TLS dialer is net/http's alone to use.
func (t *upstreamTransport) learn(req *http.Request, addr string) (*http.Response, error) {
	resp, err := t.fallback.RoundTrip(req)
	if err == nil && resp.ProtoMajor == 1 && resp.TLS != nil && t.fallback.DialTLSContext == nil {
		t.h1.Store(addr, struct{}{})
	}
	return resp, err
}

// errTLSHandshakeTimeout is the error of a TLS handshake that did not end
// within the connect timeout, a timeout as net/http's is.
var errTLSHandshakeTimeout error = handshakeTimeout{}

type handshakeTimeout struct{}

func (handshakeTimeout) Error() string   { return "TLS handshake timeout" }
func (handshakeTimeout) Timeout() bool   { return true }
func (handshakeTimeout) Temporary() bool { return true }

// tlsConfig is the configuration of the TLS connections to host: the
// fallback's (its roots, certificates and versions), made once per host.
func (t *upstreamTransport) tlsConfig(host string) *tls.Config {
	if v, ok := t.tlsConfigs.Load(host); ok {
		return v.(*tls.Config)
	}
	cfg := &tls.Config{}
	if t.fallback.TLSClientConfig != nil {
		cfg = t.fallback.TLSClientConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	if t.offerH2 {
		cfg.NextProtos = []string{"h2", "http/1.1"}
	}
	v, _ := t.tlsConfigs.LoadOrStore(host, cfg)
	return v.(*tls.Config)
}

// dialTLS opens a TLS connection to addr, host's, within the connect
// timeout. An upstream that chooses HTTP/2 is no longer taken for one of
// HTTP/1.1, and its connection is closed: errChoseH2.
func (t *upstreamTransport) dialTLS(ctx context.Context, addr, host string) (net.Conn, error) {
	nc, err := t.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(newTLSSocket(nc), t.tlsConfig(host))
	hctx := ctx
	if d := t.fallback.TLSHandshakeTimeout; d > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = nc.Close()
		if ctx.Err() == nil && hctx.Err() != nil {
			return nil, errTLSHandshakeTimeout
		}
		return nil, err
	}
	if tc.ConnectionState().NegotiatedProtocol == "h2" {
		t.h1.Delete(addr)
		_ = nc.Close()
		return nil, errChoseH2
	}
	return tc, nil
}
