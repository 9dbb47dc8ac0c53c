package messages

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

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
	t        translate.Target
	started  bool
	stopped  bool
	next     int // index of the next block
	open     int // index of the open block, -1 when none
	kind     string
	gotArgs  bool // the open tool_use block received argument text
	toolUse  bool
	usage    Usage // the latest counts, merged
	finished bool
}

func (d *streamDecoder) Decode(dst []*parleyv1.StreamEvent, ev sse.Event) ([]*parleyv1.StreamEvent, error) {
	var w Event
	if err := jsonx.Unmarshal(ev.Data, &w); err != nil {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("event %q: %w", ev.Type, err))
	}
	if w.Type == "" {
		w.Type = ev.Type
	}
	if d.stopped && w.Type != "ping" {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("event %q after message_stop", w.Type))
	}
	if !d.started && w.Type != "message_start" && w.Type != "ping" && w.Type != "error" {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("event %q before message_start", w.Type))
	}
	switch w.Type {
	case "ping":
		return append(dst, keepAlive()), nil
	case "message_start":
		return d.messageStart(dst, &w)
	case "content_block_start":
		return d.blockStart(dst, &w)
	case "content_block_delta":
		return d.blockDelta(dst, &w)
	case "content_block_stop":
		if w.Index == nil || int(*w.Index) != d.open {
			return dst, translate.UpstreamProtocol(D, fmt.Errorf("content_block_stop for block %v, but block %d is open", index(w.Index), d.open))
		}
		if d.kind == "tool_use" && !d.gotArgs {
			dst = append(dst, partDelta(d.open, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Arguments{Arguments: "{}"}}))
		}
		d.open = -1
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{Index: int32(*w.Index)}}}), nil
	case "message_delta":
		return d.messageDelta(dst, &w)
	case "message_stop":
		if d.open >= 0 {
			return dst, translate.UpstreamProtocol(D, fmt.Errorf("message_stop while block %d is open", d.open))
		}
		d.stopped = true
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED}}}), nil
	case "error":
		if w.Error == nil {
			return dst, translate.UpstreamProtocol(D, errors.New("error event without an error"))
		}
		d.stopped = true
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: errorFromDetail(w.Error, 0)}}), nil
	}
	// The dialect may add event types; an unknown one carries nothing this
	// stream needs.
	return dst, nil
}

func (d *streamDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if !d.stopped {
		return dst, &translate.UpstreamError{Err: &parleyv1.Error{
			Code:    parleyv1.Code_CODE_UNAVAILABLE,
			Message: "the messages upstream's stream ended before message_stop",
			Origin:  &parleyv1.Origin{Dialect: D},
			Retry:   &parleyv1.RetryAdvice{Retryable: true},
		}}
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

func (d *streamDecoder) messageStart(dst []*parleyv1.StreamEvent, w *Event) ([]*parleyv1.StreamEvent, error) {
	if d.started {
		return dst, translate.UpstreamProtocol(D, errors.New("a second message_start"))
	}
	if w.Message == nil {
		return dst, translate.UpstreamProtocol(D, errors.New("message_start without a message"))
	}
	d.started = true
	m := w.Message
	resp := &parleyv1.Response{Id: m.ID, Model: m.Model, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS, Extensions: upstreamMark()}
	if m.Usage != nil {
		d.usage = *m.Usage
		resp.Usage = canonicalUsage(m.Usage)
		resp.ServiceTier = serviceTier(m.Usage.ServiceTier, &resp.Extensions)
		jsonx.Keep(&resp.Extensions, D, "usage", m.Usage.Unknown)
	}
	jsonx.Keep(&resp.Extensions, D, "", m.Unknown)
	return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: resp}}}), nil
}

func (d *streamDecoder) blockStart(dst []*parleyv1.StreamEvent, w *Event) ([]*parleyv1.StreamEvent, error) {
	if w.Index == nil || w.ContentBlock == nil {
		return dst, translate.UpstreamProtocol(D, errors.New("content_block_start without index or block"))
	}
	if d.open >= 0 {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("content_block_start %d while block %d is open", *w.Index, d.open))
	}
	if int(*w.Index) != d.next {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("content_block_start index %d out of order (next is %d)", *w.Index, d.next))
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
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("content_block_start %d: %w", *w.Index, err))
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
	return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Index: int32(*w.Index), Part: p}}}), nil
}

