package responses

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Usage, in both directions.

func canonicalUsage(u *usage, ext **parleyv1.Extensions) *parleyv1.Usage {
	out := &parleyv1.Usage{InputTokens: &u.InputTokens, OutputTokens: &u.OutputTokens, TotalTokens: &u.TotalTokens}
	if d := u.InputTokensDetails; d != nil {
		out.CacheReadTokens = &d.CachedTokens
		jsonx.Keep(ext, thisDialect, "usage/input_tokens_details", d.Unknown)
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = &d.ReasoningTokens
		jsonx.Keep(ext, thisDialect, "usage/output_tokens_details", d.Unknown)
	}
	jsonx.Keep(ext, thisDialect, "usage", u.Unknown)
	return out
}

// wireUsage renders usage; the details are always present, as the service
// sends them.
func wireUsage(u *parleyv1.Usage, ext *parleyv1.Extensions) *usage {
	if u == nil {
		return nil
	}
	w := &usage{InputTokens: u.GetInputTokens(), OutputTokens: u.GetOutputTokens(), TotalTokens: u.GetTotalTokens(), Unknown: jsonx.Take(ext, thisDialect, "usage")}
	if u.TotalTokens == nil {
		w.TotalTokens = w.InputTokens + w.OutputTokens
	}
	w.InputTokensDetails = &inputDetails{CachedTokens: u.GetCacheReadTokens(), Unknown: jsonx.Take(ext, thisDialect, "usage/input_tokens_details")}
	w.OutputTokensDetails = &outputDetails{ReasoningTokens: u.GetReasoningTokens(), Unknown: jsonx.Take(ext, thisDialect, "usage/output_tokens_details")}
	return w
}
