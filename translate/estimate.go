package translate

import (
	"unicode/utf8"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Estimate counts a request's input tokens without a tokenizer, for
// upstreams whose dialect has no count endpoint (chat completions, echo).
// The rule: one token per four bytes of text (the usual figure for
// English with BPE tokenizers, rounded up per text), plus four per
// message for the role and separators, 258 per image or other medium (the
// content-generation service's figure for one image), and the text of
// every tool definition. It is a guide for agents deciding when to compact
// their context, not a bill.
func Estimate(req *parleyv1.Request) int64 {
	var n int64
	text := func(s string) {
		if s != "" {
			n += int64((len(s) + 3) / 4)
			if !utf8.ValidString(s) {
				n++
			}
		}
	}
	parts := func(ps []*parleyv1.Part) {
		for _, p := range ps {
			switch {
			case p.GetText() != nil:
				text(p.GetText().GetText())
			case p.GetMedia() != nil:
				n += 258
			case p.GetToolCall() != nil:
				text(p.GetToolCall().GetName())
				text(p.GetToolCall().GetArguments())
			case p.GetToolResult() != nil:
				for _, c := range p.GetToolResult().GetContent() {
					if c.GetMedia() != nil {
						n += 258
					} else {
						text(c.GetText().GetText())
					}
				}
			case p.GetReasoning() != nil:
				text(p.GetReasoning().GetText())
			}
		}
	}
	parts(req.GetInstructions())
	for _, m := range req.GetMessages() {
		n += 4
		parts(m.GetParts())
	}
	for _, t := range req.GetTools() {
		if f := t.GetFunction(); f != nil {
			text(f.GetName())
			text(f.GetDescription())
			text(f.GetParameters())
		}
	}
	return n
}
