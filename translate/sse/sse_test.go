package sse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyhq/parley/internal/racedetect"
	"github.com/parleyhq/parley/translate/sse"
	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

type got struct {
	Type, Data, ID string
	Retry          int
}

// readAll reads every event of r, copying each because Data is reused.
func readAll(r *sse.Reader) ([]got, error) {
	var out []got
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return out, err
		}
		out = append(out, got{ev.Type, string(ev.Data), ev.ID, ev.Retry})
	}
}

var parseCases = []struct {
	name string
	in   string
	want []got
	err  error
}{
	{
		name: "typed events",
		in:   "event: message_start\ndata: {\"a\":1}\n\nevent: ping\ndata: {}\n\n",
		want: []got{{Type: "message_start", Data: `{"a":1}`}, {Type: "ping", Data: "{}"}},
	},
	{
		name: "data lines are joined with newlines",
		in:   "data: YHOO\ndata: +2\ndata: 10\n\n",
		want: []got{{Data: "YHOO\n+2\n10"}},
	},
	{
		name: "crlf, lone cr and lf terminators mix",
		in:   "data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r",
		want: []got{{Data: "a\nb\nc"}, {Data: "d"}},
	},
	{
		name: "comments are skipped",
		in:   ": keep-alive\n\n: x\ndata: first\n: inside\n\n",
		want: []got{{Data: "first"}},
	},
	{
		name: "only one leading space is stripped",
		in:   "data:no space\n\ndata:  two spaces\n\n",
		want: []got{{Data: "no space"}, {Data: " two spaces"}},
	},
	{
		name: "a field with no colon has an empty value",
		in:   "data\n\ndata\ndata\n\n",
		want: []got{{Data: ""}, {Data: "\n"}},
	},
	{
		name: "an event with no data is not dispatched and its type does not leak",
		in:   "event: lonely\n\ndata: x\n\n",
		want: []got{{Data: "x"}},
	},
	{
		name: "ids persist and retry needs digits",
		in:   "id: 7\nretry: 1500\ndata: a\n\nretry: 1x\ndata: b\n\nid\ndata: c\n\n",
		want: []got{{Data: "a", ID: "7", Retry: 1500}, {Data: "b", ID: "7", Retry: 1500}, {Data: "c", ID: "", Retry: 1500}},
	},
	{
		name: "a leading byte-order mark is skipped",
		in:   "\xEF\xBB\xBFdata: bom\n\n",
		want: []got{{Data: "bom"}},
	},
	{
		name: "unknown fields are ignored",
		in:   "foo: bar\ndata: x\n\n",
		want: []got{{Data: "x"}},
	},
	{
		name: "a stream cut inside an event is an unexpected EOF",
		in:   "data: whole\n\ndata: {\"half\":",
		want: []got{{Data: "whole"}},
		err:  io.ErrUnexpectedEOF,
	},
	{
		name: "a stream cut before the blank line is an unexpected EOF",
		in:   "data: whole\n\nevent: x\ndata: y\n",
		want: []got{{Data: "whole"}},
		err:  io.ErrUnexpectedEOF,
	},
	{
		name: "a trailing comment without a blank line loses nothing",
		in:   "data: whole\n\n: bye",
		want: []got{{Data: "whole"}},
	},
	{
		name: "empty stream",
		in:   "",
	},
}

