package quota

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

// redisAddr is the Redis server of the tests (PARLEY_TEST_REDIS, default
// 127.0.0.1:6379); tests needing it skip when it is unreachable, except in
// CI, where they fail.
var redisAddr = cmp.Or(os.Getenv("PARLEY_TEST_REDIS"), "127.0.0.1:6379")

// usage is what a key holds in the window of an instant.
type usage struct {
	requests, tokens, slots int64
}

// inspector reads what a key holds, for checking that a refusal took
// nothing.
type inspector interface {
	usage(ctx context.Context, key string, now time.Time) (usage, error)
}

func (m *Memory) usage(_ context.Context, key string, now time.Time) (usage, error) {
	st := m.state(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	oldest := floorDiv(now.UnixMilli(), 1000) - (window - 1)
	u := usage{slots: st.inflight}
	for _, b := range st.buckets {
		if b.second >= oldest {
			u.requests += b.requests
			u.tokens += b.tokens
		}
	}
	return u, nil
}

func (r *Redis) usage(ctx context.Context, key string, now time.Time) (usage, error) {
	oldest := floorDiv(now.UnixMilli(), 1000) - (window - 1)
	var u usage
	for _, kind := range []struct {
		name string
		sum  *int64
	}{{"r", &u.requests}, {"t", &u.tokens}} {
		fields, err := r.client.HGetAll(ctx, r.key(key, kind.name)).Result()
		if err != nil {
			return u, err
		}
		for f, v := range fields {
			s, _ := strconv.ParseInt(f, 10, 64)
			n, _ := strconv.ParseInt(v, 10, 64)
			if s >= oldest {
				*kind.sum += n
			}
		}
	}
	n, err := r.client.ZCount(ctx, r.key(key, "c"), "("+strconv.FormatInt(now.UnixMilli(), 10), "+inf").Result()
	u.slots = n
	return u, err
}

// counters is one implementation under test.
type counters interface {
	Counters
	inspector
}

// implementations lists the implementations every contract case runs
// against; each returns fresh counters whose state no other test sees.
var implementations = []struct {
	name string
	new  func(t testing.TB) counters
}{
	{"memory", func(t testing.TB) counters {
		m := NewMemory()
		t.Cleanup(func() { _ = m.Close() })
		return m
	}},
	{"redis", func(t testing.TB) counters {
		return newTestRedis(t, redisClient(t), testPrefix(t), 0)
	}},
}

// eachImplementation runs f as a subtest against every implementation.
func eachImplementation(t *testing.T, f func(t *testing.T, c counters)) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			f(t, impl.new(t))
		})
	}
}

// redisClient connects to the test server, or skips the test.
func redisClient(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redisAddr})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		if os.Getenv("CI") != "" {
			t.Fatalf("no Redis at %s: %v (CI runs the Redis tests against a real server)", redisAddr, err)
		}
		t.Skipf("no Redis at %s (set PARLEY_TEST_REDIS): %v", redisAddr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testPrefix returns a prefix no other test uses, and deletes its keys
// when the test ends (before the client closes: cleanups run last first).
func testPrefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "parleytest:" + hex.EncodeToString(b[:]) + ":"
	c := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() {
		defer func() { _ = c.Close() }()
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("deleting the test's keys: %v", err)
		}
	})
	return prefix
}

// newTestRedis returns Redis counters closed when the test ends.
func newTestRedis(t testing.TB, c redis.UniversalClient, prefix string, lease time.Duration) *Redis {
	r := NewRedis(c, RedisOptions{Prefix: prefix, SlotLease: lease})
	t.Cleanup(func() { _ = r.Close() })
	return r
}
