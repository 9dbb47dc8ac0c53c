package quota

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The contract of Counters, run against every implementation: Memory, and
// Redis when a server answers at redisAddr.

// base is the fake clock's start: a Wednesday noon, on a whole second.
var base = time.Date(2031, time.June, 4, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return base.Add(d) }

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func sec(n int64) time.Duration { return time.Duration(n) * time.Second }

// admit asks and fails the test unless the ask is admitted.
func admit(t *testing.T, c counters, a *Ask) Grant {
	t.Helper()
	g, err := c.Admit(context.Background(), a)
	if err != nil {
		t.Fatalf("Admit(%s at %v): %v", a.Key, a.Now.Sub(base), err)
	}
	if g.Refused != "" {
		t.Fatalf("Admit(%s at %v) refused by %s (retry after %v), want admitted", a.Key, a.Now.Sub(base), g.Refused, g.RetryAfter)
	}
	return g
}

// refuse asks and fails the test unless limit refuses with retry, and
// unless the refusal took nothing.
func refuse(t *testing.T, c counters, a *Ask, limit string, retry time.Duration) Grant {
	t.Helper()
	ctx := context.Background()
	before, err := c.usage(ctx, a.Key, a.Now)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Admit(ctx, a)
	if err != nil {
		t.Fatalf("Admit(%s at %v): %v", a.Key, a.Now.Sub(base), err)
	}
	if g.Refused != limit || g.RetryAfter != retry {
		t.Fatalf("Admit(%s at %v) = refused %q retry after %v, want refused %q retry after %v",
			a.Key, a.Now.Sub(base), g.Refused, g.RetryAfter, limit, retry)
	}
	after, err := c.usage(ctx, a.Key, a.Now)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the refusal took something: usage %+v, was %+v", after, before)
	}
	return g
}

func settle(t *testing.T, c counters, a *Ask, g Grant, used Used) {
	t.Helper()
	if err := c.Settle(context.Background(), a, &g, used); err != nil {
		t.Fatalf("Settle(%s): %v", a.Key, err)
	}
}

func checkUsage(t *testing.T, c counters, key string, now time.Time, want usage) {
	t.Helper()
	got, err := c.usage(context.Background(), key, now)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("usage of %s at %v = %+v, want %+v", key, now.Sub(base), got, want)
	}
}

// checkGrant compares the remaining counts and resets of an admission.
func checkGrant(t *testing.T, g Grant, reqRemaining int64, reqReset time.Duration, tokRemaining int64, tokReset time.Duration) {
	t.Helper()
	if g.RequestsRemaining != reqRemaining || g.RequestsReset != reqReset ||
		g.TokensRemaining != tokRemaining || g.TokensReset != tokReset {
		t.Fatalf("grant requests %d reset %v, tokens %d reset %v; want requests %d reset %v, tokens %d reset %v",
			g.RequestsRemaining, g.RequestsReset, g.TokensRemaining, g.TokensReset,
			reqRemaining, reqReset, tokRemaining, tokReset)
	}
}

func TestRequestsPerMinute(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		l := &Limits{RequestsPerMinute: 60}
		ask := func(now time.Duration) *Ask { return &Ask{Key: "k", Limits: l, Now: at(now)} }
		// One a second, the last half way through second 59.
		for i := range int64(60) {
			now := sec(i)
			if i == 59 {
				now = ms(59_500)
			}
			g := admit(t, c, ask(now))
			checkGrant(t, g, 59-i, sec(60+i)-now, 0, 0)
			if want := base.Unix() + i; g.Second != want {
				t.Fatalf("admission %d reserved in second %d, want %d", i, g.Second, want)
			}
		}
		// Second 0 leaves the window at 60.0s.
		g := refuse(t, c, ask(ms(59_900)), LimitRequests, time.Second)
		checkGrant(t, g, 0, ms(59_100), 0, 0)
		checkUsage(t, c, "k", at(ms(59_900)), usage{requests: 60})
		g = admit(t, c, ask(sec(60)))
		checkGrant(t, g, 0, sec(60), 0, 0)
		// Second 1 leaves at 61.0s.
		refuse(t, c, ask(ms(60_500)), LimitRequests, time.Second)
		admit(t, c, ask(ms(61_000)))
		refuse(t, c, ask(ms(61_001)), LimitRequests, time.Second)
	})
}

