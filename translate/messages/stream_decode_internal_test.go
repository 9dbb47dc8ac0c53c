package messages

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
	"github.com/parleyhq/parley/translate/sse"
)

// quickVariants are events in awkward forms, for the quick forms to read
// as jsonx.Unmarshal reads them or to decline.
var quickVariants = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a \"q\" \\ \n \u00e9 \ud83c\udf0d <&>"}}`,
	`{"type":"content_block_delta","index":12,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}`,
	`{"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":""}}`,
	// Declined: the general way reads these.
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","extra":1}}`,
	`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"bad \x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} `,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"x"}}`,
	`{"type":"content_block_start","index":7,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"x"}}`,
	`{"type":"content_block_stop","index":00}`,
	`{"type":"content_block_stop","index":1,"x":2}`,
	`{"type":"message_stop","x":1}`,
	`{"type": "ping"}`,
	`{"type":"message_start","message":{"id":"msg_\u0031","type":"message","role":"assistant","model":"m","content":null,"stop_reason":"end_turn","stop_sequence":"\n\nH:","usage":null,"container":{"id":"c"},"x":[1, 2]}}`,
	`{"message":{"content":[],"usage":{"input_tokens":null,"cache_creation":null,"service_tier":null,"iterations":[]}},"type":"message_start"}`,
	`{"type":"message_start","message":{"usage":{"cache_creation":{"ephemeral_5m_input_tokens":1,"ephemeral_1h_input_tokens":null,"ephemeral_30d":3}}}}`,
	`{"type":"message_start","message":null}`,
	`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END","stop_details":{"type":"x"}},"usage":{"output_tokens":0}}`,
	`{"type":"message_delta","delta":null,"usage":null}`,
	// Declined: the general way reads these.
	`{"type":"message_start","message":{"content":[{"type":"text","text":"x"}]}}`,
	`{"type":"message_start","message":{"id":"a","id":"b"}}`,
	`{"type":"message_start","message":{"usage":{"input_tokens":1.5}}}`,
	`{"type":"message_start","message":{"usage":{"server_tool_use":{"web_search_requests":1}}}}`,
	`{"type":"message_start","message":{"id":1}}`,
	`{"type":"message_start","message":{},"extra":1}`,
	`{"type":"message_delta","delta":{"type":"x","stop_reason":"end_turn"}}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn"}} x`,
	`{"type":"message_other","delta":{}}`,
}

// TestQuickEventIsTheUnmarshalledEvent: every event the quick forms read
// (deltas, block starts and stops, message starts and ends, pings), in the
// recorded streams and in awkward forms, is the event jsonx.Unmarshal
// reads; what they decline, the general way reads. FuzzQuickEvent holds
// them to it on any input.
func TestQuickEventIsTheUnmarshalledEvent(t *testing.T) {
	datas := recorded.DataLines(t, `"type":"message_start"`)
	for _, s := range quickVariants {
		datas = append(datas, []byte(s))
	}
	quick, small, starts, messages := 0, 0, 0, 0
	var q quickEvent
	for _, data := range datas {
		fast, ok := checkQuick(t, &q, data)
		if !ok {
			continue
		}
		if fast.Delta == nil {
			small++
		}
		if fast.ContentBlock != nil {
			starts++
		}
		if fast.Type == "message_start" || fast.Type == "message_delta" {
			messages++
		}
		quick++
	}
	if quick < 20 || small < 10 || starts < 5 || messages < 20 {
		t.Errorf("the quick forms read only %d of %d events (%d starts, stops and pings; %d block starts; %d message starts and ends)", quick, len(datas), small, starts, messages)
	}
}

// checkQuick reads data with the quick forms and, if they read it, holds
// what they read to what jsonx.Unmarshal reads.
func checkQuick(t *testing.T, q *quickEvent, data []byte) (fast event, ok bool) {
	t.Helper()
	if !q.read(data, &fast) {
		return fast, false
	}
	var slow event
	if err := jsonx.Unmarshal(data, &slow); err != nil {
		t.Errorf("the quick forms read %s, which does not unmarshal: %v", data, err)
		return fast, true
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s:\nquick %+v\nslow  %+v", data, fast, slow)
	}
	return fast, true
}

func FuzzQuickEvent(f *testing.F) {
	for _, d := range recorded.DataLines(f, `"type":"message_start"`) {
		f.Add(d)
	}
	for _, v := range quickVariants {
		f.Add([]byte(v))
	}
	var q quickEvent
	f.Fuzz(func(t *testing.T, data []byte) { checkQuick(t, &q, data) })
}

