package translate

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// ReplayResponse returns the canonical stream a streaming upstream would
// have sent for a whole response: the inverse of the Accumulator, for an
// upstream that answers a stream request with one whole reply.
//
// The stream is: a start with the response's metadata (its id, model,
// creation time, service tier, fingerprint, extensions and usage, no
// candidates), prompt feedback as metadata; then for each candidate, each
// part opened, its content given as deltas, and closed, followed by the
// candidate's metadata; then the usage, a finish per candidate, and done,
// or the response's error when it has one. It passes the StreamChecker,
// and the Accumulator builds resp back from it, except for what a stream
// cannot carry: a candidate's token count, grounding attributions and
// extensions (the extensions ride on its finish, which the Accumulator
// does not read), the incomplete details of a response that has an
// error, a candidate index that does not number the candidates 0, 1, 2
// ... (the position is used instead), and a part with neither kind nor
// extensions (left out).
//
// A part's content goes out as deltas where every encoder takes them as
// such: text and its annotations, tool call arguments, reasoning
// summaries and text, refusals; a reasoning part's encrypted content and
// signature as deltas of their own after its text, as its upstream would
// send them. Every other part, and redacted reasoning (whose content no
// dialect streams), is whole in its part start, and so is the signature
// of a part that is not reasoning, which encoders place before the part.
// A part's item status is in its part stop, the start saying in progress.
//
// The events share messages with resp; neither may be changed while the
// other is in use.
func ReplayResponse(resp *parleyv1.Response) []*parleyv1.StreamEvent {
	evs := []*parleyv1.StreamEvent{{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: replayStart(resp)}}}}
	if pf := resp.GetPromptFeedback(); pf != nil {
		evs = append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Metadata{Metadata: &parleyv1.MetadataUpdate{PromptFeedback: pf}}})
	}
	cands := resp.GetCandidates()
	index := candidateIndexes(cands)
	for i, c := range cands {
		ci := index[i]
		n := int32(0)
		for _, p := range c.GetParts() {
			if p.GetKind() == nil && p.GetExtensions() == nil {
				continue // nothing a part start may carry
			}
			evs = replayPart(evs, ci, n, p)
			n++
		}
		m := &parleyv1.MetadataUpdate{
			CandidateIndex: ci, SafetyRatings: c.GetSafetyRatings(), Citations: c.GetCitations(), Grounding: c.GetGrounding(),
			Logprobs: c.GetLogprobs(), UrlRetrievals: c.GetUrlRetrievals(),
		}
		if c != nil {
			m.AvgLogprobs = c.AvgLogprobs
		}
		if hasCandidateMetadata(m) {
			evs = append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Metadata{Metadata: m}})
		}
	}
	if u := resp.GetUsage(); u != nil {
		evs = append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Usage{Usage: u}})
	}
	for i, c := range cands {
		evs = append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{
			CandidateIndex: index[i], Reason: c.GetFinishReason(), StopSequence: c.GetStopSequence(),
			FinishMessage: c.GetFinishMessage(), Extensions: c.GetExtensions(),
		}}})
	}
	if e := resp.GetError(); e != nil {
		return append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: e}})
	}
	return append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{
		Status: resp.GetStatus(), IncompleteDetails: resp.GetIncompleteDetails(),
	}}})
}

// replayStart is the response of the start event: every member of resp
// but its candidates, and what comes at the end (the status, incomplete
// details and error) or as metadata (prompt feedback). The members are
// copied one by one, so that a member added to the model travels too.
func replayStart(resp *parleyv1.Response) *parleyv1.Response {
	start := &parleyv1.Response{}
	if resp != nil {
		dst := start.ProtoReflect()
		resp.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.Name() != "candidates" {
				dst.Set(fd, v)
			}
			return true
		})
	}
	start.Status = parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS
	start.IncompleteDetails, start.Error, start.PromptFeedback = nil, nil, nil
	return start
}

