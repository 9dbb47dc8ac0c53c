package messages_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
)

func TestForeignSignaturesAreNotSent(t *testing.T) {
	geminiSig := &parleyv1.Opaque{Value: "CiQB", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_GENERATE_CONTENT}}
	ownSig := &parleyv1.Opaque{Value: "EqQB", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Upstream: "claude"}}
	otherUpstream := &parleyv1.Opaque{Value: "EqQC", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Upstream: "bedrock"}}
	req := &parleyv1.Request{
		Extensions: other,
		Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Q")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT,
				&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "gemini thought"}}, Signature: geminiSig},
				&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "own thought"}}, Signature: ownSig},
				&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "bedrock thought"}}, Signature: otherUpstream},
				&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Summary: []string{"openai summary"}}}},
				translate.TextPart("A"),
			),
		},
	}
	body := jsonOf(encode(t, req)["messages"])
	if strings.Contains(body, "gemini thought") || strings.Contains(body, "bedrock thought") || strings.Contains(body, "openai summary") {
		t.Errorf("reasoning another service signed was sent: %s", body)
	}
	if !strings.Contains(body, "own thought") || !strings.Contains(body, "EqQB") {
		t.Errorf("this upstream's own thinking was dropped: %s", body)
	}
}

func TestReasoningEffortBecomesABudget(t *testing.T) {
	req := &parleyv1.Request{
		Extensions: other,
		Generation: &parleyv1.GenerationConfig{MaxOutputTokens: proto.Int32(1000), Temperature: proto.Float64(0.5)},
		Reasoning:  &parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH},
		Messages:   []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Think."))},
	}
	m := encode(t, req)
	if got := jsonOf(m["thinking"]); got != `{"budget_tokens":24576,"type":"enabled"}` {
		t.Errorf("thinking = %s", got)
	}
	if m["max_tokens"].(float64) <= 24576 {
		t.Errorf("max_tokens %v is not above the budget", m["max_tokens"])
	}
	if _, ok := m["temperature"]; ok {
		t.Error("temperature was sent with thinking enabled")
	}
	req.Reasoning = &parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_NONE}
	if got := jsonOf(encode(t, req)["thinking"]); got != `{"type":"disabled"}` {
		t.Errorf("effort none: thinking = %s", got)
	}
}

// TestSignaturesForeignToTheClient checks the carriers: a thought
// signature on a tool call (which this dialect cannot sign) travels in a
// thinking block before the call, sealed with its origin, and comes back
// to the call when the client replays the turn.
func TestSignaturesForeignToTheClient(t *testing.T) {
	sig := &parleyv1.Opaque{Value: "CiQBjz1rX2Zk", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_GENERATE_CONTENT, Upstream: "gemini", Model: "gemini-3-pro"}}
	thought := &parleyv1.Opaque{Value: "CiUBjz1rX3Aa", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_GENERATE_CONTENT, Upstream: "gemini"}}
	resp := &parleyv1.Response{Id: "r1", Model: "gemini-3-pro", Candidates: []*parleyv1.Candidate{{
		Parts: []*parleyv1.Part{
			{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "Plan."}}, Signature: thought},
			{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: "call_1", Name: "weather", Arguments: `{"city":"Oslo"}`}}, Signature: sig},
		},
		FinishReason: parleyv1.FinishReason_FINISH_REASON_STOP,
	}}}
	body, err := messages.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	m := sdkcheck.MessagesReply(t, body)
	if m.StopReason != "tool_use" {
		t.Errorf("stop_reason = %q: a turn with tool calls must end in tool_use", m.StopReason)
	}
	if len(m.Content) != 3 || m.Content[1].Type != "thinking" || m.Content[1].Thinking != "" || m.Content[2].Type != "tool_use" {
		t.Fatalf("content = %s", body)
	}
	// The client replays the turn.
	replay := anthropic.MessageNewParams{MaxTokens: 100, Model: "x", Messages: []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("Weather?")),
		m.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("call_1", "rain", false)),
	}}
	raw, _ := json.Marshal(replay)
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: raw})
	if err != nil {
		t.Fatal(err)
	}
	parts := req.GetMessages()[1].GetParts()
	if len(parts) != 2 {
		t.Fatalf("replayed parts = %v", parts)
	}
	if !proto.Equal(parts[0].GetSignature(), thought) || !proto.Equal(parts[1].GetSignature(), sig) || parts[1].GetToolCall() == nil {
		t.Errorf("signatures did not come back where they were: %v", parts)
	}
	if name := req.GetMessages()[2].GetParts()[0].GetToolResult().GetName(); name != "weather" {
		t.Errorf("tool result name = %q, want it taken from the call", name)
	}
}

