package generatecontent

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// A stream of this dialect (with ?alt=sse) is a series of `data:` events,
// each a whole reply object holding the new parts, and ends when the body
// ends: there is no end marker. The last chunk of each candidate carries
// its finishReason; usage may come on every chunk.

// NewStreamDecoder implements translate.Upstream.
func (Upstream) NewStreamDecoder(t translate.Target) translate.StreamDecoder {
	return &streamDecoder{t: t}
}

type streamDecoder struct {
	t       translate.Target
	id      string
	started bool
	failed  bool
	blocked bool // the prompt was blocked: no candidate will come
	cands   []*candStream
}

type candStream struct {
	next     int
	open     int    // index of the open part, -1 when none
	openKind string // "text" or "thought" for a part that deltas extend
	toolUse  bool
	finished bool
}

func (d *streamDecoder) cand(i int) (*candStream, error) {
	if i < 0 || i > len(d.cands) || i > 64 {
		return nil, fmt.Errorf("candidate index %d out of order", i)
	}
	if i == len(d.cands) {
		d.cands = append(d.cands, &candStream{open: -1})
	}
	return d.cands[i], nil
}

func (d *streamDecoder) Decode(dst []*parleyv1.StreamEvent, ev sse.Event) ([]*parleyv1.StreamEvent, error) {
	if d.failed {
		return dst, translate.UpstreamProtocol(D, errors.New("data after an error chunk"))
	}
	var w Response
	if err := jsonx.Unmarshal(ev.Data, &w); err != nil {
		return dst, translate.UpstreamProtocol(D, err)
	}
	if w.Error != nil {
		d.failed = true
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: errorFromDetail(w.Error)}}), nil
	}
	if !d.started {
		d.started = true
		d.id = w.ResponseID
		resp := &parleyv1.Response{Id: w.ResponseID, Model: w.ModelVersion, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS, Extensions: upstreamMark()}
		if w.UsageMetadata != nil {
			resp.Usage = canonicalUsage(w.UsageMetadata)
		}
		jsonx.Keep(&resp.Extensions, D, "", w.Unknown)
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: resp}}})
	}
	for i := range w.Candidates {
		var err error
		dst, err = d.candidate(dst, &w.Candidates[i], i)
		if err != nil {
			return dst, err
		}
	}
	if pf := w.PromptFeedback; pf != nil {
		var ext *parleyv1.Extensions
		feedback := promptFeedback(pf, &ext)
		if pf.BlockReason != "" {
			d.blocked = true
		}
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Metadata{Metadata: &parleyv1.MetadataUpdate{PromptFeedback: feedback}}})
	}
	if w.UsageMetadata != nil {
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Usage{Usage: canonicalUsage(w.UsageMetadata)}})
	}
	return dst, nil
}

func (d *streamDecoder) candidate(dst []*parleyv1.StreamEvent, w *Candidate, pos int) ([]*parleyv1.StreamEvent, error) {
	ci := pos
	if w.Index != nil {
		ci = int(*w.Index)
	}
	cs, err := d.cand(ci)
	if err != nil {
		return dst, translate.UpstreamProtocol(D, err)
	}
	if cs.finished {
		return dst, translate.UpstreamProtocol(D, fmt.Errorf("candidate %d continues after its finishReason", ci))
	}
	rd := responseDecoder{t: d.t, id: d.id}
	if w.Content != nil {
		for j := range w.Content.Parts {
			p, err := rd.part(&w.Content.Parts[j], ci, cs.next)
			if err != nil {
				return dst, translate.UpstreamProtocol(D, fmt.Errorf("candidate %d part: %w", ci, err))
			}
			dst = cs.part(dst, int32(ci), p)
		}
	}
	c := &parleyv1.Candidate{Index: int32(ci)}
	rd.metadata(w, c)
	if hasMetadata(c) {
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Metadata{Metadata: &parleyv1.MetadataUpdate{
			CandidateIndex: int32(ci), SafetyRatings: c.SafetyRatings, Citations: c.Citations, Grounding: c.Grounding,
			Logprobs: c.Logprobs, AvgLogprobs: c.AvgLogprobs, UrlRetrievals: c.UrlRetrievals,
		}}})
	}
	if w.FinishReason != "" {
		dst = cs.close(dst, int32(ci))
		cs.finished = true
		reason := translate.ToolUseFinish(finishReason(w.FinishReason, c), cs.toolUse)
		f := &parleyv1.Finish{CandidateIndex: int32(ci), Reason: reason, FinishMessage: w.FinishMessage, Extensions: c.GetExtensions()}
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: f}})
	}
	return dst, nil
}

