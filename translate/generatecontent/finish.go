package generatecontent

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Finish reasons, from an upstream's reply and toward a client.

// finishReasons maps the dialect's finish reasons to canonical ones.
var finishReasons = map[string]parleyv1.FinishReason{
	"FINISH_REASON_UNSPECIFIED": parleyv1.FinishReason_FINISH_REASON_UNSPECIFIED,
	"STOP":                      parleyv1.FinishReason_FINISH_REASON_STOP,
	"MAX_TOKENS":                parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"SAFETY":                    parleyv1.FinishReason_FINISH_REASON_SAFETY,
	"RECITATION":                parleyv1.FinishReason_FINISH_REASON_RECITATION,
	"LANGUAGE":                  parleyv1.FinishReason_FINISH_REASON_LANGUAGE,
	"OTHER":                     parleyv1.FinishReason_FINISH_REASON_OTHER,
	"BLOCKLIST":                 parleyv1.FinishReason_FINISH_REASON_BLOCKLIST,
	"PROHIBITED_CONTENT":        parleyv1.FinishReason_FINISH_REASON_PROHIBITED_CONTENT,
	"SPII":                      parleyv1.FinishReason_FINISH_REASON_SPII,
	"MALFORMED_FUNCTION_CALL":   parleyv1.FinishReason_FINISH_REASON_MALFORMED_TOOL_CALL,
	"IMAGE_SAFETY":              parleyv1.FinishReason_FINISH_REASON_IMAGE_SAFETY,
	"UNEXPECTED_TOOL_CALL":      parleyv1.FinishReason_FINISH_REASON_UNEXPECTED_TOOL_CALL,
	"TOO_MANY_TOOL_CALLS":       parleyv1.FinishReason_FINISH_REASON_TOO_MANY_TOOL_CALLS,
}

func finishReason(s string, c *parleyv1.Candidate) parleyv1.FinishReason {
	if r, ok := finishReasons[s]; ok {
		return r
	}
	markFinish.KeepString(&c.Extensions, s)
	return parleyv1.FinishReason_FINISH_REASON_OTHER
}

// wireFinishReason maps a canonical finish reason back. Tool use and stop
// sequences are STOP here (the dialect has no words for them); a refusal is
// SAFETY; a paused turn or an exhausted context window is MAX_TOKENS, the
// nearest word for "cut short".
func wireFinishReason(r parleyv1.FinishReason, c *parleyv1.Candidate, same bool) string {
	if same {
		if s, ok := markFinish.String(c.GetExtensions()); ok {
			return s
		}
	}
	switch r {
	case parleyv1.FinishReason_FINISH_REASON_UNSPECIFIED:
		return ""
	case parleyv1.FinishReason_FINISH_REASON_TOOL_USE, parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE:
		return "STOP"
	case parleyv1.FinishReason_FINISH_REASON_REFUSAL:
		return "SAFETY"
	case parleyv1.FinishReason_FINISH_REASON_PAUSE_TURN, parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED:
		return "MAX_TOKENS"
	case parleyv1.FinishReason_FINISH_REASON_MALFORMED_TOOL_CALL:
		return "MALFORMED_FUNCTION_CALL"
	}
	for k, v := range finishReasons {
		if v == r && k != "FINISH_REASON_UNSPECIFIED" {
			return k
		}
	}
	return "OTHER"
}
