package generatecontent_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/genai"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/sse"
)

// These tests pin the mapping rules for requests and replies that come
// from, or go to, another dialect (the package doc lists them).

var other = &parleyv1.Extensions{Dialect: parleyv1.Dialect_DIALECT_MESSAGES}

func encode(t *testing.T, req *parleyv1.Request) map[string]any {
	t.Helper()
	_, m := encodeOut(t, req)
	return m
}

func jsonOf(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

func TestSystemTurnsAndToolResults(t *testing.T) {
	req := &parleyv1.Request{
		Extensions: other,
		Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_SYSTEM, translate.TextPart("Be brief.")),
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Weather in Oslo and Rome?")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, translate.CallPart("toolu_1", "weather", `{"city":"Oslo"}`), translate.CallPart("toolu_2", "weather", `{"city":"Rome"}`)),
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.ResultPart("toolu_1", `{"temp":3}`, false), translate.ResultPart("toolu_2", "service down", true)),
			translate.NewMessage(parleyv1.Role_ROLE_SYSTEM, translate.TextPart("Answer in Italian.")),
		},
	}
	m := encode(t, req)
	if got := jsonOf(m["systemInstruction"]); got != `{"parts":[{"text":"Be brief."}]}` {
		t.Errorf("systemInstruction = %s", got)
	}
	contents := m["contents"].([]any)
	if len(contents) != 3 {
		t.Fatalf("contents = %s", jsonOf(contents))
	}
	calls := jsonOf(contents[1])
	// The calls keep their ids, and their responses the same ones: Gemini
	// 3 models match each response to its call by id.
	if !strings.Contains(calls, `"id":"toolu_1"`) || !strings.Contains(calls, `"id":"toolu_2"`) || !strings.Contains(calls, "skip_thought_signature_validator") == strings.Contains(calls, base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))) {
		t.Errorf("calls of another service: %s", calls)
	}
	resp := contents[2].(map[string]any)["parts"].([]any)
	if got := jsonOf(resp[0]); got != `{"functionResponse":{"id":"toolu_1","name":"weather","response":{"temp":3}}}` {
		t.Errorf("object result = %s", got)
	}
	if got := jsonOf(resp[1]); got != `{"functionResponse":{"id":"toolu_2","name":"weather","response":{"error":"service down"}}}` {
		t.Errorf("error result = %s", got)
	}
	if got := jsonOf(resp[2]); got != "{\"text\":\"<system-reminder>\\nAnswer in Italian.\\n</system-reminder>\"}" {
		t.Errorf("mid-conversation system turn = %s", got)
	}
}

func TestSignaturesGoOnlyToTheirMaker(t *testing.T) {
	own := &parleyv1.Opaque{Value: "Q2lRQg==", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_GENERATE_CONTENT, Upstream: "gemini"}}
	claude := &parleyv1.Opaque{Value: "EqQB", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES}}
	req := &parleyv1.Request{
		Extensions: other,
		Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Q")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT,
				&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "claude thinking"}}, Signature: claude},
				&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "gemini thought"}}, Signature: own},
				&parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: "c", Name: "f", Arguments: "{}"}}, Signature: own},
			),
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.ResultPart("c", "done", false)),
		},
	}
	body := jsonOf(encode(t, req)["contents"])
	if strings.Contains(body, "claude thinking") || strings.Contains(body, "EqQB") {
		t.Errorf("another service's thinking was sent: %s", body)
	}
	if strings.Count(body, "Q2lRQg==") != 2 || !strings.Contains(body, "gemini thought") {
		t.Errorf("this service's signatures were not sent back: %s", body)
	}
	if strings.Contains(body, base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))) {
		t.Errorf("a placeholder was sent for a signed call: %s", body)
	}
}

func TestReasoningSettings(t *testing.T) {
	req := &parleyv1.Request{Extensions: other, Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Think."))}}
	for _, c := range []struct {
		rc   *parleyv1.ReasoningConfig
		want string
	}{
		{&parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_LOW}, `{"includeThoughts":true,"thinkingBudget":2048}`},
		{&parleyv1.ReasoningConfig{Effort: parleyv1.ReasoningEffort_REASONING_EFFORT_NONE}, `{"thinkingBudget":0}`},
		{&parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ENABLED, BudgetTokens: proto.Int32(5000)}, `{"includeThoughts":true,"thinkingBudget":5000}`},
		{&parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE}, `{"includeThoughts":true,"thinkingBudget":-1}`},
		{&parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_DISABLED}, `{"thinkingBudget":0}`},
	} {
		req.Reasoning = c.rc
		gc := encode(t, req)["generationConfig"].(map[string]any)
		if got := jsonOf(gc["thinkingConfig"]); got != c.want {
			t.Errorf("%v: thinkingConfig = %s, want %s", c.rc, got, c.want)
		}
	}
}

