package storetest

import (
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
