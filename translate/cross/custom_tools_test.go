package cross_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
	"github.com/parleyhq/parley/translate/sse"
)

// codexTurn is a responses request as the Codex CLI sends one: the
// apply_patch custom tool with its grammar, and a history holding an
// earlier call of it and its output.
const codexTurn = `{"model":"m","stream":true,"store":false,
"tools":[{"type":"custom","name":"apply_patch","description":"Use the apply_patch tool to edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}},
 {"type":"function","name":"shell","description":"Runs a command.","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}}],
"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Say hello in README.md."}]},
 {"type":"custom_tool_call","id":"ctc_1","status":"completed","call_id":"call_p1","name":"apply_patch","input":"*** Begin Patch\n*** Update File: README.md\n-hi\n+hello\n*** End Patch\n"},
 {"type":"custom_tool_call_output","call_id":"call_p1","output":"Success. Updated README.md"},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"Now the other one."}]}]}`

// The Codex CLI's custom tools reach an upstream of another dialect as
// functions it can call, with the earlier calls and outputs as function
// calls and results; a call of one from that upstream comes back to Codex
// as a custom_tool_call with the raw input, whole and streamed, read by
// the official SDK; a responses upstream gets the custom tool and items
// as they came (issue 18, item 6; guide §8 item 12).
func TestCustomToolsReachEveryUpstream(t *testing.T) {
	req, err := responses.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(codexTurn)})
	if err != nil {
		t.Fatal(err)
	}
	const patch = "*** Begin Patch\n*** Update File: NOTES.md\n-draft\n+final\n*** End Patch\n"

	// Toward a chat upstream: a function with one string parameter, and
	// the history as a call and its result.
	c := upstreamBody(t, chatcompletions.Upstream{}, req)
	tool := c["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	params, _ := json.Marshal(tool["parameters"])
	if tool["name"] != "apply_patch" || !strings.Contains(string(params), `"input":{"description":`) || !strings.Contains(string(params), "begin_patch hunk+") {
		t.Errorf("the custom tool toward a chat upstream: %v", tool)
	}
	msgs := c["messages"].([]any)
	call := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	var args struct{ Input string }
	_ = json.Unmarshal([]byte(call["arguments"].(string)), &args)
	if call["name"] != "apply_patch" || !strings.HasPrefix(args.Input, "*** Begin Patch") {
		t.Errorf("the earlier call toward a chat upstream: %v", call)
	}
	if out := msgs[2].(map[string]any); out["role"] != "tool" || out["tool_call_id"] != "call_p1" || !strings.Contains(out["content"].(string), "Success") {
		t.Errorf("the earlier output toward a chat upstream: %v", out)
	}
	// Toward a messages upstream likewise.
	m := upstreamBody(t, messages.Upstream{}, req)
	if mt := m["tools"].([]any)[0].(map[string]any); mt["name"] != "apply_patch" || mt["input_schema"] == nil {
		t.Errorf("the custom tool toward a messages upstream: %v", mt)
	}
	// Toward a responses upstream: as the client sent them.
	r := upstreamBody(t, responses.Upstream{}, req)
	rt := r["tools"].([]any)[0].(map[string]any)
	if rt["type"] != "custom" || rt["format"] == nil {
		t.Errorf("the custom tool toward a responses upstream: %v", rt)
	}
	if it := r["input"].([]any)[1].(map[string]any); it["type"] != "custom_tool_call" || it["input"] == nil {
		t.Errorf("the earlier call toward a responses upstream: %v", it)
	}

	// The chat upstream calls the tool: Codex gets a custom_tool_call.
	argsJSON, _ := json.Marshal(map[string]string{"input": patch})
	reply := &parleyv1.Response{Id: "chatcmpl-1", Model: "m", Candidates: []*parleyv1.Candidate{{
		FinishReason: parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
		Parts:        []*parleyv1.Part{translate.CallPart("call_p2", "apply_patch", string(argsJSON))},
	}}, Extensions: &parleyv1.Extensions{Dialect: parleyv1.Dialect_DIALECT_CHAT_COMPLETIONS}}
	body, err := responses.Client{}.EncodeResponse(req, reply)
	if err != nil {
		t.Fatal(err)
	}
	whole := sdkcheck.ResponsesReply(t, body)
	checkCustomCall(t, "whole", whole.Output[0].Type, whole.Output[0].CallID, whole.Output[0].Name, whole.Output[0].Input, patch)

	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := responses.Client{}.NewStreamEncoder(req)
	half := len(argsJSON) / 2
	for _, ev := range []*parleyv1.StreamEvent{
		{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{Id: "chatcmpl-1", Model: "m"}}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Index: 0, Part: translate.CallPart("call_p2", "apply_patch", "")}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 0, Delta: &parleyv1.PartDelta_Arguments{Arguments: string(argsJSON[:half])}}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Index: 0, Delta: &parleyv1.PartDelta_Arguments{Arguments: string(argsJSON[half:])}}}},
		{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{Index: 0}}},
		{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{Reason: parleyv1.FinishReason_FINISH_REASON_TOOL_USE}}},
		{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}},
	} {
		if err := enc.Encode(w, ev); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(buf.String(), "function_call_arguments") {
		t.Errorf("the stream of a custom tool's call carries function argument events:\n%s", buf.String())
	}
	streamed := sdkcheck.ResponsesStream(t, buf.Bytes())
	if len(streamed.Output) != 1 {
		t.Fatalf("streamed output: %+v", streamed.Output)
	}
	o := streamed.Output[0]
	checkCustomCall(t, "streamed", o.Type, o.CallID, o.Name, o.Input, patch)
}

