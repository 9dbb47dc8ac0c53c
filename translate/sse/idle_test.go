package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// bursts is a source that returns its bursts one read at a time, as an
// upstream's writes arrive: a read never returns bytes of two bursts, and
// calls see, before each read, what the Reader holds.
type bursts struct {
	left  []string
	r     *Reader
	reads []readState
	// during runs inside a read, as other streams would meanwhile.
	during func()
}

type readState struct {
	holding bool // the Reader held its buffers while it read
	size    int  // the room the read was given
}

func (b *bursts) Read(p []byte) (int, error) {
	b.reads = append(b.reads, readState{holding: b.r.pooled != nil, size: len(p)})
	if b.during != nil {
		b.during()
	}
	if len(b.left) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.left[0])
	if b.left[0] = b.left[0][n:]; b.left[0] == "" {
		b.left = b.left[1:]
	}
	return n, nil
}

func readEvents(t *testing.T, r *Reader) []string {
	t.Helper()
	var out []string
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev.Type+"|"+string(ev.Data))
	}
}

// TestWaitingReaderHoldsNoBuffers: a read made with nothing buffered and
// no event begun (a stream waiting for its upstream's next burst) is made
// with the Reader's buffers back in the pool, into its small array; a read
// in the middle of an event keeps them. The events read are the same, and
// another stream using the pooled buffers meanwhile does not show through.
func TestWaitingReaderHoldsNoBuffers(t *testing.T) {
	long := strings.Repeat("y", 300)
	src := &bursts{left: []string{
		"event: a\ndata: 1\n\nevent: b\ndata: 2\n\n",
		"event: c\ndata: " + long, // ends inside an event
		"\n\n",
		"data: " + long + "\n\n",
	}}
	r := NewReader(src, 0)
	src.r = r
	src.during = func() {
		other := NewReader(strings.NewReader("event: z\ndata: "+strings.Repeat("z", 1000)+"\n\n"), 0)
		if got := readEvents(t, other); len(got) != 1 {
			t.Errorf("the other stream read %d events, want 1", len(got))
		}
		other.Release()
	}
	got := readEvents(t, r)
	r.Release()
	want := []string{"a|1", "b|2", "c|" + long, "|" + long}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("read %q, want %q", got, want)
	}
	// Each burst is read first into the small array, without buffers,
	// but for the one that ends the event the burst before began; the
	// rest of a burst is read with them.
	wantHolding := []bool{
		false,       // the first burst, whole
		false, true, // the second: its start, its rest
		true,        // the third, inside event c
		false, true, // the fourth
		false, // the end
	}
	if len(src.reads) != len(wantHolding) {
		t.Fatalf("%d reads, want %d: %+v", len(src.reads), len(wantHolding), src.reads)
	}
	for i, rd := range src.reads {
		if rd.holding != wantHolding[i] || !rd.holding && rd.size != idleReadSize {
			t.Errorf("read %d: %+v, want holding %v (and %d bytes of room when not)", i, rd, wantHolding[i], idleReadSize)
		}
	}
}

// TestWriterLetsGoOfALargeEvent: after an event larger than
// maxKeptScratch, a Writer keeps no buffer that size while its stream
// waits; after a small one it keeps its buffer for the next.
func TestWriterLetsGoOfALargeEvent(t *testing.T) {
	for _, array := range []bool{false, true} {
		var out strings.Builder
		w := newWriter(&out, array)
		if err := w.Event("small", []byte(`{"a":1}`)); err != nil {
			t.Fatal(err)
		}
		if c := cap(w.scratch); c == 0 || c > maxKeptScratch {
			t.Errorf("array %v: a small event left a buffer of %d bytes", array, c)
		}
		large := `{"tools":"` + strings.Repeat("x", 4*maxKeptScratch) + `"}`
		if err := w.Event("large", []byte(large)); err != nil {
			t.Fatal(err)
		}
		if c := cap(w.scratch); c > maxKeptScratch {
			t.Errorf("array %v: a large event left a buffer of %d bytes", array, c)
		}
		if err := w.Comment(strings.Repeat("y", 2*maxKeptScratch)); err != nil {
			t.Fatal(err)
		}
		if c := cap(w.scratch); c > maxKeptScratch {
			t.Errorf("array %v: a large comment left a buffer of %d bytes", array, c)
		}
		if err := w.Event("small", []byte(`{"a":2}`)); err != nil {
			t.Fatal(err)
		}
		_ = w.Close()
		w.Release()
		if !strings.Contains(out.String(), large) || !strings.HasSuffix(strings.TrimRight(out.String(), "\n]"), `{"a":2}`) {
			t.Errorf("array %v: wrote %.200q...", array, out.String())
		}
	}
}

// TestIdleWriterHoldsNoBuffer: between bursts (Idle) a Writer holds no
// buffer, its own back in the pool for other streams, and what it writes
// after is as if it had kept it: another Writer using the pooled buffer
// meanwhile does not show through, and a JSON array stays one array.
func TestIdleWriterHoldsNoBuffer(t *testing.T) {
	for _, array := range []bool{false, true} {
		var out strings.Builder
		w := newWriter(&out, array)
		if w.pooled != nil {
			t.Fatalf("array %v: a Writer that wrote nothing holds a buffer", array)
		}
		if err := w.Event("a", []byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
		if w.pooled == nil {
			t.Fatalf("array %v: a Writer writing a burst holds no buffer", array)
		}
		w.Idle()
		if w.pooled != nil || w.scratch != nil {
			t.Errorf("array %v: an idle Writer holds a buffer", array)
		}
		var otherOut strings.Builder
		other := newWriter(&otherOut, array)
		if err := other.Event("z", []byte(strings.Repeat("z", 500))); err != nil {
			t.Fatal(err)
		}
		other.Release()
		if err := w.Event("b", []byte(`{"n":2}`)); err != nil {
			t.Fatal(err)
		}
		if err := w.Comment("keep-alive"); err != nil {
			t.Fatal(err)
		}
		w.Idle()
		w.Idle() // twice is harmless
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		w.Release()
		want := "event: a\ndata: {\"n\":1}\n\nevent: b\ndata: {\"n\":2}\n\n: keep-alive\n\n"
		if array {
			want = "[{\"n\":1},\r\n{\"n\":2}]"
		}
		if out.String() != want {
			t.Errorf("array %v: wrote %q, want %q", array, out.String(), want)
		}
	}
}
