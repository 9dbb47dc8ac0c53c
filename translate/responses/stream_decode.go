package responses

import (
	"fmt"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
	"github.com/parleyhq/parley/translate/sse"
)

// A stream of this dialect is a series of events, each with an `event:`
// line and a `data:` object whose type is the event's name and which
// carries a sequence_number:
//
//	response.created response.in_progress
//	per output item: response.output_item.added
//	  message: (content_part.added output_text.delta* output_text.done
//	            content_part.done)*    (refusal.delta / refusal.done alike)
//	  function_call: function_call_arguments.delta* .done
//	  reasoning: (reasoning_summary_part.added reasoning_summary_text.delta*
//	              reasoning_summary_text.done reasoning_summary_part.done)*
//	response.output_item.done
//	response.completed | response.incomplete | response.failed
//
// An error event may end the stream at any point. Events for hosted tools'
// progress (web_search_call.searching, say) carry nothing a canonical
// stream needs: their items arrive whole with output_item.done.

// NewStreamDecoder implements translate.Upstream.
func (Upstream) NewStreamDecoder(t translate.Target) translate.StreamDecoder {
	return &streamDecoder{t: t, open: -1, items: map[int64]*Item{}, d: &itemDecoder{t: t, names: map[string]string{}}}
}

type streamDecoder struct {
	t translate.Target
	d *itemDecoder
	// phase only moves forward: before the start, streaming, ended.
	phase   translate.Phase
	next    int32 // index of the next part
	open    int32 // index of the open part, -1 when none
	openKey [2]int64
	gotArgs bool
	// the open content part is a refusal (else text)
	openRefusal bool
	calls       bool
	items       map[int64]*Item // items begun, by output index
}

func ev(e any) *parleyv1.StreamEvent {
	switch x := e.(type) {
	case *parleyv1.PartStart:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: x}}
	case *parleyv1.PartDelta:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: x}}
	case *parleyv1.PartStop:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: x}}
	case *parleyv1.Error:
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: x}}
	}
	panic("responses: unknown stream event")
}

func protocol(format string, args ...any) error {
	return translate.UpstreamProtocol(thisDialect, fmt.Errorf(format, args...))
}

func (s *streamDecoder) start(dst []*parleyv1.StreamEvent, p *parleyv1.Part, key [2]int64) []*parleyv1.StreamEvent {
	s.open, s.openKey, s.gotArgs, s.openRefusal = s.next, key, false, p.GetRefusal() != nil
	s.next++
	return append(dst, ev(&parleyv1.PartStart{Index: s.open, Part: p}))
}

func (s *streamDecoder) stop(dst []*parleyv1.StreamEvent, status parleyv1.ItemStatus) []*parleyv1.StreamEvent {
	i := s.open
	s.open = -1
	return append(dst, ev(&parleyv1.PartStop{Index: i, Status: status}))
}

func (s *streamDecoder) delta(dst []*parleyv1.StreamEvent, pd *parleyv1.PartDelta) []*parleyv1.StreamEvent {
	pd.Index = s.open
	return append(dst, ev(pd))
}

func (s *streamDecoder) Decode(dst []*parleyv1.StreamEvent, e sse.Event) ([]*parleyv1.StreamEvent, error) {
	r := eventReaders.Get().(*eventReader)
	defer eventReaders.Put(r)
	w, err := r.event(e)
	if err != nil {
		return dst, err
	}
	return s.decode(dst, w)
}

// event reads e, the quick way when it can. Its frame is small: the
// objects an event carries are read by reflection from here, not from
// under decode's (TestStreamsRunOnSmallStacks).
func (r *eventReader) event(e sse.Event) (*event, error) {
	w, quick := r.read(e.Data)
	if quick {
		if err := r.open(w); err != nil {
			return nil, protocol("event %q: %w", w.Type, err)
		}
		return w, nil
	}
	if err := jsonx.Unmarshal(e.Data, w); err != nil {
		return nil, protocol("event %q: %w", e.Type, err)
	}
	if w.Type == "" {
		w.Type = e.Type
	}
	return w, nil
}

