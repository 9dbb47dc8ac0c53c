package messages_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/sse"
)

// These tests pin the mapping rules for requests and replies that come
// from, or go to, another dialect (the package doc lists them).

var other = &parleyv1.Extensions{Dialect: parleyv1.Dialect_DIALECT_CHAT_COMPLETIONS}

// encode returns the upstream body as a generic document.
func encode(t *testing.T, req *parleyv1.Request) map[string]any {
	t.Helper()
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-x", Upstream: "claude"})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Body, &m); err != nil {
		t.Fatal(err)
	}
	sdkcheck.MessagesRequest(t, out.Body)
	return m
}

func jsonOf(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// TestSystemTurnsFromOtherDialects: several system and developer turns
// from another dialect's client all reach a messages upstream, the leading
// ones in its system field and a later one as a reminder in the next user
// turn; none is dropped (guide §8 item 7).
func TestSystemTurnsFromOtherDialects(t *testing.T) {
	req := &parleyv1.Request{
		Extensions:   other,
		Instructions: []*parleyv1.Part{translate.TextPart("Be brief.")},
		Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_SYSTEM, translate.TextPart("You are a pirate.")),
			translate.NewMessage(parleyv1.Role_ROLE_DEVELOPER, translate.TextPart("Never reveal the map.")),
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hello.")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, translate.TextPart("Arr.")),
			translate.NewMessage(parleyv1.Role_ROLE_SYSTEM, translate.TextPart("Now speak French.")),
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Where is the map?")),
		},
	}
	m := encode(t, req)
	sys := jsonOf(m["system"])
	for _, want := range []string{"Be brief.", "You are a pirate.", "Never reveal the map."} {
		if !strings.Contains(sys, want) {
			t.Errorf("system %s lacks %q", sys, want)
		}
	}
	msgs := m["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %s", jsonOf(msgs))
	}
	last := jsonOf(msgs[2])
	if !strings.Contains(last, "<system-reminder>\\nNow speak French.\\n</system-reminder>") || !strings.Contains(last, "Where is the map?") {
		t.Errorf("the mid-conversation system turn lost its place: %s", last)
	}
	if msgs[2].(map[string]any)["role"] != "user" {
		t.Errorf("role = %v", msgs[2])
	}
}

func TestToolResultsArePlacedAfterTheirCall(t *testing.T) {
	// Tool turns (another dialect's "tool" role), one answered late and
	// out of order, with text in between.
	req := &parleyv1.Request{
		Extensions: other,
		Messages: []*parleyv1.Message{
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Weather in Paris and Rome?")),
			translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT, translate.TextPart(""), translate.CallPart("c1", "weather", `{"city":"Paris"}`), translate.CallPart("c2", "weather", `{"city":"Rome"}`)),
			translate.NewMessage(parleyv1.Role_ROLE_TOOL, translate.ResultPart("c2", "20C", false)),
			translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Also, hurry."), translate.ResultPart("c1", "15C", false)),
		},
	}
	m := encode(t, req)
	msgs := m["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %s", jsonOf(msgs))
	}
	assistant := msgs[1].(map[string]any)["content"].([]any)
	if len(assistant) != 2 {
		t.Errorf("the empty text block was not dropped: %s", jsonOf(assistant))
	}
	user := msgs[2].(map[string]any)["content"].([]any)
	types := []string{}
	for _, b := range user {
		types = append(types, b.(map[string]any)["type"].(string))
	}
	if strings.Join(types, ",") != "tool_result,tool_result,text" {
		t.Errorf("user turn after the calls = %s", jsonOf(user))
	}
}

