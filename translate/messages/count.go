package messages

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// EncodeCount implements translate.CountClient: {"input_tokens": n}. The
// count holds cached tokens, which this dialect counts as input too.
func (Client) EncodeCount(c *parleyv1.TokenCount) ([]byte, error) {
	return jsonx.Marshal(countTokensResponse{InputTokens: c.GetInputTokens()})
}

// DecodeCount implements translate.CountUpstream.
func (Upstream) DecodeCount(body []byte) (*parleyv1.TokenCount, error) {
	var w countTokensResponse
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(thisDialect, err)
	}
	return &parleyv1.TokenCount{InputTokens: w.InputTokens}, nil
}

var (
	_ translate.CountClient   = Client{}
	_ translate.CountUpstream = Upstream{}
)
