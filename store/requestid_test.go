package store

import (
	"regexp"
	"testing"
	"time"

	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

func TestRequestIDsSortByTime(t *testing.T) {
	form := regexp.MustCompile(`^req_[0-9a-f]{32}$`)
	base := time.UnixMilli(1_800_000_000_000)
	seen := map[string]bool{}
	last := "" // the greatest id of the millisecond before
	for ms := range 1000 {
		// Ids of one millisecond may come in any order; every id of a
		// later millisecond sorts after them.
		now := base.Add(time.Duration(ms) * time.Millisecond)
		a, b := newRequestID(now), newRequestID(now)
		for _, id := range []string{a, b} {
			if !form.MatchString(id) {
				t.Fatalf("id %q is not req_ and 32 hex digits", id)
			}
			if seen[id] {
				t.Fatalf("id %q made twice", id)
			}
			seen[id] = true
			if id <= last {
				t.Fatalf("id %q sorts before %q, made a millisecond earlier", id, last)
			}
		}
		last = max(a, b)
	}
	if got, want := newRequestID(base)[4:16], "01a3185c5000"; got != want {
		t.Errorf("time digits %s, want %s (1800000000000 ms)", got, want)
	}
}