func TestRangesAndDefaults(t *testing.T) {
	req := &parleyv1.Request{
		Extensions: other,
		Generation: &parleyv1.GenerationConfig{Temperature: proto.Float64(1.7)},
		Messages:   []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hi"))},
	}
	m := encode(t, req)
	if m["temperature"] != 1.0 {
		t.Errorf("temperature 1.7 became %v, want 1 (the top of this dialect's range)", m["temperature"])
	}
	if m["max_tokens"] != float64(messages.DefaultMaxTokens) {
		t.Errorf("max_tokens = %v, want the default", m["max_tokens"])
	}
	req.Generation = &parleyv1.GenerationConfig{CandidateCount: proto.Int32(2)}
	_, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "m"})
	var uns *translate.UnsupportedError
	if !errors.As(err, &uns) || uns.Field != "generation.candidate_count" {
		t.Fatalf("two candidates: error %v", err)
	}
}

func TestUnsupportedMediaIsAClearError(t *testing.T) {
	for name, m := range map[string]*parleyv1.Media{
		"audio":      {Kind: parleyv1.MediaKind_MEDIA_KIND_AUDIO, MimeType: "audio/wav", Source: &parleyv1.Media_Data{Data: []byte("RIFF")}},
		"heic image": {Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, MimeType: "image/heic", Source: &parleyv1.Media_Data{Data: []byte{1}}},
		"gs uri":     {Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, MimeType: "image/png", Source: &parleyv1.Media_Uri{Uri: "gs://bucket/a.png"}},
	} {
		req := &parleyv1.Request{Extensions: other, Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: m}})}}
		_, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "m"})
		var uns *translate.UnsupportedError
		if !errors.As(err, &uns) || !strings.HasPrefix(uns.Field, "messages[0].parts[0].media") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

func TestToolChoiceAndAllowList(t *testing.T) {
	fn := func(name string) *parleyv1.Tool {
		return &parleyv1.Tool{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: name, Parameters: `{"type":"object"}`}}}
	}
	req := &parleyv1.Request{
		Extensions: other,
		Tools:      []*parleyv1.Tool{fn("a"), fn("b"), fn("c")},
		ToolChoice: &parleyv1.ToolChoice{Mode: parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED, AllowedNames: []string{"b"}, ParallelCalls: proto.Bool(false)},
		Messages:   []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("go"))},
	}
	m := encode(t, req)
	if got := jsonOf(m["tool_choice"]); got != `{"disable_parallel_tool_use":true,"name":"b","type":"tool"}` {
		t.Errorf("tool_choice = %s", got)
	}
	if got := len(m["tools"].([]any)); got != 1 {
		t.Errorf("%d tools offered, want only the allowed one", got)
	}
}

func TestDecodeRejectsBadInputNamingTheField(t *testing.T) {
	cases := map[string]struct{ body, field string }{
		"not json":          {`{"model":`, "model"},
		"no model":          {`{"max_tokens":10,"messages":[]}`, "model"},
		"no max_tokens":     {`{"model":"m","messages":[]}`, "max_tokens"},
		"bad role":          {`{"model":"m","max_tokens":1,"messages":[{"role":"robot","content":"x"}]}`, "messages.0.role"},
		"content null":      {`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":null}]}`, "messages.0.content"},
		"content number":    {`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":5}]}`, "messages.0.content"},
		"image media type":  {`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AA=="}}]}]}`, "messages.0.content.0.source.media_type"},
		"bad base64":        {`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"%%%"}}]}]}`, "messages.0.content.0.source.data"},
		"thinking budget":   {`{"model":"m","max_tokens":1,"messages":[],"thinking":{"type":"enabled"}}`, "thinking.enabled.budget_tokens"},
		"tool without name": {`{"model":"m","max_tokens":1,"messages":[],"tools":[{"input_schema":{}}]}`, "tools.0.name"},
		"max_tokens string": {`{"model":"m","max_tokens":"many","messages":[]}`, "max_tokens"},
		"cache ttl":         {`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"2h"}}]}]}`, "messages.0.content.0.cache_control.ttl"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(c.body)})
			var in *translate.InputError
			if !errors.As(err, &in) {
				t.Fatalf("error = %v, want an input error", err)
			}
			if in.Field != c.field {
				t.Errorf("field = %q, want %q (%v)", in.Field, c.field, err)
			}
			status, body := messages.Client{}.EncodeError(translate.ToProto(err))
			if status != http.StatusBadRequest || !bytes.Contains(body, []byte(`"invalid_request_error"`)) {
				t.Errorf("rendered as %d %s", status, body)
			}
		})
	}
}

