package dialecttest

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
)

// GenerateContent describes the content-generation dialect. Its streams
// are always pinned: how they are cut into chunks is the encoder's choice;
// what must not change is what a client reassembles, which the genai SDK
// checks against the upstream's own stream and against the whole reply.
var GenerateContent = &Spec{
	Dialect:   generatecontent.Dialect(),
	Cases:     testdata + "generate_content",
	CaseModel: "gemini-test",
	Model:     "gemini-2.5-flash",
	// The client names the model in the path.
	Incoming: func(h http.Header, model string, body []byte) *translate.Incoming {
		return &translate.Incoming{Header: h, Model: "models/" + model, Body: body}
	},

	Schemas:       generateContentSchemas,
	ClientRequest: &parleyv1.Request{Model: "gemini-test"},
	PinStreams:    true,
	CheckUpstream: func(t *testing.T, req *parleyv1.Request, out *translate.Outgoing, model string) {
		if out.Path != "/v1beta/models/"+model+":generateContent" || out.Header.Get("x-goog-api-key") != "sk-test" {
			t.Errorf("upstream request %s %v", out.Path, out.Header)
		}
		streamed := proto.CloneOf(req)
		streamed.Stream = true
		out, err := generatecontent.Upstream{}.EncodeRequest(streamed, translate.Target{Model: model})
		if err != nil || out.Path != "/v1beta/models/"+model+":streamGenerateContent" || out.Query.Get("alt") != "sse" {
			t.Errorf("stream request %v %v: %v", out.Path, out.Query, err)
		}
	},

	SDKRequest: sdkcheck.GenerateContentRequest,
	SDKReply:   func(t testing.TB, body []byte) { sdkcheck.GenerateContentReply(t, body) },
	SDKStream: func(t testing.TB, stream, whole []byte) {
		sdkcheck.SameReassembled(t, "stream vs whole reply",
			sdkcheck.Reassemble(sdkcheck.GenerateContentReply(t, whole)), sdkcheck.GenerateContentStream(t, stream))
	},
	SDKSameStream: func(t testing.TB, upstream, stream []byte) {
		sdkcheck.SameReassembled(t, "re-encoded stream vs upstream stream",
			sdkcheck.GenerateContentStream(t, upstream), sdkcheck.GenerateContentStream(t, stream))
	},
	SDKStreamError: sdkcheck.GenerateContentStreamError,
	SDKError: func(t testing.TB, status int, body []byte, _, message string) {
		sdkcheck.GenerateContentError(t, status, body, message)
	},

	// A declaration in the Schema form, calls and their responses: about
	// 2 KB.
	BenchRequest:    "sdk_function_calling/request.json",
	Stream500:       generateContentStream500,
	Stream500Events: 500,
	Reply:           "response_text_signature/response.json",
}

func generateContentSchemas(t *testing.T) (request, response *golden.Validator) {
	mappers := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeOf(generatecontent.FunctionCall{}.Args): golden.Any(),
	}
	parts := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Part{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.PartList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{parts, parts.Items}}
	tools := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Tool{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.ToolList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{tools, tools.Items}}
	contents := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Content{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.ContentList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{contents, contents.Items}}
	return golden.CheckSchema(t, testdata+"schemas/generate_content/request.json", generatecontent.Request{}, mappers),
		golden.CheckSchema(t, testdata+"schemas/generate_content/response.json", generatecontent.Response{}, mappers)
}

// generateContentStream500 is a stream of 500 chunks of text, each with
// usage as the service sends them (the prompt's tokens by modality
// among it), the last with the finish reason.
func generateContentStream500() []byte {
	var s strings.Builder
	for i := 0; i < 499; i++ {
		fmt.Fprintf(&s, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"word %d \"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":%d,\"totalTokenCount\":%d,\"promptTokensDetails\":[{\"modality\":\"TEXT\",\"tokenCount\":9}]},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"abc\"}\r\n\r\n", i, i, i+9)
	}
	s.WriteString("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"end\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":500,\"totalTokenCount\":509,\"promptTokensDetails\":[{\"modality\":\"TEXT\",\"tokenCount\":9}]},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"abc\"}\r\n\r\n")
	return []byte(s.String())
}