func checkCustomCall(t *testing.T, name, typ, callID, tool, input, want string) {
	t.Helper()
	if typ != "custom_tool_call" || callID != "call_p2" || tool != "apply_patch" || input != want {
		t.Errorf("%s: the client got a %s item %q for %q with input %q, want a custom_tool_call with the patch", name, typ, callID, tool, input)
	}
}

// A responses upstream that calls a custom tool in a stream: the call
// reaches a responses client, as Parley encodes it (a stored turn), as a
// custom_tool_call with its input, and reaches a messages client as a
// tool_use whose input holds it.
func TestCustomToolCallFromAResponsesUpstream(t *testing.T) {
	const input = "*** Begin Patch\n*** End Patch\n"
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	stream := `event: response.created
data: {"type":"response.created","response":{"id":"resp_c1","object":"response","created_at":1,"status":"in_progress","model":"gpt-5","output":[]},"sequence_number":0}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_c1","status":"in_progress","call_id":"call_c1","name":"apply_patch","input":""},"sequence_number":1}

event: response.custom_tool_call_input.delta
data: {"type":"response.custom_tool_call_input.delta","item_id":"ctc_c1","output_index":0,"delta":` + q(input) + `,"sequence_number":2}

event: response.custom_tool_call_input.done
data: {"type":"response.custom_tool_call_input.done","item_id":"ctc_c1","output_index":0,"input":` + q(input) + `,"sequence_number":3}

event: response.output_item.done
data: {"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_c1","status":"completed","call_id":"call_c1","name":"apply_patch","input":` + q(input) + `},"sequence_number":4}

event: response.completed
data: {"type":"response.completed","response":{"id":"resp_c1","object":"response","created_at":1,"status":"completed","model":"gpt-5","output":[{"type":"custom_tool_call","id":"ctc_c1","status":"completed","call_id":"call_c1","name":"apply_patch","input":` + q(input) + `}],"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}},"sequence_number":5}

`
	req, err := responses.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(codexTurn)})
	if err != nil {
		t.Fatal(err)
	}
	up := responses.Upstream{}
	var toResponses, toMessages bytes.Buffer
	rw, mw := sse.NewWriter(&toResponses), sse.NewWriter(&toMessages)
	renc, menc := responses.Client{}.NewStreamEncoder(req), messages.Client{}.NewStreamEncoder(req)
	for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_RESPONSES, strings.NewReader(stream), up.NewStreamDecoder(translate.Target{Model: "gpt-5"}), translate.StreamLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		if err := renc.Encode(rw, ev); err != nil {
			t.Fatal(err)
		}
		if err := menc.Encode(mw, ev); err != nil {
			t.Fatal(err)
		}
	}
	r := sdkcheck.ResponsesStream(t, toResponses.Bytes())
	if len(r.Output) != 1 {
		t.Fatalf("output %+v", r.Output)
	}
	o := r.Output[0]
	if o.Type != "custom_tool_call" || o.CallID != "call_c1" || o.Name != "apply_patch" || o.Input != input {
		t.Errorf("the responses client got %s %q %q input %q", o.Type, o.CallID, o.Name, o.Input)
	}
	msg := sdkcheck.MessagesStream(t, toMessages.Bytes())
	var got string
	for _, b := range msg.Content {
		if b.Type == "tool_use" && b.Name == "apply_patch" {
			var in struct{ Input string }
			_ = json.Unmarshal(b.Input, &in)
			got = in.Input
		}
	}
	if got != input || msg.StopReason != "tool_use" {
		t.Errorf("the messages client got input %q, stop %q", got, msg.StopReason)
	}
}
