package messages

import (
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Reasoning, both ways: the thinking settings (thinking, and the effort
// that output_config carries, read with the rest of output_config in
// settings.go), thinking and redacted_thinking blocks, and their
// signatures, including thinking blocks that only carry the signature of a
// neighbouring part. The block walks (decoder.block, encoder.part,
// clientEncoder.part) hand reasoning to the functions here.

var effortFromWire = map[string]parleyv1.ReasoningEffort{
	"low":    parleyv1.ReasoningEffort_REASONING_EFFORT_LOW,
	"medium": parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
	"high":   parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH,
	"max":    parleyv1.ReasoningEffort_REASONING_EFFORT_XHIGH,
}

func readThinking(t *thinking) (*parleyv1.ReasoningConfig, error) {
	switch t.Type {
	case "enabled":
		if t.BudgetTokens == nil {
			return nil, translate.Invalid("thinking.enabled.budget_tokens", "Field required")
		}
		return &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ENABLED, BudgetTokens: ptr(clampInt32(*t.BudgetTokens))}, nil
	case "disabled":
		return &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_DISABLED}, nil
	case "adaptive":
		return &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE}, nil
	}
	return nil, translate.Invalid("thinking.type", "Input should be 'enabled', 'disabled' or 'adaptive'")
}

// minThinkingBudget is the smallest thinking budget the dialect accepts.
const minThinkingBudget = 1024

// reasoning maps the reasoning settings. A client of this dialect gets its
// thinking and effort settings as it sent them. For other clients: an
// effort level alone becomes a thinking budget (see translate.BudgetForEffort);
// the budget is at least 1024 and max_tokens is raised above it, since the
// dialect counts thinking inside max_tokens; and temperature, top_k and a
// top_p below 0.95 are dropped while thinking, as the dialect rejects them
// then.
func (e *encoder) reasoning(w *Request, countOnly bool) error {
	rc := e.req.GetReasoning()
	if rc == nil {
		return nil
	}
	if e.same {
		switch rc.GetMode() {
		case parleyv1.ReasoningMode_REASONING_MODE_ENABLED:
			w.Thinking = &thinking{Type: "enabled", BudgetTokens: int64Ptr(rc.BudgetTokens)}
		case parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
			w.Thinking = &thinking{Type: "disabled"}
		case parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE:
			w.Thinking = &thinking{Type: "adaptive"}
		}
		if w.Thinking != nil {
			w.Thinking.Unknown = e.take("thinking")
		}
		if eff := wireEffort(rc.GetEffort()); eff != "" {
			w.OutputConfig = &outputConfig{Effort: eff}
		}
		return nil
	}
	var budget int32
	switch rc.GetMode() {
	case parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
		w.Thinking = &thinking{Type: "disabled"}
		return nil
	case parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE:
		if rc.BudgetTokens == nil && rc.GetEffort() == parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
			w.Thinking = &thinking{Type: "adaptive"}
			e.dropSamplingForThinking(w)
			return nil
		}
		fallthrough
	case parleyv1.ReasoningMode_REASONING_MODE_ENABLED, parleyv1.ReasoningMode_REASONING_MODE_UNSPECIFIED:
		switch {
		case rc.BudgetTokens != nil:
			budget = rc.GetBudgetTokens()
		case rc.GetEffort() == parleyv1.ReasoningEffort_REASONING_EFFORT_NONE:
			w.Thinking = &thinking{Type: "disabled"}
			return nil
		case rc.GetEffort() != parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
			budget = translate.BudgetForEffort(rc.GetEffort())
		case rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_ENABLED:
			budget = translate.BudgetForEffort(parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM)
		default:
			return nil
		}
	}
	if budget <= 0 {
		w.Thinking = &thinking{Type: "disabled"}
		return nil
	}
	budget = max(budget, minThinkingBudget)
	w.Thinking = &thinking{Type: "enabled", BudgetTokens: ptr(int64(budget))}
	if !countOnly && w.MaxTokens != nil && *w.MaxTokens <= int64(budget) {
		w.MaxTokens = ptr(*w.MaxTokens + int64(budget))
	}
	e.dropSamplingForThinking(w)
	return nil
}

// thinkingOffMidTurn turns thinking off for a request that continues a
// tool-use turn whose assistant message does not start with a thinking
// block: the service refuses thinking then ("a final assistant message
// must start with a thinking block"), and such a turn is what reaches it
// when the turn's reasoning could not come along (another upstream made
// it, a fallback route serves the turn, or the client's dialect kept
// none). The service keeps one thinking setting per assistant turn, so
// the turn goes on without thinking rather than failing; the next turn
// thinks again. Named in Outgoing.Dropped as "reasoning".
func (e *encoder) thinkingOffMidTurn(w *Request) {
	if w.Thinking == nil || w.Thinking.Type == "disabled" || !midTurnUnthought(w.Messages) {
		return
	}
	w.Thinking = &thinking{Type: "disabled"}
	e.dropped = append(e.dropped, "reasoning")
}

