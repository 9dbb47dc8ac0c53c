package dialecttest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/responses"
)

// Responses describes the responses dialect. Its streams are pinned: how
// a stream is cut into chunks is the encoder's choice.
var Responses = &Spec{
	Dialect:   responses.Dialect(),
	Cases:     testdata + "responses",
	CaseModel: "gpt-test",
	Model:     "gpt-5",
	Incoming:  withHeaders,

	Schemas:       responsesSchemas,
	ClientRequest: &parleyv1.Request{},
	PinStreams:    true,
	CheckUpstream: func(t *testing.T, _ *parleyv1.Request, out *translate.Outgoing, _ string) {
		if got := out.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization = %q", got)
		}
		if out.Path != "/v1/responses" {
			t.Errorf("path = %q", out.Path)
		}
	},

	SDKRequest: sdkcheck.ResponsesRequest,
	SDKReply:   func(t testing.TB, body []byte) { sdkcheck.ResponsesReply(t, body) },
	SDKStream: func(t testing.TB, stream, whole []byte) {
		sdkcheck.SameResponse(t, sdkcheck.ResponsesReply(t, whole), sdkcheck.ResponsesStream(t, stream))
	},
	SDKStreamError: func(t testing.TB, stream []byte, _ int, _, message string) {
		sdkcheck.ResponsesStreamError(t, stream, message)
	},
	SDKError: sdkcheck.OpenAIError,

	// Reasoning, a function call and its output sent back as items.
	BenchRequest:    "tool_round_trip_items/request.json",
	Stream500:       responsesStream500,
	Stream500Events: 495,
	StreamText:      "stream_text/stream.sse",
	Reply:           "doc_text_response/response.json",
}

func responsesSchemas(t *testing.T) (request, response *golden.Validator) {
	mappers := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[jsontext.Value](): golden.Any(),
	}
	parts := &jsonschema.Schema{Type: "array", Items: golden.Inline(responses.ContentPart{}, mappers)}
	mappers[reflect.TypeFor[responses.Content]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, parts}}
	items := &jsonschema.Schema{Type: "array", Items: golden.Inline(responses.Item{}, mappers)}
	mappers[reflect.TypeFor[responses.Input]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, items}}
	mappers[reflect.TypeFor[responses.ToolChoice]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Enum: []any{"none", "auto", "required"}},
		golden.Inline(struct {
			Type string `json:"type"`
		}{}, mappers),
	}}
	return golden.CheckSchema(t, testdata+"schemas/responses/request.json", responses.Request{}, mappers),
		golden.CheckSchema(t, testdata+"schemas/responses/response.json", responses.Response{}, mappers)
}

// responsesStream500 is a stream of 500 events: created, in_progress, a
// message item with one text part of 492 deltas, completed.
func responsesStream500() []byte {
	var s strings.Builder
	resp := `{"id":"resp_1","object":"response","created_at":1741476542,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1","output":[],"usage":null}`
	seq := 0
	ev := func(typ, body string) {
		fmt.Fprintf(&s, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, body)
		seq++
	}
	ev("response.created", `"response":`+resp)
	ev("response.in_progress", `"response":`+resp)
	ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	ev("response.content_part.added", `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`)
	for i := 0; i < 492; i++ {
		ev("response.output_text.delta", fmt.Sprintf(`"item_id":"msg_1","output_index":0,"content_index":0,"delta":"word %d ","logprobs":[]`, i))
	}
	ev("response.output_text.done", `"item_id":"msg_1","output_index":0,"content_index":0,"text":"...","logprobs":[]`)
	ev("response.content_part.done", `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":"..."}`)
	ev("response.output_item.done", `"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"..."}],"role":"assistant"}`)
	ev("response.completed", `"response":{"id":"resp_1","object":"response","created_at":1741476542,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1","output":[],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":984,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":996}}`)
	return []byte(s.String())
}
