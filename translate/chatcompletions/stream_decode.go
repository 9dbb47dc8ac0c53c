package chatcompletions

import (
	"errors"
	"fmt"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
	"github.com/parleyhq/parley/translate/sse"
)

// Stream decoding: an upstream's chunks into canonical stream events.

// A stream of this dialect is a series of `data:` chunks ended by
// `data: [DONE]`. Each chunk adds to one or more choices: text in
// delta.content, reasoning in delta.reasoning_content (or delta.reasoning,
// as some compatible servers spell it), a refusal in delta.refusal, and
// tool calls by index in delta.tool_calls (id and name on the first step,
// argument fragments after). A choice ends with its finish_reason; the
// usage chunk (choices empty) comes last when it was asked for. An error
// mid-way is a chunk holding only "error".

// NewStreamDecoder implements translate.Upstream.
func (Upstream) NewStreamDecoder(t translate.Target) translate.StreamDecoder {
	return &streamDecoder{t: t, choices: map[int64]*choiceState{}}
}

type partKind int

const (
	kindNone partKind = iota
	kindText
	kindReasoning
	kindRefusal
	kindCall
)

type choiceState struct {
	next     int32 // index of the next part
	open     int32 // index of the open part, -1 when none
	kind     partKind
	tool     int64 // wire index of the open tool call
	gotArgs  bool
	finished bool
}

type streamDecoder struct {
	t translate.Target
	// phase only moves forward: before the start, streaming, ended.
	phase   translate.Phase
	done    bool
	choices map[int64]*choiceState
}

// deltaEvent is the event of a delta the translate package has no
// constructor for (a refusal, an annotation).
func deltaEvent(pd *parleyv1.PartDelta) *parleyv1.StreamEvent {
	return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: pd}}
}

func (d *streamDecoder) Decode(dst []*parleyv1.StreamEvent, ev sse.Event) ([]*parleyv1.StreamEvent, error) {
	if string(ev.Data) == "[DONE]" {
		if d.done {
			return dst, translate.UpstreamProtocol(thisDialect, errors.New("a second [DONE]"))
		}
		return d.finishAll(dst)
	}
	if d.done {
		return dst, translate.UpstreamProtocol(thisDialect, errors.New("a chunk after [DONE]"))
	}
	r := chunkReaders.Get().(*chunkReader)
	defer chunkReaders.Put(r)
	w, quick := r.read(ev.Data, !d.phase.Started())
	if !quick {
		if err := jsonx.Unmarshal(ev.Data, w); err != nil {
			return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("chunk: %w", err))
		}
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		var detail openai.ErrorDetail
		if err := jsonx.Unmarshal(w.Error, &detail); err != nil {
			return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("error chunk: %w", err))
		}
		d.done = true
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: openai.FromDetail(thisDialect, &detail, 0)}}), nil
	}
	if !d.phase.Started() {
		if w.ID == "" && len(w.Choices) == 0 && w.Usage == nil {
			// A chunk before the answer (content-filter results of some
			// hosts) carries nothing this stream needs.
			return dst, nil
		}
		d.phase = translate.PhaseStreaming
		resp := &parleyv1.Response{Id: w.ID, Model: w.Model, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS}
		header(resp, w.Object, w.Created, w.ServiceTier, w.SystemFingerprint)
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: resp}}})
	}
	for i := range w.Choices {
		var err error
		if dst, err = d.choice(dst, &w.Choices[i]); err != nil {
			return dst, err
		}
	}
	if w.Usage != nil {
		var ext *parleyv1.Extensions
		dst = append(dst, translate.UsageEvent(canonicalUsage(w.Usage, &ext)))
	}
	return dst, nil
}

func (d *streamDecoder) state(i int64) *choiceState {
	cs := d.choices[i]
	if cs == nil {
		cs = &choiceState{open: -1}
		d.choices[i] = cs
	}
	return cs
}

// openPart closes the open part unless it is of kind k, and opens one of
// kind k with p when none is open.
// current is the index of the open part, and whether it is of kind k and
// takes more deltas: a call part is opened for each call. A caller makes
// the part to open only when it is not.
func (cs *choiceState) current(k partKind) (int32, bool) {
	return cs.open, cs.open >= 0 && cs.kind == k && k != kindCall
}

func (cs *choiceState) openPart(dst []*parleyv1.StreamEvent, ci int32, k partKind, p *parleyv1.Part) ([]*parleyv1.StreamEvent, int32) {
	if cs.open >= 0 && cs.kind == k && k != kindCall {
		return dst, cs.open
	}
	dst = cs.closePart(dst, ci)
	cs.open, cs.kind, cs.gotArgs = cs.next, k, false
	cs.next++
	return append(dst, translate.PartStartEvent(ci, cs.open, p)), cs.open
}

func (cs *choiceState) closePart(dst []*parleyv1.StreamEvent, ci int32) []*parleyv1.StreamEvent {
	if cs.open < 0 {
		return dst
	}
	if cs.kind == kindCall && !cs.gotArgs {
		dst = append(dst, translate.ArgumentsDelta(ci, cs.open, "{}"))
	}
	dst = append(dst, translate.PartStopEvent(ci, cs.open))
	cs.open, cs.kind = -1, kindNone
	return dst
}

