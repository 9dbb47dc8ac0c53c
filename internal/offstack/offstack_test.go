package offstack

import (
	"runtime"
	"sync"
	"testing"
	"time"

	_ "github.com/parleyhq/parley/translate/golden" // every test binary accepts -update
)

func TestRunReturnsAfterF(t *testing.T) {
	n := 0
	Run(func() { n = 42 })
	if n != 42 {
		t.Fatalf("n = %d after Run, want 42", n)
	}
}

func TestRunRaisesFsPanicInTheCaller(t *testing.T) {
	for range 3 { // a kept goroutine survives the panic
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v, want boom", r)
				}
			}()
			Run(func() { panic("boom") })
			t.Fatal("Run returned after a panic")
		}()
	}
	n := 0
	Run(func() { n++ })
	if n != 1 {
		t.Fatal("Run did not run f after a panic")
	}
}

// TestRunKeepsFewGoroutines: however many calls, at most maxKept
// goroutines stay once they have returned.
func TestRunKeepsFewGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 50 {
				Run(func() {})
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+maxKept {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after the calls, %d before; at most %d may be kept", runtime.NumGoroutine(), before, maxKept)
		}
		time.Sleep(time.Millisecond)
	}
	if k := len(idle); k > maxKept {
		t.Fatalf("%d workers kept, want 0 to %d", k, maxKept)
	}
}

// TestRunDoesNotWaitForBusyGoroutines: calls blocked in f (a write to a
// client that does not read) hold every kept goroutine; another call
// still runs at once.
func TestRunDoesNotWaitForBusyGoroutines(t *testing.T) {
	release := make(chan struct{})
	var blocked sync.WaitGroup
	for range maxKept + 2 {
		blocked.Go(func() { Run(func() { <-release }) })
	}
	done := make(chan struct{})
	go func() {
		Run(func() {})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run waited for a kept goroutine to be free")
	}
	close(release)
	blocked.Wait()
}

// TestRunAfterGoexit: a Goexit in f ends the caller, as it would have
// had f run there, after the caller's deferred calls; the worker it ended
// is not kept, and the next Run runs.
func TestRunAfterGoexit(t *testing.T) {
	deferred, after := false, false
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { deferred = true }()
		Run(runtime.Goexit)
		after = true
	}()
	<-done
	if !deferred || after {
		t.Fatalf("after Run(runtime.Goexit): deferred call ran %v, code after Run ran %v; want true, false", deferred, after)
	}
	for range maxKept + 1 {
		n := 0
		Run(func() { n++ })
		if n != 1 {
			t.Fatal("Run did not run f after a Goexit")
		}
	}
}

// deep uses about n bytes of stack, as starting a reply does.
//
//go:noinline
func deep(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n <= 256 {
		return int(pad[n%256])
	}
	return deep(n-256) + int(pad[n%256])
}

// BenchmarkRun is what Run adds to work 4 KB deep. "fresh" is the same
// call on a goroutine made for it, which grows its stack each time, and
// "channel" on a kept goroutine handed the call through a channel, as Run
// once did.
func BenchmarkRun(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			deep(4 << 10)
		}
	})
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			Run(func() { deep(4 << 10) })
		}
	})
	b.Run("channel", func(b *testing.B) {
		calls, done := make(chan func()), make(chan struct{})
		go func() {
			for f := range calls {
				f()
				done <- struct{}{}
			}
		}()
		for b.Loop() {
			calls <- func() { deep(4 << 10) }
			<-done
		}
		close(calls)
	})
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			done := make(chan struct{})
			go func() {
				deep(4 << 10)
				close(done)
			}()
			<-done
		}
	})
}
