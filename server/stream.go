package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// The streamed reply: events relayed or rendered as they come, flushed
// once per burst of what the upstream has sent (dispatch.Call.Pace).

// endedBy is the error a request ended with: the shutdown, when the
// gateway's grace period ran out under it (its context's cause), rather
// than the cancellation the shutdown caused.
func endedBy(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), translate.ErrShuttingDown) {
		return translate.ErrShuttingDown
	}
	return err
}

// streamWriter sends the reply's headers with its first byte, so that an
// error before it can still be a status and a JSON body.
//
// The reply's start (its headers, net/http's head) and the first flush
// run on another goroutine (offstack): net/http needs about 4 KB
// of stack to start a reply and write its head, and on the handler's
// goroutine, at a stream's depth, that would double its stack for as
// long as the stream is open (see TestStreamsRunOnSmallStacks). What is
// written before is held here, as net/http would hold it in its buffer.
type streamWriter struct {
	x  *clientRequest
	rc *http.ResponseController
	// ctype is the reply's Content-Type, one of the shared values
	// below.
	ctype []string
	// started is set by the first byte: the reply is a 200 from then.
	started bool
	// headOut is set once the reply has started on the wire.
	headOut bool
	// head holds what is written before the start, in a buffer from
	// heads (headBuf) unless it outgrew it.
	head    []byte
	headBuf *[]byte
	err     error
}

// Header values every reply of a kind carries, one slice for all of
// them rather than one made for each by Header.Set:
// net/http copies a reply's header when it writes it, and nothing
// changes a header's values in place (Add appends to a copy).
var (
	jsonType        = []string{"application/json"}
	eventStreamType = []string{"text/event-stream"}
	noCache         = []string{"no-cache"}
	noBuffering     = []string{"no"}
)

// headBuffer is what net/http buffers of a reply before it writes the
// head and starts chunking the body; the writer holds no more.
const headBuffer = 2048

// heads are the buffers what a stream writes before its start is held
// in, from its first byte to its first flush: one for every stream,
// which grown by append from nothing cost several allocations each time.
var heads = sync.Pool{New: func() any { b := make([]byte, 0, 2*headBuffer); return &b }}

func (sw *streamWriter) Write(p []byte) (int, error) {
	if sw.err != nil {
		return 0, sw.err
	}
	if sw.headOut {
		n, err := sw.x.w.Write(p)
		if err != nil {
			sw.err = err
		}
		return n, err
	}
	sw.started = true
	if sw.headBuf == nil {
		sw.headBuf = heads.Get().(*[]byte)
		sw.head = (*sw.headBuf)[:0]
	}
	sw.head = append(sw.head, p...)
	if len(sw.head) > headBuffer {
		sw.sendHead(false)
	}
	return len(p), sw.err
}

func (sw *streamWriter) flush() {
	if !sw.started || sw.err != nil {
		return
	}
	if !sw.headOut {
		sw.sendHead(true)
		return
	}
	if err := sw.rc.Flush(); err != nil {
		sw.err = err
	}
}

// end leaves what is still buffered to go with the reply's end: net/http
// writes the body's last chunk and its end together when the handler
// returns, so a stream's last burst and its end take one write rather
// than two (and a stream that came in one burst, the whole reply, one).
// What it ends with (the access line, the meter) takes microseconds.
func (sw *streamWriter) end() {
	if sw.started && sw.err == nil && !sw.headOut {
		sw.sendHead(false)
	}
}

// sendHead starts the reply with what was written so far, and flushes it
// when asked, off the handler's stack.
func (sw *streamWriter) sendHead(flush bool) {
	sw.headOut = true
	var err error
	offstack.Run(func() {
		h := sw.x.w.Header()
		h["Content-Type"] = sw.ctype
		h["Cache-Control"] = noCache
		h["X-Accel-Buffering"] = noBuffering
		sw.x.setDropped()
		sw.x.w.WriteHeader(http.StatusOK)
		sw.x.status = http.StatusOK
		if _, err = sw.x.w.Write(sw.head); err == nil && flush {
			err = sw.rc.Flush()
		}
	})
	// net/http has copied it: the buffer (never the one append may have
	// grown in its place) goes back.
	heads.Put(sw.headBuf)
	sw.head, sw.headBuf = nil, nil
	if err != nil {
		sw.err = err
	}
}

