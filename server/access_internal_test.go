package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/internal/racedetect"
	"github.com/parleyhq/parley/internal/textlog"
)

// TestFinishingARequestAllocatesNothing: what every request does at its
// end (its live figures, its metrics and its access line, written by the
// gateway's own log handler) makes no garbage: the line's attributes stay
// on the stack, the line is made in a pooled buffer, and the request's
// metric series are found, not made.
func TestFinishingARequestAllocatesNothing(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("the race detector's pools drop what is put in them")
	}
	cfg := config.Default(func(string) (string, bool) { return "", false })
	d, err := dispatch.FromConfig(cfg, dialects.All(), dispatch.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Config: cfg, Dispatcher: d, Dialects: dialects.All(), Logger: slog.New(textlog.New(io.Discard, nil))})
	defer func() { _ = s.Close(context.Background()) }()
	m := newMeter()
	m.call.Model, m.call.Upstream, m.call.Attempts = "echo", "echo", 1
	path := slog.String("path", "/v1/messages")
	finish := func() { m.finish(s, "messages", 200, nil, path) }
	finish() // the route's metric series, made once
	if n := testing.AllocsPerRun(100, finish); n != 0 {
		t.Errorf("finishing a request allocates %v times, want none", n)
	}
}
