package chatcompletions

import (
	"errors"
	"fmt"
	"strconv"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
	"github.com/parleyhq/parley/translate/sse"
)

// Stream encoding: canonical stream events into this dialect's chunks for
// a client (the form of a stream is described in stream_decode.go).

// NewStreamEncoder implements translate.Client.
func (Client) NewStreamEncoder(req *parleyv1.Request) translate.StreamEncoder {
	return &streamEncoder{req: req, wantUsage: req.GetStreamUsage()}
}

type candOut struct {
	index    int32
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
	// phase only moves forward: before the start, streaming, ended.
	phase translate.Phase
	head  chunk
	// chunkForm is the form of this stream's chunks (quickChunk), made
	// from head once.
	chunkForm *chunkForm
	origin    parleyv1.Dialect
	usage     *parleyv1.Usage
	// cands are the choices begun: one, unless the request asked for
	// more.
	cands []*candOut
	// one is the choice of a delta's chunk, kept so that a chunk makes
	// no slice of its own (delta).
	one [1]chunkChoice
}

func (s *streamEncoder) cand(i int32) *candOut {
	for _, c := range s.cands {
		if c.index == i {
			return c
		}
	}
	c := &candOut{index: i, openIdx: -1}
	s.cands = append(s.cands, c)
	return c
}

func (s *streamEncoder) write(w *sse.Writer, choices []chunkChoice, usage *usage) error {
	if b, ok := s.quickChunk(choices, usage); ok {
		return w.Event("", b)
	}
	ch := s.head
	ch.Choices = choices
	if ch.Choices == nil {
		ch.Choices = []chunkChoice{}
	}
	ch.Usage = usage
	b, err := jsonx.Marshal(ch)
	if err != nil {
		return err
	}
	return w.Event("", b)
}

// delta writes one chunk for candidate ci, sending the role on its first.
func (s *streamEncoder) delta(w *sse.Writer, ci int32, d delta) error {
	c := s.cand(ci)
	if !c.roleSent {
		c.roleSent = true
		d.Role = "assistant"
	}
	s.one[0] = chunkChoice{Index: int64(ci), Delta: d}
	err := s.write(w, s.one[:], nil)
	s.one[0] = chunkChoice{} // nothing of the event kept while the stream waits
	return err
}

