// Package textlog is the gateway's log handler: it writes what
// slog.TextHandler writes, byte for byte, and writes the lines made of
// plain values (strings, numbers, booleans, durations and times: the
// access line of every request among them) at a fraction of the cost.
// Whatever else a record holds (errors, groups, values of any type) is
// left to a slog.TextHandler writing to the same output.
package textlog

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Handler is a slog.Handler writing slog.TextHandler's lines.
type Handler struct {
	out   *lockedWriter
	level slog.Leveler
	text  *slog.TextHandler
}

// New returns a handler writing to w the records at or above level
// (slog.LevelInfo when nil). Every line goes out in one Write.
func New(w io.Writer, level slog.Leveler) *Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	out := &lockedWriter{w: w}
	return &Handler{out: out, level: level, text: slog.NewTextHandler(out, &slog.HandlerOptions{Level: level})}
}

// lockedWriter makes the writes of the handler and of its
// slog.TextHandler one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// WithAttrs implements slog.Handler; what it returns is slog.TextHandler's.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler { return h.text.WithAttrs(attrs) }

// WithGroup implements slog.Handler; what it returns is slog.TextHandler's.
func (h *Handler) WithGroup(name string) slog.Handler { return h.text.WithGroup(name) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	var buf [16]slog.Attr
	attrs := buf[:0]
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	if b, ok := h.line(r.Time, r.Level, r.Message, attrs); ok {
		return h.write(b)
	}
	return h.text.Handle(ctx, r)
}

// Line writes the record a time, level, message and attributes make,
// without making a slog.Record of them: for a caller that writes a line
// on every request, when the handler it was given has this method.
func (h *Handler) Line(t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	if b, ok := h.line(t, level, msg, attrs); ok {
		return h.write(b)
	}
	r := slog.NewRecord(t, level, msg, 0)
	r.AddAttrs(attrs...)
	return h.text.Handle(context.Background(), r)
}

// write writes a line made by line and gives its buffer back.
func (h *Handler) write(b *[]byte) error {
	_, err := h.out.Write(*b)
	if cap(*b) <= maxPooled {
		buffers.Put(b)
	}
	return err
}

// buffers hold the lines being made.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooled is the largest buffer given back to the pool.
const maxPooled = 16 << 10

// line makes a line as slog.TextHandler would, with no options, or says
// it leaves it to slog.TextHandler: ok is false when an attribute holds
// something other than a plain value, or has no key.
func (h *Handler) line(t time.Time, level slog.Level, msg string, attrs []slog.Attr) (_ *[]byte, ok bool) {
	for _, a := range attrs {
		if a.Key == "" {
			return nil, false
		}
		switch a.Value.Kind() {
		case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindFloat64, slog.KindBool, slog.KindDuration, slog.KindTime:
		default:
			return nil, false
		}
	}
	p := buffers.Get().(*[]byte)
	b := (*p)[:0]
	if !t.IsZero() {
		b = appendTime(append(b, "time="...), t)
		b = append(b, ' ')
	}
	b = appendString(append(b, "level="...), level.String())
	b = appendString(append(b, " msg="...), msg)
	for _, a := range attrs {
		b = append(appendString(append(b, ' '), a.Key), '=')
		v := a.Value
		switch v.Kind() {
		case slog.KindString:
			b = appendString(b, v.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindFloat64:
			b = strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
		case slog.KindBool:
			b = strconv.AppendBool(b, v.Bool())
		case slog.KindDuration:
			b = append(b, v.Duration().String()...)
		case slog.KindTime:
			b = appendTime(b, v.Time())
		}
	}
	b = append(b, '\n')
	*p = b
	return p, true
}

// appendTime appends t in RFC 3339 with milliseconds, as slog writes a
// time: the fraction always three digits.
func appendTime(b []byte, t time.Time) []byte {
	const prefix = len("2006-01-02T15:04:05.000")
	n := len(b)
	// RFC3339Nano drops trailing zeros: a tenth of a millisecond added
	// keeps four digits after the point, and the fourth is cut.
	b = t.Truncate(time.Millisecond).Add(time.Millisecond/10).AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefix], b[n+prefix+1:]...)
}

// appendString appends s bare, or quoted where a reader could not tell
// where it ends or what it holds.
func appendString(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// needsQuoting says whether slog.TextHandler quotes s: when it is empty,
// or holds a space, an equals sign, a double quote, a control character,
// a rune that is not printable or a byte that is not UTF-8.
func needsQuoting(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || !unicode.IsPrint(r) { // every space but ' ' is unprintable
			return true
		}
		i += size
	}
	return false
}
