package translate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

func TestAccumulatorBuildsTheWholeResponse(t *testing.T) {
	events := fullStream()
	events = events[:len(events)-1] // the error event would fail a finished stream
	acc := translate.NewAccumulator()
	for i, ev := range events {
		if err := acc.Add(ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	if !acc.Ended() {
		t.Fatal("not ended after done")
	}
	r := acc.Response()
	if r.GetId() != "msg_01" || r.GetStatus() != parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED {
		t.Fatalf("response header = %v %v", r.GetId(), r.GetStatus())
	}
	if got := r.GetUsage(); got.GetInputTokens() != 10 || got.GetOutputTokens() != 12 {
		t.Fatalf("usage = %v, want input 10 from the start and output 12 from the update", got)
	}
	if len(r.GetCandidates()) != 2 {
		t.Fatalf("candidates = %d", len(r.GetCandidates()))
	}
	c := r.GetCandidates()[0]
	parts := c.GetParts()
	if len(parts) != 4 {
		t.Fatalf("parts = %d", len(parts))
	}
	rs := parts[0].GetReasoning()
	if rs.GetText() != "Hmm." || len(rs.GetSummary()) != 2 || rs.GetSummary()[1] != "Done" ||
		parts[0].GetSignature().GetValue() != "sig" || rs.GetEncryptedContent().GetValue() != "enc" ||
		parts[0].GetStatus() != parleyv1.ItemStatus_ITEM_STATUS_COMPLETED {
		t.Fatalf("reasoning part = %v", parts[0])
	}
	if parts[1].GetText().GetText() != "It rains." || len(parts[1].GetText().GetAnnotations()) != 1 {
		t.Fatalf("text part = %v", parts[1])
	}
	if parts[2].GetRefusal().GetText() != "No." {
		t.Fatalf("refusal part = %v", parts[2])
	}
	if tc := parts[3].GetToolCall(); tc.GetArguments() != `{"city":"Paris"}` || tc.GetId() != "toolu_1" {
		t.Fatalf("tool call part = %v", parts[3])
	}
	if c.GetFinishReason() != parleyv1.FinishReason_FINISH_REASON_TOOL_USE || c.GetGrounding() == nil || len(c.GetSafetyRatings()) != 1 {
		t.Fatalf("candidate 0 = finish %v, grounding %v, ratings %d", c.GetFinishReason(), c.GetGrounding(), len(c.GetSafetyRatings()))
	}
	c1 := r.GetCandidates()[1]
	if c1.GetParts()[0].GetText().GetText() != "It pours. END" || c1.GetStopSequence() != "END" {
		t.Fatalf("candidate 1 = %v", c1)
	}
	// The accumulator must not have written into the events it was given.
	if events[8].GetPartStart().GetPart().GetText().GetText() != "" {
		t.Fatal("the accumulator modified a part_start event")
	}
}

func TestAccumulatorRejectsOutOfOrderEvents(t *testing.T) {
	start := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{}}}
	pstart := func(ci, i int32, p *parleyv1.Part) *parleyv1.StreamEvent {
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{CandidateIndex: ci, Index: i, Part: p}}}
	}
	delta := func(i int32, d *parleyv1.PartDelta) *parleyv1.StreamEvent {
		d.Index = i
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: d}}
	}
	stop := func(i int32) *parleyv1.StreamEvent {
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{Index: i}}}
	}
	done := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}}
	finish := &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{}}}
	text := translate.TextPart("")
	call := &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: "a"}}}
	cases := map[string][]*parleyv1.StreamEvent{
		"part before start":             {pstart(0, 0, text)},
		"two starts":                    {start, start},
		"skipped part index":            {start, pstart(0, 1, text)},
		"second part while one is open": {start, pstart(0, 0, text), pstart(0, 1, text)},
		"delta for a closed part":       {start, pstart(0, 0, text), stop(0), delta(0, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Text{Text: "x"}})},
		"arguments on a text part":      {start, pstart(0, 0, text), delta(0, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Arguments{Arguments: "{"}})},
		"text on a tool call":           {start, pstart(0, 0, call), delta(0, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Text{Text: "x"}})},
		"stop of another part":          {start, pstart(0, 0, text), stop(1)},
		"done with an open part":        {start, pstart(0, 0, text), done},
		"finish with an open part":      {start, pstart(0, 0, text), finish},
		"part after finish":             {start, finish, pstart(0, 0, text)},
		"event after done":              {start, done, pstart(0, 0, text)},
		"part without kind":             {start, pstart(0, 0, &parleyv1.Part{})},
		"candidate out of range":        {start, pstart(5000, 0, text)},
		"summary index gap":             {start, pstart(0, 0, &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}}), delta(0, &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_ReasoningSummary{ReasoningSummary: &parleyv1.ReasoningSummaryDelta{SummaryIndex: 1}}})},
	}
	for name, events := range cases {
		t.Run(name, func(t *testing.T) {
			acc := translate.NewAccumulator()
			var err error
			for _, ev := range events {
				if err = acc.Add(ev); err != nil {
					break
				}
			}
			if err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestAccumulatorKeepsAnErrorThatEndsTheStream(t *testing.T) {
	acc := translate.NewAccumulator()
	for _, ev := range []*parleyv1.StreamEvent{
		{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Part: translate.TextPart("half an ans")}}},
		{Event: &parleyv1.StreamEvent_Error{Error: &parleyv1.Error{Code: parleyv1.Code_CODE_UNAVAILABLE, Message: "overloaded"}}},
	} {
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	r := acc.Response()
	if r.GetStatus() != parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED || r.GetError().GetMessage() != "overloaded" {
		t.Fatalf("response = %v", r)
	}
	if r.GetCandidates()[0].GetParts()[0].GetText().GetText() != "half an ans" {
		t.Fatal("the text before the error was lost")
	}
}

func TestMergeUsageReplacesOnlySetCounts(t *testing.T) {
	base := &parleyv1.Usage{InputTokens: proto.Int64(10), OutputTokens: proto.Int64(1), CacheReadTokens: proto.Int64(3)}
	next := &parleyv1.Usage{OutputTokens: proto.Int64(20), CacheReadTokens: proto.Int64(0)}
	got := translate.MergeUsage(base, next)
	if got.GetInputTokens() != 10 || got.GetOutputTokens() != 20 || got.CacheReadTokens == nil || got.GetCacheReadTokens() != 0 {
		t.Fatalf("merged = %v", got)
	}
	if base.GetOutputTokens() != 1 {
		t.Fatal("MergeUsage modified its input")
	}
	if translate.MergeUsage(nil, nil) != nil || translate.MergeUsage(base, nil) != base {
		t.Fatal("nil handling")
	}
}

// A candidate that says nothing before a later one does is there, empty:
// a content-generation upstream may list it as {}.
func TestAccumulatorKeepsSilentCandidates(t *testing.T) {
	acc := translate.NewAccumulator()
	for _, ev := range []*parleyv1.StreamEvent{
		{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{}}},
		{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{CandidateIndex: 1, Reason: parleyv1.FinishReason_FINISH_REASON_STOP}}},
		{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}},
	} {
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	cands := acc.Response().GetCandidates()
	if len(cands) != 2 || cands[0].GetIndex() != 0 || len(cands[0].GetParts()) != 0 || cands[1].GetFinishReason() != parleyv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("candidates = %v", cands)
	}
}

