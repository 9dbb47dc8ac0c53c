package generatecontent

import (
	"bytes"
	"io"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
	"github.com/parleyhq/parley/translate/sse"
)

// replyVariants are replies the recordings do not hold: strings to
// escape, members kept, calls, media and empty lists, and (after the
// first eleven) what appendReply leaves to Marshal.
var replyVariants = []string{
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"a <b> & \\ \n \u2028 \ud83c\udf0d","thought":true,"thoughtSignature":"Ep\"c"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"totalTokenCount":5,"zz":1},"modelVersion":"m","responseId":"r\"1"}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"get_weather","args":{ "city" : "Paris", "n":[1, 2.50, {"x":null}], "s":"\u00e9\ud83c\udf0d" }},"thoughtSignature":"sig"}]},"index":0}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}},{"functionCall":{"name":"g","args":{},"willContinue":false,"extra":"x"}}]},"index":1}]}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo=","displayName":"a"}},{"fileData":{"fileUri":"gs://b/c"}},{"fileData":{"mimeType":"application/pdf","fileUri":"https://x/y.pdf"}}]},"index":0}]}`,
	`{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"MAX_TOKENS","finishMessage":"Too \"long\".","tokenCount":7,"avgLogprobs":-0.5,"index":0,"b":{"z":1,"a":2},"a":[]}]}`,
	`{"candidates":[{"content":{"role":"model"},"index":0}],"candidatesz":1}`,
	`{"candidates":[],"usageMetadata":{}}`,
	`{"candidates":[{"finishReason":"STOP","index":0},{"content":{"role":"model","parts":[{"text":""}],"k":true},"index":1}],"modelVersion":"gemini-3-flash"}`,
	`{"usageMetadata":{"promptTokenCount":1,"promptTokensDetails":[{"modality":"TEXT","tokenCount":1}]},"responseId":"r"}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"x","unknownPart":{"k":[1]}}]},"avgLogprobs":0.125,"index":0}]}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1\n"}},{"codeExecutionResult":{"outcome":"OUTCOME_FAILED"}}]},"index":0}]}`,
	// Left to Marshal.
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"safetyRatings":[{"category":"HARM_CATEGORY_HATE_SPEECH","probability":"NEGLIGIBLE"}],"index":0}]}`,
	`{"promptFeedback":{"blockReason":"SAFETY"}}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":"$.a","stringValue":"x"}],"willContinue":true}}]},"index":0}]}`,
	`{"error":{"code":503,"message":"Overloaded.","status":"UNAVAILABLE"}}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"citationMetadata":{"citationSources":[{"uri":"https://x"}]},"index":0}]}`,
}

// TestRepliesAreTheMarshalledReplies: every recorded reply and chunk of
// the dialect, and the variants, written without reflection are the
// bytes jsonx.Marshal writes.
func TestRepliesAreTheMarshalledReplies(t *testing.T) {
	const modelled = 11
	data := recorded.Variants(replyVariants)
	data = append(data, recorded.DataLines(t, `"candidates":`)...)
	data = append(data, recorded.Files(t, 15, "generate_content/*/response*.json", "cross_table/*/generate_content/response.json")...)
	var replies []*Response
	for _, d := range data {
		r := new(Response)
		if err := jsonx.Unmarshal(d, r); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		replies = append(replies, r)
	}
	wrote := recorded.Encoded(t, replies, appendReply)
	first, rest := recorded.Count(wrote, modelled)
	if first != modelled {
		t.Errorf("%d of the first %d variants written without reflection", first, modelled)
	}
	for i := modelled; i < len(replyVariants); i++ {
		if wrote[i] {
			t.Errorf("variant %d written without reflection: %s", i, replyVariants[i])
		}
	}
	recordings := len(replies) - len(replyVariants)
	if rest < recordings/2 {
		t.Errorf("%d of %d recorded replies written without reflection", rest, recordings)
	}
	t.Logf("%d of %d recorded replies written without reflection", rest, recordings)
}

