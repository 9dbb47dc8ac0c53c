package translate

import (
	"strings"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Accumulator builds the whole canonical response from a canonical stream,
// checking on the way that the stream is well formed (StreamChecker). It is
// what stores a streamed response, what dialects whose final event repeats
// the whole response draw on, and what tests use to compare a stream with
// its whole counterpart.
type Accumulator struct {
	check StreamChecker
	resp  *parleyv1.Response
	cands []*candState
}

type candState struct {
	c    *parleyv1.Candidate
	open int             // index of the open part, -1 when none
	text strings.Builder // text, arguments, reasoning or refusal of the open part
}

// NewAccumulator returns an empty Accumulator.
func NewAccumulator() *Accumulator {
	return &Accumulator{resp: &parleyv1.Response{}}
}

// Add applies one event. It returns an error, and changes nothing, when the
// event is out of order.
func (a *Accumulator) Add(ev *parleyv1.StreamEvent) error {
	if err := a.check.Check(ev); err != nil {
		return err
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_Start:
		if r := e.Start.GetResponse(); r != nil {
			a.resp = proto.Clone(r).(*parleyv1.Response)
			a.resp.Candidates = nil
		}
		if a.resp.Status == parleyv1.ResponseStatus_RESPONSE_STATUS_UNSPECIFIED {
			a.resp.Status = parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS
		}
	case *parleyv1.StreamEvent_PartStart:
		a.partStart(e.PartStart)
	case *parleyv1.StreamEvent_PartDelta:
		a.partDelta(e.PartDelta)
	case *parleyv1.StreamEvent_PartStop:
		a.cands[e.PartStop.GetCandidateIndex()].closePart(e.PartStop.GetStatus())
	case *parleyv1.StreamEvent_Metadata:
		a.metadata(e.Metadata)
	case *parleyv1.StreamEvent_Usage:
		if a.resp.Usage == nil {
			a.resp.Usage = &parleyv1.Usage{}
		}
		MergeUsageInto(a.resp.Usage, e.Usage) // a.resp is the accumulator's own copy
	case *parleyv1.StreamEvent_Finish:
		cs := a.cand(e.Finish.GetCandidateIndex())
		cs.c.FinishReason = e.Finish.GetReason()
		cs.c.StopSequence = e.Finish.GetStopSequence()
		cs.c.FinishMessage = e.Finish.GetFinishMessage()
	case *parleyv1.StreamEvent_Error:
		a.flush()
		a.resp.Error = e.Error
		a.resp.Status = parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED
	case *parleyv1.StreamEvent_Done:
		a.resp.Status = e.Done.GetStatus()
		if a.resp.Status == parleyv1.ResponseStatus_RESPONSE_STATUS_UNSPECIFIED {
			a.resp.Status = parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED
		}
		a.resp.IncompleteDetails = e.Done.GetIncompleteDetails()
	}
	return nil
}

// Ended reports whether a done or error event has arrived.
func (a *Accumulator) Ended() bool { return a.check.Ended() }

// Response returns the response built so far. Text of a part still open is
// included. The Accumulator must not be used after the result is modified.
func (a *Accumulator) Response() *parleyv1.Response {
	a.flush()
	a.resp.Candidates = a.resp.Candidates[:0]
	for _, cs := range a.cands {
		a.resp.Candidates = append(a.resp.Candidates, cs.c)
	}
	return a.resp
}

func (a *Accumulator) flush() {
	for _, cs := range a.cands {
		if cs.open >= 0 {
			cs.store()
		}
	}
}

// cand returns candidate i, adding any before it (the checker has
// checked i): a candidate may say nothing before a later one does (an
// upstream listed it empty), and is there with no parts.
func (a *Accumulator) cand(i int32) *candState {
	for int(i) >= len(a.cands) {
		a.cands = append(a.cands, &candState{c: &parleyv1.Candidate{Index: int32(len(a.cands))}, open: -1})
	}
	return a.cands[i]
}

func (a *Accumulator) partStart(ps *parleyv1.PartStart) {
	cs := a.cand(ps.GetCandidateIndex())
	p := proto.Clone(ps.GetPart()).(*parleyv1.Part)
	cs.c.Parts = append(cs.c.Parts, p)
	cs.open = int(ps.GetIndex())
	cs.text.Reset()
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		cs.text.WriteString(k.Text.GetText())
	case *parleyv1.Part_ToolCall:
		cs.text.WriteString(k.ToolCall.GetArguments())
	case *parleyv1.Part_Reasoning:
		cs.text.WriteString(k.Reasoning.GetText())
	case *parleyv1.Part_Refusal:
		cs.text.WriteString(k.Refusal.GetText())
	case *parleyv1.Part_HostedToolCall:
		cs.text.WriteString(k.HostedToolCall.GetInput())
	}
}

func (a *Accumulator) partDelta(pd *parleyv1.PartDelta) {
	cs := a.cands[pd.GetCandidateIndex()]
	p := cs.c.Parts[cs.open]
	switch d := pd.GetDelta().(type) {
	case *parleyv1.PartDelta_Text:
		cs.text.WriteString(d.Text)
	case *parleyv1.PartDelta_Arguments:
		cs.text.WriteString(d.Arguments)
	case *parleyv1.PartDelta_ReasoningText:
		cs.text.WriteString(d.ReasoningText)
	case *parleyv1.PartDelta_ReasoningSummary:
		r := p.GetReasoning()
		i := int(d.ReasoningSummary.GetSummaryIndex())
		if i == len(r.Summary) {
			r.Summary = append(r.Summary, "")
		}
		r.Summary[i] += d.ReasoningSummary.GetText()
	case *parleyv1.PartDelta_Signature:
		p.Signature = d.Signature
	case *parleyv1.PartDelta_EncryptedContent:
		p.GetReasoning().EncryptedContent = d.EncryptedContent
	case *parleyv1.PartDelta_Refusal:
		cs.text.WriteString(d.Refusal)
	case *parleyv1.PartDelta_Annotation:
		p.GetText().Annotations = append(p.GetText().Annotations, d.Annotation)
	}
}

