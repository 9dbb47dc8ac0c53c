package converse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/messages"
)

// Rules of the package doc that the golden cases do not pin one by one.

func TestDialect(t *testing.T) {
	d := converse.Dialect()
	if d.Name() != "converse" || d.Provider != "aws.bedrock" || d.Client != nil || len(d.Routes) != 0 {
		t.Errorf("descriptor %s %q client %v routes %v", d.Name(), d.Provider, d.Client, d.Routes)
	}
	if d.Upstream.Dialect() != parleyv1.Dialect_DIALECT_CONVERSE {
		t.Errorf("upstream dialect %v", d.Upstream.Dialect())
	}
	if _, ok := d.Upstream.(translate.CountUpstream); !ok {
		t.Error("the upstream cannot count tokens")
	}
}

// TestStopReasons: every stop reason of the service, whole and streamed.
func TestStopReasons(t *testing.T) {
	cases := []struct {
		word    string
		call    bool
		want    parleyv1.FinishReason
		message string
	}{
		{"end_turn", false, parleyv1.FinishReason_FINISH_REASON_STOP, ""},
		{"end_turn", true, parleyv1.FinishReason_FINISH_REASON_TOOL_USE, ""}, // a turn of calls is a tool turn
		{"tool_use", true, parleyv1.FinishReason_FINISH_REASON_TOOL_USE, ""},
		{"max_tokens", false, parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS, ""},
		{"max_tokens", true, parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS, ""},
		{"stop_sequence", false, parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE, ""},
		{"guardrail_intervened", false, parleyv1.FinishReason_FINISH_REASON_SAFETY, ""},
		{"content_filtered", false, parleyv1.FinishReason_FINISH_REASON_SAFETY, ""},
		{"malformed_tool_use", false, parleyv1.FinishReason_FINISH_REASON_MALFORMED_TOOL_CALL, ""},
		{"malformed_model_output", false, parleyv1.FinishReason_FINISH_REASON_OTHER, "malformed_model_output"},
		{"model_context_window_exceeded", false, parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED, ""},
		{"a_word_from_later", false, parleyv1.FinishReason_FINISH_REASON_OTHER, "a_word_from_later"},
	}
	for _, c := range cases {
		block := `{"text":"Hi"}`
		if c.call {
			block = `{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}`
		}
		body := `{"output":{"message":{"role":"assistant","content":[` + block + `]}},"stopReason":"` + c.word + `","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`
		resp, err := converse.Upstream{}.DecodeResponse(target, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", c.word, err)
		}
		cand := resp.GetCandidates()[0]
		if cand.GetFinishReason() != c.want || cand.GetFinishMessage() != c.message {
			t.Errorf("%s (call %v): %v %q, want %v %q", c.word, c.call, cand.GetFinishReason(), cand.GetFinishMessage(), c.want, c.message)
		}

		var s strings.Builder
		s.WriteString("event: messageStart\ndata: {\"role\":\"assistant\"}\n\n")
		if c.call {
			s.WriteString("event: contentBlockStart\ndata: {\"contentBlockIndex\":0,\"start\":{\"toolUse\":{\"toolUseId\":\"t1\",\"name\":\"f\"}}}\n\n")
		} else {
			s.WriteString("event: contentBlockDelta\ndata: {\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hi\"}}\n\n")
		}
		s.WriteString("event: contentBlockStop\ndata: {\"contentBlockIndex\":0}\n\n")
		s.WriteString("event: messageStop\ndata: {\"stopReason\":\"" + c.word + "\"}\n\n")
		s.WriteString("event: metadata\ndata: {\"usage\":{\"inputTokens\":1,\"outputTokens\":1,\"totalTokens\":2}}\n\n")
		_, acc := decodeFramed(t, frame(t, []byte(s.String())))
		cand = acc.GetCandidates()[0]
		if cand.GetFinishReason() != c.want || cand.GetFinishMessage() != c.message {
			t.Errorf("streamed %s (call %v): %v %q, want %v %q", c.word, c.call, cand.GetFinishReason(), cand.GetFinishMessage(), c.want, c.message)
		}
	}
}

