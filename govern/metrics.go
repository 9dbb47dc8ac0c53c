package govern

import "github.com/prometheus/client_golang/prometheus"

// metrics are governance's Prometheus series. Keys are named by their
// names, never their secrets.
type metrics struct {
	refusals      *prometheus.CounterVec
	checkErrors   prometheus.Counter
	tokens        *prometheus.CounterVec
	cost          *prometheus.CounterVec
	ledgerWritten prometheus.Counter
	ledgerErrors  prometheus.Counter
	ledgerDropped prometheus.Counter
	ledgerPending prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_limit_refusals_total", Help: "Requests refused by a key's limit, by key name and limit.",
		}, []string{"key", "limit"}),
		checkErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_limit_check_errors_total", Help: "Limit checks and settlements that failed because the counters (Redis) could not be reached.",
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_key_tokens_total", Help: "Tokens used, by key name, model and kind (input, output), as the upstreams reported them.",
		}, []string{"key", "model", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_key_cost_usd_total", Help: "Cost in US dollars by key name and model, by the models' pricing.",
		}, []string{"key", "model"}),
		ledgerWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_ledger_records_written_total", Help: "Usage records written to the ledger.",
		}),
		ledgerErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_ledger_write_errors_total", Help: "Batches of usage records whose write failed (they are written again).",
		}),
		ledgerDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_ledger_records_dropped_total", Help: "Usage records dropped because the ledger could not be written for too long.",
		}),
		ledgerPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_ledger_records_pending", Help: "Usage records gathered and not yet written.",
		}),
	}
	reg.MustRegister(m.refusals, m.checkErrors, m.tokens, m.cost, m.ledgerWritten, m.ledgerErrors, m.ledgerDropped, m.ledgerPending)
	return m
}
