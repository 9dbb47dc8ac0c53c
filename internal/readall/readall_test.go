package readall

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	_ "github.com/parleyhq/parley/translate/golden" // every test binary accepts -update
)

// TestSized reads bodies of known and unknown length, whole, cut short and
// longer than said, in reads of every size: what comes back is what was
// sent, and a body of known length takes one allocation.
func TestSized(t *testing.T) {
	body := []byte(strings.Repeat("0123456789", 300))
	for _, c := range []struct {
		name string
		r    io.Reader
		size int64
		want []byte
		err  error
	}{
		{"known", iotest.HalfReader(bytes.NewReader(body)), int64(len(body)), body, nil},
		{"known, a byte a read", iotest.OneByteReader(bytes.NewReader(body)), int64(len(body)), body, nil},
		{"unknown", iotest.HalfReader(bytes.NewReader(body)), -1, body, nil},
		{"empty", bytes.NewReader(nil), 0, []byte{}, nil},
		{"longer than said", iotest.HalfReader(bytes.NewReader(body)), 100, body, nil},
		{"cut short", io.MultiReader(bytes.NewReader(body[:50]), iotest.ErrReader(io.ErrUnexpectedEOF)), int64(len(body)), body[:50], io.ErrUnexpectedEOF},
	} {
		got, err := Sized(c.r, c.size)
		if !bytes.Equal(got, c.want) || !errors.Is(err, c.err) {
			t.Errorf("%s: got %d bytes, %v; want %d, %v", c.name, len(got), err, len(c.want), c.err)
		}
	}
	rd := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(20, func() {
		rd.Reset(body)
		_, _ = Sized(rd, int64(len(body)))
	})
	if allocs > 1 {
		t.Errorf("a body of known length took %v allocations, want 1", allocs)
	}
}
