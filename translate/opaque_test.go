package translate_test

import (
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Every kind of seal opens as what it was sealed as, with its origin; a
// value that is not a seal opens as the client's own dialect's.
func TestSealsOpenAsSealed(t *testing.T) {
	const client = parleyv1.Dialect_DIALECT_MESSAGES
	origin := &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_GENERATE_CONTENT, Upstream: "gemini", Model: "gemini-2.5-flash"}
	for _, kind := range []translate.SealKind{translate.SealAsIs, translate.SealCarrierNext, translate.SealCarrierPrev, translate.SealEncrypted, translate.SealSignature, translate.SealUnsigned} {
		for _, value := range []string{"c2lnbmF0dXJl", "not base64!", ""} {
			sealed := translate.SealOpaque(&parleyv1.Opaque{Value: value, Origin: origin}, client, kind)
			o := translate.OpenOpaque(sealed, client)
			if o.Kind != kind || o.GetValue() != value || o.GetOrigin().GetDialect() != origin.GetDialect() ||
				o.GetOrigin().GetUpstream() != origin.GetUpstream() || o.GetOrigin().GetModel() != origin.GetModel() {
				t.Errorf("kind %d, value %q: opened as kind %d, %v", kind, value, o.Kind, o.Opaque)
			}
		}
	}
	if o := translate.OpenOpaque(translate.Unsigned(client), client); o.Kind != translate.SealUnsigned || o.GetValue() != "" {
		t.Errorf("Unsigned opened as kind %d, %v", o.Kind, o.Opaque)
	}
	if o := translate.OpenOpaque("EqUCCqIC", client); o.Kind != translate.SealAsIs || o.GetValue() != "EqUCCqIC" || o.GetOrigin().GetDialect() != client {
		t.Errorf("a plain value opened as kind %d, %v", o.Kind, o.Opaque)
	}
}