// TestStreamsAreTheMarshalledStreams: every recorded canonical stream,
// encoded for a client of this dialect, is the same with the replies
// written without reflection as with every reply marshalled.
func TestStreamsAreTheMarshalledStreams(t *testing.T) {
	encode := func(evs []*parleyv1.StreamEvent) string {
		var buf bytes.Buffer
		w := sse.NewWriter(&buf)
		enc := Client{}.NewStreamEncoder(&parleyv1.Request{Model: "m"})
		for _, ev := range evs {
			if err := enc.Encode(w, ev); err != nil {
				buf.WriteString("error: " + err.Error())
				break
			}
		}
		return buf.String()
	}
	for _, s := range recorded.Streams(t, 20) {
		quick := encode(s.Events)
		quickReplies = false
		marshalled := encode(s.Events)
		quickReplies = true
		if quick != marshalled {
			t.Errorf("%s:\nquick:\n%s\nmarshalled:\n%s", s.Path, quick, marshalled)
		}
	}
}

// FuzzReplyWrite: a reply written without reflection is the bytes
// jsonx.Marshal writes.
func FuzzReplyWrite(f *testing.F) {
	for _, v := range append(recorded.Variants(replyVariants), recorded.DataLines(f, `"candidates":`)...) {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Response
		if jsonx.Unmarshal(data, &r) != nil {
			return
		}
		recorded.Encoded(t, []*Response{&r}, appendReply)
	})
}

// TestTextDeltaAllocatesNothing: a text or thought delta is written as a
// chunk without allocating, once the encoder's buffers have grown: the
// part points to the delta's own text.
func TestTextDeltaAllocatesNothing(t *testing.T) {
	for _, p := range []*parleyv1.Part{translate.TextParts("")[0], {Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}}} {
		enc := Client{}.NewStreamEncoder(&parleyv1.Request{Model: "m"})
		w := sse.NewWriter(io.Discard)
		for _, ev := range []*parleyv1.StreamEvent{
			{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{Id: "r", Model: "m"}}}},
			translate.PartStartEvent(0, 0, p),
		} {
			if err := enc.Encode(w, ev); err != nil {
				t.Fatal(err)
			}
		}
		delta := translate.TextDelta(0, 0, "Hello, world.")
		if p.GetReasoning() != nil {
			delta = translate.ReasoningTextDelta(0, 0, "Thinking.")
		}
		allocs := testing.AllocsPerRun(100, func() {
			if err := enc.Encode(w, delta); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations a delta of %v", allocs, p)
		}
		w.Release()
	}
}

// TestWaitingEncoderHoldsNoCandidateMetadata: a stream that has written
// its first text and waits holds one candidate and no metadata for it
// (a canonical candidate is a few hundred bytes, and a gateway holds
// thousands of waiting streams); the metadata made when it comes still
// goes out with the last chunk, candidates in the order they came.
func TestWaitingEncoderHoldsNoCandidateMetadata(t *testing.T) {
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	s := Client{}.NewStreamEncoder(&parleyv1.Request{}).(*streamEncoder)
	encode := func(evs ...*parleyv1.StreamEvent) {
		t.Helper()
		for _, ev := range evs {
			if err := s.Encode(w, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	encode(
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{Id: "r"}}}},
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Part: translate.TextPart("Hel")}}},
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Text{Text: "lo"}}}},
	)
	if len(s.cands) != 1 || s.cands[0].metadata != nil {
		t.Fatalf("a waiting stream holds %d candidates, the first with metadata %v", len(s.cands), s.cands[0].metadata)
	}
	encode(
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{CandidateIndex: 2, Part: translate.TextPart("Hi")}}},
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{CandidateIndex: 2}}},
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{}}},
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Metadata{Metadata: &parleyv1.MetadataUpdate{AvgLogprobs: new(-0.5)}}},
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{CandidateIndex: 2, Reason: parleyv1.FinishReason_FINISH_REASON_STOP}}},
		&parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}},
	)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n\n")
	last := strings.TrimPrefix(lines[len(lines)-1], "data: ")
	var r Response
	if err := jsonx.Unmarshal([]byte(last), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 2 || r.Candidates[0].Index == nil || *r.Candidates[0].Index != 0 || r.Candidates[0].AvgLogprobs == nil ||
		r.Candidates[1].Index == nil || *r.Candidates[1].Index != 2 || r.Candidates[1].FinishReason != "STOP" {
		t.Errorf("last chunk %s", last)
	}
}
