package generatecontent

import (
	"errors"
	"net/http"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// DecodeCountRequest implements translate.CountClient. The body of
// :countTokens holds contents alone or a whole generateContentRequest
// (which names its model again); the model is the path's.
func (Client) DecodeCountRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w countTokensRequest
	if err := jsonx.Unmarshal(in.Body, &w); err != nil {
		return nil, decodeError(err)
	}
	var req *parleyv1.Request
	var err error
	switch {
	case w.GenerateContentRequest != nil && w.Contents != nil:
		return nil, translate.Invalid("generateContentRequest", "give contents or generateContentRequest, not both")
	case w.GenerateContentRequest != nil:
		req, err = decodeRequest(w.GenerateContentRequest)
		var ie *translate.InputError
		if errors.As(err, &ie) {
			ie.Field = "generateContentRequest." + ie.Field
		}
	default:
		req, err = decodeRequest(&Request{Contents: w.Contents})
	}
	if err != nil {
		return nil, err
	}
	req.Model = strings.TrimPrefix(in.Model, "models/")
	return req, nil
}

// EncodeCount implements translate.CountClient.
func (Client) EncodeCount(c *parleyv1.TokenCount) ([]byte, error) {
	return jsonx.Marshal(countTokensResponse{
		TotalTokens:             c.GetInputTokens(),
		CachedContentTokenCount: c.GetCachedTokens(),
		PromptTokensDetails:     wireModalityTokens(c.GetInputDetails()),
	})
}

// EncodeCountRequest implements translate.CountUpstream. The request goes
// whole, as a generateContentRequest, so that the system instruction and
// the tools are counted too.
func (Upstream) EncodeCountRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	out, err := Upstream{}.EncodeRequest(req, t)
	if err != nil {
		return nil, err
	}
	var body Request
	if err := jsonx.Unmarshal(out.Body, &body); err != nil {
		return nil, err
	}
	model := t.Model
	if model == "" {
		model = req.GetModel()
	}
	body.Model = "models/" + strings.TrimPrefix(model, "models/")
	wrapped, err := jsonx.Marshal(countTokensRequest{GenerateContentRequest: &body})
	if err != nil {
		return nil, err
	}
	out.Method, out.Body, out.Stream = http.MethodPost, wrapped, false
	out.Path = "/v1beta/models/" + strings.TrimPrefix(model, "models/") + ":countTokens"
	out.Query.Del("alt")
	return out, nil
}

// DecodeCount implements translate.CountUpstream.
func (Upstream) DecodeCount(body []byte) (*parleyv1.TokenCount, error) {
	var w countTokensResponse
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(thisDialect, err)
	}
	return &parleyv1.TokenCount{InputTokens: w.TotalTokens, CachedTokens: w.CachedContentTokenCount, InputDetails: modalityTokens(w.PromptTokensDetails)}, nil
}

var (
	_ translate.CountClient   = Client{}
	_ translate.CountUpstream = Upstream{}
)
