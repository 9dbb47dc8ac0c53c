package responses

import (
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/recorded"
)

// readRequestVariants are requests in awkward forms, for readRequest to
// read as jsonx.Unmarshal reads them or to decline.
var readRequestVariants = []string{
	`{"model":"gpt-5","instructions":"Be brief.","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"a \"q\" \\ \n \u00e9 \ud83c\udf0d <&>"}]},{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s","x":1}],"encrypted_content":"gAAA","content":null},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed","namespace":"ns"},{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"18C"}]},{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]},{"type":"refusal","refusal":"no"}]},{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,iVBO","detail":"high"},{"type":"input_file","file_id":"file_1","filename":"a.pdf","file_data":null,"file_url":"https://a.example/a.pdf"}]},{"type":"computer_call","action":{"type":"click","x":1},"call_id":"c"},{"type":"file_search_call","queries":["q"],"results":null}],"tools":[{"type":"function","name":"get_weather","description":"Weather","parameters":{"type":"object"},"strict":true},{"type":"file_search","vector_store_ids":["vs_1"],"filters":{"type":"eq"},"max_num_results":5,"ranking_options":null},{"type":"web_search","search_context_size":"low","domains":["a.example"],"user_location":null},{"type":"computer_use_preview","display_width":1024,"display_height":768,"environment":"browser"},{"type":"namespace","name":"ns","tools":[{"type":"function","name":"f"}]}],"tool_choice":{"type":"function","name":"get_weather","x":1},"text":{"format":{"type":"json_schema","name":"s","description":"d","schema":{"type":"object"},"strict":true,"x":1},"verbosity":"low","y":2},"reasoning":{"effort":"high","summary":"auto","generate_summary":null,"z":3},"include":["reasoning.encrypted_content"],"max_output_tokens":1024,"metadata":{"a":"b"},"parallel_tool_calls":false,"previous_response_id":"resp_1","service_tier":"auto","store":false,"stream":true,"temperature":0.7,"top_p":0.95,"top_logprobs":2,"truncation":"auto","user":"u","prompt_cache_key":"k","client_metadata":{"x":[1, 2]}}`,
	`{"model":"m","input":"x","tool_choice":"auto","tools":[],"include":[],"metadata":{},"instructions":null,"text":null,"reasoning":null,"max_output_tokens":null,"temperature":null,"stream":null,"store":null,"user":null}`,
	`{"model":"m","input":[]}`,
	`{"model":"m","input":null}`,
	`{"model":"m","input":[{}]}`,
	`{"model":"m","input":[{"role":"user","content":[]}]}`,
	`{"model":"m","input":[{"role":"user","content":null}]}`,
	`{"model":"m","input":[{"role":"user","content":[{}]}]}`,
	`{"model":"m","input":[{"type":"reasoning","summary":[]}]}`,
	`{"model":"m","input":[{"type":"reasoning","summary":null}]}`,
	`{"model":"m","input":"x","tools":null,"include":null,"metadata":null,"tool_choice":null}`,
	`{"model":"m","input":"x","text":{"format":null}}`,
	`{"model":"m","input":"x","tools":[{"type":"file_search","ranking_options":{"ranker":"auto","score_threshold":0.5,"x":1}},{"type":"web_search_preview","user_location":{"type":"approximate","city":"London","region":null,"country":"GB","timezone":"Europe/London","x":1}}]}`,
	`{}`,
	` { "model" : "m" , "input" : [ { "role" : "user" , "content" : "x" } ] } `,
	`{"model":"m","input":[{"type":"message","content":[{"type":"output_text","text":"x","annotations":[{"type":"url_citation","url":"u","title":"t","start_index":0,"end_index":5,"x":1},{"type":"file_citation","file_id":"f","filename":"a.pdf","index":2}]}]}]}`,
	// Declined: Unmarshal reads (or refuses) these.
	`{"model":"m","input":[{"role":"user","content":"x","content":"y"}]}`,
	`{"model":"m","input":"x","model":"n"}`,
	`{"model":"m","input":"x","tool_choice":{"type":"allowed_tools","mode":"auto","tools":[]}}`,
	`{"model":"m","input":"x","temperature":1e400}`,
	`{"model":"m","input":"x","max_output_tokens":1.5}`,
	`{"model":"m","input":"x","include":[1]}`,
	`{"model":"m","input":"x","metadata":{"a":1}}`,
	`{"model":"m","input":"x","stream":"yes"}`,
	`{"model":"m","input":"x"} x`,
	`{"model":"m","input":[null]}`,
	`{"model":"m","input":{}}`,
	`{"model":"m","input":[{"role":"user","content":[null]}]}`,
}

// recordedClientRequests are the responses requests under testdata.
func recordedClientRequests(t testing.TB) [][]byte {
	return recorded.Files(t, 20, "responses/*/request.json", "cross_table/*/responses/request.json", "agent_tools/codex/request*.json")
}

// TestQuickReadIsTheUnmarshalledRequest: every request readRequest reads
// (the recorded ones, Codex's among them, and awkward forms) is the one
// jsonx.Unmarshal reads; what it declines, the general way reads.
// FuzzQuickRequest holds it to that on any input.
func TestQuickReadIsTheUnmarshalledRequest(t *testing.T) {
	bodies := recordedClientRequests(t)
	recordedQuick, others := recorded.DecodedAll(t, bodies, recorded.Variants(readRequestVariants), readRequest)
	if recordedQuick < len(bodies)*9/10 || others < 14 {
		t.Errorf("readRequest read %d of %d recorded requests and %d of %d others", recordedQuick, len(bodies), others, len(readRequestVariants))
	}
}

func FuzzQuickRequest(f *testing.F) {
	for _, b := range append(recordedClientRequests(f), recorded.Variants(readRequestVariants)...) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { recorded.ReadAndWritten(t, b, readRequest, appendRequest) })
}

// TestQuickRequestIsTheMarshalledRequest: every request appendRequest
// writes is, byte for byte, the one jsonx.Marshal writes: the requests
// made from every recorded canonical request for an upstream of this
// dialect, the recorded requests as clients send them, and the awkward
// forms readRequest is held to. What it declines, Marshal writes.
func TestQuickRequestIsTheMarshalledRequest(t *testing.T) {
	var requests []*Request
	for _, req := range recorded.Canonical(t, "request.canonical.json", func() *parleyv1.Request { return &parleyv1.Request{} }) {
		e := encoder{req: req, t: translate.Target{Model: "gpt-test"}, same: req.GetExtensions().GetDialect() == thisDialect}
		if w, err := e.request(); err == nil {
			requests = append(requests, w)
		}
	}
	recorded.EncodedMadeAndRead(t, requests, append(recordedClientRequests(t), recorded.Variants(readRequestVariants)...), appendRequest)
}
