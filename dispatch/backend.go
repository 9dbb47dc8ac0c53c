package dispatch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/cloud"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/readall"
	"github.com/parleyhq/parley/secrets"
	"github.com/parleyhq/parley/telemetry"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/sse"
	"go.opentelemetry.io/otel/propagation"
)

// Backend is one upstream, canonical in and canonical out.
type Backend interface {
	// Generate returns a whole response. The request's Stream is false.
	Generate(ctx context.Context, req *parleyv1.Request, t translate.Target, call *Call) (*parleyv1.Response, error)
	// Stream returns the response as a stream. Nothing happens until the
	// sequence is ranged over; breaking out of the range ends the upstream
	// request. The request's Stream is true.
	Stream(ctx context.Context, req *parleyv1.Request, t translate.Target, call *Call) iter.Seq2[*parleyv1.StreamEvent, error]
	// CountTokens counts the input tokens of a request.
	CountTokens(ctx context.Context, req *parleyv1.Request, t translate.Target, call *Call) (*parleyv1.TokenCount, error)
}

// HTTPOptions are the per-upstream HTTP settings.
type HTTPOptions struct {
	ConnectTimeout time.Duration
	HeaderTimeout  time.Duration
	IdleTimeout    time.Duration
	// MaxReplyBytes bounds a whole reply body; 0 means 64 MiB.
	MaxReplyBytes int64
	// Stream bounds what is accepted of an event stream.
	Stream translate.StreamLimits
	// Transport overrides the HTTP transport (tests); nil builds one from
	// the timeouts.
	Transport http.RoundTripper
	// Scrub removes the keys Parley knows from the upstream's error
	// texts, before anything else sees them; nil removes nothing.
	Scrub *secrets.Scrubber
	// Cloud, when set, fits each request to the cloud that hosts the
	// dialect (its paths, body, credentials and error shapes).
	Cloud cloud.Adapter
}

// HTTPBackend calls an upstream service over HTTP in its dialect.
type HTTPBackend struct {
	name string
	up   translate.Upstream
	base *url.URL
	rt   http.RoundTripper
	opts HTTPOptions
	urls urlCache
}

var _ Backend = (*HTTPBackend)(nil)

// NewHTTPBackend returns a backend for the upstream called name, speaking
// up's dialect at baseURL.
func NewHTTPBackend(name string, up translate.Upstream, baseURL string, o HTTPOptions) (*HTTPBackend, error) {
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("upstream %s: base URL: %w", name, err)
	}
	if o.MaxReplyBytes <= 0 {
		o.MaxReplyBytes = 64 << 20
	}
	rt := o.Transport
	if rt == nil {
		rt = NewTransport(o.ConnectTimeout, o.HeaderTimeout)
	}
	return &HTTPBackend{name: name, up: up, base: base, rt: rt, opts: o}, nil
}

// KeepRedirect, an http.Client's CheckRedirect, makes a redirect the
// upstream's reply, which the caller turns into an error that says so
// (the music service's client). An upstream's backend calls its
// transport itself, which follows no redirect, and failure says so in
// the same way. Following one would
// send the request, the upstream's key among its headers, to whatever
// host the redirect names: net/http leaves out of a redirect to another
// host only the headers it knows to be secret, and the dialects carry
// their keys in x-api-key and x-goog-api-key too. Nor need a body be
// kept, while the upstream thinks, for a redirect to send again
// (sentBody).
func KeepRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Redirected is the error for a redirect KeepRedirect kept, from the
// service what names (`the upstream "x"`). Where it points is not said,
// as an upstream's address may name its account.
func Redirected(what string, status int) *parleyv1.Error {
	return &parleyv1.Error{
		Code: parleyv1.Code_CODE_FAILED_PRECONDITION,
		Message: fmt.Sprintf("%s answered with a redirect (HTTP %d), which Parley does not follow: "+
			"its base_url should be the address the redirect names", what, status),
		HttpStatus: http.StatusBadGateway,
	}
}