func (d *streamDecoder) blockDelta(dst []*parleyv1.StreamEvent, w *Event) ([]*parleyv1.StreamEvent, error) {
	if w.Index == nil || int(*w.Index) != d.open || w.Delta == nil {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("content_block_delta for block %v, but block %d is open", index(w.Index), d.open))
	}
	i := d.open
	dl := w.Delta
	if want, ok := deltaBlock[dl.Type]; ok && !strings.Contains(want, "|"+d.kind+"|") {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("%s for a %s block", dl.Type, d.kind))
	}
	switch dl.Type {
	case "text_delta":
		return append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Text{Text: deref(dl.Text)}})), nil
	case "input_json_delta":
		if deref(dl.PartialJSON) != "" {
			d.gotArgs = true
		}
		return append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Arguments{Arguments: deref(dl.PartialJSON)}})), nil
	case "thinking_delta":
		return append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_ReasoningText{ReasoningText: deref(dl.Thinking)}})), nil
	case "signature_delta":
		return append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Signature{Signature: translate.Stamp(deref(dl.Signature), D, d.t)}})), nil
	case "citations_delta":
		if dl.Citation == nil {
			return dst, translate.UpstreamProtocol(D, errors.New("citations_delta without a citation"))
		}
		a, ok := citation(dl.Citation)
		if !ok {
			return dst, nil // a citation kind Parley does not model
		}
		return append(dst, partDelta(i, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Annotation{Annotation: a}})), nil
	}
	return dst, translate.UpstreamProtocol(D, fmt.Errorf("unknown delta type %q", dl.Type))
}

// deltaBlock lists the block types each delta type may extend.
var deltaBlock = map[string]string{
	"text_delta":       "|text|",
	"citations_delta":  "|text|",
	"input_json_delta": "|tool_use|server_tool_use|",
	"thinking_delta":   "|thinking|",
	"signature_delta":  "|thinking|",
}

func (d *streamDecoder) messageDelta(dst []*parleyv1.StreamEvent, w *Event) ([]*parleyv1.StreamEvent, error) {
	if d.open >= 0 {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("message_delta while block %d is open", d.open))
	}
	if u := w.Usage; u != nil {
		mergeUsage(&d.usage, u)
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Usage{Usage: canonicalUsage(&d.usage)}})
	}
	if w.Delta != nil && w.Delta.StopReason != nil && !d.finished {
		d.finished = true
		f := &parleyv1.Finish{}
		f.Reason, f.FinishMessage = finishReason(*w.Delta.StopReason)
		f.Reason = translate.ToolUseFinish(f.Reason, d.toolUse)
		f.StopSequence = deref(w.Delta.StopSequence)
		jsonx.Keep(&f.Extensions, D, "", w.Delta.Unknown)
		if w.Usage != nil {
			// Members of the closing usage the canonical counts do not
			// hold (per-iteration usage, say) ride with the finish.
			jsonx.Keep(&f.Extensions, D, "usage", w.Usage.Unknown)
		}
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: f}})
	}
	return dst, nil
}

// mergeUsage overwrites the counts of dst that src reports.
func mergeUsage(dst, src *Usage) {
	if src.InputTokens != nil {
		dst.InputTokens = src.InputTokens
	}
	if src.OutputTokens != nil {
		dst.OutputTokens = src.OutputTokens
	}
	if src.CacheCreationInputTokens != nil {
		dst.CacheCreationInputTokens = src.CacheCreationInputTokens
	}
	if src.CacheReadInputTokens != nil {
		dst.CacheReadInputTokens = src.CacheReadInputTokens
	}
	if src.CacheCreation != nil {
		dst.CacheCreation = src.CacheCreation
	}
	if src.ServerToolUse != nil {
		dst.ServerToolUse = src.ServerToolUse
	}
	if src.OutputTokensDetails != nil {
		dst.OutputTokensDetails = src.OutputTokensDetails
	}
}

// NewStreamEncoder implements translate.Client.
func (Client) NewStreamEncoder(req *parleyv1.Request) translate.StreamEncoder {
	return &streamEncoder{req: req, wire: map[int32]int{}}
}

// streamEncoder renders a canonical stream as this dialect's events for a
// client. Only the first candidate is rendered: the dialect has one.
type streamEncoder struct {
	req     *parleyv1.Request
	enc     clientEncoder
	started bool
	ended   bool

	next      int           // wire index of the next block
	wire      map[int32]int // canonical part index -> wire index of its block
	open      *parleyv1.Part
	openWire  int
	openIsRsn bool             // the open wire block is a thinking block
	lateSig   *parleyv1.Opaque // a signature that arrived after its part began
	sentArgs  bool             // argument text of the open block has gone out
	toolUse   bool

	usage        *parleyv1.Usage
	stopReason   string
	stopSequence *string
	stopUnknown  jsonx.Unknown
	usageUnknown jsonx.Unknown
}

