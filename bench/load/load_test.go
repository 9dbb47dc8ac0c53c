package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

// TestMain lets the test binary serve as the reverse proxy: the harness
// starts its baseline by running its own executable with -serve-proxy,
// which under go test is this binary.
func TestMain(m *testing.M) {
	if os.Getenv(proxyRoleEnv) == "proxy" {
		if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmoke runs the whole harness in a tiny mode, one round of a few
// dozen requests per scenario and twenty held streams, on both targets,
// and checks that the report holds what it must. It asserts nothing about
// timings: those are the benchmark's to report, not a test's to judge.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Parley and starts several processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the benchmark reads /proc")
	}
	opts := options{
		rounds: 1, requests: 40, concs: []int{1, 32}, routes: defaultRoutes, filter: regexp.MustCompile(""),
		streams: 20, settle: 50 * time.Millisecond, openTimeout: 3 * time.Second,
	}
	var progress strings.Builder
	res, err := run(context.Background(), opts, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	res.summarize()
	if want := len(defaultRoutes) * 2 * len(opts.concs); len(res.Scenarios) != want {
		t.Errorf("%d scenarios measured, want %d", len(res.Scenarios), want)
	}
	for _, s := range res.Scenarios {
		for _, kind := range []targetKind{direct, proxy, parley} {
			checkTarget(t, s, kind)
		}
	}
	if len(res.Held) != len(defaultRoutes) {
		t.Errorf("%d held-stream routes measured, want %d", len(res.Held), len(defaultRoutes))
	}
	for _, h := range res.Held {
		checkHeld(t, h)
	}
	var report strings.Builder
	printReport(&report, res)
	for _, want := range []string{"Measured", "Parley / ReverseProxy", "Memory per held stream", "Goals"} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("the report has no %q section:\n%s", want, report.String())
		}
	}
	if t.Failed() {
		t.Logf("progress:\n%s\nreport:\n%s", progress.String(), report.String())
	}
}

// checkTarget checks that kind was measured on s, with replies, none
// failed, and (but for the direct call) the target's CPU read.
func checkTarget(t *testing.T, s *scenarioResult, kind targetKind) {
	t.Helper()
	runs := s.Runs[kind]
	if len(runs) != 1 {
		t.Errorf("%s on %s: %d runs, want 1", s.Name, kind, len(runs))
		return
	}
	r := runs[0]
	if r.RPS <= 0 || r.Requests == 0 {
		t.Errorf("%s on %s: no throughput (%d requests)", s.Name, kind, r.Requests)
	}
	if r.Errors > 0 {
		t.Errorf("%s on %s: %d requests failed, first: %s", s.Name, kind, r.Errors, r.FirstError)
	}
	if (r.CPUPerReqUS != nil) != (kind != direct) {
		t.Errorf("%s on %s: CPU per request measured: %v", s.Name, kind, r.CPUPerReqUS != nil)
	}
}

// checkHeld checks that the held streams of a route were measured on both
// targets, and that the proxy's opened: they show the harness works.
// Parley's failing to send a held stream's first events is a finding the
// report shows, logged here rather than failed.
func checkHeld(t *testing.T, h *heldResult) {
	t.Helper()
	for _, kind := range []targetKind{proxy, parley} {
		if len(h.Runs[kind]) != 1 {
			t.Errorf("%s on %s: %d measurements, want 1", h.Name, kind, len(h.Runs[kind]))
		}
	}
	for _, m := range h.Runs[proxy] {
		if m.KBPerStream == nil {
			t.Errorf("%s on the proxy: no measurement: %s", h.Name, m.FirstError)
		}
	}
	for _, m := range h.Runs[parley] {
		if m.KBPerStream == nil {
			t.Logf("%s on parley: no measurement: %s", h.Name, m.FirstError)
		}
	}
}

// TestPaddedPrompt: -prompt-kb makes every dialect's request carry a
// first turn of about that size, in a body that is still its JSON.
func TestPaddedPrompt(t *testing.T) {
	if got := firstTurn(0); got != userTurn1 {
		t.Errorf("firstTurn(0) = %q, want the short turn", got)
	}
	for _, kb := range []int{1, 64} {
		p := firstTurn(kb)
		if n := len(p); n < kb<<10 || n > kb<<10+200 {
			t.Errorf("firstTurn(%d) is %d bytes", kb, n)
		}
		for _, d := range []dialect{messages, chat, responses, generate} {
			for _, stream := range []bool{false, true} {
				req := clientRequest(d, "m", p, stream)
				var body any
				if err := json.Unmarshal(req.body, &body); err != nil {
					t.Fatalf("%s: %v", d, err)
				}
				if !strings.Contains(string(req.body), quote(p)) {
					t.Errorf("%s: the body has no padded turn", d)
				}
			}
		}
	}
}

