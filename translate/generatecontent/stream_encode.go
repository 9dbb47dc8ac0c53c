package generatecontent

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/go-json-experiment/json/jsontext"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// NewStreamEncoder implements translate.Client.
func (Client) NewStreamEncoder(req *parleyv1.Request) translate.StreamEncoder {
	return &streamEncoder{req: req}
}

// streamEncoder renders a canonical stream as this dialect's chunks: a
// chunk per piece of text or thought as it arrives, a whole part for each
// call or medium, and a last chunk with the finish reasons, metadata and
// usage. It writes no comments or event names: clients of this dialect
// read every line as data.
//
// As the service does, every chunk carries the usage known by then (from
// the upstream's start, or its usage reports so far; an upstream that
// reports usage only at the end gives it to the last chunk only), and a
// candidate that wrote content ends with content too: an empty text part
// beside its finish reason, where the service puts its last words.
// Libraries that skip candidates without content (LangChain) would
// otherwise never read the last chunk's usage.
type streamEncoder struct {
	req *parleyv1.Request
	enc clientEncoder
	// phase only moves forward: before the start, streaming, ended.
	phase translate.Phase

	id, model string
	usage     *parleyv1.Usage
	// wireUsage is usage as each chunk carries it, made once per report.
	wireUsage *usageMetadata
	feedback  *parleyv1.PromptFeedback
	resp      *parleyv1.Response // start metadata, for the extension bag
	// cands are the candidates in the order they first came: one,
	// unless the request asked for more.
	cands []*candOut
	// text is the form of the last text chunk written without
	// reflection (textChunk), kept while the usage it holds is current.
	text *textForm
	// buf is the last reply written without reflection, kept for the
	// next one.
	buf []byte
}

// textForm is a text chunk's bytes around its text: the candidate's
// part before and after the text, for one candidate and kind (text or
// thought), and the reply's members after the candidates, for one usage
// report.
type textForm struct {
	ci            int32
	thought       bool
	before, after []byte
	usage         *usageMetadata
	tail          []byte
}

