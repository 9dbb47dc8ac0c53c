package sdkcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awses "github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithydocument "github.com/aws/smithy-go/document"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"

	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/golden"
)

// ConverseRequest checks an encoded Converse request against the AWS SDK
// (service/bedrockruntime): the body is read into the SDK's own request
// types by the SDK's JSON deserializer (the restJson1 codec, which skips
// members its schema does not know), sent again by the SDK's client for
// the model named in path, and what the SDK sends must be the body, to
// the same path. A member name or shape the service does not know, which
// the SDK would lose, fails here.
func ConverseRequest(t testing.TB, path string, body []byte, stream bool) {
	t.Helper()
	model := converseModel(t, path)
	var tokens types.ConverseTokensRequest
	converseDeserialize(t, body, &tokens)
	var rest converseRest
	converseDeserialize(t, body, &rest)
	var err error
	var f *bedrockFake
	if stream {
		var framed bytes.Buffer
		_ = eventstream.Encode(&framed, "messageStart", []byte(`{"role":"assistant"}`))
		_ = eventstream.Encode(&framed, "messageStop", []byte(`{"stopReason":"end_turn"}`))
		f = newBedrockFake(t, eventstream.ContentType, framed.Bytes())
		var out *bedrockruntime.ConverseStreamOutput
		out, err = f.client().ConverseStream(f.ctx(t), &bedrockruntime.ConverseStreamInput{
			ModelId: aws.String(model), Messages: tokens.Messages, System: tokens.System, ToolConfig: tokens.ToolConfig,
			AdditionalModelRequestFields: tokens.AdditionalModelRequestFields, InferenceConfig: rest.InferenceConfig,
			OutputConfig: rest.OutputConfig, ServiceTier: rest.ServiceTier, RequestMetadata: rest.RequestMetadata,
		})
		if err == nil {
			for range out.GetStream().Events() {
			}
			_ = out.GetStream().Close()
		}
	} else {
		f = newBedrockFake(t, "application/json",
			[]byte(`{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`))
		_, err = f.client().Converse(f.ctx(t), &bedrockruntime.ConverseInput{
			ModelId: aws.String(model), Messages: tokens.Messages, System: tokens.System, ToolConfig: tokens.ToolConfig,
			AdditionalModelRequestFields: tokens.AdditionalModelRequestFields, InferenceConfig: rest.InferenceConfig,
			OutputConfig: rest.OutputConfig, ServiceTier: rest.ServiceTier, RequestMetadata: rest.RequestMetadata,
		})
	}
	if err != nil {
		t.Fatalf("the SDK: %v", err)
	}
	f.check(t, path, body, "request")
}

// ConverseCountRequest is ConverseRequest for a CountTokens request,
// whose input.converse member holds what a Converse request would.
func ConverseCountRequest(t testing.TB, path string, body []byte) {
	t.Helper()
	model := converseModel(t, path)
	var w struct {
		Input struct {
			Converse json.RawMessage `json:"converse"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	var tokens types.ConverseTokensRequest
	converseDeserialize(t, w.Input.Converse, &tokens)
	f := newBedrockFake(t, "application/json", []byte(`{"inputTokens":1}`))
	if _, err := f.client().CountTokens(f.ctx(t), &bedrockruntime.CountTokensInput{
		ModelId: aws.String(model), Input: &types.CountTokensInputMemberConverse{Value: tokens},
	}); err != nil {
		t.Fatalf("the SDK: %v", err)
	}
	f.check(t, path, body, "count request")
}

// converseModel is the model id of a /model/{modelId}/... path.
func converseModel(t testing.TB, path string) string {
	t.Helper()
	seg, ok := strings.CutPrefix(path, "/model/")
	seg, _, _ = strings.Cut(seg, "/")
	model, err := url.PathUnescape(seg)
	if !ok || err != nil || model == "" {
		t.Fatalf("the request goes to %s, not a model's path", path)
	}
	return model
}

// converseDeserialize reads JSON into an SDK type with the SDK's
// restJson1 deserializer, reached through the one door it has for a bare
// JSON payload: an event stream's initial-response message.
func converseDeserialize(t testing.TB, payload []byte, out smithy.Deserializable) {
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

// bedrockFake stands in for the service: it answers every request with
// one reply and keeps the path and body it was sent.
type bedrockFake struct {
	*httptest.Server
	mu   sync.Mutex
	path string
	body []byte
}

func newBedrockFake(t testing.TB, contentType string, reply []byte) *bedrockFake {
	f := &bedrockFake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.path, f.body = r.URL.EscapedPath(), b
		f.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(reply)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *bedrockFake) client() *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(f.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""),
		RetryMaxAttempts: 1,
		HTTPClient:       f.Client(),
	})
}

func (f *bedrockFake) ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// check compares what the SDK sent with what the encoder made.
func (f *bedrockFake) check(t testing.TB, path string, body []byte, what string) {
	t.Helper()
	f.mu.Lock()
	sentPath, sent := f.path, f.body
	f.mu.Unlock()
	if sentPath != path {
		t.Errorf("the SDK sent to %s, the encoder to %s", sentPath, path)
	}
	if diff, err := golden.DiffJSON(sent, body); err != nil || diff != "" {
		t.Errorf("the SDK does not send the encoded %s as it is (-sdk +encoder):\n%s%v", what, diff, err)
	}
}
