// Package sse reads and writes server-sent event streams, as every streaming
// dialect frames them.
//
// The Reader follows the WHATWG event-stream parsing rules: lines end in
// "\n", "\r\n" or a lone "\r" (also when a terminator is split across two
// reads), a leading byte-order mark is skipped, lines starting with ':' are
// comments, "data" lines of one event are joined with "\n", and an event is
// dispatched at a blank line. Unlike a browser it is bounded: one event may
// not exceed the frame limit, and a stream that ends in the middle of an event
// is reported as io.ErrUnexpectedEOF instead of being silently dropped, so
// that a cut upstream is never mistaken for a finished one.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// DefaultMaxFrame is the frame limit used when NewReader is given 0. Frames
// carry whole inline images in some dialects, so it is generous.
const DefaultMaxFrame = 16 << 20

// ErrFrameTooLarge is returned when one event exceeds the reader's limit.
var ErrFrameTooLarge = errors.New("sse: event exceeds the frame size limit")

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the "event" field; empty when the event had none (the
	// "message" type).
	Type string
	// Data is the joined "data" lines. It is valid until the next call to
	// Reader.Next.
	Data []byte
	// ID is the last event id seen in the stream so far.
	ID string
	// Retry is the reconnection time in milliseconds the stream asked for,
	// 0 when none was given.
	Retry int
}

// Reader reads events from a stream.
type Reader struct {
	src io.Reader
	err error // sticky read error from src

	buf        []byte
	start, end int
	max        int
	pendingCR  bool // the last line ended in '\r': skip one '\n' if it comes next
	// cr is set once a '\r' has come from the source: until then a line
	// ends at the next '\n', found in one pass (lineEnd looks for both).
	cr    bool
	begun bool // the byte-order mark check has been made

	typ       []byte
	data      []byte
	hasData   bool
	frame     int // bytes of the event being read
	partial   bool
	lastID    string
	retry     int
	typeCache string

	// pooled holds buf and data when they came from readerBuffers, for
	// Release to give back. It is nil while an idle read waits (see
	// idleRead), the buffers being back in the pool.
	pooled *readerBuffers
	// small takes what an idle read brings.
	small [idleReadSize]byte
}

// idleReadSize is how much a read with nothing buffered takes: the first
// bytes of the next burst, the rest of which the next read finds at once.
const idleReadSize = 256

// readerBuffers are a Reader's buffers, shared by the Readers of streams
// one after another: a stream's reader is made per request, and its
// buffers were most of what a stream allocated.
type readerBuffers struct {
	buf  [4096]byte
	data []byte
	// typ holds an event's type as it is read; types are the types
	// events had in earlier streams, as strings, for the next streams'
	// events to share (a dialect's streams repeat a dozen types).
	typ   []byte
	types []string
}

// maxTypes bounds the event types kept with a Reader's buffers: a dialect
// has a few dozen at most, and an upstream that makes up new ones does
// not make the list grow.
const maxTypes = 64

var readerPool = sync.Pool{New: func() any { return new(readerBuffers) }}

// maxPooledData bounds the event data buffer kept for the next Reader: a
// stream of huge events does not make every later one hold as much.
const maxPooledData = 64 << 10

// NewReader returns a Reader of src whose events may be at most maxFrame
// bytes long, counting every line of the event; 0 means DefaultMaxFrame.
func NewReader(src io.Reader, maxFrame int) *Reader {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	if maxFrame+2 >= len(readerBuffers{}.buf) {
		b := readerPool.Get().(*readerBuffers)
		return &Reader{src: src, buf: b.buf[:], data: b.data[:0], typ: b.typ[:0], max: maxFrame, pooled: b}
	}
	return &Reader{src: src, buf: make([]byte, maxFrame+2), max: maxFrame}
}