// TestDeltaBytesIsTheMarshalledEvent: the delta events written without
// reflection are, byte for byte, the ones jsonx.Marshal writes; a delta
// that cannot be written so (a signature, a citation, text that is not
// UTF-8) is marshalled, and a large one's buffer is not kept.
func TestDeltaBytesIsTheMarshalledEvent(t *testing.T) {
	s := &streamEncoder{}
	texts := []string{"", "Hello", "a \"q\" \\ \n\t", "<script>&amp;</script>", "\u0000\u001f\u2028", "héllo 世界 🌍", "bad \xff utf-8", strings.Repeat("long ", 4000)}
	for _, wi := range []int{0, 7, 123} {
		s.openWire = wi
		for _, text := range texts {
			for _, d := range []wireDelta{
				{Type: "text_delta", Text: &text},
				{Type: "input_json_delta", PartialJSON: &text},
				{Type: "thinking_delta", Thinking: &text},
				{Type: "signature_delta", Signature: &text},
				{Type: "citations_delta", Citation: &citation{Type: "char_location", CitedText: text}},
			} {
				var quick, marshalled bytes.Buffer
				qerr := s.delta(sse.NewWriter(&quick), d)
				merr := s.write(sse.NewWriter(&marshalled), "content_block_delta", blockDeltaEvent{Type: "content_block_delta", Index: wi, Delta: d})
				if (qerr == nil) != (merr == nil) || quick.String() != marshalled.String() {
					t.Errorf("delta %+v:\n got %s (%v)\nwant %s (%v)", d, quick.String(), qerr, marshalled.String(), merr)
				}
				if cap(s.buf) > maxKeptBuf {
					t.Errorf("a buffer of %d bytes was kept", cap(s.buf))
				}
			}
		}
	}
}

// TestQuickEventsAreTheMarshalledEvents: the message_start and
// message_delta events quickStart and quickDelta write without reflection
// are, byte for byte, the ones jsonx.Marshal writes, whatever the strings
// and whichever counts are reported; and they leave to jsonx.Marshal what
// they do not write.
func TestQuickEventsAreTheMarshalledEvents(t *testing.T) {
	s := &streamEncoder{}
	n := func(v int64) *int64 { return &v }
	usages := []*usage{
		nil,
		{},
		{InputTokens: n(12), OutputTokens: n(1)},
		{InputTokens: n(58), OutputTokens: n(0), CacheCreationInputTokens: n(0), CacheReadInputTokens: n(3), CacheCreation: &cacheCreation{Ephemeral5m: n(0), Ephemeral1h: n(7)}, ServiceTier: "standard"},
		{OutputTokens: n(9), ServerToolUse: &serverToolUse{WebSearchRequests: n(2)}, OutputTokensDetails: &outputTokensDetails{ThinkingTokens: n(5)}, ServiceTier: "priority"},
		{CacheCreation: &cacheCreation{}, ServerToolUse: &serverToolUse{}, OutputTokensDetails: &outputTokensDetails{}},
		{InputTokens: n(12), OutputTokens: n(1), ServiceTier: "standard", Unknown: jsonx.Unknown{"inference_geo": []byte(`"not_available"`)}},
		{CacheCreation: &cacheCreation{Unknown: jsonx.Unknown{"x": []byte(`7`)}}, ServerToolUse: &serverToolUse{Unknown: jsonx.Unknown{"y": []byte(`null`)}},
			OutputTokensDetails: &outputTokensDetails{Unknown: jsonx.Unknown{"z": []byte(`true`)}}},
	}
	texts := []string{"", "msg_01QC4g3H", "a \"q\" \\ \n\t", "<m&m>", "\u0000\u001f\u2028", "héllo 世界 🌍"}
	for _, u := range usages {
		for _, text := range texts {
			for _, m := range []*Response{
				{ID: text, Type: "message", Role: "assistant", Model: "claude-sonnet-4-5", Content: []Block{}, Usage: u},
				{ID: "msg_1", Type: "message", Role: "assistant", Model: text, StopReason: &text, StopSequence: &text, Usage: u},
				{ID: "msg_2", Model: "m", Usage: u, Unknown: jsonx.Unknown{"container": []byte(`null`)}},
				{ID: "msg_3", Model: "m", Usage: u, Unknown: jsonx.Unknown{"y": []byte(`{ "a" : 1 }`), "x": []byte(`2`), "container": []byte(`null`)}},
			} {
				got, ok := s.quickStart(m)
				if !ok {
					t.Fatalf("no quick message_start for %+v", m)
				}
				want, err := jsonx.Marshal(messageStartEvent{Type: "message_start", Message: m})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("\n got %s\nwant %s", got, want)
				}
			}
			for _, seq := range []*string{nil, &text} {
				e := messageDeltaEvent{Type: "message_delta", Delta: messageDeltaDelta{StopReason: text, StopSequence: seq}, Usage: u}
				if seq != nil {
					e.Delta.Unknown = jsonx.Unknown{"stop_details": []byte(`"x"`), "a": []byte(`[1, 2]`)}
				}
				got, ok := s.quickDelta(&e)
				if !ok {
					t.Fatalf("no quick message_delta for %+v", e)
				}
				want, err := jsonx.Marshal(e)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("\n got %s\nwant %s", got, want)
				}
			}
		}
	}
	// Kept members jsonx.Marshal refuses.
	kept := jsonx.Unknown{"x": []byte(`{ "a" : 1 }`), "y": []byte(`02`)}
	for _, m := range []*Response{
		{Content: []Block{{Type: "text"}}},
		{Unknown: kept},
		{ID: "\xff"},
		{Usage: &usage{Unknown: kept}},
		{Usage: &usage{CacheCreation: &cacheCreation{Unknown: kept}}},
		{Usage: &usage{ServerToolUse: &serverToolUse{Unknown: kept}}},
		{Usage: &usage{OutputTokensDetails: &outputTokensDetails{Unknown: kept}}},
	} {
		if _, ok := s.quickStart(m); ok {
			t.Errorf("%+v was written the quick way", m)
		}
	}
	if _, ok := s.quickDelta(&messageDeltaEvent{Delta: messageDeltaDelta{Unknown: kept}}); ok {
		t.Error("a message_delta with a refused kept member was written the quick way")
	}
	for _, c := range []struct {
		b []byte
		v any
	}{{ping, struct {
		Type string `json:"type"`
	}{"ping"}}, {messageStop, struct {
		Type string `json:"type"`
	}{"message_stop"}}} {
		want, err := jsonx.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.b, want) {
			t.Errorf("got %s, want %s", c.b, want)
		}
	}
}

