package jsonx

import (
	"bytes"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// A string's text: finding its end, and reading its escapes.

// scanString finds the end of the string whose text starts at d[start]
// (just after its opening quote): the index of its closing quote, and
// whether it holds escapes. ok is false for a string with a control
// character or invalid UTF-8 in it, or without its end.
func scanString(d []byte, start int) (end int, escaped, ok bool) {
	for i := nextSpecial(d, start); i < len(d); i = nextSpecial(d, i) {
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

// nextSpecial is the index of the first byte of s from i on that is not
// plain, len(s) when there is none. Plain bytes (printable ASCII but for
// the quote and the backslash) are passed over eight at a time, two words
// a turn, while they last (a long text's runs between line breaks); the
// word that holds one that is not says where it is. Near the end of s, a
// byte at a time. Reading a string (scanString) and writing one
// (AppendQuote) both pass over text with it.
func nextSpecial[T ~string | ~[]byte](s T, i int) int {
	for i+16 <= len(s) {
		if m := special8(load8(s, i)); m != 0 {
			return i + flagged(m)
		}
		if m := special8(load8(s, i+8)); m != 0 {
			return i + 8 + flagged(m)
		}
		i += 16
	}
	if i+8 <= len(s) {
		if m := special8(load8(s, i)); m != 0 {
			return i + flagged(m)
		}
		i += 8
	}
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}

// load8 reads the eight bytes of s from i on little-endian, in one load.
func load8[T ~string | ~[]byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plain holds the bytes a string may hold as they are without a closer
// look: printable ASCII but for the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// special8 flags the bytes of x (read little-endian) that are not plain
// (a control character, a quote, a backslash or above ASCII) with their
// high bit. A byte below 0x20 borrows in x-0x20, a quote or a backslash
// is zero and borrows once xored with itself, and a byte above ASCII has
// its high bit already; a plain byte does none of these. A borrow may
// flag a plain byte above one truly flagged, never below it: the lowest
// flag is exact (flagged), and none means all eight are plain.
func special8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	control := x - 0x20*ones
	quote := (x ^ '"'*ones) - ones
	backslash := (x ^ '\\'*ones) - ones
	return (control | x | quote | backslash) & highs
}

// flagged is the index of the first byte a mask of special8's flags (8
// when it has none).
func flagged(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

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
