package dispatch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/parleyhq/parley/internal/offstack"
)

// upstreamTransport carries the requests of one upstream. A request to an
// upstream that speaks HTTP/1.1, in plain HTTP (a model served in the same
// cluster or on the same host, as vLLM, Ollama or a sidecar are) or over
// TLS, is written and its reply read on the caller's goroutine, over a
// connection of its own pool; every other request (to a host that chose
// HTTP/2 when offered it, one that goes through a proxy, and the first
// ones to an upstream over TLS, whose answer tells which it speaks:
// transport_tls.go) is carried by net/http's transport, the fallback.
//
// net/http's transport keeps two goroutines per connection, one writing
// requests and one reading replies, and hands each request and reply
// between them and the caller over channels: two goroutine switches per
// request, and two more stacks, a reader's buffer and a writer's for every
// stream held open while its model thinks. Here the caller's goroutine
// does both, so a held stream is the connection and its read buffer only.
//
// What net/http's reader goroutine also does, noticing that the server
// closed a connection that sits idle, is done when a connection is taken
// from the pool: a look at its socket that does not wait (alive). A POST
// is never sent twice: as net/http does, a request whose connection turns
// out closed is retried only when nothing of it was written.
type upstreamTransport struct {
	fallback *http.Transport
	header   time.Duration
	idleFor  time.Duration
	maxIdle  int

	// proxied caches, per host, whether the environment's proxy settings
	// send its requests through a proxy.
	proxied sync.Map // string -> bool
	// tlsConfigs holds the TLS configuration of each host's connections
	// (dialTLS); offerH2 is whether they offer HTTP/2, as the fallback's
	// do; h1 holds the addresses whose upstream answered over TLS in
	// HTTP/1.1.
	tlsConfigs sync.Map // host -> *tls.Config
	offerH2    bool
	h1         sync.Map // address -> struct{}

	mu      sync.Mutex
	idle    map[string][]*upstreamConn
	sweeper *time.Timer
}

// newUpstreamTransport returns the transport of an upstream, over
// fallback's dialer and limits.
func newUpstreamTransport(fallback *http.Transport) *upstreamTransport {
	idleFor := fallback.IdleConnTimeout
	if idleFor <= 0 {
		idleFor = 90 * time.Second
	}
	maxIdle := fallback.MaxIdleConnsPerHost
	if maxIdle <= 0 {
		maxIdle = http.DefaultMaxIdleConnsPerHost
	}
	return &upstreamTransport{fallback: fallback, header: fallback.ResponseHeaderTimeout, idleFor: idleFor, maxIdle: maxIdle,
		idle: map[string][]*upstreamConn{}, offerH2: fallback.ForceAttemptHTTP2}
}

// upstreamConn is one connection to an upstream of HTTP/1.1, plain or
// over TLS.
type upstreamConn struct {
	t      *upstreamTransport
	key    string
	conn   net.Conn
	in     connReader
	idleAt time.Time
	reused bool
	// secure is set for a connection over TLS.
	secure bool
	// raw, peek and open are alive's (socket_unix.go), made at its
	// first look.
	raw  syscall.RawConn
	peek func(fd uintptr) bool
	open bool
}

// RoundTrip implements http.RoundTripper.
func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	secure := req.URL.Scheme == "https"
	if !secure && req.URL.Scheme != "http" || req.URL.Host == "" || t.viaProxy(req) {
		return t.fallback.RoundTrip(req)
	}
	addr := hostPort(req.URL)
	if secure {
		if _, ok := t.h1.Load(addr); !ok {
			return t.learn(req, addr)
		}
	}
	if err := validRequest(req); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := req.Context()
	for {
		c, err := t.conn(ctx, addr, secure, req.URL.Hostname())
		if errors.Is(err, errChoseH2) {
			return t.fallback.RoundTrip(req)
		}
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, retry, err := c.roundTrip(req)
		if err == nil {
			return resp, nil
		}
		if !retry || ctx.Err() != nil {
			closeBody(req)
			return nil, err
		}
	}
}

