package generatecontent

import (
	"iter"
	"strconv"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Usage: token counts, cached and thought tokens and per-modality details,
// from an upstream's reply and toward a client.

var modalityNames = map[string]parleyv1.Modality{
	"TEXT": parleyv1.Modality_MODALITY_TEXT, "IMAGE": parleyv1.Modality_MODALITY_IMAGE, "AUDIO": parleyv1.Modality_MODALITY_AUDIO,
	"VIDEO": parleyv1.Modality_MODALITY_VIDEO, "DOCUMENT": parleyv1.Modality_MODALITY_DOCUMENT,
}

func modalityTokens(list []modalityTokenCount) []*parleyv1.ModalityTokens {
	var out []*parleyv1.ModalityTokens
	for _, m := range list {
		out = append(out, &parleyv1.ModalityTokens{Modality: modalityNames[m.Modality], Tokens: deref(m.TokenCount)})
	}
	return out
}

func wireModalityTokens(list []*parleyv1.ModalityTokens) []modalityTokenCount {
	var out []modalityTokenCount
	for _, m := range list {
		out = append(out, modalityTokenCount{Modality: strings.TrimPrefix(m.GetModality().String(), "MODALITY_"), TokenCount: ptr(m.GetTokens())})
	}
	return out
}

// canonicalUsage: promptTokenCount counts cached tokens, as canonical input
// does; candidatesTokenCount leaves the thoughts out, so canonical output is
// candidates + thoughts.
func canonicalUsage(u *usageMetadata) *parleyv1.Usage {
	out := &parleyv1.Usage{
		InputTokens:         u.PromptTokenCount,
		CacheReadTokens:     u.CachedContentTokenCount,
		ReasoningTokens:     u.ThoughtsTokenCount,
		ToolUseInputTokens:  u.ToolUsePromptTokenCount,
		TotalTokens:         u.TotalTokenCount,
		InputDetails:        modalityTokens(u.PromptTokensDetails),
		CacheDetails:        modalityTokens(u.CacheTokensDetails),
		OutputDetails:       modalityTokens(u.CandidatesTokensDetails),
		ToolUseInputDetails: modalityTokens(u.ToolUsePromptTokensDetails),
	}
	if u.CandidatesTokenCount != nil || u.ThoughtsTokenCount != nil {
		out.OutputTokens = ptr(deref(u.CandidatesTokenCount) + deref(u.ThoughtsTokenCount))
	}
	return out
}

func wireUsage(u *parleyv1.Usage) *usageMetadata {
	if u == nil {
		return nil
	}
	w := &usageMetadata{
		PromptTokenCount:           u.InputTokens,
		CachedContentTokenCount:    u.CacheReadTokens,
		ThoughtsTokenCount:         u.ReasoningTokens,
		ToolUsePromptTokenCount:    u.ToolUseInputTokens,
		TotalTokenCount:            u.TotalTokens,
		PromptTokensDetails:        wireModalityTokens(u.GetInputDetails()),
		CacheTokensDetails:         wireModalityTokens(u.GetCacheDetails()),
		CandidatesTokensDetails:    wireModalityTokens(u.GetOutputDetails()),
		ToolUsePromptTokensDetails: wireModalityTokens(u.GetToolUseInputDetails()),
	}
	if u.OutputTokens != nil {
		w.CandidatesTokenCount = ptr(max(u.GetOutputTokens()-u.GetReasoningTokens(), 0))
	}
	if w.TotalTokenCount == nil && (u.InputTokens != nil || u.OutputTokens != nil) {
		w.TotalTokenCount = ptr(u.GetInputTokens() + u.GetOutputTokens() + u.GetToolUseInputTokens())
	}
	return w
}

// detailLists names the per-modality lists of a usage report, for the
// members of their entries that the canonical counts do not hold.
func (u *usageMetadata) detailLists() iter.Seq2[string, *[]modalityTokenCount] {
	return func(yield func(string, *[]modalityTokenCount) bool) {
		_ = yield("promptTokensDetails", &u.PromptTokensDetails) &&
			yield("cacheTokensDetails", &u.CacheTokensDetails) &&
			yield("candidatesTokensDetails", &u.CandidatesTokensDetails) &&
			yield("toolUsePromptTokensDetails", &u.ToolUsePromptTokensDetails)
	}
}

// detailKey is the extension prefix of entry i of a per-modality list.
func detailKey(list string, i int) string {
	return "usageMetadata/" + list + "/" + strconv.Itoa(i)
}
