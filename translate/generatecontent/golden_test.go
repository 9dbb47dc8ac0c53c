package generatecontent_test

import (
	"reflect"
	"testing"

	"github.com/invopop/jsonschema"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
)

const casesDir = "../../testdata/generate_content"

// TestGolden runs the cases under testdata/generate_content through the
// shared round trip (translate/internal/dialecttest says what it checks).
// Streams are always pinned in stream.client.sse: this dialect's chunking
// is the encoder's choice; what must not change is what a client
// reassembles, which the genai SDK checks against the upstream's own
// stream and against the whole reply.
func TestGolden(t *testing.T) {
	schemas := wireSchemas(t)
	dialecttest.Run(t, dialecttest.Spec{
		Dir:            casesDir,
		Client:         generatecontent.Client{},
		Upstream:       generatecontent.Upstream{},
		Target:         translate.Target{Model: "gemini-test"},
		RequestSchema:  schemas.request,
		ResponseSchema: schemas.response,
		Prepare: func(t *testing.T, c golden.Case) string {
			if model := sdkRequest(t, c); model != "" {
				return model
			}
			return "gemini-test"
		},
		Incoming: func(_ *testing.T, _ golden.Case, model string, body []byte) *translate.Incoming {
			return &translate.Incoming{Model: "models/" + model, Body: body}
		},
		UpstreamTarget: func(_ *parleyv1.Request, model string) translate.Target {
			return translate.Target{Model: model, APIKey: "k"}
		},
		CheckUpstream: func(t *testing.T, req *parleyv1.Request, out *translate.Outgoing, model string) {
			if out.Path != "/v1beta/models/"+model+":generateContent" || out.Header.Get("x-goog-api-key") != "k" {
				t.Errorf("upstream request %s %v", out.Path, out.Header)
			}
			req.Stream = true
			out, err := generatecontent.Upstream{}.EncodeRequest(req, translate.Target{Model: model})
			if err != nil || out.Path != "/v1beta/models/"+model+":streamGenerateContent" || out.Query.Get("alt") != "sse" {
				t.Errorf("stream request %v %v: %v", out.Path, out.Query, err)
			}
		},
		ClientRequest: &parleyv1.Request{Model: "gemini-test"},
		PinStreams:    true,
		SDKRequest:    sdkcheck.GenerateContentRequest,
		SDKReply:      func(t testing.TB, body []byte) { sdkcheck.GenerateContentReply(t, body) },
		SDKStream: func(t testing.TB, upstream, stream, whole []byte) {
			got := sdkcheck.GenerateContentStream(t, stream)
			sdkcheck.SameReassembled(t, "re-encoded stream vs upstream stream", sdkcheck.GenerateContentStream(t, upstream), got)
			sdkcheck.SameReassembled(t, "stream vs whole reply", sdkcheck.Reassemble(sdkcheck.GenerateContentReply(t, whole)), got)
		},
		SDKStreamError: func(t testing.TB, stream []byte, e *parleyv1.Error) {
			sdkcheck.GenerateContentStreamError(t, stream, int(e.GetHttpStatus()), e.GetReason(), e.GetMessage())
		},
		SDKError: func(t testing.TB, status int, body []byte, e *parleyv1.Error) {
			sdkcheck.GenerateContentError(t, status, body, e.GetMessage())
		},
	})
}

type schemaSet struct{ request, response *golden.Validator }

func wireSchemas(t *testing.T) schemaSet {
	mappers := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeOf(generatecontent.FunctionCall{}.Args): golden.Any(),
	}
	parts := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Part{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.PartList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{parts, parts.Items}}
	tools := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Tool{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.ToolList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{tools, tools.Items}}
	contents := &jsonschema.Schema{Type: "array", Items: golden.Inline(generatecontent.Content{}, mappers)}
	mappers[reflect.TypeFor[generatecontent.ContentList]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{contents, contents.Items}}
	return schemaSet{
		request:  golden.CheckSchema(t, "../../testdata/schemas/generate_content/request.json", generatecontent.Request{}, mappers),
		response: golden.CheckSchema(t, "../../testdata/schemas/generate_content/response.json", generatecontent.Response{}, mappers),
	}
}