// viaProxy reports whether the environment's proxy settings send req
// through a proxy; they are read once, as net/http reads them.
func (t *upstreamTransport) viaProxy(req *http.Request) bool {
	if t.fallback.Proxy == nil {
		return false
	}
	if v, ok := t.proxied.Load(req.URL.Host); ok {
		return v.(bool)
	}
	p, err := t.fallback.Proxy(req)
	v := err != nil || p != nil
	t.proxied.Store(req.URL.Host, v)
	return v
}

// validRequest refuses what net/http's transport would refuse: a method
// or a header field name that is not a token, a header value with a
// control character (a line break would end the field early).
func validRequest(req *http.Request) error {
	for i := 0; i < len(req.Method); i++ {
		if !isTokenByte(req.Method[i]) {
			return fmt.Errorf("upstream request: invalid method %q", req.Method)
		}
	}
	for k, vs := range req.Header {
		if k == "" {
			return errors.New("upstream request: an empty header field name")
		}
		for i := 0; i < len(k); i++ {
			if !isTokenByte(k[i]) {
				return fmt.Errorf("upstream request: invalid header field name %q", k)
			}
		}
		for _, v := range vs {
			for i := 0; i < len(v); i++ {
				if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
					return fmt.Errorf("upstream request: invalid value of the header field %q", k)
				}
			}
		}
	}
	return nil
}

// isTokenByte reports whether c may be part of a header field's name
// (RFC 9110's tchar).
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c < 0x80 && strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// hostPort is the address a URL's requests go to.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// conn returns an idle connection to addr that is still open, or a new
// one, over TLS when secure (host is the name the upstream's certificate
// is checked against).
func (t *upstreamTransport) conn(ctx context.Context, addr string, secure bool, host string) (*upstreamConn, error) {
	key := addr
	if secure {
		key = "tls " + addr
	}
	now := time.Now()
	for {
		t.mu.Lock()
		cs := t.idle[key]
		if len(cs) == 0 {
			t.mu.Unlock()
			break
		}
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[key] = cs[:len(cs)-1]
		t.mu.Unlock()
		if now.Sub(c.idleAt) < t.idleFor && c.alive() {
			c.reused = true
			return c, nil
		}
		_ = c.conn.Close()
	}
	// Dialling goes deeper than a stream waits (the resolver, the
	// socket's setup): on the request's goroutine it would leave it a
	// stack twice the size for as long as its stream is open.
	var nc net.Conn
	var err error
	if secure {
		offstack.Run(func() { nc, err = t.dialTLS(ctx, addr, host) })
	} else {
		offstack.Run(func() { nc, err = t.dial(ctx, addr) })
	}
	if err != nil {
		return nil, err
	}
	c := &upstreamConn{t: t, key: key, conn: nc, secure: secure}
	c.in.conn = nc
	return c, nil
}

