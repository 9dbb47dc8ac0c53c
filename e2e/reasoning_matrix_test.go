package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	presponses "github.com/parleyhq/parley/translate/responses"
)

// The reasoning matrix: every client dialect, through its official SDK,
// against an upstream of every dialect whose service reasons, in a
// two-turn tool conversation with reasoning on. Turn two must reach the
// upstream with exactly the reasoning it made in turn one, in its own
// form (signature, reasoning item id and encrypted content, thought
// signature, reasoning text), and nothing another service made, nor any
// of Parley's seals (issue 23). A chat-completions client keeps no
// reasoning (the SDK drops reasoning_content and the dialect has no
// signature), so its second turn carries none and must still succeed.

// reasoner is an upstream service of one dialect that reasons before it
// calls the weather tool, then answers from the tool's result, marking its
// reasoning with its name.
type reasoner struct{ *scripted }

func newReasoner(t *testing.T, name string, c translate.Client) *reasoner {
	t.Helper()
	r := &reasoner{}
	r.scripted = newScripted(t, name, c, func(req *parleyv1.Request) *parleyv1.Response { return r.reply(req) })
	return r
}

// Its reasoning, in its dialect's own form.
func (r *reasoner) signature() string { return "sig-" + r.name }
func (r *reasoner) encrypted() string { return "gAAAAB-" + r.name }
func (r *reasoner) itemID() string    { return "rs_" + strings.ReplaceAll(r.name, "-", "") }
func (r *reasoner) thought() string {
	return base64.StdEncoding.EncodeToString([]byte("thought-" + r.name))
}
func (r *reasoner) thinking() string { return "thinking by " + r.name }

// marks are what the reasoner's reasoning looks like on the wire, as a
// service of its dialect expects it back.
func (r *reasoner) marks() []string {
	switch r.client.Dialect() {
	case parleyv1.Dialect_DIALECT_MESSAGES:
		return []string{`"signature":"` + r.signature() + `"`, r.thinking()}
	case parleyv1.Dialect_DIALECT_RESPONSES:
		return []string{`"encrypted_content":"` + r.encrypted() + `"`, `"id":"` + r.itemID() + `"`}
	case parleyv1.Dialect_DIALECT_GENERATE_CONTENT:
		return []string{`"thoughtSignature":"` + r.thought() + `"`}
	}
	return []string{`"reasoning_content":"` + r.thinking() + `"`}
}

// reply reasons and calls the tool, or answers from the tool's result.
func (r *reasoner) reply(req *parleyv1.Request) *parleyv1.Response {
	d := r.client.Dialect()
	own := func(v string) *parleyv1.Opaque {
		return &parleyv1.Opaque{Value: v, Origin: &parleyv1.Origin{Dialect: d}}
	}
	var parts []*parleyv1.Part
	finish := parleyv1.FinishReason_FINISH_REASON_TOOL_USE
	if result, ok := resultOf(req); ok {
		parts = []*parleyv1.Part{translate.TextPart(r.name + ": the tool said " + result)}
		finish = parleyv1.FinishReason_FINISH_REASON_STOP
	} else {
		think := &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: r.thinking()}}}
		call := &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: "call_" + strings.ReplaceAll(r.name, "-", ""), Name: "get_weather", Arguments: `{"city":"Paris"}`}}}
		switch d {
		case parleyv1.Dialect_DIALECT_MESSAGES:
			think.Signature = own(r.signature())
		case parleyv1.Dialect_DIALECT_RESPONSES:
			think.GetReasoning().Text, think.GetReasoning().Summary = "", []string{r.thinking()}
			think.GetReasoning().EncryptedContent = own(r.encrypted())
			think.ItemId = r.itemID()
		case parleyv1.Dialect_DIALECT_GENERATE_CONTENT:
			call.Signature = own(r.thought())
		}
		parts = []*parleyv1.Part{think, call}
	}
	return answer(req, parts, finish)
}

// reasoningClient is one client dialect's two turns.
type reasoningClient struct {
	name string
	// first asks with reasoning on and the weather tool; it returns the
	// call's id and how the client sends the turn back.
	first func(t *testing.T, url, model string, stream bool) (callID string, second func(t *testing.T) string)
	// keeps is false for a client whose dialect keeps no reasoning.
	keeps bool
}

const reasoningAsk = "weather in Paris?"

