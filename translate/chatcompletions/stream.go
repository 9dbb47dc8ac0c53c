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
	t       translate.Target
	started bool
	done    bool
	choices map[int64]*choiceState
}

func event(ev any) *parleyv1.StreamEvent {
	switch e := ev.(type) {
	case *parleyv1.PartStart:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: e}}
	case *parleyv1.PartDelta:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: e}}
	case *parleyv1.PartStop:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: e}}
	case *parleyv1.Finish:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: e}}
	case *parleyv1.Usage:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Usage{Usage: e}}
	case *parleyv1.MetadataUpdate:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Metadata{Metadata: e}}
	}
	panic("chatcompletions: unknown stream event")
}

func (d *streamDecoder) Decode(dst []*parleyv1.StreamEvent, ev sse.Event) ([]*parleyv1.StreamEvent, error) {
	if string(ev.Data) == "[DONE]" {
		if d.done {
			return dst, translate.UpstreamProtocol(D, errors.New("a second [DONE]"))
		}
		return d.finishAll(dst)
	}
	if d.done {
		return dst, translate.UpstreamProtocol(D, errors.New("a chunk after [DONE]"))
	}
	var w Chunk
	if err := jsonx.Unmarshal(ev.Data, &w); err != nil {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("chunk: %w", err))
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		var detail openai.ErrorDetail
		if err := jsonx.Unmarshal(w.Error, &detail); err != nil {
			return dst, translate.UpstreamProtocol(D, fmt.Errorf("error chunk: %w", err))
		}
		d.done = true
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: openai.FromDetail(D, &detail, 0)}}), nil
	}
	if !d.started {
		if w.ID == "" && len(w.Choices) == 0 && w.Usage == nil {
			// A chunk before the answer (content-filter results of some
			// hosts) carries nothing this stream needs.
			return dst, nil
		}
		d.started = true
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
		dst = append(dst, event(canonicalUsage(w.Usage, &ext)))
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
func (cs *choiceState) openPart(dst []*parleyv1.StreamEvent, ci int32, k partKind, p *parleyv1.Part) ([]*parleyv1.StreamEvent, int32) {
	if cs.open >= 0 && cs.kind == k && k != kindCall {
		return dst, cs.open
	}
	dst = cs.closePart(dst, ci)
	cs.open, cs.kind, cs.gotArgs = cs.next, k, false
	cs.next++
	return append(dst, event(&parleyv1.PartStart{CandidateIndex: ci, Index: cs.open, Part: p})), cs.open
}

func (cs *choiceState) closePart(dst []*parleyv1.StreamEvent, ci int32) []*parleyv1.StreamEvent {
	if cs.open < 0 {
		return dst
	}
	if cs.kind == kindCall && !cs.gotArgs {
		dst = append(dst, event(&parleyv1.PartDelta{CandidateIndex: ci, Index: cs.open, Delta: &parleyv1.PartDelta_Arguments{Arguments: "{}"}}))
	}
	dst = append(dst, event(&parleyv1.PartStop{CandidateIndex: ci, Index: cs.open}))
	cs.open, cs.kind = -1, kindNone
	return dst
}

func (d *streamDecoder) choice(dst []*parleyv1.StreamEvent, c *ChunkChoice) ([]*parleyv1.StreamEvent, error) {
	cs := d.state(c.Index)
	ci := int32(c.Index)
	if cs.finished {
		if c.Delta.Content == nil && len(c.Delta.ToolCalls) == 0 && c.FinishReason == nil {
			return dst, nil
		}
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("choice %d continues after its finish_reason", c.Index))
	}
	dl := &c.Delta
	reasoning := dl.ReasoningContent
	if reasoning == nil {
		reasoning = dl.Reasoning
	}
	if reasoning != nil && *reasoning != "" {
		var i int32
		dst, i = cs.openPart(dst, ci, kindReasoning, &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}})
		dst = append(dst, event(&parleyv1.PartDelta{CandidateIndex: ci, Index: i, Delta: &parleyv1.PartDelta_ReasoningText{ReasoningText: *reasoning}}))
	}
	if dl.Content != nil && *dl.Content != "" {
		var i int32
		dst, i = cs.openPart(dst, ci, kindText, translate.TextPart(""))
		dst = append(dst, event(&parleyv1.PartDelta{CandidateIndex: ci, Index: i, Delta: &parleyv1.PartDelta_Text{Text: *dl.Content}}))
	}
	for _, a := range dl.Annotations {
		if a.Type != "url_citation" || a.URLCitation == nil {
			continue
		}
		var i int32
		dst, i = cs.openPart(dst, ci, kindText, translate.TextPart(""))
		u := a.URLCitation
		dst = append(dst, event(&parleyv1.PartDelta{CandidateIndex: ci, Index: i, Delta: &parleyv1.PartDelta_Annotation{Annotation: &parleyv1.Annotation{
			Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION, Url: u.URL, Title: u.Title, StartIndex: &u.StartIndex, EndIndex: &u.EndIndex,
		}}}))
	}
	if dl.Refusal != nil && *dl.Refusal != "" {
		var i int32
		dst, i = cs.openPart(dst, ci, kindRefusal, &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{}}})
		dst = append(dst, event(&parleyv1.PartDelta{CandidateIndex: ci, Index: i, Delta: &parleyv1.PartDelta_Refusal{Refusal: *dl.Refusal}}))
	}
	for _, tc := range dl.ToolCalls {
		if cs.kind != kindCall || tc.Index != cs.tool {
			if cs.kind == kindCall && tc.Index < cs.tool {
				return dst, translate.UpstreamProtocol(D, fmt.Errorf("choice %d: tool call %d continues after call %d began", c.Index, tc.Index, cs.tool))
			}
			name := ""
			if tc.Function != nil {
				name = tc.Function.Name
			}
			if name == "" {
				return dst, translate.UpstreamProtocol(D, fmt.Errorf("choice %d: tool call %d starts without a function name", c.Index, tc.Index))
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
			dst = append(dst, event(&parleyv1.PartDelta{CandidateIndex: ci, Index: cs.open, Delta: &parleyv1.PartDelta_Arguments{Arguments: *tc.Function.Arguments}}))
		}
	}
	if c.Logprobs != nil && (len(c.Logprobs.Content) > 0 || len(c.Logprobs.Refusal) > 0) {
		dst = append(dst, event(&parleyv1.MetadataUpdate{CandidateIndex: ci, Logprobs: canonicalLogprobs(c.Logprobs)}))
	}
	if c.FinishReason != nil {
		dst = cs.closePart(dst, ci)
		cs.finished = true
		reason, msg := finishReason(*c.FinishReason)
		dst = append(dst, event(&parleyv1.Finish{CandidateIndex: ci, Reason: reason, FinishMessage: msg}))
	}
	return dst, nil
}

