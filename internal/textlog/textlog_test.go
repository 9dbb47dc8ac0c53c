package textlog_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/textlog"
	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

// textLine is what slog.TextHandler writes for the record.
func textLine(t testing.TB, r slog.Record, level slog.Leveler) string {
	t.Helper()
	var b bytes.Buffer
	h := slog.NewTextHandler(&b, &slog.HandlerOptions{Level: level})
	if h.Enabled(context.Background(), r.Level) {
		if err := h.Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// handled is what the handler writes for the record, through Handle and
// through Line; the two must agree.
func handled(t testing.TB, r slog.Record, level slog.Leveler) string {
	t.Helper()
	var b, l bytes.Buffer
	h := textlog.New(&b, level)
	if h.Enabled(context.Background(), r.Level) {
		if err := h.Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	var attrs []slog.Attr
	r.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a); return true })
	lh := textlog.New(&l, level)
	if lh.Enabled(context.Background(), r.Level) {
		if err := lh.Line(r.Time, r.Level, r.Message, attrs); err != nil {
			t.Fatal(err)
		}
	}
	if b.String() != l.String() {
		t.Errorf("Handle wrote %q, Line %q", b.String(), l.String())
	}
	return b.String()
}

func record(at time.Time, level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(at, level, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

// TestLinesAreTheTextHandlers: every line is slog.TextHandler's, for the
// plain values written the quick way and for what is left to it.
func TestLinesAreTheTextHandlers(t *testing.T) {
	at := time.Date(2026, 11, 26, 5, 44, 21, 123456789, time.UTC)
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	var every strings.Builder
	for c := range 256 {
		every.WriteByte(byte(c))
	}
	strs := []string{"", "plain", "two words", "a=b", `q"q`, `back\slash`, "tab\there", "nl\n", "\x7f", "\x00", "é", "\u00a0", "\u2028", "\u200b", "\ufffd", "\xff", "日本", every.String(), "req_019abc"}
	var cases []slog.Record
	for _, s := range strs {
		cases = append(cases, record(at, slog.LevelInfo, s, slog.String(s+"k", s), slog.String("v", s)))
	}
	cases = append(cases,
		record(at, slog.LevelInfo, "request",
			slog.String("id", "req_019abc0123456789abcdef0123456789"), slog.String("dialect", "messages"), slog.String("path", "/v1/messages"),
			slog.Int("status", 200), slog.String("model", "claude"), slog.String("upstream", "anthropic"), slog.Int("attempts", 1),
			slog.Duration("duration", 1234*time.Microsecond), slog.Int64("input_tokens", 12), slog.Int64("output_tokens", 40),
			slog.Bool("forwarded", true), slog.String("error", "CODE_UNAVAILABLE")),
		record(time.Time{}, slog.LevelWarn, "no time"),
		record(at.In(zone), slog.LevelError, "zone", slog.Time("at", at.In(zone)), slog.Time("utc", at), slog.Time("zero", time.Time{})),
		record(at.Truncate(time.Second), slog.LevelDebug+1, "custom level"),
		record(at, slog.LevelInfo+2, "custom level"),
		record(at, slog.LevelError+4, "custom level"),
		record(at, slog.LevelInfo, "numbers",
			slog.Int64("min", math.MinInt64), slog.Uint64("max", math.MaxUint64), slog.Float64("f", 0.1), slog.Float64("big", 1e300),
			slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(-1)), slog.Float64("neg0", math.Copysign(0, -1)),
			slog.Duration("zero", 0), slog.Duration("neg", -90*time.Minute), slog.Duration("ns", 7), slog.Duration("min", math.MinInt64),
			slog.Bool("no", false)),
		// Left to slog.TextHandler.
		record(at, slog.LevelWarn, "left", slog.Any("error", errors.New("upstream said no")), slog.Int("n", 1)),
		record(at, slog.LevelInfo, "left", slog.Group("g", slog.String("a", "b c"))),
		record(at, slog.LevelInfo, "left", slog.Any("bytes", []byte("x y")), slog.Any("nil", nil)),
		record(at, slog.LevelInfo, "left", slog.String("", "no key")),
		record(at, slog.LevelInfo, "left", slog.Attr{}),
		record(at, slog.LevelInfo, "left", slog.Any("lv", valuer{})),
	)
	many := record(at, slog.LevelInfo, "many")
	for i := range 40 {
		many.AddAttrs(slog.Int(strings.Repeat("k", i+1), i))
	}
	cases = append(cases, many)
	for _, level := range []slog.Leveler{nil, slog.LevelDebug, slog.LevelError} {
		for _, r := range cases {
			want := textLine(t, r, level)
			if level == nil {
				want = textLine(t, r, slog.LevelInfo)
			}
			if got := handled(t, r, level); got != want {
				t.Errorf("level %v:\n got %q\nwant %q", level, got, want)
			}
		}
	}
}

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("resolved value") }