// CloseIdleConnections closes the upstream's connections no request is
// using.
func (b *HTTPBackend) CloseIdleConnections() {
	if c, ok := b.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// writeBufferSize is the buffer an upstream connection writes requests
// through.
const writeBufferSize = 1 << 10

// NewTransport is the transport of an upstream (upstreamTransport): the
// connect timeout for dialling and the TLS handshake, the header timeout
// for the reply's status line, and net/http's proxy and TLS settings.
func NewTransport(connect, header time.Duration) http.RoundTripper {
	return newUpstreamTransport(netTransport(connect, header))
}

// netTransport is net/http's transport with an upstream's settings: the
// default one's proxy and TLS settings, and the timeouts.
func netTransport(connect, header time.Duration) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = connect
	tr.ResponseHeaderTimeout = header
	tr.MaxIdleConnsPerHost = 64
	// Ask for bodies as they are: a compressed event stream would be
	// held back by the decompressor.
	tr.DisableCompression = true
	// A request's head fits in 1 KiB, and a bigger body is written
	// through the buffer rather than copied into it: the default 4 KiB
	// would be held by every connection, a held stream's included.
	tr.WriteBufferSize = writeBufferSize
	return tr
}

// url joins the base URL and a dialect path, which is written escaped (a
// model id may hold a '/' that is part of its segment). A base URL that
// already ends in the path's first segment ("https://host/v1" and
// "/v1/messages") is not doubled, since OpenAI-style base URLs are often
// written that way; nor is one the path already starts with.
func (b *HTTPBackend) url(out *translate.Outgoing) string {
	u := *b.base
	basePath := strings.TrimSuffix(u.EscapedPath(), "/")
	p := out.Path
	switch first, _, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/"); {
	case basePath != "" && strings.HasPrefix(p, basePath+"/"):
		basePath = ""
	case ok && strings.HasSuffix(basePath, "/"+first):
		p = strings.TrimPrefix(p, "/"+first)
	}
	u.RawPath = basePath + p
	if path, err := url.PathUnescape(u.RawPath); err == nil {
		u.Path = path
	} else {
		u.Path, u.RawPath = u.RawPath, ""
	}
	q := u.Query()
	for k, vs := range out.Query {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// urlCache holds the URLs a backend has sent requests to, made once for
// each path and query (an operation and a model, a handful an upstream)
// rather than joined, written and parsed again for every request.
type urlCache struct {
	mu sync.RWMutex
	m  map[urlKey]*url.URL
}

// urlKey is what an upstream request's URL is made of: its path and at
// most one query member, as every dialect asks (a content-generation
// stream's alt=sse); a request with more is not cached.
type urlKey struct{ path, name, value string }

// maxURLs bounds the URLs a backend keeps: past it (a configuration
// with thousands of models on one upstream), URLs are made per request.
const maxURLs = 512

// target returns the URL and host of out's request, shared: the caller
// copies the URL before handing it to a request.
func (b *HTTPBackend) target(out *translate.Outgoing) (*url.URL, error) {
	k, cacheable := urlKey{path: out.Path}, true
	switch len(out.Query) {
	case 0:
	case 1:
		for name, vs := range out.Query {
			k.name = name
			if len(vs) != 1 {
				cacheable = false
			} else {
				k.value = vs[0]
			}
		}
	default:
		cacheable = false
	}
	if cacheable {
		b.urls.mu.RLock()
		u := b.urls.m[k]
		b.urls.mu.RUnlock()
		if u != nil {
			return u, nil
		}
	}
	// Made as net/http makes a request's URL and host from the string,
	// once.
	r, err := http.NewRequest(http.MethodPost, b.url(out), nil)
	if err != nil {
		return nil, err
	}
	u := r.URL
	if cacheable {
		b.urls.mu.Lock()
		if b.urls.m == nil {
			b.urls.m = make(map[urlKey]*url.URL)
		}
		if len(b.urls.m) < maxURLs {
			b.urls.m[k] = u
		}
		b.urls.mu.Unlock()
	}
	return u, nil
}

// userAgent is the User-Agent of an upstream request that has none, one
// slice for all of them: the transport only reads it.
var userAgent = []string{"parley"}

// attempt is a request sent upstream, until its reply is done with. Its
// context is the caller's, which the transports watch themselves: besides
// the caller, only the reply's idle timeout ends an attempt early, and it
// closes the reply's body, so an attempt needs no context of its own
// (which cost every request a cancelCtx, its channel, and a map for the
// transport's watch of it).
type attempt struct {
	ctx  context.Context
	body io.ReadCloser
	// idle is set when the reply sent nothing for the idle timeout.
	idle atomic.Bool
}

// silent ends an attempt whose reply sent nothing for the idle timeout:
// closing its body ends a Read waiting on it, on every transport.
func (a *attempt) silent() {
	a.idle.Store(true)
	_ = a.body.Close()
}

// send makes the request. The reply's body must be closed when it is done
// with.
func (b *HTTPBackend) send(ctx context.Context, out *translate.Outgoing) (*http.Response, *attempt, error) {
	method := out.Method
	if method == "" {
		method = http.MethodPost
	}
	// A small body goes as the transport sends a body it knows is in
	// memory: with its head, in one write. A larger one is sent by a
	// reader that forgets it (sentBody); the transport flushes the head
	// of a body it does not know first, but a head and a body larger
	// than its write buffer take two writes anyway.
	var body io.Reader
	var sent *sentBody
	switch {
	case out.Body == nil:
	case len(out.Body) < writeBufferSize:
		body = bytes.NewReader(out.Body)
	default:
		sent = &sentBody{b: out.Body}
	}
	u, err := b.target(out)
	if err != nil {
		return nil, nil, err
	}
	// The request is made without a URL to parse, and given a copy of
	// the one made for its path.
	hreq, err := http.NewRequestWithContext(ctx, method, "", body)
	if err != nil {
		return nil, nil, err
	}
	hreq.URL = new(*u)
	hreq.Host = u.Host
	if sent != nil {
		hreq.ContentLength = int64(len(out.Body))
		hreq.Body = &onceReader{b: out.Body, sent: sent}
		hreq.GetBody = sent.open
	}
	// The encoder made the header for this request alone: it is the
	// request's, not copied into another map.
	if out.Header != nil {
		hreq.Header = out.Header
	}
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header["User-Agent"] = userAgent
	}
	// The attempt's span goes on in the upstream, when tracing is on.
	if telemetry.On() {
		telemetry.Propagator().Inject(ctx, propagation.HeaderCarrier(hreq.Header))
	}
	// A cloud signs the request as it will be sent: last.
	if b.opts.Cloud != nil {
		if err := b.opts.Cloud.Authorize(ctx, hreq, out.Body); err != nil {
			return nil, nil, b.scrub(err)
		}
	}
	// The transport is called as an http.Client with KeepRedirect would
	// call it, without the copy of the header the client makes for
	// redirects it would follow.
	resp, err := b.rt.RoundTrip(hreq)
	if sent != nil {
		sent.done()
	}
	if err != nil {
		return nil, nil, b.transportError(ctx, false, roundTripError{err})
	}
	if resp.Body == nil {
		// As http.Client gives it: some RoundTrippers leave an empty
		// body nil.
		resp.Body = http.NoBody
	}
	return resp, &attempt{ctx: ctx, body: resp.Body}, nil
}

