package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/govern"
	"github.com/parleyhq/parley/internal/readall"
	"github.com/parleyhq/parley/internal/textlog"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/stored"
	"github.com/parleyhq/parley/telemetry"
	"github.com/parleyhq/parley/translate"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
)

// clientRequest is one client request as it goes through the server.
type clientRequest struct {
	meter
	s      *Server
	st     *state // the configuration the request started on
	held   int64  // the bytes of the body budget the request holds
	w      http.ResponseWriter
	r      *http.Request
	c      *clientDialect
	status int
	// turn follows a request of a stateful dialect (stored responses).
	turn *stored.Turn
}

// meter is what the log line and the metrics learn of a generation
// request, whatever its protocol.
type meter struct {
	start time.Time
	id    string
	call  dispatch.Call
	usage *parleyv1.Usage
	ttft  time.Duration
	// key names the caller's key, once known.
	key string
	// finishes holds the finish reasons seen, for the trace.
	finishes []string
	// model is the model the upstream said answered, for the trace.
	model string
	// span is the request's trace span (a no-op one with tracing off).
	span trace.Span
	// ticket is what the request took of its key's limits, settled with
	// its ledger line when it ends; nil for requests not governed.
	ticket *govern.Ticket
	price  *govern.Price
	// outBytes counts the generated text of a stream, to charge a stream
	// cut before the upstream reported its usage.
	outBytes int64
	// estimate is the request's input tokens by Parley's estimate, once
	// worked out.
	estimate int64
	// inFlight and streaming are the live counters the request holds,
	// given back when it finishes.
	inFlight, streaming *atomic.Int64
	// req is the governed request, for the estimate of a cut stream.
	req *parleyv1.Request
}

func newMeter() meter { return meter{start: time.Now(), id: store.NewRequestID()} }

// startSpan opens the request's server span, continuing the caller's trace
// when its headers carry one, and returns the context that carries it.
func (m *meter) startSpan(ctx context.Context, h http.Header, name string) context.Context {
	if !telemetry.On() {
		return ctx
	}
	ctx = telemetry.Propagator().Extract(ctx, propagation.HeaderCarrier(h))
	ctx, m.span = telemetry.Tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	return ctx
}

func (s *Server) newClientRequest(w http.ResponseWriter, r *http.Request, c *clientDialect) *clientRequest {
	x := &clientRequest{meter: newMeter(), s: s, st: s.state(), w: w, r: r, c: c}
	if ctx := x.startSpan(r.Context(), r.Header, r.Method+" "+r.URL.Path); ctx != r.Context() {
		x.r = r.WithContext(ctx)
	}
	w.Header().Set("X-Request-Id", x.id)
	if _, t := consoleCall(r); t != nil {
		x.call.Sent = t.sent
	}
	return x
}

// incoming reads the request: key first (no work for a stranger), then
// the body within the size limit.
func (x *clientRequest) incoming(in *translate.Incoming) (*principal, error) {
	in.Header, in.Query = x.r.Header, x.r.URL.Query()
	p, _ := consoleCall(x.r)
	if p == nil {
		var err error
		if p, err = x.st.keys.authenticate(x.c.APIKey(in)); err != nil {
			return nil, err
		}
	}
	x.key = p.name
	// The body's share of the budget is taken before it is read when its
	// length is declared, else once it is read.
	if n := x.r.ContentLength; n > 0 {
		if err := x.hold(min(n, x.st.maxBody)); err != nil {
			return nil, err
		}
	}
	body, err := x.st.readBody(x.w, x.r)
	if err != nil {
		return nil, err
	}
	if extra := int64(len(body)) - x.held; extra > 0 {
		if err := x.hold(extra); err != nil {
			return nil, err
		}
	}
	in.Body = body
	return p, nil
}

// hold takes n more bytes of the body budget for the request; release
// gives back what it holds when it ends.
func (x *clientRequest) hold(n int64) error {
	if err := x.s.bodies.take(n); err != nil {
		return err
	}
	x.held += n
	return nil
}

