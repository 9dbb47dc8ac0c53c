// Package offstack runs deep, one-off work on a goroutine of its own.
//
// A goroutine's stack only doubles, and the runtime halves it again only
// while less than a quarter of it is in use. A streaming handler waits
// about 5 KB deep for as long as its stream is open, so work that once
// takes it past 8 KB (net/http's server starting a reply and writing its
// head, from under a stream's frames) leaves it a 16 KB stack for the
// stream's whole life. Run does such work on a fresh goroutine while the
// caller waits.
//
// The fresh goroutine grows its own stack, and that copying is paid on
// every call: Run is for work done once a stream, not once an event,
// and not for work a frame or two of trimming keeps shallow (encoding a
// request and sending it through it cost a stream about a tenth more
// CPU under load).
package offstack

// Run calls f on a goroutine of its own and returns when f has returned.
// A panic in f is raised again in the caller, as if f had run there.
func Run(f func()) {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}
