package responses

import (
	"fmt"
	"maps"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
	"github.com/parleyhq/parley/translate/sse"
)

// NewStreamEncoder implements translate.Client.
func (Client) NewStreamEncoder(req *parleyv1.Request) translate.StreamEncoder {
	s := &streamEncoder{req: req, msg: -1, openIdx: -1}
	if echoShallow(req) {
		s.begin()
	} else {
		offstack.Run(s.begin)
	}
	return s
}

// begin takes what the encoder keeps of the request: how its calls are
// named, and its echo, written here once for the snapshots to copy.
func (s *streamEncoder) begin() {
	s.names = callNamesOf(s.req)
	s.reqEcho = echoOf(s.req)
	s.echoWritten = s.reqEcho.write()
}

type streamEncoder struct {
	req *parleyv1.Request
	// names says how the request's calls are rendered (custom tools,
	// groups).
	names *callNames
	// phase only moves forward: before the start, streaming, ended.
	phase translate.Phase
	// pending holds the open part's text deltas not yet joined to it
	// (join).
	pending []byte
	seq     int64
	// ev is the event emit writes next, and written its number;
	// evIndex, evText, evPart and evItem hold what it points to that
	// the encoder holds nowhere else (next).
	ev      event
	written int64
	evIndex int64
	evText  string
	evPart  ContentPart
	evItem  Item
	resp    *parleyv1.Response // the start's response, for snapshots
	items   []Item             // output items so far
	msg     int                // index in items of the open message item, -1 when none
	// the open part, accumulated
	open    *parleyv1.Part
	openIdx int32
	out     int64 // output index of the open part's item
	content int64 // content index of the open part in its message
	sums    int   // reasoning summaries begun
	usage   *parleyv1.Usage
	reason  parleyv1.FinishReason
	message string
	// deltaBuf holds the last text delta written without reflection.
	deltaBuf []byte
	// reqEcho is the request's echo (the instructions and tools among
	// it), which every snapshot shares, with what the upstream echoed
	// itself taken into it at the start. It is made with the encoder
	// rather than at the start's event: the start is encoded deep in a
	// stream's loop, and marshalling an agent's tools there by reflection
	// took the handler's goroutine past its stack
	// (TestStreamsRunOnSmallStacks). The encoder reads no more of the
	// request than its model and previous response id after that, and a
	// stream waiting on its upstream need not keep the rest (how custom
	// and namespaced tools' calls are written is in names, taken at the
	// beginning).
	reqEcho requestEcho
	// echoWritten says reqEcho is written as jsonx.AppendRaw writes it
	// (requestEcho.write).
	echoWritten bool
}

func (s *streamEncoder) snapshot(status parleyv1.ResponseStatus, final bool) *Response {
	var first *parleyv1.Candidate
	if final {
		first = &parleyv1.Candidate{FinishReason: s.reason, FinishMessage: s.message}
	}
	r := snapshotOf(s.req, s.resp, status, first, &s.reqEcho, s.echoWritten)
	if final {
		r.Output = append([]Item{}, s.items...)
		r.Usage = wireUsage(s.usage, s.resp.GetExtensions())
	}
	return r
}

