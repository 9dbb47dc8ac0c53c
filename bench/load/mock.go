package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The mock upstreams: one loopback HTTP server per dialect, in the
// benchmark's own process, answering at once with a fixed reply. A fast
// upstream is what makes the gateway in front of it the thing measured,
// so a stream goes out in one write, the way a burst of buffered events
// leaves a real service's socket.

// mock is the upstream of one dialect.
type mock struct {
	dialect dialect
	url     string
	// whole is the JSON reply; stream the whole event stream, which a
	// held stream sends as head, then tail once released.
	whole, stream, head, tail []byte
	gate                      *gate
	srv                       *http.Server
}

// mocks holds the upstream of every dialect, and the gate their held
// streams wait on.
type mocks struct {
	byDialect map[dialect]*mock
	gate      *gate
	// certFile is the certificate the mocks serve HTTPS with, for the
	// targets to trust (SSL_CERT_FILE), and roots the same for this
	// process's direct calls; empty and nil for plain HTTP.
	certFile string
	roots    *x509.CertPool
}

// Upstream TLS: the mocks speak plain HTTP (tlsNone), or HTTPS with
// HTTP/1.1 alone (tlsHTTP1) or HTTP/2 offered too (tlsH2), as the
// services Parley calls in production do.
const (
	tlsNone  = ""
	tlsHTTP1 = "http1"
	tlsH2    = "h2"
)

// startMocks starts the four mock upstreams on free loopback ports,
// serving HTTPS as tlsMode says, with a certificate made in dir.
func startMocks(tlsMode, dir string) (*mocks, error) {
	ms := &mocks{byDialect: map[dialect]*mock{}, gate: newGate()}
	var cert *tls.Certificate
	if tlsMode != tlsNone {
		var err error
		if cert, ms.roots, ms.certFile, err = makeCert(dir); err != nil {
			return nil, err
		}
	}
	for _, d := range []dialect{messages, chat, responses, generate} {
		m, err := startMock(d, ms.gate, tlsMode, cert)
		if err != nil {
			ms.close()
			return nil, err
		}
		ms.byDialect[d] = m
	}
	return ms, nil
}

// close stops every mock, ending the streams still held.
func (ms *mocks) close() {
	ms.gate.release()
	for _, m := range ms.byDialect {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := m.srv.Shutdown(ctx); err != nil {
			_ = m.srv.Close()
		}
		cancel()
	}
}

func startMock(d dialect, g *gate, tlsMode string, cert *tls.Certificate) (*mock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if cert != nil {
		scheme = "https"
	}
	rep := replyFor(d)
	m := &mock{
		dialect: d, url: scheme + "://" + ln.Addr().String(), gate: g,
		whole: rep.whole, stream: bytes.Join(rep.events, nil),
		head: bytes.Join(rep.events[:rep.head], nil), tail: bytes.Join(rep.events[rep.head:], nil),
	}
	mux := http.NewServeMux()
	switch d {
	case messages:
		mux.HandleFunc("POST /v1/messages", m.serve)
	case chat:
		mux.HandleFunc("POST /v1/chat/completions", m.serve)
	case responses:
		mux.HandleFunc("POST /v1/responses", m.serve)
	case generate:
		mux.HandleFunc("POST /v1beta/models/{call}", m.serve)
	}
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if cert != nil {
		protos := []string{"h2", "http/1.1"}
		if tlsMode == tlsHTTP1 {
			protos = protos[1:]
			// A map that is not nil and holds no "h2" turns the
			// server's HTTP/2 off.
			m.srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		}
		m.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: protos, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, m.srv.TLSConfig)
	}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// makeCert makes a self-signed certificate for 127.0.0.1, writes it to
// dir for the targets to trust, and returns it with a pool that holds
// it, for this process's calls.
func makeCert(dir string) (*tls.Certificate, *x509.CertPool, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "parley-bench mock upstream"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, "", err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, "", err
	}
	file := filepath.Join(dir, "mock-upstream.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, nil, "", fmt.Errorf("writing the mocks' certificate: %w", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots, file, nil
}

// trustEnv is the environment that makes a target trust the mocks'
// certificate: Go's TLS reads its roots from SSL_CERT_FILE.
func (ms *mocks) trustEnv() []string {
	if ms.certFile == "" {
		return nil
	}
	return []string{"SSL_CERT_FILE=" + ms.certFile}
}

// serve answers one request: whole, streamed, or streamed and held.
func (m *mock) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	stream, err := m.wantsStream(r, body)
	if err != nil {
		http.Error(w, "decoding the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(m.whole)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if !bytes.Contains(body, []byte(holdSuffix)) && !strings.Contains(r.URL.Path, holdSuffix) {
		_, _ = w.Write(m.stream)
		return
	}
	m.hold(w, r)
}

// wantsStream reads whether the request asks for a stream: the
// content-generation dialect says so in its path, the others in the body.
func (m *mock) wantsStream(r *http.Request, body []byte) (bool, error) {
	if m.dialect == generate {
		return strings.HasSuffix(r.PathValue("call"), ":streamGenerateContent"), nil
	}
	var req struct {
		Stream bool `json:"stream"`
	}
	err := json.Unmarshal(body, &req)
	return req.Stream, err
}

// hold sends the first events of the stream, then waits for the gate (or
// the client leaving) before it sends the rest: a stream held open, as a
// model that thinks for a long time holds it. With the gate's beforeHead
// it sends nothing, not even its reply's head, until released: a model
// still reading a long conversation.
func (m *mock) hold(w http.ResponseWriter, r *http.Request) {
	released := m.gate.arrive()
	if m.gate.beforeHead {
		select {
		case <-released:
			_, _ = w.Write(m.stream)
		case <-r.Context().Done():
		}
		return
	}
	_, _ = w.Write(m.head)
	if err := http.NewResponseController(w).Flush(); err != nil {
		return
	}
	select {
	case <-released:
		_, _ = w.Write(m.tail)
	case <-r.Context().Done():
	}
}

// gate holds streams until it is released; after a release it holds the
// next ones again. beforeHead, set before any stream comes, holds them
// before their replies begin; arrived counts the streams it has held.
type gate struct {
	mu         sync.Mutex
	ch         chan struct{}
	beforeHead bool
	arrived    atomic.Int64
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

// wait returns the channel the streams arriving now wait on.
func (g *gate) wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch
}

// arrive is wait for a stream that has come, counted.
func (g *gate) arrive() <-chan struct{} {
	ch := g.wait()
	g.arrived.Add(1)
	return ch
}

// release lets every stream held so far finish.
func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.ch)
	g.ch = make(chan struct{})
}

// url returns the base URL of the mock of d.
func (ms *mocks) url(d dialect) string { return ms.byDialect[d].url }
