package responses

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
	"github.com/parleyhq/parley/translate/sse"
)

// writeVariants are events the recordings do not hold: strings to
// escape, members kept, annotations, and a failed response (left to
// Marshal, after the first eleven).
var writeVariants = []string{
	`{"type":"response.output_text.done","sequence_number":9,"item_id":"msg \"1\"","output_index":0,"content_index":0,"text":"a <b> & \\ \n \u2028 \ud83c\udf0d","logprobs":[]}`,
	`{"type":"response.output_item.added","sequence_number":2,"output_index":1,"item":{"type":"reasoning","id":"rs_1","status":"in_progress","summary":[],"x":{"b":1,"a":[1, 2]}}}`,
	`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[],"logprobs":[]}]}}`,
	`{"type":"response.output_item.done","output_index":0,"item":{"type":"file_search_call","id":"fs_1","status":"completed","queries":["a","b \"q\""],"results":null}}`,
	`{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":1,"part":{"type":"refusal","refusal":""}}`,
	`{"type":"response.completed","response":{"id":"resp_1","object":"response","created_at":1,"status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens","z":true},"model":"m","output":[],"previous_response_id":"resp_0","usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":1},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0,"k":"v"},"total_tokens":5,"extra":[]},"service_tier":"default","tools":[ {"type" : "function"} ],"zz":1,"aa":null}}`,
	`{"type":"error","code":"rate_limit_exceeded","message":"Slow down.","param":null}`,
	`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"x","logprobs":[],"obfuscation":"abc"}`,
	`{"type":"response.output_text.annotation.added","item_id":"msg_1","output_index":0,"content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","url":"https://example.com","start_index":0,"end_index":1}}`,
	`{"type":"response.content_part.done","part":{"type":"output_text","text":"x","annotations":[{"type":"file_citation","file_id":"f","index":0}]}}`,
	`{"type":"response.output_text.annotation.added","annotation":{"type":"url_citation","url":"u","title":"t \"q\"","start_index":0,"end_index":1,"z":1,"a":[1, 2]}}`,
	// Left to Marshal.
	`{"type":"response.failed","response":{"id":"resp_1","object":"response","created_at":1,"status":"failed","error":{"code":"server_error","message":"Boom."},"incomplete_details":null,"model":"m","output":[],"usage":null}}`,
}

// TestEventsAreTheMarshalledEvents: every recorded event of the dialect,
// and the variants, written without reflection are the bytes
// jsonx.Marshal writes, and nearly all of them are written so.
func TestEventsAreTheMarshalledEvents(t *testing.T) {
	var events []*event
	for _, data := range append(recorded.Variants(writeVariants), recorded.DataLines(t, `"type":"response.`)...) {
		e := new(event)
		if err := jsonx.Unmarshal(data, e); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		events = append(events, e)
	}
	wrote := recorded.Encoded(t, events, appendEvent)
	first, rest := recorded.Count(wrote, 11)
	if first != 11 {
		t.Errorf("%d of the first 11 variants written without reflection", first)
	}
	for i := 11; i < len(writeVariants); i++ {
		if wrote[i] {
			t.Errorf("variant %d written without reflection: %s", i, writeVariants[i])
		}
	}
	recordings := len(events) - len(writeVariants)
	if rest < recordings*9/10 {
		t.Errorf("%d of %d recorded events written without reflection", rest, recordings)
	}
	t.Logf("%d of %d recorded events written without reflection", rest, recordings)
}

// TestStreamsAreTheMarshalledStreams: every recorded canonical stream,
// encoded for a client of this dialect, is the same with the events
// written without reflection as with every event marshalled.
func TestStreamsAreTheMarshalledStreams(t *testing.T) {
	// The time and the ids made for the stream differ between runs.
	created, ids := regexp.MustCompile(`"created_at":\d+`), regexp.MustCompile(`"([a-z]+_)[0-9A-Za-z]{24}"`)
	encode := func(evs []*parleyv1.StreamEvent) string {
		var buf bytes.Buffer
		w := sse.NewWriter(&buf)
		enc := Client{}.NewStreamEncoder(&parleyv1.Request{Model: "m", Tools: []*parleyv1.Tool{{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: "f"}}}}})
		for _, ev := range evs {
			if err := enc.Encode(w, ev); err != nil {
				buf.WriteString("error: " + err.Error())
				break
			}
		}
		return ids.ReplaceAllString(created.ReplaceAllString(buf.String(), `"created_at":0`), `"${1}id"`)
	}
	for _, s := range recorded.Streams(t, 20) {
		quick := encode(s.Events)
		quickEvents = false
		marshalled := encode(s.Events)
		quickEvents = true
		if quick != marshalled {
			t.Errorf("%s:\nquick:\n%s\nmarshalled:\n%s", s.Path, quick, marshalled)
		}
	}
}