// toolRequest is a request of another dialect's client declaring one
// function with the schema.
func toolRequest(schema string) *parleyv1.Request {
	return &parleyv1.Request{
		Extensions: other,
		Messages:   []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Draw."))},
		Tools:      []*parleyv1.Tool{{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: "draw", Parameters: schema}}}},
	}
}

// encodeOut is encode, returning the request as Parley made it.
func encodeOut(t *testing.T, req *parleyv1.Request) (*translate.Outgoing, map[string]any) {
	t.Helper()
	out, err := generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: "gemini-x", Upstream: "gemini"})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	sdkcheck.GenerateContentRequest(t, out.Body)
	var m map[string]any
	if err := json.Unmarshal(out.Body, &m); err != nil {
		t.Fatal(err)
	}
	return out, m
}

func declaration(m map[string]any) map[string]any {
	return m["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)[0].(map[string]any)
}

// A schema the Schema form holds whole goes in that form, which every
// service and model takes.
func TestJSONSchemaBecomesTheSchemaSubset(t *testing.T) {
	schema := `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}},
		"properties": {
			"start": {"$ref": "#/$defs/Point"},
			"label": {"type": ["string", "null"], "maxLength": 20},
			"kind": {"const": "line"},
			"weight": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
			"tag": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
			"when": {"type": "string", "format": "date-time"},
			"shape": {"type": "string", "enum": ["circle", "square"]}
		},
		"required": ["start"]
	}`
	out, m := encodeOut(t, toolRequest(schema))
	fd := declaration(m)
	want := `{"properties":{"kind":{"enum":["line"],"type":"STRING"},"label":{"maxLength":20,"nullable":true,"type":"STRING"},"shape":{"enum":["circle","square"],"type":"STRING"},"start":{"properties":{"x":{"type":"NUMBER"},"y":{"type":"NUMBER"}},"required":["x","y"],"type":"OBJECT"},"tag":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]},"weight":{"nullable":true,"type":"INTEGER"},"when":{"format":"date-time","type":"STRING"}},"required":["start"],"type":"OBJECT"}`
	if got := jsonOf(fd["parameters"]); got != want {
		t.Errorf("parameters\n got %s\nwant %s", got, want)
	}
	if fd["parametersJsonSchema"] != nil || len(out.Dropped) != 0 {
		t.Errorf("parametersJsonSchema %v, dropped %v; want neither", fd["parametersJsonSchema"], out.Dropped)
	}
}

// A schema the Schema form would lose some of goes as JSON Schema, whole
// but for the service's two rules, and what those removed is listed
// (guide §8 item 17; issue 18, item 11).
func TestSchemaTheSubsetCannotHoldGoesAsJSONSchema(t *testing.T) {
	for name, c := range map[string]struct {
		schema, want string
		dropped      []string
	}{
		"closed object": {
			schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{"path":{"type":"string","$comment":"relative"}}}`,
			want:   `{"additionalProperties":false,"properties":{"path":{"type":"string"}},"type":"object"}`,
		},
		"exclusive bound, numeric enum, other format": {
			schema: `{"type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":0},"level":{"type":"integer","enum":[1,2,3]},"mail":{"type":"string","format":"email"}}}`,
			want:   `{"properties":{"level":{"enum":[1,2,3],"type":"integer"},"mail":{"format":"email","type":"string"},"n":{"exclusiveMinimum":0,"type":"integer"}},"type":"object"}`,
		},
		"recursive reference": {
			schema: `{"type":"object","properties":{"tree":{"$ref":"#"},"name":{"type":"string"}}}`,
			want:   `{"properties":{"name":{"type":"string"},"tree":{"$ref":"#"}},"type":"object"}`,
		},
		"keywords beside a reference": {
			schema:  `{"type":"object","$defs":{"P":{"type":"object","additionalProperties":false,"properties":{"x":{"type":"number"}}}},"properties":{"at":{"$ref":"#/$defs/P","description":"where","default":{"x":1}},"enum":{"type":"string"}}}`,
			want:    `{"$defs":{"P":{"additionalProperties":false,"properties":{"x":{"type":"number"}},"type":"object"}},"properties":{"at":{"$ref":"#/$defs/P"},"enum":{"type":"string"}},"type":"object"}`,
			dropped: []string{"tools[0].function.parameters.properties.at.default", "tools[0].function.parameters.properties.at.description"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			out, m := encodeOut(t, toolRequest(c.schema))
			fd := declaration(m)
			if fd["parameters"] != nil {
				t.Errorf("parameters %s: the Schema form would lose some of the schema", jsonOf(fd["parameters"]))
			}
			if got := jsonOf(fd["parametersJsonSchema"]); got != c.want {
				t.Errorf("parametersJsonSchema\n got %s\nwant %s", got, c.want)
			}
			if !slices.Equal(out.Dropped, c.dropped) {
				t.Errorf("dropped %q, want %q", out.Dropped, c.dropped)
			}
		})
	}
	// The structured answer's schema follows the same rule.
	req := toolRequest(`{"type":"object"}`)
	req.ResponseFormat = &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA,
		Schema: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}
	_, m := encodeOut(t, req)
	gc := m["generationConfig"].(map[string]any)
	if gc["responseSchema"] != nil || jsonOf(gc["responseJsonSchema"]) != `{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}` {
		t.Errorf("generationConfig %s", jsonOf(gc))
	}
	req.ResponseFormat.Schema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	_, m = encodeOut(t, req)
	gc = m["generationConfig"].(map[string]any)
	if gc["responseJsonSchema"] != nil || jsonOf(gc["responseSchema"]) != `{"properties":{"city":{"type":"STRING"}},"required":["city"],"type":"OBJECT"}` {
		t.Errorf("generationConfig %s", jsonOf(gc))
	}
}

func TestUnsupportedRequestsAreClearErrors(t *testing.T) {
	base := func() *parleyv1.Request {
		return &parleyv1.Request{Extensions: other, Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("x"))}}
	}
	cases := map[string]func(*parleyv1.Request){
		"six stop sequences": func(r *parleyv1.Request) {
			r.Generation = &parleyv1.GenerationConfig{StopSequences: []string{"a", "b", "c", "d", "e", "f"}}
		},
		"file search": func(r *parleyv1.Request) {
			r.Tools = []*parleyv1.Tool{{Kind: &parleyv1.Tool_FileSearch{FileSearch: &parleyv1.FileSearchTool{VectorStoreIds: []string{"vs"}}}}}
		},
		"foreign file id": func(r *parleyv1.Request) {
			r.Messages[0].Parts = append(r.Messages[0].Parts, &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{Source: &parleyv1.Media_FileId{FileId: "file-abc"}}}})
		},
		"result of an unknown call": func(r *parleyv1.Request) {
			r.Messages[0].Parts = []*parleyv1.Part{translate.ResultPart("nowhere", "x", false)}
		},
	}
	for name, mutate := range cases {
		req := base()
		mutate(req)
		_, err := generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: "m"})
		var uns *translate.UnsupportedError
		if !errors.As(err, &uns) {
			t.Errorf("%s: error %v, want an unsupported error", name, err)
		}
	}
}

func TestMediaByURI(t *testing.T) {
	req := &parleyv1.Request{Extensions: other, Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER,
		&parleyv1.Part{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, Source: &parleyv1.Media_Uri{Uri: "https://example.com/cat.png"}}}},
		&parleyv1.Part{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_DOCUMENT, Source: &parleyv1.Media_Data{Data: []byte("%PDF")}}}},
	)}}
	parts := jsonOf(encode(t, req)["contents"])
	if !strings.Contains(parts, `"fileData":{"fileUri":"https://example.com/cat.png","mimeType":"image/png"}`) || !strings.Contains(parts, `"inlineData":{"data":"JVBERg==","mimeType":"application/pdf"}`) {
		t.Errorf("media = %s", parts)
	}
}

func TestDecodeRejectsBadInputNamingTheField(t *testing.T) {
	cases := map[string]struct{ body, field string }{
		"no contents":      {`{}`, "contents"},
		"bad role":         {`{"contents":[{"role":"robot","parts":[{"text":"x"}]}]}`, "contents[0].role"},
		"no parts":         {`{"contents":[{"role":"user"}]}`, "contents[0].parts"},
		"empty part":       {`{"contents":[{"parts":[{}]}]}`, "contents[0].parts[0]"},
		"two kinds":        {`{"contents":[{"parts":[{"text":"x","inlineData":{"mimeType":"a/b","data":""}}]}]}`, "contents[0].parts[0]"},
		"args not object":  {`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "contents[0].parts[0].functionCall.args"},
		"bad base64":       {`{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"%%"}}]}]}`, "contents[0].parts[0].inlineData.data"},
		"temperature":      {`{"contents":[],"generationConfig":{"temperature":3}}`, "generationConfig.temperature"},
		"six stops":        {`{"contents":[],"generationConfig":{"stopSequences":["a","b","c","d","e","f"]}}`, "generationConfig.stopSequences"},
		"mime type":        {`{"contents":[],"generationConfig":{"responseMimeType":"text/html"}}`, "generationConfig.responseMimeType"},
		"mode":             {`{"contents":[],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "toolConfig.functionCallingConfig.mode"},
		"contents string":  {`{"contents":"hi"}`, "contents"},
		"maxOutput string": {`{"contents":[],"generationConfig":{"maxOutputTokens":"many"}}`, "generationConfig.maxOutputTokens"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "m", Body: []byte(c.body)})
			var in *translate.InputError
			if !errors.As(err, &in) {
				t.Fatalf("error = %v, want an input error", err)
			}
			if in.Field != c.field {
				t.Errorf("field = %q, want %q (%v)", in.Field, c.field, err)
			}
			status, body := generatecontent.Client{}.EncodeError(translate.ToProto(err))
			if status != http.StatusBadRequest || !bytes.Contains(body, []byte(`"INVALID_ARGUMENT"`)) || !bytes.Contains(body, []byte(`"fieldViolations"`)) {
				t.Errorf("rendered as %d %s", status, body)
			}
		})
	}
}

// TestSignaturesOfAnotherDialectSurviveTheClient: a messages-style
// thinking block reaches a client of this dialect as a thought with a
// sealed signature (valid base64, which the SDK decodes into bytes) and
// comes back with its origin when the client replays the turn.
func TestSignaturesOfAnotherDialectSurviveTheClient(t *testing.T) {
	sig := &parleyv1.Opaque{Value: "EqQBCkgIARAB", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES, Upstream: "claude"}}
	resp := &parleyv1.Response{Id: "msg_1", Model: "claude", Candidates: []*parleyv1.Candidate{{
		Parts: []*parleyv1.Part{
			{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "Let me think."}}, Signature: sig},
			translate.CallPart("toolu_9", "lookup", `{"q":"x"}`),
		},
		FinishReason: parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
	}}}
	body, err := generatecontent.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	r := sdkcheck.GenerateContentReply(t, body)
	if r.Candidates[0].FinishReason != genai.FinishReasonStop {
		t.Errorf("finishReason = %v: this dialect ends a tool turn with STOP", r.Candidates[0].FinishReason)
	}
	replay, _ := json.Marshal(map[string]any{"contents": []*genai.Content{genai.NewContentFromText("q", genai.RoleUser), r.Candidates[0].Content}})
	req, err := generatecontent.Client{}.DecodeRequest(&translate.Incoming{Model: "m", Body: replay})
	if err != nil {
		t.Fatal(err)
	}
	got := req.GetMessages()[1].GetParts()[0]
	if !proto.Equal(got.GetSignature(), sig) || got.GetReasoning().GetText() != "Let me think." {
		t.Errorf("replayed thought = %v", got)
	}
	if id := req.GetMessages()[1].GetParts()[1].GetToolCall().GetId(); id != "toolu_9" {
		t.Errorf("call id = %q", id)
	}
}

// TestStreamForTheSDK: keep-alives write nothing (the SDK reads every line
// as data), and an error ends the stream as an error chunk the SDK reports.
func TestStreamForTheSDK(t *testing.T) {
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := generatecontent.Client{}.NewStreamEncoder(&parleyv1.Request{})
	for _, ev := range []*parleyv1.StreamEvent{
		{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{Id: "r"}}}},
		{Event: &parleyv1.StreamEvent_KeepAlive{KeepAlive: &parleyv1.KeepAlive{}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Part: translate.TextPart("Hel")}}},
		{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{Delta: &parleyv1.PartDelta_Text{Text: "lo"}}}},
	} {
		if err := enc.Encode(w, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Fail(w, &parleyv1.Error{Code: parleyv1.Code_CODE_UNAVAILABLE, HttpStatus: 503, Message: "upstream went away"}); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, "data: ") {
			t.Fatalf("a line the SDK cannot read: %q", line)
		}
	}
	client := sdkcheck.GenerateContentClient(t, http.StatusOK, "text/event-stream", buf.Bytes())
	var text string
	var gotErr error
	for ch, err := range client.Models.GenerateContentStream(t.Context(), "m", genai.Text("x"), nil) {
		if err != nil {
			gotErr = err
			break
		}
		text += ch.Text()
	}
	var apiErr genai.APIError
	if text != "Hello" || !errors.As(gotErr, &apiErr) || apiErr.Code != 503 || apiErr.Status != "UNAVAILABLE" {
		t.Errorf("text %q, error %#v", text, gotErr)
	}
}

func TestAPIKeyInEverySpelling(t *testing.T) {
	for name, c := range map[string]struct {
		h    http.Header
		q    url.Values
		want string
	}{
		"header":              {http.Header{"X-Goog-Api-Key": {"k1"}}, nil, "k1"},
		"query":               {nil, url.Values{"key": {"k2"}}, "k2"},
		"header before query": {http.Header{"X-Goog-Api-Key": {"k1"}}, url.Values{"key": {"k2"}}, "k1"},
		"bearer":              {http.Header{"Authorization": {"Bearer k3"}}, nil, "k3"},
		"none":                {nil, url.Values{"alt": {"sse"}}, ""},
	} {
		if got := (generatecontent.Client{}).APIKey(&translate.Incoming{Header: c.h, Query: c.q}); got != c.want {
			t.Errorf("%s: key %q, want %q", name, got, c.want)
		}
	}
}

// TestURLContextMetadataOnce: an upstream's urlContextMetadata with no
// URLs, kept as a marker, reaches a client of this dialect once.
func TestURLContextMetadataOnce(t *testing.T) {
	reply := `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"STOP","index":0,` +
		`"urlContextMetadata":{"urlMetadata":[]}}],"modelVersion":"gemini-x","responseId":"r1"}`
	resp, err := generatecontent.Upstream{}.DecodeResponse(translate.Target{Model: "gemini-x"}, []byte(reply))
	if err != nil {
		t.Fatal(err)
	}
	body, err := generatecontent.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jsontext.NewDecoder(bytes.NewReader(body)).ReadValue(); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	if !bytes.Contains(body, []byte(`"urlContextMetadata":{`)) {
		t.Errorf("urlContextMetadata is missing: %s", body)
	}
}

// TestCandidateRoleOnce: a candidate whose content.role is not "model"
// reaches a client of this dialect as it came: the role once, and none
// when the content had none.
func TestCandidateRoleOnce(t *testing.T) {
	for content, want := range map[string]string{
		`{"role":"user","parts":[{"text":"Hi"}]}`: `{"parts":[{"text":"Hi"}],"role":"user"}`,
		`{"parts":[{"text":"Hi"}]}`:               `{"parts":[{"text":"Hi"}]}`,
	} {
		reply := `{"candidates":[{"content":` + content + `,"finishReason":"STOP","index":0}],"modelVersion":"gemini-x","responseId":"r1"}`
		resp, err := generatecontent.Upstream{}.DecodeResponse(translate.Target{Model: "gemini-x"}, []byte(reply))
		if err != nil {
			t.Fatal(err)
		}
		body, err := generatecontent.Client{}.EncodeResponse(&parleyv1.Request{}, resp)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jsontext.NewDecoder(bytes.NewReader(body)).ReadValue(); err != nil {
			t.Errorf("%s: %v\n%s", content, err, body)
			continue
		}
		var got struct {
			Candidates []struct {
				Content any `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if s := jsonOf(got.Candidates[0].Content); s != want {
			t.Errorf("content %s reached the client as %s, want %s", content, s, want)
		}
	}
}

