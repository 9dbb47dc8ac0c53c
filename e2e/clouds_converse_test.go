package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/parleyhq/parley/cloud/cloudtest"
	"github.com/parleyhq/parley/translate/converse"
)

// Clients of every dialect served by Claude through Bedrock's Converse
// API, which Parley speaks only toward the cloud. The fake of the API
// checks the service's rules and every request's SigV4 signature.

const (
	converseModel = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	converseWho   = "bedrock " + converseModel
	// conversePath is the model's path as the AWS SDKs send it: the id
	// escaped as one segment, ":" included.
	conversePath = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/"
)

// turn is what an official SDK made of a reply: its text, its tool calls,
// whether it ended in the dialect's tool stop, and the usage when the SDK
// exposes it.
type turn struct {
	text     string
	calls    []toolCall
	toolStop bool
	in, out  int64
}

type toolCall struct{ id, name, args string }

// The weather tool (weatherTool) in the other dialects' forms.
const (
	weatherSchema      = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	chatWeatherTool    = `"tools":[{"type":"function","function":{"name":"get_weather","description":"The weather in a city","parameters":` + weatherSchema + `}}]`
	respWeatherTool    = `"tools":[{"type":"function","name":"get_weather","description":"The weather in a city","parameters":` + weatherSchema + `}]`
	converseToolResult = "sunny, 21C"
)

var genaiWeatherTool = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
	Name:        "get_weather",
	Description: "The weather in a city",
	Parameters: &genai.Schema{
		Type:       genai.TypeObject,
		Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}},
		Required:   []string{"city"},
	},
}}}}

// viaAnthropic sends a messages body through the Anthropic SDK.
func (c *clouds) viaAnthropic(t *testing.T, model, body string, stream bool) turn {
	t.Helper()
	msg := c.claude(t, model, body, stream)
	tr := turn{text: messageText(msg), toolStop: msg.StopReason == anthropic.StopReasonToolUse, in: msg.Usage.InputTokens, out: msg.Usage.OutputTokens}
	for _, b := range msg.Content {
		if b.Type == "tool_use" {
			tr.calls = append(tr.calls, toolCall{b.ID, b.Name, string(b.Input)})
		}
	}
	return tr
}

// viaChat sends a chat-completions body (without its model) through the
// OpenAI SDK, a stream read through the SDK's accumulator.
func (c *clouds) viaChat(t *testing.T, model, body string, stream bool) turn {
	t.Helper()
	cl := c.openai()
	b := strings.Replace(body, "{", `{"model":"`+model+`",`, 1)
	var cc *openai.ChatCompletion
	if stream {
		// Usage in a chat stream comes only to clients that ask for it.
		b = strings.Replace(b, "{", `{"stream":true,"stream_options":{"include_usage":true},`, 1)
		s := cl.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{}, ooption.WithRequestBody("application/json", []byte(b)))
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			if !acc.AddChunk(s.Current()) {
				t.Fatalf("the SDK's accumulator refused a chunk: %s", s.Current().RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("%s chat stream: %v", model, err)
		}
		cc = &acc.ChatCompletion
	} else {
		var err error
		if cc, err = cl.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{}, ooption.WithRequestBody("application/json", []byte(b))); err != nil {
			t.Fatalf("%s chat: %v", model, err)
		}
	}
	if len(cc.Choices) != 1 {
		t.Fatalf("%d choices in %s", len(cc.Choices), cc.RawJSON())
	}
	ch := cc.Choices[0]
	tr := turn{text: ch.Message.Content, toolStop: ch.FinishReason == "tool_calls", in: cc.Usage.PromptTokens, out: cc.Usage.CompletionTokens}
	for _, tc := range ch.Message.ToolCalls {
		tr.calls = append(tr.calls, toolCall{tc.ID, tc.Function.Name, tc.Function.Arguments})
	}
	return tr
}

