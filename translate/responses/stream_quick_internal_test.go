package responses

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
	"github.com/parleyhq/parley/translate/sse"
)

// quickVariants are events as other servers write them, and events the
// quick reader leaves to the reflective one (after the first quickRead).
var quickVariants = []string{
	`{"delta":"Hi","content_index":0,"output_index":1,"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","logprobs":[],"obfuscation":"aB3"}`,
	`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"a \"q\" \\ \n \u00e9 \ud83c\udf0d"}`,
	`{"type":"response.refusal.delta","output_index":0,"content_index":1,"delta":"no","item_id":null,"logprobs":null}`,
	`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"a\":","item_id":"fc_1"}`,
	`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":3,"delta":"think","sequence_number":null}`,
	`{"type":"response.reasoning_text.delta","output_index":0,"content_index":0,"delta":""}`,
	`{"type":"response.output_text.delta","output_index":null,"content_index":0,"delta":null}`,
	`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"x","logprobs":[{"token":"x","logprob":-0.1}]}`,
	`{"type":"response.output_text.done","output_index":0,"content_index":0,"text":"x"}`,
	`{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","output":[],"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}}]}}`,
	`{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","model":"m","output":[],"usage":null,"zz":1}}`,
	`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"","status":"in_progress"}}`,
	`{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`,
	`{"type":"response.content_part.done","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hi","annotations":[]}}`,
	`{"type":"response.output_text.annotation.added","output_index":0,"content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","url":"https://example.com","start_index":0,"end_index":1}}`,
	`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}],"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}}`,
	`{"type":"error","code":"rate_limit_exceeded","message":"Slow down.","param":null,"sequence_number":3}`,
	`{"type":"error","code":null,"message":null,"param":"model"}`,
	`{"type":"response.failed","response":null}`,
	`{"type":"response.function_call_arguments.done","output_index":1,"arguments":"{}","item_id":"fc_1"}`,
	`{"type":"response.web_search_call.searching","output_index":0,"item_id":"ws_1","sequence_number":5}`,
	`{"type":"response.output_item.done","output_index":2,"item":{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}}`,
	`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[{"type":"url_citation","url":"u","start_index":0,"end_index":1}]}],"extra":[1]}}`,
	`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":null}}`,
	`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":2,"x":1},"output_tokens":7,"output_tokens_details":null,"total_tokens":null,"k":[1]},"output":[{"type":"message","content":[{"type":"output_text","text":"x"}]}],"error":null}}`,
	`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":null}}`,
	`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"Boom."}}}`,
	`{"type":"response.completed","response":{"status":"completed","status":"x"}}`,
	`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1700000000,"status":"in_progress","error":null,"incomplete_details":null,"instructions":"Be \"brief\".","max_output_tokens":null,"model":"gpt-5","output":[],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":"low","summary":null},"service_tier":"auto","store":false,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[ {"type":"function","name":"f","parameters":{"type":"object"}} ],"top_p":1,"truncation":"disabled","usage":null,"user":null,"metadata":{},"safety_identifier":null,"x":{"b":[1, 2]}}}`,
	`{"type":"response.created","response":{"id":null,"output":null,"created_at":null}}`,
	`{"type":"response.created","response":{"id":"resp_1","output":[{"type":"message","id":"m","content":[]}]}}`,
	// The type after the object, white space around it: read from a copy.
	`{"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]},"type":"response.created","sequence_number":0}`,
	`{"type":"response.completed","response" : {"status":"completed","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}} ,"sequence_number":9}`,
	`{"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]},"output_index":0,"type":"response.output_item.added"}`,
	`{"type":"response.output_item.done","output_index":0,"item": {"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{}","status":"completed"} }`,
	// Left to the reflective reader.
	`{"type":"response.output_text.delta","output_index":0,"delta":"x","extra":1}`,
	`{"type":"response.output_text.delta","type":"response.refusal.delta","delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":"0","delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":0,"delta":5}`,
	`{"type":"response.output_text.delta","item_id":7,"delta":"x"}`,
	`{"type":null,"delta":"x"}`,
	`{"\u0074ype":"response.output_text.delta","delta":"x"}`,
	`{"type":"response.output_text.delta","delta":"x"} {}`,
	"{\"type\":\"response.output_text.delta\",\"delta\":\"\xff\"}",
	`{"type":"response.created","response":5}`,
	`{"type":"response.output_item.added","item":[]}`,
	`{"type":"response.mcp_call.in_progress","output_index":0,"item_id":"mcp_1"}`,
	`{"type":"response.output_text.done","text":5}`,
}

// quickRead is how many of quickVariants the quick reader reads.
const quickRead = 35

