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
// That goroutine is one of a few kept for it, whose stacks stay grown
// between calls: a fresh goroutine would grow its stack from the size
// goroutines start with, copying it, on every call (BenchmarkRun: 0.7 µs
// a call with a kept goroutine, 2.3 µs with a fresh one). When all are
// busy (a write to a slow client blocks), a fresh one does the work. Run
// is for work done once a stream, not once an event, and not for work
// that trimming a frame or two keeps shallow.
package offstack

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// call is one Run: what to do, and where its end (or its panic) is told.
type call struct {
	f    func()
	done chan any
}

func (c *call) run() {
	defer func() { c.done <- recover() }()
	c.f()
}

var (
	// queue hands a call to a kept goroutine that waits for one.
	queue = make(chan *call)
	// kept counts the kept goroutines; at most maxKept.
	kept    atomic.Int32
	maxKept = int32(2 * runtime.GOMAXPROCS(0))
	calls   = sync.Pool{New: func() any { return &call{done: make(chan any, 1)} }}
	// runs counts the calls of Run (Runs).
	runs atomic.Uint64
)

// Runs is how many times Run has been called: each a hop to another
// goroutine and back, which tests count on the paths that should take
// none.
func Runs() uint64 { return runs.Load() }

// keep runs c, then every call handed to it.
func keep(c *call) {
	defer kept.Add(-1) // f left by runtime.Goexit: this goroutine is gone
	for {
		c.run()
		c = <-queue
	}
}

// Run calls f on another goroutine and returns when f has returned. A
// panic in f is raised again in the caller, as if f had run there.
func Run(f func()) {
	runs.Add(1)
	c := calls.Get().(*call)
	c.f = f
	select {
	case queue <- c:
	default:
		if kept.Add(1) <= maxKept {
			go keep(c)
		} else {
			kept.Add(-1)
			go c.run()
		}
	}
	p := <-c.done
	c.f = nil
	calls.Put(c)
	if p != nil {
		panic(p)
	}
}
