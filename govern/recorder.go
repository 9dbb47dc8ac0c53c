package govern

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/parleyhq/parley/store"
)

// Recorder writes usage records to the ledger in batches, off the request
// path: a request adds its line and goes on; every interval, or as soon as
// a batch is full, the lines gathered are written in one transaction. A
// failed write keeps its lines for the next try (the ledger skips a request
// id it holds, so a batch written twice counts once); only when the ledger
// has been away for MaxPending lines are new ones dropped, counted in a
// metric.
type Recorder struct {
	ledger   store.Ledger
	interval time.Duration
	log      *slog.Logger
	m        *metrics

	mu      sync.Mutex
	pending []store.UsageRecord
	// closed is set by Close: later lines are written one by one.
	closed bool
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	// writeMu makes one write at a time, the loop's or a Flush's.
	writeMu sync.Mutex
	// failing is true from a failed write until one succeeds (flushed).
	failing bool
}

// Batch sizes.
const (
	// BatchSize is how many lines one write takes at most.
	BatchSize = 500
	// MaxPending bounds the lines held while the ledger cannot be
	// written.
	MaxPending = 1_000_000
	// maxRoom bounds the slice kept for lines between flushes.
	maxRoom = 4 * BatchSize
)

// NewRecorder starts writing to ledger every interval (default 1s).
func NewRecorder(ledger store.Ledger, interval time.Duration, log *slog.Logger, m *metrics) *Recorder {
	if interval <= 0 {
		interval = time.Second
	}
	r := &Recorder{ledger: ledger, interval: interval, log: log, m: m,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop()
	return r
}

// Add gathers one line. After Close (a request that outlived the
// shutdown's grace) the line is written at once.
func (r *Recorder) Add(rec store.UsageRecord) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.ledger.RecordUsage(ctx, []store.UsageRecord{rec}); err != nil {
			r.m.ledgerDropped.Inc()
			r.log.Error("a usage record made after the shutdown could not be written", "request_id", rec.RequestID, "error", err)
		}
		return
	}
	if len(r.pending) >= MaxPending {
		// The ledger has been away for a long while: keep what is
		// gathered (a write may be taking its first lines) and count the
		// loss.
		r.mu.Unlock()
		r.m.ledgerDropped.Inc()
		return
	}
	r.pending = append(r.pending, rec)
	full := len(r.pending) >= BatchSize
	r.m.ledgerPending.Set(float64(len(r.pending)))
	r.mu.Unlock()
	if full {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

func (r *Recorder) loop() {
	defer close(r.done)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-r.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r.flushed(r.Flush(ctx))
		cancel()
	}
}

// flushed logs when the ledger fails and when it is written again, once
// each. Only the loop calls it, and Close once the loop has ended.
func (r *Recorder) flushed(err error) {
	switch {
	case err != nil && !r.failing:
		r.log.Warn("the usage ledger could not be written; its records are kept and written again", "error", err)
		r.failing = true
	case err == nil && r.failing:
		r.log.Info("the usage ledger is written again")
		r.failing = false
	}
}

// Flush writes every line gathered so far, batch by batch. Lines that
// come while it writes wait for the next flush: chasing them, a flush on a
// busy gateway never ended, and wrote a few lines a transaction, each
// with its own commit and fsync, where the interval and BatchSize were to
// gather hundreds.
func (r *Recorder) Flush(ctx context.Context) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	left := len(r.pending)
	r.mu.Unlock()
	for left > 0 {
		r.mu.Lock()
		n := min(left, len(r.pending), BatchSize)
		if n == 0 {
			r.mu.Unlock()
			return nil
		}
		// The batch stays pending (and in pendingSpend) until written.
		batch := r.pending[:n:n]
		r.mu.Unlock()
		err := r.ledger.RecordUsage(ctx, batch)
		r.mu.Lock()
		if err == nil {
			left -= n
			if rest := len(r.pending) - n; rest > n {
				// A backlog: copying what is left to the front after
				// each batch would copy it again and again.
				r.pending = r.pending[n:]
			} else {
				// The lines gathered since, no more than were just
				// written, move to the front, where the next ones
				// follow them: slicing the written ones off, the
				// slice walked off the end of its array and grew, by
				// doubling and copying, on every interval of a busy
				// gateway. One a backlog grew is let go of.
				copy(r.pending, r.pending[n:])
				clear(r.pending[rest:])
				r.pending = r.pending[:rest]
				if rest == 0 && cap(r.pending) > maxRoom {
					r.pending = nil
				}
			}
			r.m.ledgerWritten.Add(float64(n))
		}
		r.m.ledgerPending.Set(float64(len(r.pending)))
		r.mu.Unlock()
		if err != nil {
			r.m.ledgerErrors.Inc()
			return err
		}
	}
	return nil
}

// pendingSpend sums the cost and tokens of a key's lines since a time that
// are not yet in the ledger.
func (r *Recorder) pendingSpend(key string, since time.Time) (cost, tokens int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.pending {
		if rec.Key == key && !rec.Time.Before(since) {
			cost += rec.CostNanos
			tokens += rec.InputTokens + rec.OutputTokens
		}
	}
	return cost, tokens
}

// Close stops the loop and writes what is left. A ledger that fails (a
// database gone for a moment as the gateway stops) is tried again a few
// times, less and less often, within ctx; the last error is returned.
func (r *Recorder) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	wait := 10 * time.Millisecond
	for try := 1; ; try++ {
		err := r.Flush(ctx)
		r.flushed(err)
		if err == nil || try == closeTries || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}

// closeTries bounds the writes Close tries: 150 ms of waits between them,
// for a blip; a ledger that is away for longer is reported.
const closeTries = 5