// decodeText decodes a stream given as server-sent events (the framing
// does not matter to the decoder) and returns its events and its error.
func decodeText(stream string) ([]*parleyv1.StreamEvent, error) {
	var events []*parleyv1.StreamEvent
	for ev, err := range translate.DecodeStream(parleyv1.Dialect_DIALECT_CONVERSE, strings.NewReader(stream), converse.Upstream{}.NewStreamDecoder(target), translate.StreamLimits{}) {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

func ev(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

var (
	start    = ev("messageStart", `{"role":"assistant"}`)
	text0    = ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"}}`)
	stop0    = ev("contentBlockStop", `{"contentBlockIndex":0}`)
	msgStop  = ev("messageStop", `{"stopReason":"end_turn"}`)
	metadata = ev("metadata", `{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4},"metrics":{"latencyMs":9}}`)
)

// TestStreamOrder: a stream that breaks the service's order is the
// upstream's protocol error; one that stops before messageStop ended
// early; neither is papered over.
func TestStreamOrder(t *testing.T) {
	bad := map[string]string{
		"a delta before messageStart":       text0,
		"a second messageStart":             start + start,
		"a block out of order":              start + ev("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"Hi"}}`),
		"a delta for another block":         start + text0 + ev("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"x"}}`),
		"a start while a block is open":     start + text0 + ev("contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"a","name":"b"}}}`),
		"a delta of another kind":           start + text0 + ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"x"}}}`),
		"tool input with no tool start":     start + ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{}"}}}`),
		"messageStop while a block is open": start + text0 + msgStop,
		"a second messageStop":              start + text0 + stop0 + msgStop + msgStop,
		"an event after the end":            start + text0 + stop0 + msgStop + metadata + text0,
		"a stop for a block never opened":   start + ev("contentBlockStop", `{"contentBlockIndex":3}`),
		"a delta without an index":          start + ev("contentBlockDelta", `{"delta":{"text":"Hi"}}`),
		"malformed JSON":                    start + ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":`),
		"a tool start without a name":       start + ev("contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"a"}}}`),
	}
	for name, stream := range bad {
		_, err := decodeText(stream)
		var up *translate.UpstreamError
		if !errors.As(err, &up) || up.Err.GetHttpStatus() != 502 {
			t.Errorf("%s: %v, want the upstream's protocol error", name, err)
		}
	}

	for name, stream := range map[string]string{
		"nothing":           "",
		"only the start":    start,
		"an open block":     start + text0,
		"no messageStop":    start + text0 + stop0,
		"metadata, no stop": start + text0 + stop0 + metadata,
	} {
		_, err := decodeText(stream)
		var up *translate.UpstreamError
		if !errors.As(err, &up) || up.Err.GetCode() != parleyv1.Code_CODE_UNAVAILABLE || !up.Err.GetRetry().GetRetryable() ||
			!strings.Contains(up.Err.GetMessage(), "before messageStop") {
			t.Errorf("%s: %v, want an early end", name, err)
		}
	}
}

// TestStreamEnd: the stream is done once messageStop and metadata have
// both come, in either order, or at the end of the body after
// messageStop; the usage of metadata reaches the canonical stream before
// the end, and unknown events and members are ignored.
func TestStreamEnd(t *testing.T) {
	for name, stream := range map[string]string{
		"metadata after messageStop":  start + text0 + stop0 + msgStop + metadata,
		"metadata before messageStop": start + text0 + stop0 + metadata + msgStop,
		"no metadata":                 start + text0 + stop0 + msgStop,
		"unknown events and members": ev("somethingNew", `{}`) + ev("messageStart", `{"role":"assistant","p":"abcd"}`) + ev("somethingNew", `{"x":1}`) +
			ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi","p":"ab"},"p":"abc"}`) + stop0 + msgStop + metadata,
	} {
		events, err := decodeText(stream)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var check translate.StreamChecker
		for _, e := range events {
			if err := check.Check(e); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if events[len(events)-1].GetDone() == nil {
			t.Errorf("%s: the last event is %T, not done", name, events[len(events)-1].GetEvent())
		}
		usage := slices.IndexFunc(events, func(e *parleyv1.StreamEvent) bool { return e.GetUsage() != nil })
		if strings.Contains(stream, "metadata") && (usage < 0 || events[usage].GetUsage().GetInputTokens() != 3) {
			t.Errorf("%s: the usage did not reach the stream", name)
		}
	}
}

// TestReasoningGoesBackToItsMaker: reasoning decoded from this upstream
// goes back to it with its signature (and redacted content), whole or
// through a client of another dialect that got it sealed, and never to
// another upstream.
func TestReasoningGoesBackToItsMaker(t *testing.T) {
	c := golden.Case{Name: "response_reasoning_signature", Dir: casesDir + "/response_reasoning_signature"}
	resp, err := converse.Upstream{}.DecodeResponse(target, c.Read(t, "response.json"))
	if err != nil {
		t.Fatal(err)
	}
	sig := resp.GetCandidates()[0].GetParts()[0].GetSignature().GetValue()
	if sig == "" {
		t.Fatal("no signature")
	}
	followUp := func(turn *parleyv1.Message) *parleyv1.Request {
		return &parleyv1.Request{Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("How many r's?")),
			turn,
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("And in raspberry?")),
		}}
	}
	signed := func(t *testing.T, req *parleyv1.Request, to translate.Target) bool {
		t.Helper()
		out, err := converse.Upstream{}.EncodeRequest(req, to)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(out.Body, []byte(`"signature":"`+sig+`"`))
	}

	canonical := followUp(translate.OutputTurn(resp))
	if !signed(t, canonical, target) {
		t.Error("the reasoning did not go back to the upstream that made it")
	}
	if signed(t, canonical, translate.Target{Upstream: "another-account", Model: caseModel}) {
		t.Error("the signature went to another upstream")
	}
	if body, _ := (messages.Upstream{}).EncodeRequest(canonical, translate.Target{Model: "claude"}); body == nil || bytes.Contains(body.Body, []byte(sig)) {
		t.Error("the signature went to a messages service")
	}

	// Through a messages client: it gets the signature sealed, sends it
	// back, and the upstream gets it as it made it.
	reply, err := messages.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatal(err)
	}
	var blocks []struct{ Signature string }
	if err := json.Unmarshal(r.Content, &blocks); err != nil {
		t.Fatal(err)
	}
	if s := blocks[0].Signature; s == sig || !strings.HasPrefix(s, "UFJMWQ") {
		t.Errorf("a messages client got the signature %.20s..., not sealed", s)
	}
	body := `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"How many r's?"},{"role":"assistant","content":` + string(r.Content) + `},{"role":"user","content":"And in raspberry?"}]}`
	replayed, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	if !signed(t, replayed, target) {
		t.Error("the reasoning a messages client replayed did not go back with its signature")
	}

	// Redacted reasoning, streamed.
	c = golden.Case{Name: "stream_redacted_tool_use", Dir: casesDir + "/stream_redacted_tool_use"}
	_, acc := decodeFramed(t, frame(t, c.Read(t, "stream.sse")))
	turn := translate.OutputTurn(acc)
	turn.Parts = append(turn.Parts[:1:1], translate.TextPart("done"))
	out, err := converse.Upstream{}.EncodeRequest(followUp(turn), target)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Body, []byte(`"redactedContent":"cnNuX3BVUGgx`)) {
		t.Errorf("the redacted reasoning did not go back: %s", out.Body)
	}
}

