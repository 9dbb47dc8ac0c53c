package messages

import (
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Usage, both ways: token counts (this dialect's input_tokens leave out
// the cached tokens, canonical input counts them), cache writes by
// lifetime, thinking tokens, and the service tier the usage reports.

// canonicalUsage converts the dialect's usage, whose input_tokens leave out
// the cached tokens, to canonical usage, whose input_tokens hold them.
func canonicalUsage(u *usage) *parleyv1.Usage {
	out := &parleyv1.Usage{
		CacheReadTokens:     u.CacheReadInputTokens,
		CacheCreationTokens: u.CacheCreationInputTokens,
		OutputTokens:        u.OutputTokens,
	}
	if u.InputTokens != nil {
		out.InputTokens = ptr(*u.InputTokens + deref(u.CacheReadInputTokens) + deref(u.CacheCreationInputTokens))
	}
	if cc := u.CacheCreation; cc != nil {
		out.CacheCreation_5MTokens, out.CacheCreation_1HTokens = cc.Ephemeral5m, cc.Ephemeral1h
	}
	if st := u.ServerToolUse; st != nil {
		out.WebSearchRequests = st.WebSearchRequests
	}
	if od := u.OutputTokensDetails; od != nil {
		out.ReasoningTokens = od.ThinkingTokens
	}
	return out
}

// wireUsage converts canonical usage back. Counts the dialect always
// reports are always written, as 0 when unknown.
func wireUsage(u *parleyv1.Usage) *usage {
	cacheRead, cacheWrite := u.GetCacheReadTokens(), u.GetCacheCreationTokens()
	// The usage and its four counts in one allocation: a stream's encoder
	// makes one at its start and one at its end.
	b := &struct {
		u                         usage
		in, out, cacheWrite, read int64
	}{in: max(u.GetInputTokens()-cacheRead-cacheWrite, 0), out: u.GetOutputTokens(), cacheWrite: cacheWrite, read: cacheRead}
	out := &b.u
	out.InputTokens, out.OutputTokens, out.CacheCreationInputTokens, out.CacheReadInputTokens = &b.in, &b.out, &b.cacheWrite, &b.read
	if u.CacheCreation_5MTokens != nil || u.CacheCreation_1HTokens != nil {
		out.CacheCreation = &cacheCreation{Ephemeral5m: ptr(u.GetCacheCreation_5MTokens()), Ephemeral1h: ptr(u.GetCacheCreation_1HTokens())}
	}
	if u.WebSearchRequests != nil {
		out.ServerToolUse = &serverToolUse{WebSearchRequests: u.WebSearchRequests}
	}
	if u.ReasoningTokens != nil {
		out.OutputTokensDetails = &outputTokensDetails{ThinkingTokens: u.ReasoningTokens}
	}
	return out
}

// mergeUsage overwrites the counts of dst that src reports.
func mergeUsage(dst, src *usage) {
	if src.InputTokens != nil {
		dst.InputTokens = src.InputTokens
	}
	if src.OutputTokens != nil {
		dst.OutputTokens = src.OutputTokens
	}
	if src.CacheCreationInputTokens != nil {
		dst.CacheCreationInputTokens = src.CacheCreationInputTokens
	}
	if src.CacheReadInputTokens != nil {
		dst.CacheReadInputTokens = src.CacheReadInputTokens
	}
	if src.CacheCreation != nil {
		dst.CacheCreation = src.CacheCreation
	}
	if src.ServerToolUse != nil {
		dst.ServerToolUse = src.ServerToolUse
	}
	if src.OutputTokensDetails != nil {
		dst.OutputTokensDetails = src.OutputTokensDetails
	}
}

func cloneUsage(u *parleyv1.Usage) *parleyv1.Usage {
	if u == nil {
		return nil
	}
	return proto.Clone(u).(*parleyv1.Usage)
}

func serviceTier(s string, ext **parleyv1.Extensions) parleyv1.ServiceTier {
	switch s {
	case "":
		return parleyv1.ServiceTier_SERVICE_TIER_UNSPECIFIED
	case "standard":
		return parleyv1.ServiceTier_SERVICE_TIER_DEFAULT
	case "priority":
		return parleyv1.ServiceTier_SERVICE_TIER_PRIORITY
	}
	jsonx.KeepValue(ext, thisDialect, "usage/service_tier", jsonx.Quote(s))
	return parleyv1.ServiceTier_SERVICE_TIER_UNSPECIFIED
}

// wireServiceTier spells a canonical tier; a tier word with no canonical
// value travels in the extension bag instead.
func wireServiceTier(resp *parleyv1.Response) string {
	switch resp.GetServiceTier() {
	case parleyv1.ServiceTier_SERVICE_TIER_DEFAULT:
		return "standard"
	case parleyv1.ServiceTier_SERVICE_TIER_PRIORITY:
		return "priority"
	}
	return ""
}
