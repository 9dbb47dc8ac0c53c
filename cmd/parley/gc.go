package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcFloor is how much the heap may grow between two collections however
// small it is: a gateway's live heap is a few megabytes while it allocates
// a hundred megabytes a second, and the runtime's default (collect when
// the heap has doubled, four megabytes at the least) would collect tens of
// times a second, scanning every goroutine's stack each time. Above
// gcFloor of live heap the default holds: the heap may double.
const gcFloor = 32 << 20

// gcTuner sets the collector's percentage after each collection so that
// the next one comes when the heap has grown by the larger of its live
// size and its floor. An operator's GOGC, or a GOMEMLIMIT the heap nears,
// still rule: the tuner does not start when GOGC is set, and the runtime
// collects early to keep a memory limit.
type gcTuner struct {
	floor uint64

	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
	percent int
}

// sentinel is an object made to be collected: its cleanup runs once after
// each collection.
type sentinel struct{ _ *int }

// startGCTuner starts tuning unless lookup finds GOGC set. Stop ends it and
// gives the collector back its default.
func startGCTuner(floor uint64, lookup func(string) (string, bool)) (stop func()) {
	if _, set := lookup("GOGC"); set {
		return func() {}
	}
	t := &gcTuner{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: 100}
	t.tune()
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetGCPercent(100)
	}
}

func (t *gcTuner) arm() {
	s := &sentinel{}
	runtime.AddCleanup(s, func(t *gcTuner) {
		if t.tune() {
			t.arm()
		}
	}, t)
}

// tune sets the percentage for the live heap the last collection left,
// and reports whether the tuner still runs.
func (t *gcTuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	live := uint64(0)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	p := gcPercent(live, t.floor)
	// Small moves are not worth a call.
	if p != t.percent && (p > t.percent*9/8 || p < t.percent*7/8 || p == 100) {
		t.percent = p
		debug.SetGCPercent(p)
	}
	return true
}

// gcPercent is the percentage that lets a live heap grow by the larger of
// its own size and floor before the next collection. The runtime also
// never collects below heapMinimum scaled by the percentage, so for a
// live heap under heapMinimum the percentage is held to what brings that
// bound to live+floor.
func gcPercent(live, floor uint64) int {
	if live >= floor {
		return 100
	}
	p := (live + floor) * 100 / heapMinimum
	if live > 0 {
		p = min(p, floor*100/live)
	}
	return max(100, int(p))
}

// heapMinimum is the runtime's least heap target at GOGC=100.
const heapMinimum = 4 << 20
