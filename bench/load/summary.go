package main

import (
	"fmt"
	"slices"
)

// The summaries: medians and ranges across rounds, Parley's figures over
// the proxy's, and the performance goals checked against them.

// targetSummary is a target's figures on a scenario across rounds.
type targetSummary struct {
	RPS         spread `json:"requests_per_second,omitzero"`
	CPUPerReqUS spread `json:"cpu_us_per_request,omitzero"`
	TTFBp50MS   spread `json:"ttfb_p50_ms,omitzero"`
	TTFBp99MS   spread `json:"ttfb_p99_ms,omitzero"`
	TotalP50MS  spread `json:"total_p50_ms,omitzero"`
	TotalP99MS  spread `json:"total_p99_ms,omitzero"`
	// TTFBAddedMS is the median time to first byte over the direct call's
	// in the same round.
	TTFBAddedMS spread `json:"ttfb_added_ms,omitzero"`
	Requests    int    `json:"requests"`
	Errors      int    `json:"errors"`
	FirstError  string `json:"first_error,omitempty"`
}

// scenarioSummary is a scenario's figures and, when both were measured,
// Parley's over the proxy's, round by round.
type scenarioSummary struct {
	Targets    map[targetKind]*targetSummary `json:"targets"`
	Throughput spread                        `json:"throughput_ratio,omitzero"`
	CPU        spread                        `json:"cpu_ratio,omitzero"`
	TTFBAdded  spread                        `json:"ttfb_added_ratio,omitzero"`
	Goals      []goalCheck                   `json:"goals,omitempty"`
}

// heldSummary is a route's memory per held stream on each target.
type heldSummary struct {
	KBPerStream map[targetKind]spread `json:"kb_per_stream,omitzero"`
	Failed      map[targetKind]int    `json:"failed"`
	FirstError  string                `json:"first_error,omitempty"`
	Ratio       spread                `json:"ratio,omitzero"`
	Goals       []goalCheck           `json:"goals,omitempty"`
}

// goal is one of the performance goals Parley is held to.
type goal struct {
	Name    string  `json:"name"`
	Limit   float64 `json:"limit"`
	AtLeast bool    `json:"at_least"` // else at most
	Unit    string  `json:"unit"`
}

var (
	goalWholeThroughput  = goal{Name: "whole throughput at top concurrency, Parley / proxy", Limit: 0.95, AtLeast: true, Unit: "x"}
	goalWholeCPU         = goal{Name: "whole CPU per request, Parley / proxy", Limit: 1.05, Unit: "x"}
	goalStreamThroughput = goal{Name: "stream throughput at top concurrency, Parley / proxy", Limit: 0.85, AtLeast: true, Unit: "x"}
	goalStreamCPU        = goal{Name: "stream CPU per stream, Parley / proxy", Limit: 1.3, Unit: "x"}
	goalTTFBAdded        = goal{Name: "time to first byte added by Parley at c=1", Limit: 0.3, Unit: " ms"}
	goalHeldMemory       = goal{Name: "Parley's memory per held stream", Limit: 40, Unit: " KB"}
	allGoals             = []goal{goalWholeThroughput, goalWholeCPU, goalStreamThroughput, goalStreamCPU, goalTTFBAdded, goalHeldMemory}
)

// goalCheck is a goal checked on one scenario's median.
type goalCheck struct {
	Goal     goal    `json:"goal"`
	Scenario string  `json:"scenario"`
	Value    float64 `json:"value"`
	Met      bool    `json:"met"`
}

func check(g goal, scenario string, v float64) goalCheck {
	met := v <= g.Limit
	if g.AtLeast {
		met = v >= g.Limit
	}
	return goalCheck{Goal: g, Scenario: scenario, Value: v, Met: met}
}

// shortfall is how far a check falls short of its goal, as a fraction of
// the limit (0 or less when met).
func (c goalCheck) shortfall() float64 {
	if c.Goal.AtLeast {
		return (c.Goal.Limit - c.Value) / c.Goal.Limit
	}
	return (c.Value - c.Goal.Limit) / c.Goal.Limit
}

func (c goalCheck) String() string {
	verdict := "ok"
	if !c.Met {
		verdict = "MISS"
	}
	cmp := "<="
	if c.Goal.AtLeast {
		cmp = ">="
	}
	return fmt.Sprintf("%s %s%.2f%s", verdict, cmp, c.Goal.Limit, c.Goal.Unit)
}

// summarize fills in every summary.
func (r *results) summarize() {
	top := 0
	for _, s := range r.Scenarios {
		top = max(top, s.scenario.conc)
	}
	for _, s := range r.Scenarios {
		s.Summary = summarizeScenario(s, top)
	}
	for _, h := range r.Held {
		h.Summary = summarizeHeld(h, !r.Meta.HoldBeforeHead)
	}
}

func summarizeScenario(s *scenarioResult, top int) *scenarioSummary {
	sum := &scenarioSummary{Targets: map[targetKind]*targetSummary{}}
	rounds := byRound(s.Runs)
	for kind, runs := range s.Runs {
		sum.Targets[kind] = summarizeTarget(kind, runs, rounds)
	}
	sum.Throughput = spreadOf(values(rounds, func(r map[targetKind]runStats) (float64, bool) {
		p, okP := r[parley]
		x, okX := r[proxy]
		return p.RPS / x.RPS, okP && okX && x.RPS > 0
	}))
	sum.CPU = spreadOf(values(rounds, func(r map[targetKind]runStats) (float64, bool) {
		p, x := r[parley].CPUPerReqUS, r[proxy].CPUPerReqUS
		if p == nil || x == nil || *x <= 0 {
			return 0, false
		}
		return *p / *x, true
	}))
	sum.TTFBAdded = spreadOf(values(rounds, func(r map[targetKind]runStats) (float64, bool) {
		d, p, x := r[direct], r[parley], r[proxy]
		added := x.TTFBp50MS - d.TTFBp50MS
		ok := d.Requests > 0 && p.Requests > 0 && x.Requests > 0 && added > 0.001
		return (p.TTFBp50MS - d.TTFBp50MS) / added, ok
	}))
	sum.Goals = scenarioGoals(s.scenario, sum, top)
	return sum
}

