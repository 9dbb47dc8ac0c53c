package quota

import (
	"context"
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// shards is the number of independently locked parts of Memory's map of
// keys; a power of two so that the shard is a mask of the hash.
const shards = 64

// Memory keeps the counters in the process. Each key has its own small
// state under its own mutex, so requests of different keys never wait for
// each other, and finding a key seen before takes a read lock of one of 64
// shards and allocates nothing.
//
// Keys are kept for the life of the process: a fleet has as many as it has
// configured client keys, about 1.5 kB each.
type Memory struct {
	seed   maphash.Seed
	shards [shards]memoryShard
}

type memoryShard struct {
	mu   sync.RWMutex
	keys map[string]*keyState
	// Keeps the mutexes of neighbouring shards off one cache line.
	_ [64 - 32]byte
}

// keyState is the counters of one key.
type keyState struct {
	mu sync.Mutex
	// buckets is a ring of one-second buckets; second s lives at s mod 60
	// and a bucket holding an older second counts nothing and is reused.
	buckets  [window]bucket
	inflight int64
	// budgets holds the spend of the current period of each Period kind,
	// at index Period-1.
	budgets [PeriodMonth]spend
}

type bucket struct {
	second, requests, tokens int64
}

// spend is what a budget period has spent; start (Unix ms) names the
// period, so a new period starts from zero.
type spend struct {
	held         bool
	start        int64
	cost, tokens int64
}

var _ Counters = (*Memory)(nil)

// NewMemory returns counters kept in the process.
func NewMemory() *Memory {
	m := &Memory{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].keys = make(map[string]*keyState)
	}
	return m
}

