package jsonx

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unicode/utf8"
)

// A string's text: finding its end, and reading its escapes.

// scanString finds the end of the string whose text starts at d[start]
// (just after its opening quote): the index of its closing quote, and
// whether it holds escapes. ok is false for a string with a control
// character or invalid UTF-8 in it, or without its end.
func scanString(d []byte, start int) (end int, escaped, ok bool) {
	i := start
	for i < len(d) {
		// Plain bytes (printable ASCII but for the quote and the
		// backslash) are passed over eight at a time, two words a turn,
		// while they last (a long text's runs between line breaks); the
		// word that holds a byte that is not plain says where it is.
		// Near the end of d, a byte at a time.
		for i+16 <= len(d) {
			if m := special8(binary.LittleEndian.Uint64(d[i:])); m != 0 {
				i += flagged(m)
				goto special
			}
			if m := special8(binary.LittleEndian.Uint64(d[i+8:])); m != 0 {
				i += 8 + flagged(m)
				goto special
			}
			i += 16
		}
		if i+8 <= len(d) {
			m := special8(binary.LittleEndian.Uint64(d[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += flagged(m)
		} else {
			for i < len(d) && plain[d[i]] {
				i++
			}
			if i >= len(d) {
				break
			}
		}
	special:
		switch c := d[i]; {
		case c == '\\':
			// The commonest, mid-text (a line break, a quote): its
			// letter is checked when the text is read.
			escaped = true
			i += 2
		case c == '"':
			return i, escaped, true
		case c < 0x20:
			return 0, false, false
		default:
			r, n := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && n == 1 {
				return 0, false, false
			}
			i += n
		}
	}
	return 0, false, false
}

// appendUnquote appends the text of a string whose bytes between the
// quotes, inner, hold valid UTF-8 and no control character (as str found
// them), escapes among them: the runs between escapes are copied whole,
// and the one-letter escapes written by hand, where jsontext looks at
// every byte (an agent's conversation is mostly long texts with a line
// break every few dozen bytes). It declines (ok false) at a \u escape and
// at anything that is not an escape, for jsontext to read or refuse;
// FuzzUnquote and FuzzWalkerString hold what it writes to jsontext.
func appendUnquote(dst, inner []byte) (_ []byte, ok bool) {
	dst = slices.Grow(dst, len(inner))
	for {
		i := bytes.IndexByte(inner, '\\')
		if i < 0 {
			return append(dst, inner...), true
		}
		if i+1 == len(inner) {
			return dst, false
		}
		c := inner[i+1]
		switch c {
		case '"', '\\', '/':
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default:
			return dst, false
		}
		dst = append(append(dst, inner[:i]...), c)
		inner = inner[i+2:]
	}
}
