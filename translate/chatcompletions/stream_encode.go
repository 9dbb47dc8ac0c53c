package chatcompletions

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

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
	// phase only moves forward: before the start, streaming, ended.
	phase translate.Phase
	head  chunk
	// text is the form of a chunk that only adds text (textChunk), made
	// from head once.
	text   *textForm
	origin parleyv1.Dialect
	usage  *parleyv1.Usage
	cands  map[int32]*candOut
}

func (s *streamEncoder) cand(i int32) *candOut {
	c := s.cands[i]
	if c == nil {
		c = &candOut{openIdx: -1}
		s.cands[i] = c
	}
	return c
}

func (s *streamEncoder) write(w *sse.Writer, choices []chunkChoice, usage *usage) error {
	if usage == nil && len(choices) == 1 {
		if b, ok := s.textChunk(&choices[0]); ok {
			return w.Event("", b)
		}
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
	return s.write(w, []chunkChoice{{Index: int64(ci), Delta: d}}, nil)
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

// textForm is a chunk of this stream with its choices left out: what
// comes before them and after them, as jsonx.Marshal writes the chunk.
type textForm struct {
	before, after []byte
	buf           []byte
}

// textChunk writes a chunk whose one choice only adds text (or reasoning
// text), the chunk most streams are made of, without reflection: the
// same bytes jsonx.Marshal writes (TestTextChunkIsTheMarshalledChunk), at
// a fraction of the cost. ok is false for any other chunk.
func (s *streamEncoder) textChunk(c *chunkChoice) (b []byte, ok bool) {
	d := &c.Delta
	if c.FinishReason != nil || c.Logprobs != nil || len(c.Unknown) > 0 || d.Role != "" || d.Refusal != nil || d.Reasoning != nil ||
		d.ToolCalls != nil || d.Annotations != nil || len(d.Unknown) > 0 || (d.Content == nil) == (d.ReasoningContent == nil) {
		return nil, false
	}
	if s.text == nil {
		head := s.head
		head.Choices = []chunkChoice{}
		whole, err := jsonx.Marshal(head)
		if err != nil {
			return nil, false
		}
		before, after, ok := jsonx.Hole(whole, `"choices":[`, "")
		if !ok {
			return nil, false
		}
		s.text = &textForm{before: before, after: after}
	}
	t := s.text
	b = append(t.buf[:0], t.before...)
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, c.Index, 10)
	text := d.Content
	if text != nil {
		b = append(b, `,"delta":{"content":`...)
	} else {
		text = d.ReasoningContent
		b = append(b, `,"delta":{"reasoning_content":`...)
	}
	b, err := jsontext.AppendQuote(b, *text)
	if err != nil {
		return nil, false
	}
	b = append(b, `},"finish_reason":null,"logprobs":null}`...)
	b = append(b, t.after...)
	t.buf = b
	return b, true
}