// finishAll ends the stream at [DONE]: every choice must have finished.
func (d *streamDecoder) finishAll(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if !d.started {
		return dst, translate.UpstreamProtocol(D, errors.New("[DONE] before any chunk"))
	}
	for i, cs := range d.choices {
		if !cs.finished {
			return dst, translate.UpstreamProtocol(D, fmt.Errorf("choice %d ended without a finish_reason", i))
		}
	}
	d.done = true
	return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED}}}), nil
}

// End implements translate.StreamDecoder. Some compatible servers close
// the stream without [DONE]; a stream whose every choice finished is
// complete all the same.
func (d *streamDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if d.done {
		return dst, nil
	}
	finished := d.started && len(d.choices) > 0
	for _, cs := range d.choices {
		finished = finished && cs.finished
	}
	if finished {
		return d.finishAll(dst)
	}
	return dst, &translate.UpstreamError{Err: &parleyv1.Error{
		Code:    parleyv1.Code_CODE_UNAVAILABLE,
		Message: "the chat-completions upstream's stream ended before [DONE]",
		Origin:  &parleyv1.Origin{Dialect: D},
		Retry:   &parleyv1.RetryAdvice{Retryable: true},
	}}
}

// NewStreamEncoder implements translate.Client.
func (Client) NewStreamEncoder(req *parleyv1.Request) translate.StreamEncoder {
	return &streamEncoder{req: req, wantUsage: req.GetStreamUsage(), cands: map[int32]*candOut{}}
}

type candOut struct {
	roleSent bool
	calls    int64 // tool calls begun
	open     *parleyv1.Part
	openIdx  int32
	hasCalls bool
	finished bool
}

type streamEncoder struct {
	req       *parleyv1.Request
	wantUsage bool
	started   bool
	ended     bool
	head      Chunk
	origin    parleyv1.Dialect
	usage     *parleyv1.Usage
	cands     map[int32]*candOut
}