// TestStreamedArgumentPiecesThatCannotBeRead: a piece whose JSON path
// cannot be read, would build a huge array or goes into a string, or a
// nameless piece with no call in progress, is the upstream's protocol
// error, not a call with arguments made up (issue 23).
func TestStreamedArgumentPiecesThatCannotBeRead(t *testing.T) {
	start := `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","willContinue":true}}]},"index":0}]}` + "\n\n"
	piece := func(path string) string {
		return `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"` + path + `","stringValue":"x"}],"willContinue":true}}]},"index":0}]}` + "\n\n"
	}
	for name, stream := range map[string]string{
		"no $":               start + piece("location"),
		"a huge index":       start + piece("$.a[99999999]"),
		"an open quote":      start + piece("$['a"),
		"member of a string": start + piece("$.a") + piece("$.a.b"),
		"no call":            piece("$.a"),
	} {
		var err error
		for _, err = range translate.DecodeStream(parleyv1.Dialect_DIALECT_GENERATE_CONTENT, strings.NewReader(stream), generatecontent.Upstream{}.NewStreamDecoder(translate.Target{}), translate.StreamLimits{}) {
			if err != nil {
				break
			}
		}
		var up *translate.UpstreamError
		if !errors.As(err, &up) || !strings.Contains(err.Error(), "functionCall") && !strings.Contains(err.Error(), "jsonPath") {
			t.Errorf("%s: %v, want the upstream's protocol error naming the piece", name, err)
		}
	}
}
