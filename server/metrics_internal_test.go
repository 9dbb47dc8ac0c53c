package server

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Requests are counted in the series of their dialect, model and upstream,
// found once and kept: the same series as WithLabelValues finds, for
// every status, for two routes side by side, tokens and times included.
func TestMetricsSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	n := func(v int64) *int64 { return &v }
	a := &dispatch.Call{Upstream: "up-a"}
	b := &dispatch.Call{Upstream: "up-b"}
	for range 2 {
		m.record(outcome{dialect: "messages", status: 200, call: a, elapsed: time.Second, ttft: time.Millisecond,
			usage: &parleyv1.Usage{InputTokens: n(3), OutputTokens: n(5)}}, "m")
	}
	m.record(outcome{dialect: "messages", status: 429, call: a, elapsed: time.Second}, "m")
	m.record(outcome{dialect: "responses", status: 200, call: b, elapsed: time.Second, usage: &parleyv1.Usage{OutputTokens: n(7)}}, "")
	// Refused before any upstream: no token series.
	m.record(outcome{dialect: "responses", status: 401, call: &dispatch.Call{}, elapsed: time.Second, usage: &parleyv1.Usage{OutputTokens: n(1)}}, "")
	want := `
# HELP parley_requests_total Client requests, by client dialect, model, upstream and HTTP status.
# TYPE parley_requests_total counter
parley_requests_total{dialect="messages",model="m",status="200",upstream="up-a"} 2
parley_requests_total{dialect="messages",model="m",status="429",upstream="up-a"} 1
parley_requests_total{dialect="responses",model="",status="200",upstream=""} 0
parley_requests_total{dialect="responses",model="",status="401",upstream=""} 1
parley_requests_total{dialect="responses",model="",status="200",upstream="up-b"} 1
# HELP parley_tokens_total Tokens reported by upstreams, by direction (input or output).
# TYPE parley_tokens_total counter
parley_tokens_total{dialect="messages",direction="input",model="m",upstream="up-a"} 6
parley_tokens_total{dialect="messages",direction="output",model="m",upstream="up-a"} 10
parley_tokens_total{dialect="responses",direction="input",model="",upstream="up-b"} 0
parley_tokens_total{dialect="responses",direction="output",model="",upstream="up-b"} 7
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "parley_requests_total", "parley_tokens_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(m.duration); got != 3 {
		t.Errorf("%d duration series, want 3", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("messages", "m", "up-a", "200")); got != 2 {
		t.Errorf("the series WithLabelValues finds holds %v, want 2", got)
	}
}

// BenchmarkMetricsRecord: a streamed request's observations through its
// route's series, against the five WithLabelValues calls they replace.
func BenchmarkMetricsRecord(b *testing.B) {
	m := newMetrics(prometheus.NewRegistry())
	in, out := int64(12), int64(34)
	o := outcome{dialect: "messages", status: 200, call: &dispatch.Call{Upstream: "anthropic"}, elapsed: time.Second, ttft: time.Millisecond,
		usage: &parleyv1.Usage{InputTokens: &in, OutputTokens: &out}}
	b.Run("series", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.record(o, "claude-sonnet-4-5")
		}
	})
	b.Run("labels", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, mod, up := o.dialect, "claude-sonnet-4-5", o.call.Upstream
			m.requests.WithLabelValues(d, mod, up, "200").Inc()
			m.duration.WithLabelValues(d, mod, up).Observe(o.elapsed.Seconds())
			m.ttft.WithLabelValues(d, mod, up).Observe(o.ttft.Seconds())
			m.tokens.WithLabelValues(d, mod, up, "input").Add(float64(in))
			m.tokens.WithLabelValues(d, mod, up, "output").Add(float64(out))
		}
	})
}
