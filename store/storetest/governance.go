package storetest

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
)

// managedKey is a key named name with every field set, its secret
// included; variant picks one of three shapes of limits, so that absent
// fields are round-tripped as well as present ones.
func managedKey(name string, created time.Time, variant int) *parleyv1.ManagedKey {
	k := &parleyv1.ManagedKey{
		Name:       name,
		CreateTime: timestamppb.New(created),
		UpdateTime: timestamppb.New(created),
		Hint:       "pk-" + name[:1],
		Key:        "pk-secret-of-" + name,
	}
	switch variant % 3 {
	case 0:
		k.Models = []string{"gpt-*", "claude-3-5-sonnet"}
		k.Limits = &parleyv1.KeyLimits{
			RequestsPerMinute: proto.Int64(60), TokensPerMinute: proto.Int64(100000), ConcurrentRequests: proto.Int64(4),
			Budget: &parleyv1.Budget{Usd: proto.Float64(12.5), Per: parleyv1.BudgetPeriod_BUDGET_PERIOD_WEEK},
		}
		k.ExpireTime = timestamppb.New(created.Add(30*24*time.Hour + 7))
		k.Metadata = map[string]string{"team": "search", "owner": "alice@example.com", "": "empty key"}
	case 1:
		k.Models = []string{"*"}
		k.Limits = &parleyv1.KeyLimits{Budget: &parleyv1.Budget{Tokens: proto.Int64(5_000_000), Per: parleyv1.BudgetPeriod_BUDGET_PERIOD_MONTH}}
		k.Metadata = map[string]string{"team": "infra"}
	default:
		// No models, limits, expiry or metadata: everything allowed.
	}
	return k
}

// digestOf is the SHA-256 of a secret, as the store keeps it.
func digestOf(secret string) []byte {
	d := sha256.Sum256([]byte(secret))
	return d[:]
}

// stored is what a store must return for k created with its secret's
// digest: k without the secret.
func stored(k *parleyv1.ManagedKey) store.StoredKey {
	rec := proto.CloneOf(k)
	rec.Key = ""
	return store.StoredKey{Key: rec, Digest: digestOf(k.GetKey())}
}

// sameKeys fails the test unless s lists exactly want, ordered by name.
func sameKeys(t *testing.T, s store.Store, want map[string]store.StoredKey, when string) {
	t.Helper()
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	list := make([]store.StoredKey, 0, len(names))
	for _, n := range names {
		list = append(list, want[n])
	}
	got, err := s.ManagedKeys(t.Context())
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if d := gocmp.Diff(list, got, protocmp.Transform()); d != "" {
		t.Fatalf("%s: the keys differ (-want +got):\n%s", when, d)
	}
	for _, n := range names {
		one, err := s.ManagedKey(t.Context(), n)
		if err != nil {
			t.Fatalf("%s: ManagedKey(%q): %v", when, n, err)
		}
		if d := gocmp.Diff(want[n], one, protocmp.Transform()); d != "" {
			t.Fatalf("%s: ManagedKey(%q) differs (-want +got):\n%s", when, n, d)
		}
	}
}

