package cross_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"google.golang.org/genai"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
	"github.com/parleyhq/parley/translate/sse"
)

// These tests follow a conversation across two turns through the
// official SDKs: the reply of one turn, as the client's SDK holds it, is
// sent back in the next request, which must reach the upstream with what
// that upstream made (its signature, its call ids) intact, and must not
// carry what another upstream made to a service that would reject it.

// upstreamBody encodes a request for an upstream and returns its body as
// a generic document.
func upstreamBody(t *testing.T, up translate.Upstream, req *parleyv1.Request) map[string]any {
	t.Helper()
	out, err := up.EncodeRequest(req, translate.Target{Model: "m", APIKey: "k"})
	if err != nil {
		t.Fatalf("encode toward %s: %v", translate.DialectName(up.Dialect()), err)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A messages client served by a content-generation upstream: the
// upstream's thoughtSignature on its function call comes back with the
// call on the next turn; toward a messages upstream it is not sent.
func TestSignatureSurvivesAMessagesClient(t *testing.T) {
	stream, err := os.ReadFile("../../testdata/generate_content/stream_function_call_signature/stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					ThoughtSignature string `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	line, _, _ := strings.Cut(strings.TrimPrefix(string(stream), "data: "), "\n")
	if err := json.Unmarshal([]byte(line), &first); err != nil {
		t.Fatal(err)
	}
	want := first.Candidates[0].Content.Parts[0].ThoughtSignature

	// Turn one: the upstream's stream, rendered for the messages client
	// and accumulated by its SDK.
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := messages.Client{}.NewStreamEncoder(&parleyv1.Request{})
	for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_GENERATE_CONTENT, bytes.NewReader(stream), generatecontent.Upstream{}.NewStreamDecoder(translate.Target{Model: "gemini-2.5-flash"}), translate.StreamLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(w, ev); err != nil {
			t.Fatal(err)
		}
	}
	msg := sdkcheck.MessagesStream(t, buf.Bytes())
	var callID string
	for _, b := range msg.Content {
		if b.Type == "tool_use" {
			callID = b.ID
		}
	}
	if msg.StopReason != "tool_use" || callID == "" {
		t.Fatalf("turn one: stop %q, call %q", msg.StopReason, callID)
	}

	// Turn two, as the SDK sends it.
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("What's the weather in San Francisco?")),
			msg.ToParam(),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(callID, "68°F and foggy", false)),
		},
	}
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: body})
	if err != nil {
		t.Fatal(err)
	}

	gc := upstreamBody(t, generatecontent.Upstream{}, req)
	contents := gc["contents"].([]any)
	model := contents[1].(map[string]any)["parts"].([]any)
	var gotSig string
	for _, p := range model {
		pm := p.(map[string]any)
		if fc, ok := pm["functionCall"].(map[string]any); ok && fc["name"] == "weather" {
			gotSig, _ = pm["thoughtSignature"].(string)
		}
	}
	if gotSig != want {
		t.Errorf("the call went back to its upstream with signature %q, want the upstream's own %q", gotSig, want)
	}
	fr := contents[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)
	if fr["name"] != "weather" {
		t.Errorf("the result went back as %v", fr)
	}

	m := upstreamBody(t, messages.Upstream{}, req)
	for _, b := range m["messages"].([]any)[1].(map[string]any)["content"].([]any) {
		if bm := b.(map[string]any); bm["type"] == "thinking" || bm["type"] == "redacted_thinking" {
			t.Errorf("a signature made by another upstream went to a messages upstream: %v", bm)
		}
	}
}

