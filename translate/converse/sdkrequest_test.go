package converse_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awses "github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithydocument "github.com/aws/smithy-go/document"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"

	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/golden"
)

// sdkResends checks an encoded Converse request against the SDK: the
// body is read into the SDK's own request types by the SDK's JSON
// deserializer (the restJson1 codec, which skips members its schema does
// not know), sent again by the SDK's client, and what the SDK sends must
// be the body. A member name or shape the service does not know, which
// the SDK would lose, fails here.
func sdkResends(t *testing.T, path string, body []byte, stream bool) {
	t.Helper()
	var tokens types.ConverseTokensRequest
	sdkDeserialize(t, body, &tokens)
	var rest converseRest
	sdkDeserialize(t, body, &rest)
	f := newFakeService(t, http.StatusOK, http.Header{"Content-Type": {"application/json"}},
		[]byte(`{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`))
	c := sdkClient(f)
	var err error
	if stream {
		var framed bytes.Buffer
		_ = eventstream.Encode(&framed, "messageStart", []byte(`{"role":"assistant"}`))
		_ = eventstream.Encode(&framed, "messageStop", []byte(`{"stopReason":"end_turn"}`))
		f = newFakeService(t, http.StatusOK, http.Header{"Content-Type": {eventstream.ContentType}}, framed.Bytes())
		c = sdkClient(f)
		var out *bedrockruntime.ConverseStreamOutput
		out, err = c.ConverseStream(ctx(t), &bedrockruntime.ConverseStreamInput{
			ModelId: aws.String(caseModel), Messages: tokens.Messages, System: tokens.System, ToolConfig: tokens.ToolConfig,
			AdditionalModelRequestFields: tokens.AdditionalModelRequestFields, InferenceConfig: rest.InferenceConfig,
			OutputConfig: rest.OutputConfig, ServiceTier: rest.ServiceTier, RequestMetadata: rest.RequestMetadata,
		})
		if err == nil {
			for range out.GetStream().Events() {
			}
			_ = out.GetStream().Close()
		}
	} else {
		_, err = c.Converse(ctx(t), &bedrockruntime.ConverseInput{
			ModelId: aws.String(caseModel), Messages: tokens.Messages, System: tokens.System, ToolConfig: tokens.ToolConfig,
			AdditionalModelRequestFields: tokens.AdditionalModelRequestFields, InferenceConfig: rest.InferenceConfig,
			OutputConfig: rest.OutputConfig, ServiceTier: rest.ServiceTier, RequestMetadata: rest.RequestMetadata,
		})
	}
	if err != nil {
		t.Fatalf("the SDK: %v", err)
	}
	sentPath, sent := f.sent()
	if sentPath != path {
		t.Errorf("the SDK sent to %s, the encoder to %s", sentPath, path)
	}
	if diff, err := golden.DiffJSON(sent, body); err != nil || diff != "" {
		t.Errorf("the SDK does not send the encoded request as it is (-sdk +encoder):\n%s%v", diff, err)
	}
}

// sdkResendsCount is sdkResends for a count-tokens request.
func sdkResendsCount(t *testing.T, path string, body []byte) {
	t.Helper()
	var w struct {
		Input struct {
			Converse json.RawMessage `json:"converse"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	var tokens types.ConverseTokensRequest
	sdkDeserialize(t, w.Input.Converse, &tokens)
	f := newFakeService(t, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, []byte(`{"inputTokens":1}`))
	if _, err := sdkClient(f).CountTokens(ctx(t), &bedrockruntime.CountTokensInput{
		ModelId: aws.String(caseModel), Input: &types.CountTokensInputMemberConverse{Value: tokens},
	}); err != nil {
		t.Fatalf("the SDK: %v", err)
	}
	sentPath, sent := f.sent()
	if sentPath != path {
		t.Errorf("the SDK sent to %s, the encoder to %s", sentPath, path)
	}
	if diff, err := golden.DiffJSON(sent, body); err != nil || diff != "" {
		t.Errorf("the SDK does not send the encoded count request as it is (-sdk +encoder):\n%s%v", diff, err)
	}
}

// sdkDeserialize reads JSON into an SDK type with the SDK's restJson1
// deserializer, reached through the one door it has for a bare JSON
// payload: an event stream's initial-response message.
func sdkDeserialize(t *testing.T, payload []byte, out smithy.Deserializable) {
	t.Helper()
	m := awses.Message{Payload: payload}
	m.Headers.Set(":message-type", awses.StringValue("event"))
	m.Headers.Set(":event-type", awses.StringValue("initial-response"))
	var framed bytes.Buffer
	if err := awses.NewEncoder().Encode(&framed, m); err != nil {
		t.Fatal(err)
	}
	if err := restjson1.New(nil).DeserializeInitialResponse(nil, &framed, out); err != nil {
		t.Fatalf("the SDK cannot read the request: %v", err)
	}
}

// converseRest reads the members of a Converse request that
// types.ConverseTokensRequest does not hold.
type converseRest struct {
	InferenceConfig *types.InferenceConfiguration
	OutputConfig    *types.OutputConfig
	ServiceTier     *types.ServiceTier
	RequestMetadata map[string]string
}

func (v *converseRest) Deserialize(d smithy.ShapeDeserializer) error {
	return smithy.ReadStruct(d, schemas.ConverseRequest, func(s *smithy.Schema) error {
		switch s {
		case schemas.ConverseRequest_inferenceConfig:
			v.InferenceConfig = &types.InferenceConfiguration{}
			return v.InferenceConfig.Deserialize(d)
		case schemas.ConverseRequest_outputConfig:
			v.OutputConfig = &types.OutputConfig{}
			return v.OutputConfig.Deserialize(d)
		case schemas.ConverseRequest_serviceTier:
			v.ServiceTier = &types.ServiceTier{}
			return v.ServiceTier.Deserialize(d)
		}
		// Anything else is read whole (the members ConverseTokensRequest
		// holds, and requestMetadata, a map of strings).
		var dv smithydocument.Value
		if err := d.ReadDocument(s, &dv); err != nil {
			return err
		}
		if s == schemas.ConverseRequest_requestMetadata {
			b, err := json.Marshal(dv.(smithydocument.Opaque).Value)
			if err != nil {
				return err
			}
			return json.Unmarshal(b, &v.RequestMetadata)
		}
		return nil
	})
}
