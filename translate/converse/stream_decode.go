package converse

import (
	"encoding/base64"
	"fmt"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// Stream decoding: the events of /converse-stream into canonical stream
// events. The events arrive framed as AWS event-stream messages; the
// framing layer (OpenFrames) hands each over as an event whose type is
// the message's :event-type and whose data is its JSON payload, and turns
// exception messages into errors. The stream is:
//
//	messageStart
//	(contentBlockStart? contentBlockDelta* contentBlockStop)*
//	messageStop
//	metadata
//
// Only a tool call's block opens with contentBlockStart (its id and
// name); a text or reasoning block begins with its first delta. Block
// indices count up from 0 and blocks never interleave. messageStop says
// why the turn ended; metadata, after it, holds the usage. The canonical
// stream gets the finish at messageStop, the usage at metadata, and is
// done once both have come (or at the end of the body after messageStop,
// for a stream with no metadata); a body that ends before messageStop
// ended early.

// NewStreamDecoder implements translate.Upstream.
func (Upstream) NewStreamDecoder(t translate.Target) translate.StreamDecoder {
	return &streamDecoder{t: t, open: -1}
}

// blockKind is what an open block holds.
type blockKind uint8

const (
	blockNone    blockKind = iota
	blockPending           // started with no kind of its own; its first delta says
	blockText
	blockTool
	blockReasoning
)

type streamDecoder struct {
	t translate.Target
	// phase only moves forward: before messageStart, streaming, done.
	phase    translate.Phase
	next     int // index of the next block
	open     int // index of the open block, -1 when none
	kind     blockKind
	gotArgs  bool // the open tool block received argument text
	toolUse  bool // the turn made a tool call
	stopped  bool // messageStop came
	metadata bool // metadata came
}

func (d *streamDecoder) Decode(dst []*parleyv1.StreamEvent, ev sse.Event) ([]*parleyv1.StreamEvent, error) {
	if d.phase.Ended() {
		return dst, protocol("event %q after the end of the stream", ev.Type)
	}
	if !d.phase.Started() && ev.Type != "messageStart" {
		if !known[ev.Type] {
			return dst, nil
		}
		return dst, protocol("event %q before messageStart", ev.Type)
	}
	switch ev.Type {
	case "messageStart":
		var w messageStart
		if err := unmarshal(ev, &w); err != nil {
			return dst, err
		}
		if d.phase.Started() {
			return dst, protocol("a second messageStart")
		}
		d.phase = translate.PhaseStreaming
		resp := &parleyv1.Response{Model: d.t.Model, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS, Extensions: &parleyv1.Extensions{Dialect: thisDialect}}
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: resp}}}), nil
	case "contentBlockStart":
		var w blockStart
		if err := unmarshal(ev, &w); err != nil {
			return dst, err
		}
		return d.blockStart(dst, &w)
	case "contentBlockDelta":
		var w blockDelta
		if err := unmarshal(ev, &w); err != nil {
			return dst, err
		}
		return d.blockDelta(dst, &w)
	case "contentBlockStop":
		var w blockStop
		if err := unmarshal(ev, &w); err != nil {
			return dst, err
		}
		return d.blockStop(dst, &w)
	case "messageStop":
		var w messageStop
		if err := unmarshal(ev, &w); err != nil {
			return dst, err
		}
		return d.messageStop(dst, &w)
	case "metadata":
		var w metadata
		if err := unmarshal(ev, &w); err != nil {
			return dst, err
		}
		if d.metadata {
			return dst, protocol("a second metadata event")
		}
		d.metadata = true
		if w.Usage != nil {
			dst = append(dst, translate.UsageEvent(canonicalUsage(w.Usage)))
		}
		if d.stopped {
			dst = d.done(dst)
		}
		return dst, nil
	}
	// The service may add event types; an unknown one carries nothing this
	// stream needs.
	return dst, nil
}

// known are the event types of the stream.
var known = map[string]bool{
	"messageStart": true, "contentBlockStart": true, "contentBlockDelta": true,
	"contentBlockStop": true, "messageStop": true, "metadata": true,
}

func (d *streamDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	switch {
	case d.phase.Ended():
		return dst, nil
	case !d.stopped:
		return dst, translate.EndedEarly(thisDialect, "the converse upstream's stream ended before messageStop", nil)
	}
	return d.done(dst), nil
}

func (d *streamDecoder) done(dst []*parleyv1.StreamEvent) []*parleyv1.StreamEvent {
	d.phase = translate.PhaseEnded
	return append(dst, translate.CompletedEvent())
}

func protocol(format string, args ...any) error {
	return translate.UpstreamProtocol(thisDialect, fmt.Errorf(format, args...))
}

func unmarshal(ev sse.Event, v any) error {
	if err := jsonx.Unmarshal(ev.Data, v); err != nil {
		return translate.UpstreamProtocol(thisDialect, fmt.Errorf("event %q: %w", ev.Type, err))
	}
	return nil
}

func partStart(i int, p *parleyv1.Part) *parleyv1.StreamEvent {
	return translate.PartStartEvent(0, int32(i), p)
}

func partDelta(i int, pd *parleyv1.PartDelta) *parleyv1.StreamEvent {
	pd.Index = int32(i)
	return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: pd}}
}

// index checks the index of a block event: the open block's, or the next
// block's when none is open and open is allowed.
func (d *streamDecoder) index(p *int64, what string, opens bool) (int, error) {
	if p == nil {
		return 0, protocol("%s without contentBlockIndex", what)
	}
	i := *p
	switch {
	case d.open >= 0 && i == int64(d.open):
		return d.open, nil
	case d.open >= 0:
		return 0, protocol("%s for block %d while block %d is open", what, i, d.open)
	case !opens || i != int64(d.next):
		return 0, protocol("%s for block %d out of order (next is %d)", what, i, d.next)
	}
	return int(i), nil
}