// decode turns one event read into canonical events.
func (s *streamDecoder) decode(dst []*parleyv1.StreamEvent, w *event) ([]*parleyv1.StreamEvent, error) {
	if s.phase.Ended() {
		return dst, protocol("event %q after the end of the response", w.Type)
	}
	if !s.phase.Started() && w.Type != "response.created" && w.Type != "error" && w.Type != "response.failed" {
		if w.Type == "response.queued" || w.Type == "response.in_progress" {
			return dst, nil
		}
		return dst, protocol("event %q before response.created", w.Type)
	}
	switch w.Type {
	case "response.created":
		if s.phase.Started() {
			return dst, protocol("a second response.created")
		}
		if w.Response == nil {
			return dst, protocol("response.created without a response")
		}
		s.phase = translate.PhaseStreaming
		resp, err := decodeResponse(w.Response, s.t)
		if err != nil {
			return dst, err
		}
		resp.Candidates, resp.Usage, resp.Status = nil, nil, parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: resp}}}), nil
	case "response.output_item.added":
		return s.itemAdded(dst, w)
	case "response.content_part.added":
		if w.OutputIndex == nil || w.ContentIndex == nil || w.Part == nil {
			return dst, protocol("content_part.added without output_index, content_index or part")
		}
		it := s.items[*w.OutputIndex]
		if it == nil || it.Type != "message" || s.open >= 0 {
			return dst, protocol("content_part.added for output item %d, which is not an open message", *w.OutputIndex)
		}
		if w.Part.Type != "output_text" && w.Part.Type != "refusal" {
			return dst, protocol("content_part.added with a part of type %q", w.Part.Type)
		}
		p, err := s.d.contentPart(w.Part, "part")
		if err != nil {
			return dst, translate.UpstreamProtocol(thisDialect, err)
		}
		p.ItemId, p.Status = it.ID, parleyv1.ItemStatus_ITEM_STATUS_IN_PROGRESS
		return s.start(dst, p, [2]int64{*w.OutputIndex, *w.ContentIndex}), nil
	case "response.output_text.delta", "response.refusal.delta", "response.output_text.annotation.added":
		if w.OutputIndex == nil || w.ContentIndex == nil || s.open < 0 || s.openKey != [2]int64{*w.OutputIndex, *w.ContentIndex} {
			return dst, protocol("%s for a content part that is not open", w.Type)
		}
		if (w.Type == "response.refusal.delta") != s.openRefusal {
			return dst, protocol("%s for a content part of the other kind", w.Type)
		}
		switch w.Type {
		case "response.output_text.annotation.added":
			if w.Annotation != nil {
				if a, ok := canonicalAnnotation(*w.Annotation); ok {
					return s.delta(dst, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Annotation{Annotation: a}}), nil
				}
			}
			return dst, nil
		case "response.refusal.delta":
			return s.delta(dst, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Refusal{Refusal: deref(w.Delta)}}), nil
		}
		return append(dst, translate.TextDelta(0, s.open, deref(w.Delta))), nil
	case "response.content_part.done":
		if w.OutputIndex == nil || w.ContentIndex == nil || s.open < 0 || s.openKey != [2]int64{*w.OutputIndex, *w.ContentIndex} {
			return dst, protocol("content_part.done for a content part that is not open")
		}
		return s.stop(dst, parleyv1.ItemStatus_ITEM_STATUS_COMPLETED), nil
	case "response.function_call_arguments.delta":
		if w.OutputIndex == nil || s.open < 0 || s.openKey != [2]int64{*w.OutputIndex, -1} {
			return dst, protocol("function_call_arguments.delta for an item that is not an open function call")
		}
		if deref(w.Delta) != "" {
			s.gotArgs = true
		}
		return append(dst, translate.ArgumentsDelta(0, s.open, deref(w.Delta))), nil
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if w.OutputIndex == nil || s.open < 0 || s.openKey != [2]int64{*w.OutputIndex, -1} {
			return dst, protocol("%s for an item that is not open reasoning", w.Type)
		}
		if w.Type == "response.reasoning_text.delta" {
			return append(dst, translate.ReasoningTextDelta(0, s.open, deref(w.Delta))), nil
		}
		idx := int32(0)
		if w.SummaryIndex != nil {
			idx = int32(*w.SummaryIndex)
		}
		return s.delta(dst, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_ReasoningSummary{ReasoningSummary: &parleyv1.ReasoningSummaryDelta{SummaryIndex: idx, Text: deref(w.Delta)}}}), nil
	case "response.output_item.done":
		return s.itemDone(dst, w)
	case "response.completed", "response.incomplete":
		if s.open >= 0 {
			return dst, protocol("%s while part %d is open", w.Type, s.open)
		}
		if w.Response == nil {
			return dst, protocol("%s without a response", w.Type)
		}
		s.phase = translate.PhaseEnded
		r := w.Response
		if r.Usage != nil {
			var ext *parleyv1.Extensions
			dst = append(dst, translate.UsageEvent(canonicalUsage(r.Usage, &ext)))
		}
		reason := parleyv1.FinishReason_FINISH_REASON_STOP
		switch {
		case r.IncompleteDetails != nil:
			reason = finish("incomplete", r.IncompleteDetails, nil)
		case s.calls:
			reason = parleyv1.FinishReason_FINISH_REASON_TOOL_USE
		}
		f := &parleyv1.Finish{Reason: reason}
		done := &parleyv1.ResponseDone{Status: statuses[r.Status]}
		if r.IncompleteDetails != nil {
			done.IncompleteDetails = &parleyv1.IncompleteDetails{Reason: reason}
			if _, ok := incompleteReasons[r.IncompleteDetails.Reason]; !ok {
				f.FinishMessage = r.IncompleteDetails.Reason
			}
		}
		if done.Status == parleyv1.ResponseStatus_RESPONSE_STATUS_UNSPECIFIED {
			done.Status = parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED
		}
		dst = append(dst, translate.FinishEvent(f))
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: done}}), nil
	case "response.failed":
		s.phase = translate.PhaseEnded
		e := &parleyv1.Error{Code: parleyv1.Code_CODE_INTERNAL, Message: "the response failed", Origin: &parleyv1.Origin{Dialect: thisDialect}, Retry: translate.RetryIfAny(translate.RetryFacts{Code: parleyv1.Code_CODE_INTERNAL})}
		if w.Response != nil && w.Response.Error != nil {
			e = failure(w.Response.Error)
		}
		return append(dst, ev(e)), nil
	case "error":
		s.phase = translate.PhaseEnded
		d := &openai.ErrorDetail{Message: w.Message, Code: w.Code, Param: w.Param}
		_ = jsonx.Unmarshal(w.Code, &d.Type)
		e := openai.FromDetail(thisDialect, d, 0)
		return append(dst, ev(e)), nil
	}
	return dst, nil
}