// roundTripError is an error of the transport's, before any reply: the
// error http.Client would wrap in a url.Error.
type roundTripError struct{ err error }

func (e roundTripError) Error() string { return e.err.Error() }
func (e roundTripError) Unwrap() error { return e.err }

// sentBody is an upstream request's body. The request is held while the
// upstream thinks and while its reply is read, a stream's whole life, and
// a body (as large as the conversation) need not be. Its readers forget
// their bytes as they read them. GetBody gives it again to a transport
// that found a kept connection closed before any of it went, and has
// none to give once a reader has taken it to its end: the body is larger
// than the transports' write buffers (writeBufferSize), so some of it has
// been written by then, and no transport sends a request again after
// that but for a redirect, which Parley does not follow (failure),
// or an HTTP/2 server's refusal of the stream after the body went, which
// fails the attempt for the dispatcher to retry from the canonical
// request.
type sentBody struct {
	mu sync.Mutex
	b  []byte
}

func (s *sentBody) open() (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b == nil {
		return nil, errors.New("the request body was sent")
	}
	return &onceReader{b: s.b, sent: s}, nil
}

func (s *sentBody) done() {
	s.mu.Lock()
	s.b = nil
	s.mu.Unlock()
}

// onceReader reads b once, letting go of it at the end, and has sent (when
// set) let go of it too.
type onceReader struct {
	b    []byte
	sent *sentBody
}

func (r *onceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		r.taken()
		return 0, io.EOF
	}
	n := copy(p, r.b)
	if r.b = r.b[n:]; len(r.b) == 0 {
		r.taken()
	}
	return n, nil
}

