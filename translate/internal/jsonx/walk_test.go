package jsonx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

var walkSeeds = []string{
	`{"a":[1,-2.5e+3,true,false,null,"x\"y\u00e9\ud83d\ude00"],"b":{"c":{}},"d":[]}`,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"Hi"}}]}`,
	` [ 0 , -0 , 1.0 , 1e5 , "" ] `, `"\ud800"`, `"\u12"`, `01`, `1.`, `-`, `{"a":1,}`, `[1,]`,
	`{"a" 1}`, `nul`, `truex`, "\"\xff\"", "\"a\tb\"", `{"a":1,"a":2}`, `{"\u0061":1}`,
	strings.Repeat("[", 600) + strings.Repeat("]", 600),
	// Strings long enough to be scanned eight bytes at a time, with what
	// stops the scan at different offsets.
	`"abcdefghijklmnop\"qrstuvwxyz"`, `"abcdefghé世界🌍abcdefghijklmnop"`, "\"abcdefgh\x7fijklmnop\"",
	"\"abcdefg\x1fhijklmnop\"", "\"abcdefghijklmno\xc3\"", `"abcdefghijklmnopqrstuvwx\u00e9y"`,
	// Indented, as a whole reply often comes: runs of white space of every
	// length around eight, and a byte that is not white space after them.
	"{\n  \"a\": [\n          1,\n                 \t\"b\"\n\r\n        ],\n  \"c\":\n\n\n        null}",
	"[\n                \n\t        x]", "        \n        \v1",
}

// FuzzWalkerSkip: the Walker passes over exactly the values Unmarshal
// accepts (nesting deeper than maxDepth aside, which it leaves to
// Unmarshal), and Raw returns the value itself.
func FuzzWalkerSkip(f *testing.F) {
	for _, s := range walkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var w Walker
		w.Reset(data)
		raw, err := w.Raw()
		walked := err == nil && w.End()
		var v jsontext.Value
		valid := Unmarshal(data, &v) == nil
		if walked && !valid {
			t.Fatalf("the Walker passed over %q, which Unmarshal refuses", data)
		}
		if valid && !walked && w.depth <= maxDepth {
			t.Fatalf("the Walker refused %q, which Unmarshal accepts", data)
		}
		if walked && string(raw) != strings.Trim(string(data), " \t\r\n") {
			t.Fatalf("Raw = %q, want the value of %q", raw, data)
		}
	})
}

// FuzzWalkerString: a string the Walker reads is the string Unmarshal
// reads.
func FuzzWalkerString(f *testing.F) {
	for _, s := range walkSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`"plain"`))
	f.Add([]byte(`"tab\tand \\ and \/ and \u2028"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var w Walker
		w.Reset(data)
		got, err := w.String()
		if err != nil || !w.End() {
			return
		}
		var want *string
		if err := Unmarshal(data, &want); err != nil {
			t.Fatalf("the Walker read %q, which Unmarshal refuses: %v", data, err)
		}
		if want == nil {
			want = new(string)
		}
		if got != *want {
			t.Fatalf("String() = %q, Unmarshal reads %q", got, *want)
		}
	})
}

func TestWalkerRefusesARepeatedMember(t *testing.T) {
	for _, data := range []string{`{"a":1,"a":2}`, `{"a":1,"b":{"a":1,"b":2},"a":3}`} {
		var w Walker
		w.Reset([]byte(data))
		err := w.Object(func([]byte) error { return w.Skip() })
		if err == nil {
			t.Errorf("%s: a repeated member was read", data)
		}
	}
	var w Walker
	w.Reset([]byte(`{"a":{"x":1},"b":{"x":2}}`))
	var names []string
	err := w.Object(func(name []byte) error {
		names = append(names, string(name))
		return w.Object(func(inner []byte) error { names = append(names, string(inner)); return w.Skip() })
	})
	if err != nil || strings.Join(names, ",") != "a,x,b,x" {
		t.Errorf("one name in two objects: %v, %v", names, err)
	}
	// Names are looked for only when their bit (nameBit) is set: 200
	// names set every bit, and names that share one are still told
	// apart, the empty name among them.
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf(`"n%d":%d`, i, i))
	}
	if nameBit([]byte("axb")) != nameBit([]byte("ayb")) {
		t.Fatal("axb and ayb, of one length and the same ends, do not share a bit")
	}
	same := `"axb":0,"ayb":1`
	for _, c := range []struct {
		data string
		ok   bool
	}{
		{"{" + strings.Join(many, ",") + "}", true},
		{"{" + strings.Join(many, ",") + `,"n7":0}`, false},
		{"{" + same + "}", true},
		{"{" + same + `,"ayb":2}`, false},
		{`{"":0,"a":1}`, true},
		{`{"":0,"a":1,"":2}`, false},
	} {
		w.Reset([]byte(c.data))
		err := w.Object(func([]byte) error { return w.Skip() })
		if (err == nil) != c.ok {
			t.Errorf("%.40s...: read %v, want %v", c.data, err == nil, c.ok)
		}
	}
}

