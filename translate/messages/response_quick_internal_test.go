package messages

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/recorded"
)

// replyVariants are whole replies in awkward forms, for quickResponse to
// read as jsonx.Unmarshal reads them or to decline.
var replyVariants = []string{
	`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"a \"q\" \\ \n \u00e9 \ud83c\udf0d <&>"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`,
	`{"content":[{"type":"thinking","thinking":"hmm","signature":"EqQB"},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city": "Paris", "n":[1, 2.5e3, null, true]}}],"stop_reason":"tool_use"}`,
	`{"content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}, "caller":{"type":"direct"}},{"type":"text","text":null},{"type":"text"}]}`,
	`{"content":[{"type":"tool_use","id":null,"name":"f","input":null}],"container":null,"x":[1,{"y":2}]}`,
	`{"content":[{"text":"before the type","type":"text","extra":"kept"}]}`,
	`{"content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}]}`,
	`{"content":[{}],"usage":null}`,
	`{"content":null}`,
	` { "content" : [ ] , "type" : "message" } `,
	`{"type":"error","content":[]}`,
	`{"content":[{"type":"text","text":"x","citations":[{"type":"char_location","cited_text":"x"}]}]}`,
	`{"content":[{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}]}`,
	`{"content":[{"type":"redacted_thinking","data":"abc"}]}`,
	`{"content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}`,
	// Declined: the general way reads these.
	`{"content":[{"type":"text","text":"x","text":"y"}]}`,
	`{"content":[{"type":"text","text":1}]}`,
	`{"content":[{"type":"tool_use","input":{"a":1,"a":2}}]}`,
	`{"content":[{"type":"tool_use","input":{"a":}}]}`,
	`{"content":{"type":"text"}}`,
	`{"content":[null]}`,
	`{"content":[]} {}`,
	`{"usage":{"server_tool_use":{"web_search_requests":1}}}`,
}

// TestQuickResponseIsTheUnmarshalledResponse: every reply quickResponse
// reads (the recorded replies and awkward forms) is the one
// jsonx.Unmarshal reads; what it declines, the general way reads.
// FuzzQuickResponse holds it to that on any input.
func TestQuickResponseIsTheUnmarshalledResponse(t *testing.T) {
	replies := recordedReplies(t)
	recordedQuick, others := recorded.DecodedAll(t, replies, recorded.Variants(replyVariants), quickResponse)
	if quick := recordedQuick + others; recordedQuick < 5 || quick < 15 {
		t.Errorf("quickResponse read %d of %d replies, %d of them recorded", quick, len(replies)+len(replyVariants), recordedQuick)
	}
}

// recordedReplies are the messages replies under testdata.
func recordedReplies(t testing.TB) [][]byte {
	return recorded.Files(t, 10, "messages/*/response.json", "cross_table/*/messages/response.json")
}

func FuzzQuickResponse(f *testing.F) {
	for _, b := range append(recordedReplies(f), recorded.Variants(replyVariants)...) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { recorded.Decoded(t, b, quickResponse) })
}

// TestQuickReplyIsTheMarshalledReply: every whole reply appendMessage
// writes is, byte for byte, the one jsonx.Marshal writes: the replies
// made from every recorded canonical response, and replies in awkward
// forms. What it declines, Marshal writes.
func TestQuickReplyIsTheMarshalledReply(t *testing.T) {
	var replies []*Response
	req := &parleyv1.Request{Model: "claude-test"}
	for _, resp := range recorded.Canonical(t, "response.canonical.json", func() *parleyv1.Response { return &parleyv1.Response{} }) {
		if w, err := wireReply(req, resp); err == nil {
			replies = append(replies, w)
		}
	}
	made := len(replies)
	s := func(v string) *string { return &v }
	yes := true
	texts := []string{"", "Hello", "a \"q\" \\ \n\t", "<m&m>", "\u0000\u001f\u2028", "héllo 世界 🌍"}
	for _, text := range texts {
		replies = append(replies, &Response{ID: text, Type: "message", Role: "assistant", Model: text, StopReason: s("tool_use"), StopSequence: s(text),
			Content: []Block{
				{Type: "thinking", Thinking: s(text), Signature: s(text)},
				{Type: "redacted_thinking", Data: text},
				{Type: "text", Text: s(text), Citations: jsontext.Value(`[{"type":"char_location","cited_text":"x"}]`)},
				{Type: "tool_use", ID: text, Name: text, Input: jsontext.Value(`{"city":"Paris","n":[1,2.50]}`)},
				{Type: "tool_result", ToolUseID: text, Content: jsontext.Value(`"ok"`), IsError: &yes},
				{Type: "image", Source: jsontext.Value(`{"type":"url","url":"https://example.com/a.png"}`), Title: s(text), Context: s(text)},
				{Type: "server_tool_use", ID: "srvtoolu_1", Name: "web_search", Input: jsontext.Value(`{}`), Unknown: jsonx.Unknown{"caller": []byte(`{"type":"direct"}`)}},
			},
			Usage: &usage{}, Unknown: jsonx.Unknown{"container": []byte(`null`)}})
	}
	replies = append(replies,
		&Response{},
		&Response{Content: []Block{}},
		&Response{Content: []Block{{Type: "text", Text: s("x"), CacheControl: &cacheControl{Type: "ephemeral", Unknown: jsonx.Unknown{"x": []byte(`[1, 2]`)}}}}},
		&Response{Content: []Block{{Type: "tool_use", Input: jsontext.Value(`{"city": "Paris"}`)}}},
		&Response{Content: []Block{{Type: "tool_use", Input: jsontext.Value(`{"city":"\u00e9"}`)}}},
		// Declined: Marshal writes these.
		&Response{Content: []Block{{Type: "tool_use", Input: jsontext.Value(`{"city":`)}}},
		&Response{Content: []Block{{Type: "tool_use", Input: jsontext.Value{}}}},
		&Response{Content: []Block{{Type: "text", Text: s("\xff")}}},
		&Response{Content: []Block{{Type: "text", Unknown: jsonx.Unknown{"a": []byte(`1`), "b": []byte(`2`)}}}},
	)
	recordedQuick, quick := recorded.Count(recorded.Encoded(t, replies, appendMessage), made)
	if recordedQuick < 20 || quick < len(texts)+5 {
		t.Errorf("appendMessage wrote %d of %d recorded replies and %d of %d others", recordedQuick, made, quick, len(replies)-made)
	}
}