// taken lets go of the body once all of it has been read or written.
func (r *onceReader) taken() {
	r.b = nil
	if r.sent != nil {
		r.sent.done()
	}
}

// Close does nothing: the transport may close a body while another of
// its goroutines still reads it.
func (r *onceReader) Close() error { return nil }

// transportError describes a failure to get a reply, without the URL (it
// may name an account) and without any header; idle says the reply's idle
// timeout ended it.
func (b *HTTPBackend) transportError(ctx context.Context, idle bool, err error) error {
	if ctx.Err() != nil && !idle {
		if pe := context.Cause(ctx); pe != nil {
			return pe
		}
		return ctx.Err()
	}
	d := b.up.Dialect()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || idle {
		msg := fmt.Sprintf("the upstream %q did not answer in time", b.name)
		if idle {
			msg = fmt.Sprintf("the upstream %q sent nothing for %s", b.name, b.opts.IdleTimeout)
		}
		return &translate.UpstreamError{Err: &parleyv1.Error{
			Code:       parleyv1.Code_CODE_DEADLINE_EXCEEDED,
			Message:    msg,
			HttpStatus: http.StatusGatewayTimeout,
			Origin:     &parleyv1.Origin{Dialect: d},
			Retry:      translate.Retry(translate.RetryFacts{Status: http.StatusGatewayTimeout}),
		}, Cause: err}
	}
	reason := "could not be reached"
	var rte roundTripError
	if errors.As(err, &rte) {
		var op *net.OpError
		if why := TLSFailure(rte.err); why != "" {
			reason = "could not be reached: " + why
		} else if errors.As(rte.err, &op) && op.Err != nil {
			reason = "could not be reached: " + op.Err.Error()
		} else if errors.Is(rte.err, io.EOF) || errors.Is(rte.err, io.ErrUnexpectedEOF) {
			reason = "closed the connection without a reply"
		}
	}
	return &translate.UpstreamError{Err: &parleyv1.Error{
		Code:       parleyv1.Code_CODE_UNAVAILABLE,
		Message:    fmt.Sprintf("the upstream %q %s", b.name, reason),
		HttpStatus: http.StatusBadGateway,
		Origin:     &parleyv1.Origin{Dialect: d},
		Retry:      translate.Retry(translate.RetryFacts{Status: http.StatusBadGateway}),
	}, Cause: err}
}

// TLSFailure says why a TLS connection to an upstream could not be made,
// or "" when err is not such a failure. It names no host: a certificate's
// names may name an account.
func TLSFailure(err error) string {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	switch {
	// http.Client makes the first of ErrSchemeMismatch; a transport,
	// called itself, returns the second.
	case errors.Is(err, http.ErrSchemeMismatch), errors.As(err, &record) && string(record.RecordHeader[:]) == "HTTP/":
		return "it answered in plain HTTP, not TLS: its base_url should begin with http://"
	case errors.As(err, &unknown):
		return "its TLS certificate is not signed by an authority Parley trusts"
	case errors.As(err, &hostname):
		return "its TLS certificate is not valid for its address"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "its TLS certificate has expired or is not yet valid"
	case errors.As(err, &invalid), errors.As(err, &verify):
		return "its TLS certificate is not valid"
	case errors.As(err, &record):
		return "it did not answer in TLS"
	case errors.As(err, &alert):
		return "it refused the TLS handshake (" + alert.Error() + ")"
	}
	return ""
}

// readAll reads a whole reply body of attempt a, bounded in size and in
// idle time. size is its Content-Length, -1 when not known.
func (b *HTTPBackend) readAll(a *attempt, body io.Reader, size int64) ([]byte, error) {
	r := newIdleReader(io.LimitReader(body, b.opts.MaxReplyBytes+1), b.opts.IdleTimeout, a)
	defer r.stop()
	data, err := readSized(r, size)
	if err != nil {
		return nil, b.transportError(a.ctx, a.idle.Load(), err)
	}
	if int64(len(data)) > b.opts.MaxReplyBytes {
		return nil, translate.UpstreamProtocol(b.up.Dialect(), fmt.Errorf("reply larger than %d bytes", b.opts.MaxReplyBytes))
	}
	return data, nil
}

// presized is the largest reply readSized makes room for at once.
const presized = 1 << 20