// BenchmarkMessageStart reads a message_start as the service writes it,
// with the quick reader and with the reflective decoder.
func BenchmarkMessageStart(b *testing.B) {
	data := []byte(`{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01QC4g3HwBThD4BaNtBckFDJ","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard","inference_geo":"not_available"}}}`)
	var q quickEvent
	recorded.Bench(b,
		func() bool { var w event; return q.read(data, &w) },
		func() error { var w event; return jsonx.Unmarshal(data, &w) })
}

// TestBlockEventsAreTheMarshalledEvents: the content_block_start and
// content_block_stop events written without reflection are the ones
// jsonx.Marshal writes; a block appendBlock refuses is marshalled.
func TestBlockEventsAreTheMarshalledEvents(t *testing.T) {
	yes := true
	blocks := []Block{
		{Type: "text", Text: ptr("")},
		{Type: "text", Text: ptr("a \"q\" \\ \n <&> \u2028 🌍")},
		{Type: "tool_use", ID: "toolu_1", Name: "get_weather", Input: jsontext.Value(`{}`)},
		{Type: "thinking", Thinking: ptr(""), Signature: ptr("")},
		{Type: "redacted_thinking", Data: "EmwKAhgB"},
		{Type: "server_tool_use", ID: "srvtoolu_1", Name: "web_search", Input: jsontext.Value(`{ "query" : "x" }`)},
		{Type: "web_search_tool_result", ToolUseID: "srvtoolu_1", Content: jsontext.Value(`[{"type":"web_search_result","url":"https://a.example","title":"A"}]`)},
		{Type: "tool_result", ToolUseID: "t", Content: jsontext.Value(`"x"`), IsError: &yes},
		{Type: "text", Text: ptr("x"), Unknown: jsonx.Unknown{"b": []byte(`1`), "a": []byte(`[ 2 ]`)}},
		{Type: "text", Text: ptr(strings.Repeat("long ", 4000))},
		// Marshalled.
		{Type: "text", Text: ptr("\xff")},
		{Type: "tool_use", Input: jsontext.Value(`{"a":01}`)},
	}
	for _, i := range []int{0, 3, 120} {
		for _, k := range blocks {
			var quick, marshalled bytes.Buffer
			s := &streamEncoder{}
			qerr := s.blockStart(sse.NewWriter(&quick), i, &k)
			merr := s.write(sse.NewWriter(&marshalled), "content_block_start", blockStartEvent{Type: "content_block_start", Index: i, ContentBlock: &k})
			if (qerr == nil) != (merr == nil) || quick.String() != marshalled.String() {
				t.Errorf("block %+v:\n got %s (%v)\nwant %s (%v)", k, quick.String(), qerr, marshalled.String(), merr)
			}
			if cap(s.buf) > maxKeptBuf {
				t.Errorf("a buffer of %d bytes was kept", cap(s.buf))
			}
			quick.Reset()
			marshalled.Reset()
			if err := s.blockStop(sse.NewWriter(&quick), i); err != nil {
				t.Fatal(err)
			}
			if err := s.write(sse.NewWriter(&marshalled), "content_block_stop", blockStopEvent{Type: "content_block_stop", Index: i}); err != nil {
				t.Fatal(err)
			}
			if quick.String() != marshalled.String() {
				t.Errorf("got %s, want %s", quick.String(), marshalled.String())
			}
		}
	}
}