// TestWithIsTheTextHandlers: attributes and groups added to the handler
// give slog.TextHandler's lines.
func TestWithIsTheTextHandlers(t *testing.T) {
	var got, want bytes.Buffer
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := record(at, slog.LevelInfo, "m", slog.String("a", "b"))
	for _, h := range []struct {
		h   slog.Handler
		out *bytes.Buffer
	}{{textlog.New(&got, nil), &got}, {slog.NewTextHandler(&want, nil), &want}} {
		if err := h.h.WithAttrs([]slog.Attr{slog.String("component", "tasks")}).WithGroup("g").Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != want.String() {
		t.Errorf("got %q, want %q", got.String(), want.String())
	}
}

// TestLinesAreWhole: lines written at once from many goroutines, quick
// ones and ones left to slog.TextHandler, each arrive in one piece.
func TestLinesAreWhole(t *testing.T) {
	var out lines
	h := textlog.New(&out, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if g%2 == 0 {
					_ = h.Line(time.Now(), slog.LevelInfo, "request", []slog.Attr{slog.Int("i", i)})
				} else {
					_ = h.Handle(context.Background(), record(time.Now(), slog.LevelWarn, "left", slog.Any("error", errors.New("e"))))
				}
			}
		})
	}
	wg.Wait()
	if len(out.got) != 1600 {
		t.Fatalf("%d writes, want 1600", len(out.got))
	}
	for _, l := range out.got {
		if strings.Count(l, "\n") != 1 || !strings.HasSuffix(l, "\n") || !strings.HasPrefix(l, "time=") {
			t.Fatalf("a write held %q", l)
		}
	}
}

// lines keeps each write; concurrent writes are a race the race detector
// reports.
type lines struct{ got []string }

func (l *lines) Write(p []byte) (int, error) {
	l.got = append(l.got, string(p))
	return len(p), nil
}

func FuzzLine(f *testing.F) {
	f.Add("request", "id", "req_1", int64(200), 1.5, int64(1234567))
	f.Add("", "", "", int64(-1), math.Inf(1), int64(math.MinInt64))
	f.Add("a b", "k=v", "\"\xff\u00a0", int64(0), math.Copysign(0, -1), int64(0))
	f.Fuzz(func(t *testing.T, msg, key, s string, n int64, x float64, d int64) {
		at := time.Unix(0, n).UTC()
		r := record(at, slog.Level(n%16), msg, slog.String(key, s), slog.Int64(s, n), slog.Float64(key+"f", x), slog.Duration("d", time.Duration(d)), slog.Time("t", at))
		if got, want := handled(t, r, slog.LevelDebug-8), textLine(t, r, slog.LevelDebug-8); got != want {
			t.Errorf("\n got %q\nwant %q", got, want)
		}
	})
}

// BenchmarkAccessLine: a request's access line, through the handler's
// Line and through slog.TextHandler.
func BenchmarkAccessLine(b *testing.B) {
	attrs := []slog.Attr{
		slog.String("id", "req_019abc0123456789abcdef0123456789"), slog.String("dialect", "messages"), slog.String("path", "/v1/messages"),
		slog.String("key", "default"), slog.Int("status", 200), slog.String("model", "bench-chat"), slog.String("upstream", "chat"),
		slog.Int("attempts", 1), slog.Duration("duration", 1234*time.Microsecond), slog.Int64("input_tokens", 12), slog.Int64("output_tokens", 40),
	}
	b.Run("line", func(b *testing.B) {
		h := textlog.New(discard{}, nil)
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Line(time.Now(), slog.LevelInfo, "request", attrs)
		}
	})
	b.Run("slog", func(b *testing.B) {
		h := slog.NewTextHandler(discard{}, nil)
		b.ReportAllocs()
		for b.Loop() {
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
			r.AddAttrs(attrs...)
			_ = h.Handle(context.Background(), r)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