// Release gives the Reader's buffers back for another Reader to use, once
// its stream has been read: the data of the events it returned is not
// valid after it, and the Reader must not be used again.
func (r *Reader) Release() {
	b := r.pooled
	if b == nil {
		return
	}
	b.data = nil
	if cap(r.data) <= maxPooledData {
		b.data = r.data[:0]
	}
	b.typ = nil
	if cap(r.typ) <= 256 {
		b.typ = r.typ[:0]
	}
	r.buf, r.data, r.typ, r.pooled = nil, nil, nil, nil
	readerPool.Put(b)
}

// idleRead reads when nothing is buffered and no event is begun: the read
// may wait as long as the upstream thinks, and a stream that waits should
// not hold its buffers meanwhile (thousands of streams wait at once). The
// buffers go back to the pool for the wait, the read takes what fits in
// small, and the buffers (these or another Reader's) come back with it.
func (r *Reader) idleRead() {
	r.Release()
	var n int
	var err error
	for tries := 0; tries < 100 && n == 0 && err == nil; tries++ {
		n, err = r.src.Read(r.small[:])
	}
	b := readerPool.Get().(*readerBuffers)
	r.buf, r.data, r.typ, r.pooled = b.buf[:], b.data[:0], b.typ[:0], b
	r.start, r.end = 0, copy(r.buf, r.small[:n])
	r.sawCR(r.small[:n])
	switch {
	case err != nil:
		r.err = err
		r.begun = true
	case n == 0:
		r.err = io.ErrNoProgress
	}
}

// Next returns the next event. At the end of a stream whose last event was
// complete it returns io.EOF; when the stream ends inside an event it returns
// io.ErrUnexpectedEOF. Other errors are the source's, or ErrFrameTooLarge.
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && r.partial {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if len(line) == 0 {
			ev, ok := r.dispatch()
			if ok {
				return ev, nil
			}
			continue
		}
		r.frame += len(line) + 1
		if r.frame > r.max {
			return Event{}, ErrFrameTooLarge
		}
		if line[0] != ':' {
			r.partial = true // a field awaits its event's blank line
			r.field(line)
		}
	}
}

func (r *Reader) dispatch() (Event, bool) {
	r.frame = 0
	r.partial = false
	if !r.hasData {
		r.typ = r.typ[:0]
		return Event{}, false
	}
	ev := Event{Data: r.data[:len(r.data)-1], ID: r.lastID, Retry: r.retry}
	if len(r.typ) > 0 {
		// Event types repeat; reuse the last string when it is the same.
		if string(r.typ) != r.typeCache {
			r.typeCache = r.eventType()
		}
		ev.Type = r.typeCache
	}
	r.typ = r.typ[:0]
	r.data = r.data[:0]
	r.hasData = false
	return ev, true
}

// eventType returns the type of the event read as a string: the one an
// earlier stream's event of the type made, when the buffers hold it, else
// a new one, kept for later streams.
func (r *Reader) eventType() string {
	b := r.pooled
	if b == nil {
		return string(r.typ)
	}
	for _, s := range b.types {
		if s == string(r.typ) {
			return s
		}
	}
	s := string(r.typ)
	if len(b.types) < maxTypes {
		b.types = append(b.types, s)
	}
	return s
}