// Keys round-trip every field without their secret, in the order of their
// names; names and digests are unique, revoked keys included; a revoked
// key cannot change; a restart keeps everything.
func testKeys(t *testing.T, b Backend) {
	ctx := t.Context()
	o := b.Open(t)
	s := o.Store
	if ks, err := s.ManagedKeys(ctx); err != nil || len(ks) != 0 {
		t.Fatalf("the keys of an empty store: %v %v, want an empty list", ks, err)
	}
	if _, err := s.ManagedKey(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown key: %v, want ErrNotFound", err)
	}

	created := time.Date(2024, 3, 10, 12, 0, 0, 123456789, time.UTC)
	want := map[string]store.StoredKey{}
	// Byte order puts "Zed" before "alpha": a collation that ignores case
	// would not.
	for i, name := range []string{"search-bot", "Zed", "alpha", "alpha-2", "bob"} {
		k := managedKey(name, created.Add(time.Duration(i)*time.Second), i)
		before := proto.CloneOf(k)
		if err := s.CreateKey(ctx, k, digestOf(k.GetKey())); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if d := gocmp.Diff(before, k, protocmp.Transform()); d != "" {
			t.Fatalf("CreateKey changed the caller's message (-before +after):\n%s", d)
		}
		want[name] = stored(k)
	}
	sameKeys(t, s, want, "after creating")

	// A name or a digest taken is refused, and changes nothing.
	again := managedKey("alpha", created, 1)
	again.Key = "pk-another-secret"
	if err := s.CreateKey(ctx, again, digestOf(again.GetKey())); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a second key named alpha: %v, want ErrExists", err)
	}
	if err := s.CreateKey(ctx, managedKey("carol", created, 0), want["alpha"].Digest); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a second key with alpha's digest: %v, want ErrExists", err)
	}
	sameKeys(t, s, want, "after refused creates")

	// An update replaces everything but the name, the digest, the create
	// time and the hint; it leaves the caller's message as it was.
	later := created.Add(48*time.Hour + 5)
	upd := &parleyv1.ManagedKey{
		Name:       "alpha",
		Models:     []string{"only-this-one"},
		Limits:     &parleyv1.KeyLimits{ConcurrentRequests: proto.Int64(1), Budget: &parleyv1.Budget{Tokens: proto.Int64(5000), Per: parleyv1.BudgetPeriod_BUDGET_PERIOD_DAY}},
		Metadata:   map[string]string{"team": "platform"},
		CreateTime: timestamppb.New(later),
		UpdateTime: timestamppb.New(later),
		Hint:       "pk-z",
		Key:        "pk-not-stored",
	}
	before := proto.CloneOf(upd)
	if err := s.UpdateKey(ctx, upd, want["alpha"].Key.GetUpdateTime().AsTime()); err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(before, upd, protocmp.Transform()); d != "" {
		t.Fatalf("UpdateKey changed the caller's message (-before +after):\n%s", d)
	}
	alpha := proto.CloneOf(upd)
	alpha.Key, alpha.CreateTime, alpha.Hint = "", want["alpha"].Key.GetCreateTime(), want["alpha"].Key.GetHint()
	want["alpha"] = store.StoredKey{Key: alpha, Digest: want["alpha"].Digest}
	sameKeys(t, s, want, "after an update")
	if err := s.UpdateKey(ctx, managedKey("nope", later, 0), later); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("updating an unknown key: %v, want ErrNotFound", err)
	}

	// A revoke stamps the revoke and update times and returns the record.
	at := created.Add(72*time.Hour + 987654321).In(time.FixedZone("+05", 5*3600))
	got, err := s.RevokeKey(ctx, "Zed", at)
	if err != nil {
		t.Fatal(err)
	}
	zed := proto.CloneOf(want["Zed"].Key)
	zed.RevokeTime, zed.UpdateTime = timestamppb.New(at), timestamppb.New(at)
	if d := gocmp.Diff(zed, got, protocmp.Transform()); d != "" {
		t.Fatalf("the revoked key (-want +got):\n%s", d)
	}
	want["Zed"] = store.StoredKey{Key: zed, Digest: want["Zed"].Digest}
	sameKeys(t, s, want, "after a revoke")

	// A revoked key is final, and its name and digest stay taken.
	if _, err := s.RevokeKey(ctx, "Zed", at.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking a revoked key: %v, want ErrNotFound", err)
	}
	if _, err := s.RevokeKey(ctx, "nope", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking an unknown key: %v, want ErrNotFound", err)
	}
	// With the update time the revoke stamped, or the one before it.
	for _, read := range []time.Time{at, want["Zed"].Key.GetCreateTime().AsTime()} {
		if err := s.UpdateKey(ctx, managedKey("Zed", later, 1), read); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("updating a revoked key read at %v: %v, want ErrNotFound", read, err)
		}
	}
	fresh := managedKey("Zed", later, 2)
	fresh.Key = "pk-a-fresh-secret"
	if err := s.CreateKey(ctx, fresh, digestOf(fresh.GetKey())); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a new key with a revoked key's name: %v, want ErrExists", err)
	}
	if err := s.CreateKey(ctx, managedKey("dave", later, 2), want["Zed"].Digest); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a new key with a revoked key's digest: %v, want ErrExists", err)
	}
	sameKeys(t, s, want, "after refused changes of a revoked key")

	// A restart keeps everything.
	s = o.Reopen(t)
	sameKeys(t, s, want, "after a restart")
	if _, err := s.RevokeKey(ctx, "Zed", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking a revoked key after a restart: %v, want ErrNotFound", err)
	}
}