func (s *streamEncoder) Encode(w *sse.Writer, e *parleyv1.StreamEvent) error {
	if _, ok := e.GetEvent().(*parleyv1.StreamEvent_KeepAlive); ok {
		return nil
	}
	if s.phase.Ended() {
		return fmt.Errorf("responses: event after the end of the stream")
	}
	if _, ok := e.GetEvent().(*parleyv1.StreamEvent_Start); !ok && !s.phase.Started() {
		if x := e.GetError(); x != nil {
			return s.Fail(w, x)
		}
		return fmt.Errorf("responses: stream event before start")
	}
	switch x := e.GetEvent().(type) {
	case *parleyv1.StreamEvent_Start:
		return s.start(w, x.Start)
	case *parleyv1.StreamEvent_PartStart:
		if x.PartStart.GetCandidateIndex() != 0 {
			return nil // this dialect shows one candidate
		}
		return s.partStart(w, x.PartStart)
	case *parleyv1.StreamEvent_PartDelta:
		if x.PartDelta.GetCandidateIndex() != 0 {
			return nil
		}
		return s.partDelta(w, x.PartDelta)
	case *parleyv1.StreamEvent_PartStop:
		if x.PartStop.GetCandidateIndex() != 0 {
			return nil
		}
		return s.partStop(w, x.PartStop)
	case *parleyv1.StreamEvent_Usage:
		// The encoder's own running counts (wireUsage copies them out):
		// merged in place, where MergeUsage clones them by reflection.
		if x.Usage != nil {
			if s.usage == nil {
				s.usage = &parleyv1.Usage{}
			}
			translate.MergeUsageInto(s.usage, x.Usage)
		}
	case *parleyv1.StreamEvent_Finish:
		if x.Finish.GetCandidateIndex() == 0 {
			s.reason, s.message = x.Finish.GetReason(), x.Finish.GetFinishMessage()
		}
	case *parleyv1.StreamEvent_Error:
		return s.Fail(w, x.Error)
	case *parleyv1.StreamEvent_Done:
		return s.done(w)
	}
	return nil
}

// start writes the response's start: created and in progress.
func (s *streamEncoder) start(w *sse.Writer, st *parleyv1.ResponseStart) error {
	if s.phase.Started() {
		return fmt.Errorf("responses: a second start")
	}
	s.phase = translate.PhaseStreaming
	s.resp = st.GetResponse()
	if s.resp == nil {
		s.resp = &parleyv1.Response{}
	}
	if s.resp.GetId() == "" {
		s.resp = cloneResponse(s.resp)
		s.resp.Id = translate.NewID("resp_")
	}
	s.usage = translate.MergeUsage(nil, s.resp.GetUsage())
	if s.reqEcho.keep(s.resp.GetExtensions()) {
		s.echoWritten = s.reqEcho.write()
	}
	snap := s.snapshot(parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS, false)
	return s.emitSnapshot(w, snap, "response.created", "response.in_progress")
}

// done writes the response's end: completed, or incomplete.
func (s *streamEncoder) done(w *sse.Writer) error {
	if s.open != nil {
		return fmt.Errorf("responses: done while part %d is open", s.openIdx)
	}
	if err := s.closeMessage(w); err != nil {
		return err
	}
	s.phase = translate.PhaseEnded
	if translate.HasToolCalls(s.parts()) {
		s.reason = translate.ToolUseFinish(s.reason, true)
	}
	status := parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED
	typ := "response.completed"
	if incompleteWord(s.reason) != "" {
		status, typ = parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE, "response.incomplete"
	}
	return s.emitSnapshot(w, s.snapshot(status, true), typ)
}

// parts lists a part per call item emitted, for the tool-use finish.
func (s *streamEncoder) parts() []*parleyv1.Part {
	var out []*parleyv1.Part
	for _, it := range s.items {
		if it.Type == "function_call" || it.Type == "computer_call" || it.Type == "custom_tool_call" {
			out = append(out, translate.CallPart(it.CallID, it.Name, ""))
		}
	}
	return out
}

func (s *streamEncoder) closeMessage(w *sse.Writer) error {
	if s.msg < 0 {
		return nil
	}
	i := s.msg
	s.msg = -1
	s.items[i].Status = "completed"
	if incompleteWord(s.reason) != "" {
		s.items[i].Status = "incomplete"
	}
	return s.emit(w, s.itemEvent("response.output_item.done", i, &s.items[i]))
}

