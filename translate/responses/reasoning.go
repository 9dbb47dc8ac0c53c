package responses

import (
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Reasoning, in all directions. A reasoning item is read in
// itemDecoder.item (items.go), which opens a client's encrypted_content or
// stamps an upstream's with its origin (itemDecoder.opaque); toward an
// upstream, reasoning goes only to the service that made it
// (encoder.reasoning); toward a client, reasoning and signatures of other
// services are sealed into reasoning items (reasoningOut, carrierItem).
// The reasoning settings are read in decodeSettings and written in
// encoder.settings (settings.go) and echo (echo.go); streamed reasoning is
// in stream_decode.go and stream_encode.go.

var summaries = map[string]parleyv1.ReasoningSummary{
	"auto":     parleyv1.ReasoningSummary_REASONING_SUMMARY_AUTO,
	"concise":  parleyv1.ReasoningSummary_REASONING_SUMMARY_CONCISE,
	"detailed": parleyv1.ReasoningSummary_REASONING_SUMMARY_DETAILED,
}

func (d *itemDecoder) opaque(v string) translate.Opened {
	if d.client {
		return translate.OpenOpaque(v, thisDialect)
	}
	return translate.Opened{Opaque: translate.Stamp(v, thisDialect, d.t)}
}

// summaryUnusual reports whether summary parts hold anything besides
// summary_text and text, so that they must travel raw.
func summaryUnusual(s []summaryPart) bool {
	for _, p := range s {
		if p.Type != "summary_text" || len(p.Unknown) > 0 {
			return true
		}
	}
	return false
}

// reasoning renders a reasoning part. Only reasoning this dialect made,
// by this upstream, with its id, goes back: a service rejects encrypted
// content it did not make, and a reasoning item without an id.
func (e *encoder) reasoning(m *parleyv1.Message, p *parleyv1.Part, r *parleyv1.Reasoning) []Item {
	enc := r.GetEncryptedContent()
	clientMade := e.same && enc.GetOrigin().GetUpstream() == "" && enc.GetOrigin().GetDialect() == thisDialect
	if !clientMade && !translate.SendableTo(enc, thisDialect, e.t.Upstream) {
		if e.same && enc == nil && p.GetItemId() != "" {
			// A client's own reasoning item without encrypted content
			// (a stored response's): it goes back by id.
			return []Item{e.reasoningItem(m, p, r, nil)}
		}
		return nil
	}
	if p.GetItemId() == "" {
		return nil
	}
	return []Item{e.reasoningItem(m, p, r, enc)}
}

func (e *encoder) reasoningItem(m *parleyv1.Message, p *parleyv1.Part, r *parleyv1.Reasoning, enc *parleyv1.Opaque) Item {
	it := Item{Type: "reasoning", ID: p.GetItemId(), Status: statusWord(p.GetStatus()), Summary: []summaryPart{}, Unknown: e.take(m.GetExtensions(), "")}
	if v, ok := markSummary.Value(m.GetExtensions()); ok && e.same {
		_ = jsonx.Unmarshal(v, &it.Summary)
	} else {
		for _, s := range r.GetSummary() {
			it.Summary = append(it.Summary, summaryPart{Type: "summary_text", Text: s})
		}
	}
	if r.GetText() != "" {
		it.Content = &Content{Parts: []ContentPart{{Type: "reasoning_text", Text: new(r.GetText())}}}
	}
	if enc != nil {
		it.EncryptedContent = new(enc.GetValue())
	}
	return it
}

// carrierItem holds the signature of the part after it.
func carrierItem(sig *parleyv1.Opaque) Item {
	return Item{Type: "reasoning", ID: translate.NewID("rs_"), Summary: []summaryPart{}, EncryptedContent: new(translate.SealOpaque(sig, thisDialect, translate.SealCarrierNext))}
}

// reasoningOut renders a reasoning part as a reasoning item.
func reasoningOut(p *parleyv1.Part) Item {
	r := p.GetReasoning()
	it := Item{Type: "reasoning", ID: p.GetItemId(), Status: statusWord(p.GetStatus()), Summary: []summaryPart{}, Unknown: itemUnknown(p)}
	if v, ok := markSummary.Value(p.GetExtensions()); ok {
		_ = jsonx.Unmarshal(v, &it.Summary)
	} else {
		for _, s := range r.GetSummary() {
			it.Summary = append(it.Summary, summaryPart{Type: "summary_text", Text: s})
		}
	}
	enc := r.GetEncryptedContent()
	if enc.GetOrigin().GetDialect() == thisDialect || enc.GetOrigin() == nil && enc != nil {
		if r.GetText() != "" {
			it.Content = &Content{Parts: []ContentPart{{Type: "reasoning_text", Text: new(r.GetText())}}}
		}
		if enc != nil {
			it.EncryptedContent = new(translate.SealOpaque(enc, thisDialect, translate.SealAsIs))
		}
	} else {
		// Reasoning of another service: its text is shown as the
		// summary; its signature (or encrypted content) is sealed.
		if r.GetText() != "" && len(r.GetSummary()) == 0 {
			it.Summary = append(it.Summary, summaryPart{Type: "summary_text", Text: r.GetText()})
		}
		switch {
		case p.GetSignature() != nil:
			it.EncryptedContent = new(translate.SealOpaque(p.GetSignature(), thisDialect, translate.SealSignature))
		case enc != nil:
			it.EncryptedContent = new(translate.SealOpaque(enc, thisDialect, translate.SealAsIs))
		}
	}
	if it.ID == "" || !strings.HasPrefix(it.ID, "rs_") && enc.GetOrigin().GetDialect() != thisDialect {
		it.ID = translate.NewID("rs_")
	}
	return it
}
