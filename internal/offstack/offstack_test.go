package offstack

import (
	"runtime"
	"testing"
)

func TestRunReturnsAfterF(t *testing.T) {
	n := 0
	Run(func() { n = 42 })
	if n != 42 {
		t.Fatalf("n = %d after Run, want 42", n)
	}
}

func TestRunRaisesFsPanicInTheCaller(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want boom", r)
		}
	}()
	Run(func() { panic("boom") })
	t.Fatal("Run returned after a panic")
}

func TestRunLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 100 {
		Run(func() {})
	}
	for range 100 {
		if runtime.NumGoroutine() <= before {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("%d goroutines after 100 runs, %d before", runtime.NumGoroutine(), before)
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

// BenchmarkRun is what Run adds to work 4 KB deep: a goroutine, and the
// growth of its stack from the size goroutines start with.
func BenchmarkRun(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			deep(4 << 10)
		}
	})
	b.Run("offstack", func(b *testing.B) {
		for b.Loop() {
			Run(func() { deep(4 << 10) })
		}
	})
}