// TestThinking: thinking settings for an Anthropic model by the rule of
// the messages dialect; other models get none and are told.
func TestThinking(t *testing.T) {
	type fields struct {
		Thinking *struct {
			Type   string `json:"type"`
			Budget int32  `json:"budget_tokens"`
		} `json:"thinking"`
		TopK *int32 `json:"top_k"`
	}
	encode := func(t *testing.T, model string, rc *parleyv1.ReasoningConfig, g *parleyv1.GenerationConfig) (fields, *int32, []string) {
		t.Helper()
		req := &parleyv1.Request{Reasoning: rc, Generation: g, Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hi"))}}
		out, err := converse.Upstream{}.EncodeRequest(req, translate.Target{Model: model})
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Fields          fields `json:"additionalModelRequestFields"`
			InferenceConfig struct {
				MaxTokens *int32 `json:"maxTokens"`
			} `json:"inferenceConfig"`
		}
		if err := json.Unmarshal(out.Body, &w); err != nil {
			t.Fatal(err)
		}
		return w.Fields, w.InferenceConfig.MaxTokens, out.Dropped
	}
	claude := "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

	f, maxTokens, dropped := encode(t, claude, &parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH}, &parleyv1.GenerationConfig{Temperature: new(0.2), TopP: new(0.99)})
	if f.Thinking == nil || f.Thinking.Type != "enabled" || f.Thinking.Budget != translate.BudgetForEffort(parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH) {
		t.Errorf("effort high: %+v", f.Thinking)
	}
	if maxTokens == nil || *maxTokens != f.Thinking.Budget+8192 {
		t.Errorf("effort high: maxTokens %v", maxTokens)
	}
	if !slices.Equal(dropped, []string{"generation.temperature"}) {
		t.Errorf("effort high: dropped %v (topP 0.99 stays)", dropped)
	}

	f, maxTokens, _ = encode(t, claude, &parleyv1.ReasoningConfig{BudgetTokens: new(int32(100))}, &parleyv1.GenerationConfig{MaxOutputTokens: new(int32(500))})
	if f.Thinking.Budget != 1024 || *maxTokens != 1524 {
		t.Errorf("a small budget: %+v, maxTokens %d", f.Thinking, *maxTokens)
	}
	f, _, _ = encode(t, claude, &parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_NONE}, &parleyv1.GenerationConfig{TopK: new(int32(5))})
	if f.Thinking.Type != "disabled" || f.TopK == nil || *f.TopK != 5 {
		t.Errorf("effort none: %+v, top_k %v", f.Thinking, f.TopK)
	}
	f, _, _ = encode(t, claude, &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE}, nil)
	if f.Thinking.Type != "adaptive" {
		t.Errorf("adaptive: %+v", f.Thinking)
	}
	// A tool-use turn in progress whose reasoning stayed behind (another
	// upstream made it) goes on without thinking, as the models require.
	call := &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: "tooluse_1", Name: "weather", Arguments: `{}`}}}
	foreign := &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "look"}}, Signature: &parleyv1.Opaque{Value: "sig", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES}}}
	midTurn := &parleyv1.Request{
		Reasoning: &parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH},
		Tools:     []*parleyv1.Tool{{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: "weather", Parameters: `{"type":"object"}`}}}},
		Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Weather?")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, foreign, call),
			translate.NewMessage(parleyv1.Role_ROLE_TOOL, &parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: "tooluse_1", Name: "weather", Content: []*parleyv1.Part{translate.TextPart("rain")}}}}),
		},
	}
	out, err := converse.Upstream{}.EncodeRequest(midTurn, translate.Target{Model: claude, Upstream: "bedrock"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Body, []byte(`"thinking":{"type":"disabled"}`)) || !slices.Contains(out.Dropped, "reasoning") {
		t.Errorf("mid-turn without its reasoning: dropped %v, body %s", out.Dropped, out.Body)
	}

	f, _, dropped = encode(t, "amazon.nova-pro-v1:0", &parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH}, &parleyv1.GenerationConfig{TopK: new(int32(5))})
	if f.Thinking != nil || f.TopK != nil || !slices.Equal(dropped, []string{"generation.top_k", "reasoning"}) {
		t.Errorf("another model: %+v, dropped %v", f, dropped)
	}
}