// TestMergeUsageIntoCoversEveryField sets each field of Usage in turn and
// requires the merge to carry it, so that a count added to the proto
// cannot be dropped from stream usage.
func TestMergeUsageIntoCoversEveryField(t *testing.T) {
	fields := (&parleyv1.Usage{}).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		next := &parleyv1.Usage{}
		m := next.ProtoReflect()
		if fd.IsList() {
			list := m.Mutable(fd).List()
			list.Append(protoreflect.ValueOfMessage((&parleyv1.ModalityTokens{Modality: parleyv1.Modality_MODALITY_TEXT, Tokens: 7}).ProtoReflect()))
		} else {
			m.Set(fd, protoreflect.ValueOfInt64(7))
		}
		dst := &parleyv1.Usage{InputTokens: proto.Int64(1)}
		translate.MergeUsageInto(dst, next)
		got := dst.ProtoReflect()
		if !got.Has(fd) {
			t.Errorf("%s is not merged", fd.Name())
			continue
		}
		if fd.Name() != "input_tokens" && !got.Has(fields.ByName("input_tokens")) {
			t.Errorf("merging %s dropped input_tokens", fd.Name())
		}
	}
}

// TestMergeUsageIntoAllocatesOnce: the counts dst lacks are made in one
// allocation, each its own: every count keeps its value through a merge
// that changes the others.
func TestMergeUsageIntoAllocatesOnce(t *testing.T) {
	fields := (&parleyv1.Usage{}).ProtoReflect().Descriptor().Fields()
	all := func(base int64) *parleyv1.Usage {
		u := &parleyv1.Usage{}
		for i := range fields.Len() {
			if fd := fields.Get(i); !fd.IsList() {
				u.ProtoReflect().Set(fd, protoreflect.ValueOfInt64(base+int64(i)))
			}
		}
		return u
	}
	next := all(100)
	if n := testing.AllocsPerRun(100, func() { translate.MergeUsageInto(&parleyv1.Usage{}, next) }); n != 1 {
		t.Errorf("merging every count into an empty usage: %v allocations, want 1", n)
	}
	dst := &parleyv1.Usage{}
	translate.MergeUsageInto(dst, next)
	translate.MergeUsageInto(dst, &parleyv1.Usage{OutputTokens: proto.Int64(-1)})
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsList() {
			continue
		}
		want := 100 + int64(i)
		if fd.Name() == "output_tokens" {
			want = -1
		}
		if got := dst.ProtoReflect().Get(fd).Int(); got != want {
			t.Errorf("%s = %d after the merges, want %d", fd.Name(), got, want)
		}
	}
}

