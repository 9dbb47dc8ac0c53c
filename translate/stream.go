package translate

import (
	"errors"
	"fmt"
	"io"
	"iter"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/sse"
)

// StreamLimits bound what Parley accepts from an upstream event stream.
type StreamLimits struct {
	// MaxFrameBytes bounds one SSE event.
	MaxFrameBytes int
	// MaxEvents bounds the number of SSE events in one stream.
	MaxEvents int
	// MaxTotalBytes bounds the whole stream body.
	MaxTotalBytes int64
}

// DefaultStreamLimits are generous enough for long reasoning streams and
// inline images, and small enough that a runaway upstream cannot exhaust
// memory.
var DefaultStreamLimits = StreamLimits{
	MaxFrameBytes: sse.DefaultMaxFrame,
	MaxEvents:     1 << 20,
	MaxTotalBytes: 1 << 30,
}

// ErrStreamTooLarge is returned when a stream passes MaxEvents or
// MaxTotalBytes.
var ErrStreamTooLarge = errors.New("event stream exceeds the configured limits")

// DecodeStream reads an upstream's event stream and yields canonical events.
// The iteration ends after the first error, which is an *UpstreamError for a
// malformed or truncated stream, or the body's own read error (the request
// context's error when the client went away).
func DecodeStream(d parleyv1.Dialect, body io.Reader, dec StreamDecoder, lim StreamLimits) iter.Seq2[*parleyv1.StreamEvent, error] {
	return DecodeStreamFrames(d, body, dec, lim, nil, nil)
}

// Pace tells the consumer of a stream whether the next event is already
// at hand: More is true while the events of the upstream's latest burst
// are being yielded, and false for the last one of it, after which the
// next event has to be waited for. A consumer that writes to a client may
// hold its flush while More is true, so that a burst goes out as one
// write instead of one per event.
type Pace struct{ More bool }

// DecodeStreamFrames is DecodeStream that also hands each upstream event,
// as it came, to frame before yielding the canonical events it decodes
// to, so that a stream can be relayed as the upstream sent it and decoded
// only to be observed. The data frame gets is valid until the stream is
// read on: frame copies what it keeps. pace, when not nil, is kept up to
// date before each yield: events already buffered whole are read and
// decoded ahead (never waiting for the upstream), so that the last event
// of a burst is known as such. Nothing is read ahead while frames are
// relayed, since a relayed frame must follow the events it decoded to;
// the pace then still says whether the next frame is already buffered
// whole, so that a relayed burst is flushed once too.
func DecodeStreamFrames(d parleyv1.Dialect, body io.Reader, dec StreamDecoder, lim StreamLimits, frame func(sse.Event), pace *Pace) iter.Seq2[*parleyv1.StreamEvent, error] {
	return DecodeFramed(d, body, nil, dec, lim, frame, pace)
}

// Frames is a stream reply read one event at a time, whatever its framing
// (server-sent events, AWS event-stream messages).
type Frames interface {
	// Next returns the next event; io.EOF at the stream's clean end. The
	// event's data is valid until the next call.
	Next() (sse.Event, error)
	// Ready reports whether the next event is already buffered whole, so
	// that Next would not wait.
	Ready() bool
}

// OpenFrames opens a stream body of a framing other than server-sent
// events, bounding each event to maxFrame bytes.
type OpenFrames func(body io.Reader, maxFrame int) Frames

// DecodeFramed is DecodeStreamFrames over a body framed by open; nil
// opens server-sent events. The stream limits apply whatever the framing.
func DecodeFramed(d parleyv1.Dialect, body io.Reader, open OpenFrames, dec StreamDecoder, lim StreamLimits, frame func(sse.Event), pace *Pace) iter.Seq2[*parleyv1.StreamEvent, error] {
	if lim.MaxFrameBytes <= 0 {
		lim.MaxFrameBytes = DefaultStreamLimits.MaxFrameBytes
	}
	if lim.MaxEvents <= 0 {
		lim.MaxEvents = DefaultStreamLimits.MaxEvents
	}
	if lim.MaxTotalBytes <= 0 {
		lim.MaxTotalBytes = DefaultStreamLimits.MaxTotalBytes
	}
	ahead := pace != nil && frame == nil
	return func(yield func(*parleyv1.StreamEvent, error) bool) {
		var r Frames
		if open != nil {
			r = open(&limitedReader{r: body, left: lim.MaxTotalBytes}, lim.MaxFrameBytes)
		} else {
			sr := sse.NewReader(&limitedReader{r: body, left: lim.MaxTotalBytes}, lim.MaxFrameBytes)
			// Everything yielded is the decoder's own (and frames copy
			// what they keep), so the buffers are free once it ends.
			defer sr.Release()
			r = sr
		}
		var (
			buf   []*parleyv1.StreamEvent
			n     int
			ended bool
			end   error // why the stream ended, when not at its normal end
		)
		// read decodes the next upstream event onto buf.
		read := func() {
			ev, err := r.Next()
			switch {
			case errors.Is(err, io.EOF):
				buf, err = dec.End(buf)
				ended, end = true, err
				return
			case err != nil:
				ended, end = true, err
				return
			}
			if n++; n > lim.MaxEvents {
				ended, end = true, ErrStreamTooLarge
				return
			}
			if frame != nil {
				frame(ev)
			}
			buf, err = dec.Decode(buf, ev)
			if err != nil {
				ended, end = true, err
			}
		}
		for !ended {
			read()
			for ahead && !ended && r.Ready() {
				read()
			}
			for i, e := range buf {
				if pace != nil {
					pace.More = i < len(buf)-1 || !ended && r.Ready()
				}
				if !yield(e, nil) {
					return
				}
			}
			// The burst's events are the client's now: the buffer keeps
			// none of them (a start's response, the first part) while
			// the stream waits for the next.
			clear(buf)
			buf = buf[:0]
		}
		if end != nil {
			yield(nil, streamError(d, end))
		}
	}
}

// streamError classifies a failure while reading an upstream stream.
func streamError(d parleyv1.Dialect, err error) error {
	var (
		up  *UpstreamError
		in  *InputError
		uns *UnsupportedError
	)
	switch {
	case errors.As(err, &up), errors.As(err, &in), errors.As(err, &uns):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return EndedEarly(d, fmt.Sprintf("the %s upstream's stream ended in the middle of an event", DialectName(d)), err)
	case errors.Is(err, sse.ErrFrameTooLarge), errors.Is(err, ErrStreamTooLarge):
		return UpstreamProtocol(d, err)
	}
	return err
}

// limitedReader fails with ErrStreamTooLarge once more than left bytes have
// been read.
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// At the limit: the stream may still end here.
		var one [1]byte
		if n, err := l.r.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, ErrStreamTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
