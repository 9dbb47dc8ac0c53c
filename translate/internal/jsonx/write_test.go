package jsonx_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// quoteSeeds cover every escape, plain runs of every length around the
// eight-byte step, multi-byte and invalid UTF-8, and the characters
// jsontext leaves as they are by default (<, >, &, U+2028, DEL).
var quoteSeeds = []string{
	"", "a", "abcdefg", "abcdefgh", "abcdefghi", strings.Repeat("plain text ", 40),
	"\"", "\\", "\n", "\t\r\b\f", "\x00\x01\x1f\x7f", "a\"b\\c\nd",
	"0123456789abcdef\"0123456789abcdef\\x", "<a href=\"x\">&amp;</a>",
	"caf\u00e9 \u2014 \u65e5\u672c \U0001F600", "\u2028\u2029", "\ufffd",
	"abc\xffdef", "abcdefgh\xc3", "\xed\xa0\x80", strings.Repeat("x", 17) + "\xf0\x9f\x98",
}

// FuzzAppendQuote holds AppendQuote to jsontext.AppendQuote: the same
// bytes after what was in the buffer, and a refusal exactly where
// jsontext refuses.
func FuzzAppendQuote(f *testing.F) {
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkQuote(t, s)
	})
}

func TestAppendQuote(t *testing.T) {
	for _, s := range quoteSeeds {
		checkQuote(t, s)
	}
}

func checkQuote(t *testing.T, s string) {
	want, err := jsontext.AppendQuote([]byte("prefix"), s)
	got, ok := jsonx.AppendQuote([]byte("prefix"), s)
	if ok != (err == nil) {
		t.Fatalf("%q: ok %v, jsontext's error %v", s, ok, err)
	}
	if ok && !bytes.Equal(got, want) {
		t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
	}
}

// BenchmarkAppendQuote quotes a model's reply of about 2 KB (a done
// event's text) as prose (a paragraph break, a quotation and a dash every
// few hundred bytes) and as text dense with escapes, and a short delta.
func BenchmarkAppendQuote(b *testing.B) {
	paragraph := "The gateway reads the request once, translates it to the canonical model and writes it for the upstream; " +
		"a stream's events go back as they come, and a \"done\" event repeats the text in full \u2014 so quoting it is worth doing fast.\n\n"
	for _, c := range []struct{ name, s string }{
		{"prose2KB", strings.Repeat(paragraph, 8)},
		{"escapes2KB", strings.Repeat("The model answers in plain prose, with a \"quote\" now and then.\n", 32)},
		{"delta", "Hello, world"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				buf, _ = jsonx.AppendQuote(buf[:0], c.s)
			}
		})
	}
}

// TestSpecialAtEveryPlace: a byte that is not plain ASCII (a quote, a
// backslash, a control character, a multi-byte character, an invalid
// byte), at every place of a text as long as two of the sixteen-byte runs
// the quick readers and writers pass over at once, is found there:
// AppendQuote writes what jsontext writes, and Unquote reads the quoted
// token (or refuses it) as jsontext does.
func TestSpecialAtEveryPlace(t *testing.T) {
	for _, special := range []string{`"`, `\`, "\x00", "\n", "\x1f", "\x7f", "é", "\u2028", "\xff", "\xc3"} {
		for n := 1; n <= 40; n++ {
			for p := range n {
				s := strings.Repeat("a", p) + special + strings.Repeat("b", n-p-1)
				checkQuote(t, s)
				// A JSON token whose text holds the byte as it is, and
				// one with the byte escaped as jsontext writes it.
				for _, tok := range []string{`"` + s + `"`, string(mustQuote(t, s))} {
					got, ok := jsonx.Unquote([]byte(tok))
					want, err := jsontext.AppendUnquote(nil, tok)
					if ok != (err == nil) || ok && got != string(want) {
						t.Fatalf("Unquote(%q) = %q, %v; jsontext reads %q, %v", tok, got, ok, want, err)
					}
				}
			}
		}
	}
}

func mustQuote(t *testing.T, s string) []byte {
	t.Helper()
	b, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		return []byte(`"` + s + `"`)
	}
	return b
}
