package cross_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/sse"
)

// The requests real coding agents sent (testdata/agent_tools: Claude
// Code, the Codex CLI, the Gemini CLI, recorded against a local fake),
// held to what an agent served by another service needs: every tool it
// declared reaches every upstream, under a name its calls come back by,
// with its parameters; a tool an upstream cannot take is named in
// Outgoing.Dropped, never lost without a word (guide §8 items 12 and 17;
// issue 18, items 5, 6 and 11).

var agentRequests = []struct{ file, dialect string }{
	{"claude_code/request.json", "messages"},
	{"codex/request.json", "responses"},
	{"codex/request_fallback_metadata_gpt-5.1-codex.json", "responses"},
	{"codex/request_default_model_gpt-6.1-sol.json", "responses"},
	{"gemini_cli/request.json", "generate_content"},
	{"gemini_cli/request_yolo.json", "generate_content"},
	{"gemini_cli/router_classifier_request.json", "generate_content"},
}

// agentUpstreams are every chat upstream, each with a reader of the
// request Parley made back into the canonical model.
func agentUpstreams() map[string]*upstreamSide {
	out := maps.Clone(upstreamOnly)
	for _, s := range dialecttest.All {
		out[s.Name()] = chatUpstream(s)
	}
	return out
}

func readAgentRequest(t *testing.T, file, dialect string) *parleyv1.Request {
	t.Helper()
	body, err := os.ReadFile("../../testdata/agent_tools/" + file)
	if err != nil {
		t.Fatal(err)
	}
	s := dialecttest.Named(dialect)
	// Claude Code sends system turns among its messages under this beta.
	req, err := s.Client.DecodeRequest(s.Incoming(http.Header{"Anthropic-Beta": {"mid-conversation-system-2026-04-07"}}, s.Model, body))
	if err != nil {
		t.Fatalf("%s does not decode as %s: %v", file, dialect, err)
	}
	return req
}