// readSized reads r to its end: a body whose length is known (size) into
// one slice of that length (readall.Sized). Up to presized bytes: the
// slice is made before any of the body comes, on the upstream's word, and
// a larger body is read by io.ReadAll, as one of unknown length is.
func readSized(r io.Reader, size int64) ([]byte, error) {
	if size > presized {
		size = -1
	}
	return readall.Sized(r, size)
}

// failure decodes a non-2xx reply.
func (b *HTTPBackend) failure(a *attempt, resp *http.Response) error {
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		// Not followed: the transport is called itself (send).
		e := Redirected(fmt.Sprintf("the upstream %q", b.name), resp.StatusCode)
		e.Origin = &parleyv1.Origin{Dialect: b.up.Dialect()}
		return translate.UpstreamFailed(e)
	}
	body, err := b.readAll(a, io.LimitReader(resp.Body, 1<<20), -1)
	if err != nil {
		body = nil
	}
	var e *parleyv1.Error
	if b.opts.Cloud != nil {
		e = b.opts.Cloud.DecodeError(resp.StatusCode, resp.Header, body)
	}
	if e == nil {
		e = b.up.DecodeError(resp.StatusCode, resp.Header, body)
	}
	b.opts.Scrub.Error(e)
	if e.GetRetry() == nil {
		e.Retry = translate.Retry(translate.ReplyRetryFacts(resp.StatusCode, resp.Header))
	}
	return translate.UpstreamFailed(e)
}

func ok(status int) bool { return status >= 200 && status <= 299 }

// encode builds the upstream request: the client's own body with the model
// swapped when the upstream's dialect can send it on (the same-dialect
// fast path), else the canonical request encoded.
func (b *HTTPBackend) encode(req *parleyv1.Request, t translate.Target, call *Call) (out *translate.Outgoing, err error) {
	call.Forwarded, call.Reply = false, nil
	call.ReleaseFrames()
	if call.Sent != nil {
		defer func() {
			if err == nil {
				call.Sent(out.Path, out.Body)
			}
		}()
	}
	if f, can := b.up.(translate.Forwarder); can && call.Source.Body != nil && call.Source.Dialect == b.up.Dialect() {
		// A dialect whose decision walks the body deep (content
		// generation's written form) walks it off the stack itself.
		fwd, ok, err := f.Forward(req, &call.Source, t)
		if err != nil {
			return nil, err
		}
		if ok {
			// The reply is relayed as it comes too, unless other
			// upstreams speak this one's dialect: its opaque values must
			// then reach the client sealed with their maker's name
			// (translate.Target.Shared), so Parley renders it.
			call.Forwarded = !t.Shared
			// The body goes on as it came once. Another attempt
			// encodes the canonical request, which is held for it
			// anyway: the client's body, as large as its conversation,
			// need not be held beside it while the upstream thinks.
			call.Source.Body = nil
			return fwd, b.prepare(cloud.OpGenerate, fwd, t)
		}
	}
	// Written on the request's stack: what a dialect writes deep it
	// writes off it by itself (jsonx.EncodeOffStack).
	out, err = b.up.EncodeRequest(req, t)
	if err != nil {
		return nil, err
	}
	out.Dropped = append(out.Dropped, translate.ForeignSettings(req, b.up.Dialect())...)
	return out, b.prepare(cloud.OpGenerate, out, t)
}

// prepare fits an encoded request to the upstream's cloud, if it has one.
func (b *HTTPBackend) prepare(op cloud.Op, out *translate.Outgoing, t translate.Target) error {
	if b.opts.Cloud == nil {
		return nil
	}
	return b.opts.Cloud.Prepare(op, out, t)
}

// Generate implements Backend.
func (b *HTTPBackend) Generate(ctx context.Context, req *parleyv1.Request, t translate.Target, call *Call) (*parleyv1.Response, error) {
	out, err := b.encode(req, t, call)
	if err != nil {
		return nil, err
	}
	call.Dropped = out.Dropped
	body, err := b.exchange(ctx, out)
	if err != nil {
		return nil, err
	}
	resp, err := b.up.DecodeResponse(t, body)
	if err == nil && call.Forwarded {
		call.Reply = body
	}
	return resp, b.scrub(err)
}

// scrub removes the keys Parley knows from an error made of what the
// upstream sent (its error, or a reply it could not follow). Parley's own
// errors hold no upstream text.
func (b *HTTPBackend) scrub(err error) error {
	var up *translate.UpstreamError
	if errors.As(err, &up) {
		b.opts.Scrub.Error(up.Err)
	}
	return err
}

