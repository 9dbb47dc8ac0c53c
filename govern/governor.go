package govern

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// Options configure a Governor.
type Options struct {
	// Counters count what keys use; nil counts in the process.
	Counters quota.Counters
	// Ledger keeps the usage records; nil keeps none.
	Ledger store.Ledger
	// FlushInterval is how often the ledger's records are written.
	FlushInterval time.Duration
	// Deny refuses requests whose limits cannot be checked (the counters
	// failed); by default they are let through.
	Deny     bool
	Registry prometheus.Registerer
	Logger   *slog.Logger
}

// Governor admits requests against their keys' limits and settles what
// they used.
type Governor struct {
	counters quota.Counters
	inline   bool // the counters answer at once (in the process)
	ledger   store.Ledger
	rec      *Recorder
	deny     bool
	log      *slog.Logger
	m        *metrics
	// seeded holds, per key and budget period start, that the counters
	// were given the ledger's spend of the period.
	seeded sync.Map
	// lastWarn is when counter failures were last logged (Unix nanos).
	lastWarn atomic.Int64
	settling sync.WaitGroup
	closed   sync.Once
	closeErr error
}

// New returns a Governor; Close ends its work.
func New(o Options) *Governor {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := o.Counters
	_, inline := c.(*quota.Memory)
	if c == nil {
		c, inline = quota.NewMemory(), true
	}
	reg := o.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	g := &Governor{counters: c, inline: inline, ledger: o.Ledger, deny: o.Deny, log: log, m: newMetrics(reg)}
	if o.Ledger != nil {
		g.rec = NewRecorder(o.Ledger, o.FlushInterval, log, g.m)
	}
	return g
}

// Ticket is an admitted request: what it took of its key's limits, to be
// settled when it ends. A nil Ticket (an unbounded key) settles nothing
// but the ledger line.
type Ticket struct {
	g       *Governor
	ask     quota.Ask
	grant   quota.Grant
	counted bool
}

// Admit checks a request of key k against its limits before anything is
// sent upstream. estimate gives the request's tokens, and is called only
// for a key with a token limit. A refusal is a RESOURCE_EXHAUSTED error
// naming the limit, with a ticket that holds nothing but settles the
// refused request's ledger line. The rate limits returned are for the reply's headers;
// nil when the key has no per-minute limit.
func (g *Governor) Admit(ctx context.Context, k *Key, id string, estimate func() int64) (*Ticket, *translate.RateLimits, error) {
	t := &Ticket{g: g, ask: quota.Ask{Key: k.Name, Limits: k.Limits, ID: id, Now: time.Now()}}
	l := k.Limits
	if !l.Bounded() {
		return t, nil, nil
	}
	if l.TokensPerMinute > 0 && estimate != nil {
		t.ask.Tokens = estimate()
	}
	// A counter that does not answer within a second is as good as
	// unreachable: the request is not held up longer.
	ctx, cancel := context.WithTimeout(ctx, counterTimeout)
	defer cancel()
	var sk seedKey
	if l.Period != quota.PeriodNone {
		var err error
		if sk, err = g.seed(ctx, k.Name, l.Period, t.ask.Now); err != nil && g.deny {
			return t, nil, translate.Status(parleyv1.Code_CODE_UNAVAILABLE, "the budget of this key cannot be checked right now; try again shortly")
		}
	}
	grant, err := g.counters.Admit(ctx, &t.ask)
	if err == nil && grant.BudgetUnheld {
		// The counters lost the period's count (Redis restarted, say):
		// the next request seeds it again from the ledger.
		g.seeded.Delete(sk)
	}
	if err != nil {
		g.m.checkErrors.Inc()
		g.warn("key limits cannot be checked", err)
		if g.deny {
			return t, nil, translate.Status(parleyv1.Code_CODE_UNAVAILABLE, "the limits of this key cannot be checked right now; try again shortly")
		}
		return t, nil, nil
	}
	t.grant = grant
	rl := rateLimits(l, &grant)
	if grant.Refused != "" {
		g.m.refusals.WithLabelValues(k.Name, grant.Refused).Inc()
		quota := grant.Refused == quotaLimit
		return t, rl, translate.LimitExceeded(grant.Refused, k.Name, grant.RetryAfter, quota, limitDetail(l, grant.Refused))
	}
	t.counted = true
	return t, rl, nil
}