var reasoningClients = []reasoningClient{
	{name: "anthropic", keeps: true, first: func(t *testing.T, url, model string, stream bool) (string, func(*testing.T) string) {
		cl := anthropic.NewClient(aoption.WithBaseURL(url), aoption.WithAPIKey("sk-local"), aoption.WithMaxRetries(0))
		head := `"model":"` + model + `","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":1024},` + weatherTool
		msg := anthropicTurn(t, cl, `{`+head+`,"messages":[{"role":"user","content":"`+reasoningAsk+`"}]}`, stream)
		var id string
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				id = b.ID
			}
		}
		return id, func(t *testing.T) string {
			held, err := json.Marshal(msg.ToParam())
			if err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf(`{%s,"messages":[{"role":"user","content":%q},%s,{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"rain"}]}]}`, head, reasoningAsk, held, id)
			return messageText(anthropicTurn(t, cl, body, false))
		}
	}},
	{name: "chat", first: func(t *testing.T, url, model string, stream bool) (string, func(*testing.T) string) {
		cl := openai.NewClient(ooption.WithBaseURL(url+"/v1"), ooption.WithAPIKey("sk-local"), ooption.WithMaxRetries(0))
		head := `"model":"` + model + `","reasoning_effort":"low",` + chatWeatherTool
		cc := chatTurn(t, cl, `{`+head+`,"messages":[{"role":"user","content":"`+reasoningAsk+`"}]}`, stream)
		msg := cc.Choices[0].Message
		if len(msg.ToolCalls) != 1 {
			t.Fatalf("turn one: %s", cc.RawJSON())
		}
		return msg.ToolCalls[0].ID, func(t *testing.T) string {
			held, err := json.Marshal(msg.ToParam())
			if err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf(`{%s,"messages":[{"role":"user","content":%q},%s,{"role":"tool","tool_call_id":%q,"content":"rain"}]}`, head, reasoningAsk, held, msg.ToolCalls[0].ID)
			return chatTurn(t, cl, body, false).Choices[0].Message.Content
		}
	}},
	{name: "responses", keeps: true, first: func(t *testing.T, url, model string, stream bool) (string, func(*testing.T) string) {
		cl := openai.NewClient(ooption.WithBaseURL(url+"/v1"), ooption.WithAPIKey("sk-local"), ooption.WithMaxRetries(0))
		head := `"model":"` + model + `","store":false,"include":["reasoning.encrypted_content"],"reasoning":{"effort":"low","summary":"auto"},` + respWeatherTool
		r := responsesTurn(t, cl, `{`+head+`,"input":"`+reasoningAsk+`"}`, stream)
		// Codex's way: every output item goes back as it came.
		items := []string{fmt.Sprintf(`{"role":"user","content":%q}`, reasoningAsk)}
		var id string
		for _, it := range r.Output {
			items = append(items, it.RawJSON())
			if it.Type == "function_call" {
				id = it.CallID
			}
		}
		items = append(items, fmt.Sprintf(`{"type":"function_call_output","call_id":%q,"output":"rain"}`, id))
		return id, func(t *testing.T) string {
			two := responsesTurn(t, cl, `{`+head+`,"input":[`+strings.Join(items, ",")+`]}`, false)
			return two.OutputText()
		}
	}},
	{name: "genai", keeps: true, first: func(t *testing.T, url, model string, stream bool) (string, func(*testing.T) string) {
		gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "sk-local", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: url}})
		if err != nil {
			t.Fatal(err)
		}
		cfg := &genai.GenerateContentConfig{Tools: genaiWeatherTool, ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: new(int32(1024))}}
		ask := []*genai.Content{genai.NewContentFromText(reasoningAsk, genai.RoleUser)}
		// The model's turn as the Gemini CLI keeps it: every part of
		// every chunk, in order.
		held := &genai.Content{Role: genai.RoleModel}
		var call *genai.FunctionCall
		for _, ch := range genaiTurn(t, gc, model, ask, cfg, stream) {
			for _, p := range ch.Candidates[0].Content.Parts {
				held.Parts = append(held.Parts, p)
				if p.FunctionCall != nil {
					call = p.FunctionCall
				}
			}
		}
		if call == nil {
			t.Fatal("turn one: no call")
		}
		return call.ID, func(t *testing.T) string {
			contents := append(ask, held, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: call.ID, Name: call.Name, Response: map[string]any{"output": "rain"}}}}})
			var text string
			for _, ch := range genaiTurn(t, gc, model, contents, cfg, false) {
				text += ch.Text()
			}
			return text
		}
	}},
}