// stream relays a stream event by event, framed as the dialect says,
// flushing whenever nothing more is at hand (dispatch.Call.Pace).
func (x *clientRequest) stream(req *parleyv1.Request, framing translate.Framing) {
	sw := &streamWriter{x: x, rc: http.NewResponseController(x.w), ctype: eventStreamType}
	var out *sse.Writer
	if framing == translate.FramingJSONArray {
		sw.ctype = jsonType
		out = sse.NewJSONArrayWriter(sw)
	} else {
		out = sse.NewWriter(sw)
	}
	defer out.Release()
	// The encoder is made when an event is first rendered: a relayed
	// stream renders none but an error, which an encoder that has seen
	// nothing writes from the error alone, so a relayed stream neither
	// makes one from the request (a responses encoder's echo of its
	// tools) nor holds one while it waits. A rendered stream makes it at
	// its start, before the request is let go of.
	var enc translate.StreamEncoder
	encoder := func() translate.StreamEncoder {
		if enc == nil {
			enc = x.c.NewStreamEncoder(req)
		}
		return enc
	}
	// The request's context ends when the handler returns (net/http's
	// does; a WebSocket's request gets one of its own): leaving the loop
	// below closes the upstream's stream, and nothing of it outlives
	// the request, so the stream needs no context of its own, which
	// every waiting stream would hold.
	ctx := x.r.Context()
	var failed *parleyv1.Error
	// ended is true once the stream's last event has been written: a
	// client that leaves after reading it (an SDK stops at the end it
	// knows) cut nothing, whatever reading on then finds.
	ended, delivered := false, false
	// begun is true once the stream's start has been written.
	begun := false
	for ev, err := range x.st.d.Stream(ctx, req, &x.call) {
		if delivered {
			break
		}
		if err == nil {
			ended = ended || ev.GetDone() != nil
			if x.turn != nil {
				x.turn.Observe(ctx, ev)
			}
			x.note(ev)
			if x.call.Forwarded && ev.GetError() == nil {
				err = x.relay(out)
			} else {
				// An error is rendered from its canonical form, never
				// relayed: what reaches the client is Parley's to vet.
				x.call.TakeFrames()
				err = encoder().Encode(out, ev)
				if err != nil && sw.err == nil {
					// The upstream's stream broke the canonical order.
					err = translate.UpstreamProtocol(x.call.Dialect, err)
				}
			}
		}
		if sw.err != nil {
			// The client went away: stop reading the upstream.
			failed = translate.ToProto(context.Canceled)
			break
		}
		if err != nil {
			failed = translate.ToProto(endedBy(ctx, err))
			if failed.GetRequestId() == "" {
				failed.RequestId = x.id
			}
			if !sw.started {
				x.fail(err)
				return
			}
			_ = encoder().Fail(out, failed)
			break
		}
		if !begun && ev.GetStart() != nil {
			begun = true
			x.letGoOfRequest(req)
		}
		if !x.call.Pace.More {
			if ended {
				// The stream's last burst goes out with the reply's end
				// (streamWriter.end).
				delivered = sw.err == nil
			} else {
				// The upstream's burst has been written whole: send it. A
				// burst goes out as one write rather than one per event.
				// Until the next, the stream holds neither the burst's
				// frames nor a buffer to write events in.
				sw.flush()
				x.call.ReleaseFrames()
				out.Idle()
			}
		}
	}
	if x.call.Forwarded && failed == nil {
		// Upstream events after the last canonical one ([DONE], say).
		_ = x.relay(out)
	}
	x.call.ReleaseFrames()
	if !sw.started && failed == nil {
		// A stream with no events at all: still a valid (empty) reply.
		sw.ctype = eventStreamType
	}
	_ = out.Close()
	sw.end()
	if failed != nil && failed.GetCode() == parleyv1.Code_CODE_CANCELED {
		x.status = 499
	}
	x.done(failed)
}

// letGoOfRequest drops what is large in the request once its stream has
// begun, so that a stream waiting on its upstream (for as long as a model
// thinks) does not hold it: an agent's conversation, instructions and
// tools, tens of kilobytes or more, that nothing reads again. The
// dispatcher retries nothing after a stream's first event, and the
// encoder took what it needed with the start (a responses encoder, whose
// snapshots echo the instructions and tools, its echo of them). A turn
// that stores its response keeps the request, to save with the reply; one
// that does not (store: false, as agents send) lets go of it too. A
// governed request whose input the upstream has not counted yet gets
// Parley's estimate of it now, for a stream cut before the upstream says
// (meter.settle).
func (x *clientRequest) letGoOfRequest(req *parleyv1.Request) {
	if x.turn != nil && !x.turn.LetGoOfRequest() {
		return
	}
	if x.ticket != nil && x.estimate == 0 && (x.usage == nil || x.usage.InputTokens == nil) {
		x.estimate = translate.Estimate(req)
	}
	x.req = nil
	req.Messages, req.Instructions, req.Tools = nil, nil, nil
}

// relay writes the upstream's own events read so far, for a stream whose
// request was forwarded: client and upstream speak one dialect, so what
// the upstream sent is what the client's encoder would have written, and
// the canonical events were decoded only to be observed.
func (x *clientRequest) relay(out *sse.Writer) error {
	for _, f := range x.call.TakeFrames() {
		if err := out.Event(f.Type, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// note keeps what the metrics need of an event: time to first token and
// the latest usage. A start without a response id gets the request's.
func (x *meter) note(ev *parleyv1.StreamEvent) {
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_Start:
		r := e.Start.GetResponse()
		if r.GetId() == "" && r != nil {
			r.Id = x.id
		}
		if u := r.GetUsage(); u != nil {
			x.usage = mergeUsage(x.usage, u)
		}
		if x.span != nil {
			x.model = r.GetModel()
		}
	case *parleyv1.StreamEvent_PartDelta:
		if x.ttft == 0 {
			x.ttft = time.Since(x.start)
		}
		d := e.PartDelta
		x.outBytes += int64(len(d.GetText()) + len(d.GetArguments()) + len(d.GetReasoningText()) + len(d.GetRefusal()) + len(d.GetReasoningSummary().GetText()))
	case *parleyv1.StreamEvent_PartStart:
		if x.ttft == 0 {
			x.ttft = time.Since(x.start)
		}
	case *parleyv1.StreamEvent_Usage:
		x.usage = mergeUsage(x.usage, e.Usage)
	case *parleyv1.StreamEvent_Finish:
		if x.span != nil {
			x.finishes = append(x.finishes, finishName(e.Finish.GetReason()))
		}
	}
}

// mergeUsage applies a usage update to the stream's own counts: set
// fields replace, unset keep.
func mergeUsage(old, u *parleyv1.Usage) *parleyv1.Usage {
	if old == nil {
		old = &parleyv1.Usage{}
	}
	translate.MergeUsageInto(old, u)
	return old
}
