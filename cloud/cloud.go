// Package cloud fits the requests of a dialect to a cloud that hosts
// models of it under its own endpoints and authentication: Amazon Bedrock
// (the Converse API, and Anthropic models through InvokeModel), Google
// Vertex AI (Gemini models, and Anthropic models through rawPredict) and
// Azure OpenAI (deployments and the v1 surface).
//
// A dialect's codec builds the request as for the dialect's own service;
// an Adapter then moves it where the cloud serves it (Prepare), signs it or
// adds the cloud's token once the body is final (Authorize), and reads the
// cloud's own error shapes (DecodeError). Replies are the dialect's own,
// but for Bedrock's streams, which are framed as AWS event-stream messages
// (package translate/eventstream; the dispatcher picks the framing from the
// reply's Content-Type).
//
// # Amazon Bedrock
//
// The endpoint is https://bedrock-runtime.{region}.amazonaws.com. Requests
// are signed with SigV4 by the AWS SDK's signer, with credentials from the
// SDK's standard chain (environment, shared config and credentials files
// and profiles, SSO, web identity, container and instance roles), cached
// and refreshed by the SDK; an api_key is a Bedrock API key instead, sent
// as a bearer token. Converse requests go as the converse dialect builds
// them. A messages-dialect request becomes InvokeModel
// (/model/{modelId}/invoke) or InvokeModelWithResponseStream
// (/invoke-with-response-stream): the model moves from the body to the
// path, the body loses "stream" and gains "anthropic_version":
// "bedrock-2023-05-31", and the anthropic-beta header becomes the body's
// "anthropic_beta" list, which is where Bedrock reads betas. InvokeModel has
// no count endpoint that answers in the dialect's shape, so counts are
// Parley's estimate. Errors are AWS's (X-Amzn-ErrorType and a message),
// mapped by translate/eventstream: throttling and quota exceptions are 429
// and retryable, so a model's next route is tried after a Bedrock throttle.
//
// # Google Vertex AI
//
// The endpoint is https://{location}-aiplatform.googleapis.com
// (https://aiplatform.googleapis.com for the global location), under
// /v1/projects/{project}/locations/{location}/publishers/{publisher}/models/.
// Requests carry an OAuth access token for the cloud-platform scope, from
// the credentials file the provider names or else Application Default
// Credentials; tokens are cached and fetched again five minutes before they
// expire. Gemini models take the content-generation dialect's bodies at
// :generateContent, :streamGenerateContent (with alt=sse) and :countTokens,
// whose body is the request's contents, system instruction, tools and
// generation config (Vertex has no generateContentRequest wrapper). An
// api_key with no project is Vertex's express mode: the key goes in
// x-goog-api-key to /v1/publishers/google/models/. Anthropic models take the
// messages dialect's body at :rawPredict and :streamRawPredict, the model
// moved to the path and "anthropic_version": "vertex-2023-10-16" added;
// counts go to count-tokens:rawPredict. Errors in Google's shape
// ({"error": {"code", "message", "status"}}) are read by their status name.
//
// # Azure OpenAI
//
// base_url is the resource's endpoint (https://{resource}.openai.azure.com).
// With an api_version, requests go to the deployments surface: chat
// completions to /openai/deployments/{deployment}/chat/completions, the
// deployment being the route's upstream_model, and responses to
// /openai/responses, each with ?api-version=. Without one they go to the v1
// surface, /openai/v1/chat/completions and /openai/v1/responses, which takes
// no version. The api_key goes in the api-key header; an entra block signs
// in as a Microsoft Entra ID application (client credentials) and sends its
// token as a bearer token instead, cached and renewed five minutes before it
// expires. Errors are OpenAI's shape and read by the dialect.
package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Op is what an upstream request asks for.
type Op int

// The operations an adapter prepares.
const (
	// OpGenerate asks for a reply, whole or streamed (Outgoing.Stream).
	OpGenerate Op = iota + 1
	// OpCount counts a request's input tokens.
	OpCount
)

// Adapter fits one upstream's requests to its cloud.
type Adapter interface {
	// Prepare moves a request the dialect's codec built to where the cloud
	// serves it: path, query, body and headers. It returns ErrNoCount for
	// a count the cloud cannot make.
	Prepare(op Op, out *translate.Outgoing, t translate.Target) error
	// Authorize adds the cloud's credentials to a request whose headers
	// and body are final.
	Authorize(ctx context.Context, req *http.Request, body []byte) error
	// DecodeError reads an error reply in the cloud's own shape; nil
	// leaves it to the dialect's codec.
	DecodeError(status int, h http.Header, body []byte) *parleyv1.Error
	// Provider names the cloud in traces (gen_ai.provider.name).
	Provider() string
}

// ErrNoCount says the cloud has no count endpoint for the dialect; the
// dispatcher estimates instead.
var ErrNoCount = errors.New("the cloud has no count endpoint for this dialect")

// Options adjust New.
type Options struct {
	// HTTPClient fetches tokens (OAuth, Entra); nil uses one with a 30s
	// timeout over the default transport.
	HTTPClient *http.Client
}

// New returns the adapter of an upstream whose provider block is set, and
// the base URL its requests go to when the upstream gives none.
func New(ctx context.Context, u *config.Upstream, d parleyv1.Dialect, o Options) (Adapter, string, error) {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	p := u.Provider
	var (
		a    Adapter
		base string
		err  error
	)
	switch p.Cloud {
	case config.CloudBedrock:
		a, base, err = newBedrock(ctx, u, d)
	case config.CloudVertex:
		a, base, err = newVertex(ctx, u, d, o)
	case config.CloudAzure:
		a, base, err = newAzure(ctx, u, d, o)
	default:
		err = fmt.Errorf("unknown cloud %q", p.Cloud)
	}
	if err != nil {
		return nil, "", fmt.Errorf("upstream %s: %s: %w", u.Name, p.Cloud, err)
	}
	return a, base, nil
}

// authHeaders are where the dialects put a key; an adapter clears them
// and sets its own.
var authHeaders = []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key"}

func clearAuth(h http.Header) {
	for _, k := range authHeaders {
		h.Del(k)
	}
}

// AuthError is a failure to get credentials for a cloud: the chain found
// none, or a token endpoint refused or could not be reached. Its message
// names the upstream and never a secret; the cause is kept for logs.
func AuthError(d parleyv1.Dialect, cloud string, cause error) error {
	return &translate.UpstreamError{Err: &parleyv1.Error{
		Code:       parleyv1.Code_CODE_UNAVAILABLE,
		Message:    fmt.Sprintf("Parley could not get %s credentials for this upstream", cloud),
		HttpStatus: http.StatusBadGateway,
		Reason:     "credentials_unavailable",
		Origin:     &parleyv1.Origin{Dialect: d},
		Retry:      translate.Retry(translate.RetryFacts{Status: http.StatusBadGateway}),
	}, Cause: cause}
}
