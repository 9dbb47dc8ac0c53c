package govern

import (
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/quota"
)

// NanosPerUSD is how many of the ledger's cost units make a US dollar.
const NanosPerUSD = 1e9

// periods maps the configuration's budget periods to the counters' and
// the canonical model's.
var periods = []struct {
	name  string
	q     quota.Period
	proto parleyv1.BudgetPeriod
}{
	{config.PerDay, quota.PeriodDay, parleyv1.BudgetPeriod_BUDGET_PERIOD_DAY},
	{config.PerWeek, quota.PeriodWeek, parleyv1.BudgetPeriod_BUDGET_PERIOD_WEEK},
	{config.PerMonth, quota.PeriodMonth, parleyv1.BudgetPeriod_BUDGET_PERIOD_MONTH},
}

// PeriodName is the configuration's name of a budget period.
func PeriodName(p parleyv1.BudgetPeriod) string {
	for _, x := range periods {
		if x.proto == p {
			return x.name
		}
	}
	return ""
}

// PeriodOf is the budget period of a configuration name; unspecified for
// an unknown one.
func PeriodOf(name string) parleyv1.BudgetPeriod {
	for _, x := range periods {
		if x.name == name {
			return x.proto
		}
	}
	return parleyv1.BudgetPeriod_BUDGET_PERIOD_UNSPECIFIED
}

// LimitsFromConfig converts a configuration key's limits to the canonical
// model's; nil stays nil.
func LimitsFromConfig(l *config.KeyLimits) *parleyv1.KeyLimits {
	if l == nil {
		return nil
	}
	out := &parleyv1.KeyLimits{}
	if l.RequestsPerMinute > 0 {
		out.RequestsPerMinute = proto.Int64(l.RequestsPerMinute)
	}
	if l.TokensPerMinute > 0 {
		out.TokensPerMinute = proto.Int64(l.TokensPerMinute)
	}
	if l.ConcurrentRequests > 0 {
		out.ConcurrentRequests = proto.Int64(l.ConcurrentRequests)
	}
	if b := l.Budget; b != nil {
		out.Budget = &parleyv1.Budget{Usd: b.USD, Tokens: b.Tokens, Per: PeriodOf(b.Per)}
	}
	return out
}

// CounterLimits converts canonical limits to the counters'; nil when they
// bound nothing, so that an unbounded key costs no counting at all.
func CounterLimits(l *parleyv1.KeyLimits) *quota.Limits {
	if l == nil {
		return nil
	}
	out := &quota.Limits{
		RequestsPerMinute: l.GetRequestsPerMinute(),
		TokensPerMinute:   l.GetTokensPerMinute(),
		Concurrent:        l.GetConcurrentRequests(),
	}
	if b := l.GetBudget(); b != nil {
		for _, x := range periods {
			if x.proto == b.GetPer() {
				out.Period = x.q
			}
		}
		if b.Usd != nil {
			out.BudgetNanos = int64(math.Round(b.GetUsd() * NanosPerUSD))
		}
		out.BudgetTokens = b.GetTokens()
	}
	if !out.Bounded() {
		return nil
	}
	return out
}

// Price is a model's price in nano-USD per token.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// PriceOf converts a configured pricing (USD per million tokens); nil
// costs nothing.
func PriceOf(p *config.Pricing) *Price {
	if p == nil {
		return nil
	}
	per := NanosPerUSD / 1e6
	read, write := p.Cached()
	out := &Price{Input: p.Input * per, Output: p.Output * per, CacheRead: read * per, CacheWrite: write * per}
	return out
}

// Cost is what a usage costs at this price, in nano-USD. Input tokens
// include the cached ones, which are priced apart.
func (p *Price) Cost(u *parleyv1.Usage) int64 {
	if p == nil || u == nil {
		return 0
	}
	read, write := u.GetCacheReadTokens(), u.GetCacheCreationTokens()
	plain := max(u.GetInputTokens()-read-write, 0)
	c := float64(plain)*p.Input + float64(read)*p.CacheRead + float64(write)*p.CacheWrite + float64(u.GetOutputTokens())*p.Output
	return int64(math.Round(c))
}

// Prices finds the price of a model by the name a client asked for: the
// configuration's model entry of that name, or the first glob entry that
// matches it, as the router picks routes.
type Prices struct {
	exact map[string]*Price
	globs []globPrice
}

type globPrice struct {
	pattern string
	price   *Price
}

// NewPrices collects the pricing of the configured models.
func NewPrices(models []config.Model) *Prices {
	ps := &Prices{exact: map[string]*Price{}}
	for _, m := range models {
		p := PriceOf(m.Pricing)
		if config.IsGlob(m.Name) {
			ps.globs = append(ps.globs, globPrice{m.Name, p})
		} else {
			ps.exact[m.Name] = p
		}
	}
	return ps
}

// Of returns a model's price; nil when it has none.
func (ps *Prices) Of(model string) *Price {
	if ps == nil {
		return nil
	}
	if p, ok := ps.exact[model]; ok {
		return p
	}
	for _, g := range ps.globs {
		if config.MatchGlob(g.pattern, model) {
			return g.price
		}
	}
	return nil
}

// Tokens is the input and output tokens of a usage, what token limits and
// token budgets count.
func Tokens(u *parleyv1.Usage) int64 { return u.GetInputTokens() + u.GetOutputTokens() }
