package responses

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Finish reasons and statuses, in both directions: a response's status
// and incomplete_details, and an item's status.

var statuses = map[string]parleyv1.ResponseStatus{
	"completed":   parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED,
	"in_progress": parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS,
	"incomplete":  parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE,
	"failed":      parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED,
	"cancelled":   parleyv1.ResponseStatus_RESPONSE_STATUS_CANCELLED,
	"queued":      parleyv1.ResponseStatus_RESPONSE_STATUS_QUEUED,
}

func responseStatusWord(s parleyv1.ResponseStatus) string {
	for w, v := range statuses {
		if v == s {
			return w
		}
	}
	return "completed"
}

var incompleteReasons = map[string]parleyv1.FinishReason{
	"max_output_tokens": parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"content_filter":    parleyv1.FinishReason_FINISH_REASON_SAFETY,
}

// incompleteWord is the incomplete reason a client sees for a finish
// reason that ends a response early, "" for one that does not.
func incompleteWord(r parleyv1.FinishReason) string {
	switch r {
	case parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS, parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED:
		return "max_output_tokens"
	case parleyv1.FinishReason_FINISH_REASON_SAFETY, parleyv1.FinishReason_FINISH_REASON_RECITATION,
		parleyv1.FinishReason_FINISH_REASON_BLOCKLIST, parleyv1.FinishReason_FINISH_REASON_PROHIBITED_CONTENT,
		parleyv1.FinishReason_FINISH_REASON_SPII, parleyv1.FinishReason_FINISH_REASON_IMAGE_SAFETY:
		return "content_filter"
	}
	return ""
}

func finish(status string, inc *incomplete, parts []*parleyv1.Part) parleyv1.FinishReason {
	if inc != nil {
		if r, ok := incompleteReasons[inc.Reason]; ok {
			return r
		}
		return parleyv1.FinishReason_FINISH_REASON_OTHER
	}
	if status == "failed" {
		return parleyv1.FinishReason_FINISH_REASON_OTHER
	}
	if translate.HasToolCalls(parts) {
		return parleyv1.FinishReason_FINISH_REASON_TOOL_USE
	}
	return parleyv1.FinishReason_FINISH_REASON_STOP
}

// responseStatus is the status a whole response ends in.
func responseStatus(resp *parleyv1.Response) parleyv1.ResponseStatus {
	switch {
	case resp.GetError() != nil:
		return parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED
	case resp.GetIncompleteDetails() != nil:
		return parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE
	}
	if cs := resp.GetCandidates(); len(cs) > 0 && incompleteWord(cs[0].GetFinishReason()) != "" {
		return parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE
	}
	if s := resp.GetStatus(); s != parleyv1.ResponseStatus_RESPONSE_STATUS_UNSPECIFIED && s != parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS {
		return s
	}
	return parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED
}

func itemStatus(s string) parleyv1.ItemStatus {
	switch s {
	case "in_progress":
		return parleyv1.ItemStatus_ITEM_STATUS_IN_PROGRESS
	case "completed":
		return parleyv1.ItemStatus_ITEM_STATUS_COMPLETED
	case "incomplete":
		return parleyv1.ItemStatus_ITEM_STATUS_INCOMPLETE
	case "searching":
		return parleyv1.ItemStatus_ITEM_STATUS_SEARCHING
	case "failed":
		return parleyv1.ItemStatus_ITEM_STATUS_FAILED
	}
	return parleyv1.ItemStatus_ITEM_STATUS_UNSPECIFIED
}

func statusWord(s parleyv1.ItemStatus) string {
	switch s {
	case parleyv1.ItemStatus_ITEM_STATUS_IN_PROGRESS:
		return "in_progress"
	case parleyv1.ItemStatus_ITEM_STATUS_COMPLETED:
		return "completed"
	case parleyv1.ItemStatus_ITEM_STATUS_INCOMPLETE:
		return "incomplete"
	case parleyv1.ItemStatus_ITEM_STATUS_SEARCHING:
		return "searching"
	case parleyv1.ItemStatus_ITEM_STATUS_FAILED:
		return "failed"
	}
	return ""
}