func TestReaderParsesStreams(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			events, err := readAll(sse.NewReader(strings.NewReader(tc.in), 0))
			if !errors.Is(err, tc.err) {
				t.Fatalf("error = %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// chunkReader returns its input in pieces of the given sizes, cycling.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := c.sizes[c.i%len(c.sizes)]
	c.i++
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestReaderFramesSplitAcrossReads feeds every case in every chunk size, so
// that each terminator, field name and BOM byte lands on a read boundary.
func TestReaderFramesSplitAcrossReads(t *testing.T) {
	for _, tc := range parseCases {
		whole, wholeErr := readAll(sse.NewReader(strings.NewReader(tc.in), 0))
		for size := 1; size <= len(tc.in); size++ {
			events, err := readAll(sse.NewReader(&chunkReader{data: []byte(tc.in), sizes: []int{size}}, 0))
			if !errors.Is(err, wholeErr) {
				t.Fatalf("%s, chunks of %d: error %v, want %v", tc.name, size, err, wholeErr)
			}
			if diff := cmp.Diff(whole, events); diff != "" {
				t.Fatalf("%s, chunks of %d (-whole +split):\n%s", tc.name, size, diff)
			}
		}
		events, err := readAll(sse.NewReader(iotest.OneByteReader(strings.NewReader(tc.in)), 0))
		if !errors.Is(err, wholeErr) || !cmp.Equal(whole, events) {
			t.Fatalf("%s, one byte at a time: %v %v, want %v %v", tc.name, events, err, whole, wholeErr)
		}
	}
}

func TestReaderCRLFSplitBetweenReads(t *testing.T) {
	// "\r" ends one read and "\n" starts the next: one terminator, not two.
	r := sse.NewReader(&chunkReader{data: []byte("data: a\r\ndata: b\r\n\r\n"), sizes: []int{8, 1, 100}}, 0)
	events, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := []got{{Data: "a\nb"}}; !cmp.Equal(want, events) {
		t.Fatalf("events = %v, want %v", events, want)
	}
}

// TestReaderCRAfterLFLines: a stream whose first reads end their lines
// in "\n" alone and whose later ones use a lone "\r": the lines after
// the first "\r" end there, wherever it comes, Ready included.
func TestReaderCRAfterLFLines(t *testing.T) {
	in := "data: a\n\ndata: b\rdata: c\r\rdata: d\r\n\r\n"
	for _, sizes := range [][]int{{9, 100}, {12, 100}, {len(in)}, {1}} {
		r := sse.NewReader(&chunkReader{data: []byte(in), sizes: sizes}, 0)
		var events []got
		for {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, got{Type: ev.Type, Data: string(ev.Data)})
			if len(events) == 2 && sizes[0] > 1 && !r.Ready() {
				t.Errorf("reads of %v: the third event is buffered whole, and Ready says it is not", sizes)
			}
		}
		if want := []got{{Data: "a"}, {Data: "b\nc"}, {Data: "d"}}; !cmp.Equal(want, events) {
			t.Errorf("reads of %v: events = %v, want %v", sizes, events, want)
		}
	}
}

func TestReaderBoundsFrames(t *testing.T) {
	t.Run("one long line", func(t *testing.T) {
		in := "data: " + strings.Repeat("x", 200) + "\n\n"
		_, err := readAll(sse.NewReader(strings.NewReader(in), 64))
		if !errors.Is(err, sse.ErrFrameTooLarge) {
			t.Fatalf("error = %v, want ErrFrameTooLarge", err)
		}
	})
	t.Run("many short lines", func(t *testing.T) {
		in := strings.Repeat("data: x\n", 100) + "\n"
		_, err := readAll(sse.NewReader(strings.NewReader(in), 64))
		if !errors.Is(err, sse.ErrFrameTooLarge) {
			t.Fatalf("error = %v, want ErrFrameTooLarge", err)
		}
	})
	t.Run("frames at the limit pass", func(t *testing.T) {
		line := "data: " + strings.Repeat("x", 57) + "\n" // 64 bytes
		events, err := readAll(sse.NewReader(strings.NewReader(strings.Repeat(line+"\n", 3)), 64))
		if err != nil || len(events) != 3 {
			t.Fatalf("got %d events, error %v", len(events), err)
		}
	})
}

func TestReaderReportsSourceErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := sse.NewReader(io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom)), 0)
	if ev, err := r.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event = %q, %v", ev.Data, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("error = %v, want %v", err, boom)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	cases := []struct {
		typ, data string
		want      string
	}{
		{"message_start", `{"type":"message_start"}`, `{"type":"message_start"}`},
		{"", "[DONE]", "[DONE]"},
		{"", "", ""},
		{"multi", "a\nb\r\nc\rd", "a\nb\nc\nd"},
		{"trailing", "a\n", "a\n"},
	}
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	for _, c := range cases {
		if err := w.Event(c.typ, []byte(c.data)); err != nil {
			t.Fatal(err)
		}
		if err := w.Comment("ping\nwith newline"); err != nil {
			t.Fatal(err)
		}
	}
	events, err := readAll(sse.NewReader(&buf, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != len(cases) {
		t.Fatalf("read %d events, wrote %d", len(events), len(cases))
	}
	for i, c := range cases {
		if events[i].Type != c.typ || events[i].Data != c.want {
			t.Errorf("event %d = %q %q, want %q %q", i, events[i].Type, events[i].Data, c.typ, c.want)
		}
	}
}

func TestWriterFormat(t *testing.T) {
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	_ = w.Event("content_block_delta", []byte(`{"x":1}`))
	_ = w.Event("", []byte("[DONE]"))
	_ = w.Comment("")
	want := "event: content_block_delta\ndata: {\"x\":1}\n\ndata: [DONE]\n\n:\n\n"
	if buf.String() != want {
		t.Fatalf("wrote %q, want %q", buf.String(), want)
	}
	buf.Reset()
	for _, typ := range []string{"bad\ntype", "bad\rtype", "\n", "type\r", "\rtype"} {
		if err := w.Event(typ, nil); err == nil {
			t.Errorf("the event type %q, with a line break, was accepted", typ)
		}
	}
	if buf.Len() > 0 {
		t.Errorf("refused events wrote %q", buf.String())
	}
}

func TestJSONArrayWriter(t *testing.T) {
	for _, tc := range []struct {
		events []string
		want   string
	}{
		{nil, "[]"},
		{[]string{`{"a":1}`}, `[{"a":1}]`},
		{[]string{`{"a":1}`, `{"b":2}`}, "[{\"a\":1},\r\n{\"b\":2}]"},
	} {
		var b strings.Builder
		w := sse.NewJSONArrayWriter(&b)
		for _, e := range tc.events {
			if err := w.Event("ignored", []byte(e)); err != nil {
				t.Fatal(err)
			}
			if err := w.Comment("keep-alive"); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("got %q, want %q", b.String(), tc.want)
		}
		var v []map[string]int
		if err := json.Unmarshal([]byte(b.String()), &v); err != nil || len(v) != len(tc.events) {
			t.Errorf("not a JSON array of %d: %v", len(tc.events), err)
		}
	}
}

// Ready says whether Next would return an event without reading: only
// when a data line and its blank line are buffered, whatever the line
// ends, and never for comments or events without data, which Next skips
// before reading on.
func TestReaderReady(t *testing.T) {
	for _, c := range []struct {
		in    string
		ready bool
	}{
		{"data: a\n\n", true},
		{"data: a\r\n\r\n", true},
		{"data: a\r\r", true},
		{"data\n\n", true},
		{"event: x\ndata: {}\n\n", true},
		{"data: a\n", false},
		{"data: a", false},
		{": ping\n\n", false},
		{": ping\n\ndata: a\n\n", true},
		{"event: ping\n\n", false},
		{"datum: a\n\n", false},
		{"", false},
	} {
		r := sse.NewReader(&chunkReader{data: []byte("data: first\n\n" + c.in), sizes: []int{1 << 10}}, 0)
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if got := r.Ready(); got != c.ready {
			t.Errorf("%q buffered: Ready %v, want %v", c.in, got, c.ready)
		}
	}
	// A data line read already, its blank line still to come.
	r := sse.NewReader(&chunkReader{data: []byte("data: a\n\ndata: b\n"), sizes: []int{9, 8}}, 0)
	if _, err := r.Next(); err != nil || r.Ready() {
		t.Fatalf("before the second event's lines: ready %v, %v", r.Ready(), err)
	}
}

// TestReaderReadyAtTheEnd: a source that gives its last bytes with its
// end (io.EOF, or an error) has Next return without reading from then on,
// so Ready says so after the last event too; a source that ends on a read
// of its own does not, since Next would read to learn it.
func TestReaderReadyAtTheEnd(t *testing.T) {
	const in = "data: a\n\ndata: b\n\n"
	boom := errors.New("boom")
	for _, c := range []struct {
		name  string
		src   io.Reader
		ready bool
		end   error
	}{
		{"EOF with the last bytes", iotest.DataErrReader(strings.NewReader(in)), true, io.EOF},
		{"an error with the last bytes", iotest.DataErrReader(io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom))), true, boom},
		{"EOF on a read of its own", strings.NewReader(in), false, io.EOF},
	} {
		r := sse.NewReader(c.src, 0)
		for _, want := range []string{"a", "b"} {
			if ev, err := r.Next(); err != nil || string(ev.Data) != want {
				t.Fatalf("%s: %q, %v; want %q", c.name, ev.Data, err, want)
			}
		}
		if got := r.Ready(); got != c.ready {
			t.Errorf("%s: Ready %v after the last event, want %v", c.name, got, c.ready)
		}
		if _, err := r.Next(); !errors.Is(err, c.end) {
			t.Errorf("%s: Next after the last event: %v, want %v", c.name, err, c.end)
		}
	}
}