// midTurnUnthought reports whether msgs end in a tool-use turn in progress
// (an assistant message calling tools, then only tool results) whose
// assistant message does not start with a thinking block.
func midTurnUnthought(msgs []message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "assistant" {
			calls := false
			for _, b := range m.Content.Blocks {
				calls = calls || b.Type == "tool_use" || b.Type == "server_tool_use"
			}
			if !calls {
				return false
			}
			first := ""
			if len(m.Content.Blocks) > 0 {
				first = m.Content.Blocks[0].Type
			}
			return first != "thinking" && first != "redacted_thinking"
		}
		for _, b := range m.Content.Blocks {
			if b.Type != "tool_result" {
				return false
			}
		}
		if m.Content.String || len(m.Content.Blocks) == 0 {
			return false
		}
	}
	return false
}

// dropSamplingForThinking leaves out the sampling settings the service
// rejects while thinking is on: temperature, top_k, and top_p below 0.95.
// Each one the client set is named in Outgoing.Dropped.
func (e *encoder) dropSamplingForThinking(w *Request) {
	if w.Temperature != nil {
		w.Temperature = nil
		e.dropped = append(e.dropped, "generation.temperature")
	}
	if w.TopK != nil {
		w.TopK = nil
		e.dropped = append(e.dropped, "generation.top_k")
	}
	if w.TopP != nil && *w.TopP < 0.95 {
		w.TopP = nil
		e.dropped = append(e.dropped, "generation.top_p")
	}
}

func wireEffort(e parleyv1.ReasoningEffort) string {
	for k, v := range effortFromWire {
		if v == e {
			return k
		}
	}
	return ""
}

// carrierOf reports whether p is a reasoning block that only carried the
// signature of a neighbouring part, and of which one.
func carrierOf(p *parleyv1.Part) (*parleyv1.Opaque, translate.SealKind) {
	v, ok := markCarrier.Value(p.GetExtensions())
	if !ok {
		return nil, translate.SealAsIs
	}
	if string(v) == `"prev"` {
		return p.GetSignature(), translate.SealCarrierPrev
	}
	return p.GetSignature(), translate.SealCarrierNext
}

func (e *encoder) reasoningPart(p *parleyv1.Part, r *parleyv1.Reasoning, unknown jsonx.Unknown) []Block {
	if r.GetRedacted() {
		if !translate.SendableTo(r.GetEncryptedContent(), thisDialect, e.t.Upstream) {
			return nil
		}
		return []Block{{Type: "redacted_thinking", Data: r.GetEncryptedContent().GetValue(), Unknown: unknown}}
	}
	if !translate.SendableTo(p.GetSignature(), thisDialect, e.t.Upstream) {
		return nil
	}
	return []Block{{Type: "thinking", Thinking: ptr(r.GetText()), Signature: ptr(p.GetSignature().GetValue()), Unknown: unknown}}
}

// responseDecoder decodes the blocks of an upstream reply. Opaque values
// are stamped with the upstream that made them.
type responseDecoder struct {
	t translate.Target
}

func (d responseDecoder) block(b *Block) (*parleyv1.Part, error) {
	dec := decoder{}
	p, err := dec.block(b, "")
	if err != nil {
		return nil, err
	}
	if p.Signature != nil {
		p.Signature = translate.Stamp(p.Signature.GetValue(), thisDialect, d.t)
	}
	if r := p.GetReasoning(); r != nil && r.EncryptedContent != nil {
		r.EncryptedContent = translate.Stamp(r.EncryptedContent.GetValue(), thisDialect, d.t)
	}
	return p, nil
}

// reasoningText is the text of a thinking block: the reasoning text, or its
// summaries when that is all the service gave.
func reasoningText(r *parleyv1.Reasoning) string {
	if r.GetText() != "" || len(r.GetSummary()) == 0 {
		return r.GetText()
	}
	return strings.Join(r.GetSummary(), "\n\n")
}

// reasoningSignature is the signature field of a thinking block: the
// block's signature, or the encrypted content another dialect gave, or ""
// when the upstream gave neither (see unsignedIfNone).
func reasoningSignature(p *parleyv1.Part) string {
	if sig := p.GetSignature(); sig != nil {
		return translate.SealOpaque(sig, thisDialect, translate.SealAsIs)
	}
	if enc := p.GetReasoning().GetEncryptedContent(); enc != nil {
		return translate.SealItem(enc, thisDialect, translate.SealEncrypted, p.GetItemId())
	}
	return ""
}

// unsignedIfNone gives a thinking block that has no signature the
// unsigned seal: the dialect requires a signature on every thinking block
// and clients send it back, and the seal brings the reasoning back as
// unsigned, never as signed by a messages service (which would refuse it).
func unsignedIfNone(sig string) string {
	if sig == "" {
		return translate.Unsigned(thisDialect)
	}
	return sig
}

func carrierBlock(sig *parleyv1.Opaque, kind translate.SealKind) Block {
	return Block{Type: "thinking", Thinking: ptr(""), Signature: ptr(translate.SealOpaque(sig, thisDialect, kind))}
}
