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
// usageBox is a canonical usage and the counts it points to, in one
// allocation (no larger than the three it replaces): a stream with this
// upstream carries usage on every chunk. The chunk reader reads a chunk's
// counts into a box; canonicalUsage takes it, and makes one for a usage
// read otherwise.
type usageBox struct {
	u parleyv1.Usage
	// n holds the six wire counts, in the order the reader numbers
	// them, and the output tokens.
	n [7]int64
}

// canonicalUsage converts u, taking its box if it has one: a box is
// used once, and converting u again makes a usage of its own.
func canonicalUsage(u *usageMetadata) *parleyv1.Usage {
	b := u.box
	u.box = nil
	if b == nil {
		b = new(usageBox)
	}
	out := &b.u
	out.InputTokens = u.PromptTokenCount
	out.CacheReadTokens = u.CachedContentTokenCount
	out.ReasoningTokens = u.ThoughtsTokenCount
	out.ToolUseInputTokens = u.ToolUsePromptTokenCount
	out.TotalTokens = u.TotalTokenCount
	out.InputDetails = modalityTokens(u.PromptTokensDetails)
	out.CacheDetails = modalityTokens(u.CacheTokensDetails)
	out.OutputDetails = modalityTokens(u.CandidatesTokensDetails)
	out.ToolUseInputDetails = modalityTokens(u.ToolUsePromptTokensDetails)
	if u.CandidatesTokenCount != nil || u.ThoughtsTokenCount != nil {
		b.n[6] = deref(u.CandidatesTokenCount) + deref(u.ThoughtsTokenCount)
		out.OutputTokens = &b.n[6]
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