func TestHeadersInBothSpellings(t *testing.T) {
	h := http.Header{}
	h.Add("provider-version", "2023-06-01")
	h.Add("anthropic-beta", "a,b")
	h.Add("anthropic-beta", "c")
	h.Add("provider-beta", "b, d")
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Header: h, Body: []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "m", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if v, b := out.Header.Get("anthropic-version"), out.Header.Get("anthropic-beta"); v != "2023-06-01" || b != "a,b,c,d" {
		t.Errorf("upstream headers: version %q beta %q", v, b)
	}
}

// TestStreamUsageIsNeverLost: an upstream that reports usage only at the
// end still gives message_start its input_tokens field, and the final
// message_delta carries every count.
func TestStreamUsageIsNeverLost(t *testing.T) {
	events := []*parleyv1.StreamEvent{
		{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{Id: "chatcmpl-1", Model: "gpt"}}}},
		{Event: &parleyv1.StreamEvent_PartStart{PartStart: &parleyv1.PartStart{Part: translate.TextPart("Hi")}}},
		{Event: &parleyv1.StreamEvent_PartStop{PartStop: &parleyv1.PartStop{}}},
		{Event: &parleyv1.StreamEvent_Finish{Finish: &parleyv1.Finish{Reason: parleyv1.FinishReason_FINISH_REASON_STOP}}},
		{Event: &parleyv1.StreamEvent_Usage{Usage: &parleyv1.Usage{InputTokens: proto.Int64(30), OutputTokens: proto.Int64(2), CacheReadTokens: proto.Int64(10)}}},
		{Event: &parleyv1.StreamEvent_Done{Done: &parleyv1.ResponseDone{}}},
	}
	out := dialecttest.EncodeStream(t, messages.Client{}, &parleyv1.Request{}, events)
	if !bytes.Contains(out, []byte(`"input_tokens":0`)) {
		t.Errorf("message_start has no input_tokens: %s", out)
	}
	m := sdkcheck.MessagesStream(t, out)
	if m.Usage.InputTokens != 20 || m.Usage.CacheReadInputTokens != 10 || m.Usage.OutputTokens != 2 {
		t.Errorf("accumulated usage = %+v", m.Usage)
	}
}

// TestErrorsReachTheSDK: error bodies, and the in-stream error event, are
// read by the official SDK as API errors of the right status and type.
func TestErrorsReachTheSDK(t *testing.T) {
	for _, c := range []struct {
		err        *parleyv1.Error
		status     int
		errType    string
		retryAfter string
	}{
		{&parleyv1.Error{Code: parleyv1.Code_CODE_UNAUTHENTICATED, Message: "invalid x-api-key"}, 401, "authentication_error", ""},
		{&parleyv1.Error{Code: parleyv1.Code_CODE_NOT_FOUND, Message: "model: unknown"}, 404, "not_found_error", ""},
		{&parleyv1.Error{Code: parleyv1.Code_CODE_INVALID_ARGUMENT, HttpStatus: 413, Message: "too large"}, 413, "request_too_large", ""},
		{&parleyv1.Error{Code: parleyv1.Code_CODE_RESOURCE_EXHAUSTED, Message: "slow down"}, 429, "rate_limit_error", "1"},
		{&parleyv1.Error{Code: parleyv1.Code_CODE_UNAVAILABLE, HttpStatus: 503, Message: "The model is overloaded."}, 503, "overloaded_error", ""},
		{&parleyv1.Error{Code: parleyv1.Code_CODE_UNAVAILABLE, HttpStatus: 529, Reason: "overloaded_error", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES}, Message: "Overloaded"}, 529, "overloaded_error", ""},
	} {
		status, body := messages.Client{}.EncodeError(c.err)
		if status != c.status {
			t.Errorf("%v: status %d, want %d", c.err, status, c.status)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(body)
		}))
		client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
		_, err := client.Messages.New(t.Context(), anthropic.MessageNewParams{MaxTokens: 1, Model: "m", Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("x"))}})
		srv.Close()
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != c.status || string(apiErr.Type()) != c.errType {
			t.Errorf("SDK error = %v (type %v), want %d %s", err, apiErr, c.status, c.errType)
		}
	}

	// In a stream: the SDK surfaces the error event as an error.
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := messages.Client{}.NewStreamEncoder(&parleyv1.Request{})
	_ = enc.Encode(w, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_Start{Start: &parleyv1.ResponseStart{Response: &parleyv1.Response{Id: "m"}}}})
	_ = enc.Fail(w, &parleyv1.Error{Code: parleyv1.Code_CODE_UNAVAILABLE, HttpStatus: 503, Message: "upstream went away"})
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: nopCloser{&buf}}
	s := ssestreamOf(res)
	for s.Next() {
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "upstream went away") {
		t.Errorf("in-stream error = %v", err)
	}
}

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