// properties are the names of a JSON Schema's top-level properties.
func properties(t testing.TB, schema string) []string {
	if schema == "" {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	return slices.Sorted(maps.Keys(s.Properties))
}

func TestAgentRequestsReachEveryUpstream(t *testing.T) {
	for _, a := range agentRequests {
		for name, up := range agentUpstreams() {
			t.Run(a.file+"/to_"+name, func(t *testing.T) {
				req := readAgentRequest(t, a.file, a.dialect)
				out, err := up.Upstream.EncodeRequest(req, translate.Target{Model: up.Model, Upstream: "up-" + name})
				if err != nil {
					t.Fatalf("encode: %v", err)
				}
				same := a.dialect == name
				if !same {
					// Toward the agent's own dialect Parley relays what
					// the agent sent, newer members than the SDK's
					// included; what it builds for another dialect, the
					// SDK must hold.
					up.SDKRequest(t, out)
				}
				seen, err := up.ReadRequest(t, out)
				if err != nil {
					t.Fatalf("the request Parley made does not read back: %v", err)
				}
				got := map[string]*parleyv1.FunctionTool{}
				for _, st := range seen.GetTools() {
					if f := st.GetFunction(); f != nil {
						got[translate.FunctionName(f)] = f
					}
				}
				for i, tool := range req.GetTools() {
					f := tool.GetFunction()
					if f == nil {
						field := "tools[" + strconv.Itoa(i) + "]"
						if tool.GetKind() == nil && !same && !slices.Contains(out.Dropped, field) {
							t.Errorf("%s, a tool %s cannot take, is not named in dropped %v", field, name, out.Dropped)
						}
						continue
					}
					flat := translate.FunctionName(f)
					g := got[flat]
					if g == nil {
						t.Errorf("the function %s did not reach %s (it got %v)", flat, name, slices.Sorted(maps.Keys(got)))
						continue
					}
					if want, have := properties(t, f.GetParameters()), properties(t, g.GetParameters()); !slices.Equal(want, have) {
						t.Errorf("%s's parameters %v reached %s as %v", flat, want, name, have)
					}
				}
				if name == "generate_content" && !same {
					checkContentGenerationSchemas(t, out.Body)
				}
			})
		}
	}
}

// checkContentGenerationSchemas: every declaration has one schema, in one
// form, and no JSON Schema the service refuses.
func checkContentGenerationSchemas(t *testing.T, body []byte) {
	t.Helper()
	var w struct {
		Tools []struct {
			FunctionDeclarations []map[string]json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	for _, tl := range w.Tools {
		for _, fd := range tl.FunctionDeclarations {
			_, schema := fd["parameters"]
			js, jsonSchema := fd["parametersJsonSchema"]
			if schema && jsonSchema {
				t.Errorf("%s has both schema forms", fd["name"])
			}
			if jsonSchema && bytes.Contains(js, []byte(`"$schema"`)) {
				t.Errorf("%s's JSON Schema keeps $schema", fd["name"])
			}
		}
	}
}

// TestCodexNamespacesComeBack: the Codex CLI's sub-agent tools, a
// namespace, reach a messages upstream as functions of flat names; the
// upstream's call of one comes back to Codex, whole and streamed, as a
// call of the namespace's function; Codex's next turn carries it back to
// the upstream under the flat name (guide §8 item 12; issue 18, item 6).
func TestCodexNamespacesComeBack(t *testing.T) {
	req := readAgentRequest(t, "codex/request_fallback_metadata_gpt-5.1-codex.json", "responses")
	const flat = "multi_agent_v1__spawn_agent"
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-sonnet-4-5", Upstream: "anthropic"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Body, []byte(`"name":"`+flat+`"`)) {
		t.Fatalf("the messages upstream was not offered %s", flat)
	}
	// The upstream calls it.
	reply := []byte(`{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_01A","name":"` + flat + `","input":{"message":"look around"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":5}}`)
	resp, err := messages.Upstream{}.DecodeResponse(translate.Target{Model: "claude-sonnet-4-5"}, reply)
	if err != nil {
		t.Fatal(err)
	}
	stampID(resp)
	rc := dialecttest.Responses.Client
	whole, err := rc.EncodeResponse(req, resp)
	if err != nil {
		t.Fatal(err)
	}
	checkNamespacedCall := func(what string, r *responses.Response) {
		t.Helper()
		for _, it := range r.Output {
			if it.Type == "function_call" {
				if it.Namespace != "multi_agent_v1" || it.Name != "spawn_agent" || it.CallID != "toolu_01A" {
					t.Errorf("%s: the call is %s.%s (%s), want multi_agent_v1.spawn_agent (toolu_01A)", what, it.Namespace, it.Name, it.CallID)
				}
				return
			}
		}
		t.Errorf("%s: no function_call in %s", what, r.RawJSON())
	}
	wr := sdkcheck.ResponsesReply(t, whole)
	checkNamespacedCall("whole", &wr)
	streamReq := proto.CloneOf(req)
	streamReq.Stream = true
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := rc.NewStreamEncoder(streamReq)
	for _, ev := range translate.ReplayResponse(resp) {
		if err := enc.Encode(w, ev); err != nil {
			t.Fatal(err)
		}
	}
	checkNamespacedCall("streamed", sdkcheck.ResponsesStream(t, buf.Bytes()))

	// Codex's next turn: the call as it got it, and its output.
	var next map[string]any
	raw, _ := os.ReadFile("../../testdata/agent_tools/codex/request_fallback_metadata_gpt-5.1-codex.json")
	if err := json.Unmarshal(raw, &next); err != nil {
		t.Fatal(err)
	}
	next["input"] = append(next["input"].([]any),
		map[string]any{"type": "function_call", "namespace": "multi_agent_v1", "name": "spawn_agent", "call_id": "toolu_01A", "arguments": `{"message":"look around"}`},
		map[string]any{"type": "function_call_output", "call_id": "toolu_01A", "output": "agent-7 started"})
	body, _ := json.Marshal(next)
	s := dialecttest.Responses
	req2, err := s.Client.DecodeRequest(s.Incoming(http.Header{}, s.Model, body))
	if err != nil {
		t.Fatal(err)
	}
	out2, err := messages.Upstream{}.EncodeRequest(req2, translate.Target{Model: "claude-sonnet-4-5", Upstream: "anthropic"})
	if err != nil {
		t.Fatal(err)
	}
	dialecttest.Messages.SDKRequest(t, out2.Body)
	if !bytes.Contains(out2.Body, []byte(`{"type":"tool_use","id":"toolu_01A","name":"`+flat+`"`)) || !bytes.Contains(out2.Body, []byte("agent-7 started")) {
		t.Errorf("the next turn did not carry the call back under %s: %s", flat, out2.Body)
	}
	// A service of Codex's own dialect gets the namespace as Codex sent it,
	// and the call with its namespace.
	out3, err := dialecttest.Responses.Upstream.EncodeRequest(req2, translate.Target{Model: "gpt-5.1-codex", Upstream: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	var sent, sentBack map[string]any
	_ = json.Unmarshal(raw, &sent)
	_ = json.Unmarshal(out3.Body, &sentBack)
	if a, b := jsonText(sent["tools"]), jsonText(sentBack["tools"]); a != b {
		t.Errorf("the tools changed on their way to a responses upstream:\n%s\n%s", a, b)
	}
	if !bytes.Contains(out3.Body, []byte(`"namespace":"multi_agent_v1"`)) {
		t.Errorf("the call lost its namespace toward a responses upstream: %s", out3.Body)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestCodexToolsDeclaredInTheInput: for some models the Codex CLI
// declares its tools in an additional_tools input item, before its
// developer instructions. Every other dialect gets those tools as the
// request's (the agent test above checks each reaches every upstream) and
// the instructions as its system prompt, not as reminders in a user turn;
// a responses upstream gets the item as it came, and no tools member.
func TestCodexToolsDeclaredInTheInput(t *testing.T) {
	req := readAgentRequest(t, "codex/request_default_model_gpt-6.1-sol.json", "responses")
	if len(req.GetTools()) == 0 {
		t.Fatal("no tools decoded from the additional_tools item")
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		System   []map[string]any `json:"system"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(out.Body, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.System) == 0 || bytes.Contains(out.Body, []byte("<system-reminder>")) {
		t.Errorf("Codex's developer instructions did not become the system prompt: %.400s", out.Body)
	}
	same, err := dialecttest.Responses.Upstream.EncodeRequest(req, translate.Target{Model: "gpt-6.1-sol"})
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(same.Body, &r); err != nil {
		t.Fatal(err)
	}
	if _, has := r["tools"]; has {
		t.Error("a responses upstream got the input's tools a second time, in tools")
	}
	if first := r["input"].([]any)[0].(map[string]any); first["type"] != "additional_tools" {
		t.Errorf("the additional_tools item did not stay first: %v", first["type"])
	}
}

// TestCodexPromptCacheKeyTravels: the key Codex gives each conversation
// (prompt_cache_key) is canonical, so that Parley can route a
// conversation's turns to one route (package dispatch), and it reaches
// the services that read it, chat-completions ones included; the others
// have no such member and do not get it.
func TestCodexPromptCacheKeyTravels(t *testing.T) {
	req := readAgentRequest(t, "codex/request.json", "responses")
	const key = "01a212bf-e88e-7223-9dd9-4cec26d7168a"
	if req.GetPromptCacheKey() != key {
		t.Fatalf("prompt cache key %q", req.GetPromptCacheKey())
	}
	for _, up := range []translate.Upstream{dialecttest.Responses.Upstream, dialecttest.ChatCompletions.Upstream} {
		out, err := up.EncodeRequest(req, translate.Target{Model: "gpt-5"})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out.Body, []byte(`"prompt_cache_key":"`+key+`"`)) || bytes.Count(out.Body, []byte(`"prompt_cache_key"`)) != 1 {
			t.Errorf("%s: the key went as %s", translate.DialectName(up.Dialect()), out.Body)
		}
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out.Body, []byte(key)) {
		t.Error("the key went to a messages service")
	}
}
