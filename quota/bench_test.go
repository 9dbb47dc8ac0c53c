package quota

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BenchmarkAdmit measures one Admit and its Settle on one key with limits
// of requests, tokens and concurrency, high enough that every ask is
// admitted: the steady state of a busy key.
func BenchmarkAdmit(b *testing.B) {
	l := &Limits{RequestsPerMinute: 1 << 40, TokensPerMinute: 1 << 50, Concurrent: 1 << 20}
	ctx := context.Background()
	// The memory case calls *Memory: through the Counters interface the
	// caller's Grant, whose address Settle takes, escapes to the heap (one
	// allocation of 64 bytes, the caller's).
	b.Run("memory", func(b *testing.B) {
		m := NewMemory()
		a := &Ask{Key: "bench", Limits: l, Tokens: 1000, ID: "req-1"}
		b.ReportAllocs()
		for b.Loop() {
			a.Now = time.Now()
			g, err := m.Admit(ctx, a)
			if err != nil || g.Refused != "" {
				b.Fatalf("Admit = %+v, %v", g, err)
			}
			if err := m.Settle(ctx, a, &g, Used{Tokens: 900, CostNanos: 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("redis", func(b *testing.B) {
		var c Counters = newTestRedis(b, redisClient(b), testPrefix(b), 0)
		a := &Ask{Key: "bench", Limits: l, Tokens: 1000, ID: "req-1"}
		b.ReportAllocs()
		for b.Loop() {
			a.Now = time.Now()
			g, err := c.Admit(ctx, a)
			if err != nil || g.Refused != "" {
				b.Fatalf("Admit = %+v, %v", g, err)
			}
			if err := c.Settle(ctx, a, &g, Used{Tokens: 900, CostNanos: 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Many goroutines on one key: what the key's mutex costs under
	// contention.
	b.Run("memory-parallel", func(b *testing.B) {
		m := NewMemory()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			a := &Ask{Key: "bench", Limits: l, Tokens: 1000, ID: "req"}
			for pb.Next() {
				a.Now = time.Now()
				g, err := m.Admit(ctx, a)
				if err != nil || g.Refused != "" {
					b.Errorf("Admit = %+v, %v", g, err)
					return
				}
				if err := m.Settle(ctx, a, &g, Used{Tokens: 900}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	// Many keys: the lookup of a key among thousands.
	b.Run("memory-keys", func(b *testing.B) {
		m := NewMemory()
		keys := make([]string, 10_000)
		for i := range keys {
			keys[i] = "key-" + strconv.Itoa(i)
		}
		a := &Ask{Limits: l, Tokens: 1000, ID: "req"}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			a.Key = keys[i%len(keys)]
			i++
			a.Now = time.Now()
			g, err := m.Admit(ctx, a)
			if err != nil {
				b.Fatal(err)
			}
			if err := m.Settle(ctx, a, &g, Used{Tokens: 900}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