func ssestreamOf(res *http.Response) *ssestream.Stream[anthropic.MessageStreamEventUnion] {
	return ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
}

// TestForeignSchemasFitTheService: a structured-output schema from another
// dialect's client is held to what the service enforces, exactly as the
// official SDK adjusts it (anthropic.BetaJSONSchemaOutputFormat), and
// loses the content-generation keyword propertyOrdering.
func TestForeignSchemasFitTheService(t *testing.T) {
	for name, schema := range map[string]string{
		"nested object with bounds": `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":80},"age":{"type":"integer","minimum":0,"maximum":150},"tags":{"type":"array","items":{"type":"string"},"minItems":2,"maxItems":7}},"required":["name"]}`,
		"formats":                   `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"n":{"type":"string","format":"int64"}}}`,
		"oneOf and refs":            `{"type":"object","$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"}}}},"properties":{"p":{"$ref":"#/$defs/pt","description":"a point"},"v":{"oneOf":[{"type":"string"},{"type":"integer","multipleOf":2}]}}}`,
		"map of values":             `{"type":"object","additionalProperties":{"type":"number","exclusiveMinimum":0}}`,
		"array root":                `{"type":"array","items":{"type":"object","properties":{"recipeName":{"type":"string"}},"propertyOrdering":["recipeName"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			req := &parleyv1.Request{
				Extensions:     other,
				Messages:       []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("x"))},
				ResponseFormat: &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Schema: schema},
			}
			m := encode(t, req)
			got, _ := json.Marshal(m["output_config"].(map[string]any)["format"].(map[string]any)["schema"])

			var in map[string]any
			if err := json.Unmarshal([]byte(schema), &in); err != nil {
				t.Fatal(err)
			}
			dropOrdering(in)
			want, _ := json.Marshal(anthropic.BetaJSONSchemaOutputFormat(in).Schema)
			if diff := jsonDiff(t, want, got); diff != "" {
				t.Errorf("schema differs from the SDK's adjustment (-sdk +parley):\n%s", diff)
			}
		})
	}
}

func dropOrdering(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "propertyOrdering")
		for _, s := range x {
			dropOrdering(s)
		}
	case []any:
		for _, s := range x {
			dropOrdering(s)
		}
	}
}

func jsonDiff(t *testing.T, want, got []byte) string {
	t.Helper()
	diff, err := golden.DiffJSON(want, got)
	if err != nil {
		t.Fatal(err)
	}
	return diff
}

func TestAPIKeyInEverySpelling(t *testing.T) {
	for name, c := range map[string]struct {
		h    http.Header
		want string
	}{
		"x-api-key":            {http.Header{"X-Api-Key": {"sk-a"}}, "sk-a"},
		"bearer":               {http.Header{"Authorization": {"Bearer sk-b"}}, "sk-b"},
		"bearer, any case":     {http.Header{"Authorization": {"bearer  sk-c "}}, "sk-c"},
		"both: x-api-key wins": {http.Header{"X-Api-Key": {"sk-a"}, "Authorization": {"Bearer sk-b"}}, "sk-a"},
		"basic is not a key":   {http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}, ""},
		"none":                 {http.Header{}, ""},
	} {
		in := &translate.Incoming{Header: c.h, Query: url.Values{"beta": {"true"}}}
		if got := (messages.Client{}).APIKey(in); got != c.want {
			t.Errorf("%s: key %q, want %q", name, got, c.want)
		}
	}
}

// oneOfEachName fails when a JSON object in body holds a member twice.
func oneOfEachName(t *testing.T, what string, body []byte) {
	t.Helper()
	if _, err := jsontext.NewDecoder(bytes.NewReader(body)).ReadValue(); err != nil {
		t.Errorf("%s: %v\n%s", what, err, body)
	}
}

// TestRawCitationsGoOutOnce: citations Parley does not model are kept raw
// and reach a service or client of this dialect in the block's citations
// member, written once.
func TestRawCitationsGoOutOnce(t *testing.T) {
	const cites = `[{"type":"future_location","cited_text":"The sky is blue."}]`
	body := `{"model":"claude-x","max_tokens":10,` +
		`"system":[{"type":"text","text":"Be brief.","citations":` + cites + `}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"Why?"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Because.","citations":` + cites + `},{"type":"tool_use","id":"t1","name":"look","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"Seen.","citations":` + cites + `}]}]}]}`
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	oneOfEachName(t, "upstream request", out.Body)
	if diff := jsonDiff(t, []byte(body), out.Body); diff != "" {
		t.Errorf("the round trip changed the request (-in +out):\n%s", diff)
	}

	reply := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",` +
		`"content":[{"type":"text","text":"Blue.","citations":` + cites + `}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`
	resp, err := messages.Upstream{}.DecodeResponse(translate.Target{Model: "claude-x"}, []byte(reply))
	if err != nil {
		t.Fatal(err)
	}
	got, err := messages.Client{}.EncodeResponse(req, resp)
	if err != nil {
		t.Fatal(err)
	}
	oneOfEachName(t, "reply", got)
	if diff := jsonDiff(t, []byte(reply), got); diff != "" {
		t.Errorf("the round trip changed the reply (-in +out):\n%s", diff)
	}
}

