package translate

import (
	"fmt"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// StreamChecker holds a canonical stream to its order, the one set of
// rules every path shares: the dispatcher checks each upstream's stream
// once, whatever its backend, so that encoders and Connect get only
// well-formed streams, and the Accumulator checks what it is given.
//
// The rules: a start comes first and once (an error may come instead);
// per candidate, parts open in index order from 0, one at a time, take
// deltas of their own kind and close before the next opens, the
// candidate's finish, or the end; nothing follows the end (done or
// error). Keep-alives may come anywhere. The stream's phase and each
// candidate's only move forward. A StreamChecker must not be copied once
// used.
type StreamChecker struct {
	phase Phase
	cands []candCheck
	// one holds the first candidate, so that a stream of one (nearly
	// every stream) costs no allocation of its own.
	one [1]candCheck
}

// Phase is where a stream, or one side's state machine over it, stands:
// before its start, streaming, or ended. It only moves forward.
type Phase uint8

const (
	// PhaseBeforeStart: nothing has begun the stream yet.
	PhaseBeforeStart Phase = iota
	// PhaseStreaming: the stream has started and not ended.
	PhaseStreaming
	// PhaseEnded: the stream has ended (done, error or a failure).
	PhaseEnded
)

// Started reports whether the stream has started (it may have ended since).
func (p Phase) Started() bool { return p >= PhaseStreaming }

// Ended reports whether the stream has ended.
func (p Phase) Ended() bool { return p == PhaseEnded }

// candCheck is where one candidate stands.
type candCheck struct {
	next      int32    // index of the next part to open
	open      int32    // index of the open part, -1 when none
	kind      partKind // kind of the open part
	summaries int32    // summaries of the open reasoning part so far
	finished  bool
}

// partKind is what deltas a part takes.
type partKind uint8

const (
	kindOther partKind = iota
	kindText
	kindToolCall
	kindReasoning
	kindRefusal
)

func kindOf(p *parleyv1.Part) partKind {
	switch p.GetKind().(type) {
	case *parleyv1.Part_Text:
		return kindText
	case *parleyv1.Part_ToolCall, *parleyv1.Part_HostedToolCall:
		return kindToolCall
	case *parleyv1.Part_Reasoning:
		return kindReasoning
	case *parleyv1.Part_Refusal:
		return kindRefusal
	}
	return kindOther
}

// Check checks one event against the stream so far and moves the state
// on. An event out of order is an error and changes nothing.
func (c *StreamChecker) Check(ev *parleyv1.StreamEvent) error {
	if _, ok := ev.GetEvent().(*parleyv1.StreamEvent_KeepAlive); ok {
		return nil
	}
	if c.phase.Ended() {
		return fmt.Errorf("stream event %T after the end of the stream", ev.GetEvent())
	}
	if _, ok := ev.GetEvent().(*parleyv1.StreamEvent_Start); !ok && !c.phase.Started() {
		if _, isErr := ev.GetEvent().(*parleyv1.StreamEvent_Error); !isErr {
			return fmt.Errorf("stream event %T before the start", ev.GetEvent())
		}
	}
	switch e := ev.GetEvent().(type) {
	case *parleyv1.StreamEvent_Start:
		if c.phase.Started() {
			return fmt.Errorf("a second start event")
		}
		c.phase = PhaseStreaming
	case *parleyv1.StreamEvent_PartStart:
		return c.partStart(e.PartStart)
	case *parleyv1.StreamEvent_PartDelta:
		return c.partDelta(e.PartDelta)
	case *parleyv1.StreamEvent_PartStop:
		cs, err := c.openPart(e.PartStop.GetCandidateIndex(), e.PartStop.GetIndex(), "part_stop")
		if err != nil {
			return err
		}
		cs.open = -1
	case *parleyv1.StreamEvent_Metadata, *parleyv1.StreamEvent_Usage:
	case *parleyv1.StreamEvent_Finish:
		i := e.Finish.GetCandidateIndex()
		if err := checkCandidate(i); err != nil {
			return err
		}
		if int(i) < len(c.cands) && c.cands[i].open >= 0 {
			return fmt.Errorf("finish of candidate %d while part %d is open", i, c.cands[i].open)
		}
		c.cand(i).finished = true
	case *parleyv1.StreamEvent_Error:
		c.phase = PhaseEnded
	case *parleyv1.StreamEvent_Done:
		for i, cs := range c.cands {
			if cs.open >= 0 {
				return fmt.Errorf("done while part %d of candidate %d is open", cs.open, i)
			}
		}
		c.phase = PhaseEnded
	default:
		return fmt.Errorf("unknown stream event %T", ev.GetEvent())
	}
	return nil
}

// Ended reports whether a done or error event has arrived.
func (c *StreamChecker) Ended() bool { return c.phase.Ended() }

func checkCandidate(i int32) error {
	if i < 0 || i > 1<<10 {
		return fmt.Errorf("candidate index %d out of range", i)
	}
	return nil
}

// cand returns candidate i (checked), adding any before it: a candidate
// may say nothing before a later one does.
func (c *StreamChecker) cand(i int32) *candCheck {
	if c.cands == nil {
		c.cands = c.one[:0]
	}
	for int(i) >= len(c.cands) {
		c.cands = append(c.cands, candCheck{open: -1})
	}
	return &c.cands[i]
}

func (c *StreamChecker) openPart(ci, pi int32, what string) (*candCheck, error) {
	if ci < 0 || int(ci) >= len(c.cands) {
		return nil, fmt.Errorf("%s for unknown candidate %d", what, ci)
	}
	cs := &c.cands[ci]
	if cs.open < 0 || cs.open != pi {
		return nil, fmt.Errorf("%s for part %d of candidate %d, but the open part is %d", what, pi, ci, cs.open)
	}
	return cs, nil
}

func (c *StreamChecker) partStart(ps *parleyv1.PartStart) error {
	if err := checkCandidate(ps.GetCandidateIndex()); err != nil {
		return err
	}
	var cs candCheck
	if i := int(ps.GetCandidateIndex()); i < len(c.cands) {
		cs = c.cands[i]
	} else {
		cs.open = -1
	}
	switch {
	case cs.finished:
		return fmt.Errorf("part_start for candidate %d after its finish", ps.GetCandidateIndex())
	case cs.open >= 0:
		return fmt.Errorf("part_start %d while part %d is open", ps.GetIndex(), cs.open)
	case ps.GetIndex() != cs.next:
		return fmt.Errorf("part_start index %d out of order (next is %d)", ps.GetIndex(), cs.next)
	case ps.GetPart() == nil || ps.GetPart().GetKind() == nil && ps.GetPart().GetExtensions() == nil:
		return fmt.Errorf("part_start %d without a part kind", ps.GetIndex())
	}
	p := c.cand(ps.GetCandidateIndex())
	p.open, p.next, p.kind = ps.GetIndex(), ps.GetIndex()+1, kindOf(ps.GetPart())
	p.summaries = int32(len(ps.GetPart().GetReasoning().GetSummary()))
	return nil
}

func (c *StreamChecker) partDelta(pd *parleyv1.PartDelta) error {
	cs, err := c.openPart(pd.GetCandidateIndex(), pd.GetIndex(), "part_delta")
	if err != nil {
		return err
	}
	var want partKind
	switch pd.GetDelta().(type) {
	case *parleyv1.PartDelta_Text, *parleyv1.PartDelta_Annotation:
		want = kindText
	case *parleyv1.PartDelta_Arguments:
		want = kindToolCall
	case *parleyv1.PartDelta_ReasoningText, *parleyv1.PartDelta_ReasoningSummary, *parleyv1.PartDelta_EncryptedContent:
		want = kindReasoning
	case *parleyv1.PartDelta_Refusal:
		want = kindRefusal
	case *parleyv1.PartDelta_Signature:
		return nil
	default:
		return fmt.Errorf("part_delta with no delta for part %d", pd.GetIndex())
	}
	if cs.kind != want {
		return fmt.Errorf("part_delta %T for part %d, which takes no such delta", pd.GetDelta(), pd.GetIndex())
	}
	if rs := pd.GetReasoningSummary(); rs != nil {
		switch i := rs.GetSummaryIndex(); {
		case i < 0 || i > cs.summaries:
			return fmt.Errorf("reasoning summary index %d out of order (have %d)", i, cs.summaries)
		case i == cs.summaries:
			cs.summaries++
		}
	}
	return nil
}