// addItem appends an item and announces it.
func (s *streamEncoder) addItem(w *sse.Writer, it Item) error {
	s.items = append(s.items, it)
	i := len(s.items) - 1
	added := it
	added.Status = "in_progress"
	switch it.Type {
	case "function_call":
		added.Arguments = new("")
	case "custom_tool_call":
		added.Unknown = maps.Clone(added.Unknown)
		added.Unknown["input"] = jsontext.Value(`""`)
	case "message":
		added.Content = &Content{Parts: []ContentPart{}}
	case "reasoning":
		added.Summary, added.EncryptedContent, added.Content = []summaryPart{}, nil, nil
	}
	s.evItem = added
	err := s.emit(w, s.itemEvent("response.output_item.added", i, &s.evItem))
	s.evItem = Item{}
	return err
}

// whole announces an item that is complete at once.
func (s *streamEncoder) whole(w *sse.Writer, it Item) error {
	if err := s.addItem(w, it); err != nil {
		return err
	}
	i := len(s.items) - 1
	return s.emit(w, s.itemEvent("response.output_item.done", i, &s.items[i]))
}

func (s *streamEncoder) partStart(w *sse.Writer, ps *parleyv1.PartStart) error {
	if s.open != nil {
		return fmt.Errorf("responses: part %d starts while part %d is open", ps.GetIndex(), s.openIdx)
	}
	p := clonePart(ps.GetPart())
	s.open, s.openIdx, s.sums = p, ps.GetIndex(), 0
	if sig := p.GetSignature(); sig != nil && p.GetReasoning() == nil && sig.GetOrigin().GetDialect() != thisDialect {
		if err := s.carry(w, sig); err != nil {
			return err
		}
	}
	if isMessagePart(p) {
		return s.messagePartStart(w, p)
	}
	if err := s.closeMessage(w); err != nil {
		return err
	}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_ToolCall:
		return s.callStart(w, p, k.ToolCall)
	case *parleyv1.Part_Reasoning:
		return s.reasoningStart(w, p, k.Reasoning)
	}
	return nil
}

var emptyList = []byte("[]")

// summaryDelta writes text of summary i, opening it (and closing the one
// before) when it is new.
func (s *streamEncoder) summaryDelta(w *sse.Writer, i int, text string) error {
	id := s.items[s.out].ID
	for s.sums <= i {
		if s.sums > 0 {
			if err := s.closeSummary(w, s.sums-1, s.open); err != nil {
				return err
			}
		}
		if err := s.emit(w, s.summaryPartEvent("response.reasoning_summary_part.added", id, s.sums, "")); err != nil {
			return err
		}
		s.sums++
	}
	if text == "" {
		return nil
	}
	e := s.summaryEvent("response.reasoning_summary_text.delta", id, i)
	s.evText = text
	e.Delta = &s.evText
	return s.emit(w, e)
}

// summaryEvent returns the encoder's event of type typ for summary part i
// of reasoning item id, the output item s.out.
func (s *streamEncoder) summaryEvent(typ, id string, i int) *event {
	e := s.next(typ)
	s.evIndex = int64(i)
	e.ItemID, e.OutputIndex, e.SummaryIndex = id, &s.out, &s.evIndex
	return e
}

// summaryPartEvent returns summaryEvent's event carrying summary part i,
// of the given text.
func (s *streamEncoder) summaryPartEvent(typ, id string, i int, text string) *event {
	e := s.summaryEvent(typ, id, i)
	s.evText = text
	s.evPart = ContentPart{Type: "summary_text", Text: &s.evText}
	e.Part = &s.evPart
	return e
}

func summaryText(p *parleyv1.Part, i int) string {
	r := p.GetReasoning()
	if len(r.GetSummary()) > i {
		return r.GetSummary()[i]
	}
	if i == 0 {
		return r.GetText()
	}
	return ""
}

func (s *streamEncoder) closeSummary(w *sse.Writer, i int, p *parleyv1.Part) error {
	s.join()
	id := s.items[s.out].ID
	text := summaryText(p, i)
	e := s.summaryEvent("response.reasoning_summary_text.done", id, i)
	s.evText = text
	e.Text = &s.evText
	if err := s.emit(w, e); err != nil {
		return err
	}
	return s.emit(w, s.summaryPartEvent("response.reasoning_summary_part.done", id, i, text))
}