// TestSpecial8Plain: special8 flags nothing in eight bytes exactly when
// each of them is plain, for every byte value at every position among plain ones.
func TestSpecial8Plain(t *testing.T) {
	fill := []byte("abcdefgh")
	for pos := range 8 {
		for c := range 256 {
			b := append([]byte(nil), fill...)
			b[pos] = byte(c)
			// Around it, the plain bytes nearest the edges of the range.
			for j := range b {
				if j != pos {
					b[j] = " ~"[j%2]
				}
			}
			got := special8(binary.LittleEndian.Uint64(b)) == 0
			want := true
			for _, x := range b {
				want = want && plain[x]
			}
			if got != want {
				t.Errorf("%q: special8 says all plain: %v", b, got)
			}
		}
	}
}

// TestSpecial8First: special8's lowest flag (flagged) is the first byte
// that is not plain among eight, whatever two bytes at any two places among plain ones are
// (a flag's borrow, wrong above a flagged byte, must never come first),
// and 8 when all are plain.
func TestSpecial8First(t *testing.T) {
	b := make([]byte, 8)
	for p := range 8 {
		for q := p + 1; q < 8; q++ {
			for c := range 256 {
				for d := range 256 {
					for j := range b {
						b[j] = " ~"[j%2]
					}
					b[p], b[q] = byte(c), byte(d)
					want := 8
					for j, x := range b {
						if !plain[x] {
							want = j
							break
						}
					}
					if got := flagged(special8(binary.LittleEndian.Uint64(b))); got != want {
						t.Fatalf("%q: flagged = %d, want %d", b, got, want)
					}
				}
			}
		}
	}
}

// TestWord: Word reads what String reads, and a common word without
// allocating.
func TestWord(t *testing.T) {
	common := []string{"message", "assistant"}
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`"message"`, "message", true},
		{`"mess\u0061ge"`, "message", true},
		{`"other"`, "other", true},
		{`null`, "", true},
		{`1`, "", false},
		{`"a` + "\x01" + `"`, "", false},
	} {
		var w Walker
		w.Reset([]byte(c.in))
		got, err := w.Word(common...)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s: %q, %v; want %q, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	var w Walker
	data := []byte(`"assistant"`)
	if n := testing.AllocsPerRun(100, func() { w.Reset(data); _, _ = w.Word(common...) }); n != 0 {
		t.Errorf("a common word allocated %v times", n)
	}
}

// FuzzAppendRaw: AppendRaw writes a raw value as Marshal writes it, and
// writes every value Marshal writes (nesting deeper than maxDepth aside).
func FuzzAppendRaw(f *testing.F) {
	for _, s := range walkSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"a":1}`, `{"a": 1}`, "{\n  \"a\" : [1, 2.50]\n}", `[1,2.50,-0,1e3,true,null,"x y"]`, `{"a":"\u00e9\/\n\""}`,
		`{"a":{"b":[]},"a":2}`, `{"a":"<&>\u2028"}`, "{\"a\":\"\xff\"}", `{"a":1}x`, ` "\ud83c\udf0d" `, `"\ud800"`, `"\u0000\u001f\u007f"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := AppendRaw([]byte("x"), data)
		want, err := Marshal(jsontext.Value(data))
		switch {
		case ok && err != nil:
			t.Fatalf("AppendRaw wrote %q as %q, which Marshal refuses: %v", data, got, err)
		case ok && string(got[1:]) != string(want):
			t.Fatalf("AppendRaw wrote %q as %q, Marshal as %q", data, got[1:], want)
		case !ok && string(got) != "x":
			t.Fatalf("AppendRaw declined %q, leaving %q", data, got)
		case !ok && err == nil:
			var w Walker
			w.Reset(data)
			if _, err := w.Raw(); err == nil || w.depth <= maxDepth {
				t.Fatalf("AppendRaw declined %q, which Marshal writes as %q", data, want)
			}
		}
	})
}

