package translate

import parleyv1 "github.com/parleyhq/parley/gen/parley/v1"

// Dialects size reasoning in different units: a token budget (messages
// budget_tokens, content-generation thinkingBudget) or a level (responses
// and chat reasoning effort, content-generation thinkingLevel). When a
// request carries only one of them and the upstream wants the other, this
// table converts, so that the round trip level → budget → level gives the
// level back:
//
//	level     budget (tokens)   budgets that map back to it
//	minimal       1024          1 … 1024
//	low           2048          1025 … 2048
//	medium        8192          2049 … 8192
//	high         24576          8193 … 24576
//	xhigh        32768          above 24576
//
// 1024 is the smallest budget the messages style accepts; 24576 is the
// largest budget of the smaller content-generation models, 32768 of the
// larger ones.
var effortBudgets = []struct {
	effort parleyv1.ReasoningEffort
	budget int32
}{
	{parleyv1.ReasoningEffort_REASONING_EFFORT_MINIMAL, 1024},
	{parleyv1.ReasoningEffort_REASONING_EFFORT_LOW, 2048},
	{parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM, 8192},
	{parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH, 24576},
	{parleyv1.ReasoningEffort_REASONING_EFFORT_XHIGH, 32768},
}

// BudgetForEffort returns the token budget for a reasoning level; 0 for
// NONE or UNSPECIFIED.
func BudgetForEffort(e parleyv1.ReasoningEffort) int32 {
	for _, eb := range effortBudgets {
		if eb.effort == e {
			return eb.budget
		}
	}
	return 0
}

// EffortForBudget returns the reasoning level for a token budget; NONE for
// a budget of 0 or less.
func EffortForBudget(budget int32) parleyv1.ReasoningEffort {
	if budget <= 0 {
		return parleyv1.ReasoningEffort_REASONING_EFFORT_NONE
	}
	for _, eb := range effortBudgets {
		if budget <= eb.budget {
			return eb.effort
		}
	}
	return parleyv1.ReasoningEffort_REASONING_EFFORT_XHIGH
}

// HasToolCalls reports whether parts hold a call the client must answer.
func HasToolCalls(parts []*parleyv1.Part) bool {
	for _, p := range parts {
		if p.GetToolCall() != nil {
			return true
		}
	}
	return false
}

// ToolUseFinish corrects a finish reason for a turn that ended in tool
// calls: whatever the upstream said ("STOP", "stop", "end_turn", or a word
// Parley does not know), the client must see its dialect's tool-use stop
// reason, or agents stop instead of running the tool. Reasons that say the
// calls are not to be run stay: a cut-off turn (max tokens), a safety
// stop, a malformed or unexpected call, too many calls.
func ToolUseFinish(reason parleyv1.FinishReason, hasToolCalls bool) parleyv1.FinishReason {
	if hasToolCalls && (reason == parleyv1.FinishReason_FINISH_REASON_STOP || reason == parleyv1.FinishReason_FINISH_REASON_UNSPECIFIED ||
		reason == parleyv1.FinishReason_FINISH_REASON_OTHER) {
		return parleyv1.FinishReason_FINISH_REASON_TOOL_USE
	}
	return reason
}