func (s *streamEncoder) Encode(w *sse.Writer, ev *parleyv1.StreamEvent) error {
	if s.ended {
		return fmt.Errorf("stream event %T after the end of the stream", ev.GetEvent())
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_Start:
		return s.start(w, e.Start.GetResponse())
	case *parleyv1.StreamEvent_KeepAlive:
		return s.write(w, "ping", pingEvent{Type: "ping"})
	case *parleyv1.StreamEvent_Error:
		// An upstream may fail before it says anything; the error event
		// is valid at any point of the stream.
		return s.Fail(w, e.Error)
	}
	if !s.started {
		return fmt.Errorf("stream event %T before the start", ev.GetEvent())
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_PartStart:
		if e.PartStart.GetCandidateIndex() != 0 {
			return nil
		}
		return s.partStart(w, e.PartStart)
	case *parleyv1.StreamEvent_PartDelta:
		if e.PartDelta.GetCandidateIndex() != 0 {
			return nil
		}
		return s.partDelta(w, e.PartDelta)
	case *parleyv1.StreamEvent_PartStop:
		if e.PartStop.GetCandidateIndex() != 0 {
			return nil
		}
		return s.partStop(w, e.PartStop)
	case *parleyv1.StreamEvent_Usage:
		if s.usage == nil {
			s.usage = &parleyv1.Usage{}
		}
		translate.MergeUsageInto(s.usage, e.Usage)
	case *parleyv1.StreamEvent_Finish:
		if e.Finish.GetCandidateIndex() == 0 {
			s.stopReason = stopReason(e.Finish.GetReason(), s.toolUse)
			if e.Finish.GetStopSequence() != "" {
				s.stopSequence = ptr(e.Finish.GetStopSequence())
			}
			s.stopUnknown = jsonx.Take(e.Finish.GetExtensions(), D, "")
			s.usageUnknown = jsonx.Take(e.Finish.GetExtensions(), D, "usage")
		}
	case *parleyv1.StreamEvent_Metadata:
		// Safety ratings and grounding have no place in this dialect; a
		// blocked prompt ends the turn as a refusal.
		if promptBlocked(e.Metadata.GetPromptFeedback()) && s.stopReason == "" {
			s.stopReason = "refusal"
		}
	case *parleyv1.StreamEvent_Done:
		return s.done(w)
	default:
		return fmt.Errorf("unknown stream event %T", ev.GetEvent())
	}
	return nil
}

type pingEvent struct {
	Type string `json:"type"`
}

func (s *streamEncoder) write(w *sse.Writer, typ string, v any) error {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return err
	}
	return w.Event(typ, b)
}

type messageStartEvent struct {
	Type    string    `json:"type"`
	Message *Response `json:"message"`
}

func (s *streamEncoder) start(w *sse.Writer, resp *parleyv1.Response) error {
	if s.started {
		return errors.New("a second start event")
	}
	s.started = true
	if resp == nil {
		resp = &parleyv1.Response{}
	}
	s.enc = clientEncoder{same: resp.GetExtensions().GetDialect() == D}
	s.usage = cloneUsage(resp.GetUsage())
	m := clientResponse(s.req, resp)
	if resp.GetUsage().GetOutputTokens() == 0 {
		m.Usage.OutputTokens = ptr(int64(1)) // as the service reports before the first token
	}
	return s.write(w, "message_start", messageStartEvent{Type: "message_start", Message: m})
}

func cloneUsage(u *parleyv1.Usage) *parleyv1.Usage {
	if u == nil {
		return nil
	}
	return proto.Clone(u).(*parleyv1.Usage)
}

type blockStartEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock *Block `json:"content_block"`
}

type blockDeltaEvent struct {
	Type  string    `json:"type"`
	Index int       `json:"index"`
	Delta wireDelta `json:"delta"`
}

type wireDelta struct {
	Type        string    `json:"type"`
	Text        *string   `json:"text,omitzero"`
	PartialJSON *string   `json:"partial_json,omitzero"`
	Thinking    *string   `json:"thinking,omitzero"`
	Signature   *string   `json:"signature,omitzero"`
	Citation    *Citation `json:"citation,omitzero"`
}

type blockStopEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

