package chatcompletions

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Finish reasons, both ways.

// finishReasons maps this dialect's finish words.
var finishReasons = map[string]parleyv1.FinishReason{
	"stop":           parleyv1.FinishReason_FINISH_REASON_STOP,
	"length":         parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"tool_calls":     parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
	"function_call":  parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
	"content_filter": parleyv1.FinishReason_FINISH_REASON_SAFETY,
}

func finishReason(word string) (parleyv1.FinishReason, string) {
	if r, ok := finishReasons[word]; ok {
		if word == "function_call" {
			return r, word
		}
		return r, ""
	}
	return parleyv1.FinishReason_FINISH_REASON_OTHER, word
}

// finishWord is the word a client of this dialect sees: a turn that ends
// in tool calls is tool_calls whatever the upstream said; safety stops of
// every kind are content_filter; limits are length; the rest stop.
func finishWord(reason parleyv1.FinishReason, message string, calls bool, origin parleyv1.Dialect) string {
	switch translate.ToolUseFinish(reason, calls) {
	case parleyv1.FinishReason_FINISH_REASON_TOOL_USE:
		if calls {
			return "tool_calls"
		}
		return "stop"
	case parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS, parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED:
		return "length"
	case parleyv1.FinishReason_FINISH_REASON_SAFETY, parleyv1.FinishReason_FINISH_REASON_RECITATION,
		parleyv1.FinishReason_FINISH_REASON_BLOCKLIST, parleyv1.FinishReason_FINISH_REASON_PROHIBITED_CONTENT,
		parleyv1.FinishReason_FINISH_REASON_SPII, parleyv1.FinishReason_FINISH_REASON_IMAGE_SAFETY,
		parleyv1.FinishReason_FINISH_REASON_REFUSAL:
		return "content_filter"
	case parleyv1.FinishReason_FINISH_REASON_OTHER:
		if origin == thisDialect && message != "" {
			return message
		}
	}
	return "stop"
}