// A content-generation client served by a messages upstream: the
// upstream's thinking signature and call id come back on the next turn;
// toward a content-generation upstream the foreign signature is not sent.
func TestSignatureSurvivesAContentGenerationClient(t *testing.T) {
	body, err := os.ReadFile("../../testdata/messages/response_thinking_tool_call/response.json")
	if err != nil {
		t.Fatal(err)
	}
	var orig struct {
		Content []struct{ Type, Signature, ID, Thinking string }
	}
	if err := json.Unmarshal(body, &orig); err != nil {
		t.Fatal(err)
	}

	resp, err := messages.Upstream{}.DecodeResponse(translate.Target{Model: "claude-sonnet-4-6"}, body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := generatecontent.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	var r genai.GenerateContentResponse
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	turn := r.Candidates[0].Content
	var call *genai.FunctionCall
	for _, p := range turn.Parts {
		if p.FunctionCall != nil {
			call = p.FunctionCall
		}
	}
	if call == nil {
		t.Fatal("turn one has no function call")
	}
	next, err := json.Marshal(map[string]any{"contents": []*genai.Content{
		genai.NewContentFromText("Check the sandbox.", genai.RoleUser),
		turn,
		genai.NewContentFromFunctionResponse(call.Name, map[string]any{"output": "no errors"}, genai.RoleUser),
	}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "models/gemini-2.5-flash", Body: next})
	if err != nil {
		t.Fatal(err)
	}

	m := upstreamBody(t, messages.Upstream{}, req)
	blocks := m["messages"].([]any)[1].(map[string]any)["content"].([]any)
	first := blocks[0].(map[string]any)
	if first["type"] != "thinking" || first["signature"] != orig.Content[0].Signature || first["thinking"] != orig.Content[0].Thinking {
		t.Errorf("the thinking went back as %v, want the upstream's own block", first)
	}
	use := blocks[1].(map[string]any)
	if use["type"] != "tool_use" || use["id"] != orig.Content[1].ID {
		t.Errorf("the call went back as %v, want id %s", use, orig.Content[1].ID)
	}
	res := m["messages"].([]any)[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	if res["tool_use_id"] != orig.Content[1].ID {
		t.Errorf("the result went back as %v", res)
	}

	gc := upstreamBody(t, generatecontent.Upstream{}, req)
	for _, p := range gc["contents"].([]any)[1].(map[string]any)["parts"].([]any) {
		pm := p.(map[string]any)
		sig, _ := pm["thoughtSignature"].(string)
		raw, _ := base64.StdEncoding.DecodeString(sig)
		if pm["thought"] == true || sig != "" && !bytes.Equal(raw, []byte("skip_thought_signature_validator")) {
			t.Errorf("what another upstream made went to a content-generation upstream: %v", pm)
		}
	}
}

// replyToMessagesClient is an upstream's recorded reply of a cross-table
// scenario (edited by edit, when given), streamed and whole, as a messages
// client's SDK holds it; the upstream is t.
func replyToMessagesClient(t *testing.T, scenario string, up translate.Upstream, target translate.Target, edit func([]byte) []byte) (streamed, whole anthropic.Message) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile("../../testdata/cross_table/" + scenario + "/" + translate.DialectName(up.Dialect()) + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b = edit(b)
		}
		return b
	}
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := messages.Client{}.NewStreamEncoder(&parleyv1.Request{})
	for ev, err := range translate.DecodeStream(up.Dialect(), bytes.NewReader(read("stream.sse")), up.NewStreamDecoder(target), translate.StreamLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(w, ev); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := up.DecodeResponse(target, read("response.json"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := messages.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	return sdkcheck.MessagesStream(t, buf.Bytes()), sdkcheck.MessagesReply(t, body)
}

// nextMessagesTurn is the request a messages client's SDK sends after
// reply, with then as the user's next turn.
func nextMessagesTurn(t *testing.T, reply anthropic.Message, then anthropic.MessageParam) *parleyv1.Request {
	t.Helper()
	body, err := json.Marshal(anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Go on.")), reply.ToParam(), then},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// A messages client served by an upstream whose reasoning carries no
// signature and no encrypted content (a responses service's summaries,
// here) gets a signature on every thinking block all the same, whole and
// streamed, since the dialect requires one and clients send it back
// (issue 18, item 3; guide §8 item 18). Sent back, the block is reasoning
// without a signature: never sent to a messages upstream as if that
// service had signed it.
func TestUnsignedThinkingGetsASignature(t *testing.T) {
	encrypted := regexp.MustCompile(`"encrypted_content": ?"[^"]*"`)
	streamed, whole := replyToMessagesClient(t, "reasoning", responses.Upstream{}, translate.Target{Model: "o3"}, func(b []byte) []byte {
		return encrypted.ReplaceAll(b, []byte(`"encrypted_content":null`))
	})
	for name, msg := range map[string]anthropic.Message{"streamed": streamed, "whole": whole} {
		thought := false
		for _, b := range msg.Content {
			if b.Type != "thinking" {
				continue
			}
			thought = true
			if b.Signature == "" || b.Thinking == "" {
				t.Errorf("%s: a thinking block with signature %q and thinking %q", name, b.Signature, b.Thinking)
			}
		}
		if !thought {
			t.Fatalf("%s: no thinking block in %+v", name, msg.Content)
		}
		req := nextMessagesTurn(t, msg, anthropic.NewUserMessage(anthropic.NewTextBlock("And 3 + 3?")))
		for _, p := range req.GetMessages()[1].GetParts() {
			if r := p.GetReasoning(); r != nil && (p.GetSignature() != nil || r.GetEncryptedContent() != nil || r.GetText() == "") {
				t.Errorf("%s: the thinking came back as %v, want its text without a signature", name, p)
			}
		}
		m := upstreamBody(t, messages.Upstream{}, req)
		for _, b := range m["messages"].([]any)[1].(map[string]any)["content"].([]any) {
			if bm := b.(map[string]any); bm["type"] == "thinking" || bm["type"] == "redacted_thinking" {
				t.Errorf("%s: unsigned thinking went to a messages upstream: %v", name, bm)
			}
		}
	}
}

// A thinking chat service (DeepSeek's reasoning_content) serving a
// messages client: its reasoning on a tool-call turn comes back to it as
// reasoning_content when the client answers the call, which such services
// require within a tool loop (issue 18, item 10; guide §8 item 16). It
// goes to no other upstream: not to another chat upstream, which did not
// write it, and not to a messages upstream.
func TestChatReasoningReturnsToItsMaker(t *testing.T) {
	const thought = "The user wants the weather; call get_weather."
	maker := translate.Target{Model: "deepseek-chat", Upstream: "deepseek"}
	streamed, whole := replyToMessagesClient(t, "tool", chatcompletions.Upstream{}, maker, func(b []byte) []byte {
		b = bytes.Replace(b, []byte(`"role": "assistant",`), []byte(`"role": "assistant", "reasoning_content": "`+thought+`",`), 1)
		return bytes.Replace(b, []byte(`"delta":{"role":"assistant","content":""}`), []byte(`"delta":{"role":"assistant","reasoning_content":"`+thought+`"}`), 1)
	})
	for name, msg := range map[string]anthropic.Message{"streamed": streamed, "whole": whole} {
		var id string
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				id = b.ID
			}
		}
		req := nextMessagesTurn(t, msg, anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, "18°C", false)))
		for target, want := range map[string]string{"deepseek": thought, "another": ""} {
			out, err := chatcompletions.Upstream{}.EncodeRequest(req, translate.Target{Model: "deepseek-chat", Upstream: target})
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				Messages []struct {
					Role             string  `json:"role"`
					ReasoningContent *string `json:"reasoning_content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(out.Body, &c); err != nil {
				t.Fatal(err)
			}
			got := ""
			if rc := c.Messages[1].ReasoningContent; rc != nil {
				got = *rc
			}
			if c.Messages[1].Role != "assistant" || got != want {
				t.Errorf("%s, toward chat upstream %s: the tool-call turn's reasoning_content %q, want %q", name, target, got, want)
			}
		}
		m := upstreamBody(t, messages.Upstream{}, req)
		for _, b := range m["messages"].([]any)[1].(map[string]any)["content"].([]any) {
			if bm := b.(map[string]any); bm["type"] == "thinking" || bm["type"] == "redacted_thinking" {
				t.Errorf("%s: a chat service's reasoning went to a messages upstream: %v", name, bm)
			}
		}
	}
	// Without tool calls the reasoning stays out: services refuse it or
	// ignore it there.
	streamed, _ = replyToMessagesClient(t, "reasoning", chatcompletions.Upstream{}, maker, nil)
	req := nextMessagesTurn(t, streamed, anthropic.NewUserMessage(anthropic.NewTextBlock("And 3 + 3?")))
	out, err := chatcompletions.Upstream{}.EncodeRequest(req, maker)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out.Body), "reasoning_content") {
		t.Errorf("reasoning went back on a turn without tool calls: %s", out.Body)
	}
}

// A tool-call id that the messages dialect refuses ("functions.Bash:0",
// as some chat services make them) reaches a messages client as an id it
// takes, whole and streamed, and comes back to the chat upstream as the
// upstream's own id; toward a messages upstream the history carries ids
// that service takes (issue 18, item 8; guide §8 item 14).
func TestToolCallIDsMapBackAcrossDialects(t *testing.T) {
	const foreign = "functions.get_weather:0"
	streamed, whole := replyToMessagesClient(t, "tool", chatcompletions.Upstream{}, translate.Target{Model: "gpt-4.1"}, func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("call_c01"), []byte(foreign))
	})
	up := chatcompletions.Upstream{}

	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	for name, msg := range map[string]anthropic.Message{"streamed": streamed, "whole": whole} {
		var id string
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				id = b.ID
			}
		}
		if !valid.MatchString(id) {
			t.Fatalf("%s: the client got tool_use id %q, which its dialect refuses", name, id)
		}
		next, err := json.Marshal(anthropic.MessageNewParams{
			Model: "claude-sonnet-4-5", MaxTokens: 1024,
			Messages: []anthropic.MessageParam{
				anthropic.NewUserMessage(anthropic.NewTextBlock("What's the weather in Paris?")),
				msg.ToParam(),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, "18°C", false)),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: next})
		if err != nil {
			t.Fatal(err)
		}
		c := upstreamBody(t, up, req)
		msgs := c["messages"].([]any)
		call := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["id"]
		result := msgs[2].(map[string]any)["tool_call_id"]
		if call != foreign || result != foreign {
			t.Errorf("%s: the chat upstream got call %v and result %v, want its own %q", name, call, result, foreign)
		}
		m := upstreamBody(t, messages.Upstream{}, req)
		mm := m["messages"].([]any)
		var use, res string
		for _, b := range mm[1].(map[string]any)["content"].([]any) {
			if bm := b.(map[string]any); bm["type"] == "tool_use" {
				use, _ = bm["id"].(string)
			}
		}
		res, _ = mm[2].(map[string]any)["content"].([]any)[0].(map[string]any)["tool_use_id"].(string)
		if !valid.MatchString(use) || use != res {
			t.Errorf("%s: toward a messages upstream, tool_use %q and tool_result %q", name, use, res)
		}
	}
}

// Claude's signed thinking on Amazon Bedrock's Converse API, served to a
// messages client (Claude Code on Bedrock): the thinking block the SDK
// holds comes back on the next turn and reaches the same Bedrock upstream
// with the signature Bedrock made, whole and streamed (guide §8 item 2).
// Toward another Bedrock account or a messages upstream, neither of which
// made it and both of which would refuse it, it is left out.
func TestConverseSignatureComesBack(t *testing.T) {
	const signature = "EqQBCkgIARABGAIiQL2mU8Q2nO1gG0bK9lQ0n3y3n5bW"
	maker := translate.Target{Model: "anthropic.claude-sonnet-4-5-20250929-v1:0", Upstream: "bedrock-east"}
	streamed, whole := replyToMessagesClient(t, "reasoning", converse.Upstream{}, maker, nil)
	for name, msg := range map[string]anthropic.Message{"streamed": streamed, "whole": whole} {
		if len(msg.Content) == 0 || msg.Content[0].Type != "thinking" || msg.Content[0].Signature == "" {
			t.Fatalf("%s: the client got %+v, want a signed thinking block first", name, msg.Content)
		}
		req := nextMessagesTurn(t, msg, anthropic.NewUserMessage(anthropic.NewTextBlock("And 3 + 3?")))
		for upstream, want := range map[string]string{"bedrock-east": signature, "bedrock-west": ""} {
			out, err := converse.Upstream{}.EncodeRequest(req, translate.Target{Model: maker.Model, Upstream: upstream})
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				Messages []struct {
					Content []struct {
						ReasoningContent *struct {
							ReasoningText struct{ Text, Signature string } `json:"reasoningText"`
						} `json:"reasoningContent"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(out.Body, &c); err != nil {
				t.Fatal(err)
			}
			got, text := "", ""
			for _, b := range c.Messages[1].Content {
				if rc := b.ReasoningContent; rc != nil {
					got, text = rc.ReasoningText.Signature, rc.ReasoningText.Text
				}
			}
			if got != want || want != "" && text != "2 and 2 make 4." {
				t.Errorf("%s, toward %s: reasoning %q signed %q, want the signature %q", name, upstream, text, got, want)
			}
		}
		m := upstreamBody(t, messages.Upstream{}, req)
		for _, b := range m["messages"].([]any)[1].(map[string]any)["content"].([]any) {
			if bm := b.(map[string]any); bm["type"] == "thinking" || bm["type"] == "redacted_thinking" {
				t.Errorf("%s: Bedrock's signature went to a messages upstream: %v", name, bm)
			}
		}
	}
}

// A responses service's reasoning item, served to a messages client
// (Claude Code on an OpenAI model) and to a content-generation client
// (the Gemini CLI likewise), comes back on the next turn to the service
// that made it as the item it was: its id and its encrypted content,
// which the service accepts only together (issue 23). Whole and streamed
// for the messages client, through its SDK.
func TestReasoningItemsComeBackThroughOtherClients(t *testing.T) {
	const id = "rs_r01"
	maker := translate.Target{Model: "o3", Upstream: "openai"}
	check := func(what string, req *parleyv1.Request) {
		t.Helper()
		out, err := responses.Upstream{}.EncodeRequest(req, maker)
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Input []struct {
				Type             string  `json:"type"`
				ID               string  `json:"id"`
				EncryptedContent *string `json:"encrypted_content"`
			} `json:"input"`
		}
		if err := json.Unmarshal(out.Body, &w); err != nil {
			t.Fatal(err)
		}
		for _, it := range w.Input {
			if it.Type == "reasoning" {
				if it.ID != id || it.EncryptedContent == nil || !strings.HasPrefix(*it.EncryptedContent, "gAAAAAB") {
					t.Errorf("%s: the reasoning item went back as %+v", what, it)
				}
				return
			}
		}
		t.Errorf("%s: no reasoning item went back to its maker: %s", what, out.Body)
	}
	streamed, whole := replyToMessagesClient(t, "reasoning", responses.Upstream{}, maker, nil)
	for name, msg := range map[string]anthropic.Message{"messages streamed": streamed, "messages whole": whole} {
		check(name, nextMessagesTurn(t, msg, anthropic.NewUserMessage(anthropic.NewTextBlock("And 3 + 3?"))))
	}

	body, err := os.ReadFile("../../testdata/cross_table/reasoning/responses/response.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := responses.Upstream{}.DecodeResponse(maker, body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := generatecontent.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	var r genai.GenerateContentResponse
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	next, err := json.Marshal(map[string]any{"contents": []*genai.Content{
		genai.NewContentFromText("What is 2+2?", genai.RoleUser),
		r.Candidates[0].Content,
		genai.NewContentFromText("And 3 + 3?", genai.RoleUser),
	}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "models/o3", Body: next})
	if err != nil {
		t.Fatal(err)
	}
	check("content generation", req)
}

// A call id longer than the responses service takes (its call_id is at
// most 64 characters; some services make longer ones) reaches a responses
// upstream shortened, the same for the call and its output so that they
// still pair, and within the limit; a short id goes as it is (issue 18,
// item 8; guide §8 item 14).
func TestLongCallIDsTowardResponses(t *testing.T) {
	long := "call_" + strings.Repeat("x9", 40)
	req := &parleyv1.Request{Model: "m", Messages: []*parleyv1.Message{
		translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Weather?")),
		translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, translate.CallPart(long, "get_weather", `{"city":"Paris"}`), translate.CallPart("call_short", "get_weather", `{"city":"Rome"}`)),
		translate.NewMessage(parleyv1.Role_ROLE_TOOL, translate.ResultPart(long, "rain", false), translate.ResultPart("call_short", "sun", false)),
	}}
	out, err := responses.Upstream{}.EncodeRequest(req, translate.Target{Model: "o3"})
	if err != nil {
		t.Fatal(err)
	}
	sdkcheck.ResponsesRequest(t, out.Body)
	var w struct {
		Input []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		} `json:"input"`
	}
	if err := json.Unmarshal(out.Body, &w); err != nil {
		t.Fatal(err)
	}
	ids := map[string][]string{}
	for _, it := range w.Input {
		if it.CallID != "" {
			ids[it.Type] = append(ids[it.Type], it.CallID)
			if len(it.CallID) > 64 {
				t.Errorf("%s call_id %q is over 64 characters", it.Type, it.CallID)
			}
		}
	}
	calls, outs := ids["function_call"], ids["function_call_output"]
	if len(calls) != 2 || len(outs) != 2 || calls[0] != outs[0] || calls[1] != "call_short" || outs[1] != "call_short" || calls[0] == long {
		t.Errorf("calls %v, outputs %v", calls, outs)
	}
}
