package jsonx

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/internal/offstack"
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

// NonEmpty appends a string member unless it is empty, as omitzero
// omits it; ok is false for a string Marshal refuses.
func (m *Members) NonEmpty(b []byte, name, v string) (_ []byte, ok bool) {
	if v == "" {
		return b, true
	}
	return m.String(b, name, v)
}

// Int appends a number member, unless v is nil: omitted, as omitzero
// omits it.
func (m *Members) Int(b []byte, name string, v *int64) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendInt(m.Name(b, name), *v, 10)
}

// Float appends a number member, unless v is nil; ok is false for a
// number Marshal writes otherwise than AppendFloat does.
func (m *Members) Float(b []byte, name string, v *float64) (_ []byte, ok bool) {
	if v == nil {
		return b, true
	}
	return AppendFloat(m.Name(b, name), *v)
}

// Bool appends a boolean member, unless v is nil.
func (m *Members) Bool(b []byte, name string, v *bool) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendBool(m.Name(b, name), *v)
}

// Raw appends name and the raw value v (AppendRaw), unless v is nil, as
// Marshal omits a jsontext.Value tagged omitzero; ok is false for a
// value AppendRaw declines.
func (m *Members) Raw(b []byte, name string, v jsontext.Value) (_ []byte, ok bool) {
	if v == nil {
		return b, true
	}
	return AppendRaw(m.Name(b, name), v)
}

// Kept appends the members an embedded Unknown holds, as Marshal writes
// them after the modelled ones: by name, in sorted order. ok is false for
// a value Marshal refuses.
func (m *Members) Kept(b []byte, u Unknown) (_ []byte, ok bool) {
	if len(u) > 1 {
		for _, name := range slices.Sorted(maps.Keys(u)) {
			if b, ok = m.kept(b, name, u[name]); !ok {
				return b, false
			}
		}
		return b, true
	}
	for name, v := range u {
		return m.kept(b, name, v)
	}
	return b, true
}

// kept appends one kept member.
func (m *Members) kept(b []byte, name string, v jsontext.Value) (_ []byte, ok bool) {
	if b, ok = AppendQuote(m.Name(b, ""), name); !ok {
		return b, false
	}
	return AppendRaw(append(b, ':'), v)
}

