package responses

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
	"github.com/parleyhq/parley/translate/sse"
)

// quickVariants are delta events as other servers write them, and events
// the quick reader leaves to the reflective one (after the first eight).
var quickVariants = []string{
	`{"delta":"Hi","content_index":0,"output_index":1,"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","logprobs":[],"obfuscation":"aB3"}`,
	`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"a \"q\" \\ \n \u00e9 \ud83c\udf0d"}`,
	`{"type":"response.refusal.delta","output_index":0,"content_index":1,"delta":"no","item_id":null,"logprobs":null}`,
	`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"a\":","item_id":"fc_1"}`,
	`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":3,"delta":"think","sequence_number":null}`,
	`{"type":"response.reasoning_text.delta","output_index":0,"content_index":0,"delta":""}`,
	`{"type":"response.output_text.delta","output_index":null,"content_index":0,"delta":null}`,
	`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"x","logprobs":[{"token":"x","logprob":-0.1}]}`,
	// Left to the reflective reader.
	`{"type":"response.output_text.done","output_index":0,"content_index":0,"text":"x"}`,
	`{"type":"response.output_text.delta","output_index":0,"delta":"x","extra":1}`,
	`{"type":"response.output_text.delta","type":"response.refusal.delta","delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":"0","delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":0,"delta":5}`,
	`{"type":"response.output_text.delta","item_id":7,"delta":"x"}`,
	`{"type":null,"delta":"x"}`,
	`{"\u0074ype":"response.output_text.delta","delta":"x"}`,
	`{"type":"response.output_text.delta","delta":"x"} {}`,
	"{\"type\":\"response.output_text.delta\",\"delta\":\"\xff\"}",
}

// checkQuick holds the quick reader to the reflective decoder on data
// (recorded.Same), but for the members a delta never needs.
func checkQuick(t *testing.T, data []byte) bool {
	t.Helper()
	var r deltaReader
	return recorded.Same(t, data, r.read, func(e *event) {
		e.ItemID, e.SequenceNumber, e.Logprobs, e.Obfuscation, e.Unknown = "", nil, nil, "", nil
	})
}

func TestQuickEventReadsAsTheReflectiveDecoder(t *testing.T) {
	deltas := 0
	for _, d := range recorded.DataLines(t, `"type":"response.`) {
		quick := checkQuick(t, d)
		isDelta := bytes.Contains(d, []byte(`.delta"`)) && !bytes.Contains(d, []byte(`"response.output_text.annotation`))
		if isDelta {
			deltas++
		}
		if isDelta != quick {
			t.Errorf("quick %v for the recorded event %s", quick, d)
		}
	}
	if deltas < 20 {
		t.Errorf("only %d recorded deltas", deltas)
	}
	for i, v := range quickVariants {
		if quick := checkQuick(t, []byte(v)); quick != (i < 8) {
			t.Errorf("quick %v for %s", quick, v)
		}
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

// BenchmarkDeltaEvent reads an output_text.delta as OpenAI writes it,
// with the quick reader and with the reflective decoder.
func BenchmarkDeltaEvent(b *testing.B) {
	data := []byte(`{"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_68af1c0e5b1c819fa2b8e1a4c0b7d2e3","output_index":0,"content_index":0,"delta":" Harmony","logprobs":[],"obfuscation":"k3Pq"}`)
	var r deltaReader
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