// viaResponses sends a responses body (without its model) through the
// OpenAI SDK, a stream rebuilt by the SDK's accumulator.
func (c *clouds) viaResponses(t *testing.T, model, body string, stream bool) turn {
	t.Helper()
	cl := c.openai()
	b := strings.Replace(body, "{", `{"model":"`+model+`",`, 1)
	var r *responses.Response
	if stream {
		b = strings.Replace(b, "{", `{"stream":true,`, 1)
		s := cl.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{}, ooption.WithRequestBody("application/json", []byte(b)))
		var acc responses.ResponseAccumulator
		for s.Next() {
			var ev responses.ResponsesServerEventUnion
			if err := json.Unmarshal([]byte(s.Current().RawJSON()), &ev); err != nil {
				t.Fatal(err)
			}
			if err := acc.AddEvent(ev); err != nil {
				t.Fatalf("the SDK's accumulator refused %q: %v", s.Current().Type, err)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("%s responses stream: %v", model, err)
		}
		var err error
		if r, err = acc.ReconstructedResponse(); err != nil {
			t.Fatalf("the SDK's accumulator built no response: %v", err)
		}
	} else {
		var err error
		if r, err = cl.Responses.New(context.Background(), responses.ResponseNewParams{}, ooption.WithRequestBody("application/json", []byte(b))); err != nil {
			t.Fatalf("%s responses: %v", model, err)
		}
	}
	tr := turn{in: r.Usage.InputTokens, out: r.Usage.OutputTokens}
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			for _, p := range item.Content {
				tr.text += p.Text
			}
		case "function_call":
			tr.calls = append(tr.calls, toolCall{item.CallID, item.Name, item.Arguments.OfString})
			tr.toolStop = true
		}
	}
	return tr
}

// viaGenAI asks through the Google Gen AI SDK, whole or streamed.
func (c *clouds) viaGenAI(t *testing.T, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig, stream bool) (turn, []*genai.FunctionCall) {
	t.Helper()
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "sk-local", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: c.r.url}})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []*genai.GenerateContentResponse
	if stream {
		for ch, err := range gc.Models.GenerateContentStream(context.Background(), model, contents, cfg) {
			if err != nil {
				t.Fatalf("%s genai stream: %v", model, err)
			}
			chunks = append(chunks, ch)
		}
	} else {
		r, err := gc.Models.GenerateContent(context.Background(), model, contents, cfg)
		if err != nil {
			t.Fatalf("%s genai: %v", model, err)
		}
		chunks = append(chunks, r)
	}
	var tr turn
	var fcs []*genai.FunctionCall
	for _, ch := range chunks {
		for _, cand := range ch.Candidates {
			if cand.Content == nil {
				continue
			}
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					args, _ := json.Marshal(p.FunctionCall.Args)
					tr.calls = append(tr.calls, toolCall{p.FunctionCall.ID, p.FunctionCall.Name, string(args)})
					fcs = append(fcs, p.FunctionCall)
					// A functionCall part is the dialect's tool stop: the
					// finish reason of a call is STOP.
					tr.toolStop = true
				case !p.Thought:
					tr.text += p.Text
				}
			}
		}
		if u := ch.UsageMetadata; u != nil {
			tr.in, tr.out = int64(u.PromptTokenCount), int64(u.CandidatesTokenCount)
		}
	}
	return tr, fcs
}

// converseOnly checks that the Bedrock fake saw only the Converse
// operations of Claude's model (and CountTokens when counts is set),
// each request signed with the deployment's credentials: the fake
// refuses a wrong signature, so a request that got an answer was signed.
func (c *clouds) converseOnly(t *testing.T, counts bool) {
	t.Helper()
	seen := c.bedrock.Seen()
	if len(seen) == 0 {
		t.Fatal("the Bedrock fake saw no request")
	}
	for _, s := range seen {
		op, ok := strings.CutPrefix(s.Path, conversePath)
		if !ok || (op != "converse" && op != "converse-stream" && (!counts || op != "count-tokens")) {
			t.Errorf("bedrock path %s", s.Path)
		}
		if !strings.HasPrefix(s.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+cloudCreds.AccessKeyID+"/") ||
			s.Header.Get("X-Amz-Security-Token") != cloudCreds.SessionToken {
			t.Errorf("%s was not signed with the deployment's credentials: %v", s.Path, s.Header)
		}
	}
}

