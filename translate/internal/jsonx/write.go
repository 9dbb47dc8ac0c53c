package jsonx

import (
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Members writes the members of a JSON object by hand, for the quick
// writers of stream events: the same bytes Marshal writes for a struct of
// those members in that order, at a fraction of the cost. It puts the
// commas between members; the caller writes the braces. A quick writer
// must be held to Marshal's bytes by a test.
type Members struct{ n int }

// Name appends a member's name, given with its quotes and colon (and
// whatever opens its value), after a comma unless it is the first.
func (m *Members) Name(b []byte, name string) []byte {
	if m.n > 0 {
		b = append(b, ',')
	}
	m.n++
	return append(b, name...)
}

// String appends a string member; ok is false for a string Marshal
// refuses (invalid UTF-8).
func (m *Members) String(b []byte, name, v string) (_ []byte, ok bool) {
	return AppendQuote(m.Name(b, name), v)
}

// Int appends a number member, unless v is nil: omitted, as omitzero
// omits it.
func (m *Members) Int(b []byte, name string, v *int64) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendInt(m.Name(b, name), *v, 10)
}

// Kept appends the members an embedded Unknown holds, as Marshal writes
// them after the modelled ones. ok is false where the bytes could differ
// from Marshal's: more than one member (Marshal's order is the map's), or
// a value Marshal would rewrite (anything but a string without escapes, a
// number, true, false or null).
func (m *Members) Kept(b []byte, u Unknown) (_ []byte, ok bool) {
	if len(u) > 1 {
		return b, false
	}
	for name, v := range u {
		if !Verbatim(v) {
			return b, false
		}
		if b, ok = AppendQuote(m.Name(b, ""), name); !ok {
			return b, false
		}
		b = append(append(b, ':'), v...)
	}
	return b, true
}

// Verbatim reports whether Marshal writes the raw value v as it is: a
// valid value with no space between its tokens and no escape in its
// strings (Marshal takes the space out and writes escapes its own way).
func Verbatim(v []byte) bool {
	switch {
	case len(v) == 0:
		return false
	case v[0] == '{' || v[0] == '[':
		if !utf8.Valid(v) {
			return false
		}
		in := false
		for _, c := range v {
			switch {
			case in && c == '\\':
				return false
			case c == '"':
				in = !in
			case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
				return false
			}
		}
		w := Walker{data: v}
		return w.Skip() == nil && w.pos == len(v)
	case v[0] == '"':
		if len(v) < 2 || v[len(v)-1] != '"' || !utf8.Valid(v) {
			return false
		}
		for _, c := range v[1 : len(v)-1] {
			if c == '"' || c == '\\' || c < 0x20 {
				return false
			}
		}
		return true
	case string(v) == "true" || string(v) == "false" || string(v) == "null":
		return true
	}
	w := Walker{data: v}
	_, ok := w.number()
	return ok && w.pos == len(v)
}

// AppendQuote appends v as a JSON string, as Marshal writes it; ok is
// false for a string Marshal refuses (invalid UTF-8).
func AppendQuote(b []byte, v string) (_ []byte, ok bool) {
	b, err := jsontext.AppendQuote(b, v)
	return b, err == nil
}