func (s *streamEncoder) partStart(w *sse.Writer, ps *parleyv1.PartStart) error {
	if s.open != nil {
		return fmt.Errorf("part_start %d while part %d is open", ps.GetIndex(), s.openIndex())
	}
	p := ps.GetPart()
	blocks, err := s.enc.part(p, true)
	if err != nil {
		return err
	}
	if p.GetToolCall() != nil {
		s.toolUse = true
	}
	s.open = p
	s.sentArgs = false
	if len(blocks) == 0 {
		s.openWire = -1
		s.wire[ps.GetIndex()] = -1
		return nil
	}
	// A carrier block for a signature known at the start goes out whole.
	for _, b := range blocks[:len(blocks)-1] {
		if err := s.wholeBlock(w, b); err != nil {
			return err
		}
	}
	b := blocks[len(blocks)-1]
	s.openWire = s.next
	s.wire[ps.GetIndex()] = s.next
	s.next++
	s.openIsRsn = b.Type == "thinking"
	if err := s.write(w, "content_block_start", blockStartEvent{Type: "content_block_start", Index: s.openWire, ContentBlock: &b}); err != nil {
		return err
	}
	// Content that arrived with the start goes out as deltas.
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		if t := k.Text.GetText(); t != "" {
			return s.delta(w, wireDelta{Type: "text_delta", Text: ptr(t)})
		}
	case *parleyv1.Part_Refusal:
		if t := k.Refusal.GetText(); t != "" {
			return s.delta(w, wireDelta{Type: "text_delta", Text: ptr(t)})
		}
	case *parleyv1.Part_ToolCall:
		if a := k.ToolCall.GetArguments(); a != "" {
			s.sentArgs = true
			return s.delta(w, wireDelta{Type: "input_json_delta", PartialJSON: ptr(a)})
		}
	case *parleyv1.Part_HostedToolCall:
		if a := k.HostedToolCall.GetInput(); a != "" {
			return s.delta(w, wireDelta{Type: "input_json_delta", PartialJSON: ptr(a)})
		}
	case *parleyv1.Part_Reasoning:
		if b.Type != "thinking" {
			return nil
		}
		if t := reasoningText(k.Reasoning); t != "" {
			if err := s.delta(w, wireDelta{Type: "thinking_delta", Thinking: ptr(t)}); err != nil {
				return err
			}
		}
		if sig := reasoningSignature(p); sig != "" {
			return s.delta(w, wireDelta{Type: "signature_delta", Signature: ptr(sig)})
		}
	case *parleyv1.Part_ExecutableCode, *parleyv1.Part_CodeExecutionResult:
		full, err := s.enc.part(p, false)
		if err == nil && len(full) > 0 && full[len(full)-1].Text != nil {
			return s.delta(w, wireDelta{Type: "text_delta", Text: full[len(full)-1].Text})
		}
	}
	return nil
}

func (s *streamEncoder) openIndex() int { return s.openWire }

// wholeBlock writes a block that is complete at its start.
func (s *streamEncoder) wholeBlock(w *sse.Writer, b Block) error {
	i := s.next
	s.next++
	start := b
	var tail []wireDelta
	if b.Type == "thinking" {
		start.Thinking, start.Signature = ptr(""), ptr("")
		if t := deref(b.Thinking); t != "" {
			tail = append(tail, wireDelta{Type: "thinking_delta", Thinking: ptr(t)})
		}
		if sig := deref(b.Signature); sig != "" {
			tail = append(tail, wireDelta{Type: "signature_delta", Signature: ptr(sig)})
		}
	}
	if err := s.write(w, "content_block_start", blockStartEvent{Type: "content_block_start", Index: i, ContentBlock: &start}); err != nil {
		return err
	}
	for _, d := range tail {
		if err := s.write(w, "content_block_delta", blockDeltaEvent{Type: "content_block_delta", Index: i, Delta: d}); err != nil {
			return err
		}
	}
	return s.write(w, "content_block_stop", blockStopEvent{Type: "content_block_stop", Index: i})
}

func (s *streamEncoder) delta(w *sse.Writer, d wireDelta) error {
	return s.write(w, "content_block_delta", blockDeltaEvent{Type: "content_block_delta", Index: s.openWire, Delta: d})
}

