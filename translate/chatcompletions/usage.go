package chatcompletions

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Usage, both ways: prompt and completion tokens and their details
// (cached, audio, reasoning and prediction tokens).

func canonicalUsage(u *usage, ext **parleyv1.Extensions) *parleyv1.Usage {
	out := &parleyv1.Usage{InputTokens: &u.PromptTokens, OutputTokens: &u.CompletionTokens, TotalTokens: &u.TotalTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
		if d.AudioTokens != nil {
			out.InputDetails = append(out.InputDetails, &parleyv1.ModalityTokens{Modality: parleyv1.Modality_MODALITY_AUDIO, Tokens: *d.AudioTokens})
		}
		jsonx.Keep(ext, thisDialect, "usage/prompt_tokens_details", d.Unknown)
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
		out.AcceptedPredictionTokens, out.RejectedPredictionTokens = d.AcceptedPredictionTokens, d.RejectedPredictionTokens
		if d.AudioTokens != nil {
			out.OutputDetails = append(out.OutputDetails, &parleyv1.ModalityTokens{Modality: parleyv1.Modality_MODALITY_AUDIO, Tokens: *d.AudioTokens})
		}
		jsonx.Keep(ext, thisDialect, "usage/completion_tokens_details", d.Unknown)
	}
	jsonx.Keep(ext, thisDialect, "usage", u.Unknown)
	return out
}

func modality(list []*parleyv1.ModalityTokens, m parleyv1.Modality) *int64 {
	for _, x := range list {
		if x.GetModality() == m {
			v := x.GetTokens()
			return &v
		}
	}
	return nil
}

func wireUsage(u *parleyv1.Usage, ext *parleyv1.Extensions) *usage {
	if u == nil {
		return nil
	}
	w := &usage{PromptTokens: u.GetInputTokens(), CompletionTokens: u.GetOutputTokens(), TotalTokens: u.GetTotalTokens(), Unknown: jsonx.Take(ext, thisDialect, "usage")}
	if u.TotalTokens == nil {
		w.TotalTokens = w.PromptTokens + w.CompletionTokens
	}
	audioIn := modality(u.GetInputDetails(), parleyv1.Modality_MODALITY_AUDIO)
	if u.CacheReadTokens != nil || audioIn != nil {
		w.PromptTokensDetails = &promptDetails{CachedTokens: u.CacheReadTokens, AudioTokens: audioIn, Unknown: jsonx.Take(ext, thisDialect, "usage/prompt_tokens_details")}
	}
	audioOut := modality(u.GetOutputDetails(), parleyv1.Modality_MODALITY_AUDIO)
	if u.ReasoningTokens != nil || audioOut != nil || u.AcceptedPredictionTokens != nil || u.RejectedPredictionTokens != nil {
		w.CompletionTokensDetails = &outputDetails{ReasoningTokens: u.ReasoningTokens, AudioTokens: audioOut,
			AcceptedPredictionTokens: u.AcceptedPredictionTokens, RejectedPredictionTokens: u.RejectedPredictionTokens,
			Unknown: jsonx.Take(ext, thisDialect, "usage/completion_tokens_details")}
	}
	return w
}
