package converse

import (
	"encoding/base64"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Reasoning, both ways: reasoning blocks of a conversation toward the
// service (only those it signed itself), the thinking settings of the
// models that take them, and reasoning in its replies, whose signatures
// and redacted content are stamped with the upstream that made them.

// reasoning is the block of a reasoning part, or nil when the part may
// not go to this upstream: a signature or redacted content is only ever
// sent back to a service of this dialect, and to the very upstream that
// made it when that is known (translate.SendableTo); the service (like
// the messages service behind it) refuses reasoning it did not sign, and
// reasoning nobody signed cannot be vouched for, so both are left out.
func (e *encoder) reasoning(p *parleyv1.Part, r *parleyv1.Reasoning) *ReasoningContent {
	if r.GetRedacted() {
		enc := r.GetEncryptedContent()
		if !translate.SendableTo(enc, thisDialect, e.t.Upstream) {
			return nil
		}
		raw, err := base64.StdEncoding.DecodeString(enc.GetValue())
		if err != nil {
			return nil // not what this dialect made
		}
		return &ReasoningContent{RedactedContent: raw}
	}
	if !translate.SendableTo(p.GetSignature(), thisDialect, e.t.Upstream) {
		return nil
	}
	return &ReasoningContent{ReasoningText: &ReasoningText{Text: r.GetText(), Signature: p.GetSignature().GetValue()}}
}

// minThinkingBudget is the smallest thinking budget the models with
// extended thinking accept.
const minThinkingBudget = 1024

// defaultMaxTokens is maxTokens when thinking is on and the request set
// no limit: room for the answer after the thinking budget.
const defaultMaxTokens = 8192

// thinking is the thinking setting of an Anthropic model, as its model
// request field, by the rule of the messages dialect toward a client of
// another dialect: a budget as given, or an effort level as its budget
// (translate.BudgetForEffort), at least 1024 tokens; effort none or a
// zero budget disables it; adaptive with neither is adaptive. maxTokens is
// raised above the budget (thinking counts inside it), and temperature
// and a topP below 0.95 are left out while thinking (the models refuse
// them then), each listed in Outgoing.Dropped; top_k too, by the caller.
func (e *encoder) thinking(ic *InferenceConfig) (map[string]any, bool) {
	rc := e.req.GetReasoning()
	if rc == nil {
		return nil, false
	}
	var budget int32
	switch rc.GetMode() {
	case parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
		return map[string]any{"type": "disabled"}, false
	case parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE:
		if rc.BudgetTokens == nil && rc.GetEffort() == parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
			e.dropSamplingForThinking(ic)
			return map[string]any{"type": "adaptive"}, true
		}
		fallthrough
	default:
		switch {
		case rc.BudgetTokens != nil:
			budget = rc.GetBudgetTokens()
		case rc.GetEffort() == parleyv1.ReasoningEffort_REASONING_EFFORT_NONE:
			return map[string]any{"type": "disabled"}, false
		case rc.GetEffort() != parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
			budget = translate.BudgetForEffort(rc.GetEffort())
		case rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_ENABLED:
			budget = translate.BudgetForEffort(parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM)
		default:
			return nil, false
		}
	}
	if budget <= 0 {
		return map[string]any{"type": "disabled"}, false
	}
	budget = max(budget, minThinkingBudget)
	switch {
	case ic.MaxTokens == nil:
		ic.MaxTokens = ptr(budget + defaultMaxTokens)
	case *ic.MaxTokens <= budget:
		ic.MaxTokens = ptr(*ic.MaxTokens + budget)
	}
	e.dropSamplingForThinking(ic)
	return map[string]any{"type": "enabled", "budget_tokens": budget}, true
}

func (e *encoder) dropSamplingForThinking(ic *InferenceConfig) {
	if ic.Temperature != nil {
		ic.Temperature = nil
		e.drop("generation.temperature")
	}
	if ic.TopP != nil && *ic.TopP < 0.95 {
		ic.TopP = nil
		e.drop("generation.top_p")
	}
}

// reasoningPart is the canonical part of a reasoning block of a reply.
func reasoningPart(rc *ReasoningContent, t translate.Target) *parleyv1.Part {
	if rc.ReasoningText == nil {
		enc := translate.Stamp(base64.StdEncoding.EncodeToString(rc.RedactedContent), thisDialect, t)
		return &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Redacted: true, EncryptedContent: enc}}}
	}
	p := &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: rc.ReasoningText.Text}}}
	if s := rc.ReasoningText.Signature; s != "" {
		p.Signature = translate.Stamp(s, thisDialect, t)
	}
	return p
}

// midTurnUnthought reports whether msgs end in a tool-use turn in progress
// (an assistant message calling tools, then only tool results) whose
// assistant message does not start with reasoning.
func midTurnUnthought(msgs []Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "assistant" {
			calls := false
			for _, b := range m.Content {
				calls = calls || b.ToolUse != nil
			}
			return calls && (len(m.Content) == 0 || m.Content[0].ReasoningContent == nil)
		}
		results := false
		for _, b := range m.Content {
			switch {
			case b.ToolResult != nil:
				results = true
			case b.CachePoint == nil:
				return false
			}
		}
		if !results {
			return false
		}
	}
	return false
}
