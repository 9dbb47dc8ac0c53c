package chatcompletions

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/parleyhq/parley/translate"
)

// requestVariants are requests in awkward forms, for readRequest to read
// as the general way reads them or to decline.
var requestVariants = []string{
	`{"model":"gpt-4.1","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"a \"q\" \\ \n \u00e9 \ud83c\udf0d <&>","name":"ann"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"18C"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type": "object","properties":{"city":{"type":"string"}}},"strict":true}}],"tool_choice":"auto","parallel_tool_calls":false,"max_completion_tokens":1024,"stream":true,"stream_options":{"include_usage":true},"temperature":0.7,"top_p":1,"presence_penalty":-0.5,"frequency_penalty":0,"seed":42,"n":1,"stop":["END","\n\n"],"user":"u1","prompt_cache_key":"k","metadata":{"a":"b"},"service_tier":"auto","store":false,"reasoning_effort":"low","verbosity":"high"}`,
	`{"messages":[{"role":"user","content":"hi","x":{"y":[1, 2]}}],"model":"m","stop":"END","max_tokens":null,"temperature":null,"stream":null,"extra_body":{"k":1},"tools":null}`,
	`{"model":"m","messages":[{"role":"assistant","content":"","reasoning_content":"hmm","refusal":null,"annotations":[]}],"stop":null,"tools":[],"stream_options":null,"metadata":null}`,
	`{"model":"m","messages":[{"role":"user"},{"content":null}]}`,
	`{"model":"m","messages":[]}`,
	`{"model":"m","messages":null}`,
	`{"model":"m"}`,
	`{"model":"m","messages":[{"role":"tool","content":"x"}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"x":1}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":1e400}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1.5}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":[1]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"metadata":{"a":1}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}]} x`,
	`{"model":"m","messages":{}}`,
	`{"model":"m","messages":[null]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"user","content":"y"}],"messages":[{"role":"user","content":"z"}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO","detail":"low","x":1}},{"type":"refusal","refusal":"no"}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[]},{"role":"user","content":[{}]},{"role":"user","content":[{"type":"image_url","image_url":null}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[null]}]}`,
	`{"model":"m","messages":[{"role":"user","content":{}}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function","function":{"name":"f","x":1},"y":null}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"function":null}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","description":"d","schema":{"type": "object"},"strict":true,"x":1},"y":2}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":null}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":null,"tool_choice":null}`,
	// Declined: the general way reads these.
	`{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":{"50256":-100}}`,
	`{"model":"m","messages":[{"role":"user","content":"x","content":"y"}]}`,
}

// TestQuickRequestDecodesAsTheGeneralWay: every client request (the
// recorded ones and awkward forms) decodes to the same canonical request,
// or the same error, with readRequest as without it; and readRequest
// reads most of the recorded ones. FuzzQuickRequest holds the two to that
// on any input.
func TestQuickRequestDecodesAsTheGeneralWay(t *testing.T) {
	bodies := recordedRequests(t)
	recorded := len(bodies)
	for _, v := range requestVariants {
		bodies = append(bodies, []byte(v))
	}
	quick, recordedQuick := 0, 0
	for i, b := range bodies {
		if checkQuickRequest(t, b) {
			quick++
			if i < recorded {
				recordedQuick++
			}
		}
	}
	if recordedQuick < recorded*2/3 || quick-recordedQuick < 15 {
		t.Errorf("readRequest read %d of %d requests, %d of %d recorded", quick, len(bodies), recordedQuick, recorded)
	}
}

// recordedRequests are the chat-completions requests under testdata.
func recordedRequests(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, pattern := range []string{"../../testdata/chat_completions/*/request.json", "../../testdata/cross_table/*/chat_completions/request.json"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d recorded requests", len(out))
	}
	return out
}

// checkQuickRequest decodes b both ways and holds them to the same
// result; read says whether readRequest read it.
func checkQuickRequest(t *testing.T, b []byte) (read bool) {
	t.Helper()
	in := &translate.Incoming{Header: http.Header{"Content-Type": {"application/json"}}, Body: b}
	generalOnly.Store(true)
	slow, slowErr := Client{}.DecodeRequest(in)
	generalOnly.Store(false)
	fast, fastErr := Client{}.DecodeRequest(in)
	switch {
	case (slowErr == nil) != (fastErr == nil):
		t.Errorf("%s:\nquick error %v\nslow error  %v", b, fastErr, slowErr)
	case slowErr != nil && slowErr.Error() != fastErr.Error():
		t.Errorf("%s:\nquick error %v\nslow error  %v", b, fastErr, slowErr)
	case slowErr == nil && !proto.Equal(fast, slow):
		t.Errorf("%s:\nquick %v\nslow  %v", b, fast, slow)
	}
	var w requestIn
	w.Messages.Fn = func(int, *message) error { return nil }
	return readRequest(b, &w)
}

func FuzzQuickRequest(f *testing.F) {
	for _, b := range recordedRequests(f) {
		f.Add(b)
	}
	for _, v := range requestVariants {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkQuickRequest(t, b) })
}