// Every client dialect, whole and streamed, gets Claude's answer from the
// Converse API with its usage.
func TestCloudsConverseEveryClient(t *testing.T) {
	c := startClouds(t)
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			got := map[string]turn{
				"anthropic": c.viaAnthropic(t, "claude-converse", `{"messages":[{"role":"user","content":"hello from claude code"}]}`, stream),
				"chat":      c.viaChat(t, "claude-converse", `{"messages":[{"role":"user","content":"hello from chat"}]}`, stream),
				"responses": c.viaResponses(t, "claude-converse", `{"input":"hello from codex"}`, stream),
			}
			got["genai"], _ = c.viaGenAI(t, "claude-converse", genai.Text("hello from gemini cli"), nil, stream)
			for client, prompt := range map[string]string{"anthropic": "hello from claude code", "chat": "hello from chat", "responses": "hello from codex", "genai": "hello from gemini cli"} {
				tr := got[client]
				if tr.text != converseWho+": "+prompt || len(tr.calls) != 0 || tr.toolStop {
					t.Errorf("%s: %+v", client, tr)
				}
				if tr.in != 11 || tr.out != 7 {
					t.Errorf("%s: usage %d in, %d out, want 11 and 7", client, tr.in, tr.out)
				}
			}
		})
	}
	c.converseOnly(t, false)
	c.noSecretsIn(t, c.r.logs.String())
}

// A tool round trip through each official SDK: the model calls the tool,
// the client sends the result back, the model reads it.
func TestCloudsConverseToolRoundTrip(t *testing.T) {
	c := startClouds(t)
	const ask = "weather in Paris?"
	// Each dialect's first turn, and its second built from the call the
	// first returned; want is what the model reads of the result.
	for _, tc := range []struct {
		client string
		first  func(t *testing.T, stream bool) turn
		second func(t *testing.T, call toolCall, stream bool) turn
		want   string
	}{
		{
			client: "anthropic",
			first: func(t *testing.T, stream bool) turn {
				return c.viaAnthropic(t, "claude-converse", `{"messages":[{"role":"user","content":"`+ask+`"}],`+weatherTool+`}`, stream)
			},
			second: func(t *testing.T, call toolCall, stream bool) turn {
				return c.viaAnthropic(t, "claude-converse", fmt.Sprintf(`{"messages":[{"role":"user","content":%q},{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":%s}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}],%s}`,
					ask, call.id, call.name, call.args, call.id, converseToolResult, weatherTool), stream)
			},
			want: converseToolResult,
		},
		{
			client: "chat",
			first: func(t *testing.T, stream bool) turn {
				return c.viaChat(t, "claude-converse", `{"messages":[{"role":"user","content":"`+ask+`"}],`+chatWeatherTool+`}`, stream)
			},
			second: func(t *testing.T, call toolCall, stream bool) turn {
				return c.viaChat(t, "claude-converse", fmt.Sprintf(`{"messages":[{"role":"user","content":%q},{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}]},{"role":"tool","tool_call_id":%q,"content":%q}],%s}`,
					ask, call.id, call.name, call.args, call.id, converseToolResult, chatWeatherTool), stream)
			},
			want: converseToolResult,
		},
		{
			client: "responses",
			first: func(t *testing.T, stream bool) turn {
				return c.viaResponses(t, "claude-converse", `{"input":"`+ask+`",`+respWeatherTool+`}`, stream)
			},
			second: func(t *testing.T, call toolCall, stream bool) turn {
				return c.viaResponses(t, "claude-converse", fmt.Sprintf(`{"input":[{"role":"user","content":%q},{"type":"function_call","call_id":%q,"name":%q,"arguments":%q},{"type":"function_call_output","call_id":%q,"output":%q}],%s}`,
					ask, call.id, call.name, call.args, call.id, converseToolResult, respWeatherTool), stream)
			},
			want: converseToolResult,
		},
		{
			client: "genai",
			first: func(t *testing.T, stream bool) turn {
				tr, _ := c.viaGenAI(t, "claude-converse", genai.Text(ask), &genai.GenerateContentConfig{Tools: genaiWeatherTool}, stream)
				return tr
			},
			second: func(t *testing.T, call toolCall, stream bool) turn {
				var args map[string]any
				if err := json.Unmarshal([]byte(call.args), &args); err != nil {
					t.Fatal(err)
				}
				contents := []*genai.Content{
					genai.NewContentFromText(ask, genai.RoleUser),
					{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: call.id, Name: call.name, Args: args}}}},
					{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: call.id, Name: call.name, Response: map[string]any{"result": converseToolResult}}}}},
				}
				tr, _ := c.viaGenAI(t, "claude-converse", contents, &genai.GenerateContentConfig{Tools: genaiWeatherTool}, stream)
				return tr
			},
			// A function response is an object: the model reads its JSON.
			want: `{"result":"` + converseToolResult + `"}`,
		},
	} {
		t.Run(tc.client, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				one := tc.first(t, stream)
				if !one.toolStop || len(one.calls) != 1 || one.text != "" {
					t.Fatalf("turn one (stream=%v): %+v", stream, one)
				}
				call := one.calls[0]
				if call.name != "get_weather" || call.args != `{"city":"Paris"}` || call.id == "" {
					t.Fatalf("turn one's call (stream=%v): %+v", stream, call)
				}
				for _, stream2 := range []bool{false, true} {
					two := tc.second(t, call, stream2)
					if two.text != converseWho+": the tool said "+tc.want || two.toolStop || len(two.calls) != 0 {
						t.Errorf("turn two (stream=%v, then %v): %+v", stream, stream2, two)
					}
				}
			}
		})
	}
	// A Gemini client that never saw an id (the Gemini API gives none)
	// sends its call and response back without one; they still pair up.
	t.Run("genai without ids", func(t *testing.T) {
		contents := []*genai.Content{
			genai.NewContentFromText(ask, genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}}}},
			{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "get_weather", Response: map[string]any{"result": converseToolResult}}}}},
		}
		two, _ := c.viaGenAI(t, "claude-converse", contents, &genai.GenerateContentConfig{Tools: genaiWeatherTool}, false)
		if want := converseWho + `: the tool said {"result":"` + converseToolResult + `"}`; two.text != want {
			t.Errorf("turn two: %+v, want text %q", two, want)
		}
	})
	c.converseOnly(t, false)
	c.noSecretsIn(t, c.r.logs.String())
}