// TestToolChoice: each canonical choice, the allow-list, and what has no
// form here.
func TestToolChoice(t *testing.T) {
	fn := func(name string) *parleyv1.Tool {
		return &parleyv1.Tool{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: name}}}
	}
	hi := []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hi"))}
	encode := func(tools []*parleyv1.Tool, tc *parleyv1.ToolChoice) (string, []string, error) {
		out, err := converse.Upstream{}.EncodeRequest(&parleyv1.Request{Messages: hi, Tools: tools, ToolChoice: tc}, target)
		if err != nil {
			return "", nil, err
		}
		var w struct {
			ToolConfig json.RawMessage `json:"toolConfig"`
		}
		_ = json.Unmarshal(out.Body, &w)
		return string(w.ToolConfig), out.Dropped, nil
	}
	two := []*parleyv1.Tool{fn("a"), fn("b")}
	for _, c := range []struct {
		tc      *parleyv1.ToolChoice
		want    string
		dropped []string
	}{
		{nil, `{"tools":[{"toolSpec":{"name":"a","inputSchema":{"json":{"type":"object","properties":{}}}}},{"toolSpec":{"name":"b","inputSchema":{"json":{"type":"object","properties":{}}}}}]}`, nil},
		{&parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}, `"toolChoice":{"any":{}}`, nil},
		{&parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED, AllowedNames: []string{"b"}}, `{"tools":[{"toolSpec":{"name":"b","inputSchema":{"json":{"type":"object","properties":{}}}}}],"toolChoice":{"tool":{"name":"b"}}}`, nil},
		{&parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, Name: "a"}, `"toolChoice":{"tool":{"name":"a"}}`, nil},
		{&parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, ParallelCalls: new(false)}, `"toolChoice":{"auto":{}}`, []string{"tool_choice.parallel_calls"}},
		{&parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}, ``, nil},
	} {
		got, dropped, err := encode(two, c.tc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, c.want) || c.want == "" && got != "" || !slices.Equal(dropped, c.dropped) {
			t.Errorf("%v: %s dropped %v, want %s dropped %v", c.tc, got, dropped, c.want, c.dropped)
		}
	}
	// A tool the client runs cannot be dropped: its calls are the
	// client's to answer. A tool another service runs for its model can:
	// the model goes without it, and the reply says so.
	var uns *translate.UnsupportedError
	if _, _, err := encode([]*parleyv1.Tool{{Kind: &parleyv1.Tool_Bash{Bash: &parleyv1.BashTool{}}}}, nil); !errors.As(err, &uns) || uns.Field != "tools[0]" {
		t.Errorf("a client's built-in tool: %v", err)
	}
	_, dropped, err := encode([]*parleyv1.Tool{{Kind: &parleyv1.Tool_WebSearch{WebSearch: &parleyv1.WebSearchTool{}}}, {Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: "a"}}}}, nil)
	if err != nil || !slices.Equal(dropped, []string{"tools[0]"}) {
		t.Errorf("a hosted tool: dropped %v, %v", dropped, err)
	}
}

