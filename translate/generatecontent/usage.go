package generatecontent

import (
	"iter"
	"slices"
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

// lastDetails are the per-modality lists of the last usage a stream's
// chunk carried, in the order canonicalUsage fills them: a stream repeats
// them on every chunk (the prompt's tokens by modality do not change as
// the answer grows), and a chunk whose lists are the same shares them
// rather than making them again, two allocations for each entry. A list
// is never changed once made, only replaced: every reader of a usage's
// details (MergeUsageInto among them) takes or replaces the list whole.
type lastDetails [4][]*parleyv1.ModalityTokens

// list returns the canonical list of wire, list i of the last usage when
// it is the same; a nil last makes a new one.
func (last *lastDetails) list(i int, wire []modalityTokenCount) []*parleyv1.ModalityTokens {
	if last == nil {
		return modalityTokens(wire)
	}
	if !sameModalities(last[i], wire) {
		// Clipped: a list shared by several usages must not be appended
		// to in place.
		last[i] = slices.Clip(modalityTokens(wire))
	}
	return last[i]
}

// sameModalities reports whether have is the canonical form of wire.
func sameModalities(have []*parleyv1.ModalityTokens, wire []modalityTokenCount) bool {
	if len(have) != len(wire) {
		return false
	}
	for i, m := range wire {
		if have[i].GetModality() != modalityNames[m.Modality] || have[i].GetTokens() != deref(m.TokenCount) {
			return false
		}
	}
	return true
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
// used once, and converting u again makes a usage of its own. Its
// details are last's when they are the same (a stream's); last may be
// nil (a whole reply's).
func canonicalUsage(u *usageMetadata, last *lastDetails) *parleyv1.Usage {
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
	out.InputDetails = last.list(0, u.PromptTokensDetails)
	out.CacheDetails = last.list(1, u.CacheTokensDetails)
	out.OutputDetails = last.list(2, u.CandidatesTokensDetails)
	out.ToolUseInputDetails = last.list(3, u.ToolUsePromptTokensDetails)
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
