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
// times a second, scanning every goroutine's stack each time. From
// gcFloor of live heap and stacks on, the default holds: the heap may
// grow by both.
const gcFloor = 32 << 20

// gcTuner sets the collector's percentage after each collection so that
// the next one comes when the heap has grown by the larger of its floor
// and what the runtime's default lets it grow by: the live heap, the
// goroutines' stacks and the globals, all of which the collector scans.
// An operator's GOGC, or a GOMEMLIMIT the heap nears, still rule: the
// tuner does not start when GOGC is set, and the runtime collects early
// to keep a memory limit.
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
	t := &gcTuner{floor: floor, sample: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}, percent: 100}
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
	var v [3]uint64
	for i, s := range t.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	p := gcPercent(v[0], v[1]+v[2], t.floor)
	// Small moves are not worth a call.
	if p != t.percent && (p > t.percent*9/8 || p < t.percent*7/8 || p == 100) {
		t.percent = p
		debug.SetGCPercent(p)
	}
	return true
}

// gcPercent is the percentage that lets the heap grow by floor before
// the next collection: the runtime lets it grow by the percentage of the
// live heap and of scan, the stacks and globals the last collection
// scanned (10,000 open streams wait on 50 MB of stacks), so what grows by
// floor at a percentage counted on the live heap alone would grow by
// floor and more than the stacks again. From a floor's worth of the two
// on, it is the default. The runtime also never collects below
// heapMinimum scaled by the percentage, so for a heap under heapMinimum
// the percentage is held to what brings that bound to live+floor.
func gcPercent(live, scan, floor uint64) int {
	base := live + scan
	if base >= floor {
		return 100
	}
	p := (live + floor) * 100 / heapMinimum
	if base > 0 {
		p = min(p, floor*100/base)
	}
	return max(100, int(p))
}

// heapMinimum is the runtime's least heap target at GOGC=100.
const heapMinimum = 4 << 20