// FuzzEventWrite: an event written without reflection is the bytes
// jsonx.Marshal writes.
func FuzzEventWrite(f *testing.F) {
	for _, v := range append(recorded.Variants(writeVariants), recorded.DataLines(f, `"type":"response.`)...) {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e event
		if jsonx.Unmarshal(data, &e) != nil {
			return
		}
		recorded.Encoded(t, []*event{&e}, appendEvent)
	})
}

// TestRepliesAreTheMarshalledReplies: a whole reply written without
// reflection (Client.EncodeResponse) is the bytes jsonx.Marshal writes:
// the recorded replies as they came, and the reply made from every
// recorded canonical response.
func TestRepliesAreTheMarshalledReplies(t *testing.T) {
	var replies []*Response
	for _, data := range recordedReplies(t) {
		w := new(Response)
		if err := jsonx.Unmarshal(data, w); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		replies = append(replies, w)
	}
	made := 0
	for _, resp := range recorded.Canonical(t, "response.canonical.json", func() *parleyv1.Response { return &parleyv1.Response{} }) {
		req := &parleyv1.Request{Model: "gpt-test", Instructions: []*parleyv1.Part{translate.TextPart("Be brief.")}}
		w := snapshot(req, resp, responseStatus(resp))
		w.Output = outputItems(resp.GetCandidates(), callNamesOf(req))
		w.Usage = wireUsage(resp.GetUsage(), resp.GetExtensions())
		replies = append(replies, w)
		made++
	}
	quick, _ := recorded.Count(recorded.Encoded(t, replies, appendResponse), len(replies))
	if quick < len(replies)*8/10 {
		t.Errorf("%d of %d replies written without reflection (%d made from canonical responses)", quick, len(replies), made)
	}
	t.Logf("%d of %d replies written without reflection", quick, len(replies))
}

// TestTextStreamAllocations bounds what encoding the recorded text
// stream allocates: the events of its common course (items and parts
// added and done) are made in the encoder (streamEncoder.next), not one
// by one with what they point to, which cost five allocations each.
func TestTextStreamAllocations(t *testing.T) {
	data, err := os.ReadFile("../../testdata/responses/stream_text/stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	var evs []*parleyv1.StreamEvent
	for ev, err := range translate.DecodeStream(thisDialect, bytes.NewReader(data), Upstream{}.NewStreamDecoder(translate.Target{Model: "m"}), translate.StreamLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	req := &parleyv1.Request{Model: "m"}
	w := sse.NewWriter(io.Discard)
	defer w.Release()
	allocs := testing.AllocsPerRun(20, func() {
		enc := Client{}.NewStreamEncoder(req)
		for _, ev := range evs {
			if err := enc.Encode(w, ev); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Logf("%d events, %v allocations", len(evs), allocs)
	// 103 when each was made where it was emitted.
	const most = 90
	if allocs > most {
		t.Errorf("%v allocations encoding %d events, want at most %d", allocs, len(evs), most)
	}
}

// TestReasoningDeltaAllocations: a reasoning delta, which a responses
// client is sent as a summary's text delta (as a thinking model's
// upstream streams it), is written from the encoder's own event: less
// than one allocation a delta (the text kept for the part's end grows
// now and then), where it took four (the event made for each, and a
// copy of its type in the SSE writer, 77e4b7f).
func TestReasoningDeltaAllocations(t *testing.T) {
	enc := Client{}.NewStreamEncoder(&parleyv1.Request{Model: "m"})
	w := sse.NewWriter(io.Discard)
	defer w.Release()
	p := &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}}
	for _, ev := range []*parleyv1.StreamEvent{
		{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{Id: "resp_1", Model: "m"}}}},
		translate.PartStartEvent(0, 0, p),
	} {
		if err := enc.Encode(w, ev); err != nil {
			t.Fatal(err)
		}
	}
	delta := translate.ReasoningTextDelta(0, 0, "Thinking it over.")
	allocs := testing.AllocsPerRun(200, func() {
		if err := enc.Encode(w, delta); err != nil {
			t.Fatal(err)
		}
	})
	if allocs >= 1 {
		t.Errorf("%v allocations a reasoning delta", allocs)
	}
}