// state returns the counters of key, creating them on first use.
func (m *Memory) state(key string) *keyState {
	sh := &m.shards[maphash.String(m.seed, key)&(shards-1)]
	sh.mu.RLock()
	st := sh.keys[key]
	sh.mu.RUnlock()
	if st != nil {
		return st
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if st = sh.keys[key]; st == nil {
		st = new(keyState)
		sh.keys[key] = st
	}
	return st
}

// Admit implements Counters. Without any limit it admits at once and
// counts nothing. A request whose estimate alone exceeds tokens_per_minute
// is admitted into an empty window, since it could never pass otherwise.
func (m *Memory) Admit(_ context.Context, a *Ask) (Grant, error) {
	l := a.Limits
	if !l.Bounded() {
		return Grant{}, nil
	}
	if err := check(a); err != nil {
		return Grant{}, err
	}
	var start, end int64
	if budgeted(l.Period) {
		s, e := l.Period.Bounds(a.Now)
		start, end = s.UnixMilli(), e.UnixMilli()
	}
	st := m.state(a.Key)
	st.mu.Lock()
	v := st.admit(a, start, end)
	st.mu.Unlock()
	return v.grant(l), nil
}

// admit checks and takes under st.mu; start and end bound the budget's
// period in Unix ms.
func (st *keyState) admit(a *Ask, start, end int64) verdict {
	l := a.Limits
	tokens := max(a.Tokens, 0)
	nowMs := a.Now.UnixMilli()
	sec := floorDiv(nowMs, 1000)
	oldest := sec - (window - 1)

	// Seconds newer than now count too: callers' clocks are read before
	// the lock, so a request of the second before may come after one of
	// this second.
	var requests, tokensUsed int64
	newestReq, newestTok := int64(math.MinInt64), int64(math.MinInt64)
	for i := range st.buckets {
		b := &st.buckets[i]
		if b.second < oldest {
			continue
		}
		if b.requests > 0 {
			requests += b.requests
			newestReq = max(newestReq, b.second)
		}
		if b.tokens > 0 {
			tokensUsed += b.tokens
			newestTok = max(newestTok, b.second)
		}
	}

	v := verdict{requests: requests, tokens: tokensUsed}
	if start != end {
		sp := &st.budgets[l.Period-1]
		v.unheld = !sp.held || sp.start != start
	}
	switch {
	case l.Concurrent > 0 && st.inflight >= l.Concurrent:
		v.code = codeConcurrent
	case l.RequestsPerMinute > 0 && requests >= l.RequestsPerMinute:
		v.code = codeRequests
		v.retryMs = st.retryMs(nowMs, oldest, requests-l.RequestsPerMinute+1, false)
	case l.TokensPerMinute > 0 && tokensUsed > 0 && tokensUsed+tokens > l.TokensPerMinute:
		v.code = codeTokens
		need := min(tokensUsed, tokensUsed+tokens-l.TokensPerMinute)
		v.retryMs = st.retryMs(nowMs, oldest, need, true)
	case start != end && st.overBudget(l, start):
		v.code = codeBudget
		v.retryMs = end - nowMs
	default:
		b := &st.buckets[floorMod(sec, window)]
		if b.second < sec {
			*b = bucket{second: sec}
		}
		// A bucket of a later second (a clock far behind) takes the
		// request too, which errs toward refusing.
		b.requests++
		b.tokens += tokens
		v.requests++
		newestReq = max(newestReq, b.second)
		if tokens > 0 {
			v.tokens += tokens
			newestTok = max(newestTok, b.second)
		}
		if l.Concurrent > 0 {
			st.inflight++
		}
		v.second = b.second
	}
	if newestReq != math.MinInt64 {
		v.requestsResetMs = resetMs(newestReq, nowMs)
	}
	if newestTok != math.MinInt64 {
		v.tokensResetMs = resetMs(newestTok, nowMs)
	}
	return v
}

// retryMs is the time from nowMs until the oldest seconds of the window
// holding need requests (or tokens) have left it.
func (st *keyState) retryMs(nowMs, oldest, need int64, tokens bool) int64 {
	var sum int64
	// A bucket of second s sits where s-60 would; walking two minutes of
	// seconds meets every counted bucket once, oldest first.
	for s := oldest; s < oldest+2*window; s++ {
		b := &st.buckets[floorMod(s, window)]
		if b.second != s {
			continue
		}
		if tokens {
			sum += b.tokens
		} else {
			sum += b.requests
		}
		if sum >= need {
			return resetMs(s, nowMs)
		}
	}
	return window * 1000
}

// overBudget reports whether the period starting at start has spent the
// budget of l.
func (st *keyState) overBudget(l *Limits, start int64) bool {
	sp := &st.budgets[l.Period-1]
	if !sp.held || sp.start != start {
		return false
	}
	return (l.BudgetNanos > 0 && sp.cost >= l.BudgetNanos) ||
		(l.BudgetTokens > 0 && sp.tokens >= l.BudgetTokens)
}

// add counts spend toward the period of kind p starting at start, when
// that period's count is held; otherwise the spend is dropped, for the
// ledger to bring in at the period's seed (SeedBudget).
func (st *keyState) add(p Period, start, cost, tokens int64) {
	if sp := &st.budgets[p-1]; sp.held && sp.start == start {
		sp.cost += cost
		sp.tokens += tokens
	}
}

// Settle implements Counters. The spend counts toward the budget period
// holding a.Now, the request's start, so that a request running across
// midnight is charged to the day it was admitted in (as the ledger dates
// it). A refused grant, or an ask without limits, settles nothing. Settle
// must be called once per admitted request.
func (m *Memory) Settle(_ context.Context, a *Ask, g *Grant, used Used) error {
	l := a.Limits
	if !l.Bounded() || g.Refused != "" {
		return nil
	}
	if a.Key == "" {
		return errNoKey
	}
	cost, tokens := max(used.CostNanos, 0), max(used.Tokens, 0)
	var start int64
	charge := budgeted(l.Period) && (cost != 0 || tokens != 0)
	if charge {
		s, _ := l.Period.Bounds(a.Now)
		start = s.UnixMilli()
	}
	st := m.state(a.Key)
	st.mu.Lock()
	defer st.mu.Unlock()
	if d := tokens - max(a.Tokens, 0); d != 0 {
		// The bucket still holds the reservation only while it is
		// labelled with its second; once reused the second has left the
		// window and there is nothing to correct.
		if b := &st.buckets[floorMod(g.Second, window)]; b.second == g.Second {
			b.tokens = max(0, b.tokens+d)
		}
	}
	if l.Concurrent > 0 && st.inflight > 0 {
		st.inflight--
	}
	if charge {
		st.add(l.Period, start, cost, tokens)
	}
	return nil
}

// SeedBudget implements Counters.
func (m *Memory) SeedBudget(_ context.Context, key string, p Period, now time.Time, costNanos, tokens int64) error {
	if !budgeted(p) {
		return nil
	}
	if key == "" {
		return errNoKey
	}
	s, _ := p.Bounds(now)
	start := s.UnixMilli()
	st := m.state(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	if sp := &st.budgets[p-1]; !sp.held || sp.start < start {
		*sp = spend{held: true, start: start, cost: costNanos, tokens: tokens}
	}
	return nil
}

// Close implements Counters; Memory has no background work.
func (m *Memory) Close() error { return nil }
