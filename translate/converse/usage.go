package converse

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Usage: the service's inputTokens leave out the tokens read from and
// written to the prompt cache (totalTokens is their sum with the output
// and both cache counts), as the messages dialect's input_tokens do;
// canonical input counts them: canonical input = inputTokens +
// cacheReadInputTokens + cacheWriteInputTokens. cacheDetails splits the
// cache writes by lifetime.

func canonicalUsage(u *Usage) *parleyv1.Usage {
	out := &parleyv1.Usage{
		OutputTokens:        u.OutputTokens,
		TotalTokens:         u.TotalTokens,
		CacheReadTokens:     u.CacheReadInputTokens,
		CacheCreationTokens: u.CacheWriteInputTokens,
	}
	if u.InputTokens != nil {
		out.InputTokens = ptr(*u.InputTokens + deref(u.CacheReadInputTokens) + deref(u.CacheWriteInputTokens))
	}
	for _, d := range u.CacheDetails {
		switch d.TTL {
		case "5m":
			out.CacheCreation_5MTokens = ptr(out.GetCacheCreation_5MTokens() + d.InputTokens)
		case "1h":
			out.CacheCreation_1HTokens = ptr(out.GetCacheCreation_1HTokens() + d.InputTokens)
		}
	}
	return out
}