// Claude's signed thinking comes back to Bedrock unchanged between tool
// calls, through the Anthropic SDK: the fake refuses any signature but
// its own. Thinking signed by anyone else is left out of the request.
func TestCloudsConverseThinkingRoundTrip(t *testing.T) {
	c := startClouds(t)
	thinking := `"thinking":{"type":"enabled","budget_tokens":1024},`
	for _, stream := range []bool{false, true} {
		msg := c.claude(t, "claude-converse", `{`+thinking+`"messages":[{"role":"user","content":"weather in Paris?"}],`+weatherTool+`}`, stream)
		if len(msg.Content) != 2 || msg.Content[0].Type != "thinking" || msg.Content[1].Type != "tool_use" || msg.StopReason != anthropic.StopReasonToolUse {
			t.Fatalf("turn one (stream=%v): %+v", stream, msg.Content)
		}
		th, call := msg.Content[0], msg.Content[1]
		if th.Signature == "" || th.Thinking != "thinking on bedrock" || string(call.Input) != `{"city":"Paris"}` {
			t.Fatalf("turn one (stream=%v): thinking %+v, call %+v", stream, th, call)
		}
		turn2 := fmt.Sprintf(`{%s"messages":[{"role":"user","content":"weather in Paris?"},{"role":"assistant","content":[{"type":"thinking","thinking":%q,"signature":%q},{"type":"tool_use","id":%q,"name":"get_weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"rain"}]}],%s}`,
			thinking, th.Thinking, th.Signature, call.ID, call.ID, weatherTool)
		for _, stream2 := range []bool{false, true} {
			before := len(c.bedrock.Seen())
			got := c.claude(t, "claude-converse", turn2, stream2)
			if text := messageText(got); text != converseWho+": the tool said rain" {
				t.Errorf("turn two (stream=%v, then %v): %q", stream, stream2, text)
			}
			// The signature went back as the fake made it.
			seen := c.bedrock.Seen()
			if len(seen) != before+1 || !bytes.Contains(seen[before].Body, []byte(`"signature":"`+cloudtest.Signature("bedrock", converseModel)+`"`)) {
				t.Errorf("turn two (stream=%v, then %v) did not carry the signature back: %s", stream, stream2, seen[len(seen)-1].Body)
			}
		}
	}

	// A thinking block another service signed (one Claude Code kept from
	// Anthropic's own API, say) cannot be vouched for by Bedrock: Parley
	// leaves it out, and the request succeeds.
	before := len(c.bedrock.Seen())
	foreign := `{"messages":[{"role":"user","content":"weather in Paris?"},{"role":"assistant","content":[{"type":"thinking","thinking":"thinking elsewhere","signature":"RXJhc0Zyb21Bbm90aGVyU2VydmljZQ=="},{"type":"tool_use","id":"toolu_01ElsewhereCall","name":"get_weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01ElsewhereCall","content":"fog"}]}],` + weatherTool + `}`
	for _, stream := range []bool{false, true} {
		if text := messageText(c.claude(t, "claude-converse", foreign, stream)); text != converseWho+": the tool said fog" {
			t.Errorf("foreign thinking (stream=%v): %q", stream, text)
		}
	}
	for _, s := range c.bedrock.Seen()[before:] {
		if bytes.Contains(s.Body, []byte("reasoningContent")) || bytes.Contains(s.Body, []byte("thinking elsewhere")) {
			t.Errorf("foreign thinking reached Bedrock: %s", s.Body)
		}
	}
	c.converseOnly(t, false)
	c.noSecretsIn(t, c.r.logs.String())
}

