package converse

import (
	"errors"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// DecodeCount implements translate.CountUpstream: {"inputTokens": n},
// which counts the whole input as the model would be billed for it.
func (Upstream) DecodeCount(body []byte) (*parleyv1.TokenCount, error) {
	var w countResponse
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(thisDialect, err)
	}
	if w.InputTokens == nil {
		return nil, translate.UpstreamProtocol(thisDialect, errors.New("count-tokens reply without inputTokens"))
	}
	return &parleyv1.TokenCount{InputTokens: *w.InputTokens}, nil
}
