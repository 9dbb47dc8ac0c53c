package messages

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Stop reasons, both ways, and the refusal that ends the turn of a prompt
// the upstream blocked.

// stopReasons maps the dialect's stop reasons to canonical finish reasons.
var stopReasons = map[string]parleyv1.FinishReason{
	"end_turn":                      parleyv1.FinishReason_FINISH_REASON_STOP,
	"max_tokens":                    parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"stop_sequence":                 parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE,
	"tool_use":                      parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
	"pause_turn":                    parleyv1.FinishReason_FINISH_REASON_PAUSE_TURN,
	"refusal":                       parleyv1.FinishReason_FINISH_REASON_REFUSAL,
	"model_context_window_exceeded": parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED,
}

// stopReason maps a canonical finish reason to the dialect's stop reason.
// Safety stops of other services become "refusal", the dialect's word for
// an answer withheld on safety grounds; reasons with no counterpart
// (malformed or unexpected tool calls, unsupported language) end the turn.
func stopReason(r parleyv1.FinishReason, hasToolCalls bool) string {
	r = translate.ToolUseFinish(r, hasToolCalls)
	switch r {
	case parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS:
		return "max_tokens"
	case parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE:
		return "stop_sequence"
	case parleyv1.FinishReason_FINISH_REASON_TOOL_USE:
		return "tool_use"
	case parleyv1.FinishReason_FINISH_REASON_PAUSE_TURN:
		return "pause_turn"
	case parleyv1.FinishReason_FINISH_REASON_REFUSAL, parleyv1.FinishReason_FINISH_REASON_SAFETY,
		parleyv1.FinishReason_FINISH_REASON_RECITATION, parleyv1.FinishReason_FINISH_REASON_BLOCKLIST,
		parleyv1.FinishReason_FINISH_REASON_PROHIBITED_CONTENT, parleyv1.FinishReason_FINISH_REASON_SPII,
		parleyv1.FinishReason_FINISH_REASON_IMAGE_SAFETY:
		return "refusal"
	case parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED:
		return "model_context_window_exceeded"
	}
	return "end_turn"
}

func finishReason(s string) (parleyv1.FinishReason, string) {
	if r, ok := stopReasons[s]; ok {
		return r, ""
	}
	return parleyv1.FinishReason_FINISH_REASON_OTHER, s
}

// promptBlocked says whether the upstream refused the prompt itself; with
// no candidate to say how the turn ended, this dialect calls that a
// refusal.
func promptBlocked(pf *parleyv1.PromptFeedback) bool {
	return pf.GetBlockReason() != parleyv1.BlockReason_BLOCK_REASON_UNSPECIFIED
}