// TestLateSignatureInAStream: a signature that arrives after its part
// began goes out in a carrier after the part, marked to attach backwards.
func TestLateSignatureInAStream(t *testing.T) {
	sig := &parleyv1.Opaque{Value: "CiQBlate", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_GENERATE_CONTENT}}
	events := []*parleyv1.StreamEvent{
		{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{Id: "r"}}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Part: translate.TextPart("Hello")}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Signature{Signature: sig}}}},
		{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{}}},
		{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{Reason: parleyv1.FinishReason_FINISH_REASON_STOP}}},
		{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}},
	}
	out := dialecttest.EncodeStream(t, messages.Client{}, &parleyv1.Request{}, events)
	m := sdkcheck.MessagesStream(t, out)
	if len(m.Content) != 2 || m.Content[0].Text != "Hello" || m.Content[1].Type != "thinking" {
		t.Fatalf("stream = %s", out)
	}
	replay, _ := json.Marshal(anthropic.MessageNewParams{MaxTokens: 1, Model: "x", Messages: []anthropic.MessageParam{m.ToParam()}})
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: replay})
	if err != nil {
		t.Fatal(err)
	}
	parts := req.GetMessages()[0].GetParts()
	if len(parts) != 1 || !proto.Equal(parts[0].GetSignature(), sig) {
		t.Fatalf("parts = %v", parts)
	}
}

// TestSamplingDroppedForThinkingIsReported: the sampling settings the
// service rejects while thinking are left out and named; a top_p it
// accepts (0.95 to 1) goes through.
func TestSamplingDroppedForThinkingIsReported(t *testing.T) {
	req := &parleyv1.Request{
		Extensions: other,
		Generation: &parleyv1.GenerationConfig{Temperature: proto.Float64(0.5), TopK: proto.Int32(40), TopP: proto.Float64(0.5)},
		Reasoning:  &parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_LOW},
		Messages:   []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Think."))},
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out.Dropped, ","); got != "generation.temperature,generation.top_k,generation.top_p" {
		t.Errorf("dropped = %v", out.Dropped)
	}
	m := encode(t, req)
	for _, k := range []string{"temperature", "top_k", "top_p"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s was sent with thinking enabled", k)
		}
	}

	req.Generation = &parleyv1.GenerationConfig{TopP: proto.Float64(0.97)}
	req.Reasoning = &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE}
	out, err = messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Dropped) != 0 || !bytes.Contains(out.Body, []byte(`"top_p":0.97`)) {
		t.Errorf("top_p 0.97: dropped = %v, body %s", out.Dropped, out.Body)
	}
}

// TestThinkingOffWhenTheTurnsReasoningStayedBehind: a tool-use turn in
// progress whose assistant message reaches the service without its
// thinking block (another upstream made it; a fallback serves the turn;
// the client's dialect kept none) goes on with thinking off, named in
// Dropped, since the service refuses thinking on such a turn. A new turn,
// or one whose thinking came along, thinks as asked (issue 23).
func TestThinkingOffWhenTheTurnsReasoningStayedBehind(t *testing.T) {
	call := &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: "toolu_1", Name: "weather", Arguments: `{}`}}}
	result := translate.NewMessage(parleyv1.Role_ROLE_TOOL, &parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: "toolu_1", Name: "weather", Content: []*parleyv1.Part{translate.TextPart("rain")}}}})
	thought := func(maker string) *parleyv1.Part {
		return &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "look it up"}}, Signature: &parleyv1.Opaque{Value: "EqQB", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Upstream: maker}}}
	}
	turn := func(assistant ...*parleyv1.Part) *parleyv1.Request {
		return &parleyv1.Request{
			Extensions: other,
			Reasoning:  &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ENABLED, BudgetTokens: proto.Int32(2048)},
			Tools:      []*parleyv1.Tool{{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: "weather", Parameters: `{"type":"object"}`}}}},
			Messages: []*parleyv1.Message{
				translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Weather?")),
				translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, assistant...),
				result,
			},
		}
	}
	for _, tc := range []struct {
		name  string
		req   *parleyv1.Request
		think bool
	}{
		{"its own thinking came along", turn(thought("claude"), call), true},
		{"another upstream's thinking stayed behind", turn(thought("bedrock"), call), false},
		{"the client kept no thinking", turn(call), false},
		{"a new turn", &parleyv1.Request{Extensions: other, Reasoning: turn().Reasoning, Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hi"))}}, true},
	} {
		out, err := messages.Upstream{}.EncodeRequest(tc.req, translate.Target{Model: "claude-x", Upstream: "claude"})
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Thinking struct{ Type string } `json:"thinking"`
		}
		if err := json.Unmarshal(out.Body, &w); err != nil {
			t.Fatal(err)
		}
		dropped := strings.Join(out.Dropped, ",") == "reasoning"
		if (w.Thinking.Type == "enabled") != tc.think || dropped == tc.think {
			t.Errorf("%s: thinking %q, dropped %v", tc.name, w.Thinking.Type, out.Dropped)
		}
	}
}