// TestAStreamKeepsNoWalker: a message's start and end are read with a
// Walker taken from the pool that request bodies are read with too; the
// stream must not keep it once read, or a waiting stream holds whatever
// request that Walker reads next (TestWaitingStreamsHoldNoConversation
// in the server's tests saw one so).
func TestAStreamKeepsNoWalker(t *testing.T) {
	var q quickEvent
	var w event
	for _, e := range []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":9,"output_tokens":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
	} {
		if !q.read([]byte(e), &w) {
			t.Fatalf("not read the quick way: %s", e)
		}
		if q.r != nil {
			t.Errorf("the stream keeps the Walker that read %s", e)
		}
	}
}

// TestDeltaMustFitItsBlock: a delta extends only the blocks of its kind
// (text and citations a text block, JSON a tool use, thinking and a
// signature a thinking block); any other pairing is the upstream's
// protocol error, named by both types, and an unknown delta type is one
// too.
func TestDeltaMustFitItsBlock(t *testing.T) {
	blocks := map[string]string{
		"text":            `{"type":"text","text":""}`,
		"tool_use":        `{"type":"tool_use","id":"toolu_1","name":"f","input":{}}`,
		"server_tool_use": `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}`,
		"thinking":        `{"type":"thinking","thinking":"","signature":""}`,
	}
	deltas := map[string]string{
		"text_delta":       `{"type":"text_delta","text":"a"}`,
		"citations_delta":  `{"type":"citations_delta","citation":{"type":"char_location","cited_text":"c","document_index":0,"start_char_index":0,"end_char_index":1}}`,
		"input_json_delta": `{"type":"input_json_delta","partial_json":"{"}`,
		"thinking_delta":   `{"type":"thinking_delta","thinking":"t"}`,
		"signature_delta":  `{"type":"signature_delta","signature":"s"}`,
		"other_delta":      `{"type":"other_delta"}`,
	}
	fits := map[string]string{"text_delta": "text", "citations_delta": "text", "input_json_delta": "tool_use server_tool_use", "thinking_delta": "thinking", "signature_delta": "thinking"}
	for kind, block := range blocks {
		for typ, delta := range deltas {
			d := Upstream{}.NewStreamDecoder(translate.Target{Model: "m"})
			var err error
			for _, e := range []sse.Event{
				{Type: "message_start", Data: []byte(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":0}}}`)},
				{Type: "content_block_start", Data: []byte(`{"type":"content_block_start","index":0,"content_block":` + block + `}`)},
				{Type: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":` + delta + `}`)},
			} {
				if _, err = d.Decode(nil, e); err != nil {
					break
				}
			}
			want := slices.Contains(strings.Fields(fits[typ]), kind)
			switch {
			case want && err != nil:
				t.Errorf("%s in a %s block: %v", typ, kind, err)
			case !want && err == nil:
				t.Errorf("%s in a %s block was taken", typ, kind)
			case !want && !strings.Contains(err.Error(), typ):
				t.Errorf("%s in a %s block: the error %q does not name the delta", typ, kind, err)
			}
		}
	}
}
