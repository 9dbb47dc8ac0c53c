package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The printed report: plain text, one table per kind of figure, then the
// goals, then whatever failed.

// printReport writes the whole report.
func printReport(w io.Writer, r *results) {
	printHeader(w, r.Meta)
	if len(r.Scenarios) > 0 {
		printMeasured(w, r)
		if r.Meta.Only == "" {
			printRatios(w, r)
		}
	}
	if len(r.Held) > 0 {
		printHeld(w, r)
	}
	printGoals(w, r)
	printErrors(w, r)
}

func printHeader(w io.Writer, m meta) {
	run := fmt.Sprintf("%s per run", m.Duration)
	if m.Requests > 0 {
		run = fmt.Sprintf("%d requests per run", m.Requests)
	}
	commit := ""
	if m.Commit != "" {
		commit = ", commit " + m.Commit
	}
	fmt.Fprintf(w, "\nParley load benchmark: %d rounds, %s, %d held streams, %d CPUs, %s%s\n",
		m.Rounds, run, m.Streams, m.CPUs, m.GoVersion, commit)
	switch m.UpstreamTLS {
	case tlsHTTP1:
		fmt.Fprintln(w, "The upstreams serve HTTPS with HTTP/1.1 alone: a connection each per request at a time.")
	case tlsH2:
		fmt.Fprintln(w, "The upstreams serve HTTPS with HTTP/2 offered: requests share connections.")
	}
	fmt.Fprintln(w, "Figures are medians across rounds, with the range (min-max) in brackets.")
}

// table returns a tabwriter for a table with the given header cells.
func table(w io.Writer, title string, header ...string) *tabwriter.Writer {
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	return tw
}