// checkQuick holds the quick reader, with the objects its event's type
// needs opened, to the reflective decoder on data (recorded.Same), for
// what the stream decoder reads of an event (decoderView). An event whose
// objects the reflective decoder refuses the quick reader may read: the
// stream decoder reads no further than it needs.
func checkQuick(t *testing.T, data []byte) bool {
	t.Helper()
	var r eventReader
	if w, ok := r.read(data); ok {
		var want event
		if jsonx.Unmarshal(data, &want) != nil {
			_ = r.open(w)
			return true
		}
	}
	return recorded.Same(t, data, func(data []byte) (*event, bool) {
		w, ok := r.read(data)
		if !ok {
			return w, false
		}
		if err := r.open(w); err != nil {
			t.Fatalf("%s: the reflective decoder reads what opening its objects refuses: %v", data, err)
		}
		return w, true
	}, decoderView)
}

// decoderView keeps of e what the stream decoder reads: not the members
// it never reads, and of the objects only those its type needs, as
// eventReader.open reads them.
func decoderView(e *event) {
	e.ItemID, e.SequenceNumber, e.Logprobs, e.Obfuscation, e.Unknown = "", nil, nil, "", nil
	e.Text, e.Arguments, e.Input, e.Refusal, e.AnnotationIdx = nil, nil, nil, nil, nil
	switch e.Type {
	case "response.created":
	case "response.completed", "response.incomplete", "response.failed":
		if r := e.Response; r != nil {
			e.Response = &Response{Status: r.Status, Error: r.Error, IncompleteDetails: r.IncompleteDetails, Usage: r.Usage}
			// The unknown members of a usage are not kept from a stream.
			if u := r.Usage; u != nil {
				c := *u
				c.Unknown = nil
				if d := c.InputTokensDetails; d != nil {
					c.InputTokensDetails = &inputDetails{CachedTokens: d.CachedTokens}
				}
				if d := c.OutputTokensDetails; d != nil {
					c.OutputTokensDetails = &outputDetails{ReasoningTokens: d.ReasoningTokens}
				}
				e.Response.Usage = &c
			}
		}
	default:
		e.Response = nil
	}
	switch e.Type {
	case "response.output_item.added", "response.output_item.done":
		if it := e.Item; it != nil && (it.Type == "message" || it.Type == "function_call" || it.Type == "reasoning") {
			e.Item = &Item{Type: it.Type, ID: it.ID, Status: it.Status, Role: it.Role, CallID: it.CallID, Name: it.Name,
				Arguments: it.Arguments, Namespace: it.Namespace, EncryptedContent: it.EncryptedContent}
		}
	default:
		e.Item = nil
	}
	if e.Type != "response.content_part.added" {
		e.Part = nil
	}
	if e.Type != "response.output_text.annotation.added" {
		e.Annotation = nil
	}
}

func TestQuickEventReadsAsTheReflectiveDecoder(t *testing.T) {
	quick, events := 0, 0
	for _, d := range recorded.DataLines(t, `"type":"response.`) {
		events++
		if checkQuick(t, d) {
			quick++
		} else if bytes.Contains(d, []byte(`.delta"`)) {
			t.Errorf("a recorded delta left to the reflective decoder: %s", d)
		}
	}
	if quick < events*9/10 {
		t.Errorf("%d of %d recorded events read the quick way", quick, events)
	}
	t.Logf("%d of %d recorded events read the quick way", quick, events)
	for i, v := range quickVariants {
		if quick := checkQuick(t, []byte(v)); quick != (i < quickRead) {
			t.Errorf("quick %v for %s", quick, v)
		}
	}
}

// TestStreamEdgesReadByHand: the responses that start and end the
// recorded streams are read by hand, not off the stream's stack, but
// for an end with an error or incomplete details.
func TestStreamEdgesReadByHand(t *testing.T) {
	edges := 0
	for _, d := range recorded.DataLines(t, `"type":"response.`) {
		var r eventReader
		w, ok := r.read(d)
		if !ok || r.response == nil {
			continue
		}
		switch w.Type {
		case "response.created":
			edges++
			if _, ok := r.start(); !ok {
				t.Errorf("a recorded start read whole: %s", d)
			}
		case "response.completed", "response.incomplete", "response.failed":
			edges++
			deep := bytes.Contains(d, []byte(`"error":{`)) || bytes.Contains(d, []byte(`"incomplete_details":{`))
			if _, ok := r.end(); ok == deep {
				t.Errorf("a recorded end read by hand %v: %s", ok, d)
			}
		}
	}
	if edges < 10 {
		t.Errorf("%d recorded starts and ends", edges)
	}
}

func FuzzQuickEvent(f *testing.F) {
	for _, d := range recorded.DataLines(f, `"type":"response.`) {
		f.Add(d)
	}
	for _, v := range quickVariants {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkQuick(t, data) })
}