func TestRequestsPerMinuteBurst(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		l := &Limits{RequestsPerMinute: 5}
		ask := func(now time.Duration) *Ask { return &Ask{Key: "k", Limits: l, Now: at(now)} }
		for range 5 {
			admit(t, c, ask(ms(200)))
		}
		refuse(t, c, ask(ms(200)), LimitRequests, sec(60))
		refuse(t, c, ask(sec(30)), LimitRequests, sec(30))
		refuse(t, c, ask(ms(30_001)), LimitRequests, sec(30))
		refuse(t, c, ask(ms(59_999)), LimitRequests, sec(1))
		g := admit(t, c, ask(sec(60)))
		checkGrant(t, g, 4, sec(60), 0, 0)
		checkUsage(t, c, "k", at(sec(60)), usage{requests: 1})
	})
}

// TestRequestsSlidingWindow checks at random instants that an ask is
// admitted exactly when fewer than the limit were admitted in the seconds
// of its window, against a plain list of admissions.
func TestRequestsSlidingWindow(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		const limit = 7
		l := &Limits{RequestsPerMinute: limit}
		rng := rand.New(rand.NewPCG(1, 2))
		var admitted []int64 // the seconds of the admissions
		now := int64(0)
		for range 1000 {
			now += rng.Int64N(2500)
			second := floorDiv(now, 1000)
			var counted int64
			oldestCounted := int64(-1)
			for _, s := range admitted {
				if s >= second-59 {
					counted++
					if oldestCounted < 0 {
						oldestCounted = s
					}
				}
			}
			a := &Ask{Key: "k", Limits: l, Now: at(ms(now))}
			if counted < limit {
				admit(t, c, a)
				admitted = append(admitted, second)
				continue
			}
			// Exactly one must leave: the oldest counted.
			retry := time.Duration(ceilDiv((oldestCounted+60)*1000-now, 1000)) * time.Second
			refuse(t, c, a, LimitRequests, retry)
		}
		if len(admitted) < 100 {
			t.Fatalf("only %d admitted; the walk does not test much", len(admitted))
		}
	})
}

func TestTokensPerMinute(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		l := &Limits{TokensPerMinute: 1000}
		ask := func(now time.Duration, tokens int64) *Ask {
			return &Ask{Key: "k", Limits: l, Tokens: tokens, Now: at(now)}
		}
		g := admit(t, c, ask(0, 600))
		checkGrant(t, g, 0, 0, 400, sec(60))
		g = admit(t, c, ask(sec(10), 300))
		checkGrant(t, g, 0, 0, 100, sec(60))
		// 200 more need 100 to leave: second 0 leaves at 60s.
		g = refuse(t, c, ask(sec(20), 200), LimitTokens, sec(40))
		checkGrant(t, g, 0, 0, 100, sec(50))
		// 2000 need the window empty: second 10 leaves at 70s.
		refuse(t, c, ask(sec(20), 2000), LimitTokens, sec(50))
		// Up to the limit exactly.
		admit(t, c, ask(ms(20_500), 100))
		// Second 0 leaves in 39.5s, rounded up.
		refuse(t, c, ask(ms(20_500), 1), LimitTokens, sec(40))
		// A request without an estimate passes a full window.
		admit(t, c, ask(sec(21), 0))
		checkUsage(t, c, "k", at(sec(21)), usage{requests: 4, tokens: 1000})
		// At 70s seconds 0 and 10 have left: 100 counted.
		g = admit(t, c, ask(sec(70), 900))
		checkGrant(t, g, 0, 0, 0, sec(60))
		// A request larger than the limit passes alone into an empty
		// window, and only then.
		// At 81s second 20 has left too: the 900 of second 70 must go.
		refuse(t, c, ask(sec(81), 5000), LimitTokens, sec(49))
		g = admit(t, c, ask(sec(130), 5000))
		checkGrant(t, g, 0, 0, 0, sec(60))
		refuse(t, c, ask(sec(131), 1), LimitTokens, sec(59))
		// Over the limit, even a request without an estimate waits.
		refuse(t, c, ask(sec(131), 0), LimitTokens, sec(59))
	})
}

