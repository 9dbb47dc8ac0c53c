package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"time"
)

// The harness: the mocks, the targets, and the rounds. Targets are
// measured in interleaved rounds, the reverse proxy and Parley taking
// turns to go first, so that a machine that speeds up or slows down
// during a run (heat, a neighbour) weighs on both alike.

// options are the flags that shape a run.
type options struct {
	rounds   int
	duration time.Duration
	requests int
	concs    []int
	routes   []route
	filter   *regexp.Regexp
	streams  int
	settle   time.Duration
	// openTimeout is how long held streams may take to get their first
	// bytes.
	openTimeout time.Duration
	only        targetKind // "" for both
	repo        string
	parleyBin   string
	keep        bool
	// promptKB pads every request's first turn to about this many KiB,
	// as long as an agent's conversation is; 0 leaves it short.
	promptKB int
	// holdBeforeHead holds the memory measurement's streams before their
	// upstream's reply begins rather than after its first events.
	holdBeforeHead bool
	// upstreamTLS is how the mocks serve: tlsNone, tlsHTTP1 or tlsH2.
	upstreamTLS string
}

// harness is a run in progress.
type harness struct {
	opts     options
	tmp      string
	bin      string
	mocks    *mocks
	proxies  map[dialect]*process
	parley   *process
	progress io.Writer
	results  *results
}

// run measures every scenario and held-stream route for opts.rounds
// rounds and returns the results; progress gets a line per measurement.
func run(ctx context.Context, opts options, progress io.Writer) (*results, error) {
	h := &harness{opts: opts, progress: progress, proxies: map[dialect]*process{}}
	scs := scenarios(opts.routes, opts.concs, opts.filter)
	held := h.heldRoutes()
	if len(scs) == 0 && len(held) == 0 {
		return nil, fmt.Errorf("-scenarios %q matches nothing", opts.filter)
	}
	defer h.close()
	if err := h.setUp(ctx); err != nil {
		return nil, err
	}
	h.results = newResults(h.meta(), scs, held)
	for round := range opts.rounds {
		for i, sc := range scs {
			if err := h.measureScenario(ctx, round, i, sc); err != nil {
				return nil, err
			}
		}
		for i, r := range held {
			if err := h.measureHeld(ctx, round, i, r); err != nil {
				return nil, err
			}
		}
	}
	return h.results, nil
}

// setUp builds Parley, starts the mocks and the targets.
func (h *harness) setUp(ctx context.Context) error {
	var err error
	if h.tmp, err = os.MkdirTemp("", "parley-bench-"); err != nil {
		return err
	}
	if h.mocks, err = startMocks(h.opts.upstreamTLS, h.tmp); err != nil {
		return err
	}
	h.mocks.gate.beforeHead = h.opts.holdBeforeHead
	if h.wants(parley) {
		if err := h.startParley(ctx); err != nil {
			return err
		}
	}
	if h.wants(proxy) {
		for _, r := range h.opts.routes {
			if h.proxies[r.upstream] != nil {
				continue
			}
			p, err := startProxy(ctx, h.tmp, h.mocks.url(r.upstream), string(r.upstream), h.mocks.trustEnv())
			if err != nil {
				return err
			}
			h.proxies[r.upstream] = p
		}
	}
	return nil
}

// startParley builds Parley unless a binary was given, and starts it.
func (h *harness) startParley(ctx context.Context) error {
	h.bin = h.opts.parleyBin
	if h.bin == "" {
		root, err := moduleRoot(h.opts.repo)
		if err != nil {
			return err
		}
		fmt.Fprintf(h.progress, "building Parley from %s\n", root)
		if h.bin, err = buildParley(root, h.tmp); err != nil {
			return err
		}
	}
	p, err := startParley(ctx, h.bin, h.tmp, "main", h.mocks)
	h.parley = p
	return err
}

// close stops the targets and the mocks, and removes the temporary
// directory unless -keep was given.
func (h *harness) close() {
	for _, p := range h.proxies {
		p.stop()
	}
	if h.parley != nil {
		h.parley.stop()
	}
	if h.mocks != nil {
		h.mocks.close()
	}
	switch {
	case h.tmp == "":
	case h.opts.keep:
		fmt.Fprintf(h.progress, "logs and configuration kept in %s\n", h.tmp)
	default:
		_ = os.RemoveAll(h.tmp)
	}
}

// wants reports whether kind is measured in this run.
func (h *harness) wants(kind targetKind) bool {
	return kind == direct || h.opts.only == "" || h.opts.only == kind
}