// exchange sends a request whose reply is one body, and returns that body
// of a 2xx reply or the decoded error of any other.
func (b *HTTPBackend) exchange(ctx context.Context, out *translate.Outgoing) ([]byte, error) {
	resp, a, err := b.send(ctx, out)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if !ok(resp.StatusCode) {
		return nil, b.failure(a, resp)
	}
	return b.readAll(a, resp.Body, resp.ContentLength)
}

// Stream implements Backend. The request is encoded and sent by open,
// which returns before the first event is read, and the events are read
// by relay: every event is decoded, translated and written under these
// frames while the stream lasts, and a stream waits under them (see
// server.TestStreamsRunOnSmallStacks).
func (b *HTTPBackend) Stream(ctx context.Context, req *parleyv1.Request, t translate.Target, call *Call) iter.Seq2[*parleyv1.StreamEvent, error] {
	return func(yield func(*parleyv1.StreamEvent, error) bool) {
		s, err := b.open(ctx, req, t, call)
		switch {
		case err != nil:
			yield(nil, err)
		case s.whole:
			b.replayWhole(s, t, call, yield)
		default:
			b.relay(s, t, call, yield)
		}
	}
}

// openStream is a stream's reply, its status found good: its body and
// how it is framed. The reply itself is not kept: with it went the
// request it answers (its body and headers) and the reply's headers,
// which a stream waiting on its upstream would otherwise hold.
type openStream struct {
	// a holds the reply's body.
	a       *attempt
	framing translate.OpenFrames
	// whole is set when the upstream answered with one body rather than
	// a stream.
	whole bool
}

// open encodes and sends a stream's request, and returns its reply, or
// the failure.
func (b *HTTPBackend) open(ctx context.Context, req *parleyv1.Request, t translate.Target, call *Call) (*openStream, error) {
	out, err := b.encode(req, t, call)
	if err != nil {
		return nil, err
	}
	call.Dropped = out.Dropped
	resp, a, err := b.send(ctx, out)
	if err != nil {
		return nil, err
	}
	if !ok(resp.StatusCode) {
		defer resp.Body.Close()
		return nil, b.failure(a, resp)
	}
	// The reply's media type, read once, says both how it is framed and
	// whether it is a stream at all.
	mt := mediaType(resp.Header)
	return &openStream{a: a, framing: b.framing(mt), whole: wholeReply(mt)}, nil
}

// replayWhole yields a whole reply as events, and closes it.
func (b *HTTPBackend) replayWhole(s *openStream, t translate.Target, call *Call, yield func(*parleyv1.StreamEvent, error) bool) {
	defer s.a.body.Close()
	b.replay(s.a, s.a.body, t, call, yield)
}

// relay yields the events of an open stream, and closes it.
func (b *HTTPBackend) relay(s *openStream, t translate.Target, call *Call, yield func(*parleyv1.StreamEvent, error) bool) {
	defer s.a.body.Close()
	body := newIdleReader(s.a.body, b.opts.IdleTimeout, s.a)
	defer body.stop()
	for ev, err := range b.events(s, body, t, call) {
		if err != nil {
			// A stream the idle timeout ended is reported so, however
			// its decoder saw the end.
			var up *translate.UpstreamError
			if idle := s.a.idle.Load(); idle || !errors.As(err, &up) {
				err = b.transportError(s.a.ctx, idle, err)
			}
			yield(nil, b.scrub(err))
			return
		}
		// An error event in the stream is the upstream's text too.
		b.opts.Scrub.Error(ev.GetError())
		if !yield(ev, nil) {
			return
		}
	}
}

// events decodes an open stream's body.
func (b *HTTPBackend) events(s *openStream, body io.Reader, t translate.Target, call *Call) iter.Seq2[*parleyv1.StreamEvent, error] {
	var frame func(sse.Event)
	if call.Forwarded {
		frame = call.keepFrame
	}
	return translate.DecodeFramed(b.up.Dialect(), body, s.framing, b.up.NewStreamDecoder(t), b.opts.Stream, frame, &call.Pace)
}