func TestTokensSettle(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		l := &Limits{TokensPerMinute: 1000}
		ask := func(now time.Duration, tokens int64) *Ask {
			return &Ask{Key: "k", Limits: l, Tokens: tokens, Now: at(now)}
		}
		a := ask(0, 1000)
		g := admit(t, c, a)
		refuse(t, c, ask(sec(1), 10), LimitTokens, sec(59))
		// Used 10 of the 1000 reserved: 990 free at once.
		settle(t, c, a, g, Used{Tokens: 10})
		checkUsage(t, c, "k", at(sec(1)), usage{requests: 1, tokens: 10})
		b := ask(sec(1), 990)
		gb := admit(t, c, b)
		checkGrant(t, gb, 0, 0, 0, sec(60))
		// Used more than estimated: the window holds what was used, in
		// the second it was reserved in.
		settle(t, c, b, gb, Used{Tokens: 1500})
		checkUsage(t, c, "k", at(sec(2)), usage{requests: 2, tokens: 1510})
		checkUsage(t, c, "k", at(sec(60)), usage{requests: 1, tokens: 1500})

		// Never below zero, even settled twice.
		d := &Ask{Key: "d", Limits: l, Tokens: 100, Now: at(0)}
		gd := admit(t, c, d)
		settle(t, c, d, gd, Used{})
		settle(t, c, d, gd, Used{})
		checkUsage(t, c, "d", at(0), usage{requests: 1})
		e := &Ask{Key: "d", Limits: l, Tokens: 1000, Now: at(0)}
		admit(t, c, e)

		// A settle after its second left the window changes nothing.
		f := &Ask{Key: "f", Limits: l, Tokens: 100, Now: at(0)}
		gf := admit(t, c, f)
		admit(t, c, &Ask{Key: "f", Limits: l, Tokens: 50, Now: at(sec(61))})
		settle(t, c, f, gf, Used{Tokens: 5000})
		checkUsage(t, c, "f", at(sec(61)), usage{requests: 1, tokens: 50})
		admit(t, c, &Ask{Key: "f", Limits: l, Tokens: 950, Now: at(sec(62))})
	})
}

func TestConcurrentRequests(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		l := &Limits{Concurrent: 2}
		ask := func(id string) *Ask { return &Ask{Key: "k", Limits: l, ID: id, Now: at(0)} }
		a, b := ask("a"), ask("b")
		ga := admit(t, c, a)
		checkGrant(t, ga, 0, 0, 0, 0)
		gb := admit(t, c, b)
		checkUsage(t, c, "k", at(0), usage{requests: 2, slots: 2})
		g := refuse(t, c, ask("c"), LimitConcurrent, time.Second)
		checkGrant(t, g, 0, 0, 0, 0)
		settle(t, c, a, ga, Used{})
		checkUsage(t, c, "k", at(0), usage{requests: 2, slots: 1})
		gc := admit(t, c, ask("c"))
		refuse(t, c, ask("d"), LimitConcurrent, time.Second)
		settle(t, c, b, gb, Used{})
		settle(t, c, ask("c"), gc, Used{})
		checkUsage(t, c, "k", at(0), usage{requests: 3})
	})
}

