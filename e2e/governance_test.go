package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/store/postgres/pgtest"
)

const adminKey = "admin-fleet-0123456789abcdef"

// redisURL is the Redis server the governance tests share counters
// through (PARLEY_TEST_REDIS, default 127.0.0.1:6379), with a key prefix
// of the test's own. Without a server the test skips, unless CI is set.
func redisURL(t *testing.T) (url, prefix string) {
	addr := os.Getenv("PARLEY_TEST_REDIS")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Redis at %s: %v (CI runs the governance tests against a real server)", addr, err)
		}
		t.Skipf("no Redis at %s (set PARLEY_TEST_REDIS): %v", addr, err)
	}
	_ = conn.Close()
	return "redis://" + addr + "/0", fmt.Sprintf("parley-e2e-%d:", time.Now().UnixNano())
}

// governedFleet starts two replicas on one database and one Redis, with
// a key of 60 requests per minute, a key of 3 requests at once, and an
// admin key.
func governedFleet(t *testing.T, upstream string) []*replica {
	dsn := pgtest.DSN(t)
	redis, prefix := redisURL(t)
	cfg := fmt.Sprintf(`keys:
  - {name: alice, key: %s}
  - {name: paced, key: sk-paced-0123456789, limits: {requests_per_minute: 60}}
  - {name: narrow, key: sk-narrow-0123456789, limits: {concurrent_requests: 3}}
upstreams:
  - {name: chat, dialect: chat_completions, base_url: %q, api_key: sk-chat-upstream}
models:
  - {name: m, upstream: chat}
store:
  driver: postgres
  dsn: ${PARLEY_DATABASE_URL}
redis:
  url: ${PARLEY_REDIS_URL}
  prefix: %q
admin:
  keys: [${PARLEY_ADMIN_KEY}]
ledger:
  flush_interval: 100ms
`, clientKey, upstream, prefix)
	file := writeConfig(t, cfg)
	rs := make([]*replica, 2)
	var wg sync.WaitGroup
	for i := range rs {
		rs[i] = start(t, file, t.TempDir(), "PARLEY_DATABASE_URL="+dsn, "PARLEY_REDIS_URL="+redis, "PARLEY_ADMIN_KEY="+adminKey)
		wg.Go(func() { rs[i].waitReady(t) })
	}
	wg.Wait()
	return rs
}

// post sends a chat request with a key and returns its status and body.
func (r *replica) post(t *testing.T, key, body string) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("POST: %v", err)
		return 0, ""
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func (r *replica) admin(t *testing.T, method, path, body string) (int, map[string]any) {
	req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

const quick = `{"model":"m","messages":[{"role":"user","content":"quick"}]}`

// Two replicas sharing Redis and PostgreSQL hold one key's limits as one:
// of 100 requests spread over both, a 60-per-minute key gets exactly 60
// through; a key of 3 requests at once has 3 streams in flight across
// both, never more; a key created through one replica works at the other
// within 5 seconds, and after its revocation there is refused within 5
// seconds. (issue 20)
func TestGovernanceAcrossReplicas(t *testing.T) {
	chat, started := slowChat(t, 6, 250*time.Millisecond)
	rs := governedFleet(t, chat.URL)

	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range 100 {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			switch status, body := rs[i%2].post(t, "sk-paced-0123456789", quick); status {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusTooManyRequests:
				refused.Add(1)
			default:
				t.Errorf("request %d: %d %s", i, status, body)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 60 || refused.Load() != 40 {
		t.Errorf("a 60-per-minute key across two replicas: %d through, %d refused; want 60 and 40", ok.Load(), refused.Load())
	}

	// Six streams at once, three through each replica: three run, three
	// are refused, while the three hold their slots.
	before := started.Load()
	statuses := make([]int, 6)
	for i := range 6 {
		wg.Go(func() {
			statuses[i], _ = rs[i%2].post(t, "sk-narrow-0123456789", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		})
	}
	wg.Wait()
	var streamed, held int
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			streamed++
		case http.StatusTooManyRequests:
			held++
		}
	}
	if streamed != 3 || held != 3 || started.Load()-before != 3 {
		t.Errorf("concurrent_requests 3 across two replicas: statuses %v, %d reached the upstream; want 3 through and 3 refused", statuses, started.Load()-before)
	}
	// The slots are free again once the streams ended.
	if status, body := rs[1].post(t, "sk-narrow-0123456789", quick); status != http.StatusOK {
		t.Errorf("after the streams: %d %s", status, body)
	}

	// A key made through replica 0 is known at replica 1 within 5s.
	status, created := rs[0].admin(t, http.MethodPost, "/admin/v1/keys", `{"name":"fresh","metadata":{"team":"e2e"}}`)
	secret, _ := created["key"].(string)
	if status != http.StatusCreated || secret == "" {
		t.Fatalf("create: %d %v", status, created)
	}
	made := time.Now()
	waitFor(t, "the new key to work at replica 1", func() bool {
		s, _ := rs[1].post(t, secret, quick)
		return s == http.StatusOK
	})
	if d := time.Since(made); d > 5*time.Second {
		t.Errorf("the new key took %v to work at replica 1", d)
	}
	if status, _ := rs[0].admin(t, http.MethodDelete, "/admin/v1/keys/fresh", ""); status != http.StatusOK {
		t.Fatalf("revoke: %d", status)
	}
	revoked := time.Now()
	waitFor(t, "the revoked key to be refused at replica 1", func() bool {
		s, _ := rs[1].post(t, secret, quick)
		return s == http.StatusUnauthorized
	})
	if d := time.Since(revoked); d > 5*time.Second {
		t.Errorf("the revoked key worked at replica 1 for %v", d)
	}

	// The ledger, read through either replica, holds every request once.
	waitFor(t, "the ledger to hold the paced key's requests", func() bool {
		_, out := rs[1].admin(t, http.MethodGet, "/admin/v1/usage?group_by=key,status&key=paced", "")
		data, _ := out["data"].([]any)
		var n float64
		for _, row := range data {
			n += row.(map[string]any)["requests"].(float64)
		}
		return n == 100
	})
}
