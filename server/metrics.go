package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/dispatch"
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
	// reasoningRetries counts requests sent again without reasoning
	// after an upstream refused the reasoning as not its own.
	reasoningRetries *prometheus.CounterVec
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
		reasoningRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_reasoning_retries_total",
			Help: "Requests sent again without their reasoning after the upstream refused it as not its own (a key, account or route changed).",
		}, []string{"upstream"}),
	}
	reg.MustRegister(m.requests, m.duration, m.ttft, m.tokens, m.upstreamErrors, m.reasoningRetries)
	return m
}

// outcome is one finished request, as the metrics see it.
type outcome struct {
	dialect string
	status  int
	call    *dispatch.Call
	elapsed time.Duration
	ttft    time.Duration
	usage   *parleyv1.Usage
}

func (s *Server) observe(o outcome) {
	m := s.metrics
	model := o.call.Model
	if model != "" && !s.state().d.Router().Known(model) {
		// Unknown names are the client's to choose: keep them out of the
		// label set.
		model = ""
	}
	up := o.call.Upstream
	m.requests.WithLabelValues(o.dialect, model, up, strconv.Itoa(o.status)).Inc()
	m.duration.WithLabelValues(o.dialect, model, up).Observe(o.elapsed.Seconds())
	if o.ttft > 0 {
		m.ttft.WithLabelValues(o.dialect, model, up).Observe(o.ttft.Seconds())
	}
	if u := o.usage; u != nil && up != "" {
		if u.InputTokens != nil {
			m.tokens.WithLabelValues(o.dialect, model, up, "input").Add(float64(u.GetInputTokens()))
		}
		if u.OutputTokens != nil {
			m.tokens.WithLabelValues(o.dialect, model, up, "output").Add(float64(u.GetOutputTokens()))
		}
	}
	for _, f := range o.call.Failures {
		m.upstreamErrors.WithLabelValues(f.Upstream, f.Err.GetCode().String()).Inc()
	}
	if o.call.ReasoningRetry != "" {
		m.reasoningRetries.WithLabelValues(o.call.ReasoningRetry).Inc()
	}
}