// TestRefusalOrder checks that when several limits would refuse, the first
// of concurrency, requests, tokens and budget names the refusal.
func TestRefusalOrder(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		l := &Limits{RequestsPerMinute: 1, TokensPerMinute: 10, Concurrent: 1, BudgetNanos: 1, Period: PeriodDay}
		a := &Ask{Key: "a", Limits: l, Tokens: 10, ID: "1", Now: at(0)}
		g := admit(t, c, a)
		refuse(t, c, &Ask{Key: "a", Limits: l, Tokens: 10, ID: "2", Now: at(sec(1))}, LimitConcurrent, time.Second)
		settle(t, c, a, g, Used{Tokens: 10, CostNanos: 1})
		refuse(t, c, &Ask{Key: "a", Limits: l, Tokens: 10, ID: "2", Now: at(sec(1))}, LimitRequests, sec(59))

		l = &Limits{RequestsPerMinute: 5, TokensPerMinute: 10, BudgetNanos: 1, Period: PeriodDay}
		b := &Ask{Key: "b", Limits: l, Tokens: 10, Now: at(0)}
		seed(t, c, "b", PeriodDay, at(0))
		g = admit(t, c, b)
		settle(t, c, b, g, Used{Tokens: 10, CostNanos: 1})
		refuse(t, c, &Ask{Key: "b", Limits: l, Tokens: 1, Now: at(sec(1))}, LimitTokens, sec(59))
		refuse(t, c, &Ask{Key: "b", Limits: l, Now: at(sec(1))}, LimitBudget, 12*time.Hour-sec(1))
	})
}

func TestBudget(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		l := &Limits{BudgetNanos: 1000, Period: PeriodDay}
		ask := func(now time.Duration) *Ask { return &Ask{Key: "k", Limits: l, Tokens: 1e6, Now: at(now)} }
		seed(t, c, "k", PeriodDay, at(0))
		seed(t, c, "late", PeriodDay, at(0))
		seed(t, c, "w", PeriodWeek, at(0))
		seed(t, c, "m", PeriodMonth, at(0))
		// Spend grows only through Settle: the estimates count nothing.
		a, b := ask(0), ask(0)
		ga, gb := admit(t, c, a), admit(t, c, b)
		settle(t, c, a, ga, Used{CostNanos: 600, Tokens: 5})
		admit(t, c, ask(sec(1)))
		settle(t, c, b, gb, Used{CostNanos: 399})
		admit(t, c, ask(sec(1))) // 999 spent
		x := ask(sec(2))
		gx := admit(t, c, x)
		settle(t, c, x, gx, Used{CostNanos: 1})
		// Noon: the day ends in twelve hours.
		refuse(t, c, ask(sec(3)), LimitBudget, 12*time.Hour-sec(3))
		refuse(t, c, ask(12*time.Hour-ms(1)), LimitBudget, ms(1))
		// A request admitted before midnight and settled after it is
		// charged to the day it started in.
		late := &Ask{Key: "late", Limits: l, Now: at(12*time.Hour - ms(1))}
		gl := admit(t, c, late)
		admit(t, c, &Ask{Key: "late", Limits: l, Now: at(12 * time.Hour)})
		settle(t, c, late, gl, Used{CostNanos: 5000})
		admit(t, c, &Ask{Key: "late", Limits: l, Now: at(12*time.Hour + sec(1))})
		// The next day starts from zero.
		g := admit(t, c, ask(12*time.Hour))
		checkGrant(t, g, 0, 0, 0, 0)

		// A budget of tokens, per week (Monday to Monday).
		lt := &Limits{BudgetTokens: 100, Period: PeriodWeek}
		w := &Ask{Key: "w", Limits: lt, Tokens: 1000, Now: at(0)}
		gw := admit(t, c, w)
		admit(t, c, &Ask{Key: "w", Limits: lt, Tokens: 1000, Now: at(0)})
		settle(t, c, w, gw, Used{Tokens: 100, CostNanos: 1e9})
		// From Wednesday noon to Monday midnight.
		refuse(t, c, &Ask{Key: "w", Limits: lt, Now: at(0)}, LimitBudget, 4*24*time.Hour+12*time.Hour)
		admit(t, c, &Ask{Key: "w", Limits: lt, Now: at(4*24*time.Hour + 12*time.Hour)})

		// Per month.
		lm := &Limits{BudgetNanos: 10, Period: PeriodMonth}
		m := &Ask{Key: "m", Limits: lm, Now: at(0)}
		gm := admit(t, c, m)
		settle(t, c, m, gm, Used{CostNanos: 10})
		july := time.Date(2031, time.July, 1, 0, 0, 0, 0, time.UTC)
		refuse(t, c, &Ask{Key: "m", Limits: lm, Now: at(0)}, LimitBudget, july.Sub(base))
		admit(t, c, &Ask{Key: "m", Limits: lm, Now: july})
	})
}