func (t *upstreamTransport) dial(ctx context.Context, addr string) (net.Conn, error) {
	if t.fallback.DialContext != nil {
		return t.fallback.DialContext(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// heads are the buffers a request's head is written in, with its body
// when that is small, shared by the connections: a connection holds none
// between requests.
var heads = sync.Pool{New: func() any { b := make([]byte, 0, 2<<10); return &b }}

// Bodies and heads.
const (
	// maxJoined is the largest body not in memory copied after its head,
	// to go in the head's write.
	maxJoined = 16 << 10
	// maxPooledHead bounds the head buffers kept for other requests.
	maxPooledHead = 64 << 10
)

// write sends req on the connection: its head in one buffer and its body
// with it in one write (a body in memory beside the head, a writev),
// where net/http writes the head through a buffer of its own and the
// body through another, a write or two more. What the head here does not
// cover (a body of unknown length, trailers, a URL that is not a path)
// net/http's own request writer sends.
func (c *upstreamConn) write(req *http.Request, out *countingWriter) error {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	mem, inMemory := req.Body.(*onceReader)
	if req.URL.Opaque != "" || len(req.TransferEncoding) > 0 || len(req.Trailer) > 0 || strings.IndexByte(host, '%') >= 0 ||
		req.ContentLength < 0 || req.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody {
		bw := bufio.NewWriterSize(out, writeBufferSize)
		if err := req.Write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	defer closeBody(req)
	bp := heads.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledHead {
			heads.Put(bp)
		}
	}()
	h := (*bp)[:0]
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	h = append(h, method...)
	h = append(h, ' ')
	h = append(h, req.URL.RequestURI()...)
	h = append(h, " HTTP/1.1\r\nHost: "...)
	h = append(h, host...)
	h = append(h, "\r\n"...)
	if _, ok := req.Header["User-Agent"]; !ok {
		h = append(h, "User-Agent: Go-http-client/1.1\r\n"...)
	}
	if req.Close && req.Header.Get("Connection") == "" {
		h = append(h, "Connection: close\r\n"...)
	}
	if req.ContentLength > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		h = append(h, "Content-Length: "...)
		h = strconv.AppendInt(h, req.ContentLength, 10)
		h = append(h, "\r\n"...)
	}
	for k, vs := range req.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		for _, v := range vs {
			h = append(h, k...)
			h = append(h, ": "...)
			h = append(h, v...)
			h = append(h, "\r\n"...)
		}
	}
	h = append(h, "\r\n"...)
	n := req.ContentLength
	var err error
	switch {
	case n == 0:
		_, err = out.Write(h)
	case inMemory && int64(len(mem.b)) == n:
		var w int64
		if c.secure {
			// Over TLS each write is a record of its own: a body that
			// is not large goes after its head, in one.
			if n <= maxJoined {
				h = append(h, mem.b...)
				_, err = out.Write(h)
			} else if _, err = out.Write(h); err == nil {
				_, err = out.Write(mem.b)
			}
			w = out.n
		} else {
			bufs := net.Buffers{h, mem.b}
			w, err = bufs.WriteTo(out.w)
			out.n += w
		}
		mem.b = nil // sent: the request, held while its reply is read, lets go of it
		if w > 0 {
			// Begun, it is not sent again (rewind): GetBody lets go too.
			mem.taken()
		}
	case n <= maxJoined:
		at := len(h)
		h = slices.Grow(h, int(n))[:at+int(n)]
		if _, err = io.ReadFull(req.Body, h[at:]); err != nil {
			err = fmt.Errorf("reading the request body: %w", err)
			break
		}
		_, err = out.Write(h)
	default:
		if _, err = out.Write(h); err == nil {
			var w int64
			w, err = out.ReadFrom(io.LimitReader(req.Body, n))
			if err == nil && w < n {
				err = fmt.Errorf("reading the request body: %w", io.ErrUnexpectedEOF)
			}
		}
	}
	*bp = h[:0]
	return err
}

// aLongTimeAgo is a deadline in the past, which ends a read or write
// waiting on a connection.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip sends req on c and reads its reply's head. retry is set when
// the request failed on a reused connection before any of it was written
// and its body can be sent again.
func (c *upstreamConn) roundTrip(req *http.Request) (resp *http.Response, retry bool, err error) {
	ctx := req.Context()
	b := &upstreamBody{c: c, ctx: ctx}
	b.out.w = c.conn
	b.stop = context.AfterFunc(ctx, b.cancel)
	if err = c.write(req, &b.out); err != nil {
		if b.out.n == 0 && c.reused && !b.cancelled.Load() {
			b.stop()
			_ = c.conn.Close()
			return nil, rewind(req), err
		}
		// The upstream may have answered before it stopped reading
		// (a body too large, a key refused): its reply says more than
		// the broken write.
		if b.out.n > 0 && !b.cancelled.Load() {
			if resp, rerr := c.readHead(req, b); rerr == nil {
				resp.Close = true
				return b.own(resp), false, nil
			}
		}
		return nil, false, b.fail(err)
	}
	resp, err = c.readHead(req, b)
	if err != nil {
		return nil, false, b.fail(err)
	}
	return b.own(resp), false, nil
}

// rewind readies req's body to be sent again, and reports whether it
// could.
func rewind(req *http.Request) bool {
	if req.Body == nil || req.Body == http.NoBody {
		return true
	}
	if req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	req.Body = body
	return true
}

// readHead reads a reply's head, skipping informational replies, within
// the header timeout. It waits for the head's first bytes holding no
// buffer (a model may think for a while before its first byte), then
// reads the head with a shared reader, and puts back what that read of
// the body.
func (c *upstreamConn) readHead(req *http.Request, b *upstreamBody) (*http.Response, error) {
	if c.t.header > 0 {
		b.readDeadline(time.Now().Add(c.t.header))
	}
	if c.in.Buffered() == 0 {
		if err := c.in.fill(); err != nil {
			return nil, c.headError(err)
		}
	}
	br := headReaders.Get().(*bufio.Reader)
	br.Reset(&c.in)
	defer func() {
		br.Reset(nil)
		headReaders.Put(br)
	}()
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, c.headError(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode < 100 {
			if c.t.header > 0 {
				b.readDeadline(time.Time{})
			}
			if n := br.Buffered(); n > 0 {
				rest, _ := br.Peek(n)
				c.in.unread(rest)
			}
			return resp, nil
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, errors.New("the upstream switched protocols")
		}
	}
}

// headError names an end of a reused connection before any reply as the
// upstream closing it.
func (c *upstreamConn) headError(err error) error {
	if errors.Is(err, io.EOF) && c.reused {
		return errServerClosed
	}
	return err
}

// errServerClosed is the error of a reused connection the upstream closed
// before answering.
var errServerClosed = fmt.Errorf("the upstream closed the connection before answering: %w", io.EOF)

// upstreamBody is a reply's body read from an upstreamConn, and what
// its request needs from being sent to its end.
type upstreamBody struct {
	c    *upstreamConn
	ctx  context.Context
	body io.Reader
	// out counts what was written of the request.
	out countingWriter
	// stop stops the cancellation's watch (cancel); close is the
	// reply's Connection: close.
	stop      func() bool
	cancelled atomic.Bool
	close     bool
	// state is open, then ended (read to its end, the connection given
	// back) or closed.
	state atomic.Int32
}

const (
	bodyOpen int32 = iota
	bodyEnded
	bodyClosed
)

// cancel ends whatever waits on the connection, when the request's
// context is done.
func (b *upstreamBody) cancel() {
	b.cancelled.Store(true)
	_ = b.c.conn.SetDeadline(aLongTimeAgo)
}

// readDeadline sets the connection's read deadline, unless a cancellation
// has set one in the past: setting it after the cancellation would undo
// it, so it is looked at after.
func (b *upstreamBody) readDeadline(t time.Time) {
	_ = b.c.conn.SetReadDeadline(t)
	if b.cancelled.Load() {
		_ = b.c.conn.SetDeadline(aLongTimeAgo)
	}
}

// fail closes the connection of a request that got no reply, and returns
// its error, the context's when it was cancelled.
func (b *upstreamBody) fail(err error) error {
	b.stop()
	_ = b.c.conn.Close()
	if b.cancelled.Load() {
		return b.ctx.Err()
	}
	return err
}

// own takes resp's body so that the connection goes back to the pool
// once it has been read to its end, and is closed when it is not.
//
// The body is read by Parley's readers of its framing, over the
// connection's reader (upstream_read.go), not by the body ReadResponse
// made over the head's reader, which goes back to its pool.
func (b *upstreamBody) own(resp *http.Response) *http.Response {
	b.close = resp.Close || resp.Request.Close
	switch {
	case resp.Body == http.NoBody:
		b.finish(true)
		return resp
	case len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked":
		cb := &chunkedBody{in: &b.c.in}
		cb.line = cb.lineBuf[:0]
		b.body = cb
	case resp.ContentLength >= 0:
		b.body = &lengthBody{in: &b.c.in, n: resp.ContentLength}
	default:
		b.body, b.close = untilCloseBody{in: &b.c.in}, true
	}
	resp.Body = b
	return resp
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	switch b.state.Load() {
	case bodyEnded:
		return 0, io.EOF
	case bodyClosed:
		return 0, errBodyClosed
	}
	n, err := b.body.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.finish(true)
	case err != nil:
		b.finish(false)
		if b.cancelled.Load() {
			err = b.ctx.Err()
		}
	}
	return n, err
}