const quotaLimit = quota.LimitBudget

// limitDetail says what the refused limit is.
func limitDetail(l *quota.Limits, limit string) string {
	switch limit {
	case quota.LimitRequests:
		return itoa(l.RequestsPerMinute) + " requests per minute"
	case quota.LimitTokens:
		return itoa(l.TokensPerMinute) + " tokens per minute"
	case quota.LimitConcurrent:
		return itoa(l.Concurrent) + " requests at once"
	case quota.LimitBudget:
		per := map[quota.Period]string{quota.PeriodDay: "day", quota.PeriodWeek: "week", quota.PeriodMonth: "month"}[l.Period]
		if l.BudgetTokens > 0 {
			return "its budget of " + itoa(l.BudgetTokens) + " tokens per " + per + " is spent"
		}
		return "its budget of $" + usd(l.BudgetNanos) + " per " + per + " is spent"
	}
	return ""
}

// rateLimits are the figures of the reply's rate-limit headers.
func rateLimits(l *quota.Limits, g *quota.Grant) *translate.RateLimits {
	if l.RequestsPerMinute <= 0 && l.TokensPerMinute <= 0 {
		return nil
	}
	rl := &translate.RateLimits{}
	if l.RequestsPerMinute > 0 {
		rl.Requests = translate.RateWindow{Limit: l.RequestsPerMinute, Remaining: g.RequestsRemaining, Reset: g.RequestsReset}
		if g.Refused == quota.LimitRequests {
			rl.Requests.Remaining, rl.Requests.Reset = 0, max(g.RetryAfter, g.RequestsReset)
		}
	}
	if l.TokensPerMinute > 0 {
		rl.Tokens = translate.RateWindow{Limit: l.TokensPerMinute, Remaining: g.TokensRemaining, Reset: g.TokensReset}
		if g.Refused == quota.LimitTokens {
			rl.Tokens.Reset = max(g.RetryAfter, g.TokensReset)
		}
	}
	return rl
}

// counterTimeout bounds each call to the counters on a request's path.
const counterTimeout = time.Second

// seedKey names a budget period of a key.
type seedKey struct {
	key    string
	period quota.Period
	start  int64
}

// seed gives the counters the ledger's spend of a budget period, once per
// key and period in this process (and again when the counters report they
// lost it): only a seed starts a period's count, so counters that start
// empty (a restart) or lose their data (Redis) never count a period from
// zero in its middle. Without a ledger the count starts at zero.
func (g *Governor) seed(ctx context.Context, key string, p quota.Period, now time.Time) (seedKey, error) {
	start, _ := p.Bounds(now)
	sk := seedKey{key, p, start.Unix()}
	if _, done := g.seeded.Load(sk); done {
		return sk, nil
	}
	var cost, tokens int64
	if g.ledger != nil {
		var err error
		if cost, tokens, err = g.spent(ctx, key, start); err != nil {
			g.warn("the ledger could not be read to start a budget's count", err)
			return sk, err
		}
	}
	if err := g.counters.SeedBudget(ctx, key, p, now, cost, tokens); err != nil {
		g.warn("a budget's count could not be started", err)
		return sk, err
	}
	g.seeded.Store(sk, true)
	return sk, nil
}

// spent is what a key spent since a time: what the ledger holds, and the
// records not yet written (this process's own). A write of the recorder
// cannot fall between the two reads, which would count its records twice.
func (g *Governor) spent(ctx context.Context, key string, since time.Time) (cost, tokens int64, err error) {
	if g.rec != nil {
		g.rec.writeMu.Lock()
		defer g.rec.writeMu.Unlock()
	}
	if cost, tokens, err = g.ledger.Spent(ctx, key, since); err != nil {
		return 0, 0, err
	}
	if g.rec != nil {
		c, t := g.rec.pendingSpend(key, since)
		cost, tokens = cost+c, tokens+t
	}
	return cost, tokens, nil
}