func (d *streamDecoder) choice(dst []*parleyv1.StreamEvent, c *chunkChoice) ([]*parleyv1.StreamEvent, error) {
	cs := d.state(c.Index)
	ci := int32(c.Index)
	if cs.finished {
		if c.Delta.Content == nil && len(c.Delta.ToolCalls) == 0 && c.FinishReason == nil {
			return dst, nil
		}
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("choice %d continues after its finish_reason", c.Index))
	}
	dl := &c.Delta
	reasoning := dl.ReasoningContent
	if reasoning == nil {
		reasoning = dl.Reasoning
	}
	if reasoning != nil && *reasoning != "" {
		i, open := cs.current(kindReasoning)
		if !open {
			dst, i = cs.openPart(dst, ci, kindReasoning, &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}, Signature: makerStamp(d.t)})
		}
		dst = append(dst, translate.ReasoningTextDelta(ci, i, *reasoning))
	}
	if dl.Content != nil && *dl.Content != "" {
		i, open := cs.current(kindText)
		if !open {
			dst, i = cs.openPart(dst, ci, kindText, translate.TextPart(""))
		}
		dst = append(dst, translate.TextDelta(ci, i, *dl.Content))
	}
	for _, a := range dl.Annotations {
		if a.Type != "url_citation" || a.URLCitation == nil {
			continue
		}
		i, open := cs.current(kindText)
		if !open {
			dst, i = cs.openPart(dst, ci, kindText, translate.TextPart(""))
		}
		u := a.URLCitation
		dst = append(dst, deltaEvent(&parleyv1.PartDelta{CandidateIndex: ci, Index: i, Delta: &parleyv1.PartDelta_Annotation{Annotation: &parleyv1.Annotation{
			Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION, Url: u.URL, Title: u.Title, StartIndex: &u.StartIndex, EndIndex: &u.EndIndex,
		}}}))
	}
	if dl.Refusal != nil && *dl.Refusal != "" {
		i, open := cs.current(kindRefusal)
		if !open {
			dst, i = cs.openPart(dst, ci, kindRefusal, &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{}}})
		}
		dst = append(dst, deltaEvent(&parleyv1.PartDelta{CandidateIndex: ci, Index: i, Delta: &parleyv1.PartDelta_Refusal{Refusal: *dl.Refusal}}))
	}
	for _, tc := range dl.ToolCalls {
		if cs.kind != kindCall || tc.Index != cs.tool {
			if cs.kind == kindCall && tc.Index < cs.tool {
				return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("choice %d: tool call %d continues after call %d began", c.Index, tc.Index, cs.tool))
			}
			name := ""
			if tc.Function != nil {
				name = tc.Function.Name
			}
			if name == "" {
				return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("choice %d: tool call %d starts without a function name", c.Index, tc.Index))
			}
			id := tc.ID
			if id == "" {
				id = translate.NewID("call_")
			}
			dst, _ = cs.openPart(dst, ci, kindCall, translate.CallPart(id, name, ""))
			cs.tool = tc.Index
		}
		if tc.Function != nil && tc.Function.Arguments != nil && *tc.Function.Arguments != "" {
			cs.gotArgs = true
			dst = append(dst, translate.ArgumentsDelta(ci, cs.open, *tc.Function.Arguments))
		}
	}
	if c.Logprobs != nil && (len(c.Logprobs.Content) > 0 || len(c.Logprobs.Refusal) > 0) {
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Metadata{Metadata: &parleyv1.MetadataUpdate{CandidateIndex: ci, Logprobs: canonicalLogprobs(c.Logprobs)}}})
	}
	if c.FinishReason != nil {
		dst = cs.closePart(dst, ci)
		cs.finished = true
		reason, msg := finishReason(*c.FinishReason)
		dst = append(dst, translate.FinishEvent(&parleyv1.Finish{CandidateIndex: ci, Reason: reason, FinishMessage: msg}))
	}
	return dst, nil
}

// finishAll ends the stream at [DONE]: every choice must have finished.
func (d *streamDecoder) finishAll(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if !d.phase.Started() {
		return dst, translate.UpstreamProtocol(thisDialect, errors.New("[DONE] before any chunk"))
	}
	for i, cs := range d.choices {
		if !cs.finished {
			return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("choice %d ended without a finish_reason", i))
		}
	}
	d.done = true
	return append(dst, translate.CompletedEvent()), nil
}

// End implements translate.StreamDecoder. Some compatible servers close
// the stream without [DONE]; a stream whose every choice finished is
// complete all the same.
func (d *streamDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if d.done {
		return dst, nil
	}
	finished := d.phase.Started() && len(d.choices) > 0
	for _, cs := range d.choices {
		finished = finished && cs.finished
	}
	if finished {
		return d.finishAll(dst)
	}
	return dst, translate.EndedEarly(thisDialect, "the chat-completions upstream's stream ended before [DONE]", nil)
}