var errBodyClosed = errors.New("read on a closed reply body")

// Close closes a body not read to its end with its connection, as
// net/http does: what is left of it may be long.
func (b *upstreamBody) Close() error {
	b.finish(false)
	return nil
}

// finish gives the connection back to the pool when the reply was read
// to its end and nothing cancelled it, and closes it otherwise; only its
// first call does anything.
func (b *upstreamBody) finish(ended bool) {
	state := bodyClosed
	if ended {
		state = bodyEnded
	}
	if !b.state.CompareAndSwap(bodyOpen, state) {
		return
	}
	stopped := b.stop()
	// Bytes already read past the reply's end answer nothing asked.
	if ended && stopped && !b.close && b.c.in.Buffered() == 0 {
		b.c.t.put(b.c)
		return
	}
	_ = b.c.conn.Close()
}

// put keeps c for the next request to its host, unless the pool of that
// host is full.
func (t *upstreamTransport) put(c *upstreamConn) {
	c.idleAt = time.Now()
	t.mu.Lock()
	if len(t.idle[c.key]) >= t.maxIdle {
		t.mu.Unlock()
		_ = c.conn.Close()
		return
	}
	t.idle[c.key] = append(t.idle[c.key], c)
	if t.sweeper == nil {
		t.sweeper = time.AfterFunc(t.idleFor, t.sweep)
	}
	t.mu.Unlock()
}