// warn logs a failure of the counters or the ledger at most once a minute.
func (g *Governor) warn(msg string, err error) {
	now := time.Now().UnixNano()
	last := g.lastWarn.Load()
	if now-last < int64(time.Minute) || !g.lastWarn.CompareAndSwap(last, now) {
		return
	}
	action := "requests are let through"
	if g.deny {
		action = "requests are refused"
	}
	g.log.Warn(msg, "error", err, "then", action)
}

// End is what a finished request used, for the counters and the ledger.
type End struct {
	RequestID string
	Model     string
	Upstream  string
	Dialect   string
	Operation string
	Status    int
	Usage     *parleyv1.Usage
	// Price is the model's; nil costs nothing.
	Price    *Price
	Start    time.Time
	Duration time.Duration
	TTFT     time.Duration
}

// Settle charges what the request used to its key's counters, counts it in
// the metrics and adds its line to the ledger. The counters of a shared
// server are settled off the request's goroutine, so that the reply's end
// does not wait on a round trip.
func (t *Ticket) Settle(e End) {
	if t == nil {
		return
	}
	g := t.g
	cost := e.Price.Cost(e.Usage)
	tokens := Tokens(e.Usage)
	if t.counted {
		used := quota.Used{Tokens: tokens, CostNanos: cost}
		if g.inline {
			_ = g.counters.Settle(context.Background(), &t.ask, &t.grant, used)
		} else {
			g.settling.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := g.counters.Settle(ctx, &t.ask, &t.grant, used); err != nil {
					g.m.checkErrors.Inc()
					g.warn("what a request used could not be counted", err)
				}
			})
		}
	}
	key := t.ask.Key
	if e.Usage != nil {
		g.m.tokens.WithLabelValues(key, e.Model, "input").Add(float64(e.Usage.GetInputTokens()))
		g.m.tokens.WithLabelValues(key, e.Model, "output").Add(float64(e.Usage.GetOutputTokens()))
	}
	if cost > 0 {
		g.m.cost.WithLabelValues(key, e.Model).Add(float64(cost) / NanosPerUSD)
	}
	if g.rec != nil {
		u := e.Usage
		g.rec.Add(store.UsageRecord{
			Time: e.Start, RequestID: e.RequestID, Key: key, Model: clean(e.Model), Upstream: e.Upstream,
			Dialect: e.Dialect, Operation: e.Operation, Status: e.Status,
			InputTokens: u.GetInputTokens(), OutputTokens: u.GetOutputTokens(),
			CacheReadTokens: u.GetCacheReadTokens(), CacheWriteTokens: u.GetCacheCreationTokens(),
			ReasoningTokens: u.GetReasoningTokens(), CostNanos: cost, Duration: e.Duration, TTFT: e.TTFT,
		})
	}
}

// Record adds a ledger line for work that no limit admits (a music task
// query, say) by key name.
func (g *Governor) Record(key string, e End) {
	(&Ticket{g: g, ask: quota.Ask{Key: key}}).Settle(e)
}

// Flush writes the ledger's pending records now.
func (g *Governor) Flush(ctx context.Context) error {
	if g.rec == nil {
		return nil
	}
	return g.rec.Flush(ctx)
}

// Close waits for settlements under way, writes the ledger's pending
// records and stops the counters' background work.
// Closing again does nothing.
func (g *Governor) Close(ctx context.Context) error {
	g.closed.Do(func() {
		g.settling.Wait()
		if g.rec != nil {
			g.closeErr = g.rec.Close(ctx)
		}
		if err := g.counters.Close(); g.closeErr == nil {
			g.closeErr = err
		}
	})
	return g.closeErr
}

// StatusOf is the HTTP status a ledger line records for an error.
func StatusOf(e *parleyv1.Error) int {
	if e == nil {
		return http.StatusOK
	}
	return translate.HTTPStatusOf(e)
}

// clean makes a client's text fit for the ledger: valid UTF-8 without
// control characters (PostgreSQL refuses NUL in text, which would hold up
// every record behind it), at most 200 bytes.
func clean(s string) string {
	ok := len(s) <= 200 && utf8.ValidString(s)
	for i := 0; ok && i < len(s); i++ {
		ok = s[i] >= 0x20 && s[i] != 0x7f
	}
	if ok {
		return s
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	for len(s) > 200 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}
