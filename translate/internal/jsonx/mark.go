package jsonx

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Mark is one note a dialect keeps about its own spelling, in the
// Extensions of the canonical message it concerns: that the content came
// as a string rather than parts, which header version was sent, a raw
// block with no canonical home. Only the same dialect's encoders read a
// mark, so that a request or reply going back to its own dialect is
// spelled as it came.
//
// Each dialect declares every mark it keeps in one file, marks.go: that
// file is the whole record of what the dialect remembers about itself
// beyond the canonical model. A mark's key starts with "@", which no wire
// member does, so Take never returns it as an unknown member. The keys
// are stored as they always were, so canonical messages saved by earlier
// versions (stored responses) read the same.
type Mark struct {
	d   parleyv1.Dialect
	key string
}

// NewMark declares a mark of dialect d. The key must start with "@".
func NewMark(d parleyv1.Dialect, key string) Mark {
	if !strings.HasPrefix(key, "@") {
		panic("jsonx: a mark's key starts with @: " + key)
	}
	return Mark{d, key}
}

// Key returns the key the mark is stored under.
func (m Mark) Key() string { return m.key }

// Set records the mark as true in *ext, sharing one bag per mark when
// *ext holds nothing else (see KeepFlag).
func (m Mark) Set(ext **parleyv1.Extensions) { KeepFlag(ext, m.d, m.key) }

// Keep records the mark with the raw JSON value v.
func (m Mark) Keep(ext **parleyv1.Extensions, v jsontext.Value) { KeepValue(ext, m.d, m.key, v) }

// In reports whether ext belongs to the mark's dialect and holds it.
func (m Mark) In(ext *parleyv1.Extensions) bool { return Has(ext, m.d, m.key) }

// Value returns the raw value the mark holds in ext, if any.
func (m Mark) Value(ext *parleyv1.Extensions) (jsontext.Value, bool) {
	return Value(ext, m.d, m.key)
}

// IsMark reports whether an Extensions key is a mark's rather than a wire
// member's.
func IsMark(key string) bool { return strings.HasPrefix(key, "@") }

// KeepString records the mark with the string s.
func (m Mark) KeepString(ext **parleyv1.Extensions, s string) {
	KeepValue(ext, m.d, m.key, Quote(s))
}

// String returns the string the mark holds in ext; ok is false when it
// holds none, or a value that is not a string.
func (m Mark) String(ext *parleyv1.Extensions) (string, bool) {
	return String(ext, m.d, m.key)
}

// String returns the string stored under name, when ext belongs to d and
// holds one there; ok is false for a value of any other kind.
func String(ext *parleyv1.Extensions, d parleyv1.Dialect, name string) (string, bool) {
	v, ok := Value(ext, d, name)
	if !ok || v.Kind() != '"' {
		return "", false
	}
	return Unquote(bytes.Trim(v, " \t\r\n"))
}

// Strings returns the strings a JSON array of strings holds, as
// Unmarshal reads it into a []string; ok is false for any other value.
func Strings(v jsontext.Value) (_ []string, ok bool) {
	var w Walker
	w.Reset(v)
	list, err := w.Strings()
	if err != nil || !w.End() {
		var s []string
		if Unmarshal(v, &s) != nil {
			return nil, false
		}
		return s, true
	}
	return list, true
}

// Quote returns s as a JSON string. Invalid UTF-8 becomes U+FFFD, so the
// value is always well formed.
func Quote(s string) jsontext.Value {
	b, _ := jsontext.AppendQuote(nil, s)
	return b
}