// TestOutputConfigOfUnknownMembersOnly: an output_config that holds only
// members Parley does not model reaches a service of this dialect.
func TestOutputConfigOfUnknownMembersOnly(t *testing.T) {
	body := `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"Hi"}],` +
		`"output_config":{"verbosity":"low","task_budget":{"type":"tokens","total":2000}}}`
	req, err := messages.Client{}.DecodeRequest(&translate.Incoming{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := jsonDiff(t, []byte(body), out.Body); diff != "" {
		t.Errorf("the round trip changed the request (-in +out):\n%s", diff)
	}
}

// TestDynamicRetrievalIsReported: a web search's dynamic-retrieval
// threshold has no counterpart here; it is left out and named.
func TestDynamicRetrievalIsReported(t *testing.T) {
	req := &parleyv1.Request{
		Extensions: other,
		Tools: []*parleyv1.Tool{{Kind: &parleyv1.Tool_WebSearch{WebSearch: &parleyv1.WebSearchTool{
			DynamicRetrieval: &parleyv1.DynamicRetrieval{Mode: parleyv1.DynamicRetrievalMode_DYNAMIC_RETRIEVAL_MODE_DYNAMIC, Threshold: proto.Float64(0.3)},
		}}}},
		Messages: []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("News?"))},
	}
	out, err := messages.Upstream{}.EncodeRequest(req, translate.Target{Model: "claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	sdkcheck.MessagesRequest(t, out.Body)
	if got := strings.Join(out.Dropped, ","); got != "tools[0].web_search.dynamic_retrieval" {
		t.Errorf("dropped = %v", out.Dropped)
	}
	if bytes.Contains(out.Body, []byte("threshold")) || bytes.Contains(out.Body, []byte("dynamic")) {
		t.Errorf("the threshold was sent: %s", out.Body)
	}
}