// framing opens a stream reply by its media type, mt: AWS event-stream
// messages (Amazon Bedrock), else server-sent events (nil).
func (b *HTTPBackend) framing(mt string) translate.OpenFrames {
	if mt != eventstream.ContentType {
		return nil
	}
	d := b.up.Dialect()
	return func(body io.Reader, maxFrame int) translate.Frames { return eventstream.NewReader(d, body, maxFrame) }
}

// mediaType is a reply's media type, lower case and without parameters,
// or "" when its Content-Type does not parse.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// wholeReply reports whether a 2xx reply to a stream request, of media
// type mt ("" when its Content-Type does not parse), is one
// whole JSON document (application/json, or a +json type) rather than an
// event stream: some upstreams (OpenAI-compatible servers, proxies)
// ignore the request's stream flag.
func wholeReply(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// replay answers a stream request whose upstream sent its whole reply:
// the reply is read as exchange reads one (bounded in size and idle
// time), decoded as Generate decodes one, and yielded as the stream a
// streaming upstream would have sent for it (translate.ReplayResponse).
// Nothing of it can be relayed as it came, so the call is no longer
// forwarded: the client's encoder renders the events. A reply that does
// not decode is the upstream's protocol error, not a failure to retry.
func (b *HTTPBackend) replay(a *attempt, r io.Reader, t translate.Target, call *Call, yield func(*parleyv1.StreamEvent, error) bool) {
	call.Forwarded = false
	call.ReleaseFrames()
	data, err := b.readAll(a, r, -1)
	if err != nil {
		yield(nil, b.scrub(err))
		return
	}
	resp, err := b.up.DecodeResponse(t, data)
	if err != nil {
		var up *translate.UpstreamError
		if !errors.As(err, &up) {
			err = translate.UpstreamProtocol(b.up.Dialect(), err)
		}
		yield(nil, b.scrub(err))
		return
	}
	evs := translate.ReplayResponse(resp)
	for i, ev := range evs {
		// An error in the reply is the upstream's text too.
		b.opts.Scrub.Error(ev.GetError())
		// Every event is at hand: the client may have them in one write.
		call.Pace.More = i < len(evs)-1
		if !yield(ev, nil) {
			return
		}
	}
}

// errNoCount says the upstream's dialect has no count endpoint.
var errNoCount = errors.New("no count endpoint")

// CountTokens implements Backend: the upstream counts when its dialect has
// a count endpoint, else errNoCount asks the dispatcher to estimate.
func (b *HTTPBackend) CountTokens(ctx context.Context, req *parleyv1.Request, t translate.Target, call *Call) (*parleyv1.TokenCount, error) {
	cu, has := b.up.(translate.CountUpstream)
	if !has {
		return nil, errNoCount
	}
	out, err := cu.EncodeCountRequest(req, t)
	if err != nil {
		return nil, err
	}
	if err := b.prepare(cloud.OpCount, out, t); err != nil {
		if errors.Is(err, cloud.ErrNoCount) {
			return nil, errNoCount
		}
		return nil, err
	}
	call.Dropped = out.Dropped
	body, err := b.exchange(ctx, out)
	if err != nil {
		return nil, err
	}
	n, err := cu.DecodeCount(body)
	return n, b.scrub(err)
}

// idleReader ends its attempt (attempt.silent) when a Read waits longer
// than d.
type idleReader struct {
	r     io.Reader
	d     time.Duration
	a     *attempt
	timer *time.Timer
}

// errIdle is what an idleReader's Read returns once the timeout has ended
// its attempt, whatever the read under it found: a connection closed
// under a read may read as its end (over TLS it does), which would be
// reported as the upstream's stream cut short rather than as its silence.
var errIdle = errors.New("idle timeout")

func newIdleReader(r io.Reader, d time.Duration, a *attempt) *idleReader {
	ir := &idleReader{r: r, d: d, a: a}
	if d > 0 {
		ir.timer = time.AfterFunc(d, a.silent)
		ir.timer.Stop()
	}
	return ir
}

func (r *idleReader) Read(p []byte) (int, error) {
	if r.timer == nil {
		return r.r.Read(p)
	}
	// Only time spent waiting on the upstream counts; time spent writing
	// to a slow client does not.
	r.timer.Reset(r.d)
	n, err := r.r.Read(p)
	r.timer.Stop()
	if r.a.idle.Load() {
		return n, errIdle
	}
	return n, err
}

func (r *idleReader) stop() {
	if r.timer != nil {
		r.timer.Stop()
	}
}