func BenchmarkMergeUsageInto(b *testing.B) {
	next := &parleyv1.Usage{InputTokens: proto.Int64(9), OutputTokens: proto.Int64(29), TotalTokens: proto.Int64(294), ReasoningTokens: proto.Int64(256),
		InputDetails: []*parleyv1.ModalityTokens{{Modality: parleyv1.Modality_MODALITY_TEXT, Tokens: 9}}}
	dst := &parleyv1.Usage{}
	b.ReportAllocs()
	for b.Loop() {
		translate.MergeUsageInto(dst, next)
	}
}

// lineDecoder is a minimal StreamDecoder: each event's data is one text
// delta; an event of type "end" marks the proper end.
type lineDecoder struct {
	started, ended bool
}

func (d *lineDecoder) Decode(dst []*parleyv1.StreamEvent, ev sse.Event) ([]*parleyv1.StreamEvent, error) {
	if ev.Type == "end" {
		d.ended = true
		return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}}), nil
	}
	if ev.Type == "bad" {
		return dst, errors.New("bad event")
	}
	if !d.started {
		d.started = true
		dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{}}})
	}
	return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Text{Text: string(ev.Data)}}}}), nil
}

func (d *lineDecoder) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	if !d.ended {
		return dst, errors.New("no end event")
	}
	return dst, nil
}

func collect(seq func(func(*parleyv1.StreamEvent, error) bool)) (texts []string, err error) {
	for ev, e := range seq {
		if e != nil {
			return texts, e
		}
		if d := ev.GetPartDelta(); d != nil {
			texts = append(texts, d.GetText())
		}
	}
	return texts, nil
}