func (s *streamEncoder) cand(i int32) *candOut {
	c := s.cands[i]
	if c == nil {
		c = &candOut{openIdx: -1}
		s.cands[i] = c
	}
	return c
}

func (s *streamEncoder) write(w *sse.Writer, choices []ChunkChoice, usage *Usage) error {
	ch := s.head
	ch.Choices = choices
	if ch.Choices == nil {
		ch.Choices = []ChunkChoice{}
	}
	ch.Usage = usage
	b, err := jsonx.Marshal(ch)
	if err != nil {
		return err
	}
	return w.Event("", b)
}

// delta writes one chunk for candidate ci, sending the role on its first.
func (s *streamEncoder) delta(w *sse.Writer, ci int32, d Delta) error {
	c := s.cand(ci)
	if !c.roleSent {
		c.roleSent = true
		d.Role = "assistant"
	}
	return s.write(w, []ChunkChoice{{Index: int64(ci), Delta: d}}, nil)
}

func (s *streamEncoder) Encode(w *sse.Writer, ev *parleyv1.StreamEvent) error {
	if s.ended {
		if _, ok := ev.GetEvent().(*parleyv1.StreamEvent_KeepAlive); ok {
			return nil
		}
		return errors.New("chatcompletions: event after the end of the stream")
	}
	if _, ok := ev.GetEvent().(*parleyv1.StreamEvent_Start); !ok && !s.started {
		switch e := ev.GetEvent().(type) {
		case *parleyv1.StreamEvent_KeepAlive:
			return nil
		case *parleyv1.StreamEvent_Error:
			// An upstream may fail before it says anything.
			return s.Fail(w, e.Error)
		}
		return errors.New("chatcompletions: stream event before start")
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_Start:
		if s.started {
			return errors.New("chatcompletions: a second start")
		}
		s.started = true
		resp := e.Start.GetResponse()
		s.origin = resp.GetExtensions().GetDialect()
		s.head = Chunk{ID: responseID(resp), Object: "chat.completion.chunk", Created: created(resp), Model: model(s.req, resp)}
		s.head.ServiceTier, s.head.SystemFingerprint = tierAndFingerprint(resp)
		s.usage = translate.MergeUsage(nil, resp.GetUsage())
		empty := ""
		return s.delta(w, 0, Delta{Content: &empty})
	case *parleyv1.StreamEvent_PartStart:
		ps := e.PartStart
		c := s.cand(ps.GetCandidateIndex())
		if c.open != nil {
			return fmt.Errorf("chatcompletions: part %d starts while part %d is open", ps.GetIndex(), c.openIdx)
		}
		c.open, c.openIdx = ps.GetPart(), ps.GetIndex()
		switch k := ps.GetPart().GetKind().(type) {
		case *parleyv1.Part_ToolCall:
			c.hasCalls = true
			id := k.ToolCall.GetId()
			if id == "" {
				id = translate.NewID("call_")
			}
			args := k.ToolCall.GetArguments()
			d := Delta{ToolCalls: []DeltaToolCall{{Index: c.calls, ID: id, Type: "function", Function: &DeltaFunction{Name: k.ToolCall.GetName(), Arguments: &args}}}}
			c.calls++
			return s.delta(w, ps.GetCandidateIndex(), d)
		case *parleyv1.Part_Text:
			if k.Text.GetText() != "" {
				t := k.Text.GetText()
				return s.delta(w, ps.GetCandidateIndex(), Delta{Content: &t})
			}
		case *parleyv1.Part_Reasoning:
			if t := reasoningText(k.Reasoning); t != "" {
				return s.delta(w, ps.GetCandidateIndex(), Delta{ReasoningContent: &t})
			}
		case *parleyv1.Part_Refusal:
			if t := k.Refusal.GetText(); t != "" {
				return s.delta(w, ps.GetCandidateIndex(), Delta{Refusal: &t})
			}
		case *parleyv1.Part_ExecutableCode:
			t := "\n```python\n" + k.ExecutableCode.GetCode() + "\n```\n"
			return s.delta(w, ps.GetCandidateIndex(), Delta{Content: &t})
		case *parleyv1.Part_CodeExecutionResult:
			t := "\n```\n" + k.CodeExecutionResult.GetOutput() + "\n```\n"
			return s.delta(w, ps.GetCandidateIndex(), Delta{Content: &t})
		}
		return nil
	case *parleyv1.StreamEvent_PartDelta:
		pd := e.PartDelta
		c := s.cand(pd.GetCandidateIndex())
		if c.open == nil || c.openIdx != pd.GetIndex() {
			return fmt.Errorf("chatcompletions: delta for part %d, which is not open", pd.GetIndex())
		}
		switch d := pd.GetDelta().(type) {
		case *parleyv1.PartDelta_Text:
			if d.Text == "" {
				return nil
			}
			return s.delta(w, pd.GetCandidateIndex(), Delta{Content: &d.Text})
		case *parleyv1.PartDelta_ReasoningText:
			if d.ReasoningText == "" {
				return nil
			}
			return s.delta(w, pd.GetCandidateIndex(), Delta{ReasoningContent: &d.ReasoningText})
		case *parleyv1.PartDelta_ReasoningSummary:
			if d.ReasoningSummary.GetText() == "" {
				return nil
			}
			t := d.ReasoningSummary.GetText()
			return s.delta(w, pd.GetCandidateIndex(), Delta{ReasoningContent: &t})
		case *parleyv1.PartDelta_Refusal:
			return s.delta(w, pd.GetCandidateIndex(), Delta{Refusal: &d.Refusal})
		case *parleyv1.PartDelta_Arguments:
			if d.Arguments == "" {
				return nil
			}
			return s.delta(w, pd.GetCandidateIndex(), Delta{ToolCalls: []DeltaToolCall{{Index: c.calls - 1, Function: &DeltaFunction{Arguments: &d.Arguments}}}})
		case *parleyv1.PartDelta_Annotation:
			if a, ok := wireAnnotation(d.Annotation, 0); ok {
				return s.delta(w, pd.GetCandidateIndex(), Delta{Annotations: []Annotation{a}})
			}
		}
		return nil
	case *parleyv1.StreamEvent_PartStop:
		c := s.cand(e.PartStop.GetCandidateIndex())
		if c.open == nil || c.openIdx != e.PartStop.GetIndex() {
			return fmt.Errorf("chatcompletions: stop for part %d, which is not open", e.PartStop.GetIndex())
		}
		c.open, c.openIdx = nil, -1
		return nil
	case *parleyv1.StreamEvent_Metadata:
		m := e.Metadata
		if lp := wireLogprobs(m.GetLogprobs()); lp != nil {
			return s.write(w, []ChunkChoice{{Index: int64(m.GetCandidateIndex()), Logprobs: lp}}, nil)
		}
		return nil
	case *parleyv1.StreamEvent_Usage:
		s.usage = translate.MergeUsage(s.usage, e.Usage)
		return nil
	case *parleyv1.StreamEvent_Finish:
		f := e.Finish
		c := s.cand(f.GetCandidateIndex())
		if c.finished {
			return fmt.Errorf("chatcompletions: candidate %d finished twice", f.GetCandidateIndex())
		}
		c.finished = true
		word := finishWord(f.GetReason(), f.GetFinishMessage(), c.hasCalls, s.origin)
		if !c.roleSent {
			c.roleSent = true
			return s.write(w, []ChunkChoice{{Index: int64(f.GetCandidateIndex()), Delta: Delta{Role: "assistant"}, FinishReason: &word}}, nil)
		}
		return s.write(w, []ChunkChoice{{Index: int64(f.GetCandidateIndex()), FinishReason: &word}}, nil)
	case *parleyv1.StreamEvent_KeepAlive:
		return nil
	case *parleyv1.StreamEvent_Error:
		return s.Fail(w, e.Error)
	case *parleyv1.StreamEvent_Done:
		s.ended = true
		if s.wantUsage {
			u := wireUsage(s.usage, nil)
			if u == nil {
				u = &Usage{}
			}
			if err := s.write(w, nil, u); err != nil {
				return err
			}
		}
		return w.Event("", []byte("[DONE]"))
	}
	return nil
}

// Fail implements translate.StreamEncoder: the dialect's in-stream error is
// a chunk holding only "error"; the stream ends there, without [DONE].
func (s *streamEncoder) Fail(w *sse.Writer, e *parleyv1.Error) error {
	s.ended = true
	_, d := openai.ErrorObject(e)
	b, err := jsonx.Marshal(openai.ErrorBody{Error: d})
	if err != nil {
		return err
	}
	return w.Event("", b)
}