// AppendList appends list as a JSON array, each element written by
// write; ok is false when write declines one (what was appended of the
// array is then left to the caller to drop).
func AppendList[T any](b []byte, list []T, write func([]byte, *T) ([]byte, bool)) (_ []byte, ok bool) {
	b = append(b, '[')
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = write(b, &list[i]); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// AppendStringMap appends a map of strings as Marshal writes it (with
// the Deterministic option): its members in sorted order. ok is false
// for a string Marshal refuses.
func AppendStringMap(b []byte, v map[string]string) (_ []byte, ok bool) {
	b = append(b, '{')
	for i, name := range slices.Sorted(maps.Keys(v)) {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = AppendQuote(b, name); !ok {
			return b, false
		}
		if b, ok = AppendQuote(append(b, ':'), v[name]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// AppendRaw appends the raw value v as Marshal writes it: without the
// space between its tokens, its strings with their escapes written as
// AppendQuote writes them, its numbers as they are. ok is false for a
// value Marshal refuses (or one nested deeper than the Walker goes).
func AppendRaw(b, v []byte) (_ []byte, ok bool) {
	var w Walker
	w.Reset(v)
	if _, err := w.Raw(); err != nil || !w.End() {
		return b, false
	}
	start := len(b)
	for i := 0; i < len(v); {
		switch c := v[i]; c {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			end, escaped := i+1, false
			for ; v[end] != '"'; end++ {
				if v[end] == '\\' {
					escaped = true
					end++
				}
			}
			end++
			if !escaped {
				b = append(b, v[i:end]...)
			} else {
				s, ok := Unquote(v[i:end])
				if !ok {
					return b[:start], false
				}
				if b, ok = AppendQuote(b, s); !ok {
					return b[:start], false
				}
			}
			i = end
		default:
			b = append(b, c)
			i++
		}
	}
	return b, true
}

// AppendQuote appends v as a JSON string, as Marshal writes it; ok is
// false for a string Marshal refuses (invalid UTF-8).
//
// Texts (a model's reply, a tool's output, a done event's whole text) are
// most of what the writers quote, and nearly all of a text needs no
// escape: it is passed over eight bytes at a time and copied in runs,
// where jsontext.AppendQuote looks at every byte (FuzzAppendQuote holds
// the two to the same bytes).
func AppendQuote(b []byte, v string) (_ []byte, ok bool) {
	start := len(b)
	b = slices.Grow(b, len(v)+2)
	b = append(b, '"')
	run, i := 0, 0 // v[run:i] is plain and not yet copied
	for i < len(v) {
		if i = nextSpecial(v, i); i == len(v) {
			break
		}
		if c := v[i]; c < utf8.RuneSelf {
			b = append(b, v[run:i]...)
			b = appendEscaped(b, c)
			i++
			run = i
			continue
		}
		r, n := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && n == 1 {
			// Invalid UTF-8: jsontext's bytes and refusal.
			b, err := jsontext.AppendQuote(b[:start], v)
			return b, err == nil
		}
		i += n
	}
	b = append(b, v[run:]...)
	return append(b, '"'), true
}

// appendEscaped appends the escape jsontext writes for a control
// character, a quote or a backslash.
func appendEscaped(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// List appends the elements of list with elem, comma-separated, and the
// bracket that closes the list, which the caller opened; ok is false when
// elem declines one.
func List[T any](b []byte, list []T, elem func([]byte, *T) ([]byte, bool)) (_ []byte, ok bool) {
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = elem(b, &list[i]); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// AppendFloat appends f as Marshal writes it, for a number Marshal writes
// without an exponent (0, and magnitudes from 1e-6 up to 1e21); ok is
// false for any other, and for NaN and the infinities, which Marshal
// refuses.
func AppendFloat(b []byte, f float64) (_ []byte, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return b, false
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), true
}

// Encode writes *v with quick, a writer by hand, or with Marshal where
// quick declines. quick writes into a pooled buffer, so that the bytes
// returned are allocated once, at their size; a buffer grown past
// maxPooled (a long conversation) is let go.
func Encode[T any](v *T, quick func([]byte, *T) ([]byte, bool)) ([]byte, error) {
	if out, ok := encodeQuick(v, quick); ok {
		return out, nil
	}
	return Marshal(v)
}

// EncodeOffStack is Encode with Marshal, which goes as deep as v nests
// (an agent's tools), run off the caller's stack (offstack): for a writer
// that runs on a stream handler's, whose quick writer is shallow.
func EncodeOffStack[T any](v *T, quick func([]byte, *T) ([]byte, bool)) ([]byte, error) {
	if out, ok := encodeQuick(v, quick); ok {
		return out, nil
	}
	return MarshalOffStack(v)
}

// MarshalOffStack is Marshal off the stack (offstack): for a value of a
// type that nests deep or keeps members as they came (Marshal reformats
// them), on a path a request otherwise runs on its handler's stack. It
// is a function of its own so that what its closure takes is allocated
// only when it runs.
func MarshalOffStack[T any](v *T) (out []byte, err error) {
	offstack.Run(func() { out, err = Marshal(v) })
	return out, err
}

// UnmarshalOffStack is Unmarshal off the stack, as MarshalOffStack is
// Marshal: for the reflective reading of a body its quick reader
// declined.
func UnmarshalOffStack[T any](b []byte, v *T) (err error) {
	offstack.Run(func() { err = Unmarshal(b, v) })
	return err
}

func encodeQuick[T any](v *T, quick func([]byte, *T) ([]byte, bool)) ([]byte, bool) {
	buf := encodeBuffers.Get().(*[]byte)
	b, ok := quick((*buf)[:0], v)
	var out []byte
	if ok {
		out = bytes.Clone(b)
	}
	if cap(b) <= maxPooled {
		*buf = b[:0]
		encodeBuffers.Put(buf)
	}
	return out, ok
}

var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooled = 256 << 10