func TestSeedBudget(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		ctx := context.Background()
		l := &Limits{BudgetNanos: 1000, BudgetTokens: 50, Period: PeriodDay}
		ask := func(now time.Duration) *Ask { return &Ask{Key: "k", Limits: l, Now: at(now)} }
		if g := admit(t, c, ask(0)); !g.BudgetUnheld {
			t.Error("a budget never seeded was not reported unheld")
		}
		if err := c.SeedBudget(ctx, "k", PeriodDay, at(0), 900, 10); err != nil {
			t.Fatal(err)
		}
		if g := admit(t, c, ask(0)); g.BudgetUnheld {
			t.Error("a seeded budget was reported unheld")
		}
		// Held already: left as it is.
		if err := c.SeedBudget(ctx, "k", PeriodDay, at(sec(1)), 2000, 0); err != nil {
			t.Fatal(err)
		}
		a := ask(sec(2))
		g := admit(t, c, a)
		settle(t, c, a, g, Used{CostNanos: 100})
		refuse(t, c, ask(sec(3)), LimitBudget, 12*time.Hour-sec(3))

		// A seed of the tokens alone refuses too.
		if err := c.SeedBudget(ctx, "k", PeriodDay, at(12*time.Hour), 0, 50); err != nil {
			t.Fatal(err)
		}
		refuse(t, c, ask(13*time.Hour), LimitBudget, 23*time.Hour)

		// Spend settled before the period is seeded does not start its
		// count (the ledger holds it, for the seed): the seed decides.
		b := &Ask{Key: "b", Limits: l, Now: at(0)}
		gb := admit(t, c, b)
		settle(t, c, b, gb, Used{CostNanos: 10})
		if g := admit(t, c, &Ask{Key: "b", Limits: l, Now: at(sec(1))}); !g.BudgetUnheld {
			t.Error("a settlement started a budget's count")
		}
		if err := c.SeedBudget(ctx, "b", PeriodDay, at(0), 500, 0); err != nil {
			t.Fatal(err)
		}
		gb2 := admit(t, c, &Ask{Key: "b", Limits: l, Now: at(sec(1))})
		settle(t, c, &Ask{Key: "b", Limits: l, Now: at(sec(1))}, gb2, Used{CostNanos: 500})
		refuse(t, c, &Ask{Key: "b", Limits: l, Now: at(sec(2))}, LimitBudget, 12*time.Hour-sec(2))
		if err := c.SeedBudget(ctx, "b2", PeriodDay, at(0), 0, 0); err != nil {
			t.Fatal(err)
		}

		// A seed for another kind of period is another count.
		if err := c.SeedBudget(ctx, "b", PeriodMonth, at(0), 5000, 0); err != nil {
			t.Fatal(err)
		}
		admit(t, c, &Ask{Key: "b2", Limits: l, Now: at(sec(1))})
		refuse(t, c, &Ask{Key: "b", Limits: &Limits{BudgetNanos: 5000, Period: PeriodMonth}, Now: at(sec(1))},
			LimitBudget, time.Date(2031, time.July, 1, 0, 0, 0, 0, time.UTC).Sub(at(sec(1))))
		// Without a period there is nothing to seed.
		if err := c.SeedBudget(ctx, "b", PeriodNone, at(0), 5000, 0); err != nil {
			t.Fatal(err)
		}
	})
}

// TestUnbounded checks that an ask without limits is admitted at once and
// counts nothing.
func TestUnbounded(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		for _, l := range []*Limits{nil, {}} {
			a := &Ask{Key: "k", Limits: l, Tokens: 100, ID: "1", Now: at(0)}
			g, err := c.Admit(context.Background(), a)
			if err != nil || g != (Grant{}) {
				t.Fatalf("Admit without limits = %+v, %v; want an empty grant", g, err)
			}
			settle(t, c, a, g, Used{Tokens: 10, CostNanos: 10})
		}
		checkUsage(t, c, "k", at(0), usage{})
	})
}