// store writes the open part's accumulated text into it.
func (cs *candState) store() {
	p := cs.c.Parts[cs.open]
	s := cs.text.String()
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		k.Text.Text = s
	case *parleyv1.Part_ToolCall:
		k.ToolCall.Arguments = s
	case *parleyv1.Part_Reasoning:
		k.Reasoning.Text = s
	case *parleyv1.Part_Refusal:
		k.Refusal.Text = s
	case *parleyv1.Part_HostedToolCall:
		k.HostedToolCall.Input = s
	}
}

func (cs *candState) closePart(st parleyv1.ItemStatus) {
	cs.store()
	if st != parleyv1.ItemStatus_ITEM_STATUS_UNSPECIFIED {
		cs.c.Parts[cs.open].Status = st
	}
	cs.open = -1
	cs.text.Reset()
}

func (a *Accumulator) metadata(m *parleyv1.MetadataUpdate) {
	if pf := m.GetPromptFeedback(); pf != nil {
		a.resp.PromptFeedback = pf
	}
	if !hasCandidateMetadata(m) {
		return
	}
	if checkCandidate(m.GetCandidateIndex()) != nil {
		return
	}
	c := a.cand(m.GetCandidateIndex()).c
	c.SafetyRatings = append(c.SafetyRatings, m.GetSafetyRatings()...)
	c.Citations = append(c.Citations, m.GetCitations()...)
	c.UrlRetrievals = append(c.UrlRetrievals, m.GetUrlRetrievals()...)
	if g := m.GetGrounding(); g != nil {
		c.Grounding = g
	}
	if lp := m.GetLogprobs(); lp != nil {
		if c.Logprobs == nil {
			c.Logprobs = &parleyv1.Logprobs{}
		}
		c.Logprobs.Chosen = append(c.Logprobs.Chosen, lp.GetChosen()...)
		c.Logprobs.Top = append(c.Logprobs.Top, lp.GetTop()...)
		c.Logprobs.Refusal = append(c.Logprobs.Refusal, lp.GetRefusal()...)
	}
	if m.AvgLogprobs != nil {
		c.AvgLogprobs = m.AvgLogprobs
	}
}

func hasCandidateMetadata(m *parleyv1.MetadataUpdate) bool {
	return len(m.GetSafetyRatings()) > 0 || len(m.GetCitations()) > 0 || m.GetGrounding() != nil ||
		m.GetLogprobs() != nil || m.AvgLogprobs != nil || len(m.GetUrlRetrievals()) > 0
}

// MergeUsage returns base with every count that next sets replaced, as the
// usage events of a stream require. Either may be nil; neither is changed.
func MergeUsage(base, next *parleyv1.Usage) *parleyv1.Usage {
	if next == nil {
		return base
	}
	out := &parleyv1.Usage{}
	if base != nil {
		out = proto.Clone(base).(*parleyv1.Usage)
	}
	MergeUsageInto(out, next)
	return out
}

// usageCounts is how many counts a Usage has (MergeUsageInto).
const usageCounts = 12

// MergeUsageInto sets every count of dst that next sets. It is MergeUsage
// for a caller that owns dst, and allocates nothing once dst holds the
// counts a stream reports, which matters on a stream that reports usage
// with every chunk. The per-modality lists are shared with next, which
// must not change afterwards.
func MergeUsageInto(dst, next *parleyv1.Usage) {
	// The counts dst lacks are made together, in one allocation rather
	// than one each (a stream's first usage sets four to six of them).
	var box *[usageCounts]int64
	set := func(i int, d **int64, v *int64) {
		if v == nil {
			return
		}
		if *d == nil {
			if box == nil {
				box = new([usageCounts]int64)
			}
			*d = &box[i]
		}
		**d = *v
	}
	set(0, &dst.InputTokens, next.InputTokens)
	set(1, &dst.OutputTokens, next.OutputTokens)
	set(2, &dst.TotalTokens, next.TotalTokens)
	set(3, &dst.CacheReadTokens, next.CacheReadTokens)
	set(4, &dst.CacheCreationTokens, next.CacheCreationTokens)
	set(5, &dst.CacheCreation_5MTokens, next.CacheCreation_5MTokens)
	set(6, &dst.CacheCreation_1HTokens, next.CacheCreation_1HTokens)
	set(7, &dst.ReasoningTokens, next.ReasoningTokens)
	set(8, &dst.ToolUseInputTokens, next.ToolUseInputTokens)
	set(9, &dst.AcceptedPredictionTokens, next.AcceptedPredictionTokens)
	set(10, &dst.RejectedPredictionTokens, next.RejectedPredictionTokens)
	set(11, &dst.WebSearchRequests, next.WebSearchRequests)
	if len(next.InputDetails) > 0 {
		dst.InputDetails = next.InputDetails
	}
	if len(next.OutputDetails) > 0 {
		dst.OutputDetails = next.OutputDetails
	}
	if len(next.CacheDetails) > 0 {
		dst.CacheDetails = next.CacheDetails
	}
	if len(next.ToolUseInputDetails) > 0 {
		dst.ToolUseInputDetails = next.ToolUseInputDetails
	}
}
