package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	presponses "github.com/parleyhq/parley/translate/responses"
)

// The agents' newer features through `parley serve`, each with a tool
// round trip against an upstream of every dialect (issue 18, items 6 to
// 9; item 10, a chat service's reasoning replayed, is in the reasoning
// matrix): Codex's free-form apply_patch tool, its compaction followed by
// a continued turn, call ids another dialect refuses, and images inside
// tool results.

const patch = "*** Begin Patch\n*** Update File: NOTES.md\n-draft\n+final\n*** End Patch\n"

// agentUpstreams starts a scripted upstream of every dialect, each
// answering with reply, and `parley serve` in front of them with a model
// m-<name> for each.
func agentUpstreams(t *testing.T, reply func(name string, req *parleyv1.Request) *parleyv1.Response) ([]*scripted, *replica) {
	t.Helper()
	var ups []*scripted
	for _, c := range []translate.Client{messages.Client{}, generatecontent.Client{}, chatcompletions.Client{}, presponses.Client{}} {
		name := "up-" + strings.ReplaceAll(translate.DialectName(c.Dialect()), "_", "-")
		ups = append(ups, newScripted(t, name, c, func(req *parleyv1.Request) *parleyv1.Response { return reply(name, req) }))
	}
	cfg := "upstreams:\n"
	models := "models:\n"
	for _, u := range ups {
		cfg += u.configLine()
		models += fmt.Sprintf("  - {name: m-%s, upstream: %s}\n", u.name, u.name)
	}
	r := start(t, writeConfig(t, cfg+models), t.TempDir())
	r.waitReady(t)
	return ups, r
}

// resultFor is what an upstream reads of a plain-text tool result: a
// content-generation service's function response is an object, and
// Parley sends such a result as {"output": text}.
func resultFor(u *scripted, text string) string {
	if u.client.Dialect() == parleyv1.Dialect_DIALECT_GENERATE_CONTENT {
		return `{"output":"` + text + `"}`
	}
	return text
}

// resultOf is the text of the request's last tool result and whether it
// has one.
func resultOf(req *parleyv1.Request) (string, bool) {
	msgs := req.GetMessages()
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, p := range msgs[i].GetParts() {
			if tr := p.GetToolResult(); tr != nil {
				var b strings.Builder
				for _, c := range tr.GetContent() {
					b.WriteString(c.GetText().GetText())
				}
				return b.String(), true
			}
		}
	}
	return "", false
}

// Item 6: Codex's apply_patch, a custom tool taking free text, reaches
// every upstream as a function it can call; the call comes back to Codex
// as a custom_tool_call with the patch as its input, whole and streamed,
// and its output goes back to the upstream as the call's result.
func TestAgentCustomToolRoundTrip(t *testing.T) {
	ups, r := agentUpstreams(t, func(name string, req *parleyv1.Request) *parleyv1.Response {
		if result, ok := resultOf(req); ok {
			return answer(req, []*parleyv1.Part{translate.TextPart(name + " read: " + result)}, parleyv1.FinishReason_FINISH_REASON_STOP)
		}
		args, _ := json.Marshal(map[string]string{"input": patch})
		return answer(req, []*parleyv1.Part{translate.CallPart("call_patch1", "apply_patch", string(args))}, parleyv1.FinishReason_FINISH_REASON_TOOL_USE)
	})
	cl := openai.NewClient(ooption.WithBaseURL(r.url+"/v1"), ooption.WithAPIKey("sk-local"), ooption.WithMaxRetries(0))
	const tool = `"tools":[{"type":"custom","name":"apply_patch","description":"Use the apply_patch tool to edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}}]`
	for _, u := range ups {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", u.name, stream), func(t *testing.T) {
				head := `"model":"m-` + u.name + `",` + tool
				one := responsesTurn(t, cl, `{`+head+`,"input":"Make the notes final."}`, stream)
				if len(one.Output) != 1 || one.Output[0].Type != "custom_tool_call" || one.Output[0].Input != patch || one.Output[0].Name != "apply_patch" {
					t.Fatalf("turn one: %s", one.RawJSON())
				}
				if u.client.Dialect() != parleyv1.Dialect_DIALECT_RESPONSES {
					// The upstream was offered a function with one string
					// parameter.
					if fn := u.lastRequest().GetTools()[0].GetFunction(); fn.GetName() != "apply_patch" || !strings.Contains(fn.GetParameters(), `"input"`) {
						t.Errorf("the upstream was offered %v", u.lastRequest().GetTools())
					}
				}
				call := one.Output[0]
				input := fmt.Sprintf(`[{"role":"user","content":"Make the notes final."},%s,{"type":"custom_tool_call_output","call_id":%q,"output":"Done!"}]`, call.RawJSON(), call.CallID)
				two := responsesTurn(t, cl, `{`+head+`,"input":`+input+`}`, false)
				if got, want := two.OutputText(), u.name+" read: "+resultFor(u, "Done!"); got != want {
					t.Errorf("turn two: %q, want %q", got, want)
				}
			})
		}
	}
}