// TestReleasedBuffersServeTheNextReader: a Reader's buffers, given back
// with Release, serve later Readers without what an earlier stream left in
// them showing through, whether the earlier one grew its buffer (an event
// larger than the first buffer) or not.
func TestReleasedBuffersServeTheNextReader(t *testing.T) {
	big := strings.Repeat("x", 10_000)
	streams := []string{
		"event: a\ndata: " + big + "\n\n",
		"data: one\n\ndata: two\ndata: lines\n\n",
		"event: b\ndata: " + big[:5000] + "\n\n",
		"data: {}\n\n",
	}
	for round := range 3 {
		for _, s := range streams {
			r := sse.NewReader(strings.NewReader(s), 0)
			var got strings.Builder
			for {
				ev, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got.WriteString(ev.Type + "|" + string(ev.Data) + "\n")
			}
			r.Release()
			r.Release() // twice is harmless
			var want strings.Builder
			for _, ev := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
				typ, data := "", []string(nil)
				for _, line := range strings.Split(ev, "\n") {
					if v, ok := strings.CutPrefix(line, "event: "); ok {
						typ = v
					} else {
						data = append(data, strings.TrimPrefix(line, "data: "))
					}
				}
				want.WriteString(typ + "|" + strings.Join(data, "\n") + "\n")
			}
			if got.String() != want.String() {
				t.Errorf("round %d: read %.60q, want %.60q", round, got.String(), want.String())
			}
		}
	}
}

