package converse

import (
	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Stop reasons of the service as canonical finish reasons. A guardrail
// that intervened and a content filter are both a safety stop (the
// canonical "a safety filter stopped the output"); a malformed tool call
// is one; a reason with no counterpart, or one newer than Parley, is
// OTHER with the service's word in finish_message.
var stopReasons = map[string]parleyv1.FinishReason{
	"end_turn":                      parleyv1.FinishReason_FINISH_REASON_STOP,
	"tool_use":                      parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
	"max_tokens":                    parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"stop_sequence":                 parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE,
	"guardrail_intervened":          parleyv1.FinishReason_FINISH_REASON_SAFETY,
	"content_filtered":              parleyv1.FinishReason_FINISH_REASON_SAFETY,
	"malformed_tool_use":            parleyv1.FinishReason_FINISH_REASON_MALFORMED_TOOL_CALL,
	"model_context_window_exceeded": parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED,
}

func finishReason(s string) (parleyv1.FinishReason, string) {
	if r, ok := stopReasons[s]; ok {
		return r, ""
	}
	return parleyv1.FinishReason_FINISH_REASON_OTHER, s
}

// stopSequence is the stop sequence that matched, for a stop on one. The
// service does not say which; Anthropic models report it among their
// model response fields, as "stop_sequence" (whole replies) or
// "delta"."stop_sequence" (streams).
func stopSequence(r parleyv1.FinishReason, fields jsontext.Value) string {
	if r != parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE || len(fields) == 0 {
		return ""
	}
	var f struct {
		StopSequence *string `json:"stop_sequence"`
		Delta        *struct {
			StopSequence *string `json:"stop_sequence"`
		} `json:"delta"`
	}
	if jsonx.Unmarshal(fields, &f) != nil {
		return ""
	}
	if f.StopSequence != nil {
		return *f.StopSequence
	}
	if f.Delta != nil {
		return deref(f.Delta.StopSequence)
	}
	return ""
}
