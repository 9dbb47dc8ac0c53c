package messages

import (
	"errors"
	"fmt"
	"sync"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// Stream decoding: an upstream's events into canonical stream events.

// The stream of this dialect is:
//
//	message_start
//	(content_block_start content_block_delta* content_block_stop)*
//	message_delta
//	message_stop
//
// with ping anywhere and error ending it anywhere. Block indices count up
// from 0 and blocks never interleave.

// NewStreamDecoder implements translate.Upstream.
func (Upstream) NewStreamDecoder(t translate.Target) translate.StreamDecoder {
	return &streamDecoder{t: t, open: -1}
}

type streamDecoder struct {
	t translate.Target
	// phase only moves forward: before the start, streaming, ended.
	phase    translate.Phase
	next     int // index of the next block
	open     int // index of the open block, -1 when none
	kind     string
	gotArgs  bool // the open tool_use block received argument text
	toolUse  bool
	usage    usage // the latest counts, merged
	finished bool
}

// decodeScratch is what an event is decoded in. It is taken for the event
// and given back after it, so that decoding makes no allocation of its own
// and a stream waiting for its next event (thousands wait at once) holds
// none: it was most of a decoder's size.
type decodeScratch struct {
	quick quickEvent
	w     event
}

var scratches = sync.Pool{New: func() any { return new(decodeScratch) }}

func (d *streamDecoder) Decode(dst []*parleyv1.StreamEvent, ev sse.Event) ([]*parleyv1.StreamEvent, error) {
	s := scratches.Get().(*decodeScratch)
	dst, err := d.decode(dst, ev, &s.quick, &s.w)
	*s = decodeScratch{} // nothing of the event kept
	scratches.Put(s)
	return dst, err
}

func (d *streamDecoder) decode(dst []*parleyv1.StreamEvent, ev sse.Event, q *quickEvent, w *event) ([]*parleyv1.StreamEvent, error) {
	if !q.read(ev.Data, w) {
		*w = event{}
		if err := jsonx.Unmarshal(ev.Data, w); err != nil {
			return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("event %q: %w", ev.Type, err))
		}
	}
	if w.Type == "" {
		w.Type = ev.Type
	}
	if d.phase.Ended() && w.Type != "ping" {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("event %q after message_stop", w.Type))
	}
	if !d.phase.Started() && w.Type != "message_start" && w.Type != "ping" && w.Type != "error" {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("event %q before message_start", w.Type))
	}
	switch w.Type {
	case "ping":
		return append(dst, keepAlive()), nil
	case "message_start":
		return d.messageStart(dst, w)
	case "content_block_start":
		return d.blockStart(dst, w)
	case "content_block_delta":
		return d.blockDelta(dst, w)
	case "content_block_stop":
		if w.Index == nil || int(*w.Index) != d.open {
			return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("content_block_stop for block %v, but block %d is open", index(w.Index), d.open))
		}
		if d.kind == "tool_use" && !d.gotArgs {
			dst = append(dst, translate.ArgumentsDelta(0, int32(d.open), "{}"))
		}
		d.open = -1
		return append(dst, translate.PartStopEvent(0, int32(*w.Index))), nil
	case "message_delta":
		return d.messageDelta(dst, w)
	case "message_stop":
		if d.open >= 0 {
			return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("message_stop while block %d is open", d.open))
		}
		d.phase = translate.PhaseEnded
		return append(dst, translate.CompletedEvent()), nil
	case "error":
		if w.Error == nil {
			return dst, translate.UpstreamProtocol(thisDialect, errors.New("error event without an error"))
		}
		d.phase = translate.PhaseEnded
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: errorFromDetail(w.Error, 0)}}), nil
	}
	// The dialect may add event types; an unknown one carries nothing this
	// stream needs.
	return dst, nil
}

func (d *streamDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if !d.phase.Ended() {
		return dst, translate.EndedEarly(thisDialect, "the messages upstream's stream ended before message_stop", nil)
	}
	return dst, nil
}

func keepAlive() *parleyv1.StreamEvent {
	return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_KeepAlive{KeepAlive: &parleyv1.KeepAlive{}}}
}

func partDelta(i int, pd *parleyv1.PartDelta) *parleyv1.StreamEvent {
	pd.Index = int32(i)
	return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: pd}}
}

func index(p *int64) any {
	if p == nil {
		return "none"
	}
	return *p
}

func (d *streamDecoder) messageStart(dst []*parleyv1.StreamEvent, w *event) ([]*parleyv1.StreamEvent, error) {
	if d.phase.Started() {
		return dst, translate.UpstreamProtocol(thisDialect, errors.New("a second message_start"))
	}
	if w.Message == nil {
		return dst, translate.UpstreamProtocol(thisDialect, errors.New("message_start without a message"))
	}
	d.phase = translate.PhaseStreaming
	m := w.Message
	resp := &parleyv1.Response{Id: m.ID, Model: m.Model, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS, Extensions: upstreamMark()}
	if m.Usage != nil {
		d.usage = *m.Usage
		resp.Usage = canonicalUsage(m.Usage)
		resp.ServiceTier = serviceTier(m.Usage.ServiceTier, &resp.Extensions)
		jsonx.Keep(&resp.Extensions, thisDialect, "usage", m.Usage.Unknown)
	}
	jsonx.Keep(&resp.Extensions, thisDialect, "", m.Unknown)
	return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: resp}}}), nil
}