// TestSmokeBeforeHead runs the memory measurement alone with
// -hold-before-head, on both targets: the requests wait with their
// upstream before its reply begins, and the report says so, judging no
// goal (the goal is for streams held after their first events).
func TestSmokeBeforeHead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Parley and starts several processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the benchmark reads /proc")
	}
	routes := defaultRoutes[1:2]
	opts := options{
		rounds: 1, requests: 40, concs: []int{1}, routes: routes, filter: regexp.MustCompile("^held "),
		streams: 20, settle: 50 * time.Millisecond, openTimeout: 3 * time.Second, holdBeforeHead: true,
	}
	var progress strings.Builder
	res, err := run(context.Background(), opts, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	res.summarize()
	if len(res.Scenarios) != 0 || len(res.Held) != 1 {
		t.Fatalf("%d scenarios and %d held routes measured, want the held one alone", len(res.Scenarios), len(res.Held))
	}
	for _, kind := range []targetKind{proxy, parley} {
		for _, m := range res.Held[0].Runs[kind] {
			if m.KBPerStream == nil || m.Failed > 0 {
				t.Errorf("%s: no measurement: %s", kind, m.FirstError)
			}
		}
	}
	if len(res.Held[0].Summary.Goals) != 0 {
		t.Errorf("requests held before their heads were judged by the held streams' goal: %v", res.Held[0].Summary.Goals)
	}
	var report strings.Builder
	printReport(&report, res)
	if !strings.Contains(report.String(), "Memory per request waiting for its upstream") {
		t.Errorf("the report does not say its requests waited for their upstream:\n%s", report.String())
	}
}

// TestMockHoldsBeforeHead: with the gate's beforeHead, a held request's
// reply does not begin (not even its status line) until the gate is
// released, and then comes whole.
func TestMockHoldsBeforeHead(t *testing.T) {
	ms, err := startMocks(tlsNone, "")
	if err != nil {
		t.Fatal(err)
	}
	defer ms.close()
	ms.gate.beforeHead = true
	c := callFor(route{client: messages, upstream: messages}, true, true, direct, ms.url(messages), 0)
	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.send(context.Background(), newClient(1, nil))
		if err != nil {
			done <- result{err: err}
			return
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		done <- result{resp.StatusCode, string(b), err}
	}()
	for deadline := time.Now().Add(3 * time.Second); ms.gate.arrived.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the mock")
		}
	}
	select {
	case r := <-done:
		t.Fatalf("the reply began before the gate was released: %d %v", r.status, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	ms.gate.release()
	r := <-done
	if r.err != nil || r.status != http.StatusOK || !strings.Contains(r.body, string(c.end)) {
		t.Errorf("after the release: status %d, %v, a body of %d bytes ending as it must: %v", r.status, r.err, len(r.body), strings.Contains(r.body, string(c.end)))
	}
}

// TestSmokeUpstreamTLS: with -upstream-tls the mocks serve HTTPS, over
// HTTP/1.1 alone or with HTTP/2 offered, and the direct call, the proxy
// and Parley all reach them (the targets trusting the mocks' certificate
// through SSL_CERT_FILE), whole, streamed and held.
func TestSmokeUpstreamTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Parley and starts several processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the benchmark reads /proc")
	}
	for _, mode := range []string{tlsHTTP1, tlsH2} {
		t.Run(mode, func(t *testing.T) {
			opts := options{
				rounds: 1, requests: 20, concs: []int{1}, routes: defaultRoutes[1:2], filter: regexp.MustCompile(""),
				streams: 10, settle: 50 * time.Millisecond, openTimeout: 5 * time.Second, upstreamTLS: mode,
			}
			var progress strings.Builder
			res, err := run(context.Background(), opts, &progress)
			if err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			res.summarize()
			if len(res.Scenarios) != 2 || len(res.Held) != 1 {
				t.Fatalf("%d scenarios and %d held routes measured, want 2 and 1", len(res.Scenarios), len(res.Held))
			}
			for _, s := range res.Scenarios {
				for _, kind := range []targetKind{direct, proxy, parley} {
					checkTarget(t, s, kind)
				}
			}
			for _, kind := range []targetKind{proxy, parley} {
				for _, m := range res.Held[0].Runs[kind] {
					if m.KBPerStream == nil || m.Failed > 0 {
						t.Errorf("%s: no measurement: %s", kind, m.FirstError)
					}
				}
			}
			var report strings.Builder
			printReport(&report, res)
			if !strings.Contains(report.String(), "The upstreams serve HTTPS") || res.Meta.UpstreamTLS != mode {
				t.Errorf("the report does not say its upstreams served HTTPS (%q):\n%s", res.Meta.UpstreamTLS, report.String())
			}
			if t.Failed() {
				t.Logf("progress:\n%s", progress.String())
			}
		})
	}
}

// TestMocksServeHTTPS: the mocks' URLs are https, a client that trusts
// their certificate gets a reply over the protocol asked for, and one
// that does not is refused.
func TestMocksServeHTTPS(t *testing.T) {
	for _, c := range []struct{ mode, proto string }{{tlsHTTP1, "HTTP/1.1"}, {tlsH2, "HTTP/2.0"}} {
		t.Run(c.mode, func(t *testing.T) {
			ms, err := startMocks(c.mode, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer ms.close()
			if !strings.HasPrefix(ms.url(messages), "https://") || ms.certFile == "" || len(ms.trustEnv()) != 1 {
				t.Fatalf("url %q, certificate %q", ms.url(messages), ms.certFile)
			}
			call := callFor(route{client: messages, upstream: messages}, false, false, direct, ms.url(messages), 0)
			resp, err := call.send(context.Background(), newClient(1, ms.roots))
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Proto != c.proto {
				t.Errorf("status %d over %s, want 200 over %s", resp.StatusCode, resp.Proto, c.proto)
			}
			if resp, err := call.send(context.Background(), newClient(1, nil)); err == nil {
				_ = resp.Body.Close()
				t.Error("a client that does not trust the mocks' certificate was answered")
			}
		})
	}
}