func (s *streamDecoder) itemAdded(dst []*parleyv1.StreamEvent, w *event) ([]*parleyv1.StreamEvent, error) {
	if w.OutputIndex == nil || w.Item == nil {
		return dst, protocol("output_item.added without output_index or item")
	}
	if s.open >= 0 {
		return dst, protocol("output item %d begins while part %d is open", *w.OutputIndex, s.open)
	}
	if _, dup := s.items[*w.OutputIndex]; dup {
		return dst, protocol("output item %d added twice", *w.OutputIndex)
	}
	it := *w.Item
	s.items[*w.OutputIndex] = &it
	key := [2]int64{*w.OutputIndex, -1}
	switch it.Type {
	case "function_call":
		if it.CallID == "" || it.Name == "" {
			return dst, protocol("function_call item without call_id or name")
		}
		s.calls = true
		p := mark(translate.CallPart(it.CallID, it.Name, ""), &it)
		p.GetToolCall().Namespace = it.Namespace
		return s.start(dst, p, key), nil
	case "reasoning":
		p := mark(&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}}, &it)
		return s.start(dst, p, key), nil
	}
	return dst, nil
}

func (s *streamDecoder) itemDone(dst []*parleyv1.StreamEvent, w *event) ([]*parleyv1.StreamEvent, error) {
	if w.OutputIndex == nil || w.Item == nil {
		return dst, protocol("output_item.done without output_index or item")
	}
	it := w.Item
	begun := s.items[*w.OutputIndex]
	if begun == nil {
		return dst, protocol("output item %d done before it was added", *w.OutputIndex)
	}
	status := itemStatus(it.Status)
	switch it.Type {
	case "message":
		if s.open >= 0 {
			return dst, protocol("message item %d done while part %d is open", *w.OutputIndex, s.open)
		}
		return dst, nil
	case "function_call", "reasoning":
		if s.open < 0 || s.openKey != [2]int64{*w.OutputIndex, -1} {
			return dst, protocol("output item %d done, but it is not the open item", *w.OutputIndex)
		}
		if it.Type == "function_call" && !s.gotArgs {
			args := deref(it.Arguments)
			if args == "" {
				args = "{}"
			}
			dst = append(dst, translate.ArgumentsDelta(0, s.open, args))
		}
		if it.Type == "reasoning" && it.EncryptedContent != nil {
			dst = s.delta(dst, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_EncryptedContent{EncryptedContent: translate.Stamp(*it.EncryptedContent, thisDialect, s.t)}})
		}
		return s.stop(dst, status), nil
	}
	if s.open >= 0 {
		return dst, protocol("output item %d done while part %d is open", *w.OutputIndex, s.open)
	}
	// An item that arrives whole (a hosted tool's call, a computer call).
	parts, err := s.d.outputItem(it)
	if err != nil {
		return dst, translate.UpstreamProtocol(thisDialect, err)
	}
	for _, p := range parts {
		if p.GetToolCall() != nil {
			s.calls = true
		}
		dst = s.start(dst, p, [2]int64{*w.OutputIndex, -2})
		dst = s.stop(dst, p.GetStatus())
	}
	return dst, nil
}

// End implements translate.StreamDecoder.
func (s *streamDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if s.phase.Ended() {
		return dst, nil
	}
	return dst, translate.EndedEarly(thisDialect, "the responses upstream's stream ended before response.completed", nil)
}
