// Package quota counts what client keys use against their limits: requests
// and tokens per minute, requests in flight, and a budget per day, week or
// month. Counters is the contract; Memory keeps the counts in the process
// (one replica, or a fleet with per-replica limits) and Redis in a Redis
// server that a fleet of replicas shares, one round trip per admission.
//
// Minutes are sliding windows of sixty one-second buckets, so that a limit
// of 60 requests per minute lets exactly 60 through in any sixty seconds,
// across replicas too. Tokens are reserved at admission by an estimate and
// settled to the upstream's reported usage when the request ends. Budgets
// count spend (nano-USD) and tokens per calendar period in UTC.
package quota

import (
	"context"
	"time"
)

// The limits, as configuration and error messages name them.
const (
	LimitRequests   = "requests_per_minute"
	LimitTokens     = "tokens_per_minute"
	LimitConcurrent = "concurrent_requests"
	LimitBudget     = "budget"
)

// Period is the calendar period of a budget, in UTC.
type Period int

// The periods.
const (
	PeriodNone Period = iota
	PeriodDay
	// PeriodWeek begins on Monday.
	PeriodWeek
	PeriodMonth
)

// Bounds returns the start and the end of the period holding t, in UTC.
func (p Period) Bounds(t time.Time) (start, end time.Time) {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch p {
	case PeriodDay:
		return day, day.AddDate(0, 0, 1)
	case PeriodWeek:
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		start := day.AddDate(0, 0, -back)
		return start, start.AddDate(0, 0, 7)
	case PeriodMonth:
		start := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	return time.Time{}, time.Time{}
}

// Limits bound one key. A zero field does not bound.
type Limits struct {
	RequestsPerMinute int64
	TokensPerMinute   int64
	Concurrent        int64
	// The budget: spend in nano-USD or tokens, per Period. Period is
	// PeriodNone when there is no budget.
	BudgetNanos  int64
	BudgetTokens int64
	Period       Period
}

// Bounded reports whether any limit is set.
func (l *Limits) Bounded() bool {
	return l != nil && (l.RequestsPerMinute > 0 || l.TokensPerMinute > 0 || l.Concurrent > 0 || l.Period != PeriodNone)
}

// Ask is one request asking to be admitted.
type Ask struct {
	// Key names the key; counters are kept per name.
	Key    string
	Limits *Limits
	// Tokens is the estimate of the request's tokens, reserved against
	// tokens_per_minute until the request settles.
	Tokens int64
	// ID is the request's id, which holds its concurrency slot.
	ID  string
	Now time.Time
}

// Grant is the answer to an Ask.
type Grant struct {
	// Refused names the limit that refused the request; empty when it
	// was admitted and holds what it took.
	Refused string
	// RetryAfter is, for a refusal, how long until the refused limit may
	// let the request through.
	RetryAfter time.Duration
	// What remains after this admission, and how long until the window is
	// whole again, for the rate-limit headers of the replies; set for the
	// limits the key has.
	RequestsRemaining int64
	RequestsReset     time.Duration
	TokensRemaining   int64
	TokensReset       time.Duration
	// Second is the Unix second the request's tokens were reserved in.
	Second int64
	// BudgetUnheld says the counters hold no count of the budget's
	// period: it was never seeded (or Redis lost it), so the budget could
	// not be checked. The caller seeds it (SeedBudget) from the ledger.
	BudgetUnheld bool
}

// Used is what a finished request consumed.
type Used struct {
	// Tokens is its input and output tokens by the upstream's usage.
	Tokens int64
	// CostNanos is its cost by the model's pricing.
	CostNanos int64
}

// Counters count what keys use. Implementations are safe for concurrent
// use.
type Counters interface {
	// Admit checks every limit of a.Limits at once. When all let the
	// request through it takes one request of the minute, a.Tokens tokens
	// of the minute and, with a concurrency limit, a slot; when one
	// refuses it takes nothing and the grant names it. A budget refuses
	// once the period's spend has reached it.
	Admit(ctx context.Context, a *Ask) (Grant, error)
	// Settle ends an admitted request: its reserved tokens are replaced
	// by the tokens used, in the second they were reserved in; the used
	// tokens and cost count toward the budget's period; the slot is
	// freed.
	Settle(ctx context.Context, a *Ask, g *Grant, used Used) error
	// SeedBudget starts the count of a key's budget period that the
	// counters do not hold yet (after a restart) at what the ledger says
	// was spent; a count already held is left as it is. Only a seed
	// starts a period's count: Settle adds to a count that is held and
	// drops spend otherwise (the ledger has it, and the next seed reads
	// it), so that a count never starts from zero in the middle of a
	// period.
	SeedBudget(ctx context.Context, key string, p Period, now time.Time, costNanos, tokens int64) error
	// Close stops the counters' background work.
	Close() error
}