// The Anthropic SDK's token count for a Converse model is Bedrock's
// CountTokens answer.
func TestCloudsConverseCountTokens(t *testing.T) {
	c := startClouds(t)
	const prompt = "How many tokens does this sentence hold, roughly?"
	cl := c.anthropic()
	n, err := cl.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model:    "claude-converse",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := c.bedrock.Seen()
	if len(seen) != 1 || seen[0].Path != conversePath+"count-tokens" {
		t.Fatalf("bedrock saw %+v, want one CountTokens request", seen)
	}
	var req converse.CountRequest
	if err := json.Unmarshal(seen[0].Body, &req); err != nil || req.Input.Converse == nil {
		t.Fatalf("count request %s: %v", seen[0].Body, err)
	}
	// The fake counts a token for every four characters of text.
	if want := cloudtest.ConverseTokens(req.Input.Converse); n.InputTokens != want || want != int64(len(prompt)/4) {
		t.Errorf("count %d, the fake's %d, for a prompt of %d characters", n.InputTokens, want, len(prompt))
	}
	c.converseOnly(t, true)
	c.noSecretsIn(t, c.r.logs.String())
}

// A model whose first route is Bedrock's Converse API falls back to
// Vertex when Bedrock throttles; the client never sees it.
func TestCloudsConverseFallbackOnThrottle(t *testing.T) {
	c := startClouds(t)
	c.bedrock.Throttle.Store(1)
	msg := c.claude(t, "claude-converse-anywhere", `{"messages":[{"role":"user","content":"anyone?"}]}`, true)
	if got := messageText(msg); got != "vertex claude-sonnet-4-5@20250929: anyone?" {
		t.Errorf("reply %q", got)
	}
	if seen := c.bedrock.Seen(); len(seen) != 1 || seen[0].Path != conversePath+"converse-stream" {
		t.Errorf("bedrock saw %d requests, want the one it throttled", len(seen))
	}
	// With Bedrock answering again, it serves the model.
	if got := messageText(c.claude(t, "claude-converse-anywhere", `{"messages":[{"role":"user","content":"back?"}]}`, false)); got != converseWho+": back?" {
		t.Errorf("reply %q", got)
	}
	c.converseOnly(t, false)
	c.noSecretsIn(t, c.r.logs.String())
}

// A model that is not Anthropic's takes no thinking field: a client that
// asks Nova to reason gets its answer without one.
func TestCloudsConverseOtherModel(t *testing.T) {
	c := startClouds(t)
	for _, stream := range []bool{false, true} {
		tr := c.viaChat(t, "nova-converse", `{"reasoning_effort":"high","messages":[{"role":"user","content":"hello nova"}]}`, stream)
		if tr.text != "bedrock amazon.nova-pro-v1:0: hello nova" || tr.in != 11 || tr.out != 7 {
			t.Errorf("stream=%v: %+v", stream, tr)
		}
	}
	for _, s := range c.bedrock.Seen() {
		if op, ok := strings.CutPrefix(s.Path, "/model/amazon.nova-pro-v1%3A0/"); !ok || (op != "converse" && op != "converse-stream") {
			t.Errorf("bedrock path %s", s.Path)
		}
		if bytes.Contains(s.Body, []byte("additionalModelRequestFields")) {
			t.Errorf("Anthropic's fields went to Nova: %s", s.Body)
		}
	}
	c.noSecretsIn(t, c.r.logs.String())
}