func (r *Reader) field(line []byte) {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "data":
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
		r.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = string(value)
		}
	case "retry":
		if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 && isDigits(value) {
			r.retry = n
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// Ready reports whether Next will return without reading from the
// source: an event is already buffered whole (a line of data, then a
// blank line), or the source has already ended or failed, so that Next
// returns what is buffered and then the end. It never reads; a comment or
// an event without data (which Next skips, and would then read on) does
// not count. A source that returns its last bytes with io.EOF (an HTTP
// body whose end arrived with them) makes its stream's end known with its
// last event, so that a stream ending without an event of its own ends
// in the same burst as its last one.
func (r *Reader) Ready() bool {
	if r.err != nil {
		return true
	}
	w := r.buf[r.start:r.end]
	if r.pendingCR && len(w) > 0 && w[0] == '\n' {
		w = w[1:]
	}
	data := r.hasData
	for {
		i := r.lineEnd(w)
		if i < 0 {
			return false
		}
		line := w[:i]
		switch {
		case len(line) == 0:
			if data {
				return true
			}
		case bytes.HasPrefix(line, dataField) && (len(line) == len(dataField) || line[len(dataField)] == ':'):
			data = true
		}
		if w[i] == '\r' && i+1 < len(w) && w[i+1] == '\n' {
			i++
		}
		w = w[i+1:]
	}
}

var dataField = []byte("data")

// readLine returns the next line without its terminator. The slice is valid
// until the next call.
func (r *Reader) readLine() ([]byte, error) {
	for {
		if r.pendingCR && r.start < r.end {
			if r.buf[r.start] == '\n' {
				r.start++
			}
			r.pendingCR = false
		}
		if !r.begun && r.end-r.start >= 3 {
			r.begun = true
			if bytes.HasPrefix(r.buf[r.start:r.end], bom) {
				r.start += len(bom)
			}
		}
		window := r.buf[r.start:r.end]
		if r.begun || r.err != nil {
			if i := r.lineEnd(window); i >= 0 {
				line := window[:i]
				r.start += i + 1
				if window[i] == '\r' {
					r.pendingCR = true
				}
				return line, nil
			}
		}
		if r.err != nil {
			if r.end > r.start {
				// A last line with no terminator is discarded; unless it
				// is a comment, the event it belongs to is incomplete.
				if r.buf[r.start] != ':' {
					r.partial = true
				}
				r.start = r.end
			}
			return nil, r.err
		}
		if len(window) > r.max {
			return nil, ErrFrameTooLarge
		}
		r.fill()
	}
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// sawCR notes whether read, bytes just read from the source, hold a '\r'.
func (r *Reader) sawCR(read []byte) {
	if !r.cr {
		r.cr = bytes.IndexByte(read, '\r') >= 0
	}
}

// lineEnd is lineEnd(b) for what the Reader has read: the first '\n'
// while no '\r' has come, as in the streams of every service Parley
// speaks to.
func (r *Reader) lineEnd(b []byte) int {
	if !r.cr {
		return bytes.IndexByte(b, '\n')
	}
	return lineEnd(b)
}

// lineEnd returns the index of the first '\r' or '\n' in b, or -1.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		i = len(b)
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	if i == len(b) {
		return -1
	}
	return i
}

// fill reads more bytes from the source, compacting or growing the buffer.
func (r *Reader) fill() {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == 0 && r.pooled != nil && !r.partial {
		r.idleRead()
		return
	}
	if r.end == len(r.buf) {
		size := 2 * len(r.buf)
		if size > r.max+2 {
			size = r.max + 2
		}
		if size <= len(r.buf) {
			size = len(r.buf) + 1
		}
		nb := make([]byte, size)
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := r.src.Read(r.buf[r.end:])
		r.sawCR(r.buf[r.end : r.end+n])
		r.end += n
		if err != nil {
			r.err = err
			r.begun = true
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}

// Writer writes events to a stream. It formats each event into one Write
// call; flushing is the caller's business.
type Writer struct {
	w       io.Writer
	scratch []byte
	// array makes the Writer write a JSON array of the events' data
	// instead of an event stream; events counts what it wrote.
	array  bool
	events int
	// pooled holds scratch, for Release to give back.
	pooled *writerBuffer
}

// writerBuffer is a Writer's scratch buffer, shared by the Writers of
// streams one after another, as readerBuffers are.
type writerBuffer struct{ b []byte }

var writerPool = sync.Pool{New: func() any { return &writerBuffer{b: make([]byte, 0, 1024)} }}

// newWriter returns a Writer that takes its buffer when it first writes.
func newWriter(w io.Writer, array bool) *Writer {
	return &Writer{w: w, array: array}
}

// buffer returns the Writer's buffer, empty, taken from the pool when the
// Writer holds none (at its first event, and after Idle).
func (w *Writer) buffer() []byte {
	if w.pooled == nil {
		w.pooled = writerPool.Get().(*writerBuffer)
		w.scratch = w.pooled.b
	}
	return w.scratch[:0]
}

// Idle gives the Writer's buffer back for other Writers to use while its
// stream waits for more to write, as a stream does for as long as its
// model thinks; the next event takes one again. What was written is the
// caller's writer's: nothing of it is held here.
func (w *Writer) Idle() {
	b := w.pooled
	if b == nil {
		return
	}
	b.b = nil
	if cap(w.scratch) <= maxPooledData {
		b.b = w.scratch[:0]
	}
	w.scratch, w.pooled = nil, nil
	writerPool.Put(b)
}

// Release gives the Writer's buffer back for another Writer to use, once
// its stream is written; the Writer must not be used again.
func (w *Writer) Release() { w.Idle() }

// NewJSONArrayWriter returns a Writer that writes the data of each event
// as one element of a JSON array, as the content-generation service
// streams when a client does not ask for ?alt=sse. Event types and
// comments are not written; Close writes the closing bracket.
func NewJSONArrayWriter(w io.Writer) *Writer {
	return newWriter(w, true)
}

// Close ends a JSON array; on an event stream it does nothing.
func (w *Writer) Close() error {
	if !w.array {
		return nil
	}
	end := "]"
	if w.events == 0 {
		end = "[]"
	}
	_, err := io.WriteString(w.w, end)
	return err
}

func (w *Writer) arrayElement(data []byte) error {
	b := w.buffer()
	if w.events == 0 {
		b = append(b, '[')
	} else {
		b = append(b, ",\r\n"...)
	}
	w.events++
	b = append(b, data...)
	_, err := w.w.Write(b)
	w.keep(b)
	return err
}

// keep holds b as the buffer of the next event, unless it grew past
// maxKeptScratch: a stream that wrote one large event (a snapshot echoing
// an agent's tools, a long tool call's arguments) would hold a buffer that
// size for as long as it stays open, waiting on its upstream.
func (w *Writer) keep(b []byte) {
	if cap(b) > maxKeptScratch {
		b = nil
	}
	w.scratch = b
}

// maxKeptScratch bounds the buffer a Writer keeps between events.
const maxKeptScratch = 8 << 10

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer {
	return newWriter(w, false)
}

// Event writes one event with the given type (none when empty) and data. Line
// breaks inside data become separate data lines, so any data survives the
// trip; a line break in typ is an error.
func (w *Writer) Event(typ string, data []byte) error {
	// Two byte searches: strings.ContainsAny builds a set of the bytes at
	// every call, a seventh of what writing an event costs.
	if strings.IndexByte(typ, '\n') >= 0 || strings.IndexByte(typ, '\r') >= 0 {
		return fmt.Errorf("sse: event type %q contains a line break", typ)
	}
	if w.array {
		return w.arrayElement(data)
	}
	b := w.buffer()
	if typ != "" {
		b = append(b, "event: "...)
		b = append(b, typ...)
		b = append(b, '\n')
	}
	for {
		i := lineEnd(data)
		b = append(b, "data: "...)
		if i < 0 {
			b = append(b, data...)
			b = append(b, '\n')
			break
		}
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(b, '\n')
	_, err := w.w.Write(b)
	w.keep(b)
	return err
}

// Comment writes a comment line, which readers ignore; streams use it to
// keep idle connections open.
func (w *Writer) Comment(text string) error {
	if w.array {
		return nil
	}
	b := append(w.buffer(), ':')
	if text != "" {
		b = append(b, ' ')
		for _, c := range []byte(text) {
			if c == '\r' || c == '\n' {
				c = ' '
			}
			b = append(b, c)
		}
	}
	b = append(b, '\n', '\n')
	_, err := w.w.Write(b)
	w.keep(b)
	return err
}
