package server

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// metrics are Parley's Prometheus series, labelled by client dialect,
// model (as configured, or empty when unknown) and upstream.
type metrics struct {
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	ttft           *prometheus.HistogramVec
	tokens         *prometheus.CounterVec
	upstreamErrors *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	labels := []string{"dialect", "model", "upstream"}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_requests_total", Help: "Client requests, by client dialect, model, upstream and HTTP status.",
		}, append(labels, "status")),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "parley_request_duration_seconds", Help: "Time from a client request to the end of its reply.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, labels),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "parley_time_to_first_token_seconds", Help: "Time from a streamed request to its first content.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, labels),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_tokens_total", Help: "Tokens reported by upstreams, by direction (input or output).",
		}, append(labels, "direction")),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_upstream_errors_total", Help: "Failed upstream attempts, by upstream and canonical code.",
		}, []string{"upstream", "code"}),
	}
	reg.MustRegister(m.requests, m.duration, m.ttft, m.tokens, m.upstreamErrors)
	return m
}

func (m *metrics) observe(x *exchange, _ *parleyv1.Error) {
	model := x.call.Model
	if model != "" && !x.s.d.Router().Known(model) {
		// Unknown names are the client's to choose: keep them out of the
		// label set.
		model = ""
	}
	d := dialectOf(x.c)
	m.requests.WithLabelValues(d, model, x.call.Upstream, strconv.Itoa(x.status)).Inc()
	m.duration.WithLabelValues(d, model, x.call.Upstream).Observe(timeSince(x))
	if x.ttft > 0 {
		m.ttft.WithLabelValues(d, model, x.call.Upstream).Observe(x.ttft.Seconds())
	}
	if u := x.usage; u != nil && x.call.Upstream != "" {
		if u.InputTokens != nil {
			m.tokens.WithLabelValues(d, model, x.call.Upstream, "input").Add(float64(u.GetInputTokens()))
		}
		if u.OutputTokens != nil {
			m.tokens.WithLabelValues(d, model, x.call.Upstream, "output").Add(float64(u.GetOutputTokens()))
		}
	}
	for _, f := range x.call.Failures {
		m.upstreamErrors.WithLabelValues(f.Upstream, f.Err.GetCode().String()).Inc()
	}
}