func summarizeTarget(kind targetKind, runs []runStats, rounds []map[targetKind]runStats) *targetSummary {
	of := func(f func(runStats) float64) spread {
		return spreadOf(values(runs, func(r runStats) (float64, bool) { return f(r), r.Requests > 0 }))
	}
	t := &targetSummary{
		RPS:        spreadOf(values(runs, func(r runStats) (float64, bool) { return r.RPS, true })),
		TTFBp50MS:  of(func(r runStats) float64 { return r.TTFBp50MS }),
		TTFBp99MS:  of(func(r runStats) float64 { return r.TTFBp99MS }),
		TotalP50MS: of(func(r runStats) float64 { return r.TotalP50MS }),
		TotalP99MS: of(func(r runStats) float64 { return r.TotalP99MS }),
		CPUPerReqUS: spreadOf(values(runs, func(r runStats) (float64, bool) {
			if r.CPUPerReqUS == nil {
				return 0, false
			}
			return *r.CPUPerReqUS, true
		})),
	}
	if kind != direct {
		t.TTFBAddedMS = spreadOf(values(rounds, func(r map[targetKind]runStats) (float64, bool) {
			x, d := r[kind], r[direct]
			return x.TTFBp50MS - d.TTFBp50MS, x.Requests > 0 && d.Requests > 0
		}))
	}
	for _, r := range runs {
		t.Requests += r.Requests
		t.Errors += r.Errors
		if t.FirstError == "" {
			t.FirstError = r.FirstError
		}
	}
	return t
}

// scenarioGoals checks the goals that apply to a scenario, on medians.
// Throughput goals apply at the highest concurrency measured (when above
// 1), where the gateway's cost decides the rate; the time to first byte
// added at c=1, where no queue hides it.
func scenarioGoals(sc scenario, sum *scenarioSummary, top int) []goalCheck {
	var out []goalCheck
	name := sc.String()
	throughput, cpu := goalWholeThroughput, goalWholeCPU
	if sc.stream {
		throughput, cpu = goalStreamThroughput, goalStreamCPU
	}
	if sum.Throughput.N > 0 && sc.conc == top && top > 1 {
		out = append(out, check(throughput, name, sum.Throughput.Median))
	}
	if sum.CPU.N > 0 {
		out = append(out, check(cpu, name, sum.CPU.Median))
	}
	if t := sum.Targets[parley]; t != nil && t.TTFBAddedMS.N > 0 && sc.conc == 1 {
		out = append(out, check(goalTTFBAdded, name, t.TTFBAddedMS.Median))
	}
	return out
}

// summarizeHeld summarizes a route's held streams, judged by the goal
// when judged is set: the goal is for streams held after their first
// events.
func summarizeHeld(h *heldResult, judged bool) *heldSummary {
	sum := &heldSummary{KBPerStream: map[targetKind]spread{}, Failed: map[targetKind]int{}}
	for kind, ms := range h.Runs {
		sum.KBPerStream[kind] = spreadOf(values(ms, func(m memStats) (float64, bool) {
			if m.KBPerStream == nil {
				return 0, false
			}
			return *m.KBPerStream, true
		}))
		for _, m := range ms {
			sum.Failed[kind] += m.Failed
			if sum.FirstError == "" {
				sum.FirstError = m.FirstError
			}
		}
	}
	var ratios []float64
	for _, p := range h.Runs[parley] {
		for _, x := range h.Runs[proxy] {
			if p.Round == x.Round && p.KBPerStream != nil && x.KBPerStream != nil && *x.KBPerStream > 0 {
				ratios = append(ratios, *p.KBPerStream / *x.KBPerStream)
			}
		}
	}
	sum.Ratio = spreadOf(ratios)
	if s, ok := sum.KBPerStream[parley]; ok && s.N > 0 && judged {
		sum.Goals = append(sum.Goals, check(goalHeldMemory, h.Name, s.Median))
	}
	return sum
}

// worstChecks returns, for each goal checked at all, the check that falls
// shortest of it, in the order of allGoals.
func (r *results) worstChecks() []goalCheck {
	var all []goalCheck
	for _, s := range r.Scenarios {
		all = append(all, s.Summary.Goals...)
	}
	for _, h := range r.Held {
		all = append(all, h.Summary.Goals...)
	}
	var out []goalCheck
	for _, g := range allGoals {
		var worst *goalCheck
		for i, c := range all {
			if c.Goal == g && (worst == nil || c.shortfall() > worst.shortfall()) {
				worst = &all[i]
			}
		}
		if worst != nil {
			out = append(out, *worst)
		}
	}
	return out
}

// furthest returns the check furthest from its goal among the missed
// ones, or false when every goal is met.
func furthest(checks []goalCheck) (goalCheck, bool) {
	missed := slices.DeleteFunc(slices.Clone(checks), func(c goalCheck) bool { return c.Met })
	if len(missed) == 0 {
		return goalCheck{}, false
	}
	return slices.MaxFunc(missed, func(a, b goalCheck) int {
		switch {
		case a.shortfall() < b.shortfall():
			return -1
		case a.shortfall() > b.shortfall():
			return 1
		}
		return 0
	}), true
}