func (x *clientRequest) release() {
	x.s.bodies.give(x.held)
	x.held = 0
}

// readBody reads a request body of at most the configured size. A body
// read to its end is closed at once: net/http otherwise reads an open
// body again when the reply's header goes out, to discard what is left,
// and on a stream that reading is the deepest point of the handler's
// stack, which keeps the size it grows to while the stream waits.
func (s *state) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := readAll(http.MaxBytesReader(w, r.Body, s.maxBody), r.ContentLength, s.maxBody)
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		_ = r.Body.Close()
	case errors.As(err, &tooBig):
		return nil, &translate.StatusError{Err: &parleyv1.Error{
			Code:       parleyv1.Code_CODE_INVALID_ARGUMENT,
			Message:    fmt.Sprintf("the request body is larger than the limit of %d bytes", s.maxBody),
			HttpStatus: http.StatusRequestEntityTooLarge,
		}}
	case err != nil:
		return nil, &translate.StatusError{Err: &parleyv1.Error{
			Code: parleyv1.Code_CODE_INVALID_ARGUMENT, Message: "the request body could not be read",
		}}
	}
	return body, nil
}

// readAll reads r whole. When the client declared the body's length, the
// buffer is that size from the start, so a large body is not copied again
// and again while the buffer grows.
func readAll(r io.Reader, declared, limit int64) ([]byte, error) {
	if declared <= 0 || declared > limit {
		return io.ReadAll(r)
	}
	return readall.Sized(r, declared)
}

// setRetryAfter passes on, in whole seconds, the wait an upstream advised;
// for a spent budget it also tells the SDKs that honour x-should-retry not
// to retry at once.
func setRetryAfter(h http.Header, e *parleyv1.Error) {
	if e.GetLimit().GetQuota() {
		h.Set("X-Should-Retry", "false")
	}
	if ra := e.GetRetry().GetRetryAfter(); ra != nil && ra.AsDuration() > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(ra.AsDuration().Seconds())), 10))
	}
}

// fail renders an error before any byte of the reply: the dialect's status
// and body, and Retry-After when there is advice.
func (x *clientRequest) fail(err error) {
	e := translate.ToProto(endedBy(x.r.Context(), err))
	if e.GetRequestId() == "" {
		e.RequestId = x.id
	}
	status, body := x.c.EncodeError(e)
	setRetryAfter(x.w.Header(), e)
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(status)
	_, _ = x.w.Write(body)
	x.status = status
	x.done(e)
}

// done records the request in the log and the metrics.
func (x *clientRequest) done(e *parleyv1.Error) {
	x.finish(x.s, x.c.label, x.status, e, slog.String("path", x.r.URL.Path))
}

// govern admits a generation request against its key's limits, before
// anything is sent upstream, and sets the rate-limit headers of the
// dialect (setHeaders, when it has them) on h.
func (m *meter) govern(s *Server, st *state, p *principal, h http.Header, setHeaders func(http.Header, *translate.RateLimits, time.Time), req *parleyv1.Request) error {
	key := p.key
	if key == nil {
		key = &govern.Key{Name: p.name}
	}
	m.price = st.prices.Of(req.GetModel())
	m.req = req
	t, rl, err := s.gov.Admit(m.ctx(), key, m.id, func() int64 {
		// The input, by estimate: the output is counted when it is known,
		// rather than reserved at max_tokens, which agents set far above
		// what they use.
		m.estimate = translate.Estimate(req)
		return m.estimate
	})
	m.ticket = t
	if rl != nil && setHeaders != nil {
		setHeaders(h, rl, time.Now())
	}
	if err == nil {
		m.inFlight = &s.now.requests
		m.inFlight.Add(1)
		if req.GetStream() {
			m.streaming = &s.now.streams
			m.streaming.Add(1)
		}
	}
	return err
}