// printMeasured prints each target's own figures per scenario.
func printMeasured(w io.Writer, r *results) {
	tw := table(w, "Measured",
		"scenario", "target", "req/s", "CPU µs/req", "TTFB p50 ms", "TTFB p99 ms", "added ms", "total p50 ms", "total p99 ms", "errors")
	for _, s := range r.Scenarios {
		for i, kind := range []targetKind{direct, proxy, parley} {
			t := s.Summary.Targets[kind]
			if t == nil {
				continue
			}
			name := s.Name
			if i > 0 {
				name = ""
			}
			total50, total99 := "-", "-"
			if s.scenario.stream {
				total50, total99 = fmt.Sprintf("%.3f", t.TotalP50MS.Median), fmt.Sprintf("%.3f", t.TotalP99MS.Median)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t%s\t%s\t%d\n", name, kind,
				withRange(t.RPS, "%.0f"), withRange(t.CPUPerReqUS, "%.1f"), withRange(t.TTFBp50MS, "%.3f"),
				t.TTFBp99MS.Median, signed(t.TTFBAddedMS), total50, total99, t.Errors)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "added: time to first byte (p50) over the direct call's in the same round.")
}

// printRatios prints Parley's figures over the proxy's, and the goals
// that apply to each scenario.
func printRatios(w io.Writer, r *results) {
	tw := table(w, "Parley / ReverseProxy (median of per-round ratios)",
		"scenario", "throughput", "goal", "CPU/req", "goal", "TTFB added proxy ms", "parley ms", "ratio", "goal")
	for _, s := range r.Scenarios {
		sum := s.Summary
		goals := map[goal]string{}
		for _, c := range sum.Goals {
			goals[c.Goal] = c.String()
		}
		throughput, cpu := goalWholeThroughput, goalWholeCPU
		if s.scenario.stream {
			throughput, cpu = goalStreamThroughput, goalStreamCPU
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name,
			withRange(sum.Throughput, "%.2fx"), goals[throughput], withRange(sum.CPU, "%.2fx"), goals[cpu],
			signed(added(sum, proxy)), signed(added(sum, parley)), orDash(sum.TTFBAdded, "%.1fx"), goals[goalTTFBAdded])
	}
	_ = tw.Flush()
}

// added is a target's time to first byte added over the direct call.
func added(sum *scenarioSummary, kind targetKind) spread {
	if t := sum.Targets[kind]; t != nil {
		return t.TTFBAddedMS
	}
	return spread{}
}

// printHeld prints memory per held stream.
func printHeld(w io.Writer, r *results) {
	title := fmt.Sprintf("Memory per held stream (%d streams open at once; RSS held minus RSS before)", r.Meta.Streams)
	if r.Meta.HoldBeforeHead {
		title = fmt.Sprintf("Memory per request waiting for its upstream (%d at once, their upstream not yet answering; RSS waiting minus RSS before)", r.Meta.Streams)
	}
	tw := table(w, title,
		"route", "proxy KB/stream", "parley KB/stream", "parley / proxy", "goal", "failed streams")
	for _, h := range r.Held {
		sum := h.Summary
		goal := ""
		for _, c := range sum.Goals {
			goal = c.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", h.Name,
			withRange(sum.KBPerStream[proxy], "%.1f"), withRange(sum.KBPerStream[parley], "%.1f"),
			withRange(sum.Ratio, "%.2fx"), goal, sum.Failed[proxy]+sum.Failed[parley])
	}
	_ = tw.Flush()
}

// printGoals prints, for each goal, the scenario that falls shortest of
// it, and which goal is missed by the most.
func printGoals(w io.Writer, r *results) {
	checks := r.worstChecks()
	if len(checks) == 0 {
		return
	}
	tw := table(w, "Goals (the worst scenario for each)", "goal", "worst", "scenario", "verdict")
	for _, c := range checks {
		fmt.Fprintf(tw, "%s\t%.2f%s\t%s\t%s\n", c.Goal.Name, c.Value, c.Goal.Unit, c.Scenario, c.String())
	}
	_ = tw.Flush()
	if c, ok := furthest(checks); ok {
		fmt.Fprintf(w, "Furthest from its goal: %s, %.2f%s on %s (misses it by %.0f%%).\n",
			c.Goal.Name, c.Value, c.Goal.Unit, c.Scenario, 100*c.shortfall())
	} else {
		fmt.Fprintln(w, "Every goal checked is met.")
	}
}

// printErrors lists the scenarios where a target failed requests, with
// the first failure: figures built on failed requests mean little.
func printErrors(w io.Writer, r *results) {
	var lines []string
	for _, s := range r.Scenarios {
		for _, kind := range []targetKind{direct, proxy, parley} {
			if t := s.Summary.Targets[kind]; t != nil && t.Errors > 0 {
				lines = append(lines, fmt.Sprintf("  %s on %s: %d of %d failed; first: %s",
					s.Name, kind, t.Errors, t.Errors+t.Requests, t.FirstError))
			}
		}
	}
	for _, h := range r.Held {
		if n := h.Summary.Failed[proxy] + h.Summary.Failed[parley]; n > 0 {
			lines = append(lines, fmt.Sprintf("  %s: %d streams failed; first: %s", h.Name, n, h.Summary.FirstError))
		}
	}
	if len(lines) == 0 {
		fmt.Fprintln(w, "\nNo request failed.")
		return
	}
	fmt.Fprintf(w, "\nFAILED REQUESTS\n%s\n", strings.Join(lines, "\n"))
}

// withRange renders a spread as "median (min-max)", or "-" when empty.
func withRange(s spread, format string) string {
	if s.N == 0 {
		return "-"
	}
	if s.N == 1 {
		return fmt.Sprintf(format, s.Median)
	}
	return fmt.Sprintf(format+" ("+format+"-"+format+")", s.Median, s.Min, s.Max)
}

// orDash renders a spread's median, or "-" when empty.
func orDash(s spread, format string) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf(format, s.Median)
}

// signed renders a time added, with its sign, or "-" when empty.
func signed(s spread) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.3f", s.Median)
}
