package translate

import parleyv1 "github.com/parleyhq/parley/gen/parley/v1"

// The deltas most streams are made of. Each is a stream event of four
// messages (the event, its oneof wrapper, the part delta and the delta's
// wrapper); these make the four in one allocation rather than four. A
// decoder makes one per upstream delta, so a stream of text makes one
// allocation per event where it made four.

// deltaBox holds the four messages of a delta event; D is the delta's
// oneof wrapper.
type deltaBox[D any] struct {
	ev parleyv1.StreamEvent
	w  parleyv1.StreamEvent_PartDelta
	pd parleyv1.PartDelta
	d  D
}

// event links the box's messages, once its delta is set, and returns the
// event.
func (b *deltaBox[D]) event(candidate, index int32) *parleyv1.StreamEvent {
	b.pd.CandidateIndex, b.pd.Index = candidate, index
	b.w.PartDelta = &b.pd
	b.ev.Event = &b.w
	return &b.ev
}

// TextDelta returns the event that adds text to part index of candidate.
func TextDelta(candidate, index int32, text string) *parleyv1.StreamEvent {
	b := &deltaBox[parleyv1.PartDelta_Text]{d: parleyv1.PartDelta_Text{Text: text}}
	b.pd.Delta = &b.d
	return b.event(candidate, index)
}

// ArgumentsDelta returns the event that adds argument text to tool-call
// part index of candidate.
func ArgumentsDelta(candidate, index int32, args string) *parleyv1.StreamEvent {
	b := &deltaBox[parleyv1.PartDelta_Arguments]{d: parleyv1.PartDelta_Arguments{Arguments: args}}
	b.pd.Delta = &b.d
	return b.event(candidate, index)
}

// ReasoningTextDelta returns the event that adds reasoning text to part
// index of candidate.
func ReasoningTextDelta(candidate, index int32, text string) *parleyv1.StreamEvent {
	b := &deltaBox[parleyv1.PartDelta_ReasoningText]{d: parleyv1.PartDelta_ReasoningText{ReasoningText: text}}
	b.pd.Delta = &b.d
	return b.event(candidate, index)
}

// The other events every stream has: a part's start and stop, the usage,
// the finish and the end. Each is made in one allocation with its oneof
// wrapper (and, for a start, a stop and the end, its message) rather than
// in two or three.

// eventBox holds an event and its oneof wrapper W; messageBox holds the
// wrapped message M too.
type eventBox[W any] struct {
	ev parleyv1.StreamEvent
	w  W
}

type messageBox[W, M any] struct {
	ev parleyv1.StreamEvent
	w  W
	m  M
}

// PartStartEvent returns the event that starts part index of candidate.
func PartStartEvent(candidate, index int32, p *parleyv1.Part) *parleyv1.StreamEvent {
	b := &messageBox[parleyv1.StreamEvent_PartStart, parleyv1.PartStart]{m: parleyv1.PartStart{CandidateIndex: candidate, Index: index, Part: p}}
	b.w.PartStart, b.ev.Event = &b.m, &b.w
	return &b.ev
}

// PartStopEvent returns the event that ends part index of candidate.
func PartStopEvent(candidate, index int32) *parleyv1.StreamEvent {
	b := &messageBox[parleyv1.StreamEvent_PartStop, parleyv1.PartStop]{m: parleyv1.PartStop{CandidateIndex: candidate, Index: index}}
	b.w.PartStop, b.ev.Event = &b.m, &b.w
	return &b.ev
}

// CompletedEvent returns the event that ends a response that completed.
func CompletedEvent() *parleyv1.StreamEvent {
	b := &messageBox[parleyv1.StreamEvent_Done, parleyv1.ResponseDone]{m: parleyv1.ResponseDone{Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED}}
	b.w.Done, b.ev.Event = &b.m, &b.w
	return &b.ev
}

// UsageEvent returns the event that reports u.
func UsageEvent(u *parleyv1.Usage) *parleyv1.StreamEvent {
	b := &eventBox[parleyv1.StreamEvent_Usage]{w: parleyv1.StreamEvent_Usage{Usage: u}}
	b.ev.Event = &b.w
	return &b.ev
}

// FinishEvent returns the event that finishes a candidate as f says.
func FinishEvent(f *parleyv1.Finish) *parleyv1.StreamEvent {
	b := &eventBox[parleyv1.StreamEvent_Finish]{w: parleyv1.StreamEvent_Finish{Finish: f}}
	b.ev.Event = &b.w
	return &b.ev
}