func (s *streamEncoder) partDelta(w *sse.Writer, pd *parleyv1.PartDelta) error {
	p := s.open
	if p == nil || pd.GetIndex() != s.openIdx {
		return fmt.Errorf("responses: delta for part %d, which is not open", pd.GetIndex())
	}
	id := p.GetItemId()
	switch d := pd.GetDelta().(type) {
	case *parleyv1.PartDelta_Text:
		if p.GetText() == nil {
			return fmt.Errorf("responses: text delta for a part that is not text")
		}
		s.pending = append(s.pending, d.Text...)
		if d.Text == "" {
			return nil
		}
		if b, ok := s.textDelta(id, d.Text); ok {
			s.seq++
			return w.Event("response.output_text.delta", b)
		}
		e := s.partEvent("response.output_text.delta", id)
		e.Delta, e.Logprobs = &d.Text, emptyList
		return s.emit(w, e)
	case *parleyv1.PartDelta_Refusal:
		if p.GetRefusal() == nil {
			return fmt.Errorf("responses: refusal delta for a part that is not a refusal")
		}
		s.pending = append(s.pending, d.Refusal...)
		return s.emit(w, &event{Type: "response.refusal.delta", ItemID: id, OutputIndex: new(s.out), ContentIndex: new(s.content), Delta: new(d.Refusal)})
	case *parleyv1.PartDelta_Annotation:
		if p.GetText() == nil {
			return nil
		}
		p.GetText().Annotations = append(p.GetText().Annotations, d.Annotation)
		if a, ok := wireAnnotation(d.Annotation); ok {
			return s.emit(w, &event{Type: "response.output_text.annotation.added", ItemID: id, OutputIndex: new(s.out), ContentIndex: new(s.content), AnnotationIdx: new(int64(len(p.GetText().GetAnnotations()) - 1)), Annotation: &a})
		}
	case *parleyv1.PartDelta_Arguments:
		c := p.GetToolCall()
		if c == nil {
			return fmt.Errorf("responses: argument delta for a part that is not a call")
		}
		s.pending = append(s.pending, d.Arguments...)
		if _, _, custom := s.names.of(c); d.Arguments == "" || custom {
			return nil
		}
		e := s.next("response.function_call_arguments.delta")
		e.ItemID, e.OutputIndex, e.Delta = id, &s.out, &d.Arguments
		return s.emit(w, e)
	case *parleyv1.PartDelta_ReasoningText:
		r := p.GetReasoning()
		if r == nil {
			return fmt.Errorf("responses: reasoning delta for a part that is not reasoning")
		}
		s.pending = append(s.pending, d.ReasoningText...)
		if len(r.GetSummary()) > 0 {
			return nil // its summaries are what this dialect shows
		}
		return s.summaryDelta(w, 0, d.ReasoningText)
	case *parleyv1.PartDelta_ReasoningSummary:
		r := p.GetReasoning()
		if r == nil {
			return fmt.Errorf("responses: summary delta for a part that is not reasoning")
		}
		i := int(d.ReasoningSummary.GetSummaryIndex())
		for len(r.Summary) <= i {
			r.Summary = append(r.Summary, "")
		}
		r.Summary[i] += d.ReasoningSummary.GetText()
		if r.GetText() != "" || len(s.pending) > 0 {
			return nil
		}
		return s.summaryDelta(w, i, d.ReasoningSummary.GetText())
	case *parleyv1.PartDelta_Signature:
		p.Signature = d.Signature
	case *parleyv1.PartDelta_EncryptedContent:
		if r := p.GetReasoning(); r != nil {
			r.EncryptedContent = d.EncryptedContent
		}
	}
	return nil
}

