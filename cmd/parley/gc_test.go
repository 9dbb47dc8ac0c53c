package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

func TestGCPercentLetsTheHeapGrowByItsFloor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, scan uint64
		want       int
	}{
		{0, 0, 800},       // the runtime's 4 MB minimum × 8 = 32 MB
		{2 * mb, 0, 850},  // 34 MB: the minimum bound, not 2 + 2×16
		{8 * mb, 0, 400},  // 8 + 32 = 40 MB
		{16 * mb, 0, 200}, // 16 + 32
		{31 * mb, 0, 103}, // just under the floor
		{32 * mb, 0, 100}, // from the floor on, the default: double
		{1 << 30, 0, 100},
		// The runtime grows the heap by the percentage of the stacks
		// too: 8 MB of heap and 8 of stacks grow by 16 × 200% = 32 MB.
		{8 * mb, 8 * mb, 200},
		{16 * mb, 8 * mb, 133}, // 24 × 133% = 32 MB, not 24 × 200%
		{2 * mb, 30 * mb, 100}, // the stacks alone reach the floor
		{2 * mb, 1 * mb, 850},  // the minimum bound still rules
	} {
		if got := gcPercent(c.live, c.scan, 32*mb); got != c.want {
			t.Errorf("gcPercent(%d MB, %d MB) = %d, want %d", c.live/mb, c.scan/mb, got, c.want)
		}
	}
}

// A gateway holding thousands of streams has as much in their goroutines'
// stacks as in its heap, and the collector grows the heap by its
// percentage of both: the tuner must count them, or the heap a stream
// waits in grows by the floor and as much again.
func TestGCTunerCountsTheStacksTheHeapGrowsBy(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	const floor = 8 << 20
	release := make(chan struct{})
	var started, wg sync.WaitGroup
	started.Add(2000)
	for range 2000 {
		wg.Go(func() { waitDeep(16, &started, release) })
	}
	defer func() {
		close(release)
		wg.Wait()
	}()
	started.Wait()
	runtime.GC()
	none := func(string) (string, bool) { return "", false }
	stop := startGCTuner(floor, none)
	defer stop()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}, {Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	live, stacks, globals, goal := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64()
	if stacks < 4<<20 {
		t.Fatalf("the test's goroutines hold %d bytes of stack, want a few megabytes", stacks)
	}
	base := live + stacks + globals
	want := live + max(floor, base)
	// The goal is the runtime's own, at the percentage the tuner set;
	// a percentage counted on the live heap alone puts it near
	// live + floor × base/live.
	if goal > want+want/20 {
		t.Errorf("the heap may grow to %d MB (live %d MB, stacks %d MB), want about %d MB",
			goal>>20, live>>20, stacks>>20, want>>20)
	}
}

// waitDeep waits on release depth frames down, each with a few hundred
// bytes of its own.
//
//go:noinline
func waitDeep(depth int, started *sync.WaitGroup, release chan struct{}) byte {
	var pad [256]byte
	pad[depth] = byte(depth)
	if depth == 0 {
		started.Done()
		<-release
		return pad[0]
	}
	return waitDeep(depth-1, started, release) + pad[depth]
}

func TestGCTunerRaisesThePercentageForASmallHeapAndGivesItBack(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	none := func(string) (string, bool) { return "", false }
	stop := startGCTuner(64<<20, none)
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		// The tuner runs after a collection, on the cleanup goroutine.
		time.Sleep(time.Millisecond)
		if p := debug.SetGCPercent(-1); p > 100 {
			debug.SetGCPercent(p)
			break
		} else {
			debug.SetGCPercent(p)
		}
		if time.Now().After(deadline) {
			t.Fatal("the collector's percentage stayed at 100 for a test's small heap")
		}
	}
	stop()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("after stop the percentage is %d, want 100", p)
	}
}

func TestGCTunerLeavesAnOperatorsGOGC(t *testing.T) {
	old := debug.SetGCPercent(50)
	defer debug.SetGCPercent(old)
	stop := startGCTuner(64<<20, func(k string) (string, bool) { return "50", k == "GOGC" })
	defer stop()
	for range 3 {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	if p := debug.SetGCPercent(50); p != 50 {
		t.Errorf("with GOGC set, the percentage became %d", p)
	}
}
