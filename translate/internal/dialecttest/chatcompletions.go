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
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
)

// ChatCompletions describes the chat-completions dialect. Its streams are
// pinned: how a stream is cut into chunks is the encoder's choice. Its
// replies are rendered for a client that asked for usage in a stream.
var ChatCompletions = &Spec{
	Dialect:   chatcompletions.Dialect(),
	Cases:     testdata + "chat_completions",
	CaseModel: "gpt-test",
	Model:     "gpt-4.1",
	Incoming:  withHeaders,

	Schemas:       chatCompletionsSchemas,
	ClientRequest: &parleyv1.Request{StreamUsage: new(true)},
	PinStreams:    true,
	CheckUpstream: func(t *testing.T, _ *parleyv1.Request, out *translate.Outgoing, _ string) {
		if got := out.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization = %q", got)
		}
		if out.Path != "/v1/chat/completions" {
			t.Errorf("path = %q", out.Path)
		}
	},

	SDKRequest: sdkcheck.ChatRequest,
	SDKReply:   func(t testing.TB, body []byte) { sdkcheck.ChatReply(t, body) },
	SDKStream: func(t testing.TB, stream, whole []byte) {
		sdkcheck.SameChatCompletion(t, sdkcheck.ChatReply(t, whole), sdkcheck.ChatStream(t, stream))
	},
	SDKStreamError: func(t testing.TB, stream []byte, _ int, _, message string) {
		sdkcheck.ChatStreamError(t, stream, message)
	},
	SDKError: sdkcheck.OpenAIError,

	// A tool round trip with a strict tool.
	BenchRequest:    "tool_round_trip/request.json",
	Stream500:       chatCompletionsStream500,
	Stream500Events: 500,
	StreamText:      "stream_text_usage/stream.sse",
	Reply:           "doc_default_response/response.json",
}

func chatCompletionsSchemas(t *testing.T) (request, response *golden.Validator) {
	mappers := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[jsontext.Value](): golden.Any(),
	}
	parts := &jsonschema.Schema{Type: "array", Items: golden.Inline(chatcompletions.ContentPart{}, mappers)}
	mappers[reflect.TypeFor[chatcompletions.Content]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "null"}, parts}}
	mappers[reflect.TypeFor[chatcompletions.Stop]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "array", Items: &jsonschema.Schema{Type: "string"}}}}
	mappers[reflect.TypeFor[chatcompletions.ToolChoice]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Enum: []any{"none", "auto", "required"}},
		golden.Inline(struct {
			Type string `json:"type" jsonschema:"enum=function,enum=allowed_tools"`
		}{}, mappers),
	}}
	return golden.CheckSchema(t, testdata+"schemas/chat_completions/request.json", chatcompletions.Request{}, mappers),
		golden.CheckSchema(t, testdata+"schemas/chat_completions/response.json", chatcompletions.Response{}, mappers)
}

// chatCompletionsStream500 is a stream of 500 chunks: the role chunk, 497
// content deltas, the finish chunk and the usage chunk, then [DONE].
func chatCompletionsStream500() []byte {
	var s strings.Builder
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1","system_fingerprint":"fp_1",`
	s.WriteString("data: " + head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := 0; i < 497; i++ {
		fmt.Fprintf(&s, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word %d \"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", head, i)
	}
	s.WriteString("data: " + head + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	s.WriteString("data: " + head + `"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":994,"total_tokens":1006}}` + "\n\n")
	s.WriteString("data: [DONE]\n\n")
	return []byte(s.String())
}
