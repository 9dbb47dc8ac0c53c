package responses

import (
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// How the stream encoder writes its events: the quick writers
// (event_write.go) for the events they know, jsonx.Marshal for the rest,
// each numbered in turn.

// quickEvents is false in tests that hold the events written without
// reflection to the marshalled ones.
var quickEvents = true

func (s *streamEncoder) emit(w *sse.Writer, e *event) error {
	s.seq++
	s.written = s.seq - 1
	e.SequenceNumber = &s.written
	if quickEvents {
		b, ok := appendEvent(s.deltaBuf[:0], e)
		s.keep(b)
		if ok {
			return w.Event(e.Type, b)
		}
	}
	b, err := jsonx.Marshal(e)
	if err != nil {
		return err
	}
	return w.Event(e.Type, b)
}

// next returns the encoder's event, emptied and of type typ, for the
// caller to fill and emit. The events of a stream's common course (items
// and parts added and done, deltas that cannot go the quick way) are
// made there, pointing to the encoder's own values (its indexes, items,
// evIndex and the others), rather than each made where it is emitted:
// an event given to emit goes to the heap, with what it points to, five
// allocations an event; and an event made on the stack takes hundreds of
// bytes of the frames of a stream's loop (TestStreamsRunOnSmallStacks).
func (s *streamEncoder) next(typ string) *event {
	s.ev = event{Type: typ}
	return &s.ev
}

// itemEvent returns the encoder's event of type typ for item i.
func (s *streamEncoder) itemEvent(typ string, i int, it *Item) *event {
	e := s.next(typ)
	s.evIndex = int64(i)
	e.OutputIndex, e.Item = &s.evIndex, it
	return e
}

// partEvent returns the encoder's event of type typ for the open part of
// item id, the output item s.out, its content s.content.
func (s *streamEncoder) partEvent(typ, id string) *event {
	e := s.next(typ)
	e.ItemID, e.OutputIndex, e.ContentIndex = id, &s.out, &s.content
	return e
}

// keep keeps b's buffer for the next event written without reflection,
// unless it is large (an item with a long text, say): a stream waiting on
// its upstream does not hold it.
func (s *streamEncoder) keep(b []byte) {
	if cap(b) > 8<<10 {
		b = nil
	}
	s.deltaBuf = b[:0]
}

// emitSnapshot writes an event of each type carrying the snapshot r, the
// bytes emit writes (TestSnapshotEventsAreTheMarshalledEvents). r is
// written once for them all: a snapshot echoes the request's
// instructions and tools, often the largest part of the stream.
func (s *streamEncoder) emitSnapshot(w *sse.Writer, r *Response, types ...string) error {
	buf := snapshotBuffers.Get().(*[]byte)
	// The buffer holds `,"response":RESPONSE}` and, after it, each event
	// in turn: the response is written once, and copied once per event.
	const member = `,"response":`
	b, ok := append((*buf)[:0], member...), false
	if quickEvents {
		b, ok = appendResponse(b, r)
	}
	if !ok {
		raw, err := jsonx.Marshal(r)
		if err != nil {
			return err
		}
		b = append(b[:len(member)], raw...)
	}
	b = append(b, '}')
	tail := len(b)
	var err error
	for _, typ := range types {
		e := append(append(b, `{"type":"`...), typ...)
		e = strconv.AppendInt(append(e, `","sequence_number":`...), s.seq, 10)
		e = append(e, e[:tail]...)
		s.seq++
		if err = w.Event(typ, e[tail:]); err != nil {
			break
		}
		b = e[:tail]
	}
	if cap(b) <= maxPooledSnapshot {
		*buf = b[:0]
		snapshotBuffers.Put(buf)
	}
	return err
}

// snapshotBuffers are emitSnapshot's: a snapshot echoes the request's
// tools, tens of kilobytes for an agent, and is written three times a
// stream. A buffer grown past maxPooledSnapshot is let go.
var snapshotBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledSnapshot = 256 << 10

// textDelta writes the output_text.delta event of the open part, the
// event most streams are made of, without reflection: the same bytes emit
// writes (TestTextDeltaIsTheMarshalledEvent). ok is false when a string
// cannot be written (invalid UTF-8), for emit to report.
func (s *streamEncoder) textDelta(id, text string) (b []byte, ok bool) {
	b = append(s.deltaBuf[:0], `{"type":"response.output_text.delta","sequence_number":`...)
	b = strconv.AppendInt(b, s.seq, 10)
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, s.out, 10)
	var err error
	if id != "" {
		b = append(b, `,"item_id":`...)
		if b, err = jsontext.AppendQuote(b, id); err != nil {
			return nil, false
		}
	}
	b = append(b, `,"content_index":`...)
	b = strconv.AppendInt(b, s.content, 10)
	b = append(b, `,"delta":`...)
	if b, ok = jsonx.AppendQuote(b, text); !ok {
		return nil, false
	}
	b = append(b, `,"logprobs":[]}`...)
	s.deltaBuf = b
	return b, true
}
