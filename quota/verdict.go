package quota

import (
	"errors"
	"time"
)

// window is the number of one-second buckets of a minute.
const window = 60

// The outcomes of the checks, as the Redis script returns them; the order
// of the refusals is the order the limits are checked in.
const (
	codeAdmitted = iota
	codeConcurrent
	codeRequests
	codeTokens
	codeBudget
)

var refusals = [...]string{
	codeAdmitted:   "",
	codeConcurrent: LimitConcurrent,
	codeRequests:   LimitRequests,
	codeTokens:     LimitTokens,
	codeBudget:     LimitBudget,
}

// concurrentRetry is the Retry-After of a concurrency refusal: when a slot
// frees cannot be known, and requests in flight are usually short.
const concurrentRetry = time.Second

var (
	errNoKey = errors.New("quota: the ask names no key")
	errNoID  = errors.New("quota: a concurrency limit needs the request's id")
)

// verdict is what the checks of one Ask found, in milliseconds, before it
// is turned into a Grant. Both implementations fill it the same way, so that
// their grants agree to the millisecond.
type verdict struct {
	code    int64
	retryMs int64
	// The requests and tokens counted in the window, this request's
	// included when admitted, and the time until the newest of them leaves
	// the window (zero when none is counted).
	requests, requestsResetMs int64
	tokens, tokensResetMs     int64
	second                    int64
	// unheld says the budget's period has no count.
	unheld bool
}

// grant turns the verdict into the Grant for limits l.
func (v *verdict) grant(l *Limits) Grant {
	g := Grant{BudgetUnheld: v.unheld}
	if l.RequestsPerMinute > 0 {
		g.RequestsRemaining = max(0, l.RequestsPerMinute-v.requests)
		g.RequestsReset = time.Duration(v.requestsResetMs) * time.Millisecond
	}
	if l.TokensPerMinute > 0 {
		g.TokensRemaining = max(0, l.TokensPerMinute-v.tokens)
		g.TokensReset = time.Duration(v.tokensResetMs) * time.Millisecond
	}
	if v.code == codeAdmitted {
		g.Second = v.second
		return g
	}
	g.Refused = refusals[v.code]
	switch v.code {
	case codeRequests, codeTokens:
		// The buckets are whole seconds, so no finer answer is true.
		g.RetryAfter = time.Duration(ceilDiv(v.retryMs, 1000)) * time.Second
	case codeConcurrent:
		g.RetryAfter = concurrentRetry
	default:
		g.RetryAfter = time.Duration(v.retryMs) * time.Millisecond
	}
	return g
}

// check validates an ask whose limits are bounded.
func check(a *Ask) error {
	if a.Key == "" {
		return errNoKey
	}
	if a.Limits.Concurrent > 0 && a.ID == "" {
		return errNoID
	}
	return nil
}

// budgeted reports whether p is a period a budget can be counted in.
func budgeted(p Period) bool {
	return p >= PeriodDay && p <= PeriodMonth
}

// resetMs is the time from nowMs until second newest leaves the window.
func resetMs(newest, nowMs int64) int64 {
	return (newest+window)*1000 - nowMs
}

// floorDiv divides rounding toward negative infinity, so that instants
// before 1970 fall in the right second too.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// floorMod is the remainder of floorDiv, never negative for b > 0.
func floorMod(a, b int64) int64 {
	return a - floorDiv(a, b)*b
}

// ceilDiv divides rounding toward positive infinity.
func ceilDiv(a, b int64) int64 {
	return -floorDiv(-a, b)
}
