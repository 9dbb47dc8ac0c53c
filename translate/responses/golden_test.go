package responses_test

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/responses"
)

const casesDir = "../../testdata/responses"

// TestGolden runs the cases under testdata/responses through the
// shared round trip (translate/internal/dialecttest says what it checks).
// Streams are pinned: how a stream is cut into chunks is the encoder's
// choice.
func TestGolden(t *testing.T) {
	schemas := wireSchemas(t)
	dialecttest.Run(t, dialecttest.Spec{
		Dir:            casesDir,
		Client:         responses.Client{},
		Upstream:       responses.Upstream{},
		Target:         translate.Target{Model: "gpt-test"},
		RequestSchema:  schemas.request,
		ResponseSchema: schemas.response,
		PinStreams:     true,
		Incoming: func(t *testing.T, c golden.Case, _ string, body []byte) *translate.Incoming {
			return &translate.Incoming{Header: c.Headers(t), Body: body}
		},
		UpstreamTarget: func(req *parleyv1.Request, _ string) translate.Target {
			return translate.Target{Model: req.GetModel(), APIKey: "sk-test"}
		},
		CheckUpstream: func(t *testing.T, _ *parleyv1.Request, out *translate.Outgoing, _ string) {
			if got := out.Header.Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization = %q", got)
			}
			if out.Path != "/v1/responses" {
				t.Errorf("path = %q", out.Path)
			}
		},
		ClientRequest: &parleyv1.Request{},
		SDKRequest:    sdkcheck.ResponsesRequest,
		SDKReply:      func(t testing.TB, body []byte) { sdkcheck.ResponsesReply(t, body) },
		SDKStream: func(t testing.TB, _, stream, whole []byte) {
			sdkcheck.SameResponse(t, sdkcheck.ResponsesReply(t, whole), sdkcheck.ResponsesStream(t, stream))
		},
		SDKStreamError: func(t testing.TB, stream []byte, e *parleyv1.Error) {
			sdkcheck.ResponsesStreamError(t, stream, e.GetMessage())
		},
		SDKError: func(t testing.TB, status int, body []byte, e *parleyv1.Error) {
			sdkcheck.OpenAIError(t, status, body, e.GetReason(), e.GetMessage())
		},
	})
}

type schemaSet struct {
	request, response *golden.Validator
}

// wireSchemas pins the JSON Schemas of the wire types and returns
// validators for them.
func wireSchemas(t *testing.T) schemaSet {
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
	return schemaSet{
		request:  golden.CheckSchema(t, "../../testdata/schemas/responses/request.json", responses.Request{}, mappers),
		response: golden.CheckSchema(t, "../../testdata/schemas/responses/response.json", responses.Response{}, mappers),
	}
}
