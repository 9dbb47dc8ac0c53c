package main

import (
	"fmt"
	"slices"
	"time"
)

// What the rounds measured, kept per round so that medians, spreads and
// paired ratios can be taken from it, and written out whole with -json.

// meta describes a run.
type meta struct {
	Rounds    int    `json:"rounds"`
	Duration  string `json:"duration,omitempty"`
	Requests  int    `json:"requests_per_run,omitempty"`
	Streams   int    `json:"held_streams"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	Commit    string `json:"commit,omitempty"`
	Only      string `json:"only,omitempty"`
	PromptKB  int    `json:"prompt_kb,omitempty"`
	// HoldBeforeHead: the held streams waited before their upstream's
	// reply began, not after its first events.
	HoldBeforeHead bool `json:"hold_before_head,omitempty"`
	// UpstreamTLS is how the mocks served: "" for plain HTTP, "http1"
	// or "h2" for HTTPS.
	UpstreamTLS string `json:"upstream_tls,omitempty"`
}

// runStats is one run of a scenario on a target.
type runStats struct {
	Round      int     `json:"round"`
	Requests   int     `json:"requests"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	Seconds    float64 `json:"seconds"`
	RPS        float64 `json:"requests_per_second"`
	// CPUPerReqUS is the target process's CPU per good request, in
	// microseconds; nil for the direct call, whose server is the mock.
	CPUPerReqUS *float64 `json:"cpu_us_per_request,omitempty"`
	TTFBp50MS   float64  `json:"ttfb_p50_ms"`
	TTFBp99MS   float64  `json:"ttfb_p99_ms"`
	TotalP50MS  float64  `json:"total_p50_ms"`
	TotalP99MS  float64  `json:"total_p99_ms"`
}

// statsOf sums a run up; cpu is the target's CPU over the run, when
// measured.
func statsOf(res runResult, cpu time.Duration, measured bool) runStats {
	s := runStats{
		Requests: res.requests, Errors: res.errors, FirstError: res.firstErr,
		Seconds:   res.elapsed.Seconds(),
		TTFBp50MS: ms(quantile(res.ttfb, 0.50)), TTFBp99MS: ms(quantile(res.ttfb, 0.99)),
		TotalP50MS: ms(quantile(res.total, 0.50)), TotalP99MS: ms(quantile(res.total, 0.99)),
	}
	if res.elapsed > 0 {
		s.RPS = float64(res.requests) / res.elapsed.Seconds()
	}
	if measured && res.requests > 0 {
		us := float64(cpu.Microseconds()) / float64(res.requests)
		s.CPUPerReqUS = &us
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// summary is the progress line of a run.
func (s runStats) summary() string {
	line := fmt.Sprintf("%8.0f req/s  ttfb p50 %.3f ms p99 %.3f ms  total p50 %.3f ms", s.RPS, s.TTFBp50MS, s.TTFBp99MS, s.TotalP50MS)
	if s.CPUPerReqUS != nil {
		line += fmt.Sprintf("  cpu %.1f µs/req", *s.CPUPerReqUS)
	}
	if s.Errors > 0 {
		line += fmt.Sprintf("  %d ERRORS, first: %s", s.Errors, s.FirstError)
	}
	return line
}

// memStats is one held-stream measurement on a target.
type memStats struct {
	Round      int    `json:"round"`
	Streams    int    `json:"streams"`
	Failed     int    `json:"failed"`
	FirstError string `json:"first_error,omitempty"`
	BeforeKB   int64  `json:"rss_before_kb"`
	AfterKB    int64  `json:"rss_held_kb"`
	// KBPerStream is nil when the measurement is void: a stream failed.
	KBPerStream *float64 `json:"kb_per_stream,omitempty"`
}

func (m memStats) summary() string {
	if m.KBPerStream == nil {
		return fmt.Sprintf("%d streams  %d FAILED: %s", m.Streams, m.Failed, m.FirstError)
	}
	line := fmt.Sprintf("%d streams  rss %d -> %d KB  %.1f KB/stream", m.Streams, m.BeforeKB, m.AfterKB, *m.KBPerStream)
	if m.Failed > 0 {
		line += fmt.Sprintf("  %d FAILED, first: %s", m.Failed, m.FirstError)
	}
	return line
}

// results is everything a run measured.
type results struct {
	Meta      meta              `json:"meta"`
	Scenarios []*scenarioResult `json:"scenarios"`
	Held      []*heldResult     `json:"held_streams"`
}

// scenarioResult is a scenario's runs, per target, in round order.
type scenarioResult struct {
	Name     string                    `json:"name"`
	Summary  *scenarioSummary          `json:"summary,omitempty"`
	Runs     map[targetKind][]runStats `json:"runs"`
	scenario scenario
}

// heldResult is a route's held-stream measurements, per target.
type heldResult struct {
	Name    string                    `json:"name"`
	Summary *heldSummary              `json:"summary,omitempty"`
	Runs    map[targetKind][]memStats `json:"runs"`
	route   route
}

func newResults(m meta, scs []scenario, held []route) *results {
	r := &results{Meta: m}
	for _, sc := range scs {
		r.Scenarios = append(r.Scenarios, &scenarioResult{Name: sc.String(), scenario: sc, Runs: map[targetKind][]runStats{}})
	}
	for _, rt := range held {
		r.Held = append(r.Held, &heldResult{Name: heldName(rt), route: rt, Runs: map[targetKind][]memStats{}})
	}
	return r
}

func (r *results) addRun(sc scenario, kind targetKind, s runStats) {
	i := slices.IndexFunc(r.Scenarios, func(x *scenarioResult) bool { return x.scenario == sc })
	r.Scenarios[i].Runs[kind] = append(r.Scenarios[i].Runs[kind], s)
}

func (r *results) addHeld(rt route, kind targetKind, m memStats) {
	i := slices.IndexFunc(r.Held, func(x *heldResult) bool { return x.route == rt })
	r.Held[i].Runs[kind] = append(r.Held[i].Runs[kind], m)
}

// spread is a figure across rounds: its median and its range.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// spreadOf returns the spread of xs; N is 0 for none.
func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Sorted(slices.Values(xs))
	mid := s[len(s)/2]
	if len(s)%2 == 0 {
		mid = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{Median: mid, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// values returns f of each item that has a value.
func values[T any](items []T, f func(T) (float64, bool)) []float64 {
	var out []float64
	for _, x := range items {
		if v, ok := f(x); ok {
			out = append(out, v)
		}
	}
	return out
}

// byRound regroups a scenario's runs by round, each round's runs by
// target, in round order: per-round comparisons pair runs made minutes
// apart at most, so that a round that ran slow weighs on both sides.
func byRound(runs map[targetKind][]runStats) []map[targetKind]runStats {
	index := map[int]map[targetKind]runStats{}
	var order []int
	for kind, rs := range runs {
		for _, r := range rs {
			if index[r.Round] == nil {
				index[r.Round] = map[targetKind]runStats{}
				order = append(order, r.Round)
			}
			index[r.Round][kind] = r
		}
	}
	slices.Sort(order)
	out := make([]map[targetKind]runStats, len(order))
	for i, n := range order {
		out[i] = index[n]
	}
	return out
}