// Writers racing on the same name, the same digest or the same key: one
// create wins, one revoke wins, and no update brings a revoked key back.
func testKeysConflicts(t *testing.T, b Backend) {
	ctx := t.Context()
	s := b.Open(t).Store
	created := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	const n = 8
	race := func(what string, fn func(i int) error, okErr error) {
		t.Helper()
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = fn(i) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, okErr):
				t.Fatalf("%s: %v", what, err)
			}
		}
		if won != 1 {
			t.Fatalf("%s: %d of %d won, want 1", what, won, n)
		}
	}
	race("creates of one name", func(i int) error {
		k := managedKey("shared-name", created, i)
		k.Key = fmt.Sprintf("pk-secret-%d", i)
		return s.CreateKey(ctx, k, digestOf(k.GetKey()))
	}, store.ErrExists)
	race("creates of one digest", func(i int) error {
		return s.CreateKey(ctx, managedKey(fmt.Sprintf("key-%d", i), created, i), digestOf("pk-one-secret"))
	}, store.ErrExists)
	if ks, err := s.ManagedKeys(ctx); err != nil || len(ks) != 2 {
		t.Fatalf("after the races: %d keys, %v; want 2", len(ks), err)
	}

	// Updates racing a revoke, all made from the record as created: the
	// key ends revoked at the revoke's time, whichever came first.
	if err := s.CreateKey(ctx, managedKey("target", created, 0), digestOf("pk-target")); err != nil {
		t.Fatal(err)
	}
	at := created.Add(time.Hour)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i == n/2 {
				if _, err := s.RevokeKey(ctx, "target", at); err != nil {
					t.Error(err)
				}
				return
			}
			k := managedKey("target", created.Add(time.Duration(i)*time.Minute), i)
			if err := s.UpdateKey(ctx, k, created); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.ManagedKey(ctx, "target")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Key.GetRevokeTime().AsTime().Equal(at) || !got.Key.GetUpdateTime().AsTime().Equal(at) || got.Key.GetKey() != "" {
		t.Fatalf("after updates raced a revoke: %v, want revoked at %v", got.Key, at)
	}
	race("revokes of one key", func(i int) error {
		_, err := s.RevokeKey(ctx, "shared-name", at.Add(time.Duration(i)))
		return err
	}, store.ErrNotFound)
}

// An update holds only if the key's stored update time is still the one
// it was read with: a stale one is ErrConflict and changes nothing.
func testKeysUpdateConflict(t *testing.T, b Backend) {
	ctx := t.Context()
	s := b.Open(t).Store
	created := time.Date(2024, 3, 10, 12, 0, 0, 123456789, time.UTC)
	k := managedKey("shared", created, 1)
	if err := s.CreateKey(ctx, k, digestOf(k.GetKey())); err != nil {
		t.Fatal(err)
	}
	want := map[string]store.StoredKey{"shared": stored(k)}

	change := func(models string, at time.Time) *parleyv1.ManagedKey {
		c := proto.CloneOf(want["shared"].Key)
		c.Models, c.UpdateTime = []string{models}, timestamppb.New(at)
		return c
	}
	// Stale, from the future, a nanosecond off either way, the zero
	// time and the Unix epoch: all refused.
	for _, read := range []time.Time{
		created.Add(-time.Hour), created.Add(time.Hour), created.Add(-time.Nanosecond), created.Add(time.Nanosecond), {}, time.Unix(0, 0),
	} {
		if err := s.UpdateKey(ctx, change("stale", created.Add(time.Minute)), read); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("an update read at %v, stored at %v: %v, want ErrConflict", read, created, err)
		}
	}
	sameKeys(t, s, want, "after stale updates")

	// The right one, in another zone: the same instant.
	first := created.Add(time.Minute)
	if err := s.UpdateKey(ctx, change("first", first), created.In(time.FixedZone("-07", -7*3600))); err != nil {
		t.Fatalf("an update read at the stored time: %v", err)
	}
	upd := change("first", first)
	upd.Key = ""
	want["shared"] = store.StoredKey{Key: upd, Digest: want["shared"].Digest}
	sameKeys(t, s, want, "after an update")

	// What was right is stale now: a second writer that read the key
	// before the first wrote loses, rather than overwrite it.
	if err := s.UpdateKey(ctx, change("second", created.Add(2*time.Minute)), created); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("an update read before the last one: %v, want ErrConflict", err)
	}
	sameKeys(t, s, want, "after an update read before the last one")
	// An unknown key is not a conflict.
	if err := s.UpdateKey(ctx, managedKey("nope", created, 0), created); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("updating an unknown key: %v, want ErrNotFound", err)
	}
}