func (s *streamEncoder) partStop(w *sse.Writer, st *parleyv1.PartStop) error {
	p := s.open
	if p == nil || st.GetIndex() != s.openIdx {
		return fmt.Errorf("responses: stop for part %d, which is not open", st.GetIndex())
	}
	s.join()
	s.open = nil
	if st.GetStatus() != parleyv1.ItemStatus_ITEM_STATUS_UNSPECIFIED {
		p.Status = st.GetStatus()
	}
	if isMessagePart(p) {
		return s.messagePartStop(w, p)
	}
	switch p.GetKind().(type) {
	case *parleyv1.Part_ToolCall:
		return s.callStop(w, p)
	case *parleyv1.Part_Reasoning:
		if s.sums > 0 {
			if err := s.closeSummary(w, s.sums-1, p); err != nil {
				return err
			}
		}
		s.items[s.out] = reasoningOut(p)
		return s.emit(w, s.itemEvent("response.output_item.done", int(s.out), &s.items[s.out]))
	case *parleyv1.Part_HostedToolCall:
		if it, ok := hostedOut(p); ok {
			return s.whole(w, it)
		}
	case *parleyv1.Part_HostedToolResult:
		if n := len(s.items); n > 0 && s.items[n-1].Type == "file_search_call" && s.items[n-1].ID == p.GetHostedToolResult().GetCallId() {
			s.items[n-1].Results = []byte(p.GetHostedToolResult().GetOutput())
		}
	case nil:
		if v, ok := markItem.Value(p.GetExtensions()); ok {
			var it Item
			if jsonx.Unmarshal(v, &it) == nil {
				return s.whole(w, it)
			}
		}
	}
	return nil
}

// Fail implements translate.StreamEncoder: once the response has begun,
// a failure is response.failed with the response's error; before that it
// is an error event, as the service sends them.
func (s *streamEncoder) Fail(w *sse.Writer, e *parleyv1.Error) error {
	started := s.phase.Started()
	s.phase = translate.PhaseEnded
	if !started {
		_, d := openai.ErrorObject(e)
		code := d.Code
		if string(code) == "null" || len(code) == 0 {
			code = jsonx.Quote(d.Type)
		}
		return s.emit(w, &event{Type: "error", Code: code, Message: d.Message, Param: d.Param})
	}
	resp := cloneResponse(s.resp)
	resp.Error = e
	var first *parleyv1.Candidate
	if cs := resp.GetCandidates(); len(cs) > 0 {
		first = cs[0]
	}
	r := snapshotOf(s.req, resp, parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED, first, &s.reqEcho, s.echoWritten)
	r.Output = append([]Item{}, s.items...)
	r.Usage = wireUsage(s.usage, s.resp.GetExtensions())
	return s.emit(w, &event{Type: "response.failed", Response: r})
}

// clonePart copies a part to accumulate into.
func clonePart(p *parleyv1.Part) *parleyv1.Part {
	if p == nil {
		return &parleyv1.Part{}
	}
	return proto.Clone(p).(*parleyv1.Part)
}

func cloneResponse(r *parleyv1.Response) *parleyv1.Response {
	if r == nil {
		return &parleyv1.Response{}
	}
	return proto.Clone(r).(*parleyv1.Response)
}

// join adds the text deltas of the open part gathered in pending to the
// part. A part's text grows by its deltas; adding each to the part's
// string would copy the whole text at every delta, quadratic in a long
// answer's length, so they are gathered and joined when the text is read.
func (s *streamEncoder) join() {
	if len(s.pending) == 0 || s.open == nil {
		return
	}
	add := string(s.pending)
	switch k := s.open.GetKind().(type) {
	case *parleyv1.Part_Text:
		k.Text.Text += add
	case *parleyv1.Part_Refusal:
		k.Refusal.Text += add
	case *parleyv1.Part_ToolCall:
		k.ToolCall.Arguments += add
	case *parleyv1.Part_Reasoning:
		k.Reasoning.Text += add
	}
	s.pending = s.pending[:0]
}
