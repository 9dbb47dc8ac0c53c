package generatecontent

import (
	"encoding/base64"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Reasoning: thoughts, their signatures and the thinking settings. A
// thought (text with thought: true) is a reasoning part and a
// thoughtSignature the signature of its part; both are read and written
// with the other part kinds in parts.go, where a client's signature is
// opened, an upstream's stamped with its origin and one toward a client
// sealed. Here: how a client's replayed thoughts are joined, which
// signatures go to an upstream (and skipSignature, the placeholder that
// encoder.parts gives the first call of a step), and thinkingConfig toward
// an upstream. A client's thinkingConfig is read with the rest of
// generationConfig (settings.go); streamed thoughts and signatures are in
// stream_decode.go and stream_encode.go.

// mergeThoughts joins thoughts in a row, as a client that replays a stream
// part by part sends them, into one reasoning part signed by the signature
// that ended the run (or, when the signature came first, on a part of its
// own before the text, by that one): a service that checks a signature
// against its thought text needs the whole text in one piece. The sealed
// item id of encrypted reasoning comes along with it.
func mergeThoughts(parts []*parleyv1.Part) []*parleyv1.Part {
	out := parts[:0]
	for _, p := range parts {
		if n := len(out); n > 0 {
			prev := out[n-1]
			r, pr := p.GetReasoning(), prev.GetReasoning()
			if r != nil && pr != nil && len(prev.GetExtensions().GetFields()) == 0 && len(p.GetExtensions().GetFields()) == 0 {
				prevSigned := prev.GetSignature() != nil || pr.GetEncryptedContent() != nil
				signed := p.GetSignature() != nil || r.GetEncryptedContent() != nil
				switch {
				case !prevSigned:
					pr.Text += r.GetText()
					prev.Signature = p.GetSignature()
					pr.EncryptedContent = r.GetEncryptedContent()
					if prev.ItemId == "" {
						prev.ItemId = p.GetItemId()
					}
					continue
				case !signed && pr.GetText() == "":
					pr.Text = r.GetText()
					continue
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// skipSignature is the signature the service documents for function calls
// in history it did not produce itself (another service's turns): without
// one, thinking models reject the request.
var skipSignature = base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))

// currentTurnStart returns the index of the first message of the current
// step: the model turns since the last user text. Function calls there need
// a signature on thinking models.
func currentTurnStart(msgs []*parleyv1.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.GetRole() != parleyv1.Role_ROLE_ASSISTANT {
			for _, p := range m.GetParts() {
				if p.GetText() != nil || p.GetMedia() != nil {
					return i
				}
			}
		}
	}
	return 0
}

// signature returns the thought signature to send with a part: only one this
// upstream's dialect made.
func (e *encoder) signature(op *parleyv1.Opaque) string {
	if translate.SendableTo(op, thisDialect, e.t.Upstream) {
		return op.GetValue()
	}
	return ""
}

var levels = map[string]parleyv1.ReasoningEffort{
	"MINIMAL": parleyv1.ReasoningEffort_REASONING_EFFORT_MINIMAL,
	"LOW":     parleyv1.ReasoningEffort_REASONING_EFFORT_LOW,
	"MEDIUM":  parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
	"HIGH":    parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH,
}

// thinking maps the reasoning settings: a budget as thinkingBudget (0 when
// disabled, -1 when adaptive), an effort level as thinkingLevel when the
// client gave one in this dialect, else as the budget of the level (see
// translate.BudgetForEffort). Thoughts are included when the client asked
// for reasoning in a dialect that shows it, unless it said otherwise.
func (e *encoder) thinking() *thinkingConfig {
	rc := e.req.GetReasoning()
	if rc == nil {
		return nil
	}
	tc := &thinkingConfig{IncludeThoughts: rc.IncludeThoughts, Unknown: e.take("generationConfig/thinkingConfig")}
	level := e.same && markLevel.In(e.req.GetExtensions())
	switch rc.GetMode() {
	case parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
		tc.ThinkingBudget = ptr(int64(0))
	case parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE:
		tc.ThinkingBudget = ptr(int64(-1))
	case parleyv1.ReasoningMode_REASONING_MODE_ENABLED:
		if rc.BudgetTokens != nil {
			tc.ThinkingBudget = ptr(int64(rc.GetBudgetTokens()))
		}
	}
	if v, ok := jsonx.Value(e.req.GetExtensions(), thisDialect, "generationConfig/thinkingConfig/thinkingBudget"); ok && e.same {
		_ = jsonx.Unmarshal(v, &tc.ThinkingBudget)
		delete(tc.Unknown, "thinkingBudget")
	}
	if eff := rc.GetEffort(); eff != parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
		switch {
		case level:
			tc.ThinkingLevel, _ = markLevel.String(e.req.GetExtensions())
		case eff == parleyv1.ReasoningEffort_REASONING_EFFORT_NONE:
			tc.ThinkingBudget = ptr(int64(0))
		case tc.ThinkingBudget == nil:
			tc.ThinkingBudget = ptr(int64(translate.BudgetForEffort(eff)))
		}
	}
	if tc.IncludeThoughts == nil && !e.same && (tc.ThinkingBudget == nil || *tc.ThinkingBudget != 0) {
		tc.IncludeThoughts = ptr(true)
	}
	return tc
}
