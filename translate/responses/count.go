package responses

import (
	"fmt"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// CountPath is the input-token count endpoint of this dialect.
const CountPath = "/v1/responses/input_tokens"

// DecodeCountRequest implements translate.CountClient: the body of
// /v1/responses/input_tokens is a request body without streaming.
func (Client) DecodeCountRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if err := unmarshalRequest(in.Body, &w); err != nil {
		return nil, err
	}
	if w.Stream != nil && *w.Stream {
		return nil, translate.Invalid("stream", "a token count is not streamed")
	}
	return decodeRequest(&w)
}

// EncodeCount implements translate.CountClient.
func (Client) EncodeCount(c *parleyv1.TokenCount) ([]byte, error) {
	return jsonx.Marshal(inputTokens{Object: "response.input_tokens", InputTokens: c.GetInputTokens()})
}

// EncodeCountRequest implements translate.CountUpstream.
func (Upstream) EncodeCountRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := &encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == thisDialect}
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	// Members the count endpoint does not take.
	w.Stream, w.Store, w.Include, w.Metadata, w.ServiceTier, w.User, w.TopLogprobs, w.PromptCacheKey = nil, nil, nil, nil, nil, nil, nil, nil
	w.MaxOutputTokens, w.Temperature, w.TopP = nil, nil, nil
	return e.outgoing(w, CountPath, false)
}

// DecodeCount implements translate.CountUpstream.
func (Upstream) DecodeCount(body []byte) (*parleyv1.TokenCount, error) {
	var w inputTokens
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(thisDialect, err)
	}
	if w.Object != "" && w.Object != "response.input_tokens" {
		return nil, translate.UpstreamProtocol(thisDialect, fmt.Errorf("count reply of type %q", w.Object))
	}
	return &parleyv1.TokenCount{InputTokens: w.InputTokens}, nil
}
