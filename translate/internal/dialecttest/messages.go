package dialecttest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
)

// Messages describes the messages dialect.
var Messages = &Spec{
	Dialect:   messages.Dialect(),
	Cases:     testdata + "messages",
	CaseModel: "claude-test",
	Model:     "claude-sonnet-4-5",
	Incoming:  withHeaders,

	Schemas:       messagesSchemas,
	ClientRequest: &parleyv1.Request{},
	CheckUpstream: func(t *testing.T, _ *parleyv1.Request, out *translate.Outgoing, _ string) {
		if got := out.Header.Get("x-api-key"); got != "sk-test" {
			t.Errorf("x-api-key = %q", got)
		}
		if out.Header.Get("anthropic-version") == "" {
			t.Error("no anthropic-version header toward the upstream")
		}
	},

	SDKRequest: sdkcheck.MessagesRequest,
	SDKReply:   func(t testing.TB, body []byte) { sdkcheck.MessagesReply(t, body) },
	SDKStream: func(t testing.TB, stream, whole []byte) {
		sdkcheck.SameMessage(t, sdkcheck.MessagesReply(t, whole), sdkcheck.MessagesStream(t, stream))
	},
	SDKStreamError: func(t testing.TB, stream []byte, _ int, reason, message string) {
		sdkcheck.MessagesStreamError(t, stream, reason, message)
	},
	SDKError: sdkcheck.MessagesError,

	// Tools, a tool round trip and thinking history: about 2 KB.
	BenchRequest:    "sdk_thinking_history/request.json",
	Stream500:       messagesStream500,
	Stream500Events: 500,
	StreamText:      "stream_text/stream.sse",
	Reply:           "response_text/response.json",
}

func messagesSchemas(t *testing.T) (request, response *golden.Validator) {
	mappers := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeOf(messages.Block{}.Input): golden.Any(),
	}
	blocks := &jsonschema.Schema{Type: "array", Items: golden.Inline(messages.Block{}, mappers)}
	mappers[reflect.TypeFor[messages.Content]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, blocks}}
	return golden.CheckSchema(t, testdata+"schemas/messages/request.json", messages.Request{}, mappers),
		golden.CheckSchema(t, testdata+"schemas/messages/response.json", messages.Response{}, mappers)
}

// messagesStream500 is a stream of 500 events: start, a text block of 495
// deltas, the end.
func messagesStream500() []byte {
	var s strings.Builder
	s.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n")
	s.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; i < 495; i++ {
		fmt.Fprintf(&s, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d \"}}\n\n", i)
	}
	s.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	s.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":990}}\n\n")
	s.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return []byte(s.String())
}