// sweep closes the connections idle for longer than idleFor, and runs
// again while any is left.
func (t *upstreamTransport) sweep() {
	now := time.Now()
	var old []*upstreamConn
	t.mu.Lock()
	for key, cs := range t.idle {
		kept := cs[:0]
		for _, c := range cs {
			if now.Sub(c.idleAt) >= t.idleFor {
				old = append(old, c)
			} else {
				kept = append(kept, c)
			}
		}
		clear(cs[len(kept):])
		if len(kept) == 0 {
			delete(t.idle, key)
		} else {
			t.idle[key] = kept
		}
	}
	t.sweeper = nil
	if len(t.idle) > 0 {
		t.sweeper = time.AfterFunc(t.idleFor/2, t.sweep)
	}
	t.mu.Unlock()
	for _, c := range old {
		_ = c.conn.Close()
	}
}

// CloseIdleConnections closes the connections no request is using, the
// fallback's too.
func (t *upstreamTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*upstreamConn{}
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			_ = c.conn.Close()
		}
	}
	t.fallback.CloseIdleConnections()
}

// countingWriter counts the bytes written through it to a connection.
type countingWriter struct {
	w net.Conn
	n int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.n += int64(n)
	return n, err
}

// ReadFrom writes a body not in memory through a pooled buffer, for
// write and for net/http's request writer (through its bufio.Writer),
// rather than through a 1 KiB buffer.
func (w *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	return io.CopyBuffer(writerOnly{w}, r, *buf)
}

// writerOnly hides a writer's ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }

// copyBuffers are the buffers a body not in memory is copied through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
