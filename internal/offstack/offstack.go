// Package offstack runs deep, one-off work on another goroutine's stack.
//
// A goroutine's stack only doubles, and the runtime halves it again only
// while less than a quarter of it is in use. A streaming handler waits
// about 5 KB deep for as long as its stream is open, so work that once
// takes it past 8 KB (net/http's server starting a reply and writing its
// head, from under a stream's frames) leaves it a 16 KB stack for the
// stream's whole life. Run does such work on another goroutine while the
// caller waits.
//
// That goroutine is a coroutine (iter.Pull), one of a few kept for it:
// the caller switches to it and it switches back, on the same thread,
// without the scheduler, so no other thread is woken for the work. Its
// stack stays grown between calls, where a fresh goroutine would grow its
// stack from the size goroutines start with, copying it, on every call
// (BenchmarkRun: work 4 KB deep takes 134 ns in place, 286 ns on a kept
// coroutine, 654 ns handed to a kept goroutine through a channel, 4.2 µs
// on a fresh goroutine). When every kept one is busy (a write to a slow
// client blocks), another is made for the call. Run is for work done
// once a stream, not once an event, and not for work that trimming a
// frame or two keeps shallow.
package offstack

import (
	"iter"
	"runtime"
	"sync/atomic"
)

// worker is a coroutine that runs one call each time it is switched to.
type worker struct {
	f func()
	// p is what f panicked with, nil if it returned.
	p    any
	next func() (struct{}, bool)
	stop func()
}

func newWorker() *worker {
	w := &worker{}
	w.next, w.stop = iter.Pull(w.loop)
	return w
}

// loop runs the coroutine: a call, then back to the caller, until the
// worker is let go.
func (w *worker) loop(yield func(struct{}) bool) {
	for {
		w.call()
		if !yield(struct{}{}) {
			return
		}
	}
}

func (w *worker) call() {
	defer func() { w.p = recover() }()
	w.f()
}

var (
	// idle holds the kept workers that wait for a call; at most maxKept.
	idle    = make(chan *worker, maxKept)
	maxKept = 2 * runtime.GOMAXPROCS(0)
	// runs counts the calls of Run (Runs).
	runs atomic.Uint64
)

// Runs is how many times Run has been called: each a switch to another
// goroutine and back, which tests count on the paths that should take
// none.
func Runs() uint64 { return runs.Load() }

// Run calls f on another goroutine and returns when f has returned. A
// panic in f is raised again in the caller, as if f had run there, and so
// is runtime.Goexit.
func Run(f func()) {
	runs.Add(1)
	var w *worker
	select {
	case w = <-idle:
	default:
		w = newWorker()
	}
	w.f = f
	// A Goexit in f ends the worker and then the caller, here: the
	// worker is not kept.
	w.next()
	p := w.p
	w.f, w.p = nil, nil
	select {
	case idle <- w:
	default:
		w.stop()
	}
	if p != nil {
		panic(p)
	}
}
