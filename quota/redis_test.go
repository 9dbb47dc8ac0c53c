package quota

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisShared checks that replicas sharing a server share the limits:
// two Redis counters on two clients let 60 requests a minute through
// between them.
func TestRedisShared(t *testing.T) {
	prefix := testPrefix(t)
	replicas := []*Redis{
		newTestRedis(t, redisClient(t), prefix, 0),
		newTestRedis(t, redisClient(t), prefix, 0),
	}
	l := &Limits{RequestsPerMinute: 60, Concurrent: 100}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Go(func() {
			for j := range 50 {
				a := &Ask{Key: "k", Limits: l, ID: string(rune('a'+i)) + time.Duration(j).String(), Now: at(sec(int64(j)))}
				g, err := r.Admit(context.Background(), a)
				if err != nil {
					t.Error(err)
					return
				}
				if g.Refused == "" {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != 60 {
		t.Fatalf("%d admitted across two replicas, want 60", n)
	}
	for _, r := range replicas {
		u, err := r.usage(context.Background(), "k", at(sec(49)))
		if err != nil {
			t.Fatal(err)
		}
		if u.requests != 60 || u.slots != 60 {
			t.Fatalf("replica sees %+v, want 60 requests and slots", u)
		}
	}
}

// TestRedisSlotRefresh checks that a slot held longer than its lease stays
// held while its request runs, and is freed by Settle.
func TestRedisSlotRefresh(t *testing.T) {
	c := redisClient(t)
	r := newTestRedis(t, c, testPrefix(t), 300*time.Millisecond)
	l := &Limits{Concurrent: 1}
	a := &Ask{Key: "k", Limits: l, ID: "long", Now: time.Now()}
	g, err := r.Admit(context.Background(), a)
	if err != nil || g.Refused != "" {
		t.Fatalf("Admit = %+v, %v", g, err)
	}
	time.Sleep(time.Second)
	g2, err := r.Admit(context.Background(), &Ask{Key: "k", Limits: l, ID: "other", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if g2.Refused != LimitConcurrent {
		t.Fatalf("after three leases the slot was lost: second ask %+v", g2)
	}
	ttl, err := c.PTTL(context.Background(), r.key("k", "c")).Result()
	if err != nil || ttl <= 0 || ttl > 300*time.Millisecond {
		t.Fatalf("slot set expires in %v (%v), want within a lease", ttl, err)
	}
	if err := r.Settle(context.Background(), a, &g, Used{}); err != nil {
		t.Fatal(err)
	}
	g2, err = r.Admit(context.Background(), &Ask{Key: "k", Limits: l, ID: "other", Now: time.Now()})
	if err != nil || g2.Refused != "" {
		t.Fatalf("after Settle: %+v, %v", g2, err)
	}
}

// TestRedisSlotLeaseEnds checks that the slots of a replica that stopped
// (without settling) are freed when their lease ends.
func TestRedisSlotLeaseEnds(t *testing.T) {
	prefix := testPrefix(t)
	dead := NewRedis(redisClient(t), RedisOptions{Prefix: prefix, SlotLease: 200 * time.Millisecond})
	live := newTestRedis(t, redisClient(t), prefix, 0)
	l := &Limits{Concurrent: 1}
	if g, err := dead.Admit(context.Background(), &Ask{Key: "k", Limits: l, ID: "a", Now: at(0)}); err != nil || g.Refused != "" {
		t.Fatalf("Admit = %+v, %v", g, err)
	}
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := live.Admit(context.Background(), &Ask{Key: "k", Limits: l, ID: "b", Now: at(ms(199))})
	if err != nil || g.Refused != LimitConcurrent {
		t.Fatalf("within the lease: %+v, %v; want refused", g, err)
	}
	g, err = live.Admit(context.Background(), &Ask{Key: "k", Limits: l, ID: "b", Now: at(ms(200))})
	if err != nil || g.Refused != "" {
		t.Fatalf("at the lease's end: %+v, %v; want admitted", g, err)
	}
}

// TestRedisKeys checks the layout of the keys: one hash tag per key name,
// and an expiry on every key written.
func TestRedisKeys(t *testing.T) {
	c := redisClient(t)
	prefix := testPrefix(t)
	r := newTestRedis(t, c, prefix, time.Minute)
	ctx := context.Background()
	l := &Limits{RequestsPerMinute: 1000, TokensPerMinute: 1e6, Concurrent: 10, BudgetNanos: 1e9, Period: PeriodMonth}
	if err := r.SeedBudget(ctx, "k", PeriodMonth, at(0), 0, 0); err != nil {
		t.Fatal(err)
	}
	// Two minutes of a request a second: the minute hashes keep only the
	// seconds of the window.
	for i := range int64(120) {
		a := &Ask{Key: "k", Limits: l, Tokens: 10, ID: time.Duration(i).String(), Now: at(sec(i))}
		g, err := r.Admit(ctx, a)
		if err != nil || g.Refused != "" {
			t.Fatalf("Admit = %+v, %v", g, err)
		}
		if i < 119 {
			if err := r.Settle(ctx, a, &g, Used{Tokens: 5, CostNanos: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.SeedBudget(ctx, "k", PeriodDay, at(0), 1, 1); err != nil {
		t.Fatal(err)
	}
	june := time.Date(2031, time.June, 1, 0, 0, 0, 0, time.UTC).Unix()
	day := time.Date(2031, time.June, 4, 0, 0, 0, 0, time.UTC).Unix()
	want := map[string]time.Duration{
		prefix + "{k}:r":                 minuteTTL,
		prefix + "{k}:t":                 minuteTTL,
		prefix + "{k}:c":                 time.Minute,
		prefix + "{k}:b:m:" + itoa(june): time.Date(2031, time.July, 2, 0, 0, 0, 0, time.UTC).Sub(at(0)),
		prefix + "{k}:b:d:" + itoa(day):  36 * time.Hour,
	}
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(want) {
		t.Fatalf("keys %q, want those of %v", keys, want)
	}
	for _, k := range keys {
		most, ok := want[k]
		if !ok {
			t.Fatalf("unexpected key %q", k)
		}
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		// The month's expiry was set by the last Settle, two minutes in.
		if ttl <= most-3*time.Minute || ttl > most {
			t.Errorf("%s expires in %v, want %v", k, ttl, most)
		}
	}
	for _, k := range []string{"r", "t"} {
		n, err := c.HLen(ctx, prefix+"{k}:"+k).Result()
		if err != nil || n > window {
			t.Errorf("%s holds %d seconds (%v), want at most %d", k, n, err, window)
		}
	}
	spent, err := c.HGetAll(ctx, prefix+"{k}:b:m:"+itoa(june)).Result()
	if err != nil || spent["cost"] != "119" || spent["tokens"] != "595" {
		t.Errorf("month's spend %v (%v), want cost 119 and tokens 595", spent, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRedisScriptFlushed checks that Admit loads its script again after
// the server lost it (a restart, SCRIPT FLUSH).
func TestRedisScriptFlushed(t *testing.T) {
	c := redisClient(t)
	r := newTestRedis(t, c, testPrefix(t), 0)
	if err := c.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	l := &Limits{RequestsPerMinute: 1}
	a := &Ask{Key: "k", Limits: l, Now: at(0)}
	g, err := r.Admit(context.Background(), a)
	if err != nil || g.Refused != "" {
		t.Fatalf("Admit = %+v, %v", g, err)
	}
	if err := r.Settle(context.Background(), a, &g, Used{}); err != nil {
		t.Fatal(err)
	}
}

// TestRedisErrors checks that the errors of an unreachable server are
// returned, with context and without the password.
func TestRedisErrors(t *testing.T) {
	const password = "hunter2-secret"
	c := redis.NewClient(&redis.Options{
		Addr: "127.0.0.1:1", Password: password,
		MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
	})
	defer func() { _ = c.Close() }()
	r := NewRedis(c, RedisOptions{})
	defer func() { _ = r.Close() }()
	ctx := context.Background()
	l := &Limits{RequestsPerMinute: 1, Concurrent: 1, BudgetNanos: 1, Period: PeriodDay}
	a := &Ask{Key: "k", Limits: l, ID: "1", Now: at(0)}
	_, errAdmit := r.Admit(ctx, a)
	errSettle := r.Settle(ctx, a, &Grant{Second: base.Unix()}, Used{CostNanos: 1})
	errSeed := r.SeedBudget(ctx, "k", PeriodDay, time.Now(), 1, 1)
	for _, err := range []error{errAdmit, errSettle, errSeed} {
		if err == nil {
			t.Fatal("no error from an unreachable server")
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "quota: ") || strings.Contains(msg, password) {
			t.Errorf("error %q: want context and no password", msg)
		}
	}
	if len(r.held) != 0 {
		t.Errorf("slots held after failures: %v", r.held)
	}
}

func TestRedisClose(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer func() { _ = c.Close() }()
	r := NewRedis(c, RedisOptions{SlotLease: 30 * time.Millisecond})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.done:
	default:
		t.Fatal("the refresh goroutine still runs after Close")
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
