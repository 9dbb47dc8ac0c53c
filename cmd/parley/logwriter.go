package main

import (
	"io"
	"sync"
	"time"
)

// logWriter writes the gateway's log behind the requests that make it.
// Every request ends with an access line, and writing it at once put a
// write system call on each request's path before its reply went out.
// A line is now appended to a buffer, and a goroutine of the writer's
// own writes the buffer out. It lets the lines gather for up to
// logGather after the first, or until logFlushAt bytes wait: waking it
// for every line (every request, on a quiet gateway) cost more CPU and
// time to first byte than the line itself. Lines keep their order.
// Should the output fall behind by maxLogBuffered bytes, a line waits for
// room rather than the buffer growing without end. Close writes what is
// left; whatever is written after it goes straight out.
type logWriter struct {
	out io.Writer

	mu     sync.Mutex
	room   *sync.Cond // signalled when the buffer has been taken
	buf    []byte
	closed bool
	kick   chan struct{} // a line is waiting; holds at most one
	full   chan struct{} // logFlushAt bytes wait; closed by Close
	done   chan struct{} // closed once the goroutine has written all
	gather time.Duration // logGather, but in tests
}

const (
	// maxLogBuffered bounds the lines waiting to be written.
	maxLogBuffered = 1 << 20
	// logGather is how long the first line waiting waits for others.
	logGather = 10 * time.Millisecond
	// logFlushAt is how many bytes waiting are written without waiting
	// longer.
	logFlushAt = 32 << 10
)

func newLogWriter(out io.Writer) *logWriter { return startLogWriter(out, logGather) }

func startLogWriter(out io.Writer, gather time.Duration) *logWriter {
	w := &logWriter{out: out, kick: make(chan struct{}, 1), full: make(chan struct{}, 1), done: make(chan struct{}), gather: gather}
	w.room = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// Write takes a whole line, as a slog handler writes one per record.
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	for !w.closed && len(w.buf) > 0 && len(w.buf)+len(p) > maxLogBuffered {
		w.room.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		<-w.done // after the lines before it
		return w.out.Write(p)
	}
	w.buf = append(w.buf, p...)
	select {
	case w.kick <- struct{}{}:
	default: // the goroutine has been told already
	}
	if len(w.buf) >= logFlushAt {
		select {
		case w.full <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
	return len(p), nil
}

func (w *logWriter) run() {
	defer close(w.done)
	var spare []byte
	gather := time.NewTimer(w.gather)
	gather.Stop()
	for range w.kick {
		gather.Reset(w.gather)
		select {
		case <-gather.C:
		case <-w.full:
			gather.Stop()
		}
		w.mu.Lock()
		b := w.buf
		w.buf = spare[:0]
		w.room.Broadcast()
		w.mu.Unlock()
		if len(b) > 0 {
			// An error writing the log has nowhere to be reported; the
			// next lines are tried all the same.
			_, _ = w.out.Write(b)
		}
		spare = b
		if cap(spare) > maxLogBuffered {
			spare = nil // a burst's buffer is not kept
		}
	}
}

// Close writes the lines still waiting and stops the goroutine.
func (w *logWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return nil
	}
	w.closed = true
	close(w.kick) // the goroutine takes what is left, then ends
	close(w.full) // at once
	w.room.Broadcast()
	w.mu.Unlock()
	<-w.done
	return nil
}
