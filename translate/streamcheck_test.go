package translate_test

import (
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

func TestStreamChecker(t *testing.T) {
	start := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{}}}
	text := func(i int32) *parleyv1.StreamEvent {
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Index: i,
			Part: &parleyv1.Part{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{}}}}}}
	}
	reasoning := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{
		Part: &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}}}}}
	delta := func(i int32) *parleyv1.StreamEvent {
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: i, Delta: &parleyv1.PartDelta_Text{Text: "x"}}}}
	}
	summary := func(i int32) *parleyv1.StreamEvent {
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{
			Delta: &parleyv1.PartDelta_ReasoningSummary{ReasoningSummary: &parleyv1.ReasoningSummaryDelta{SummaryIndex: i, Text: "s"}}}}}
	}
	stop := func(i int32) *parleyv1.StreamEvent {
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{Index: i}}}
	}
	finish := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{}}}
	done := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}}
	failed := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Error{Error: &parleyv1.Error{}}}
	keepAlive := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_KeepAlive{KeepAlive: &parleyv1.KeepAlive{}}}

	for _, tc := range []struct {
		name   string
		events []*parleyv1.StreamEvent
		want   string // "" when the stream is well formed
	}{
		{"whole", []*parleyv1.StreamEvent{keepAlive, start, text(0), delta(0), stop(0), text(1), stop(1), finish, done}, ""},
		{"error first", []*parleyv1.StreamEvent{failed}, ""},
		{"summaries in order", []*parleyv1.StreamEvent{start, reasoning, summary(0), summary(0), summary(1), stop(0), done}, ""},
		{"before the start", []*parleyv1.StreamEvent{text(0)}, "before the start"},
		{"second start", []*parleyv1.StreamEvent{start, start}, "second start"},
		{"index skipped", []*parleyv1.StreamEvent{start, text(1)}, "out of order"},
		{"two open", []*parleyv1.StreamEvent{start, text(0), text(1)}, "while part 0 is open"},
		{"delta to a closed part", []*parleyv1.StreamEvent{start, text(0), stop(0), delta(0)}, "open part is -1"},
		{"delta of another kind", []*parleyv1.StreamEvent{start, reasoning, delta(0)}, "takes no such delta"},
		{"summary skipped", []*parleyv1.StreamEvent{start, reasoning, summary(1)}, "summary index 1 out of order"},
		{"finish with a part open", []*parleyv1.StreamEvent{start, text(0), finish}, "while part 0 is open"},
		{"part after finish", []*parleyv1.StreamEvent{start, finish, text(0)}, "after its finish"},
		{"done with a part open", []*parleyv1.StreamEvent{start, text(0), done}, "done while part 0"},
		{"after the end", []*parleyv1.StreamEvent{start, done, delta(0)}, "after the end"},
		{"after an error", []*parleyv1.StreamEvent{start, failed, done}, "after the end"},
	} {
		var c translate.StreamChecker
		var err error
		for _, ev := range tc.events {
			if err = c.Check(ev); err != nil {
				break
			}
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
