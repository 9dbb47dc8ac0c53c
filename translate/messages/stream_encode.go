package messages

import (
	"errors"
	"fmt"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// Stream encoding: canonical stream events into this dialect's events for
// a client (the order of events is described in stream_decode.go).

// NewStreamEncoder implements translate.Client.
func (Client) NewStreamEncoder(req *parleyv1.Request) translate.StreamEncoder {
	return &streamEncoder{req: req, wire: map[int32]int{}}
}

// streamEncoder renders a canonical stream as this dialect's events for a
// client. Only the first candidate is rendered: the dialect has one.
type streamEncoder struct {
	req *parleyv1.Request
	enc clientEncoder
	// phase only moves forward: before the start, streaming, ended.
	phase translate.Phase

	next      int           // wire index of the next block
	wire      map[int32]int // canonical part index -> wire index of its block
	open      *parleyv1.Part
	openWire  int
	openIsRsn bool             // the open wire block is a thinking block
	signed    bool             // a signature went out for the open thinking block
	lateSig   *parleyv1.Opaque // a signature that arrived after its part began
	sentArgs  bool             // argument text of the open block has gone out
	toolUse   bool

	// buf is reused by deltaBytes for the events it writes.
	buf []byte

	usage        *parleyv1.Usage
	stopReason   string
	stopSequence *string
	stopUnknown  jsonx.Unknown
	usageUnknown jsonx.Unknown
}

func (s *streamEncoder) Encode(w *sse.Writer, ev *parleyv1.StreamEvent) error {
	if s.phase.Ended() {
		return fmt.Errorf("stream event %T after the end of the stream", ev.GetEvent())
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_Start:
		return s.start(w, e.Start.GetResponse())
	case *parleyv1.StreamEvent_KeepAlive:
		return w.Event("ping", ping)
	case *parleyv1.StreamEvent_Error:
		// An upstream may fail before it says anything; the error event
		// is valid at any point of the stream.
		return s.Fail(w, e.Error)
	}
	if !s.phase.Started() {
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
			s.stopUnknown = jsonx.Take(e.Finish.GetExtensions(), thisDialect, "")
			s.usageUnknown = jsonx.Take(e.Finish.GetExtensions(), thisDialect, "usage")
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

// The events that are only a type.
var (
	ping        = []byte(`{"type":"ping"}`)
	messageStop = []byte(`{"type":"message_stop"}`)
)

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
	if s.phase.Started() {
		return errors.New("a second start event")
	}
	s.phase = translate.PhaseStreaming
	if resp == nil {
		resp = &parleyv1.Response{}
	}
	s.enc = clientEncoder{same: resp.GetExtensions().GetDialect() == thisDialect}
	u := resp.GetUsage()
	s.usage = cloneUsage(u)
	if u == nil || u.InputTokens == nil {
		// An upstream that reports usage only at its end (chat completions,
		// responses) said nothing of the input yet. Clients read input
		// tokens here (libraries size context by it), so they get Parley's
		// estimate now and the upstream's figure in message_delta.
		if s.usage == nil {
			s.usage = &parleyv1.Usage{}
		}
		s.usage.InputTokens = ptr(translate.Estimate(s.req))
		u = s.usage
	}
	m := clientResponseUsage(s.req, resp, u)
	if u.GetOutputTokens() == 0 {
		m.Usage.OutputTokens = ptr(int64(1)) // as the service reports before the first token
	}
	if b, ok := s.quickStart(m); ok {
		return w.Event("message_start", b)
	}
	return s.write(w, "message_start", messageStartEvent{Type: "message_start", Message: m})
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
	Citation    *citation `json:"citation,omitzero"`
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
	s.openIsRsn, s.signed = b.Type == "thinking", false
	if err := s.blockStart(w, s.openWire, &b); err != nil {
		return err
	}
	// Content that arrived with the start goes out as deltas.
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		if t := k.Text.GetText(); t != "" {
			return s.textDelta(w, "text_delta", textField, t)
		}
	case *parleyv1.Part_Refusal:
		if t := k.Refusal.GetText(); t != "" {
			return s.textDelta(w, "text_delta", textField, t)
		}
	case *parleyv1.Part_ToolCall:
		if a := k.ToolCall.GetArguments(); a != "" {
			s.sentArgs = true
			return s.textDelta(w, "input_json_delta", partialJSONField, a)
		}
	case *parleyv1.Part_HostedToolCall:
		if a := k.HostedToolCall.GetInput(); a != "" {
			return s.textDelta(w, "input_json_delta", partialJSONField, a)
		}
	case *parleyv1.Part_Reasoning:
		if b.Type != "thinking" {
			return nil
		}
		if t := reasoningText(k.Reasoning); t != "" {
			if err := s.textDelta(w, "thinking_delta", thinkingField, t); err != nil {
				return err
			}
		}
		if sig := reasoningSignature(p); sig != "" {
			s.signed = true
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
		tail = append(tail, wireDelta{Type: "signature_delta", Signature: ptr(unsignedIfNone(deref(b.Signature)))})
	}
	if err := s.blockStart(w, i, &start); err != nil {
		return err
	}
	for _, d := range tail {
		if err := s.write(w, "content_block_delta", blockDeltaEvent{Type: "content_block_delta", Index: i, Delta: d}); err != nil {
			return err
		}
	}
	return s.blockStop(w, i)
}

func (s *streamEncoder) delta(w *sse.Writer, d wireDelta) error {
	switch {
	case d.Signature != nil || d.Citation != nil:
	case d.Text != nil && d.PartialJSON == nil && d.Thinking == nil:
		return s.textDelta(w, d.Type, textField, *d.Text)
	case d.PartialJSON != nil && d.Text == nil && d.Thinking == nil:
		return s.textDelta(w, d.Type, partialJSONField, *d.PartialJSON)
	case d.Thinking != nil && d.Text == nil && d.PartialJSON == nil:
		return s.textDelta(w, d.Type, thinkingField, *d.Thinking)
	}
	return s.write(w, "content_block_delta", blockDeltaEvent{Type: "content_block_delta", Index: s.openWire, Delta: d})
}

// The members a delta of text, thinking or tool arguments carries its
// text in, as textDelta writes them.
const (
	textField        = `","text":`
	partialJSONField = `","partial_json":`
	thinkingField    = `","thinking":`
)

// textDelta writes a delta of text, thinking or tool arguments, the events
// a stream is mostly made of, without reflection and without a wireDelta
// made for it: the same bytes jsonx.Marshal writes of one
// (TestDeltaBytesIsTheMarshalledEvent). field is the member the text goes
// in (textField, partialJSONField or thinkingField).
func (s *streamEncoder) textDelta(w *sse.Writer, typ, field, text string) error {
	if b, ok := s.deltaBytes(typ, field, text); ok {
		err := w.Event("content_block_delta", b)
		if s.buf = b; cap(b) > maxKeptBuf {
			s.buf = nil // a large delta (a file's content as tool arguments) is not kept
		}
		return err
	}
	// A copy, so that only this way (rare) puts the text on the heap.
	t := text
	d := wireDelta{Type: typ}
	switch field {
	case textField:
		d.Text = &t
	case partialJSONField:
		d.PartialJSON = &t
	default:
		d.Thinking = &t
	}
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
		return s.textDelta(w, "text_delta", textField, d.Text)
	case *parleyv1.PartDelta_Refusal:
		return s.textDelta(w, "text_delta", textField, d.Refusal)
	case *parleyv1.PartDelta_Arguments:
		if d.Arguments == "{}" && !s.sentArgs {
			return nil // the "{}" input of the block's start already says it
		}
		if d.Arguments != "" {
			s.sentArgs = true
		}
		return s.textDelta(w, "input_json_delta", partialJSONField, d.Arguments)
	case *parleyv1.PartDelta_ReasoningText:
		if !s.openIsRsn {
			return nil
		}
		return s.textDelta(w, "thinking_delta", thinkingField, d.ReasoningText)
	case *parleyv1.PartDelta_ReasoningSummary:
		if !s.openIsRsn {
			return nil
		}
		text := d.ReasoningSummary.GetText()
		if d.ReasoningSummary.GetSummaryIndex() > 0 && s.summaryStart(d.ReasoningSummary) {
			text = "\n\n" + text
		}
		return s.textDelta(w, "thinking_delta", thinkingField, text)
	case *parleyv1.PartDelta_Signature:
		if s.openIsRsn {
			s.signed = true
			return s.delta(w, wireDelta{Type: "signature_delta", Signature: ptr(translate.SealOpaque(d.Signature, thisDialect, translate.SealAsIs))})
		}
		s.lateSig = d.Signature
	case *parleyv1.PartDelta_EncryptedContent:
		if s.openIsRsn {
			s.signed = true
			return s.delta(w, wireDelta{Type: "signature_delta", Signature: ptr(translate.SealItem(d.EncryptedContent, thisDialect, translate.SealEncrypted, s.open.GetItemId()))})
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
	if s.openIsRsn && !s.signed {
		if err := s.delta(w, wireDelta{Type: "signature_delta", Signature: ptr(translate.Unsigned(thisDialect))}); err != nil {
			return err
		}
	}
	if err := s.blockStop(w, wi); err != nil {
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
	Usage *usage            `json:"usage"`
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
	s.phase = translate.PhaseEnded
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
	e := messageDeltaEvent{Type: "message_delta", Delta: messageDeltaDelta{StopReason: reason, StopSequence: s.stopSequence, Unknown: s.stopUnknown}, Usage: wu}
	if b, ok := s.quickDelta(&e); ok {
		if err := w.Event("message_delta", b); err != nil {
			return err
		}
	} else if err := s.write(w, "message_delta", e); err != nil {
		return err
	}
	return w.Event("message_stop", messageStop)
}

// Fail implements translate.StreamEncoder: the dialect's in-stream error
// event, after which the stream ends.
func (s *streamEncoder) Fail(w *sse.Writer, e *parleyv1.Error) error {
	s.phase = translate.PhaseEnded
	typ, _ := errorType(e)
	return s.write(w, "error", errorBody{Type: "error", Error: errorDetail{Type: typ, Message: errorMessage(e)}})
}