// candidateIndexes returns the stream index of each candidate: its own
// index when the indexes number the candidates 0, 1, 2 ... in some order,
// each once, else its position (the Accumulator numbers candidates by
// their stream index).
func candidateIndexes(cands []*parleyv1.Candidate) []int32 {
	out := make([]int32, len(cands))
	seen := make([]bool, len(cands))
	own := true
	for i, c := range cands {
		ci := c.GetIndex()
		if ci < 0 || int(ci) >= len(cands) || seen[ci] {
			own = false
			break
		}
		seen[ci], out[i] = true, ci
	}
	if !own {
		for i := range out {
			out[i] = int32(i)
		}
	}
	return out
}

// replayPart appends the events of part i of candidate ci: its start,
// its deltas and its stop.
func replayPart(evs []*parleyv1.StreamEvent, ci, i int32, p *parleyv1.Part) []*parleyv1.StreamEvent {
	start, deltas := splitPart(p)
	status := p.GetStatus()
	if status != parleyv1.ItemStatus_ITEM_STATUS_UNSPECIFIED && status != parleyv1.ItemStatus_ITEM_STATUS_IN_PROGRESS {
		// In progress while it streams; its own status at its stop.
		if start == p {
			start = proto.CloneOf(p)
		}
		start.Status = parleyv1.ItemStatus_ITEM_STATUS_IN_PROGRESS
	}
	evs = append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{CandidateIndex: ci, Index: i, Part: start}}})
	for _, d := range deltas {
		d.CandidateIndex, d.Index = ci, i
		evs = append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: d}})
	}
	return append(evs, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{CandidateIndex: ci, Index: i, Status: status}}})
}

// splitPart returns what of a part goes in its part start, and the deltas
// that carry the rest. A part with nothing to stream is returned whole
// (p itself); else the start is a copy with the streamed content cleared.
func splitPart(p *parleyv1.Part) (*parleyv1.Part, []*parleyv1.PartDelta) {
	var ds []*parleyv1.PartDelta
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		t := k.Text
		if t.GetText() == "" && len(t.GetAnnotations()) == 0 {
			return p, nil
		}
		if t.GetText() != "" {
			ds = append(ds, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Text{Text: t.GetText()}})
		}
		for _, a := range t.GetAnnotations() {
			ds = append(ds, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Annotation{Annotation: a}})
		}
		start := proto.CloneOf(p)
		start.GetText().Text, start.GetText().Annotations = "", nil
		return start, ds
	case *parleyv1.Part_ToolCall:
		if k.ToolCall.GetArguments() == "" {
			return p, nil
		}
		start := proto.CloneOf(p)
		start.GetToolCall().Arguments = ""
		return start, append(ds, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Arguments{Arguments: k.ToolCall.GetArguments()}})
	case *parleyv1.Part_Refusal:
		if k.Refusal.GetText() == "" {
			return p, nil
		}
		start := proto.CloneOf(p)
		start.GetRefusal().Text = ""
		return start, append(ds, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Refusal{Refusal: k.Refusal.GetText()}})
	case *parleyv1.Part_Reasoning:
		r := k.Reasoning
		if r == nil || r.GetRedacted() {
			return p, nil // whole: no dialect streams redacted reasoning
		}
		// Summaries first: a dialect that shows summaries shows them in
		// place of the text.
		for j, s := range r.GetSummary() {
			ds = append(ds, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_ReasoningSummary{ReasoningSummary: &parleyv1.ReasoningSummaryDelta{SummaryIndex: int32(j), Text: s}}})
		}
		if r.GetText() != "" {
			ds = append(ds, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_ReasoningText{ReasoningText: r.GetText()}})
		}
		if e := r.GetEncryptedContent(); e != nil {
			ds = append(ds, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_EncryptedContent{EncryptedContent: e}})
		}
		// The signature last, as the upstreams that sign thinking send
		// it, and so that it is the one kept by a dialect that folds
		// both into one field.
		if sig := p.GetSignature(); sig != nil {
			ds = append(ds, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Signature{Signature: sig}})
		}
		if len(ds) == 0 {
			return p, nil
		}
		start := proto.CloneOf(p)
		sr := start.GetReasoning()
		sr.Text, sr.Summary, sr.EncryptedContent, start.Signature = "", nil, nil, nil
		return start, ds
	}
	return p, nil
}