// settle charges a governed request's usage and writes its ledger line.
// A request that ended in an error after its reply began (a stream cut by
// the client, the upstream or a shutdown) is charged what was produced:
// the usage seen so far (a stream's start reports the input and a token or
// two) or Parley's estimate of the input and of the text sent, whichever
// is more; its ledger line has the error's status.
func (m *meter) settle(dialect string, status int, e *parleyv1.Error, elapsed time.Duration) {
	if m.ticket == nil {
		return
	}
	u := m.usage
	if e != nil && status == http.StatusOK {
		status = govern.StatusOf(e)
		if e.GetCode() == parleyv1.Code_CODE_CANCELED {
			status = 499
		}
	}
	if status != http.StatusOK && (m.outBytes > 0 || u != nil) {
		if (u == nil || u.InputTokens == nil) && m.estimate == 0 && m.req != nil {
			m.estimate = translate.Estimate(m.req)
		}
		cut := proto.CloneOf(u)
		if cut == nil {
			cut = &parleyv1.Usage{}
		}
		cut.InputTokens = new(max(u.GetInputTokens(), m.estimate))
		cut.OutputTokens = new(max(u.GetOutputTokens(), (m.outBytes+3)/4))
		u = cut
	}
	m.ticket.Settle(govern.End{
		RequestID: m.id, Model: m.call.Model, Upstream: m.call.Upstream, Dialect: dialect,
		Operation: cmp.Or(m.call.Operation, dispatch.OperationChat), Status: status, Usage: u, Price: m.price,
		Start: m.start, Duration: elapsed, TTFT: m.ttft,
	})
}

// ctx is the context governance works under: never the request's, which
// a client that goes away cancels.
func (m *meter) ctx() context.Context { return context.Background() }

// finish records a finished request in the metrics and writes its log
// line; where names the request (path or procedure, and the key).
func (m *meter) finish(s *Server, dialect string, status int, e *parleyv1.Error, where ...slog.Attr) {
	elapsed := time.Since(m.start)
	m.settle(dialect, status, e, elapsed)
	if m.inFlight != nil {
		m.inFlight.Add(-1)
		m.inFlight = nil
	}
	if m.streaming != nil {
		m.streaming.Add(-1)
		m.streaming = nil
	}
	s.now.observe(m.call.Upstream, sample{at: m.start.UnixNano(), duration: elapsed, ttft: m.ttft, failed: status >= 500 || status == http.StatusTooManyRequests && m.call.Upstream != ""})
	m.endSpan(dialect, status, e)
	s.observe(outcome{dialect: dialect, status: status, call: &m.call, elapsed: elapsed, ttft: m.ttft, usage: m.usage})
	// Attributes rather than pairs of any: an int or a duration in an any
	// is one allocation each, on every request.
	var buf [16]slog.Attr
	attrs := append(buf[:0], slog.String("id", m.id), slog.String("dialect", dialect))
	attrs = append(attrs, where...)
	attrs = append(attrs, slog.Int("status", status), slog.String("model", m.call.Model), slog.String("upstream", m.call.Upstream),
		slog.Int("attempts", m.call.Attempts), slog.Duration("duration", elapsed.Round(time.Microsecond)))
	if m.usage != nil {
		attrs = append(attrs, slog.Int64("input_tokens", m.usage.GetInputTokens()), slog.Int64("output_tokens", m.usage.GetOutputTokens()))
	}
	if op := m.call.Operation; op != "" && op != dispatch.OperationChat {
		attrs = append(attrs, slog.String("operation", op))
	}
	if m.call.Forwarded {
		attrs = append(attrs, slog.Bool("forwarded", true))
	}
	if e != nil {
		attrs = append(attrs, slog.String("error", e.GetCode().String()))
	}
	s.accessLine(attrs)
}

