package translate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
)

// replaySamples are the responses ReplayResponse is held to: the model's
// full sample and variants of it, and every golden canonical response.
func replaySamples(t *testing.T) map[string]*parleyv1.Response {
	t.Helper()
	out := map[string]*parleyv1.Response{"full": fullResponse()}

	ok := fullResponse()
	ok.Error = nil // ends with done, not an error
	out["full without error"] = ok

	bare := fullResponse()
	bare.Error, bare.Usage, bare.PromptFeedback, bare.Extensions = nil, nil, nil, nil
	bare.Status = parleyv1.ResponseStatus_RESPONSE_STATUS_UNSPECIFIED
	out["no usage, no status"] = bare

	signed := &parleyv1.Part{
		Kind:      &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "Let me think.", Summary: []string{"", "Thought twice."}, EncryptedContent: opaque("gAAAA")}},
		Signature: opaque("EqQBCkgIARABGAIiQ"),
		ItemId:    "rs_1",
		Status:    parleyv1.ItemStatus_ITEM_STATUS_INCOMPLETE,
	}
	call := func(id, args string) *parleyv1.Part {
		return &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: id, Name: "get_weather", Arguments: args}}, Signature: opaque("CiQB")}
	}
	out["reasoning and tool calls, three candidates"] = &parleyv1.Response{
		Id: "resp_2", Model: "m", Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED,
		Candidates: []*parleyv1.Candidate{
			{Index: 0, Parts: []*parleyv1.Part{
				signed,
				{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}, Signature: opaque("only-a-signature")},
				call("call_1", `{"city":"Paris"}`), call("call_2", ""),
			}, FinishReason: parleyv1.FinishReason_FINISH_REASON_TOOL_USE},
			{Index: 1}, // says nothing
			{Index: 2, Parts: []*parleyv1.Part{
				{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Annotations: []*parleyv1.Annotation{fullAnnotation()}}}},
				{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{}}},
				{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{}}, Signature: opaque("empty-text")},
			}, FinishReason: parleyv1.FinishReason_FINISH_REASON_REFUSAL},
		},
	}
	out["candidates listed out of order"] = &parleyv1.Response{
		Id: "gc_1",
		Candidates: []*parleyv1.Candidate{
			{Index: 1, Parts: []*parleyv1.Part{translate.TextPart("second")}, FinishReason: parleyv1.FinishReason_FINISH_REASON_STOP},
			{Index: 0, Parts: []*parleyv1.Part{translate.TextPart("first")}, FinishReason: parleyv1.FinishReason_FINISH_REASON_STOP},
		},
	}
	out["empty"] = &parleyv1.Response{}

	files, err := filepath.Glob("../testdata/*/*/response.canonical.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("golden canonical responses: %v, %d files", err, len(files))
	}
	for _, f := range append(files, "../testdata/canonical/response.json") {
		r := &parleyv1.Response{}
		golden.ReadProto(t, f, r)
		out[strings.TrimPrefix(f, "../testdata/")] = r
	}
	return out
}

// carried is r as a stream can carry it: what ReplayResponse's events
// accumulate to.
func carried(r *parleyv1.Response) *parleyv1.Response {
	r = proto.CloneOf(r)
	if r.GetError() != nil {
		r.Status, r.IncompleteDetails = parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED, nil
	}
	if r.GetStatus() == parleyv1.ResponseStatus_RESPONSE_STATUS_UNSPECIFIED {
		r.Status = parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED
	}
	cands := make([]*parleyv1.Candidate, len(r.GetCandidates()))
	for _, c := range r.GetCandidates() {
		c.TokenCount, c.GroundingAttributions, c.Extensions = nil, nil, nil
		cands[c.GetIndex()] = c // the samples number their candidates 0, 1, 2 ...
	}
	r.Candidates = cands
	return r
}

func TestReplayResponseAccumulatesToTheResponse(t *testing.T) {
	for name, r := range replaySamples(t) {
		t.Run(name, func(t *testing.T) {
			before := proto.CloneOf(r)
			evs := translate.ReplayResponse(r)
			var check translate.StreamChecker
			acc := translate.NewAccumulator()
			for i, ev := range evs {
				if err := check.Check(ev); err != nil {
					t.Fatalf("event %d (%v) breaks the stream order: %v", i, ev, err)
				}
				if err := acc.Add(ev); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
			}
			if !check.Ended() {
				t.Fatal("the stream does not end")
			}
			if d := cmp.Diff(carried(r), acc.Response(), protocmp.Transform()); d != "" {
				t.Errorf("accumulated response differs (-want +got):\n%s", d)
			}
			if !proto.Equal(r, before) {
				t.Error("ReplayResponse changed the response")
			}
		})
	}
}

