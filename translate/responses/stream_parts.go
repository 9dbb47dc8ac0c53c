package responses

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/sse"
)

// The branches of partStart and partStop are methods of their own, so
// that each stream event's frames are those of its kind of part, not of
// every kind at once: an event is encoded deep in a stream's loop
// (TestStreamsRunOnSmallStacks).

// messagePartStart opens a part of a message item: text or refusal.
func (s *streamEncoder) messagePartStart(w *sse.Writer, p *parleyv1.Part) error {
	if s.msg < 0 || (p.GetItemId() != "" && p.GetItemId() != s.items[s.msg].ID) {
		if err := s.openMessage(w, p); err != nil {
			return err
		}
	}
	m := &s.items[s.msg]
	p.ItemId = m.ID
	s.out, s.content = int64(s.msg), int64(len(m.Content.Parts))
	var part ContentPart
	if p.GetRefusal() != nil {
		part = ContentPart{Type: "refusal", Refusal: new("")}
	} else {
		part = ContentPart{Type: "output_text", Text: new(""), Annotations: []annotation{}}
	}
	m.Content.Parts = append(m.Content.Parts, part)
	e := s.partEvent("response.content_part.added", m.ID)
	s.evPart = part
	e.Part = &s.evPart
	if err := s.emit(w, e); err != nil {
		return err
	}
	// Content that came with the start goes out as a first delta.
	switch {
	case p.GetText().GetText() != "":
		e := s.partEvent("response.output_text.delta", m.ID)
		e.Delta, e.Logprobs = &p.GetText().Text, emptyList
		return s.emit(w, e)
	case p.GetRefusal().GetText() != "":
		e := s.partEvent("response.refusal.delta", m.ID)
		e.Delta = &p.GetRefusal().Text
		return s.emit(w, e)
	}
	return nil
}

// openMessage closes the open message item, if any, and opens one for p.
func (s *streamEncoder) openMessage(w *sse.Writer, p *parleyv1.Part) error {
	if err := s.closeMessage(w); err != nil {
		return err
	}
	if err := s.addItem(w, newMessageItem(p)); err != nil {
		return err
	}
	s.msg = len(s.items) - 1
	return nil
}

// carry writes a signature from another dialect, which this dialect's
// items have no place for, as an item of its own.
func (s *streamEncoder) carry(w *sse.Writer, sig *parleyv1.Opaque) error {
	if err := s.closeMessage(w); err != nil {
		return err
	}
	return s.whole(w, carrierItem(sig))
}

// callStart opens a call item.
func (s *streamEncoder) callStart(w *sse.Writer, p *parleyv1.Part, c *parleyv1.ToolCall) error {
	it := callOut(p, s.names)
	p.ItemId = it.ID
	c.Id = it.CallID
	s.out = int64(len(s.items))
	if err := s.addItem(w, it); err != nil {
		return err
	}
	if args := c.GetArguments(); args != "" && it.Type == "function_call" {
		e := s.next("response.function_call_arguments.delta")
		s.evText = args
		e.ItemID, e.OutputIndex, e.Delta = it.ID, &s.out, &s.evText
		return s.emit(w, e)
	}
	return nil
}

// reasoningStart opens a reasoning item.
func (s *streamEncoder) reasoningStart(w *sse.Writer, p *parleyv1.Part, r *parleyv1.Reasoning) error {
	it := reasoningOut(p)
	p.ItemId = it.ID
	s.out = int64(len(s.items))
	if err := s.addItem(w, it); err != nil {
		return err
	}
	if r.GetText() != "" {
		return s.summaryDelta(w, 0, r.GetText())
	}
	for i, sum := range r.GetSummary() {
		if err := s.summaryDelta(w, i, sum); err != nil {
			return err
		}
	}
	return nil
}

// messagePartStop closes a part of a message item.
func (s *streamEncoder) messagePartStop(w *sse.Writer, p *parleyv1.Part) error {
	m := &s.items[s.msg]
	part := contentOf(p)
	m.Content.Parts[s.content] = part
	if part.Type == "refusal" {
		if err := s.emit(w, &event{Type: "response.refusal.done", ItemID: m.ID, OutputIndex: new(s.out), ContentIndex: new(s.content), Refusal: part.Refusal}); err != nil {
			return err
		}
	} else {
		e := s.partEvent("response.output_text.done", m.ID)
		e.Text, e.Logprobs = part.Text, emptyList
		if err := s.emit(w, e); err != nil {
			return err
		}
	}
	e := s.partEvent("response.content_part.done", m.ID)
	s.evPart = part
	e.Part = &s.evPart
	return s.emit(w, e)
}

// callStop closes a call item, its arguments whole.
func (s *streamEncoder) callStop(w *sse.Writer, p *parleyv1.Part) error {
	it := &s.items[s.out]
	*it = callOut(p, s.names)
	switch it.Type {
	case "function_call":
		e := s.next("response.function_call_arguments.done")
		e.ItemID, e.OutputIndex, e.Arguments = it.ID, &s.out, it.Arguments
		if err := s.emit(w, e); err != nil {
			return err
		}
	case "custom_tool_call":
		input := customInput(p.GetToolCall().GetArguments())
		if err := s.emit(w, &event{Type: "response.custom_tool_call_input.delta", ItemID: it.ID, OutputIndex: new(s.out), Delta: &input}); err != nil {
			return err
		}
		if err := s.emit(w, &event{Type: "response.custom_tool_call_input.done", ItemID: it.ID, OutputIndex: new(s.out), Input: &input}); err != nil {
			return err
		}
	}
	return s.emit(w, s.itemEvent("response.output_item.done", int(s.out), it))
}
