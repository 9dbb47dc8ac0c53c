package responses

import (
	"fmt"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/recorded"
	"github.com/parleyhq/parley/translate/sse"
)

// readResponseVariants are replies in awkward forms, for readResponse to
// read as jsonx.Unmarshal reads them or to decline.
var readResponseVariants = []string{
	`{"id":"resp_1","object":"response","created_at":1741476542,"status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens","x":1},"instructions":"Be brief.","max_output_tokens":16,"model":"gpt-5","output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"gAAA"},{"type":"message","id":"msg_1","status":"incomplete","role":"assistant","content":[{"type":"output_text","text":"a \"q\" \\ \n \u00e9 \ud83c\udf0d","annotations":[],"logprobs":[]}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"},{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":"low","summary":null},"store":false,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0,"x":1},"output_tokens":87,"output_tokens_details":{"reasoning_tokens":64,"y":2},"total_tokens":123,"z":3},"user":null,"metadata":{},"service_tier":"default","background":false}`,
	`{"id":"resp_2","object":"response","created_at":1,"status":"failed","error":{"code":"server_error","message":"m","x":1},"incomplete_details":null,"model":"m","output":[],"usage":null}`,
	`{"id":"r","output":null,"error":null}`,
	`{}`,
	` { "id" : "r" , "output" : [ { "type" : "message" , "content" : [ ] } ] } `,
	`{"id":"r","usage":{"input_tokens":null,"input_tokens_details":null,"output_tokens_details":null}}`,
	`{"id":"r","output":[{"type":"message","content":[{"type":"output_text","text":"x","annotations":[{"type":"url_citation","url":"u","title":"t","start_index":0,"end_index":5,"x":1},{"type":"file_citation","file_id":"f","filename":"a.pdf","index":2}]}]}]}`,
	// Declined: Unmarshal reads (or refuses) these.
	`{"id":"r","id":"s"}`,
	`{"id":"r","created_at":1.5}`,
	`{"id":"r","usage":{"input_tokens":"1"}}`,
	`{"id":"r","output":[null]}`,
	`{"id":"r","error":"e"}`,
	`{"id":"r"} x`,
}

// recordedReplies are the responses replies under testdata.
func recordedReplies(t testing.TB) [][]byte {
	return recorded.Files(t, 10, "responses/*/response.json", "cross_table/*/responses/response.json")
}

// TestQuickReadIsTheUnmarshalledResponse: every reply readResponse reads
// (the recorded ones and awkward forms) is the one jsonx.Unmarshal reads;
// what it declines, the general way reads. FuzzQuickResponse holds it to
// that on any input.
func TestQuickReadIsTheUnmarshalledResponse(t *testing.T) {
	bodies := recordedReplies(t)
	recordedQuick, others := recorded.DecodedAll(t, bodies, recorded.Variants(readResponseVariants), readResponse)
	if recordedQuick < len(bodies)*3/4 || others < 6 {
		t.Errorf("readResponse read %d of %d recorded replies and %d of %d others", recordedQuick, len(bodies), others, len(readResponseVariants))
	}
}

func FuzzQuickResponse(f *testing.F) {
	for _, b := range append(recordedReplies(f), recorded.Variants(readResponseVariants)...) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { recorded.Decoded(t, b, readResponse) })
}

// TestKeptEchoOutlivesTheReply: the members that echo the request are
// read pointing into the reply (and into a stream's start event) and kept
// as copies: writing over the bytes after decoding changes nothing kept.
func TestKeptEchoOutlivesTheReply(t *testing.T) {
	const response = `{"id":"resp_1","object":"response","created_at":1,"status":"%s","model":"m","output":[],` +
		`"instructions":"Be brief.","reasoning":{"effort":"low","summary":null},"tools":[],"metadata":{"k":"v"}}`
	want := map[string]string{"instructions": `"Be brief."`, "reasoning": `{"effort":"low","summary":null}`, "tools": "[]", "metadata": `{"k":"v"}`}
	check := func(t *testing.T, ext *parleyv1.Extensions, data []byte) {
		t.Helper()
		for i := range data {
			data[i] = '#'
		}
		for k, v := range want {
			if got := ext.GetFields()[k]; got != v {
				t.Errorf("%s = %q after the data was written over, want %q", k, got, v)
			}
		}
	}
	t.Run("whole", func(t *testing.T) {
		body := fmt.Appendf(nil, response, "completed")
		resp, err := Upstream{}.DecodeResponse(translate.Target{Model: "m"}, body)
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp.GetExtensions(), body)
	})
	t.Run("stream", func(t *testing.T) {
		data := fmt.Appendf(nil, `{"type":"response.created","sequence_number":0,"response":`+response+`}`, "in_progress")
		evs, err := Upstream{}.NewStreamDecoder(translate.Target{Model: "m"}).Decode(nil, sse.Event{Type: "response.created", Data: data})
		if err != nil || len(evs) != 1 || evs[0].GetStart() == nil {
			t.Fatalf("decoded %v, %v; want a start", evs, err)
		}
		check(t, evs[0].GetStart().GetResponse().GetExtensions(), data)
	})
}