// TestReleaseLetsGoOfTheData: a released Walker holds nothing of what it
// read, the names it kept behind an object's end included.
func TestReleaseLetsGoOfTheData(t *testing.T) {
	var w Walker
	w.Reset([]byte(`{"a":1,"b":{"c":2}}`))
	if err := w.Object(func([]byte) error { return w.Skip() }); err != nil {
		t.Fatal(err)
	}
	// The names of an object read stay behind its end, in the
	// backing array the next read appends to.
	if kept := w.names[:cap(w.names)]; len(kept) == 0 || kept[0] == nil {
		t.Fatal("the Walker kept no names: the test tests nothing")
	}
	w.Release()
	if w.data != nil {
		t.Error("the data is kept")
	}
	for i, n := range w.names[:cap(w.names)] {
		if n != nil {
			t.Errorf("name %d is kept: %q", i, n)
		}
	}
}

// FuzzUnquote: Unquote reads a token as jsontext does, and refuses what
// jsontext refuses: the one-letter escapes it reads by hand (appendUnquote,
// which the Walker's strings go through too) included.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb"`, `"tab\tand \\ and \/ and \" and \b\f\r"`, `"\u2028 and \ud83d\ude00"`,
		`"\x"`, `"end\"`, `"é\n"`, "\"\xff\\n\"", "\"\\\x01\"", `"a"b"`, `"\\"`, `""`, `"\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		got, ok := Unquote(tok)
		want, err := jsontext.AppendUnquote(nil, tok)
		if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
			return // not a token Unquote is given; it refuses it
		}
		if ok != (err == nil) || ok && got != string(want) {
			t.Fatalf("Unquote(%q) = %q, %v; jsontext: %q, %v", tok, got, ok, want, err)
		}
	})
}

// BenchmarkWalkerString reads an agent's long text, a line break every
// few dozen bytes (64 KB), and a stream's short delta with one.
func BenchmarkWalkerString(b *testing.B) {
	line := "Revenue for the quarter was $48.2 million, up 12% on the year; \"costs\" were $31.5 million."
	for _, c := range []struct{ name, text string }{
		{"64KB", strings.Repeat(line+"\n", 64<<10/(len(line)+1))},
		{"delta", " the quarter:\n\n"},
	} {
		tok, err := jsontext.AppendQuote(nil, c.text)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(tok)))
			b.ReportAllocs()
			var w Walker
			for b.Loop() {
				w.Reset(tok)
				if s, err := w.String(); err != nil || len(s) != len(c.text) {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/Unquote", func(b *testing.B) {
			b.SetBytes(int64(len(tok)))
			b.ReportAllocs()
			for b.Loop() {
				if s, ok := Unquote(tok); !ok || len(s) != len(c.text) {
					b.Fatal("not read")
				}
			}
		})
	}
}

// TestBackReadsAgain: a value read from a Place is read again from it
// after Back, names and depth as they were there (a repeated member is
// still one, a member read before Back is not), and Since returns the
// value as Raw does, without the white space before it.
func TestBackReadsAgain(t *testing.T) {
	var w Walker
	w.Reset([]byte(`{"a":1,"b": {"c":[true,"x"],"d":null} ,"b":2}`))
	var got []string
	err := w.Object(func(name []byte) error {
		got = append(got, string(name))
		if string(name) != "b" || len(got) > 2 {
			return w.Skip()
		}
		p := w.Place()
		if err := w.Object(func([]byte) error { return ErrForm }); !errors.Is(err, ErrForm) {
			return fmt.Errorf("the inner object: %w, want ErrForm", err)
		}
		w.Back(p)
		if err := w.Skip(); err != nil {
			return err
		}
		if v := w.Since(p); string(v) != `{"c":[true,"x"],"d":null}` {
			return fmt.Errorf("since the place: %s", v)
		}
		w.Back(p)
		raw, err := w.Raw()
		if string(raw) != `{"c":[true,"x"],"d":null}` {
			return fmt.Errorf("raw after Back: %s", raw)
		}
		return err
	})
	if !errors.Is(err, ErrForm) {
		t.Errorf("the repeated member: %v, want ErrForm", err)
	}
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
}