// order is the order the targets are measured in for the i-th
// measurement of a round: the direct call first, then the proxy and
// Parley, taking turns to go first.
func (h *harness) order(round, i int) []targetKind {
	kinds := []targetKind{direct, proxy, parley}
	if (round+i)%2 == 1 {
		kinds = []targetKind{direct, parley, proxy}
	}
	var out []targetKind
	for _, k := range kinds {
		if h.wants(k) {
			out = append(out, k)
		}
	}
	return out
}

// heldRoutes are the routes whose held streams are measured.
func (h *harness) heldRoutes() []route {
	if h.opts.streams <= 0 {
		return nil
	}
	var out []route
	for _, r := range h.opts.routes {
		if h.opts.filter.MatchString(heldName(r)) {
			out = append(out, r)
		}
	}
	return out
}

// base is where a target serves a route.
func (h *harness) base(r route, kind targetKind) (url string, pid int) {
	switch kind {
	case proxy:
		p := h.proxies[r.upstream]
		return p.url, p.pid()
	case parley:
		return h.parley.url, h.parley.pid()
	}
	return h.mocks.url(r.upstream), 0
}

// measureScenario runs one scenario on each target in turn.
func (h *harness) measureScenario(ctx context.Context, round, i int, sc scenario) error {
	for _, kind := range h.order(round, i) {
		url, pid := h.base(sc.route, kind)
		c := callFor(sc.route, sc.stream, false, kind, url, h.opts.promptKB)
		p := plan{duration: h.opts.duration, count: h.opts.requests}
		if kind == direct && p.count == 0 {
			// The direct call only gives the baseline's time to first
			// byte; half the time is plenty for a median and a p99.
			p.duration /= 2
		}
		s, err := measureLoad(ctx, c, sc.conc, p, pid, h.mocks.roots)
		if err != nil {
			return fmt.Errorf("%s on %s: %w", sc, kind, err)
		}
		s.Round = round + 1
		h.results.addRun(sc, kind, s)
		fmt.Fprintf(h.progress, "round %d/%d  %-30s %-6s %s\n", round+1, h.opts.rounds, sc, kind, s.summary())
	}
	return ctx.Err()
}

// measureLoad warms the target up, then runs the plan and reads the CPU
// the target process used meanwhile (none for pid 0: the mock runs in
// this process, and its CPU is not what is measured). roots are the
// mocks' certificate, for a direct call to mocks that serve HTTPS.
func measureLoad(ctx context.Context, c call, conc int, p plan, pid int, roots *x509.CertPool) (runStats, error) {
	client := newClient(conc, roots)
	defer client.CloseIdleConnections()
	warmUp(ctx, client, c, conc)
	before, err := cpuOf(pid)
	if err != nil {
		return runStats{}, err
	}
	res := runLoad(ctx, client, c, conc, p)
	after, err := cpuOf(pid)
	if err != nil {
		return runStats{}, err
	}
	return statsOf(res, after-before, pid != 0), nil
}

// cpuOf is processCPU, or 0 for no process.
func cpuOf(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, nil
	}
	return processCPU(pid)
}

// measureHeld measures the memory held streams of a route cost on each
// target, each on a process started for it.
func (h *harness) measureHeld(ctx context.Context, round, i int, r route) error {
	for _, kind := range h.order(round, i) {
		if kind == direct {
			continue
		}
		m, err := h.heldOn(ctx, r, kind, fmt.Sprintf("held-%d-%d", round, i))
		if err != nil {
			return fmt.Errorf("%s on %s: %w", heldName(r), kind, err)
		}
		m.Round = round + 1
		h.results.addHeld(r, kind, m)
		fmt.Fprintf(h.progress, "round %d/%d  %-30s %-6s %s\n", round+1, h.opts.rounds, heldName(r), kind, m.summary())
	}
	return ctx.Err()
}

// meta describes the run for the report.
func (h *harness) meta() meta {
	m := meta{
		Rounds: h.opts.rounds, Requests: h.opts.requests,
		Streams: h.opts.streams, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Only: string(h.opts.only),
		PromptKB: h.opts.promptKB, HoldBeforeHead: h.opts.holdBeforeHead, UpstreamTLS: h.opts.upstreamTLS,
	}
	if h.opts.requests == 0 {
		m.Duration = h.opts.duration.String()
	}
	if root, err := moduleRoot(h.opts.repo); err == nil && h.opts.parleyBin == "" {
		m.Commit = revision(root)
	}
	return m
}