// TestUnsupported: what the service cannot take is refused naming the
// canonical field; what it has no field for is listed as dropped.
func TestUnsupported(t *testing.T) {
	media := func(m *parleyv1.Media) *parleyv1.Request {
		return &parleyv1.Request{Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: m}})}}
	}
	for field, req := range map[string]*parleyv1.Request{
		"messages[0].parts[0].media.file_id":   media(&parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_DOCUMENT, Source: &parleyv1.Media_FileId{FileId: "file_1"}}),
		"messages[0].parts[0].media":           media(&parleyv1.Media{MimeType: "audio/wav", Source: &parleyv1.Media_Data{Data: []byte("RIFF")}}),
		"messages[0].parts[0].media.mime_type": media(&parleyv1.Media{MimeType: "application/zip", Source: &parleyv1.Media_Data{Data: []byte("PK")}}),
		"generation.candidate_count":           {Generation: &parleyv1.GenerationConfig{CandidateCount: new(int32(2))}},
		"messages[1].parts[0].tool_call.arguments": {Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hi")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, translate.CallPart("c", "f", "[1]")),
		}},
		"messages[2].parts[0].tool_result.content[1].media": {Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hi")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, translate.CallPart("c", "f", "{}")),
			translate.NewMessage(parleyv1.Role_ROLE_USER, &parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: "c", Content: []*parleyv1.Part{
				translate.TextPart("ok"), {Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{MimeType: "audio/wav", Source: &parleyv1.Media_Data{Data: []byte("RIFF")}}}},
			}}}}),
		}},
	} {
		_, err := converse.Upstream{}.EncodeRequest(req, target)
		var uns *translate.UnsupportedError
		if !errors.As(err, &uns) || uns.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}

	out, err := converse.Upstream{}.EncodeRequest(media(&parleyv1.Media{MimeType: "video/mp4", Source: &parleyv1.Media_Uri{Uri: "s3://b/clip.mp4"}}), target)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Body, []byte(`"video":{"format":"mp4","source":{"s3Location":{"uri":"s3://b/clip.mp4"}}}`)) {
		t.Errorf("a video: %s", out.Body)
	}

	req := &parleyv1.Request{
		Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hi"))},
		Generation: &parleyv1.GenerationConfig{Seed: new(int64(1)), PresencePenalty: new(0.1), FrequencyPenalty: new(0.1), Logprobs: new(true),
			LogitBias: map[string]float64{"1": 1}, Verbosity: parleyv1.Verbosity_VERBOSITY_LOW},
		ResponseFormat: &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT},
		SafetySettings: []*parleyv1.SafetySetting{{}},
		CachedContent:  "cachedContents/x",
		EndUserId:      "u1",
		ServiceTier:    parleyv1.ServiceTier_SERVICE_TIER_SCALE,
		Metadata:       map[string]string{"bad key!": "x"},
	}
	out, err = converse.Upstream{}.EncodeRequest(req, target)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"response_format", "service_tier", "metadata", "generation.seed", "generation.presence_penalty", "generation.frequency_penalty",
		"generation.logprobs", "generation.logit_bias", "generation.verbosity", "safety_settings", "cached_content", "end_user_id"}
	if !slices.Equal(out.Dropped, want) {
		t.Errorf("dropped %v, want %v", out.Dropped, want)
	}
}

// TestPathEscapesTheModel: an ARN is one path segment.
func TestPathEscapesTheModel(t *testing.T) {
	arn := "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"
	out, err := converse.Upstream{}.EncodeRequest(&parleyv1.Request{Stream: true}, translate.Target{Model: arn})
	if err != nil {
		t.Fatal(err)
	}
	if want := "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/converse-stream"; out.Path != want || !out.Stream {
		t.Errorf("path %s stream %v, want %s", out.Path, out.Stream, want)
	}
}

// TestFramesAreReadByOpenFrames: OpenFrames reads what the service
// sends, padding and all.
func TestFramesAreReadByOpenFrames(t *testing.T) {
	var b bytes.Buffer
	if err := eventstream.Encode(&b, "messageStart", []byte(`{"role":"assistant","p":"abcdefgh"}`)); err != nil {
		t.Fatal(err)
	}
	r := converse.OpenFrames(&b, 0)
	got, err := r.Next()
	if err != nil || got.Type != "messageStart" {
		t.Fatalf("%v %v", got, err)
	}
	if string(got.Data) != `{"role":"assistant","p":"abcdefgh"}` {
		t.Errorf("data %s", got.Data)
	}
}