func hasMetadata(c *parleyv1.Candidate) bool {
	return len(c.SafetyRatings) > 0 || len(c.Citations) > 0 || c.Grounding != nil || c.Logprobs != nil || c.AvgLogprobs != nil || len(c.UrlRetrievals) > 0
}

// part turns one streamed part into events: text and thoughts extend the
// open part of their kind; a part that only carries a signature signs the
// open part; anything else is a whole part of its own.
func (cs *candStream) part(dst []*parleyv1.StreamEvent, ci int32, p *parleyv1.Part) []*parleyv1.StreamEvent {
	kind := ""
	var text string
	switch {
	case p.GetText() != nil && len(p.GetExtensions().GetFields()) == 0:
		kind, text = "text", p.GetText().GetText()
	case p.GetReasoning() != nil && p.GetReasoning().GetEncryptedContent() == nil:
		kind, text = "thought", p.GetReasoning().GetText()
	}
	if kind != "" && text == "" && p.GetSignature() == nil {
		// An empty piece of text (the service sends one with the finish
		// reason) carries nothing; a part opened for it would reach
		// clients as an empty block, which some services refuse when
		// the client sends it back.
		return dst
	}
	if kind != "" && cs.open >= 0 && (cs.openKind == kind || text == "" && p.GetSignature() != nil && kind == "text") {
		if text != "" {
			pd := &parleyv1.PartDelta{CandidateIndex: ci, Index: int32(cs.open), Delta: &parleyv1.PartDelta_Text{Text: text}}
			if cs.openKind == "thought" {
				pd.Delta = &parleyv1.PartDelta_ReasoningText{ReasoningText: text}
			}
			dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: pd}})
		}
		if sig := p.GetSignature(); sig != nil {
			dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{CandidateIndex: ci, Index: int32(cs.open), Delta: &parleyv1.PartDelta_Signature{Signature: sig}}}})
		}
		return dst
	}
	dst = cs.close(dst, ci)
	i := cs.next
	cs.next++
	dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{CandidateIndex: ci, Index: int32(i), Part: p}}})
	if p.GetToolCall() != nil {
		cs.toolUse = true
	}
	if kind == "" {
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{CandidateIndex: ci, Index: int32(i)}}})
	}
	cs.open, cs.openKind = i, kind
	return dst
}

func (cs *candStream) close(dst []*parleyv1.StreamEvent, ci int32) []*parleyv1.StreamEvent {
	if cs.open < 0 {
		return dst
	}
	i := cs.open
	cs.open, cs.openKind = -1, ""
	return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{CandidateIndex: ci, Index: int32(i)}}})
}

// End implements translate.StreamDecoder. A stream ends well when every
// candidate gave its finishReason, or the prompt was blocked; a body that
// stops before that was cut.
func (d *streamDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if d.failed {
		return dst, nil
	}
	finished := len(d.cands) > 0
	for _, c := range d.cands {
		if !c.finished {
			finished = false
		}
	}
	if !d.started || !finished && !d.blocked {
		return dst, &translate.UpstreamError{Err: &parleyv1.Error{
			Code:    parleyv1.Code_CODE_UNAVAILABLE,
			Message: "the generate_content upstream's stream ended before a finishReason",
			Origin:  &parleyv1.Origin{Dialect: D},
			Retry:   &parleyv1.RetryAdvice{Retryable: true},
		}}
	}
	for i, c := range d.cands {
		dst = c.close(dst, int32(i))
	}
	return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED}}}), nil
}

// NewStreamEncoder implements translate.Client.
func (Client) NewStreamEncoder(req *parleyv1.Request) translate.StreamEncoder {
	return &streamEncoder{req: req}
}

// streamEncoder renders a canonical stream as this dialect's chunks: a
// chunk per piece of text or thought as it arrives, a whole part for each
// call or medium, and a last chunk with the finish reasons, metadata and
// usage. It writes no comments or event names: clients of this dialect
// read every line as data.
type streamEncoder struct {
	req     *parleyv1.Request
	enc     clientEncoder
	started bool
	ended   bool

	id, model string
	usage     *parleyv1.Usage
	feedback  *parleyv1.PromptFeedback
	resp      *parleyv1.Response // start metadata, for the extension bag
	cands     map[int32]*candOut
	order     []int32
}

type candOut struct {
	open     *parleyv1.Part // the open part, with arguments gathered
	openIdx  int32
	args     []byte
	finish   *parleyv1.Finish
	metadata *parleyv1.Candidate
}

func (s *streamEncoder) cand(i int32) *candOut {
	if s.cands == nil {
		s.cands = map[int32]*candOut{}
	}
	c, ok := s.cands[i]
	if !ok {
		c = &candOut{openIdx: -1, metadata: &parleyv1.Candidate{Index: i}}
		s.cands[i] = c
		s.order = append(s.order, i)
	}
	return c
}

