package jsonx_test

import (
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// A mark is read back only by its own dialect, a string mark holds any
// string (invalid UTF-8 becomes U+FFFD rather than a broken value), and a
// value of another kind is not taken for a string.
func TestMark(t *testing.T) {
	const d = parleyv1.Dialect_DIALECT_MESSAGES
	role := jsonx.NewMark(d, "@role")
	other := jsonx.NewMark(parleyv1.Dialect_DIALECT_RESPONSES, "@role")

	var ext *parleyv1.Extensions
	role.KeepString(&ext, "tool\xff")
	if s, ok := role.String(ext); !ok || s != "tool\uFFFD" {
		t.Fatalf("String = %q, %v; want %q", s, ok, "tool\uFFFD")
	}
	if !jsontext.Value(ext.GetFields()["@role"]).IsValid() {
		t.Fatalf("kept %q, not valid JSON", ext.GetFields()["@role"])
	}
	if other.In(ext) {
		t.Fatal("another dialect's mark of the same key reads this dialect's bag")
	}
	if u := jsonx.Take(ext, d, ""); len(u) != 0 {
		t.Fatalf("Take returned marks as wire members: %v", u)
	}

	flag := jsonx.NewMark(d, "@string")
	var a, b *parleyv1.Extensions
	flag.Set(&a)
	flag.Set(&b)
	if !flag.In(a) || a != b {
		t.Fatal("a flag alone shares one bag")
	}
	if _, ok := flag.String(a); ok {
		t.Fatal("a flag (true) was read as a string")
	}
	role.KeepString(&a, "user") // writing to a shared bag copies it
	if role.In(b) {
		t.Fatal("writing a mark to a shared bag changed every holder")
	}
}

func TestMarkKeysStartWithAt(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewMark took a key that a wire member could have")
		}
	}()
	jsonx.NewMark(parleyv1.Dialect_DIALECT_MESSAGES, "role")
}

// A string kept and a list of strings read back as Unmarshal reads them:
// escapes, surrounding space and null included; anything else refused.
func TestStringAndStrings(t *testing.T) {
	const d = parleyv1.Dialect_DIALECT_MESSAGES
	for _, raw := range []string{`"plain"`, `"a\"b\\c\u00e9\n"`, ` "spaced" `, `""`, `"\ud83d\ude00"`, `1`, `null`, `["a"]`, `"open`} {
		ext := &parleyv1.Extensions{Dialect: d, Fields: map[string]string{"@k": raw}}
		got, ok := jsonx.String(ext, d, "@k")
		var want string
		wantOK := jsontext.Value(raw).Kind() == '"' && jsonx.Unmarshal([]byte(raw), &want) == nil
		if ok != wantOK || got != want {
			t.Errorf("String(%s) = %q, %v; Unmarshal reads %q, %v", raw, got, ok, want, wantOK)
		}
	}
	for _, raw := range []string{`["a","b"]`, `[ "x\u0041" , "" ]`, `[]`, `null`, `["a",1]`, `"a"`, `["a"`, `{}`} {
		got, ok := jsonx.Strings(jsontext.Value(raw))
		var want []string
		err := jsonx.Unmarshal([]byte(raw), &want)
		if ok != (err == nil) || ok && (!slices.Equal(got, want) || (got == nil) != (want == nil)) {
			t.Errorf("Strings(%s) = %q, %v; Unmarshal reads %q, %v", raw, got, ok, want, err)
		}
	}
}