// accessLine writes the request's line. The gateway's own handler
// (internal/textlog) is given the attributes as they are, by a call the
// compiler can follow, so that the caller's array of them stays on its
// stack; any other gets them in a record made here, not through
// Logger.LogAttrs, which walks the stack for the caller's program counter
// on every line, whether the handler reports the source or not.
func (s *Server) accessLine(attrs []slog.Attr) {
	ctx, h := context.Background(), s.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	if th, ok := h.(*textlog.Handler); ok {
		_ = th.Line(time.Now(), slog.LevelInfo, "request", attrs)
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}

// serve answers a generation request, whole or streamed.
func (x *clientRequest) serve(in *translate.Incoming) {
	p, req, ok := x.decode(in)
	if !ok {
		return
	}
	if x.c.compact != nil && x.c.compact.Compacts(req) {
		// A compaction asked for in place of an answer.
		contentType := "application/json"
		if req.GetStream() {
			contentType = "text/event-stream"
		}
		x.compact(p, req, x.c.compact.EncodeCompacted, contentType)
		return
	}
	if err := x.govern(x.s, x.st, p, x.w.Header(), x.c.d.RateLimitHeaders, req); err != nil {
		x.fail(err)
		return
	}
	// The body may go on as it came to an upstream of the same dialect,
	// unless a stateful dialect's request was rebuilt from its chain,
	// truncated or is kept by Parley.
	x.call.Source = translate.Source{Dialect: x.c.d.Enum, Body: in.Body}
	if x.c.stored != nil {
		var err error
		if x.turn, err = x.s.stored.Begin(x.r.Context(), x.c.stored, p.name, req); err != nil {
			x.fail(err)
			return
		}
		if !x.turn.Verbatim() {
			x.call.Source = translate.Source{}
		}
	}
	if req.GetStream() {
		x.stream(req, x.c.framing(in))
		return
	}
	x.whole(req)
}

// decode authenticates a generation request, decodes it and admits its
// model; ok is false when it failed, and the client has its error.
func (x *clientRequest) decode(in *translate.Incoming) (*principal, *parleyv1.Request, bool) {
	p, err := x.incoming(in)
	if err != nil {
		x.fail(err)
		return nil, nil, false
	}
	req, err := x.c.DecodeRequest(in)
	if err != nil {
		x.fail(err)
		return nil, nil, false
	}
	x.call.Model = req.GetModel()
	if err := x.admit(p, req.GetModel()); err != nil {
		x.fail(err)
		return nil, nil, false
	}
	return p, req, true
}

// admit checks that the key may use the model and that it is served.
func (x *clientRequest) admit(p *principal, model string) error { return x.st.admit(p, model, "model") }

// admit checks that the key may use the model and that it is served;
// field names the model in the caller's spelling.
func (s *state) admit(p *principal, model, field string) error {
	if model == "" {
		return translate.Invalid(field, "is required")
	}
	if err := p.mayUse(model, field); err != nil {
		return err
	}
	if !s.d.Router().Known(model) {
		return dispatch.NotServed(model, field)
	}
	return nil
}

func (x *clientRequest) setDropped() {
	if len(x.call.Dropped) > 0 {
		x.w.Header().Set("X-Parley-Dropped", strings.Join(x.call.Dropped, ", "))
	}
}

func (x *clientRequest) whole(req *parleyv1.Request) {
	resp, err := x.st.d.Generate(x.r.Context(), req, &x.call)
	if err != nil {
		x.fail(err)
		return
	}
	if x.turn != nil {
		x.turn.Finish(x.r.Context(), resp)
	}
	if resp.GetId() == "" {
		resp.Id = x.id
	}
	x.usage = resp.GetUsage()
	if x.span != nil {
		x.model = resp.GetModel()
		for _, c := range resp.GetCandidates() {
			x.finishes = append(x.finishes, finishName(c.GetFinishReason()))
		}
	}
	body := x.call.Reply
	if !x.call.Forwarded || body == nil || x.turn != nil && !x.turn.Verbatim() || resp.GetId() == x.id {
		// Parley's own reply, unless the request was forwarded and the
		// upstream's reply, of the client's dialect, is all it would say.
		if body, err = x.c.EncodeResponse(req, resp); err != nil {
			x.fail(err)
			return
		}
	}
	x.setDropped()
	x.ok(body)
}
