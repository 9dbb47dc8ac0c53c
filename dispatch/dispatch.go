package dispatch

import (
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"sync"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// Call records what the dispatcher did for one request, for the caller's
// headers, logs and metrics. For a stream it is complete once the first
// event has been yielded. The caller may set Source before the call.
type Call struct {
	// Source, when its Body is set, is the client's request as it came:
	// an upstream of the client's dialect may send it on with its model
	// swapped instead of encoding the canonical request again (the
	// same-dialect fast path, translate.Forwarder). The attempt that
	// sends it on lets go of it; another encodes the canonical request.
	Source translate.Source
	// Forwarded is true when the answering attempt sent Source on. Its
	// reply is then the client's dialect as it is: Reply holds a whole
	// reply's body, and TakeFrames a stream's upstream events, so that
	// the caller can relay them as they came, having decoded them only to
	// observe them.
	Forwarded bool
	Reply     []byte
	// frames holds the upstream events of a forwarded stream not yet
	// taken, from a pool, for one burst: from its first event until
	// ReleaseFrames.
	frames *frameBuf
	// Model is the name the client asked for.
	Model string
	// Operation is what the call asks of the upstream, as traces name it
	// (the GenAI conventions' operation name): chat, or count_tokens.
	Operation string
	// Upstream, Dialect and UpstreamModel name the route that answered (or
	// the last one tried).
	Upstream      string
	Dialect       parleyv1.Dialect
	Provider      string
	UpstreamModel string
	// Attempts counts upstream requests made.
	Attempts int
	// Failures are the attempts that failed, in order.
	Failures []Failure
	// Dropped names what the request asked for that the upstream's dialect
	// cannot carry.
	Dropped []string
	// Pace.More is true, while a stream is being read, when the event
	// just yielded is not the last of what the upstream has sent so far:
	// the next one follows at once, so a caller may hold its flush to the
	// client until the burst has been written.
	Pace translate.Pace
	// Estimated is true when a token count was estimated by Parley.
	Estimated bool
	// ReasoningRetry names the upstream that refused the reasoning the
	// request carried back to it, after which the request went to it
	// again without (translate.Disown); "" when none did.
	ReasoningRetry string
	// Sent, when set, is told of each upstream request as it is about to
	// go: the path and body (never the headers or query, which may carry
	// the upstream's key). The console's try-it view shows them.
	Sent func(path string, body []byte)
}

// frameBuf holds the upstream events of a burst and their data, which
// the stream's reader reuses: one buffer for every event's data rather
// than a copy each.
type frameBuf struct {
	events []sse.Event
	data   []byte
}

// frameBufs are the buffers of the bursts being relayed. A buffer is held
// from a burst's first event until the burst has been written, never
// while a stream waits on its upstream, and is not grown again for every
// stream.
var frameBufs = sync.Pool{New: func() any {
	return &frameBuf{events: make([]sse.Event, 0, 16), data: make([]byte, 0, 4096)}
}}

// maxFrameBuf is the largest buffer kept for the next burst; a larger
// one (a burst as long as a whole reply) is left to the collector.
const maxFrameBuf = 64 << 10

// TakeFrames returns the upstream events of a forwarded stream read since
// the last call, in order: each comes before the canonical events decoded
// from it. They are valid until the stream is read on or ReleaseFrames
// is called.
func (c *Call) TakeFrames() []sse.Event {
	fb := c.frames
	if fb == nil {
		return nil
	}
	f := fb.events
	fb.events, fb.data = fb.events[:0], fb.data[:0]
	return f
}

// ReleaseFrames gives back the buffer the frames were kept in, once those
// taken have been written: a stream waiting on its upstream holds none.
func (c *Call) ReleaseFrames() {
	fb := c.frames
	if fb == nil {
		return
	}
	c.frames = nil
	if cap(fb.data) > maxFrameBuf || cap(fb.events) > maxFrameBuf/64 {
		return
	}
	clear(fb.events[:cap(fb.events)])
	fb.events, fb.data = fb.events[:0], fb.data[:0]
	frameBufs.Put(fb)
}

// keepFrame keeps an upstream event of a forwarded stream until
// TakeFrames takes it, copying its data, which is the reader's.
func (c *Call) keepFrame(ev sse.Event) {
	fb := c.frames
	if fb == nil {
		fb = frameBufs.Get().(*frameBuf)
		c.frames = fb
	}
	start := len(fb.data)
	fb.data = append(fb.data, ev.Data...)
	ev.Data = fb.data[start:len(fb.data):len(fb.data)]
	fb.events = append(fb.events, ev)
}

// Failure is one failed attempt.
type Failure struct {
	Upstream string
	Err      *parleyv1.Error
}

// Dispatcher routes canonical requests to backends.
type Dispatcher struct {
	router *Router
	// Backoff is the wait before retry n (from 0) on the same upstream.
	Backoff func(n int) time.Duration
	// MaxRetryWait is the longest Retry-After the dispatcher waits out.
	MaxRetryWait time.Duration
	// Rand draws weighted routes; nil uses math/rand/v2.
	Rand func(n int) int
}

// New returns a dispatcher over router.
func New(router *Router) *Dispatcher {
	return &Dispatcher{router: router, Backoff: ExponentialBackoff(250*time.Millisecond, 8*time.Second), MaxRetryWait: 30 * time.Second}
}

// Router returns the dispatcher's router.
func (d *Dispatcher) Router() *Router { return d.router }

// CloseIdleConnections closes the upstream connections no request is
// using, as a reload does with the dispatcher it replaces: its upstreams'
// pools would otherwise keep them open until they expire. Requests in
// flight are not touched; their connections close as they end, or
// expire.
func (d *Dispatcher) CloseIdleConnections() {
	seen := map[Backend]bool{}
	for _, e := range d.router.models {
		for _, r := range e.routes {
			if c, ok := r.backend.(interface{ CloseIdleConnections() }); ok && !seen[r.backend] {
				seen[r.backend] = true
				c.CloseIdleConnections()
			}
		}
	}
}

// ExponentialBackoff doubles from base up to limit, with jitter of up to a
// quarter either way so that clients that failed together do not retry
// together.
func ExponentialBackoff(base, limit time.Duration) func(int) time.Duration {
	return func(n int) time.Duration {
		d := base << min(n, 20)
		if d > limit || d <= 0 {
			d = limit
		}
		jitter := time.Duration(rand.Int64N(int64(d)/2+1)) - d/4
		return d + jitter
	}
}

// plan lists the attempts for a request: its model's routes in order,
// each with its backend. A conversation whose reasoning a route of the
// model made goes to that route first (affinity): only that upstream can
// read the reasoning back, and its prompt cache holds the conversation;
// the other routes follow as fallbacks, as configured. Without such
// reasoning, a request that names its conversation (a prompt cache key,
// else an end-user id) goes first to the route its key draws
// (byKey), so that the conversation's turns meet its prompt cache.
func (d *Dispatcher) plan(req *parleyv1.Request) ([]*route, error) {
	routes, err := d.router.Resolve(req.GetModel())
	if err != nil {
		return nil, err
	}
	if len(routes) > 1 {
		if maker := translate.Maker(req); maker != "" {
			for i, r := range routes {
				if r.upstream == maker {
					out := append([]*route{r}, routes[:i]...)
					return append(out, routes[i+1:]...), nil
				}
			}
		}
	}
	if len(routes) > 1 {
		key := req.GetPromptCacheKey()
		if key == "" {
			key = req.GetEndUserId()
		}
		if key != "" {
			return byKey(routes, key), nil
		}
	}
	pick := d.Rand
	if pick == nil {
		pick = rand.IntN
	}
	return ordered(routes, pick), nil
}

// retryDecision says whether and how long to wait before the next attempt
// on the same route; next is true to move on to the next route.
func (d *Dispatcher) retryDecision(e *parleyv1.Error, try, maxRetries int) (wait time.Duration, again, next bool) {
	if !e.GetRetry().GetRetryable() {
		return 0, false, false
	}
	if ra := e.GetRetry().GetRetryAfter(); ra != nil {
		if ra.AsDuration() > d.MaxRetryWait {
			return 0, false, true
		}
		if try < maxRetries {
			return ra.AsDuration(), true, false
		}
		return 0, false, true
	}
	if try < maxRetries {
		return d.Backoff(try), true, false
	}
	return 0, false, true
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// run runs f over the plan until it succeeds, fails for good, or the
// plan is spent. f reports whether its failure may be retried at all
// (false once bytes have gone to the client).
//
// An upstream that refuses the reasoning the request carried back to it
// as not its own (Error.refused_reasoning: a key, an account or a route
// changed since the reasoning was made) gets the request once more at
// once, without any reasoning (translate.Disown), before the usual
// retries: reasoning only ever helps the model, and failing the turn
// over it helps nobody. That attempt counts as an attempt, not as a
// retry of the route's budget.
func (d *Dispatcher) run(ctx context.Context, req *parleyv1.Request, call *Call, f func(ctx context.Context, r *route, t translate.Target, req *parleyv1.Request) (retry bool, err error)) error {
	call.Model = req.GetModel()
	if call.Operation == "" {
		call.Operation = OperationChat
	}
	plan, err := d.plan(req)
	if err != nil {
		return err
	}
	if call.Source.Body != nil && !speaks(plan, call.Source.Dialect) {
		// No upstream that may answer speaks the client's dialect, so
		// none sends its body on: the body, as large as its
		// conversation, need not be held while they think.
		call.Source.Body = nil
	}
	var last error
	for _, r := range plan {
		t := r.target(req.GetModel())
		call.Upstream, call.Dialect, call.Provider, call.UpstreamModel = r.upstream, r.dialect, r.provider, t.Model
		for try := 0; ; try++ {
			call.Attempts++
			actx, span := startAttempt(ctx, r, t, call.Operation, call.Attempts)
			retry, err := f(actx, r, t, req)
			endAttempt(span, err)
			if err == nil {
				return nil
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			pe := translate.ToProto(err)
			call.Failures = append(call.Failures, Failure{Upstream: r.upstream, Err: pe})
			if !retry {
				return err
			}
			last = err
			if pe.GetRefusedReasoning() && call.ReasoningRetry == "" {
				call.ReasoningRetry = r.upstream
				req = translate.Disown(req)
				// The client's own body carries the reasoning as it
				// came: the canonical request goes instead.
				call.Source = translate.Source{}
				try--
				continue
			}
			wait, again, next := d.retryDecision(pe, try, r.maxRetries)
			if !again && !next {
				return err
			}
			if next {
				break
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
		}
	}
	return last
}

// speaks reports whether an upstream of plan speaks dialect d.
func speaks(plan []*route, d parleyv1.Dialect) bool {
	for _, r := range plan {
		if r.dialect == d {
			return true
		}
	}
	return false
}

// Generate answers a whole request.
func (d *Dispatcher) Generate(ctx context.Context, req *parleyv1.Request, call *Call) (*parleyv1.Response, error) {
	var resp *parleyv1.Response
	err := d.run(ctx, req, call, func(ctx context.Context, r *route, t translate.Target, req *parleyv1.Request) (bool, error) {
		var err error
		resp, err = r.backend.Generate(ctx, req, t, call)
		return true, err
	})
	return resp, err
}

// Stream answers a request as a stream. An error before the first event
// has been yielded, also an upstream's in-stream error event sent first,
// is retried and falls back like Generate's; after it, the error is
// yielded and the stream ends.
func (d *Dispatcher) Stream(ctx context.Context, req *parleyv1.Request, call *Call) iter.Seq2[*parleyv1.StreamEvent, error] {
	return func(yield func(*parleyv1.StreamEvent, error) bool) {
		sent, stopped := false, false
		err := d.run(ctx, req, call, func(ctx context.Context, r *route, t translate.Target, req *parleyv1.Request) (bool, error) {
			// Every stream is held to the canonical order here, once,
			// whatever its backend: what follows may trust it.
			var check translate.StreamChecker
			for ev, err := range r.backend.Stream(ctx, req, t, call) {
				if err == nil {
					if cerr := check.Check(ev); cerr != nil {
						err = translate.UpstreamProtocol(r.dialect, cerr)
					}
				}
				if err != nil {
					return !sent, err
				}
				if e := ev.GetError(); e != nil && !sent {
					// The upstream failed before it said anything: a
					// failure like a refused request, retried and fallen
					// back from alike, and a status for the client.
					return true, translate.UpstreamFailed(e)
				}
				if !sent {
					sent = true
					// Nothing is retried once the stream has begun: the
					// client's body, as large as its conversation, need
					// not be held while the stream lasts.
					call.Source.Body = nil
				}
				if !yield(ev, nil) {
					stopped = true
					return false, nil
				}
			}
			return false, nil
		})
		if err != nil && !stopped {
			yield(nil, err)
		}
	}
}

// CountTokens counts a request's input tokens: by the upstream where its
// dialect has a count endpoint, else by Estimate (Call.Estimated and the
// count's estimated flag say so).
func (d *Dispatcher) CountTokens(ctx context.Context, req *parleyv1.Request, call *Call) (*parleyv1.TokenCount, error) {
	call.Operation = OperationCountTokens
	var count *parleyv1.TokenCount
	err := d.run(ctx, req, call, func(ctx context.Context, r *route, t translate.Target, req *parleyv1.Request) (bool, error) {
		var err error
		count, err = r.backend.CountTokens(ctx, req, t, call)
		if errors.Is(err, errNoCount) {
			call.Estimated = true
			count, err = &parleyv1.TokenCount{InputTokens: translate.Estimate(req), Estimated: true}, nil
		}
		return true, err
	})
	return count, err
}