func anthropicTurn(t *testing.T, cl anthropic.Client, body string, stream bool) *anthropic.Message {
	t.Helper()
	if !stream {
		msg, err := cl.Messages.New(context.Background(), anthropic.MessageNewParams{}, aoption.WithRequestBody("application/json", []byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	s := cl.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{}, aoption.WithRequestBody("application/json", []byte(strings.Replace(body, "{", `{"stream":true,`, 1))))
	var msg anthropic.Message
	for s.Next() {
		if err := msg.Accumulate(s.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return &msg
}

func chatTurn(t *testing.T, cl openai.Client, body string, stream bool) *openai.ChatCompletion {
	t.Helper()
	if !stream {
		cc, err := cl.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{}, ooption.WithRequestBody("application/json", []byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		return cc
	}
	s := cl.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{}, ooption.WithRequestBody("application/json", []byte(strings.Replace(body, "{", `{"stream":true,`, 1))))
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return &acc.ChatCompletion
}

func responsesTurn(t *testing.T, cl openai.Client, body string, stream bool) *responses.Response {
	t.Helper()
	if !stream {
		r, err := cl.Responses.New(context.Background(), responses.ResponseNewParams{}, ooption.WithRequestBody("application/json", []byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	s := cl.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{}, ooption.WithRequestBody("application/json", []byte(strings.Replace(body, "{", `{"stream":true,`, 1))))
	var acc responses.ResponseAccumulator
	for s.Next() {
		var ev responses.ResponsesServerEventUnion
		if err := json.Unmarshal([]byte(s.Current().RawJSON()), &ev); err != nil {
			t.Fatal(err)
		}
		if err := acc.AddEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	r, err := acc.ReconstructedResponse()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func genaiTurn(t *testing.T, gc *genai.Client, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig, stream bool) []*genai.GenerateContentResponse {
	t.Helper()
	if !stream {
		r, err := gc.Models.GenerateContent(context.Background(), model, contents, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return []*genai.GenerateContentResponse{r}
	}
	var chunks []*genai.GenerateContentResponse
	for ch, err := range gc.Models.GenerateContentStream(context.Background(), model, contents, cfg) {
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.Candidates) > 0 && ch.Candidates[0].Content != nil {
			chunks = append(chunks, ch)
		}
	}
	return chunks
}

func TestReasoningComesBackToItsMaker(t *testing.T) {
	ups := []*reasoner{
		newReasoner(t, "up-messages", messages.Client{}),
		newReasoner(t, "up-responses", presponses.Client{}),
		newReasoner(t, "up-gemini", generatecontent.Client{}),
		newReasoner(t, "up-chat", chatcompletions.Client{}),
	}
	cfg := "upstreams:\n"
	models := "models:\n"
	for _, u := range ups {
		cfg += u.configLine()
		models += fmt.Sprintf("  - {name: m-%s, upstream: %s}\n", u.name, u.name)
	}
	dir := t.TempDir()
	r := start(t, writeConfig(t, cfg+models), dir)
	r.waitReady(t)
	for _, cl := range reasoningClients {
		for _, u := range ups {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", cl.name, u.name, stream), func(t *testing.T) {
					id, second := cl.first(t, r.url, "m-"+u.name, stream)
					if id == "" {
						t.Fatal("turn one made no call")
					}
					got := second(t)
					// A function response is an object: the Gemini client
					// sends one, and toward a Gemini upstream a text result
					// goes as {"output": text}.
					result := "rain"
					if cl.name == "genai" || u.client.Dialect() == parleyv1.Dialect_DIALECT_GENERATE_CONTENT {
						result = `{"output":"rain"}`
					}
					if want := u.name + ": the tool said " + result; got != want {
						t.Fatalf("turn two: %q, want %q", got, want)
					}
					body := u.last()
					for _, mark := range u.marks() {
						if strings.Contains(body, mark) != cl.keeps {
							t.Errorf("turn two carries %s: %v, want %v", mark, !cl.keeps, cl.keeps)
						}
					}
					for _, other := range ups {
						if other != u && strings.Contains(body, other.name) {
							t.Errorf("turn two carries what %s made", other.name)
						}
					}
					if strings.Contains(body, "UFJMWQ") {
						t.Errorf("a seal reached the upstream: %s", body)
					}
					if t.Failed() {
						t.Logf("turn two's body: %s", body)
					}
				})
			}
		}
	}
}
