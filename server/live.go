package server

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// live keeps what the console's live view shows of this replica: the
// requests and streams in flight, and each upstream's recent requests, for
// error rates and latency percentiles over the last minutes.
type live struct {
	requests atomic.Int64
	streams  atomic.Int64

	mu        sync.Mutex
	upstreams map[string]*recent
}

// recentSize is how many requests per upstream the live view keeps.
const recentSize = 2048

// healthWindow is how far back the live view looks.
const healthWindow = 5 * time.Minute

// recent is a ring of an upstream's last requests.
type recent struct {
	ring [recentSize]sample
	n    int
}

type sample struct {
	at       int64 // Unix nanoseconds
	duration time.Duration
	ttft     time.Duration
	failed   bool
}

// observe notes one finished request to an upstream.
func (l *live) observe(upstream string, s sample) {
	if upstream == "" {
		return
	}
	l.mu.Lock()
	r := l.upstreams[upstream]
	if r == nil {
		if l.upstreams == nil {
			l.upstreams = map[string]*recent{}
		}
		r = &recent{}
		l.upstreams[upstream] = r
	}
	r.ring[r.n%recentSize] = s
	r.n++
	l.mu.Unlock()
}

// statsReply is /admin/v1/stats.
type statsReply struct {
	Time      time.Time      `json:"time"`
	InFlight  inFlight       `json:"in_flight"`
	Upstreams []upstreamLive `json:"upstreams"`
}

type inFlight struct {
	Requests int64 `json:"requests"`
	Streams  int64 `json:"streams"`
}

type upstreamLive struct {
	Name          string       `json:"name"`
	Dialect       string       `json:"dialect"`
	WindowSeconds int          `json:"window_seconds"`
	Requests      int          `json:"requests"`
	Errors        int          `json:"errors"`
	ErrorRate     float64      `json:"error_rate"`
	LatencyMS     *percentiles `json:"latency_ms"`
	TTFTMS        *percentiles `json:"ttft_ms"`
}

type percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// percentilesOf reads p50, p90 and p99 off sorted durations; nil for none.
func percentilesOf(ds []time.Duration) *percentiles {
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	at := func(q float64) float64 {
		i := min(int(q*float64(len(ds))), len(ds)-1)
		return float64(ds[i].Microseconds()) / 1000
	}
	return &percentiles{P50: at(0.5), P90: at(0.9), P99: at(0.99)}
}

// adminStats answers the live figures of this replica: what is in flight,
// and every configured upstream's last five minutes.
func (s *Server) adminStats(*http.Request) (int, any, error) {
	now := time.Now()
	out := statsReply{Time: now.UTC(), InFlight: inFlight{Requests: s.now.requests.Load(), Streams: s.now.streams.Load()}, Upstreams: []upstreamLive{}}
	since := now.Add(-healthWindow).UnixNano()
	for _, u := range s.state().cfg.Upstreams {
		ul := upstreamLive{Name: u.Name, Dialect: u.Dialect, WindowSeconds: int(healthWindow / time.Second)}
		var durations, ttfts []time.Duration
		s.now.mu.Lock()
		if r := s.now.upstreams[u.Name]; r != nil {
			for i := range min(r.n, recentSize) {
				sm := r.ring[i]
				if sm.at < since {
					continue
				}
				ul.Requests++
				if sm.failed {
					ul.Errors++
				}
				durations = append(durations, sm.duration)
				if sm.ttft > 0 {
					ttfts = append(ttfts, sm.ttft)
				}
			}
		}
		s.now.mu.Unlock()
		if ul.Requests > 0 {
			ul.ErrorRate = float64(ul.Errors) / float64(ul.Requests)
		}
		ul.LatencyMS, ul.TTFTMS = percentilesOf(durations), percentilesOf(ttfts)
		out.Upstreams = append(out.Upstreams, ul)
	}
	return http.StatusOK, out, nil
}
