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