func (d *streamDecoder) blockStart(dst []*parleyv1.StreamEvent, w *event) ([]*parleyv1.StreamEvent, error) {
	if w.Index == nil || w.ContentBlock == nil {
		return dst, translate.UpstreamProtocol(thisDialect, errors.New("content_block_start without index or block"))
	}
	if d.open >= 0 {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("content_block_start %d while block %d is open", *w.Index, d.open))
	}
	if int(*w.Index) != d.next {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("content_block_start index %d out of order (next is %d)", *w.Index, d.next))
	}
	b := *w.ContentBlock
	d.kind, d.gotArgs = b.Type, false
	if b.Type == "tool_use" || b.Type == "server_tool_use" {
		// The input of a starting tool block is a placeholder; the real
		// arguments follow as input_json_delta.
		b.Input = nil
		if b.Type == "tool_use" {
			d.toolUse = true
		}
	}
	p, err := responseDecoder{t: d.t}.block(&b)
	if err != nil {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("content_block_start %d: %w", *w.Index, err))
	}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_ToolCall:
		k.ToolCall.Arguments = ""
	case *parleyv1.Part_HostedToolCall:
		k.HostedToolCall.Input = ""
	}
	if p.GetSignature().GetValue() == "" {
		p.Signature = nil // the empty signature of a starting thinking block
	}
	d.open, d.next = int(*w.Index), d.next+1
	return append(dst, translate.PartStartEvent(0, int32(*w.Index), p)), nil
}

func (d *streamDecoder) blockDelta(dst []*parleyv1.StreamEvent, w *event) ([]*parleyv1.StreamEvent, error) {
	if w.Index == nil || int(*w.Index) != d.open || w.Delta == nil {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("content_block_delta for block %v, but block %d is open", index(w.Index), d.open))
	}
	i := d.open
	dl := w.Delta
	if known, extends := deltaExtends(dl.Type, d.kind); known && !extends {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("%s for a %s block", dl.Type, d.kind))
	}
	switch dl.Type {
	case "text_delta":
		return append(dst, translate.TextDelta(0, int32(i), deref(dl.Text))), nil
	case "input_json_delta":
		if deref(dl.PartialJSON) != "" {
			d.gotArgs = true
		}
		return append(dst, translate.ArgumentsDelta(0, int32(i), deref(dl.PartialJSON))), nil
	case "thinking_delta":
		return append(dst, translate.ReasoningTextDelta(0, int32(i), deref(dl.Thinking))), nil
	case "signature_delta":
		return append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Signature{Signature: translate.Stamp(deref(dl.Signature), thisDialect, d.t)}})), nil
	case "citations_delta":
		if dl.Citation == nil {
			return dst, translate.UpstreamProtocol(thisDialect, errors.New("citations_delta without a citation"))
		}
		a, ok := readCitation(dl.Citation)
		if !ok {
			return dst, nil // a citation kind Parley does not model
		}
		return append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Annotation{Annotation: a}})), nil
	}
	return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("unknown delta type %q", dl.Type))
}

// deltaExtends reports whether typ is a delta type it knows (known), and
// whether such a delta may extend a block of kind. Asked once a delta: a
// switch, where joining the kind into a pattern to look for cost a few
// hundred instructions each time.
func deltaExtends(typ, kind string) (known, extends bool) {
	switch typ {
	case "text_delta", "citations_delta":
		return true, kind == "text"
	case "input_json_delta":
		return true, kind == "tool_use" || kind == "server_tool_use"
	case "thinking_delta", "signature_delta":
		return true, kind == "thinking"
	}
	return false, false
}

func (d *streamDecoder) messageDelta(dst []*parleyv1.StreamEvent, w *event) ([]*parleyv1.StreamEvent, error) {
	if d.open >= 0 {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("message_delta while block %d is open", d.open))
	}
	if u := w.Usage; u != nil {
		mergeUsage(&d.usage, u)
		dst = append(dst, translate.UsageEvent(canonicalUsage(&d.usage)))
	}
	if w.Delta != nil && w.Delta.StopReason != nil && !d.finished {
		d.finished = true
		f := &parleyv1.Finish{}
		f.Reason, f.FinishMessage = finishReason(*w.Delta.StopReason)
		f.Reason = translate.ToolUseFinish(f.Reason, d.toolUse)
		f.StopSequence = deref(w.Delta.StopSequence)
		jsonx.Keep(&f.Extensions, thisDialect, "", w.Delta.Unknown)
		if w.Usage != nil {
			// Members of the closing usage the canonical counts do not
			// hold (per-iteration usage, say) ride with the finish.
			jsonx.Keep(&f.Extensions, thisDialect, "usage", w.Usage.Unknown)
		}
		dst = append(dst, translate.FinishEvent(f))
	}
	return dst, nil
}