func (s *streamEncoder) partDelta(w *sse.Writer, pd *parleyv1.PartDelta) error {
	wi, ok := s.wire[pd.GetIndex()]
	if !ok || s.open == nil || wi != s.openWire {
		return fmt.Errorf("part_delta for part %d, which is not open", pd.GetIndex())
	}
	if wi < 0 {
		return nil // a part this dialect leaves out
	}
	switch d := pd.GetDelta().(type) {
	case *parleyv1.PartDelta_Text:
		return s.delta(w, wireDelta{Type: "text_delta", Text: ptr(d.Text)})
	case *parleyv1.PartDelta_Refusal:
		return s.delta(w, wireDelta{Type: "text_delta", Text: ptr(d.Refusal)})
	case *parleyv1.PartDelta_Arguments:
		if d.Arguments == "{}" && !s.sentArgs {
			return nil // the "{}" input of the block's start already says it
		}
		if d.Arguments != "" {
			s.sentArgs = true
		}
		return s.delta(w, wireDelta{Type: "input_json_delta", PartialJSON: ptr(d.Arguments)})
	case *parleyv1.PartDelta_ReasoningText:
		if !s.openIsRsn {
			return nil
		}
		return s.delta(w, wireDelta{Type: "thinking_delta", Thinking: ptr(d.ReasoningText)})
	case *parleyv1.PartDelta_ReasoningSummary:
		if !s.openIsRsn {
			return nil
		}
		text := d.ReasoningSummary.GetText()
		if d.ReasoningSummary.GetSummaryIndex() > 0 && s.summaryStart(d.ReasoningSummary) {
			text = "\n\n" + text
		}
		return s.delta(w, wireDelta{Type: "thinking_delta", Thinking: ptr(text)})
	case *parleyv1.PartDelta_Signature:
		if s.openIsRsn {
			return s.delta(w, wireDelta{Type: "signature_delta", Signature: ptr(translate.SealOpaque(d.Signature, D, translate.SealAsIs))})
		}
		s.lateSig = d.Signature
	case *parleyv1.PartDelta_EncryptedContent:
		if s.openIsRsn {
			return s.delta(w, wireDelta{Type: "signature_delta", Signature: ptr(translate.SealOpaque(d.EncryptedContent, D, translate.SealEncrypted))})
		}
	case *parleyv1.PartDelta_Annotation:
		c, ok := wireCitation(d.Annotation)
		if !ok {
			return nil
		}
		return s.delta(w, wireDelta{Type: "citations_delta", Citation: &c})
	}
	return nil
}

// summaryStart reports whether a summary delta begins a new summary, and
// remembers the summary it belongs to.
func (s *streamEncoder) summaryStart(d *parleyv1.ReasoningSummaryDelta) bool {
	r := s.open.GetReasoning()
	if r == nil {
		return false
	}
	n := int32(len(r.GetSummary()))
	if d.GetSummaryIndex() >= n {
		r.Summary = append(r.Summary, make([]string, d.GetSummaryIndex()-n+1)...)
		return true
	}
	return false
}

func (s *streamEncoder) partStop(w *sse.Writer, ps *parleyv1.PartStop) error {
	wi, ok := s.wire[ps.GetIndex()]
	if !ok || s.open == nil || wi != s.openWire {
		return fmt.Errorf("part_stop for part %d, which is not open", ps.GetIndex())
	}
	s.open = nil
	if wi < 0 {
		return nil
	}
	if err := s.write(w, "content_block_stop", blockStopEvent{Type: "content_block_stop", Index: wi}); err != nil {
		return err
	}
	if sig := s.lateSig; sig != nil {
		s.lateSig = nil
		return s.wholeBlock(w, carrierBlock(sig, translate.SealCarrierPrev))
	}
	return nil
}

type messageDeltaEvent struct {
	Type  string            `json:"type"`
	Delta messageDeltaDelta `json:"delta"`
	Usage *Usage            `json:"usage"`
}

type messageDeltaDelta struct {
	StopReason   string        `json:"stop_reason"`
	StopSequence *string       `json:"stop_sequence"`
	Unknown      jsonx.Unknown `json:",embed"`
}

func (s *streamEncoder) done(w *sse.Writer) error {
	if s.open != nil {
		return fmt.Errorf("done while part %d is open", s.openWire)
	}
	s.ended = true
	reason := s.stopReason
	if reason == "" {
		reason = stopReason(parleyv1.FinishReason_FINISH_REASON_STOP, s.toolUse)
	}
	u := s.usage
	if u == nil {
		u = &parleyv1.Usage{}
	}
	wu := wireUsage(u)
	wu.CacheCreation = nil // message_start reported the split; message_delta carries totals
	wu.Unknown = s.usageUnknown
	if err := s.write(w, "message_delta", messageDeltaEvent{Type: "message_delta", Delta: messageDeltaDelta{StopReason: reason, StopSequence: s.stopSequence, Unknown: s.stopUnknown}, Usage: wu}); err != nil {
		return err
	}
	return s.write(w, "message_stop", pingEvent{Type: "message_stop"})
}

// Fail implements translate.StreamEncoder: the dialect's in-stream error
// event, after which the stream ends.
func (s *streamEncoder) Fail(w *sse.Writer, e *parleyv1.Error) error {
	s.ended = true
	typ, _ := errorType(e)
	return s.write(w, "error", ErrorBody{Type: "error", Error: ErrorDetail{Type: typ, Message: errorMessage(e)}})
}
