package translate

import parleyv1 "github.com/parleyhq/parley/gen/parley/v1"

// The deltas most streams are made of. Each is a stream event of four
// messages (the event, its oneof wrapper, the part delta and the delta's
// wrapper); these make the four in one allocation rather than four. A
// decoder makes one per upstream delta, so a stream of text makes one
// allocation per event where it made four.

// TextDelta returns the event that adds text to part index of candidate.
func TextDelta(candidate, index int32, text string) *parleyv1.StreamEvent {
	b := new(struct {
		ev parleyv1.StreamEvent
		w  parleyv1.StreamEvent_PartDelta
		pd parleyv1.PartDelta
		d  parleyv1.PartDelta_Text
	})
	b.d.Text = text
	b.pd.CandidateIndex, b.pd.Index, b.pd.Delta = candidate, index, &b.d
	b.w.PartDelta = &b.pd
	b.ev.Event = &b.w
	return &b.ev
}

// ArgumentsDelta returns the event that adds argument text to tool-call
// part index of candidate.
func ArgumentsDelta(candidate, index int32, args string) *parleyv1.StreamEvent {
	b := new(struct {
		ev parleyv1.StreamEvent
		w  parleyv1.StreamEvent_PartDelta
		pd parleyv1.PartDelta
		d  parleyv1.PartDelta_Arguments
	})
	b.d.Arguments = args
	b.pd.CandidateIndex, b.pd.Index, b.pd.Delta = candidate, index, &b.d
	b.w.PartDelta = &b.pd
	b.ev.Event = &b.w
	return &b.ev
}

// ReasoningTextDelta returns the event that adds reasoning text to part
// index of candidate.
func ReasoningTextDelta(candidate, index int32, text string) *parleyv1.StreamEvent {
	b := new(struct {
		ev parleyv1.StreamEvent
		w  parleyv1.StreamEvent_PartDelta
		pd parleyv1.PartDelta
		d  parleyv1.PartDelta_ReasoningText
	})
	b.d.ReasoningText = text
	b.pd.CandidateIndex, b.pd.Index, b.pd.Delta = candidate, index, &b.d
	b.w.PartDelta = &b.pd
	b.ev.Event = &b.w
	return &b.ev
}