func (s *streamEncoder) Encode(w *sse.Writer, ev *parleyv1.StreamEvent) error {
	if s.ended {
		return fmt.Errorf("stream event %T after the end of the stream", ev.GetEvent())
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_KeepAlive:
		return nil
	case *parleyv1.StreamEvent_Start:
		if s.started {
			return errors.New("a second start event")
		}
		s.started = true
		r := e.Start.GetResponse()
		s.resp = r
		s.id, s.model = r.GetId(), r.GetModel()
		if s.model == "" {
			s.model = s.req.GetModel()
		}
		s.enc = clientEncoder{same: r.GetExtensions().GetDialect() == D}
		if r.GetUsage() != nil {
			s.usage = proto.Clone(r.GetUsage()).(*parleyv1.Usage)
		}
		return nil
	case *parleyv1.StreamEvent_Error:
		// An upstream may fail before it says anything.
		return s.Fail(w, e.Error)
	}
	if !s.started {
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
		c := s.cand(m.GetCandidateIndex()).metadata
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
	c := Candidate{Content: &Content{Role: "model", Parts: PartList{part}}, Index: ptr(int64(ci))}
	return s.write(w, Response{Candidates: []Candidate{c}, ModelVersion: s.model, ResponseID: s.id})
}

func (s *streamEncoder) write(w *sse.Writer, r Response) error {
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

func (s *streamEncoder) partDelta(w *sse.Writer, pd *parleyv1.PartDelta) error {
	c := s.cand(pd.GetCandidateIndex())
	if c.open == nil || c.openIdx != pd.GetIndex() {
		return fmt.Errorf("part_delta for part %d, which is not open", pd.GetIndex())
	}
	ci := pd.GetCandidateIndex()
	thought := c.open.GetReasoning() != nil
	switch d := pd.GetDelta().(type) {
	case *parleyv1.PartDelta_Text:
		return s.chunk(w, ci, Part{Text: ptr(d.Text)})
	case *parleyv1.PartDelta_Refusal:
		return s.chunk(w, ci, Part{Text: ptr(d.Refusal)})
	case *parleyv1.PartDelta_ReasoningText:
		return s.chunk(w, ci, Part{Text: ptr(d.ReasoningText), Thought: ptr(true)})
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
		p := Part{Text: ptr(""), ThoughtSignature: translate.SealOpaque(d.Signature, D, translate.SealAsIs)}
		if thought {
			p.Thought = ptr(true)
		}
		return s.chunk(w, ci, p)
	case *parleyv1.PartDelta_EncryptedContent:
		if thought {
			return s.chunk(w, ci, Part{Text: ptr(""), Thought: ptr(true), ThoughtSignature: translate.SealOpaque(d.EncryptedContent, D, translate.SealEncrypted)})
		}
	case *parleyv1.PartDelta_Annotation:
		// Citations of this dialect belong to the candidate; they go out
		// with the last chunk.
		c.metadata.Citations = append(c.metadata.Citations, d.Annotation)
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
	for _, i := range s.order {
		if s.cands[i].open != nil {
			return fmt.Errorf("done while part %d of candidate %d is open", s.cands[i].openIdx, i)
		}
	}
	s.ended = true
	last := Response{ModelVersion: s.model, ResponseID: s.id, UsageMetadata: wireUsage(s.usage)}
	last.PromptFeedback = wirePromptFeedback(s.feedback, s.resp, s.enc.same)
	for _, i := range s.order {
		c := s.cands[i]
		meta := c.metadata
		if f := c.finish; f != nil {
			meta.FinishReason, meta.FinishMessage, meta.Extensions = f.GetReason(), f.GetFinishMessage(), f.GetExtensions()
		}
		wc, err := s.enc.candidate(meta, true)
		if err != nil {
			return err
		}
		last.Candidates = append(last.Candidates, wc)
	}
	if len(last.Candidates) == 0 && last.PromptFeedback == nil {
		// Nothing at all came: the stream still says how it ended.
		last.Candidates = []Candidate{{Index: ptr(int64(0)), FinishReason: "STOP", Content: &Content{Role: "model", Parts: PartList{}}}}
	}
	return s.write(w, last)
}

// Fail implements translate.StreamEncoder: the dialect's error chunk.
func (s *streamEncoder) Fail(w *sse.Writer, e *parleyv1.Error) error {
	s.ended = true
	_, d := errorDetail(e)
	b, err := jsonx.Marshal(ErrorBody{Error: d})
	if err != nil {
		return err
	}
	return w.Event("", b)
}
