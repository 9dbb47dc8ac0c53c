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
	for _, kind := range []translate.SealKind{translate.SealAsIs, translate.SealCarrierNext, translate.SealCarrierPrev, translate.SealEncrypted, translate.SealSignature, translate.SealUnsigned, translate.SealCompaction} {
		for _, value := range []string{"c2lnbmF0dXJl", "not base64!", ""} {
			for _, itemID := range []string{"", "rs_0a1b2c"} {
				sealed := translate.SealItem(&parleyv1.Opaque{Value: value, Origin: origin}, client, kind, itemID)
				o := translate.OpenOpaque(sealed, client)
				if o.Kind != kind || o.GetValue() != value || o.GetOrigin().GetDialect() != origin.GetDialect() ||
					o.GetOrigin().GetUpstream() != origin.GetUpstream() || o.GetOrigin().GetModel() != origin.GetModel() || o.ItemID != itemID {
					t.Errorf("kind %d, value %q, item %q: opened as kind %d, item %q, %v", kind, value, itemID, o.Kind, o.ItemID, o.Opaque)
				}
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

// FuzzOpenOpaque: whatever a client sends back as an opaque value opens
// without a panic, and a value Parley sealed opens as it was sealed.
func FuzzOpenOpaque(f *testing.F) {
	origin := &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_RESPONSES, Upstream: "openai", Model: "o3"}
	f.Add(translate.SealItem(&parleyv1.Opaque{Value: "gAAAAABx", Origin: origin}, parleyv1.Dialect_DIALECT_MESSAGES, translate.SealEncrypted, "rs_1"), "v", "rs_2")
	f.Add("UFJMWQEAAAA=", "", "")
	f.Add("EqUCCqIC", "c2ln", "")
	f.Fuzz(func(t *testing.T, wire, value, itemID string) {
		_ = translate.OpenOpaque(wire, parleyv1.Dialect_DIALECT_MESSAGES)
		sealed := translate.SealItem(&parleyv1.Opaque{Value: value, Origin: origin}, parleyv1.Dialect_DIALECT_MESSAGES, translate.SealEncrypted, itemID)
		o := translate.OpenOpaque(sealed, parleyv1.Dialect_DIALECT_MESSAGES)
		if len(itemID) > 512 {
			itemID = "" // longer ids are not kept
		}
		if o.GetValue() != value || o.ItemID != itemID || o.Kind != translate.SealEncrypted {
			t.Fatalf("sealed %q item %q, opened %q item %q kind %d", value, itemID, o.GetValue(), o.ItemID, o.Kind)
		}
	})
}