func (d *streamDecoder) blockStart(dst []*parleyv1.StreamEvent, w *blockStart) ([]*parleyv1.StreamEvent, error) {
	if w.ContentBlockIndex == nil {
		return dst, protocol("contentBlockStart without contentBlockIndex")
	}
	if d.open >= 0 {
		return dst, protocol("contentBlockStart %d while block %d is open", *w.ContentBlockIndex, d.open)
	}
	i, err := d.index(w.ContentBlockIndex, "contentBlockStart", true)
	if err != nil {
		return dst, err
	}
	d.open, d.next, d.gotArgs = i, i+1, false
	if w.Start == nil || w.Start.ToolUse == nil {
		// A start of a kind with no canonical form of its own: its first
		// delta says what the block holds.
		d.kind = blockPending
		return dst, nil
	}
	tu := w.Start.ToolUse
	if tu.ToolUseID == "" || tu.Name == "" {
		return dst, protocol("contentBlockStart %d: toolUse without toolUseId or name", i)
	}
	d.kind, d.toolUse = blockTool, true
	return append(dst, partStart(i, translate.CallPart(tu.ToolUseID, tu.Name, ""))), nil
}

func (d *streamDecoder) blockDelta(dst []*parleyv1.StreamEvent, w *blockDelta) ([]*parleyv1.StreamEvent, error) {
	i, err := d.index(w.ContentBlockIndex, "contentBlockDelta", true)
	if err != nil {
		return dst, err
	}
	dl := w.Delta
	if dl == nil {
		return dst, protocol("contentBlockDelta %d without a delta", i)
	}
	var want blockKind
	switch {
	case dl.Text != nil, dl.Citation != nil:
		want = blockText
	case dl.ToolUse != nil:
		want = blockTool
	case dl.ReasoningContent != nil:
		want = blockReasoning
	default:
		return dst, nil // a delta of a kind Parley does not model
	}
	switch {
	case d.open < 0 || d.kind == blockPending:
		// The block begins with this delta.
		if want == blockTool {
			return dst, protocol("toolUse delta for block %d, which did not start as a tool call", i)
		}
		p := &parleyv1.Part{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{}}}
		if want == blockReasoning {
			r := &parleyv1.Reasoning{}
			if rc := dl.ReasoningContent; rc.Text == nil && rc.Signature == nil && len(rc.RedactedContent) > 0 {
				r.Redacted = true
			}
			p = &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: r}}
		}
		dst = append(dst, partStart(i, p))
		d.open, d.next, d.kind = i, i+1, want
	case d.kind != want:
		return dst, protocol("a delta of another kind for block %d", i)
	}
	switch want {
	case blockText:
		if dl.Text != nil {
			dst = append(dst, translate.TextDelta(0, int32(i), *dl.Text))
		}
		if dl.Citation != nil {
			if a := annotation(dl.Citation); a != nil {
				dst = append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Annotation{Annotation: a}}))
			}
		}
	case blockTool:
		if dl.ToolUse.Input != "" {
			d.gotArgs = true
		}
		dst = append(dst, translate.ArgumentsDelta(0, int32(i), dl.ToolUse.Input))
	case blockReasoning:
		rc := dl.ReasoningContent
		if rc.Text != nil {
			dst = append(dst, translate.ReasoningTextDelta(0, int32(i), *rc.Text))
		}
		if rc.Signature != nil {
			dst = append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Signature{Signature: translate.Stamp(*rc.Signature, thisDialect, d.t)}}))
		}
		if len(rc.RedactedContent) > 0 {
			enc := translate.Stamp(base64.StdEncoding.EncodeToString(rc.RedactedContent), thisDialect, d.t)
			dst = append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_EncryptedContent{EncryptedContent: enc}}))
		}
	}
	return dst, nil
}

func (d *streamDecoder) blockStop(dst []*parleyv1.StreamEvent, w *blockStop) ([]*parleyv1.StreamEvent, error) {
	i, err := d.index(w.ContentBlockIndex, "contentBlockStop", true)
	if err != nil {
		return dst, err
	}
	switch {
	case d.open < 0 || d.kind == blockPending:
		// A block that said nothing: an empty text.
		dst = append(dst, partStart(i, translate.TextPart("")))
	case d.kind == blockTool && !d.gotArgs:
		dst = append(dst, translate.ArgumentsDelta(0, int32(i), "{}"))
	}
	d.open, d.next, d.kind = -1, i+1, blockNone
	return append(dst, translate.PartStopEvent(0, int32(i))), nil
}

func (d *streamDecoder) messageStop(dst []*parleyv1.StreamEvent, w *messageStop) ([]*parleyv1.StreamEvent, error) {
	if d.open >= 0 {
		return dst, protocol("messageStop while block %d is open", d.open)
	}
	if d.stopped {
		return dst, protocol("a second messageStop")
	}
	d.stopped = true
	f := &parleyv1.Finish{}
	f.Reason, f.FinishMessage = finishReason(w.StopReason)
	f.Reason = translate.ToolUseFinish(f.Reason, d.toolUse)
	f.StopSequence = stopSequence(f.Reason, w.AdditionalModelResponseFields)
	dst = append(dst, translate.FinishEvent(f))
	if d.metadata {
		dst = d.done(dst)
	}
	return dst, nil
}