func TestDecodeStream(t *testing.T) {
	d := parleyv1.Dialect_DIALECT_MESSAGES
	t.Run("whole stream", func(t *testing.T) {
		texts, err := collect(translate.DecodeStream(d, strings.NewReader("data: a\n\ndata: b\n\nevent: end\ndata: {}\n\n"), &lineDecoder{}, translate.StreamLimits{}))
		if err != nil || strings.Join(texts, "") != "ab" {
			t.Fatalf("texts %v, error %v", texts, err)
		}
	})
	t.Run("cut mid-event is a retryable upstream error", func(t *testing.T) {
		texts, err := collect(translate.DecodeStream(d, strings.NewReader("data: a\n\ndata: b"), &lineDecoder{}, translate.StreamLimits{}))
		var up *translate.UpstreamError
		if !errors.As(err, &up) || up.Err.GetCode() != parleyv1.Code_CODE_UNAVAILABLE || !up.Err.GetRetry().GetRetryable() {
			t.Fatalf("error = %v", err)
		}
		if strings.Join(texts, "") != "a" {
			t.Fatalf("texts before the cut = %v", texts)
		}
	})
	t.Run("clean end without the end marker", func(t *testing.T) {
		_, err := collect(translate.DecodeStream(d, strings.NewReader("data: a\n\n"), &lineDecoder{}, translate.StreamLimits{}))
		if err == nil || !strings.Contains(err.Error(), "no end event") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("decoder errors end the stream", func(t *testing.T) {
		_, err := collect(translate.DecodeStream(d, strings.NewReader("data: a\n\nevent: bad\ndata: x\n\ndata: c\n\n"), &lineDecoder{}, translate.StreamLimits{}))
		if err == nil || !strings.Contains(err.Error(), "bad event") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("oversized frame is a bad gateway", func(t *testing.T) {
		_, err := collect(translate.DecodeStream(d, strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), &lineDecoder{}, translate.StreamLimits{MaxFrameBytes: 50}))
		var up *translate.UpstreamError
		if !errors.As(err, &up) || translate.HTTPStatusOf(up.Err) != http.StatusBadGateway {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("too many events", func(t *testing.T) {
		_, err := collect(translate.DecodeStream(d, strings.NewReader(strings.Repeat("data: a\n\n", 10)), &lineDecoder{}, translate.StreamLimits{MaxEvents: 5}))
		if !errors.Is(err, translate.ErrStreamTooLarge) {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("too many bytes", func(t *testing.T) {
		_, err := collect(translate.DecodeStream(d, strings.NewReader(strings.Repeat("data: a\n\n", 10)), &lineDecoder{}, translate.StreamLimits{MaxTotalBytes: 40}))
		if !errors.Is(err, translate.ErrStreamTooLarge) {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("a body exactly at the byte limit passes", func(t *testing.T) {
		body := "data: a\n\nevent: end\ndata: {}\n\n"
		_, err := collect(translate.DecodeStream(d, strings.NewReader(body), &lineDecoder{}, translate.StreamLimits{MaxTotalBytes: int64(len(body))}))
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the body's error passes through", func(t *testing.T) {
		body := io.MultiReader(strings.NewReader("data: a\n\n"), errReader{context.Canceled})
		_, err := collect(translate.DecodeStream(d, body, &lineDecoder{}, translate.StreamLimits{}))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("stopping the range stops the reading", func(t *testing.T) {
		body := &countingReader{r: strings.NewReader(strings.Repeat("data: a\n\n", 100000))}
		for _, err := range translate.DecodeStream(d, body, &lineDecoder{}, translate.StreamLimits{}) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if body.n > 64<<10 {
			t.Fatalf("read %d bytes after the consumer stopped", body.n)
		}
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// The pace marks the last event of what the upstream has sent so far: the
// events of a burst are yielded with More, the last of it without, and
// events that arrive later start a new burst.
func TestDecodeStreamPace(t *testing.T) {
	burst1 := "data: a\n\ndata: b\n\n: ping\n\ndata: c\n\n"
	burst2 := "data: d\n\nevent: end\ndata: {}\n\n"
	body := &burstReader{bursts: []string{burst1, burst2}}
	var pace translate.Pace
	var got []string
	for ev, err := range translate.DecodeStreamFrames(parleyv1.Dialect_DIALECT_MESSAGES, body, &lineDecoder{}, translate.StreamLimits{}, nil, &pace) {
		if err != nil {
			t.Fatal(err)
		}
		name := paced(ev, pace)
		got = append(got, name)
	}
	// Start, a, b and c came in one read; d and the end in the next.
	if want := "start+ a+ b+ c d+ done"; strings.Join(got, " ") != want {
		t.Errorf("events and pace: %s, want %s", strings.Join(got, " "), want)
	}
	// Relaying frames, nothing is read ahead (an event is yielded while
	// its frame is the last one handed over, so that the frame can be
	// relayed in order), but the pace still marks a frame already at hand:
	// a relayed burst is flushed once too.
	body = &burstReader{bursts: []string{burst1, burst2}}
	got = got[:0]
	frames := 0
	for ev, err := range translate.DecodeStreamFrames(parleyv1.Dialect_DIALECT_MESSAGES, body, &lineDecoder{}, translate.StreamLimits{}, func(sse.Event) { frames++ }, &pace) {
		if err != nil {
			t.Fatal(err)
		}
		name := paced(ev, pace)
		got = append(got, fmt.Sprintf("%s@%d", name, frames))
	}
	if want := "start+@1 a+@1 b+@2 c@3 d+@4 done@5"; strings.Join(got, " ") != want {
		t.Errorf("relayed events, pace and frames handed over: %s, want %s", strings.Join(got, " "), want)
	}
}

// A stream whose end is its body's (content generation's: its decoder
// ends it at EOF): when the body's end comes with the last bytes, as an
// HTTP body's does when the end arrived with them, the end is at hand
// with the last event, and the last burst runs on to it, relayed or
// rendered; when the end comes on a read of its own, the last event
// closes its burst.
func TestDecodeStreamPaceAtTheBodysEnd(t *testing.T) {
	for _, c := range []struct {
		eofWithLast, relayed bool
		want                 string
	}{
		{true, false, "start+ a+ b c+ done"},
		{false, false, "start+ a+ b c done"},
		{true, true, "start+@1 a+@1 b@2 c+@3 done@3"},
		{false, true, "start+@1 a+@1 b@2 c@3 done@3"},
	} {
		body := &burstReader{bursts: []string{"data: a\n\ndata: b\n\n", "data: c\n\n"}, eofWithLast: c.eofWithLast}
		var pace translate.Pace
		var got []string
		frames := 0
		var frame func(sse.Event)
		if c.relayed {
			frame = func(sse.Event) { frames++ }
		}
		for ev, err := range translate.DecodeStreamFrames(parleyv1.Dialect_DIALECT_GENERATE_CONTENT, body, &endAtEOF{}, translate.StreamLimits{}, frame, &pace) {
			if err != nil {
				t.Fatal(err)
			}
			name := paced(ev, pace)
			if c.relayed {
				name = fmt.Sprintf("%s@%d", name, frames)
			}
			got = append(got, name)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("EOF with the last bytes %v, relayed %v: %s, want %s", c.eofWithLast, c.relayed, strings.Join(got, " "), c.want)
		}
	}
}

// endAtEOF is a lineDecoder whose stream ends with its body.
type endAtEOF struct{ lineDecoder }

func (d *endAtEOF) End(dst []*parleyv1.StreamEvent) ([]*parleyv1.StreamEvent, error) {
	return append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}}), nil
}

// paced names a lineDecoder event, with "+" when the pace says more is
// at hand.
func paced(ev *parleyv1.StreamEvent, pace translate.Pace) string {
	name := "start"
	switch {
	case ev.GetPartDelta() != nil:
		name = ev.GetPartDelta().GetText()
	case ev.GetDone() != nil:
		name = "done"
	}
	if pace.More {
		name += "+"
	}
	return name
}

// burstReader hands out one burst per read; with eofWithLast, io.EOF
// comes with the last one.
type burstReader struct {
	bursts      []string
	eofWithLast bool
}

func (b *burstReader) Read(p []byte) (int, error) {
	if len(b.bursts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.bursts[0])
	if b.bursts[0] = b.bursts[0][n:]; b.bursts[0] == "" {
		b.bursts = b.bursts[1:]
	}
	if b.eofWithLast && len(b.bursts) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// TestDeltaEventsAreThePlainOnes: the deltas made in one allocation are
// the events built message by message, and each is its own.
func TestDeltaEventsAreThePlainOnes(t *testing.T) {
	plain := func(pd *parleyv1.PartDelta) *parleyv1.StreamEvent {
		pd.CandidateIndex, pd.Index = 2, 7
		return &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: pd}}
	}
	for _, c := range []struct{ got, want *parleyv1.StreamEvent }{
		{translate.TextDelta(2, 7, "héllo"), plain(&parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Text{Text: "héllo"}})},
		{translate.ArgumentsDelta(2, 7, `{"a":`), plain(&parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Arguments{Arguments: `{"a":`}})},
		{translate.ReasoningTextDelta(2, 7, "hmm"), plain(&parleyv1.PartDelta{Delta: &parleyv1.PartDelta_ReasoningText{ReasoningText: "hmm"}})},
	} {
		if !proto.Equal(c.got, c.want) {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
		b, err := proto.Marshal(c.got)
		if err != nil {
			t.Fatal(err)
		}
		if w, _ := proto.Marshal(c.want); !bytes.Equal(b, w) {
			t.Errorf("%v marshals as %x, want %x", c.got, b, w)
		}
	}
	a, b := translate.TextDelta(0, 0, "a"), translate.TextDelta(0, 0, "a")
	b.GetPartDelta().Index = 1
	if a.GetPartDelta().GetIndex() != 0 {
		t.Error("two deltas share a message")
	}
}

// TestEventConstructors: the events made in one allocation are the events
// made message by message, and each is one allocation.
func TestEventConstructors(t *testing.T) {
	part := &parleyv1.Part{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "x"}}}
	usage := &parleyv1.Usage{OutputTokens: proto.Int64(3)}
	finish := &parleyv1.Finish{CandidateIndex: 1, Reason: parleyv1.FinishReason_FINISH_REASON_STOP}
	for _, c := range []struct {
		name string
		make func() *parleyv1.StreamEvent
		want *parleyv1.StreamEvent
	}{
		{"start", func() *parleyv1.StreamEvent { return translate.PartStartEvent(1, 4, part) },
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{CandidateIndex: 1, Index: 4, Part: part}}}},
		{"stop", func() *parleyv1.StreamEvent { return translate.PartStopEvent(1, 4) },
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{CandidateIndex: 1, Index: 4}}}},
		{"usage", func() *parleyv1.StreamEvent { return translate.UsageEvent(usage) },
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Usage{Usage: usage}}},
		{"finish", func() *parleyv1.StreamEvent { return translate.FinishEvent(finish) },
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: finish}}},
		{"completed", translate.CompletedEvent,
			&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED}}}},
	} {
		if got := c.make(); !proto.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		var sink *parleyv1.StreamEvent
		if n := testing.AllocsPerRun(100, func() { sink = c.make() }); n != 1 {
			t.Errorf("%s: %v allocations, want 1", c.name, n)
		}
		_ = sink
	}
}