// Item 7: Codex compacts its session through /v1/responses/compact; every
// upstream's model writes the summary, Codex gets one compaction item, and
// its next turn, that item first, reaches the upstream with the summary,
// then goes on with a tool round trip.
func TestAgentCompactionThenToolTurn(t *testing.T) {
	ups, r := agentUpstreams(t, func(name string, req *parleyv1.Request) *parleyv1.Response {
		if result, ok := resultOf(req); ok {
			return answer(req, []*parleyv1.Part{translate.TextPart(name + " read: " + result)}, parleyv1.FinishReason_FINISH_REASON_STOP)
		}
		if len(req.GetTools()) == 0 {
			return answer(req, []*parleyv1.Part{translate.TextPart("SUMMARY by " + name + ": the loop stops one short.")}, parleyv1.FinishReason_FINISH_REASON_STOP)
		}
		return answer(req, []*parleyv1.Part{translate.CallPart("call_sh1", "shell", `{"cmd":"go test ./..."}`)}, parleyv1.FinishReason_FINISH_REASON_TOOL_USE)
	})
	cl := openai.NewClient(ooption.WithBaseURL(r.url+"/v1"), ooption.WithAPIKey("sk-local"), ooption.WithMaxRetries(0))
	const shell = `"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]`
	for _, u := range ups {
		t.Run(u.name, func(t *testing.T) {
			history := `[{"role":"user","content":"Fix the bug in main.go."},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The loop in main.go stops one short."}]},{"role":"user","content":"Also add a test."}]`
			c, err := cl.Responses.Compact(context.Background(), responses.ResponseCompactParams{}, ooption.WithRequestBody("application/json", []byte(`{"model":"m-`+u.name+`","input":`+history+`}`)))
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			compactions := 0
			for _, it := range c.Output {
				kept = append(kept, it.RawJSON())
				if it.Type == "compaction" {
					compactions++
				}
			}
			if compactions != 1 {
				t.Fatalf("the compaction: %s", c.RawJSON())
			}
			head := `"model":"m-` + u.name + `",` + shell
			input := "[" + strings.Join(kept, ",") + `,{"role":"user","content":"Now run the tests."}]`
			one := responsesTurn(t, cl, `{`+head+`,"input":`+input+`}`, true)
			if !strings.Contains(allRequestText(u.lastRequest()), "SUMMARY by "+u.name) {
				t.Errorf("the turn after the compaction did not carry the summary: %s", u.last())
			}
			var call responses.ResponseOutputItemUnion
			for _, it := range one.Output {
				if it.Type == "function_call" {
					call = it
				}
			}
			if call.CallID == "" {
				t.Fatalf("turn one after the compaction: %s", one.RawJSON())
			}
			input = strings.TrimSuffix(input, "]") + "," + call.RawJSON() + fmt.Sprintf(`,{"type":"function_call_output","call_id":%q,"output":"ok"}]`, call.CallID)
			two := responsesTurn(t, cl, `{`+head+`,"input":`+input+`}`, false)
			if got, want := two.OutputText(), u.name+" read: "+resultFor(u, "ok"); got != want {
				t.Errorf("turn two: %q, want %q", got, want)
			}
			if !strings.Contains(allRequestText(u.lastRequest()), "SUMMARY by "+u.name) {
				t.Errorf("turn two lost the summary: %s", u.last())
			}
		})
	}
}

// allRequestText is the text of a request's instructions and turns.
func allRequestText(req *parleyv1.Request) string {
	var b strings.Builder
	for _, p := range req.GetInstructions() {
		b.WriteString(p.GetText().GetText() + "\n")
	}
	for _, m := range req.GetMessages() {
		for _, p := range m.GetParts() {
			b.WriteString(p.GetText().GetText() + "\n")
		}
	}
	return b.String()
}

var anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// Item 8: call ids another dialect refuses. An upstream whose ids break
// the messages dialect's pattern (functions.get_weather:0, as some chat
// services give): Claude Code and Codex get ids their services would
// accept, and the upstream gets its own back on the next turn. (Ids past
// the responses dialect's 64 characters, toward a responses service, are
// pinned in translate/cross.)
func TestAgentCallIDsMapBack(t *testing.T) {
	ids := map[string]string{"up-messages": "toolu_01Plain", "up-generate-content": "fc-8h2k1x9q", "up-chat-completions": "functions.get_weather:0", "up-responses": "call_RsAbc123"}
	ups, r := agentUpstreams(t, func(name string, req *parleyv1.Request) *parleyv1.Response {
		if result, ok := resultOf(req); ok {
			return answer(req, []*parleyv1.Part{translate.TextPart(name + " read: " + result)}, parleyv1.FinishReason_FINISH_REASON_STOP)
		}
		return answer(req, []*parleyv1.Part{translate.CallPart(ids[name], "get_weather", `{"city":"Paris"}`)}, parleyv1.FinishReason_FINISH_REASON_TOOL_USE)
	})
	ac := anthropic.NewClient(aoption.WithBaseURL(r.url), aoption.WithAPIKey("sk-local"), aoption.WithMaxRetries(0))
	oc := openai.NewClient(ooption.WithBaseURL(r.url+"/v1"), ooption.WithAPIKey("sk-local"), ooption.WithMaxRetries(0))
	for _, u := range ups {
		own := ids[u.name]
		t.Run(u.name+"/anthropic", func(t *testing.T) {
			head := `"model":"m-` + u.name + `","max_tokens":1024,` + weatherTool
			msg := anthropicTurn(t, ac, `{`+head+`,"messages":[{"role":"user","content":"weather?"}]}`, true)
			var id string
			for _, b := range msg.Content {
				if b.Type == "tool_use" {
					id = b.ID
				}
			}
			if !anthropicID.MatchString(id) {
				t.Fatalf("Claude Code got the call id %q", id)
			}
			held, _ := json.Marshal(msg.ToParam())
			two := anthropicTurn(t, ac, fmt.Sprintf(`{%s,"messages":[{"role":"user","content":"weather?"},%s,{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"rain"}]}]}`, head, held, id), false)
			if got := messageText(two); got != u.name+" read: "+resultFor(u, "rain") {
				t.Errorf("turn two: %q", got)
			}
			checkOwnIDBack(t, u, own)
		})
		t.Run(u.name+"/responses", func(t *testing.T) {
			head := `"model":"m-` + u.name + `",` + respWeatherTool
			one := responsesTurn(t, oc, `{`+head+`,"input":"weather?"}`, true)
			var call responses.ResponseOutputItemUnion
			for _, it := range one.Output {
				if it.Type == "function_call" {
					call = it
				}
			}
			if call.CallID == "" || len(call.CallID) > 64 {
				t.Fatalf("Codex got the call id %q", call.CallID)
			}
			input := fmt.Sprintf(`[{"role":"user","content":"weather?"},%s,{"type":"function_call_output","call_id":%q,"output":"rain"}]`, call.RawJSON(), call.CallID)
			two := responsesTurn(t, oc, `{`+head+`,"input":`+input+`}`, false)
			if got := two.OutputText(); got != u.name+" read: "+resultFor(u, "rain") {
				t.Errorf("turn two: %q", got)
			}
			checkOwnIDBack(t, u, own)
		})
	}
}

// checkOwnIDBack checks that the upstream's latest request holds its own
// call id, on the call and on its result.
func checkOwnIDBack(t *testing.T, u *scripted, own string) {
	t.Helper()
	var call, result string
	for _, m := range u.lastRequest().GetMessages() {
		for _, p := range m.GetParts() {
			if tc := p.GetToolCall(); tc != nil {
				call = tc.GetId()
			}
			if tr := p.GetToolResult(); tr != nil {
				result = tr.GetCallId()
			}
		}
	}
	if call != own || result != own {
		t.Errorf("the upstream got the call as %q and its result as %q, want its own %q", call, result, own)
	}
}

// Item 9: an image inside a tool result (a screenshot tool's), from
// Claude Code, reaches every upstream: inside the result where the dialect
// can hold it, else in a user turn right after, named; never dropped.
func TestAgentImagesInToolResults(t *testing.T) {
	ups, r := agentUpstreams(t, func(name string, req *parleyv1.Request) *parleyv1.Response {
		return answer(req, []*parleyv1.Part{translate.TextPart(name + " saw it")}, parleyv1.FinishReason_FINISH_REASON_STOP)
	})
	ac := anthropic.NewClient(aoption.WithBaseURL(r.url), aoption.WithAPIKey("sk-local"), aoption.WithMaxRetries(0))
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	for _, u := range ups {
		t.Run(u.name, func(t *testing.T) {
			body := `{"model":"m-` + u.name + `","max_tokens":1024,"tools":[{"name":"screenshot","input_schema":{"type":"object"}}],"messages":[` +
				`{"role":"user","content":"What is on screen?"},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_shot1","name":"screenshot","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_shot1","content":[{"type":"text","text":"the screen"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + png + `"}}]}]}]}`
			msg, err := ac.Messages.New(context.Background(), anthropic.MessageNewParams{}, aoption.WithRequestBody("application/json", []byte(body)))
			if err != nil {
				t.Fatal(err)
			}
			if got := messageText(msg); got != u.name+" saw it" {
				t.Errorf("the answer: %q", got)
			}
			if !strings.Contains(u.last(), png) {
				t.Errorf("the image did not reach the upstream: %s", u.last())
			}
		})
	}
}