// The lost update: writers each add entries of their own to a key's
// metadata by reading, merging and writing, again on a conflict, and none
// is lost. Without the condition, a writer that read the key before
// another wrote would take that writer's entry away.
func testKeysLostUpdate(t *testing.T, b Backend) {
	ctx := t.Context()
	s := b.Open(t).Store
	first := time.Date(2024, 3, 10, 12, 0, 0, 123456789, time.UTC)
	k := managedKey("shared", first, 1)
	if err := s.CreateKey(ctx, k, digestOf(k.GetKey())); err != nil {
		t.Fatal(err)
	}
	const writers, each = 12, 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	wrote, conflicts := 0, 0
	for w := range writers {
		wg.Go(func() {
			for e := range each {
				name := fmt.Sprintf("w%02d-%d", w, e)
				for try := 0; ; try++ {
					if try == 1000 {
						t.Errorf("%s: still in conflict after %d tries", name, try)
						return
					}
					cur, err := s.ManagedKey(ctx, "shared")
					if err != nil {
						t.Error(err)
						return
					}
					read := cur.Key.GetUpdateTime().AsTime()
					next := proto.CloneOf(cur.Key)
					if next.Metadata == nil {
						next.Metadata = map[string]string{}
					}
					next.Metadata[name] = "v"
					next.UpdateTime = timestamppb.New(read.Add(time.Nanosecond))
					err = s.UpdateKey(ctx, next, read)
					if errors.Is(err, store.ErrConflict) {
						mu.Lock()
						conflicts++
						mu.Unlock()
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					wrote++
					mu.Unlock()
					break
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	got, err := s.ManagedKey(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for w := range writers {
		for e := range each {
			if name := fmt.Sprintf("w%02d-%d", w, e); got.Key.GetMetadata()[name] != "v" {
				lost = append(lost, name)
			}
		}
	}
	if len(lost) > 0 || wrote != writers*each {
		t.Fatalf("%d writes held (%d conflicts), and these entries were lost: %v", wrote, conflicts, lost)
	}
	// Each write moved the update time by a nanosecond from the one it
	// read, and the rest of the key is as it was.
	if at := got.Key.GetUpdateTime().AsTime(); !at.Equal(first.Add(writers * each)) {
		t.Fatalf("the update time is %v after %d writes from %v", at, writers*each, first)
	}
	if d := gocmp.Diff(k.GetModels(), got.Key.GetModels()); d != "" || got.Key.GetMetadata()["team"] != "infra" || len(got.Key.GetMetadata()) != writers*each+1 {
		t.Fatalf("the key after the writers: %v", got.Key)
	}
	t.Logf("%d writes held after %d conflicts", wrote, conflicts)
}

// The ledger's fixture: nine requests over three UTC days, with a record
// at the last second of a day, one at the first of the next, and one
// whose time is given in another zone, late on the day before in UTC.
var (
	ledgerBase = time.Date(2024, 3, 10, 9, 0, 0, 0, time.UTC)
	endOfDay   = time.Date(2024, 3, 10, 23, 59, 59, 0, time.UTC)
	nextDay    = time.Date(2024, 3, 11, 0, 0, 0, 0, time.UTC)
	ledgerAll  = store.UsageQuery{From: ledgerBase.Add(-24 * time.Hour), To: ledgerBase.Add(72 * time.Hour)}
)

func usage(id string, at time.Time, key, model, upstream, dialect, op string, status int, in, out, cost int64) store.UsageRecord {
	return store.UsageRecord{
		Time: at, RequestID: id, Key: key, Model: model, Upstream: upstream, Dialect: dialect, Operation: op, Status: status,
		InputTokens: in, OutputTokens: out, CacheReadTokens: in / 10, CacheWriteTokens: in / 20, ReasoningTokens: out / 5,
		CostNanos: cost, Duration: time.Duration(in+out+1) * time.Millisecond, TTFT: time.Duration(in) * time.Microsecond,
	}
}

func ledgerRecords() []store.UsageRecord {
	plus2 := time.FixedZone("+02", 2*3600)
	return []store.UsageRecord{
		usage("r01", ledgerBase, "alice", "gpt-4o", "openai", "openai", "chat", 200, 100, 50, 1500),
		usage("r02", ledgerBase.Add(time.Hour), "alice", "claude-3", "anthropic", "anthropic", "chat", 200, 200, 80, 4000),
		usage("r03", ledgerBase.Add(2*time.Hour), "Bob", "gpt-4o", "openai", "connect", "chat", 429, 0, 0, 0),
		usage("r04", endOfDay, "Bob", "gpt-4o", "openai", "openai", "count_tokens", 200, 300, 0, 0),
		usage("r05", nextDay, "alice", "gpt-4o", "openai", "openai", "chat", 200, 1000, 400, 9000),
		usage("r06", time.Date(2024, 3, 11, 1, 30, 0, 0, plus2), "anonymous", "Mistral", "openai", "openai", "chat", 500, 10, 0, 0),
		usage("r07", nextDay.Add(5*time.Hour), "anonymous", "suno", "suno", "connect", "submit_music", 200, 0, 0, 250_000_000),
		usage("r08", nextDay.Add(26*time.Hour), "alice", "claude-3", "anthropic", "anthropic", "chat", 200, 50, 25, 700),
		usage("r09", nextDay.Add(27*time.Hour), "Bob", "claude-3", "anthropic", "openai", "chat", 500, 5, 0, 0),
	}
}

// expectUsage is what Usage must answer for q over rs, computed in Go.
func expectUsage(rs []store.UsageRecord, q store.UsageQuery) []store.UsageRow {
	sums := map[store.UsageRow]*store.UsageRow{}
	for _, r := range rs {
		if r.Time.Before(q.From) || !r.Time.Before(q.To) ||
			q.Key != "" && r.Key != q.Key || q.Model != "" && r.Model != q.Model || q.Upstream != "" && r.Upstream != q.Upstream ||
			q.Dialect != "" && r.Dialect != q.Dialect || q.Operation != "" && r.Operation != q.Operation || q.Status != 0 && r.Status != q.Status {
			continue
		}
		var g store.UsageRow
		for _, d := range q.GroupBy {
			switch d {
			case store.GroupKey:
				g.Key = r.Key
			case store.GroupModel:
				g.Model = r.Model
			case store.GroupUpstream:
				g.Upstream = r.Upstream
			case store.GroupDialect:
				g.Dialect = r.Dialect
			case store.GroupOperation:
				g.Operation = r.Operation
			case store.GroupStatus:
				g.Status = r.Status
			case store.GroupDay:
				g.Day = r.Time.UTC().Format("2006-01-02")
			case store.GroupHour:
				g.Hour = r.Time.UTC().Truncate(time.Hour).Unix()
			}
		}
		sum := sums[g]
		if sum == nil {
			sum = &store.UsageRow{}
			*sum = g
			sums[g] = sum
		}
		sum.Requests++
		sum.InputTokens += r.InputTokens
		sum.OutputTokens += r.OutputTokens
		sum.CacheReadTokens += r.CacheReadTokens
		sum.CacheWriteTokens += r.CacheWriteTokens
		sum.ReasoningTokens += r.ReasoningTokens
		sum.CostNanos += r.CostNanos
		sum.DurationNanos += int64(r.Duration)
	}
	out := []store.UsageRow{}
	for _, s := range sums {
		out = append(out, *s)
	}
	if len(q.GroupBy) == 0 && len(out) == 0 {
		out = append(out, store.UsageRow{})
	}
	slices.SortFunc(out, func(a, b store.UsageRow) int {
		for _, d := range q.GroupBy {
			var c int
			switch d {
			case store.GroupKey:
				c = cmp.Compare(a.Key, b.Key)
			case store.GroupModel:
				c = cmp.Compare(a.Model, b.Model)
			case store.GroupUpstream:
				c = cmp.Compare(a.Upstream, b.Upstream)
			case store.GroupDialect:
				c = cmp.Compare(a.Dialect, b.Dialect)
			case store.GroupOperation:
				c = cmp.Compare(a.Operation, b.Operation)
			case store.GroupStatus:
				c = cmp.Compare(a.Status, b.Status)
			case store.GroupDay:
				c = cmp.Compare(a.Day, b.Day)
			case store.GroupHour:
				c = cmp.Compare(a.Hour, b.Hour)
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

// usageIs fails the test unless Usage answers q with want.
func usageIs(t *testing.T, s store.Store, q store.UsageQuery, want []store.UsageRow) {
	t.Helper()
	got, err := s.Usage(t.Context(), q)
	if err != nil {
		t.Fatalf("%+v: %v", q, err)
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Fatalf("usage of %+v (-want +got):\n%s", q, d)
	}
}

// recordLedger stores the fixture in two batches.
func recordLedger(t *testing.T, s store.Store) []store.UsageRecord {
	t.Helper()
	rs := ledgerRecords()
	if err := s.RecordUsage(t.Context(), rs[:4]); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordUsage(t.Context(), rs[4:]); err != nil {
		t.Fatal(err)
	}
	return rs
}

// Usage sums the records of [From, To) that match every filter; no
// grouping is one row, zero when nothing matches; only the dimensions
// listed may be grouped by.
func testLedger(t *testing.T, b Backend) {
	ctx := t.Context()
	o := b.Open(t)
	s := o.Store
	usageIs(t, s, ledgerAll, []store.UsageRow{{}})
	usageIs(t, s, store.UsageQuery{From: ledgerAll.From, To: ledgerAll.To, GroupBy: []string{store.GroupKey}}, []store.UsageRow{})
	if err := s.RecordUsage(ctx, nil); err != nil {
		t.Fatalf("recording no records: %v", err)
	}
	rs := recordLedger(t, s)

	// The totals, by hand.
	total := store.UsageRow{
		Requests: 9, InputTokens: 1665, OutputTokens: 555,
		CacheReadTokens: 10 + 20 + 30 + 100 + 1 + 5, CacheWriteTokens: 5 + 10 + 15 + 50 + 2,
		ReasoningTokens: 10 + 16 + 80 + 5, CostNanos: 250_015_200,
		DurationNanos: int64(time.Duration(1665+555+9) * time.Millisecond),
	}
	usageIs(t, s, ledgerAll, []store.UsageRow{total})
	usageIs(t, s, ledgerAll, expectUsage(rs, ledgerAll))

	// [From, To): a record at From counts, one at To does not.
	r01, r02 := rs[0], rs[1]
	usageIs(t, s, store.UsageQuery{From: ledgerBase, To: ledgerBase.Add(time.Hour)}, []store.UsageRow{{
		Requests: 1, InputTokens: 100, OutputTokens: 50, CacheReadTokens: 10, CacheWriteTokens: 5, ReasoningTokens: 10,
		CostNanos: 1500, DurationNanos: int64(r01.Duration),
	}})
	usageIs(t, s, store.UsageQuery{From: ledgerBase.Add(time.Nanosecond), To: ledgerBase.Add(time.Hour + time.Nanosecond)}, []store.UsageRow{{
		Requests: 1, InputTokens: 200, OutputTokens: 80, CacheReadTokens: 20, CacheWriteTokens: 10, ReasoningTokens: 16,
		CostNanos: 4000, DurationNanos: int64(r02.Duration),
	}})
	usageIs(t, s, store.UsageQuery{From: endOfDay, To: nextDay}, expectUsage(rs[3:4], ledgerAll))
	usageIs(t, s, store.UsageQuery{From: nextDay, To: nextDay}, []store.UsageRow{{}})

	// Filters, alone and together.
	for _, q := range []store.UsageQuery{
		{Key: "alice"}, {Key: "Bob"}, {Key: "nobody"}, {Model: "gpt-4o"}, {Upstream: "anthropic"}, {Dialect: "connect"},
		{Operation: "submit_music"}, {Status: 500}, {Status: 404},
		{Key: "alice", Model: "gpt-4o"}, {Key: "Bob", Status: 500, Dialect: "openai"}, {Key: "alice", Upstream: "openai", Operation: "chat", Status: 200},
	} {
		q.From, q.To = ledgerAll.From, ledgerAll.To
		usageIs(t, s, q, expectUsage(rs, q))
	}
	got, err := s.Usage(ctx, store.UsageQuery{From: ledgerAll.From, To: ledgerAll.To, Key: "alice", Model: "gpt-4o"})
	if err != nil || len(got) != 1 || got[0].Requests != 2 || got[0].InputTokens != 1100 || got[0].CostNanos != 10500 {
		t.Fatalf("alice on gpt-4o: %+v %v, want 2 requests, 1100 input tokens, 10500 nano-USD", got, err)
	}

	// Only the dimensions listed: never a caller's text in the SQL.
	for _, bad := range [][]string{{"nope"}, {"key; DROP TABLE usage_records"}, {store.GroupKey, "time"}, {"Key"}} {
		if _, err := s.Usage(ctx, store.UsageQuery{From: ledgerAll.From, To: ledgerAll.To, GroupBy: bad}); err == nil {
			t.Fatalf("grouping by %q: no error", bad)
		}
	}

	// A restart keeps the ledger.
	s = o.Reopen(t)
	usageIs(t, s, ledgerAll, []store.UsageRow{total})
	q := store.UsageQuery{From: ledgerAll.From, To: ledgerAll.To, GroupBy: []string{store.GroupKey, store.GroupDay}}
	usageIs(t, s, q, expectUsage(rs, q))
}

// Grouping by each dimension and by several: exact sums, the dimensions
// not grouped by empty, rows in the order of the grouped values (bytes
// for text, numbers for the status), days in UTC.
func testLedgerGroups(t *testing.T, b Backend) {
	s := b.Open(t).Store
	rs := recordLedger(t, s)
	group := func(dims ...string) store.UsageQuery {
		return store.UsageQuery{From: ledgerAll.From, To: ledgerAll.To, GroupBy: dims}
	}

	// By hand: days in UTC, a second apart across midnight; keys in byte
	// order.
	day := func(d string, n, in, out, cost int64) store.UsageRow {
		return store.UsageRow{Day: d, Requests: n, InputTokens: in, OutputTokens: out, CostNanos: cost}
	}
	got, err := s.Usage(t.Context(), group(store.GroupDay))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.UsageRow{
		day("2024-03-10", 5, 610, 130, 5500),
		day("2024-03-11", 2, 1000, 400, 250_009_000),
		day("2024-03-12", 2, 55, 25, 700),
	}
	if d := gocmp.Diff(want, got, gocmp.Comparer(sameSums)); d != "" {
		t.Fatalf("by day (-want +got):\n%s", d)
	}
	got, err = s.Usage(t.Context(), group(store.GroupKey))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var requests []int64
	for _, r := range got {
		keys, requests = append(keys, r.Key), append(requests, r.Requests)
	}
	if d := gocmp.Diff([]string{"Bob", "alice", "anonymous"}, keys); d != "" || !slices.Equal(requests, []int64{3, 4, 2}) {
		t.Fatalf("by key: %v %v, want Bob, alice, anonymous with 3, 4, 2 requests", keys, requests)
	}

	// Every dimension, every pair of them either way round, and more.
	qs := []store.UsageQuery{
		group(),
		group(store.GroupKey, store.GroupModel, store.GroupDay),
		group(store.GroupDay, store.GroupStatus, store.GroupKey),
		group(store.GroupDimensions...),
		group(store.GroupKey, store.GroupKey),
	}
	for _, a := range store.GroupDimensions {
		qs = append(qs, group(a))
		for _, z := range store.GroupDimensions {
			if a != z {
				qs = append(qs, group(a, z))
			}
		}
	}
	for _, q := range qs {
		usageIs(t, s, q, expectUsage(rs, q))
	}
	// Grouped and filtered, and a range that cuts a day.
	q := group(store.GroupModel, store.GroupDay)
	q.Key, q.From = "alice", ledgerBase.Add(time.Hour)
	usageIs(t, s, q, expectUsage(rs, q))
}

// sameSums compares rows by their dimensions, requests, input and output
// tokens and cost: what the by-hand sums of testLedgerGroups state.
func sameSums(a, b store.UsageRow) bool {
	return a.Key == b.Key && a.Model == b.Model && a.Upstream == b.Upstream && a.Dialect == b.Dialect && a.Operation == b.Operation &&
		a.Day == b.Day && a.Status == b.Status && a.Requests == b.Requests && a.InputTokens == b.InputTokens &&
		a.OutputTokens == b.OutputTokens && a.CostNanos == b.CostNanos
}

// A request id already kept is skipped: in a batch written again, later
// in the same batch, or in batches that writers send at once.
func testLedgerIdempotent(t *testing.T, b Backend) {
	ctx := t.Context()
	s := b.Open(t).Store
	rs := ledgerRecords()
	if err := s.RecordUsage(ctx, rs[:5]); err != nil {
		t.Fatal(err)
	}
	// Written again with the rest, and r05 twice more in the batch, the
	// last time with other numbers: the record first kept stays.
	changed := rs[4]
	changed.InputTokens, changed.CostNanos = 999_999, 999_999
	batch := append(append(append([]store.UsageRecord{}, rs...), rs[4]), changed)
	if err := s.RecordUsage(ctx, batch); err != nil {
		t.Fatal(err)
	}
	usageIs(t, s, ledgerAll, expectUsage(rs, ledgerAll))
	// A duplicate within a batch of new ids counts once, the first kept.
	first := usage("new-1", ledgerBase, "carol", "m", "u", "d", "chat", 200, 7, 3, 11)
	second := first
	second.InputTokens = 70
	if err := s.RecordUsage(ctx, []store.UsageRecord{first, second, first}); err != nil {
		t.Fatal(err)
	}
	usageIs(t, s, store.UsageQuery{From: ledgerAll.From, To: ledgerAll.To, Key: "carol"}, expectUsage([]store.UsageRecord{first}, ledgerAll))

	// Large batches (more rows than one SQLite statement binds) with ids
	// already kept among new ones, from four writers at once, in orders
	// of their own.
	var many []store.UsageRecord
	for i := range 2500 {
		many = append(many, usage(fmt.Sprintf("bulk-%04d", i), ledgerBase.Add(time.Duration(i)*time.Minute), fmt.Sprintf("k%d", i%7), "m", "u", "d", "chat", 200, int64(i), 1, int64(i)*10))
	}
	if err := s.RecordUsage(ctx, many[100:150]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			mine := slices.Clone(many)
			if w%2 == 1 {
				slices.Reverse(mine)
			}
			for lo := 0; lo < len(mine); lo += 700 {
				if err := s.RecordUsage(ctx, mine[lo:min(lo+700, len(mine))]); err != nil {
					t.Error(err)
					return
				}
			}
			if err := s.RecordUsage(ctx, mine); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	all := append(append(slices.Clone(rs), first), many...)
	q := store.UsageQuery{From: ledgerAll.From, To: ledgerBase.Add(time.Hour * 24 * 365), GroupBy: []string{store.GroupKey}}
	usageIs(t, s, q, expectUsage(all, q))
	q.GroupBy = nil
	usageIs(t, s, q, expectUsage(all, q))
}

// Spent sums a key's cost and its input and output tokens from a time on.
func testSpent(t *testing.T, b Backend) {
	ctx := t.Context()
	s := b.Open(t).Store
	if c, n, err := s.Spent(ctx, "alice", time.Time{}); err != nil || c != 0 || n != 0 {
		t.Fatalf("an empty ledger: %d nano-USD, %d tokens, %v", c, n, err)
	}
	recordLedger(t, s)
	for _, c := range []struct {
		key          string
		since        time.Time
		cost, tokens int64
	}{
		{"alice", time.Time{}, 15200, 1350 + 555},
		{"alice", ledgerBase, 15200, 1350 + 555},
		{"alice", ledgerBase.Add(time.Nanosecond), 4000 + 9000 + 700, 200 + 80 + 1000 + 400 + 50 + 25},
		{"alice", nextDay, 9000 + 700, 1000 + 400 + 50 + 25},
		{"alice", nextDay.Add(time.Nanosecond), 700, 75},
		{"alice", nextDay.Add(30 * time.Hour), 0, 0},
		{"Bob", ledgerBase, 0, 305},
		{"anonymous", nextDay, 250_000_000, 0},
		{"nobody", time.Time{}, 0, 0},
	} {
		cost, tokens, err := s.Spent(ctx, c.key, c.since)
		if err != nil || cost != c.cost || tokens != c.tokens {
			t.Errorf("Spent(%s, %v) = %d nano-USD, %d tokens, %v; want %d, %d", c.key, c.since, cost, tokens, err, c.cost, c.tokens)
		}
	}
}

// benchRecordUsage is one batch of 100 usage records, as the ledger's
// writer sends them from a busy gateway.
func benchRecordUsage(b *testing.B, be Backend) {
	s := be.Open(b).Store
	ctx := b.Context()
	batch := make([]store.UsageRecord, 100)
	n := 0
	for b.Loop() {
		for i := range batch {
			batch[i] = usage(fmt.Sprintf("req-%09d", n), ledgerBase.Add(time.Duration(n)*time.Millisecond), fmt.Sprintf("key-%d", n%20),
				"gpt-4o", "openai", "openai", "chat", 200, 1200, 300, 4500)
			n++
		}
		if err := s.RecordUsage(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}
