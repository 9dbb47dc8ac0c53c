package sse_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyhq/parley/translate/sse"
)

const fuzzMaxFrame = 256

// FuzzReader checks that any input, in any chunking, parses the same way as
// when read whole, never panics and never returns an event over the limit.
// The seed corpus is in testdata/fuzz/FuzzReader.
func FuzzReader(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.in), uint8(1), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, a, b uint8) {
		whole, wholeErr := readAll(sse.NewReader(bytes.NewReader(in), fuzzMaxFrame))
		split, splitErr := readAll(sse.NewReader(&chunkReader{data: in, sizes: []int{int(a)%17 + 1, int(b)%251 + 1}}, fuzzMaxFrame))
		if !errors.Is(splitErr, wholeErr) && !errors.Is(wholeErr, splitErr) {
			t.Fatalf("errors differ: whole %v, split %v", wholeErr, splitErr)
		}
		if wholeErr == nil && !cmp.Equal(whole, split) {
			t.Fatalf("events differ:\n%s", cmp.Diff(whole, split))
		}
		for _, ev := range whole {
			if len(ev.Data) > fuzzMaxFrame {
				t.Fatalf("event of %d bytes passed a %d-byte limit", len(ev.Data), fuzzMaxFrame)
			}
		}
		if wholeErr != nil && !errors.Is(wholeErr, io.ErrUnexpectedEOF) && !errors.Is(wholeErr, sse.ErrFrameTooLarge) {
			t.Fatalf("unexpected error %v", wholeErr)
		}
		// When Ready says an event is buffered whole, Next returns it
		// without reading from the source.
		src := &countingReader{r: &chunkReader{data: in, sizes: []int{int(a)%17 + 1, int(b)%251 + 1}}}
		r := sse.NewReader(src, fuzzMaxFrame)
		for {
			ready, reads := r.Ready(), src.n
			_, err := r.Next()
			if ready && (src.n != reads || err != nil && !errors.Is(err, sse.ErrFrameTooLarge)) {
				t.Fatalf("Ready, yet Next read %d more times and returned %v", src.n-reads, err)
			}
			if err != nil {
				break
			}
		}
	})
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.n++
	return c.r.Read(p)
}

// FuzzWriterRoundTrip checks that whatever the Writer writes, the Reader
// reads back: the type as given and the data with its line breaks
// normalised to "\n".
func FuzzWriterRoundTrip(f *testing.F) {
	f.Add("message_delta", []byte(`{"type":"message_delta"}`))
	f.Add("", []byte("[DONE]"))
	f.Add("x", []byte("a\r\nb\rc\n"))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		var buf bytes.Buffer
		w := sse.NewWriter(&buf)
		if err := w.Event(typ, data); err != nil {
			if bytes.ContainsAny([]byte(typ), "\r\n") {
				return
			}
			t.Fatal(err)
		}
		ev, err := sse.NewReader(&buf, 0).Next()
		if err != nil {
			t.Fatal(err)
		}
		wantData := bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		wantType := typ
		if ev.Type != wantType || !bytes.Equal(ev.Data, wantData) {
			t.Fatalf("read %q %q, wrote %q %q", ev.Type, ev.Data, typ, data)
		}
	})
}