func TestKeysAreIndependent(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		l := &Limits{RequestsPerMinute: 1, TokensPerMinute: 10, Concurrent: 1}
		admit(t, c, &Ask{Key: "a", Limits: l, Tokens: 10, ID: "1", Now: at(0)})
		refuse(t, c, &Ask{Key: "a", Limits: l, ID: "2", Now: at(0)}, LimitConcurrent, time.Second)
		admit(t, c, &Ask{Key: "b", Limits: l, Tokens: 10, ID: "2", Now: at(0)})
		// Names that would collide if joined carelessly.
		admit(t, c, &Ask{Key: "a}:r", Limits: l, Tokens: 10, ID: "3", Now: at(0)})
		checkUsage(t, c, "a", at(0), usage{requests: 1, tokens: 10, slots: 1})
	})
}

func TestInvalidAsks(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		ctx := context.Background()
		if _, err := c.Admit(ctx, &Ask{Limits: &Limits{RequestsPerMinute: 1}, Now: at(0)}); err == nil {
			t.Error("Admit without a key: no error")
		}
		if _, err := c.Admit(ctx, &Ask{Key: "k", Limits: &Limits{Concurrent: 1}, Now: at(0)}); err == nil {
			t.Error("Admit with a concurrency limit and no id: no error")
		}
		if err := c.SeedBudget(ctx, "", PeriodDay, at(0), 1, 1); err == nil {
			t.Error("SeedBudget without a key: no error")
		}
		checkUsage(t, c, "k", at(0), usage{})
	})
}

// TestParallelAdmits checks that admissions racing on one key let exactly
// the limit through.
func TestParallelAdmits(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		const goroutines, each = 20, 15
		l := &Limits{RequestsPerMinute: 100, TokensPerMinute: 1e9, Concurrent: 1000}
		var admitted atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for i := range goroutines {
			wg.Go(func() {
				for j := range each {
					a := &Ask{Key: "k", Limits: l, Tokens: 1, ID: fmt.Sprint(i, "-", j), Now: at(ms(int64(j)))}
					g, err := c.Admit(context.Background(), a)
					if err != nil {
						errs <- err
						return
					}
					if g.Refused == "" {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n := admitted.Load(); n != 100 {
			t.Fatalf("%d admitted, want 100", n)
		}
		checkUsage(t, c, "k", at(0), usage{requests: 100, tokens: 100, slots: 100})
	})
}

// TestParallelSettles races admissions and settlements of one key with a
// concurrency limit: no more than the limit is ever in flight, and all is
// freed at the end.
func TestParallelSettles(t *testing.T) {
	eachImplementation(t, func(t *testing.T, c counters) {
		const limit = 3
		l := &Limits{Concurrent: limit, TokensPerMinute: 1e9}
		var inFlight, peak atomic.Int64
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				for j := range 20 {
					a := &Ask{Key: "k", Limits: l, Tokens: 100, ID: strconv.Itoa(i*100 + j), Now: at(0)}
					g, err := c.Admit(context.Background(), a)
					if err != nil {
						t.Error(err)
						return
					}
					if g.Refused != "" {
						continue
					}
					n := inFlight.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					inFlight.Add(-1)
					if err := c.Settle(context.Background(), a, &g, Used{Tokens: 1}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if p := peak.Load(); p > limit {
			t.Fatalf("%d in flight at once, limit %d", p, limit)
		}
		u, err := c.usage(context.Background(), "k", at(0))
		if err != nil {
			t.Fatal(err)
		}
		if u.slots != 0 || u.tokens != u.requests {
			t.Fatalf("after every settle: %+v, want no slot and a token per request", u)
		}
	})
}

// seed starts a budget period's count at zero, as the governor does from
// an empty ledger.
func seed(t *testing.T, c counters, key string, p Period, now time.Time) {
	t.Helper()
	if err := c.SeedBudget(context.Background(), key, p, now, 0, 0); err != nil {
		t.Fatal(err)
	}
}
