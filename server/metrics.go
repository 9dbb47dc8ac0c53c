package server

import (
	"net/http"
	"strconv"
	"sync"
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

	// seriesMu guards series, the children of one dialect, model and
	// upstream, found once rather than on every request.
	seriesMu sync.RWMutex
	series   map[seriesKey]*series
}

// seriesKey names the series of one dialect, model and upstream. Their
// number is bounded by the configuration: a model Parley does not know is
// labelled "".
type seriesKey struct{ dialect, model, upstream string }

// series are the children of the vectors for one seriesKey that every
// request observes: WithLabelValues hashes each label value and takes a
// lock on every call, and a request made five such calls. They are made
// together at a route's first request, so its series appear then, at
// zero until observed; the token counters only for a route with an
// upstream, the only ones that count tokens.
type series struct {
	ok             prometheus.Counter // requests answered 200
	duration, ttft prometheus.Observer
	input, output  prometheus.Counter
}

// seriesOf returns k's series, finding them the first time.
func (m *metrics) seriesOf(k seriesKey) *series {
	m.seriesMu.RLock()
	s := m.series[k]
	m.seriesMu.RUnlock()
	if s != nil {
		return s
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	if s = m.series[k]; s == nil {
		s = &series{
			ok:       m.requests.WithLabelValues(k.dialect, k.model, k.upstream, "200"),
			duration: m.duration.WithLabelValues(k.dialect, k.model, k.upstream),
			ttft:     m.ttft.WithLabelValues(k.dialect, k.model, k.upstream),
		}
		if k.upstream != "" {
			s.input = m.tokens.WithLabelValues(k.dialect, k.model, k.upstream, "input")
			s.output = m.tokens.WithLabelValues(k.dialect, k.model, k.upstream, "output")
		}
		m.series[k] = s
	}
	return s
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
		series: map[seriesKey]*series{},
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
	model := o.call.Model
	if model != "" && !s.state().d.Router().Known(model) {
		// Unknown names are the client's to choose: keep them out of the
		// label set.
		model = ""
	}
	s.metrics.record(o, model)
}

// record counts a finished request under model, a configured name or "".
func (m *metrics) record(o outcome, model string) {
	up := o.call.Upstream
	ser := m.seriesOf(seriesKey{o.dialect, model, up})
	if o.status == http.StatusOK {
		ser.ok.Inc()
	} else {
		m.requests.WithLabelValues(o.dialect, model, up, strconv.Itoa(o.status)).Inc()
	}
	ser.duration.Observe(o.elapsed.Seconds())
	if o.ttft > 0 {
		ser.ttft.Observe(o.ttft.Seconds())
	}
	if u := o.usage; u != nil && up != "" {
		if u.InputTokens != nil {
			ser.input.Add(float64(u.GetInputTokens()))
		}
		if u.OutputTokens != nil {
			ser.output.Add(float64(u.GetOutputTokens()))
		}
	}
	for _, f := range o.call.Failures {
		m.upstreamErrors.WithLabelValues(f.Upstream, f.Err.GetCode().String()).Inc()
	}
	if o.call.ReasoningRetry != "" {
		m.reasoningRetries.WithLabelValues(o.call.ReasoningRetry).Inc()
	}
}
