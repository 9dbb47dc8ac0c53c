package responses

import (
	"io"
	"os"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/encoding/protojson"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// TestEchoOfARequest pins the request's echo in a response toward a
// client, member by member: the service's defaults for what the request
// leaves unset (written once, echoDefaults), and what it sets.
func TestEchoOfARequest(t *testing.T) {
	for _, c := range []struct{ name, request, echo string }{
		{"defaults", `{"model":"m"}`,
			`{"instructions":null,"max_output_tokens":null,"parallel_tool_calls":true,"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","user":null,"metadata":{}}`},
		{"everything set", `{"model":"m","instructions":[{"text":{"text":"Be brief."}},{"text":{"text":"Be kind."}}],
			"generation":{"maxOutputTokens":100,"temperature":0.5,"topP":0.25,"verbosity":"VERBOSITY_LOW"},
			"toolChoice":{"mode":"TOOL_CHOICE_MODE_REQUIRED","parallelCalls":false},
			"tools":[{"function":{"name":"get_weather","description":"Weather.","parameters":"{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}"}}],
			"reasoning":{"effort":"REASONING_EFFORT_HIGH","summary":"REASONING_SUMMARY_DETAILED"},
			"responseFormat":{"kind":"RESPONSE_FORMAT_KIND_JSON_SCHEMA","name":"w","description":"A weather.","schema":"{\"type\":\"object\"}","strict":true},
			"store":false,"truncation":"TRUNCATION_AUTO","endUserId":"u-1","metadata":{"team":"a"}}`,
			`{"instructions":"Be brief.\n\nBe kind.","max_output_tokens":100,"parallel_tool_calls":false,"reasoning":{"effort":"high","summary":"detailed"},"store":false,"temperature":0.5,"text":{"format":{"type":"json_schema","name":"w","strict":true,"schema":{"type":"object"},"description":"A weather."},"verbosity":"low"},"tool_choice":"required","tools":[{"type":"function","name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":false}],"top_p":0.25,"truncation":"auto","user":"u-1","metadata":{"team":"a"}}`},
		{"json object", `{"model":"m","responseFormat":{"kind":"RESPONSE_FORMAT_KIND_JSON_OBJECT"}}`,
			`{"instructions":null,"max_output_tokens":null,"parallel_tool_calls":true,"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1,"text":{"format":{"type":"json_object"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","user":null,"metadata":{}}`},
		{"effort alone", `{"model":"m","reasoning":{"effort":"REASONING_EFFORT_MINIMAL"}}`,
			`{"instructions":null,"max_output_tokens":null,"parallel_tool_calls":true,"reasoning":{"effort":"minimal","summary":null},"store":true,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","user":null,"metadata":{}}`},
		{"summary alone", `{"model":"m","reasoning":{"summary":"REASONING_SUMMARY_AUTO"}}`,
			`{"instructions":null,"max_output_tokens":null,"parallel_tool_calls":true,"reasoning":{"effort":null,"summary":"auto"},"store":true,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","user":null,"metadata":{}}`},
		{"verbosity alone", `{"model":"m","generation":{"verbosity":"VERBOSITY_HIGH"}}`,
			`{"instructions":null,"max_output_tokens":null,"parallel_tool_calls":true,"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1,"text":{"format":{"type":"text"},"verbosity":"high"},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","user":null,"metadata":{}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var req parleyv1.Request
			if err := protojson.Unmarshal([]byte(c.request), &req); err != nil {
				t.Fatal(err)
			}
			var w Response
			echo(&w, &req, nil)
			got := []byte{'{'}
			for i, name := range echoMembers {
				if i > 0 {
					got = append(got, ',')
				}
				got = append(append(append(got, jsonx.Quote(name)...), ':'), *echoField(&w, name)...)
			}
			got = append(got, '}')
			want := jsontext.Value(c.echo)
			if err := want.Canonicalize(); err != nil {
				t.Fatal(err)
			}
			have := jsontext.Value(got)
			if err := have.Canonicalize(); err != nil {
				t.Fatalf("%v: %s", err, got)
			}
			if string(have) != string(want) {
				t.Errorf("echo\n got %s\nwant %s", got, c.echo)
			}
		})
	}
}

// TestEchoValueIsMarshal: what echoValue writes by hand is Marshal's
// bytes, and it refuses what Marshal refuses.
func TestEchoValueIsMarshal(t *testing.T) {
	codex, err := Client{}.DecodeRequest(&translate.Incoming{Body: []byte(codexRequest(t))})
	if err != nil {
		t.Fatal(err)
	}
	codexTools, all := echoTools(codex)
	if len(codexTools) < 5 || !all {
		t.Fatalf("Codex's request echoes %d tools, all %v", len(codexTools), all)
	}
	for _, v := range []any{
		"Be brief.", "", "line\nbreak \"quoted\" <tag> & \u2028 é", "bad \xff utf-8",
		int32(1024), int32(-7), int64(1 << 40), true, false,
		0.5, 1.0, 0.0, 1e-7, 1e21, 123456789.125, -0.25,
		map[string]any{"effort": "high"}, []tool{},
		[]tool{{Type: "function", Name: "get_weather", Description: new("Weather."), Parameters: jsontext.Value(`{"type":"object"}`), Strict: new(true)},
			{Type: "web_search", SearchContextSize: "medium"}, {Type: "custom", Name: "apply_patch"}},
		codexTools,
	} {
		want, wantErr := jsonx.Marshal(v)
		got, ok := echoValue(v)
		if ok != (wantErr == nil) || string(got) != string(want) && ok {
			t.Errorf("%#v: %s, %v; Marshal %s, %v", v, got, ok, want, wantErr)
		}
	}
}

// BenchmarkEcho builds the echo of the load benchmark's request (its
// instructions, max_output_tokens and store) and of Codex's agent turn.
func BenchmarkEcho(b *testing.B) {
	benchEchoRequests(b, func(b *testing.B, req *parleyv1.Request) {
		for b.Loop() {
			_ = echoOf(req)
		}
	})
}

// benchEchoRequests runs bench for the load benchmark's request and for
// Codex's agent turn, each decoded.
func benchEchoRequests(b *testing.B, bench func(*testing.B, *parleyv1.Request)) {
	for _, c := range []struct{ name, body string }{
		{"text", `{"model":"gpt-5","instructions":"You are a careful assistant. Answer in plain prose.","input":[{"role":"user","content":"Hi"}],"max_output_tokens":1024,"store":false}`},
		{"codex", codexRequest(b)},
	} {
		req, err := Client{}.DecodeRequest(&translate.Incoming{Body: []byte(c.body)})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			bench(b, req)
		})
	}
}

func codexRequest(b testing.TB) string {
	body, err := os.ReadFile("../../testdata/agent_tools/codex/request.json")
	if err != nil {
		b.Fatal(err)
	}
	return string(body)
}

// TestWrittenEchoIsTheMarshalledEcho: an echo written once
// (requestEcho.write) and then copied into a response is, byte for byte,
// what Marshal writes for it, and what appendResponse writes walking it:
// for Codex's request, for a request setting every member with escapes
// and spaces in its schemas, and with members an upstream of this dialect
// sent, spaced as it liked.
func TestWrittenEchoIsTheMarshalledEcho(t *testing.T) {
	codex, err := Client{}.DecodeRequest(&translate.Incoming{Body: []byte(codexRequest(t))})
	if err != nil {
		t.Fatal(err)
	}
	var everything parleyv1.Request
	if err := protojson.Unmarshal([]byte(`{"model":"m","instructions":[{"text":{"text":"Be <brief> \"now\"\n\té\u2028"}}],
		"generation":{"maxOutputTokens":100,"temperature":0.5,"topP":0.25,"verbosity":"VERBOSITY_LOW"},
		"toolChoice":{"mode":"TOOL_CHOICE_MODE_REQUIRED","parallelCalls":false},
		"tools":[{"function":{"name":"get_weather","description":"Weather & <more>.","parameters":"{ \"type\" : \"object\", \"properties\": {\"city\": {\"type\":\"string\", \"description\": \"\\u00e9 \\\"q\\\"\"}}}"}}],
		"reasoning":{"effort":"REASONING_EFFORT_HIGH","summary":"REASONING_SUMMARY_DETAILED"},
		"responseFormat":{"kind":"RESPONSE_FORMAT_KIND_JSON_SCHEMA","name":"w","schema":"{ \"type\": \"object\" }","strict":true},
		"store":false,"truncation":"TRUNCATION_AUTO","endUserId":"u-1","metadata":{"team":"a"}}`), &everything); err != nil {
		t.Fatal(err)
	}
	var upstream *parleyv1.Extensions
	jsonx.KeepValue(&upstream, thisDialect, "tools", jsontext.Value(`[ {"type": "web_search", "note": "\u00e9\/"} ]`))
	jsonx.KeepValue(&upstream, thisDialect, "temperature", jsontext.Value(`0.70`))
	for _, c := range []struct {
		name string
		req  *parleyv1.Request
		ext  *parleyv1.Extensions
	}{
		{"codex", codex, nil}, {"everything set", &everything, nil}, {"defaults", &parleyv1.Request{Model: "m"}, nil},
		{"kept from an upstream", &everything, upstream},
	} {
		e := echoOf(c.req)
		e.keep(c.ext)
		if !e.write() {
			t.Fatalf("%s: the echo was not written", c.name)
		}
		r := &Response{ID: "resp_1", Object: "response", Status: "completed", Model: "m", Output: []Item{}}
		e.fill(r, true)
		copied, ok := appendResponse(nil, r)
		if !ok {
			t.Fatalf("%s: appendResponse declined", c.name)
		}
		want, err := jsonx.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r.echoWritten = false
		walked, ok := appendResponse(nil, r)
		if !ok || string(copied) != string(want) || string(walked) != string(want) {
			t.Errorf("%s:\ncopied %s\nwalked %s\nwant   %s", c.name, copied, walked, want)
		}
	}
}

// BenchmarkEchoStream renders a short text stream toward a responses
// client, its encoder made for the request: the snapshots at its start
// and end echo the request (Codex's: its tools and 21 KB of
// instructions).
func BenchmarkEchoStream(b *testing.B) {
	resp := &parleyv1.Response{Id: "resp_1", Model: "m", Candidates: []*parleyv1.Candidate{{
		Parts: []*parleyv1.Part{translate.TextPart("Revenue grew 12% year over year.")}, FinishReason: parleyv1.FinishReason_FINISH_REASON_STOP}},
		Usage: &parleyv1.Usage{InputTokens: new(int64(58)), OutputTokens: new(int64(9))}}
	evs := translate.ReplayResponse(resp)
	benchEchoRequests(b, func(b *testing.B, req *parleyv1.Request) {
		w := sse.NewWriter(io.Discard)
		for b.Loop() {
			enc := Client{}.NewStreamEncoder(req)
			for _, ev := range evs {
				if err := enc.Encode(w, ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