// TestWaitingStreamHoldsNoEvents: once a burst's events have been handed
// over, a stream waiting for its upstream's next bytes keeps none of
// them: the start (with the upstream's whole response object) and the
// first deltas are the client's to keep or let go of.
func TestWaitingStreamHoldsNoEvents(t *testing.T) {
	pr, pw := io.Pipe()
	defer func() { _ = pr.Close() }()
	seq := translate.DecodeStreamFrames(parleyv1.Dialect_DIALECT_MESSAGES, pr, &lineDecoder{}, translate.StreamLimits{}, nil, &translate.Pace{})
	handed := make(chan weak.Pointer[parleyv1.StreamEvent])
	texts := make(chan string, 4)
	go func() {
		defer close(handed)
		for ev, err := range seq {
			if err != nil {
				texts <- err.Error()
				return
			}
			if d := ev.GetPartDelta(); d != nil {
				texts <- d.GetText()
			}
			handed <- weak.Make(ev)
		}
	}()
	_, _ = io.WriteString(pw, "data: a\n\ndata: b\n\n")
	var burst []weak.Pointer[parleyv1.StreamEvent]
	for range 3 { // the start, a and b
		burst = append(burst, <-handed)
	}
	// The stream reads on, and waits: nothing more has come.
	for i, ev := range burst {
		for try := 0; ev.Value() != nil && try < 200; try++ {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		if ev.Value() != nil {
			t.Errorf("event %d of the first burst is held by the waiting stream", i)
		}
	}
	_, _ = io.WriteString(pw, "data: c\n\n")
	<-handed
	_ = pw.Close()
	for range handed {
	}
	if got := []string{<-texts, <-texts, <-texts}; strings.Join(got, " ") != "a b c" {
		t.Errorf("texts %q, want a b c", got)
	}
}
