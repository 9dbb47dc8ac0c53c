package messages_test

import (
	"reflect"
	"testing"

	"github.com/invopop/jsonschema"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/messages"
)

const casesDir = "../../testdata/messages"

// TestGolden runs the cases under testdata/messages through the shared
// round trip (translate/internal/dialecttest says what it checks).
func TestGolden(t *testing.T) {
	schemas := wireSchemas(t)
	dialecttest.Run(t, dialecttest.Spec{
		Dir:            casesDir,
		Client:         messages.Client{},
		Upstream:       messages.Upstream{},
		Target:         translate.Target{Model: "claude-test"},
		RequestSchema:  schemas.request,
		ResponseSchema: schemas.response,
		Prepare: func(t *testing.T, c golden.Case) string {
			sdkRequest(t, c)
			return ""
		},
		Incoming: func(t *testing.T, c golden.Case, _ string, body []byte) *translate.Incoming {
			return &translate.Incoming{Header: c.Headers(t), Body: body}
		},
		UpstreamTarget: func(req *parleyv1.Request, _ string) translate.Target {
			return translate.Target{Model: req.GetModel(), APIKey: "sk-test"}
		},
		CheckUpstream: func(t *testing.T, _ *parleyv1.Request, out *translate.Outgoing, _ string) {
			if got := out.Header.Get("x-api-key"); got != "sk-test" {
				t.Errorf("x-api-key = %q", got)
			}
			if out.Header.Get("anthropic-version") == "" {
				t.Error("no anthropic-version header toward the upstream")
			}
		},
		ClientRequest: &parleyv1.Request{},
		SDKRequest:    sdkcheck.MessagesRequest,
		SDKReply:      func(t testing.TB, body []byte) { sdkcheck.MessagesReply(t, body) },
		SDKStream: func(t testing.TB, _, stream, whole []byte) {
			sdkcheck.SameMessage(t, sdkcheck.MessagesReply(t, whole), sdkcheck.MessagesStream(t, stream))
		},
		SDKStreamError: func(t testing.TB, stream []byte, e *parleyv1.Error) {
			sdkcheck.MessagesStreamError(t, stream, e.GetReason(), e.GetMessage())
		},
		SDKError: func(t testing.TB, status int, body []byte, e *parleyv1.Error) {
			sdkcheck.MessagesError(t, status, body, e.GetReason(), e.GetMessage())
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
		reflect.TypeOf(messages.Block{}.Input): golden.Any(),
	}
	blocks := &jsonschema.Schema{Type: "array", Items: golden.Inline(messages.Block{}, mappers)}
	mappers[reflect.TypeFor[messages.Content]()] = &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, blocks}}
	return schemaSet{
		request:  golden.CheckSchema(t, "../../testdata/schemas/messages/request.json", messages.Request{}, mappers),
		response: golden.CheckSchema(t, "../../testdata/schemas/messages/response.json", messages.Response{}, mappers),
	}
}