func (s *streamEncoder) Encode(w *sse.Writer, ev *parleyv1.StreamEvent) error {
	if s.phase.Ended() {
		if _, ok := ev.GetEvent().(*parleyv1.StreamEvent_KeepAlive); ok {
			return nil
		}
		return errors.New("chatcompletions: event after the end of the stream")
	}
	if _, ok := ev.GetEvent().(*parleyv1.StreamEvent_Start); !ok && !s.phase.Started() {
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
		if s.phase.Started() {
			return errors.New("chatcompletions: a second start")
		}
		s.phase = translate.PhaseStreaming
		resp := e.Start.GetResponse()
		s.origin = resp.GetExtensions().GetDialect()
		s.head = chunk{ID: responseID(resp), Object: "chat.completion.chunk", Created: created(resp), Model: model(s.req, resp)}
		s.head.ServiceTier, s.head.SystemFingerprint = tierAndFingerprint(resp)
		s.usage = translate.MergeUsage(nil, resp.GetUsage())
		empty := ""
		return s.delta(w, 0, delta{Content: &empty})
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
			d := delta{ToolCalls: []deltaToolCall{{Index: c.calls, ID: id, Type: "function", Function: &deltaFunction{Name: translate.CallName(k.ToolCall), Arguments: &args}}}}
			c.calls++
			return s.delta(w, ps.GetCandidateIndex(), d)
		case *parleyv1.Part_Text:
			if k.Text.GetText() != "" {
				t := k.Text.GetText()
				return s.delta(w, ps.GetCandidateIndex(), delta{Content: &t})
			}
		case *parleyv1.Part_Reasoning:
			if t := reasoningText(k.Reasoning); t != "" {
				return s.delta(w, ps.GetCandidateIndex(), delta{ReasoningContent: &t})
			}
		case *parleyv1.Part_Refusal:
			if t := k.Refusal.GetText(); t != "" {
				return s.delta(w, ps.GetCandidateIndex(), delta{Refusal: &t})
			}
		case *parleyv1.Part_ExecutableCode:
			t := "\n```python\n" + k.ExecutableCode.GetCode() + "\n```\n"
			return s.delta(w, ps.GetCandidateIndex(), delta{Content: &t})
		case *parleyv1.Part_CodeExecutionResult:
			t := "\n```\n" + k.CodeExecutionResult.GetOutput() + "\n```\n"
			return s.delta(w, ps.GetCandidateIndex(), delta{Content: &t})
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
			return s.delta(w, pd.GetCandidateIndex(), delta{Content: &d.Text})
		case *parleyv1.PartDelta_ReasoningText:
			if d.ReasoningText == "" {
				return nil
			}
			return s.delta(w, pd.GetCandidateIndex(), delta{ReasoningContent: &d.ReasoningText})
		case *parleyv1.PartDelta_ReasoningSummary:
			if d.ReasoningSummary.GetText() == "" {
				return nil
			}
			t := d.ReasoningSummary.GetText()
			return s.delta(w, pd.GetCandidateIndex(), delta{ReasoningContent: &t})
		case *parleyv1.PartDelta_Refusal:
			return s.delta(w, pd.GetCandidateIndex(), delta{Refusal: &d.Refusal})
		case *parleyv1.PartDelta_Arguments:
			if d.Arguments == "" {
				return nil
			}
			return s.delta(w, pd.GetCandidateIndex(), delta{ToolCalls: []deltaToolCall{{Index: c.calls - 1, Function: &deltaFunction{Arguments: &d.Arguments}}}})
		case *parleyv1.PartDelta_Annotation:
			if a, ok := wireAnnotation(d.Annotation, 0); ok {
				return s.delta(w, pd.GetCandidateIndex(), delta{Annotations: []annotation{a}})
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
			return s.write(w, []chunkChoice{{Index: int64(m.GetCandidateIndex()), Logprobs: lp}}, nil)
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
			return s.write(w, []chunkChoice{{Index: int64(f.GetCandidateIndex()), Delta: delta{Role: "assistant"}, FinishReason: &word}}, nil)
		}
		return s.write(w, []chunkChoice{{Index: int64(f.GetCandidateIndex()), FinishReason: &word}}, nil)
	case *parleyv1.StreamEvent_KeepAlive:
		return nil
	case *parleyv1.StreamEvent_Error:
		return s.Fail(w, e.Error)
	case *parleyv1.StreamEvent_Done:
		s.phase = translate.PhaseEnded
		if s.wantUsage {
			u := wireUsage(s.usage, nil)
			if u == nil {
				u = &usage{}
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
	s.phase = translate.PhaseEnded
	_, d := openai.ErrorObject(e)
	b, err := jsonx.Marshal(openai.ErrorBody{Error: d})
	if err != nil {
		return err
	}
	return w.Event("", b)
}

// chunkForm is a chunk of this stream with its choices and usage left
// out: what comes before the choices and what follows the usage, as
// jsonx.Marshal writes the chunk. It is written once per stream.
type chunkForm struct {
	before, after []byte
	buf           []byte
}

// form returns the stream's chunk form, writing it on first use; nil if
// the head holds what only jsonx.Marshal writes.
func (s *streamEncoder) form() *chunkForm {
	if s.chunkForm != nil {
		return s.chunkForm
	}
	h := &s.head
	if h.Error != nil || len(h.Unknown) > 0 {
		return nil
	}
	var m jsonx.Members
	b, ok := m.String([]byte{'{'}, `"id":`, h.ID)
	if !ok {
		return nil
	}
	if b, ok = m.String(b, `"object":`, h.Object); !ok {
		return nil
	}
	b = strconv.AppendInt(m.Name(b, `"created":`), h.Created, 10)
	if b, ok = m.String(b, `"model":`, h.Model); !ok {
		return nil
	}
	b = m.Name(b, `"choices":[`)
	var after []byte
	if h.ServiceTier != nil {
		if after, ok = m.String(after, `"service_tier":`, *h.ServiceTier); !ok {
			return nil
		}
	}
	if h.SystemFingerprint != nil {
		if after, ok = m.String(after, `"system_fingerprint":`, *h.SystemFingerprint); !ok {
			return nil
		}
	}
	s.chunkForm = &chunkForm{before: b, after: append(after, '}')}
	return s.chunkForm
}

// quickChunk writes a chunk of at most one choice without reflection: the
// same bytes jsonx.Marshal writes (TestQuickChunkIsTheMarshalledChunk) at
// a fraction of the cost. It writes the chunks streams are made of: the
// role, text, reasoning and refusal deltas, tool-call steps, the finish and
// the usage. ok is false for any other chunk (logprobs, annotations,
// members kept from an upstream), which jsonx.Marshal then writes. b is
// valid until the next call.
func (s *streamEncoder) quickChunk(choices []chunkChoice, u *usage) (b []byte, ok bool) {
	if len(choices) > 1 {
		return nil, false
	}
	f := s.form()
	if f == nil {
		return nil, false
	}
	b = append(f.buf[:0], f.before...)
	if len(choices) == 1 {
		if b, ok = appendChoice(b, &choices[0]); !ok {
			return nil, false
		}
	}
	b = append(b, ']')
	if u != nil {
		if b, ok = appendUsage(b, u); !ok {
			return nil, false
		}
	}
	b = append(b, f.after...)
	f.buf = b
	return b, true
}

// appendChoice appends c as jsonx.Marshal writes it; ok is false for what
// it leaves to jsonx.Marshal.
func appendChoice(b []byte, c *chunkChoice) (_ []byte, ok bool) {
	d := &c.Delta
	if c.Logprobs != nil || len(c.Unknown) > 0 || len(d.Unknown) > 0 || d.Annotations != nil {
		return b, false
	}
	b = strconv.AppendInt(append(b, `{"index":`...), c.Index, 10)
	b = append(b, `,"delta":{`...)
	var m jsonx.Members
	if d.Role != "" {
		if b, ok = m.String(b, `"role":`, d.Role); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct {
		name string
		v    *string
	}{{`"content":`, d.Content}, {`"refusal":`, d.Refusal}, {`"reasoning_content":`, d.ReasoningContent}, {`"reasoning":`, d.Reasoning}} {
		if f.v != nil {
			if b, ok = m.String(b, f.name, *f.v); !ok {
				return b, false
			}
		}
	}
	if d.ToolCalls != nil {
		if b, ok = jsonx.AppendList(m.Name(b, `"tool_calls":`), d.ToolCalls, appendToolCall); !ok {
			return b, false
		}
	}
	return appendChoiceEnd(b, c.FinishReason)
}

// appendChoiceEnd closes a choice's delta or message, and appends its
// finish reason and its null logprobs, as jsonx.Marshal writes them.
func appendChoiceEnd(b []byte, finish *string) (_ []byte, ok bool) {
	b = append(b, `},"finish_reason":`...)
	if finish == nil {
		b = append(b, "null"...)
	} else if b, ok = jsonx.AppendQuote(b, *finish); !ok {
		return b, false
	}
	return append(b, `,"logprobs":null}`...), true
}

// appendToolCall appends one step of a tool call as jsonx.Marshal writes
// it.
func appendToolCall(b []byte, c *deltaToolCall) (_ []byte, ok bool) {
	if len(c.Unknown) > 0 || (c.Function != nil && len(c.Function.Unknown) > 0) {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	b = strconv.AppendInt(m.Name(b, `"index":`), c.Index, 10)
	if c.ID != "" {
		if b, ok = m.String(b, `"id":`, c.ID); !ok {
			return b, false
		}
	}
	if c.Type != "" {
		if b, ok = m.String(b, `"type":`, c.Type); !ok {
			return b, false
		}
	}
	if f := c.Function; f != nil {
		b = m.Name(b, `"function":{`)
		var fm jsonx.Members
		if f.Name != "" {
			if b, ok = fm.String(b, `"name":`, f.Name); !ok {
				return b, false
			}
		}
		if f.Arguments != nil {
			if b, ok = fm.String(b, `"arguments":`, *f.Arguments); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendUsage appends the usage member as jsonx.Marshal writes it.
func appendUsage(b []byte, u *usage) (_ []byte, ok bool) {
	if len(u.Unknown) > 0 {
		return b, false
	}
	b = strconv.AppendInt(append(b, `,"usage":{"prompt_tokens":`...), u.PromptTokens, 10)
	b = strconv.AppendInt(append(b, `,"completion_tokens":`...), u.CompletionTokens, 10)
	b = strconv.AppendInt(append(b, `,"total_tokens":`...), u.TotalTokens, 10)
	if p := u.PromptTokensDetails; p != nil {
		if len(p.Unknown) > 0 {
			return b, false
		}
		b = append(b, `,"prompt_tokens_details":{`...)
		var m jsonx.Members
		b = m.Int(b, `"cached_tokens":`, p.CachedTokens)
		b = m.Int(b, `"audio_tokens":`, p.AudioTokens)
		b = append(b, '}')
	}
	if o := u.CompletionTokensDetails; o != nil {
		if len(o.Unknown) > 0 {
			return b, false
		}
		b = append(b, `,"completion_tokens_details":{`...)
		var m jsonx.Members
		b = m.Int(b, `"reasoning_tokens":`, o.ReasoningTokens)
		b = m.Int(b, `"audio_tokens":`, o.AudioTokens)
		b = m.Int(b, `"accepted_prediction_tokens":`, o.AcceptedPredictionTokens)
		b = m.Int(b, `"rejected_prediction_tokens":`, o.RejectedPredictionTokens)
		b = append(b, '}')
	}
	return append(b, '}'), true
}
