package generatecontent

import (
	"errors"
	"fmt"

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
	t  translate.Target
	id string
	// phase only moves forward: before the start, streaming, ended.
	phase   translate.Phase
	failed  bool
	blocked bool // the prompt was blocked: no candidate will come
	cands   []*candStream
	// details are the last usage's per-modality lists, which the next
	// usage shares when they are the same.
	details lastDetails
}

type candStream struct {
	next     int
	open     int    // index of the open part, -1 when none
	openKind string // "text" or "thought" for a part that deltas extend
	toolUse  bool
	finished bool
	call     *streamingCall // a call whose arguments come in pieces
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
		return dst, translate.UpstreamProtocol(thisDialect, errors.New("data after an error chunk"))
	}
	// The quick way when it can: the first chunk's header goes into the
	// response's start, and a first chunk with members this dialect does
	// not model (kept in the start) is read whole.
	r := chunkReaders.Get().(*chunkReader)
	defer chunkReaders.Put(r)
	w, quick := r.read(ev.Data, !d.phase.Started())
	if !quick {
		*w = Response{}
		if err := jsonx.Unmarshal(ev.Data, w); err != nil {
			return dst, translate.UpstreamProtocol(thisDialect, err)
		}
	}
	if w.Error != nil {
		d.failed = true
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: errorFromDetail(w.Error)}}), nil
	}
	if !d.phase.Started() {
		d.phase = translate.PhaseStreaming
		d.id = w.ResponseID
		resp := &parleyv1.Response{Id: w.ResponseID, Model: w.ModelVersion, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS, Extensions: upstreamMark()}
		if w.UsageMetadata != nil {
			resp.Usage = canonicalUsage(w.UsageMetadata, &d.details)
		}
		jsonx.Keep(&resp.Extensions, thisDialect, "", w.Unknown)
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
		feedback := readPromptFeedback(pf, &ext)
		if pf.BlockReason != "" {
			d.blocked = true
		}
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Metadata{Metadata: &parleyv1.MetadataUpdate{PromptFeedback: feedback}}})
	}
	if w.UsageMetadata != nil {
		dst = append(dst, translate.UsageEvent(canonicalUsage(w.UsageMetadata, &d.details)))
	}
	return dst, nil
}

func (d *streamDecoder) candidate(dst []*parleyv1.StreamEvent, w *candidate, pos int) ([]*parleyv1.StreamEvent, error) {
	ci := pos
	if w.Index != nil {
		ci = int(*w.Index)
	}
	cs, err := d.cand(ci)
	if err != nil {
		return dst, translate.UpstreamProtocol(thisDialect, err)
	}
	if cs.finished {
		return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("candidate %d continues after its finishReason", ci))
	}
	rd := responseDecoder{t: d.t, id: d.id}
	if w.Content != nil {
		for j := range w.Content.Parts {
			wp := &w.Content.Parts[j]
			if continuesCall(wp) || startsStreamingCall(wp) {
				if dst, err = cs.streamedCall(dst, rd, wp, int32(ci)); err != nil {
					return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("candidate %d part: %w", ci, err))
				}
				continue
			}
			dst = cs.finishCall(dst, int32(ci))
			if next, ok := cs.moreText(dst, int32(ci), wp); ok {
				dst = next
				continue
			}
			p, err := rd.part(wp, ci, cs.next)
			if err != nil {
				return dst, translate.UpstreamProtocol(thisDialect, fmt.Errorf("candidate %d part: %w", ci, err))
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
		dst = cs.finishCall(dst, int32(ci))
		dst = cs.close(dst, int32(ci))
		cs.finished = true
		reason := translate.ToolUseFinish(finishReason(w.FinishReason, c), cs.toolUse)
		f := &parleyv1.Finish{CandidateIndex: int32(ci), Reason: reason, FinishMessage: w.FinishMessage, Extensions: c.GetExtensions()}
		dst = append(dst, translate.FinishEvent(f))
	}
	return dst, nil
}

func hasMetadata(c *parleyv1.Candidate) bool {
	return len(c.SafetyRatings) > 0 || len(c.Citations) > 0 || c.Grounding != nil || c.Logprobs != nil || c.AvgLogprobs != nil || len(c.UrlRetrievals) > 0
}

// part turns one streamed part into events: text and thoughts extend the
// open part of their kind; a part that only carries a signature signs the
// open part; anything else is a whole part of its own.
// moreText extends the open text or thought part with a part that only
// holds more of it, most chunks' one part, without building the
// canonical part that part would then turn into a delta: the same events,
// fewer allocations. ok is false for any other part. It mirrors, for that
// one case, how decoder.part reads text and thoughts (a thought false is
// kept as a mark, so such a part is not continued text) and how
// candStream.part continues an open part: a change there changes this.
func (cs *candStream) moreText(dst []*parleyv1.StreamEvent, ci int32, w *Part) ([]*parleyv1.StreamEvent, bool) {
	if cs.open < 0 || w.Text == nil || *w.Text == "" || w.ThoughtSignature != "" || len(w.Unknown) > 0 ||
		w.InlineData != nil || w.FileData != nil || w.FunctionCall != nil || w.FunctionResponse != nil ||
		w.ExecutableCode != nil || w.CodeExecutionResult != nil {
		return dst, false
	}
	thought := w.Thought != nil && *w.Thought
	switch {
	case cs.openKind == "text" && w.Thought == nil:
		return append(dst, translate.TextDelta(ci, int32(cs.open), *w.Text)), true
	case cs.openKind == "thought" && thought:
		return append(dst, translate.ReasoningTextDelta(ci, int32(cs.open), *w.Text)), true
	}
	return dst, false
}

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
			if cs.openKind == "thought" {
				dst = append(dst, translate.ReasoningTextDelta(ci, int32(cs.open), text))
			} else {
				dst = append(dst, translate.TextDelta(ci, int32(cs.open), text))
			}
		}
		if sig := p.GetSignature(); sig != nil {
			dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{CandidateIndex: ci, Index: int32(cs.open), Delta: &parleyv1.PartDelta_Signature{Signature: sig}}}})
		}
		return dst
	}
	dst = cs.close(dst, ci)
	i := cs.next
	cs.next++
	dst = append(dst, translate.PartStartEvent(ci, int32(i), p))
	if p.GetToolCall() != nil {
		cs.toolUse = true
	}
	if kind == "" {
		return append(dst, translate.PartStopEvent(ci, int32(i)))
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
	return append(dst, translate.PartStopEvent(ci, int32(i)))
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
	if !d.phase.Started() || !finished && !d.blocked {
		return dst, translate.EndedEarly(thisDialect, "the generate_content upstream's stream ended before a finishReason", nil)
	}
	for i, c := range d.cands {
		dst = c.close(dst, int32(i))
	}
	return append(dst, translate.CompletedEvent()), nil
}
