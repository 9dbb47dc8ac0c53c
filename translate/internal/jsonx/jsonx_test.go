package jsonx_test

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	_ "github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Flags share one bag until a value gets a member of its own: then it
// gets a bag of its own, and the others keep theirs as they were.
func TestKeepFlagSharesUntilWritten(t *testing.T) {
	const d = parleyv1.Dialect_DIALECT_MESSAGES
	var a, b *parleyv1.Extensions
	jsonx.KeepFlag(&a, d, "@string")
	jsonx.KeepFlag(&b, d, "@string")
	if a != b || a.GetFields()["@string"] != "true" || a.GetDialect() != d {
		t.Fatalf("two flagged values: %v %v", a, b)
	}
	jsonx.Keep(&b, d, "", jsonx.Unknown{"cache": jsontext.Value(`1`)})
	if a == b || len(a.GetFields()) != 1 || b.GetFields()["cache"] != "1" || b.GetFields()["@string"] != "true" {
		t.Fatalf("after writing one: %v %v", a, b)
	}
	jsonx.KeepFlag(&b, d, "@other")
	if len(a.GetFields()) != 1 || b.GetFields()["@other"] != "true" {
		t.Fatalf("a second flag on a written bag: %v %v", a, b)
	}
	var c *parleyv1.Extensions
	jsonx.KeepFlag(&c, d, "@string")
	if c != a {
		t.Fatalf("the shared bag changed: %v", c)
	}
}