// TestReplayResponseShape pins where content goes: deltas for what every
// encoder streams, the part start for the rest.
func TestReplayResponseShape(t *testing.T) {
	resp := replaySamples(t)["reasoning and tool calls, three candidates"]
	evs := translate.ReplayResponse(resp)
	var kinds []string
	for _, ev := range evs {
		switch e := ev.GetEvent().(type) {
		case *parleyv1.StreamEvent_Start:
			r := e.Start.GetResponse()
			if r.GetId() != "resp_2" || r.GetStatus() != parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS || len(r.GetCandidates()) != 0 {
				t.Errorf("start = %v", r)
			}
			kinds = append(kinds, "start")
		case *parleyv1.StreamEvent_PartStart:
			kinds = append(kinds, "part_start")
		case *parleyv1.StreamEvent_PartDelta:
			kinds = append(kinds, deltaName(e.PartDelta))
		case *parleyv1.StreamEvent_PartStop:
			kinds = append(kinds, "part_stop")
		case *parleyv1.StreamEvent_Finish:
			kinds = append(kinds, "finish")
		case *parleyv1.StreamEvent_Done:
			kinds = append(kinds, "done")
		default:
			kinds = append(kinds, "other")
		}
	}
	want := []string{
		"start",
		// signed reasoning: summaries, text, encrypted content, signature
		"part_start", "summary", "summary", "reasoning_text", "encrypted_content", "signature", "part_stop",
		"part_start", "signature", "part_stop",
		"part_start", "arguments", "part_stop",
		"part_start", "part_stop", // a call with no arguments
		// candidate 2
		"part_start", "annotation", "part_stop",
		"part_start", "part_stop",
		"part_start", "part_stop",
		"finish", "finish", "finish", "done",
	}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Fatalf("event kinds differ (-want +got):\n%s", d)
	}
	// Part 0: in progress at its start, its own status at its stop, no
	// content at its start.
	ps := evs[1].GetPartStart().GetPart()
	if ps.GetStatus() != parleyv1.ItemStatus_ITEM_STATUS_IN_PROGRESS || ps.GetReasoning().GetText() != "" || ps.GetSignature() != nil || ps.GetItemId() != "rs_1" {
		t.Errorf("reasoning part start = %v", ps)
	}
	if st := evs[7].GetPartStop(); st.GetStatus() != parleyv1.ItemStatus_ITEM_STATUS_INCOMPLETE {
		t.Errorf("reasoning part stop = %v", st)
	}
	// A tool call's signature is in its start, where encoders place it
	// before the call; its arguments are a delta.
	call := evs[11].GetPartStart().GetPart()
	if call.GetSignature().GetValue() != "CiQB" || call.GetToolCall().GetArguments() != "" || call.GetToolCall().GetId() != "call_1" {
		t.Errorf("tool call part start = %v", call)
	}
	// Redacted reasoning and parts no delta carries are whole at their start.
	whole := &parleyv1.Response{Candidates: []*parleyv1.Candidate{{Parts: []*parleyv1.Part{
		{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Redacted: true, EncryptedContent: opaque("data")}}},
		{Kind: &parleyv1.Part_HostedToolCall{HostedToolCall: &parleyv1.HostedToolCall{Id: "ws_1", Input: `{"query":"x"}`}}},
		{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{MimeType: "image/png", Source: &parleyv1.Media_Data{Data: []byte{1}}}}},
	}}}}
	n := 0
	for _, ev := range translate.ReplayResponse(whole) {
		if ev.GetPartDelta() != nil {
			t.Errorf("a delta for a part sent whole: %v", ev)
		}
		if p := ev.GetPartStart().GetPart(); p != nil {
			if !proto.Equal(p, whole.GetCandidates()[0].GetParts()[n]) {
				t.Errorf("part %d start = %v, want it whole", n, p)
			}
			n++
		}
	}
}

func deltaName(d *parleyv1.PartDelta) string {
	switch d.GetDelta().(type) {
	case *parleyv1.PartDelta_Text:
		return "text"
	case *parleyv1.PartDelta_Arguments:
		return "arguments"
	case *parleyv1.PartDelta_ReasoningText:
		return "reasoning_text"
	case *parleyv1.PartDelta_ReasoningSummary:
		return "summary"
	case *parleyv1.PartDelta_Signature:
		return "signature"
	case *parleyv1.PartDelta_EncryptedContent:
		return "encrypted_content"
	case *parleyv1.PartDelta_Refusal:
		return "refusal"
	case *parleyv1.PartDelta_Annotation:
		return "annotation"
	}
	return "none"
}