type candOut struct {
	index   int32
	open    *parleyv1.Part // the open part, with arguments gathered
	openIdx int32
	args    []byte
	wrote   bool // content went out for the candidate
	finish  *parleyv1.Finish
	// metadata is made when the first metadata comes, which for most
	// streams is at their end: a stream that waits holds none.
	metadata *parleyv1.Candidate
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

// meta is the candidate's metadata, made on first need.
func (c *candOut) meta() *parleyv1.Candidate {
	if c.metadata == nil {
		c.metadata = &parleyv1.Candidate{Index: c.index}
	}
	return c.metadata
}

func (s *streamEncoder) Encode(w *sse.Writer, ev *parleyv1.StreamEvent) error {
	if s.phase.Ended() {
		return fmt.Errorf("stream event %T after the end of the stream", ev.GetEvent())
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_KeepAlive:
		return nil
	case *parleyv1.StreamEvent_Start:
		if s.phase.Started() {
			return errors.New("a second start event")
		}
		s.phase = translate.PhaseStreaming
		r := e.Start.GetResponse()
		s.resp = r
		s.id, s.model = r.GetId(), r.GetModel()
		if s.model == "" {
			s.model = s.req.GetModel()
		}
		s.enc = clientEncoder{same: r.GetExtensions().GetDialect() == thisDialect}
		if r.GetUsage() != nil {
			s.usage = proto.Clone(r.GetUsage()).(*parleyv1.Usage)
			s.wireUsage = wireUsage(s.usage)
		}
		return nil
	case *parleyv1.StreamEvent_Error:
		// An upstream may fail before it says anything.
		return s.Fail(w, e.Error)
	}
	if !s.phase.Started() {
		return fmt.Errorf("stream event %T before the start", ev.GetEvent())
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_PartStart:
		return s.partStart(w, e.PartStart)
	case *parleyv1.StreamEvent_PartDelta:
		return s.partDelta(w, e.PartDelta)
	case *parleyv1.StreamEvent_PartStop:
		return s.partStop(w, e.PartStop)
	case *parleyv1.StreamEvent_Metadata:
		m := e.Metadata
		if m.GetPromptFeedback() != nil {
			s.feedback = m.GetPromptFeedback()
		}
		c := s.cand(m.GetCandidateIndex()).meta()
		c.SafetyRatings = append(c.SafetyRatings, m.GetSafetyRatings()...)
		c.Citations = append(c.Citations, m.GetCitations()...)
		c.UrlRetrievals = append(c.UrlRetrievals, m.GetUrlRetrievals()...)
		if m.GetGrounding() != nil {
			c.Grounding = m.GetGrounding()
		}
		if m.GetLogprobs() != nil {
			if c.Logprobs == nil {
				c.Logprobs = &parleyv1.Logprobs{}
			}
			c.Logprobs.Chosen = append(c.Logprobs.Chosen, m.GetLogprobs().GetChosen()...)
			c.Logprobs.Top = append(c.Logprobs.Top, m.GetLogprobs().GetTop()...)
		}
		if m.AvgLogprobs != nil {
			c.AvgLogprobs = m.AvgLogprobs
		}
	case *parleyv1.StreamEvent_Usage:
		if s.usage == nil {
			s.usage = &parleyv1.Usage{}
		}
		translate.MergeUsageInto(s.usage, e.Usage)
		s.wireUsage = wireUsage(s.usage)
	case *parleyv1.StreamEvent_Finish:
		s.cand(e.Finish.GetCandidateIndex()).finish = e.Finish
	case *parleyv1.StreamEvent_Done:
		return s.done(w)
	default:
		return fmt.Errorf("unknown stream event %T", ev.GetEvent())
	}
	return nil
}

// chunk writes one reply object holding the given part for a candidate.
func (s *streamEncoder) chunk(w *sse.Writer, ci int32, part Part) error {
	s.cand(ci).wrote = true
	if b, ok := s.textChunk(ci, &part); ok {
		return w.Event("", b)
	}
	r := s.chunkReply(ci, part)
	return s.write(w, &r)
}

func (s *streamEncoder) chunkReply(ci int32, part Part) Response {
	c := candidate{Content: &Content{Role: "model", Parts: PartList{part}}, Index: ptr(int64(ci))}
	return Response{Candidates: []candidate{c}, UsageMetadata: s.wireUsage, ModelVersion: s.model, ResponseID: s.id}
}

// textChunk writes a chunk whose one part is text (or thought text) and
// nothing else, the chunk most streams are made of, without reflection:
// the bytes around the text are marshalled once per candidate, kind and
// usage report, and are the same bytes jsonx.Marshal writes for the whole
// chunk (TestTextChunkIsTheMarshalledChunk). ok is false for any other
// part, or text that cannot be written (invalid UTF-8), which the
// reflective path then reports.
func (s *streamEncoder) textChunk(ci int32, p *Part) (b []byte, ok bool) {
	if p.Text == nil || p.ThoughtSignature != "" || len(p.Unknown) > 0 || p.Thought != nil && !*p.Thought ||
		p.InlineData != nil || p.FileData != nil || p.FunctionCall != nil || p.FunctionResponse != nil ||
		p.ExecutableCode != nil || p.CodeExecutionResult != nil {
		return nil, false
	}
	thought := p.Thought != nil
	t := s.text
	if t == nil {
		t = &textForm{ci: -1}
		s.text = t
	}
	if t.ci != ci || t.thought != thought || t.before == nil {
		var h textHole
		switch {
		case ci == 0 && thought:
			h = firstTextHoles[1]
		case ci == 0:
			h = firstTextHoles[0]
		default:
			h = textHoleOf(ci, thought)
		}
		if h.before == nil {
			return nil, false
		}
		t.ci, t.thought, t.before, t.after = ci, thought, h.before, h.after
	}
	if t.tail == nil || t.usage != s.wireUsage {
		// The members after the candidates, and the reply's end: the
		// usage changes on most chunks of a stream of this dialect.
		tail, ok := s.appendTail(t.tail[:0])
		if !ok {
			return nil, false
		}
		t.usage, t.tail = s.wireUsage, tail
	}
	b = append(s.buf[:0], t.before...)
	b, ok = jsonx.AppendQuote(b, *p.Text)
	if !ok {
		return nil, false
	}
	b = append(b, t.after...)
	b = append(b, t.tail...)
	s.keep(b)
	return b, true
}

// textHole is a chunk of one candidate whose one part is text (or
// thought text), as jsonx.Marshal writes it: {"candidates":[ CANDIDATE ]
// before the text, and after it, with the chunk's end cut off.
type textHole struct{ before, after []byte }

// firstTextHoles are the first candidate's, text and thought text, made
// once: a stream's first text chunk would otherwise marshal one by
// reflection, deep in the stream's loop (TestStreamsRunOnSmallStacks).
var firstTextHoles = [2]textHole{textHoleOf(0, false), textHoleOf(0, true)}

// textHoleOf makes the textHole of candidate ci; it is zero when the
// chunk cannot be cut (never, for what Marshal writes today).
func textHoleOf(ci int32, thought bool) textHole {
	empty := Part{Text: new("")}
	if thought {
		empty.Thought = new(true)
	}
	c := candidate{Content: &Content{Role: "model", Parts: PartList{empty}}, Index: ptr(int64(ci))}
	whole, err := jsonx.Marshal(Response{Candidates: []candidate{c}})
	if err != nil {
		return textHole{}
	}
	before, after, ok := jsonx.Hole(whole, `"parts":[{"text":`, `""`)
	if !ok || !bytes.HasSuffix(after, []byte("}")) {
		return textHole{}
	}
	return textHole{before, after[:len(after)-1]}
}

// appendTail appends the members of a chunk after its candidates, and
// its end, as jsonx.Marshal writes them; ok is false for a value it does
// not write (a usage with unknown members, invalid UTF-8).
func (s *streamEncoder) appendTail(b []byte) (_ []byte, ok bool) {
	var err error
	if u := s.wireUsage; u != nil {
		b = append(b, `,"usageMetadata":`...)
		if b, ok = appendUsage(b, u); !ok {
			return nil, false
		}
	}
	if s.model != "" {
		b = append(b, `,"modelVersion":`...)
		if b, err = jsontext.AppendQuote(b, s.model); err != nil {
			return nil, false
		}
	}
	if s.id != "" {
		b = append(b, `,"responseId":`...)
		if b, err = jsontext.AppendQuote(b, s.id); err != nil {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// appendUsage appends u as jsonx.Marshal writes it (members in order,
// the absent left out, kept members after them); ok is false for a value
// Marshal refuses.
func appendUsage(b []byte, u *usageMetadata) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	b = m.Int(b, `"promptTokenCount":`, u.PromptTokenCount)
	b = m.Int(b, `"cachedContentTokenCount":`, u.CachedContentTokenCount)
	b = m.Int(b, `"candidatesTokenCount":`, u.CandidatesTokenCount)
	b = m.Int(b, `"toolUsePromptTokenCount":`, u.ToolUsePromptTokenCount)
	b = m.Int(b, `"thoughtsTokenCount":`, u.ThoughtsTokenCount)
	b = m.Int(b, `"totalTokenCount":`, u.TotalTokenCount)
	for _, d := range [...]struct {
		name string
		list []modalityTokenCount
	}{
		{`"promptTokensDetails":`, u.PromptTokensDetails},
		{`"cacheTokensDetails":`, u.CacheTokensDetails},
		{`"candidatesTokensDetails":`, u.CandidatesTokensDetails},
		{`"toolUsePromptTokensDetails":`, u.ToolUsePromptTokensDetails},
	} {
		if d.list == nil {
			continue
		}
		b = append(m.Name(b, d.name), '[')
		for i := range d.list {
			if i > 0 {
				b = append(b, ',')
			}
			c := &d.list[i]
			var cm jsonx.Members
			if b, ok = cm.String(append(b, '{'), `"modality":`, c.Modality); !ok {
				return b, false
			}
			b = cm.Int(b, `"tokenCount":`, c.TokenCount)
			if b, ok = cm.Kept(b, c.Unknown); !ok {
				return b, false
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if b, ok = m.Kept(b, u.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// keep keeps b's buffer for the next reply written without reflection,
// unless it is large (a medium, a long text): a stream waiting on its
// upstream does not hold it.
func (s *streamEncoder) keep(b []byte) {
	s.buf = b[:0]
	if cap(b) > 8<<10 {
		s.buf = nil
	}
}

// quickReplies is false in tests that hold the replies written without
// reflection to the marshalled ones.
var quickReplies = true

// write writes a reply, without reflection when appendReply models it.
func (s *streamEncoder) write(w *sse.Writer, r *Response) error {
	if quickReplies {
		b, ok := appendReply(s.buf[:0], r)
		s.keep(b)
		if ok {
			return w.Event("", b)
		}
	}
	b, err := jsonx.Marshal(r)
	if err != nil {
		return err
	}
	return w.Event("", b)
}

func (s *streamEncoder) partStart(w *sse.Writer, ps *parleyv1.PartStart) error {
	c := s.cand(ps.GetCandidateIndex())
	if c.open != nil {
		return fmt.Errorf("part_start %d while part %d is open", ps.GetIndex(), c.openIdx)
	}
	p := ps.GetPart()
	c.open, c.openIdx, c.args = p, ps.GetIndex(), c.args[:0]
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text, *parleyv1.Part_Reasoning, *parleyv1.Part_Refusal:
		// Text that came with the start goes out now; deltas follow.
		wp, ok, err := s.enc.part(p)
		if err != nil || !ok {
			return err
		}
		if (wp.Text == nil || *wp.Text == "") && wp.ThoughtSignature == "" {
			return nil
		}
		return s.chunk(w, ps.GetCandidateIndex(), wp)
	case *parleyv1.Part_ToolCall:
		c.args = append(c.args, k.ToolCall.GetArguments()...)
		return nil // the call goes out whole when its arguments are complete
	}
	return nil
}

// thoughtPart is what a thought's part points to as its thought flag;
// nothing writes through it.
var thoughtPart = true

func (s *streamEncoder) partDelta(w *sse.Writer, pd *parleyv1.PartDelta) error {
	c := s.cand(pd.GetCandidateIndex())
	if c.open == nil || c.openIdx != pd.GetIndex() {
		return fmt.Errorf("part_delta for part %d, which is not open", pd.GetIndex())
	}
	ci := pd.GetCandidateIndex()
	thought := c.open.GetReasoning() != nil
	// A delta's part points to the delta's own text, which nothing
	// changes, rather than to a copy: a copy made for each delta is an
	// allocation each (the part reaches the reflective writer, so what
	// it points to is on the heap).
	switch d := pd.GetDelta().(type) {
	case *parleyv1.PartDelta_Text:
		return s.chunk(w, ci, Part{Text: &d.Text})
	case *parleyv1.PartDelta_Refusal:
		return s.chunk(w, ci, Part{Text: &d.Refusal})
	case *parleyv1.PartDelta_ReasoningText:
		return s.chunk(w, ci, Part{Text: &d.ReasoningText, Thought: &thoughtPart})
	case *parleyv1.PartDelta_ReasoningSummary:
		return s.chunk(w, ci, Part{Text: ptr(d.ReasoningSummary.GetText()), Thought: ptr(true)})
	case *parleyv1.PartDelta_Arguments:
		c.args = append(c.args, d.Arguments...)
	case *parleyv1.PartDelta_Signature:
		if c.open.GetToolCall() != nil {
			c.open = proto.Clone(c.open).(*parleyv1.Part)
			c.open.Signature = d.Signature
			return nil
		}
		p := Part{Text: ptr(""), ThoughtSignature: translate.SealOpaque(d.Signature, thisDialect, translate.SealAsIs)}
		if thought {
			p.Thought = ptr(true)
		}
		return s.chunk(w, ci, p)
	case *parleyv1.PartDelta_EncryptedContent:
		if thought {
			return s.chunk(w, ci, Part{Text: ptr(""), Thought: ptr(true), ThoughtSignature: translate.SealItem(d.EncryptedContent, thisDialect, translate.SealEncrypted, c.open.GetItemId())})
		}
	case *parleyv1.PartDelta_Annotation:
		// Citations of this dialect belong to the candidate; they go out
		// with the last chunk.
		meta := c.meta()
		meta.Citations = append(meta.Citations, d.Annotation)
	}
	return nil
}

func (s *streamEncoder) partStop(w *sse.Writer, ps *parleyv1.PartStop) error {
	c := s.cand(ps.GetCandidateIndex())
	if c.open == nil || c.openIdx != ps.GetIndex() {
		return fmt.Errorf("part_stop for part %d, which is not open", ps.GetIndex())
	}
	p := c.open
	c.open, c.openIdx = nil, -1
	switch p.GetKind().(type) {
	case *parleyv1.Part_Text, *parleyv1.Part_Reasoning, *parleyv1.Part_Refusal:
		return nil
	case *parleyv1.Part_ToolCall:
		p = proto.Clone(p).(*parleyv1.Part)
		p.GetToolCall().Arguments = string(c.args)
	}
	wp, ok, err := s.enc.part(p)
	if err != nil || !ok {
		return err
	}
	return s.chunk(w, ps.GetCandidateIndex(), wp)
}

func (s *streamEncoder) done(w *sse.Writer) error {
	for _, c := range s.cands {
		if c.open != nil {
			return fmt.Errorf("done while part %d of candidate %d is open", c.openIdx, c.index)
		}
	}
	s.phase = translate.PhaseEnded
	last := Response{ModelVersion: s.model, ResponseID: s.id, UsageMetadata: wireUsage(s.usage)}
	last.PromptFeedback = wirePromptFeedback(s.feedback, s.resp, s.enc.same)
	for _, c := range s.cands {
		meta := c.meta()
		if f := c.finish; f != nil {
			meta.FinishReason, meta.FinishMessage, meta.Extensions = f.GetReason(), f.GetFinishMessage(), f.GetExtensions()
		}
		wc, err := s.enc.candidate(meta, true)
		if err != nil {
			return err
		}
		if c.wrote && wc.Content == nil {
			wc.Content = &Content{Role: "model", Parts: PartList{{Text: ptr("")}}}
		}
		last.Candidates = append(last.Candidates, wc)
	}
	if len(last.Candidates) == 0 && last.PromptFeedback == nil {
		// Nothing at all came: the stream still says how it ended.
		last.Candidates = []candidate{{Index: ptr(int64(0)), FinishReason: "STOP", Content: &Content{Role: "model", Parts: PartList{}}}}
	}
	return s.write(w, &last)
}

// Fail implements translate.StreamEncoder: the dialect's error chunk.
func (s *streamEncoder) Fail(w *sse.Writer, e *parleyv1.Error) error {
	s.phase = translate.PhaseEnded
	_, d := newErrorDetail(e)
	b, err := jsonx.Marshal(errorBody{Error: d})
	if err != nil {
		return err
	}
	return w.Event("", b)
}