// TestReleasedWriterBuffersServeTheNextWriter: a Writer's buffer, given
// back with Release, serves later Writers without what an earlier stream
// wrote showing through.
func TestReleasedWriterBuffersServeTheNextWriter(t *testing.T) {
	big := strings.Repeat("y", 3000)
	for round := range 3 {
		for _, c := range []struct {
			array bool
			data  string
			want  string
		}{
			{false, big, "event: e\ndata: " + big + "\n\n"},
			{false, "a", "event: e\ndata: a\n\n"},
			{true, "1", "[1]"},
		} {
			var buf bytes.Buffer
			w := sse.NewWriter(&buf)
			if c.array {
				w = sse.NewJSONArrayWriter(&buf)
			}
			if err := w.Event("e", []byte(c.data)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			w.Release()
			w.Release()
			if buf.String() != c.want {
				t.Errorf("round %d: wrote %.40q, want %.40q", round, buf.String(), c.want)
			}
		}
	}
}

// TestEventTypesAreShared: the streams of a dialect repeat a dozen event
// types, and a stream's Reader, on the buffers an earlier one gave back,
// reads them without making their strings again: reading a stream of
// five types allocates the Reader and nothing more.
func TestEventTypesAreShared(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("the race detector's sync.Pool drops some of what is put back")
	}
	var in strings.Builder
	for _, typ := range []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"} {
		in.WriteString("event: " + typ + "\ndata: {}\n\n")
	}
	stream := in.String()
	src := strings.NewReader(stream)
	read := func() {
		src.Reset(stream)
		r := sse.NewReader(src, 0)
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			if ev.Type == "" {
				t.Fatal("an event without its type")
			}
		}
		r.Release()
	}
	read()
	if n := testing.AllocsPerRun(100, read); n >= 2 {
		t.Errorf("reading a stream allocated %.1f times, want the Reader alone", n)
	}
}

// TestWriterEventAllocatesNothing: writing an event allocates nothing
// once the Writer's buffer has grown, whatever its type's length (the
// responses dialect's run past 32 bytes, where a conversion of the type
// to bytes would allocate), and a type with a line break is refused.
func TestWriterEventAllocatesNothing(t *testing.T) {
	w := sse.NewWriter(io.Discard)
	defer w.Release()
	data := []byte(`{"type":"response.function_call_arguments.delta","delta":"{\"a\":"}`)
	for _, typ := range []string{"", "message_start", "response.function_call_arguments.delta"} {
		if allocs := testing.AllocsPerRun(100, func() { _ = w.Event(typ, data) }); allocs != 0 {
			t.Errorf("type %q: %v allocations an event", typ, allocs)
		}
	}
	for _, typ := range []string{"a\nb", "a\r", "\r\nmessage"} {
		if err := w.Event(typ, data); err == nil {
			t.Errorf("type %q: written", typ)
		}
	}
}
