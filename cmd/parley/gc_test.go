package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentLetsTheHeapGrowByItsFloor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 800},       // the runtime's 4 MB minimum × 8 = 32 MB
		{2 * mb, 850},  // 34 MB: the minimum bound, not 2 + 2×16
		{8 * mb, 400},  // 8 + 32 = 40 MB
		{16 * mb, 200}, // 16 + 32
		{31 * mb, 103}, // just under the floor
		{32 * mb, 100}, // from the floor on, the default: double
		{1 << 30, 100},
	} {
		if got := gcPercent(c.live, 32*mb); got != c.want {
			t.Errorf("gcPercent(%d MB) = %d, want %d", c.live/mb, got, c.want)
		}
	}
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
