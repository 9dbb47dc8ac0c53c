package chatcompletions

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Reasoning that a service of this dialect wrote (reasoning_content, as
// thinking services such as DeepSeek's send it) has no signature, yet
// some of those services refuse a tool-call turn sent back without its
// reasoning. So the reasoning parts decoded from an upstream carry the
// maker's stamp: an empty signature whose origin names the upstream. It
// travels to clients of other dialects sealed like any signature and
// comes back with their history; an upstream of this dialect then gets
// the reasoning again as reasoning_content on an assistant turn that
// calls tools, and only when it made that reasoning. The turn-walk that
// applies it is encoder.message in turns.go; the decoders stamp in
// response.go (decodeChoice) and stream_decode.go (choice).

// makerStamp is the signature of reasoning the upstream t wrote.
func makerStamp(t translate.Target) *parleyv1.Opaque {
	return translate.Stamp("", thisDialect, t)
}

// madeBy reports whether reasoning part p carries the stamp of upstream t.
func madeBy(p *parleyv1.Part, t translate.Target) bool {
	sig := p.GetSignature()
	if sig == nil || sig.GetValue() != "" || sig.GetOrigin().GetDialect() != thisDialect {
		return false
	}
	u := sig.GetOrigin().GetUpstream()
	return u == "" || t.Upstream == "" || u == t.Upstream
}