// TestObjectsReadWhereTheyCome: the response of a start or an end, and
// the item of an item added or done, are read where they come in the
// event when its type came first, as services write it, and kept as they
// came for what opens them whole; after the type, they are read from
// their copy, as they are when read in place declines.
func TestObjectsReadWhereTheyCome(t *testing.T) {
	for _, c := range []struct {
		data, object string
		here         bool
	}{
		{`{"type":"response.created","response": {"id":"resp_1","status":"in_progress","output":[]} ,"sequence_number":0}`, `{"id":"resp_1","status":"in_progress","output":[]}`, true},
		{`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}}`, `{"status":"completed","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`, true},
		{`{"type":"response.output_item.done","item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Hi"}]}}`, `{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Hi"}]}`, true},
		{`{"response":{"id":"resp_1","output":[]},"type":"response.created"}`, `{"id":"resp_1","output":[]}`, false},
		{`{"type":"response.created","response":{"id":"resp_1","output":[{"type":"message","id":"m","content":[]}]}}`, `{"id":"resp_1","output":[{"type":"message","id":"m","content":[]}]}`, false},
		{`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"Boom."}}}`, `{"status":"failed","error":{"code":"server_error","message":"Boom."}}`, false},
		{`{"type":"response.output_item.done","item":{"type":"web_search_call","id":"ws_1","status":"completed"}}`, `{"type":"web_search_call","id":"ws_1","status":"completed"}`, true},
		{`{"type":"response.in_progress","response":{"id":"resp_1","output":[]}}`, `{"id":"resp_1","output":[]}`, false},
	} {
		var r eventReader
		w, ok := r.read([]byte(c.data))
		if !ok {
			t.Fatalf("%s: not read", c.data)
		}
		kept := r.response
		if w.Type == "response.output_item.done" {
			kept = r.item
		}
		if string(kept) != c.object {
			t.Errorf("%s: kept %s, want %s", c.data, kept, c.object)
		}
		if here := r.started != nil || r.ended != nil || r.itemRead; here != c.here {
			t.Errorf("%s: read where it came %v, want %v", c.data, here, c.here)
		}
		if err := r.open(w); err != nil {
			t.Errorf("%s: %v", c.data, err)
		}
	}
}

// BenchmarkDeltaEvent reads an output_text.delta as OpenAI writes it,
// with the quick reader and with the reflective decoder.
func BenchmarkDeltaEvent(b *testing.B) {
	data := []byte(`{"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_68af1c0e5b1c819fa2b8e1a4c0b7d2e3","output_index":0,"content_index":0,"delta":" Harmony","logprobs":[],"obfuscation":"k3Pq"}`)
	var r eventReader
	recorded.Bench(b,
		func() bool { _, ok := r.read(data); return ok },
		func() error { var w event; return jsonx.Unmarshal(data, &w) })
}

// TestTextDeltaIsTheMarshalledEvent: the output_text.delta events
// textDelta writes without reflection are, byte for byte, the ones emit
// writes through jsonx.Marshal, whatever the text and the item id.
func TestTextDeltaIsTheMarshalledEvent(t *testing.T) {
	texts := []string{"", "Hello", "a \"q\" \\ \n\t", "<script>&amp;</script>", "\u0000\u001f\u2028", "héllo 世界 🌍"}
	for _, id := range []string{"msg_1", "", `id"q`} {
		for _, text := range texts {
			s := &streamEncoder{seq: 41, out: 2, content: 1}
			got, ok := s.textDelta(id, text)
			if !ok {
				t.Fatalf("no quick delta for %q", text)
			}
			e := event{Type: "response.output_text.delta", SequenceNumber: new(int64(41)), ItemID: id, OutputIndex: new(int64(2)), ContentIndex: new(int64(1)), Delta: new(text), Logprobs: emptyList}
			want, err := jsonx.Marshal(&e)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		}
	}
	if _, ok := (&streamEncoder{}).textDelta("msg_1", "bad \xff"); ok {
		t.Error("a delta of invalid UTF-8 was written the quick way")
	}
}

// TestSnapshotEventsAreTheMarshalledEvents: emitSnapshot writes the
// events emit writes for the same snapshot, numbered the same.
func TestSnapshotEventsAreTheMarshalledEvents(t *testing.T) {
	r := &Response{ID: "resp_1", Object: "response", Status: "in_progress", Model: "m \"q\" \u00e9", Output: []Item{},
		Instructions: jsontext.Value(`"Be brief."`), Tools: jsontext.Value(`[{"type":"function","name":"f","parameters":{"type":"object"}}]`),
		Unknown: jsonx.Unknown{"b": jsontext.Value(`1`), "a": jsontext.Value(`{"x":[1,2]}`)}}
	types := []string{"response.created", "response.in_progress", "response.completed"}
	var quick, marshalled bytes.Buffer
	q := &streamEncoder{seq: 7}
	if err := q.emitSnapshot(sse.NewWriter(&quick), r, types...); err != nil {
		t.Fatal(err)
	}
	m := &streamEncoder{seq: 7}
	w := sse.NewWriter(&marshalled)
	for _, typ := range types {
		if err := m.emit(w, &event{Type: typ, Response: r}); err != nil {
			t.Fatal(err)
		}
	}
	if quick.String() != marshalled.String() || q.seq != m.seq {
		t.Errorf("quick (next %d):\n%s\nmarshalled (next %d):\n%s", q.seq, quick.String(), m.seq, marshalled.String())
	}
}
