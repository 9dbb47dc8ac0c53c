package govern

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlite"
	"github.com/parleyhq/parley/translate"
	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

// Cached input is priced apart from the rest of the input; a model with no
// cache prices charges cached input at the input price.
func TestCost(t *testing.T) {
	p := PriceOf(&config.Pricing{Input: 3, Output: 15, CacheRead: proto.Float64(0.3), CacheWrite: proto.Float64(3.75)})
	u := &parleyv1.Usage{InputTokens: proto.Int64(1_000_000), CacheReadTokens: proto.Int64(200_000), CacheCreationTokens: proto.Int64(100_000), OutputTokens: proto.Int64(10_000)}
	// 700k × $3 + 200k × $0.30 + 100k × $3.75 + 10k × $15, per million.
	if got, want := p.Cost(u), int64((2.1+0.06+0.375+0.15)*NanosPerUSD); got != want {
		t.Errorf("cost = %d nano-USD, want %d", got, want)
	}
	plain := PriceOf(&config.Pricing{Input: 1, Output: 2})
	if got := plain.Cost(u); got != int64((1.0+0.02)*NanosPerUSD) {
		t.Errorf("cost without cache prices = %d", got)
	}
	var none *Price
	if none.Cost(u) != 0 || p.Cost(nil) != 0 {
		t.Error("no price or no usage must cost nothing")
	}
	ps := NewPrices([]config.Model{{Name: "exact", Pricing: &config.Pricing{Input: 1}}, {Name: "claude-*", Pricing: &config.Pricing{Input: 2}}, {Name: "free"}})
	if ps.Of("exact").Input != 1e3 || ps.Of("claude-x").Input != 2e3 || ps.Of("free") != nil || ps.Of("other") != nil {
		t.Error("prices by exact name and glob")
	}
}

func TestCounterLimits(t *testing.T) {
	if CounterLimits(nil) != nil || CounterLimits(&parleyv1.KeyLimits{}) != nil {
		t.Error("no limits must give nil, so that nothing is counted")
	}
	l := CounterLimits(LimitsFromConfig(&config.KeyLimits{RequestsPerMinute: 5, Budget: &config.Budget{USD: proto.Float64(2.5), Per: config.PerWeek}}))
	if l.RequestsPerMinute != 5 || l.BudgetNanos != 2_500_000_000 || l.Period != quota.PeriodWeek || l.TokensPerMinute != 0 {
		t.Errorf("limits = %+v", l)
	}
}

// failingLedger fails its first writes, then keeps what it is given.
type failingLedger struct {
	mu     sync.Mutex
	fails  int
	writes int
	got    map[string]store.UsageRecord
}

func (f *failingLedger) RecordUsage(_ context.Context, rs []store.UsageRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.fails > 0 {
		f.fails--
		return errors.New("database away")
	}
	for _, r := range rs {
		if _, ok := f.got[r.RequestID]; !ok {
			f.got[r.RequestID] = r
		}
	}
	return nil
}

func (f *failingLedger) Usage(context.Context, store.UsageQuery) ([]store.UsageRow, error) {
	return nil, nil
}

func (f *failingLedger) Spent(_ context.Context, key string, since time.Time) (int64, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var c, n int64
	for _, r := range f.got {
		if r.Key == key && !r.Time.Before(since) {
			c, n = c+r.CostNanos, n+r.InputTokens+r.OutputTokens
		}
	}
	return c, n, nil
}

// A ledger that cannot be written keeps its records and writes them once
// it can, each once; Close writes what is left.
func TestRecorderKeepsRecordsThroughFailures(t *testing.T) {
	l := &failingLedger{fails: 2, got: map[string]store.UsageRecord{}}
	var logs bytes.Buffer
	g := New(Options{Ledger: l, FlushInterval: 5 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for i := range 1200 {
		g.Record("k", End{RequestID: "r" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + time.Duration(i).String(), Start: time.Now(),
			Usage: &parleyv1.Usage{InputTokens: proto.Int64(1)}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(l.got) != 1200 {
		t.Errorf("the ledger holds %d records, want 1200", len(l.got))
	}
	if n := strings.Count(logs.String(), "could not be written"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, logs.String())
	}
	if testutil.ToFloat64(g.m.ledgerWritten) != 1200 || testutil.ToFloat64(g.m.ledgerErrors) < 2 {
		t.Errorf("written %v, errors %v", testutil.ToFloat64(g.m.ledgerWritten), testutil.ToFloat64(g.m.ledgerErrors))
	}
}

// brokenCounters fail every call, as an unreachable Redis does.
type brokenCounters struct{ quota.Counters }

func (brokenCounters) Admit(context.Context, *quota.Ask) (quota.Grant, error) {
	return quota.Grant{}, errors.New("dial tcp 10.0.0.9:6379: connection refused")
}
func (brokenCounters) SeedBudget(context.Context, string, quota.Period, time.Time, int64, int64) error {
	return nil
}
func (brokenCounters) Close() error { return nil }

// When the counters cannot be reached, requests are let through by
// default and refused with deny; either way the metric counts it and the
// log says so once a minute.
func TestCountersUnreachable(t *testing.T) {
	key := &Key{Name: "k", Limits: &quota.Limits{RequestsPerMinute: 1}}
	for _, deny := range []bool{false, true} {
		var logs bytes.Buffer
		reg := prometheus.NewRegistry()
		g := New(Options{Counters: brokenCounters{}, Deny: deny, Registry: reg, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		for range 5 {
			_, _, err := g.Admit(context.Background(), key, "id", nil)
			var se *translate.StatusError
			if deny != (err != nil) || deny && (!errors.As(err, &se) || se.Err.GetCode() != parleyv1.Code_CODE_UNAVAILABLE) {
				t.Errorf("deny=%v: err = %v", deny, err)
			}
		}
		if n := testutil.ToFloat64(g.m.checkErrors); n != 5 {
			t.Errorf("deny=%v: %v errors counted, want 5", deny, n)
		}
		if n := strings.Count(logs.String(), "cannot be checked"); n != 1 {
			t.Errorf("deny=%v: logged %d times in a burst, want once", deny, n)
		}
		_ = g.Close(context.Background())
	}
}

// A budget's count starts from the ledger: counters that start empty (a
// restart) still refuse a key whose period is spent.
func TestBudgetStartsFromLedger(t *testing.T) {
	l := &failingLedger{got: map[string]store.UsageRecord{
		"old": {RequestID: "old", Key: "k", Time: time.Now(), InputTokens: 80, OutputTokens: 30},
	}}
	g := New(Options{Ledger: l})
	defer func() { _ = g.Close(context.Background()) }()
	key := &Key{Name: "k", Limits: &quota.Limits{BudgetTokens: 100, Period: quota.PeriodDay}}
	_, _, err := g.Admit(context.Background(), key, "id", nil)
	var se *translate.StatusError
	if !errors.As(err, &se) || se.Err.GetLimit().GetLimit() != quota.LimitBudget || !se.Err.GetLimit().GetQuota() {
		t.Fatalf("a spent budget after a restart: %v", err)
	}
}

// Text a client chose (a model name under a glob) is made fit for every
// ledger: PostgreSQL refuses NUL and invalid UTF-8 in text.
func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"claude-x":               "claude-x",
		"glob-\x00x":             "glob-x",
		"bad-\xff-utf8":          "bad-\uFFFD-utf8",
		"tab\there":              "tabhere",
		strings.Repeat("é", 150): strings.Repeat("é", 100),
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// failingSpent is a ledger whose reads fail, as a database away does.
type failingSpent struct{ failingLedger }

func (*failingSpent) Spent(context.Context, string, time.Time) (int64, int64, error) {
	return 0, 0, errors.New("database away")
}

// A budget that cannot be started from the ledger is refused with deny,
// and is not counted from zero either way: its period's count starts only
// from a seed.
func TestBudgetSeedFails(t *testing.T) {
	key := &Key{Name: "k", Limits: &quota.Limits{BudgetTokens: 100, Period: quota.PeriodDay}}
	for _, deny := range []bool{false, true} {
		l := &failingSpent{failingLedger{got: map[string]store.UsageRecord{}}}
		g := New(Options{Ledger: l, Deny: deny})
		tk, _, err := g.Admit(context.Background(), key, "id", nil)
		if deny != (err != nil) {
			t.Errorf("deny=%v: err = %v", deny, err)
		}
		if !deny {
			tk.Settle(End{RequestID: "r1", Start: time.Now(), Usage: &parleyv1.Usage{InputTokens: proto.Int64(500)}})
			if _, _, err := g.Admit(context.Background(), key, "id2", nil); err != nil {
				t.Errorf("a settlement before the seed was counted as the period's spend: %v", err)
			}
		}
		_ = g.Close(context.Background())
	}
}

// openKeys opens a SQLite store in a temporary directory.
func openKeys(t *testing.T) *sqlite.SQLite {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// racingKeys holds the first two reads of a key until both are done, so
// that two updates start from the same record, and counts the conflicts
// the store reports.
type racingKeys struct {
	store.Keys
	both      sync.WaitGroup
	reads     atomic.Int32
	conflicts atomic.Int32
}

func (r *racingKeys) ManagedKey(ctx context.Context, name string) (store.StoredKey, error) {
	k, err := r.Keys.ManagedKey(ctx, name)
	if r.reads.Add(1) <= 2 {
		r.both.Done()
		r.both.Wait()
	}
	return k, err
}

func (r *racingKeys) UpdateKey(ctx context.Context, k *parleyv1.ManagedKey, read time.Time) error {
	err := r.Keys.UpdateKey(ctx, k, read)
	if errors.Is(err, store.ErrConflict) {
		r.conflicts.Add(1)
	}
	return err
}

// Two admins changing different fields of one key at once, both from the
// same record and with a clock that does not move: both changes hold, the
// later one written again over the earlier, and each write moves the
// update time.
func TestUpdateKeyConcurrent(t *testing.T) {
	ctx := t.Context()
	st := openKeys(t)
	keys := &racingKeys{Keys: st}
	keys.both.Add(2)
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	a := &Admin{Keys: keys, Now: func() time.Time { return at }}
	if _, err := a.CreateKey(ctx, &parleyv1.ManagedKey{Name: "k", Models: []string{"old-*"}, Metadata: map[string]string{"was": "here"}}, ""); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var errs [2]error
	wg.Go(func() {
		_, errs[0] = a.UpdateKey(ctx, "k", &parleyv1.ManagedKey{Models: []string{"gpt-*"}}, []string{FieldModels}, "")
	})
	wg.Go(func() {
		_, errs[1] = a.UpdateKey(ctx, "k", &parleyv1.ManagedKey{Metadata: map[string]string{"team": "search"}}, []string{FieldMetadata}, "")
	})
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	got, err := st.ManagedKey(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	k := got.Key
	if len(k.GetModels()) != 1 || k.GetModels()[0] != "gpt-*" || len(k.GetMetadata()) != 1 || k.GetMetadata()["team"] != "search" {
		t.Fatalf("after two updates of different fields: models %v, metadata %v; want [gpt-*] and team=search", k.GetModels(), k.GetMetadata())
	}
	if n := keys.conflicts.Load(); n != 1 {
		t.Errorf("%d conflicts, want 1: the updates did not start from the same record", n)
	}
	if !k.GetCreateTime().AsTime().Equal(at) || !k.GetUpdateTime().AsTime().Equal(at.Add(2*time.Nanosecond)) {
		t.Errorf("created %v, updated %v; want %v and 2ns later", k.GetCreateTime().AsTime(), k.GetUpdateTime().AsTime(), at)
	}
}

// meddlingKeys changes the key behind every read, as another replica
// would, so that no write made from a read holds.
type meddlingKeys struct {
	store.Keys
	writes atomic.Int32
}

func (m *meddlingKeys) ManagedKey(ctx context.Context, name string) (store.StoredKey, error) {
	k, err := m.Keys.ManagedKey(ctx, name)
	if err != nil {
		return k, err
	}
	other := proto.CloneOf(k.Key)
	read := other.GetUpdateTime().AsTime()
	other.Metadata = map[string]string{"meddler": read.String()}
	other.UpdateTime = timestamppb.New(read.Add(time.Millisecond))
	return k, m.Keys.UpdateKey(ctx, other, read)
}

func (m *meddlingKeys) UpdateKey(ctx context.Context, k *parleyv1.ManagedKey, read time.Time) error {
	m.writes.Add(1)
	return m.Keys.UpdateKey(ctx, k, read)
}

// A key that changes behind every try is given up after three, with
// CODE_ABORTED, and the change is not made.
func TestUpdateKeyGivesUp(t *testing.T) {
	ctx := t.Context()
	st := openKeys(t)
	keys := &meddlingKeys{Keys: st}
	a := &Admin{Keys: keys}
	if _, err := a.CreateKey(ctx, &parleyv1.ManagedKey{Name: "k"}, ""); err != nil {
		t.Fatal(err)
	}
	_, err := a.UpdateKey(ctx, "k", &parleyv1.ManagedKey{Models: []string{"gpt-*"}}, []string{FieldModels}, "")
	var se *translate.StatusError
	if !errors.As(err, &se) || se.Err.GetCode() != parleyv1.Code_CODE_ABORTED || !strings.Contains(se.Error(), `"k" changed meanwhile`) {
		t.Fatalf("an update that always conflicts: %v, want CODE_ABORTED", err)
	}
	if n := keys.writes.Load(); n != 3 {
		t.Errorf("%d tries, want 3", n)
	}
	got, err := st.ManagedKey(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Key.GetModels()) != 0 || got.Key.GetMetadata()["meddler"] == "" {
		t.Errorf("the key after the update gave up: %v", got.Key)
	}
}

// heldLedger holds its first write until released, and counts the records
// of each write.
type heldLedger struct {
	failingLedger
	arrived, release chan struct{}
	sizes            []int
}

func (h *heldLedger) RecordUsage(ctx context.Context, rs []store.UsageRecord) error {
	h.mu.Lock()
	first := len(h.sizes) == 0
	h.sizes = append(h.sizes, len(rs))
	h.mu.Unlock()
	if first {
		close(h.arrived)
		<-h.release
	}
	return h.failingLedger.RecordUsage(ctx, rs)
}

// A flush writes the records gathered when it began; those that come
// while it writes wait for the next one, rather than being chased a few
// at a time, a transaction and an fsync each, for as long as requests
// come.
func TestFlushWritesWhatWasGathered(t *testing.T) {
	l := &heldLedger{failingLedger: failingLedger{got: map[string]store.UsageRecord{}}, arrived: make(chan struct{}), release: make(chan struct{})}
	g := New(Options{Ledger: l, FlushInterval: time.Hour})
	record := func(from, to int) {
		for i := from; i < to; i++ {
			g.Record("k", End{RequestID: fmt.Sprintf("r%03d", i), Start: time.Now(), Usage: &parleyv1.Usage{InputTokens: proto.Int64(1)}})
		}
	}
	record(0, 10)
	ctx := context.Background()
	flushed := make(chan error, 1)
	go func() { flushed <- g.Flush(ctx) }()
	<-l.arrived
	record(10, 25)
	close(l.release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	sizes, got := slices.Clone(l.sizes), len(l.got)
	l.mu.Unlock()
	if !slices.Equal(sizes, []int{10}) || got != 10 {
		t.Errorf("the flush wrote batches of %v (%d records); want the 10 gathered before it", sizes, got)
	}
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(l.got) != 25 {
		t.Errorf("after Close the ledger holds %d records, want 25", len(l.got))
	}
}

// The lines gathered while a flush writes move to the front of the slice
// the written ones were in, and the next lines follow them there: a busy
// gateway's recorder gathers every interval's lines in one slice, rather
// than in one grown from a line by doubling. What was written is no longer
// held. (Fewer lines than BatchSize, which would start a write.)
func TestRecorderKeepsItsRoom(t *testing.T) {
	l := &heldLedger{failingLedger: failingLedger{got: map[string]store.UsageRecord{}}, arrived: make(chan struct{}), release: make(chan struct{})}
	r := NewRecorder(l, time.Hour, slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()))
	defer func() { _ = r.Close(context.Background()) }()
	add := func(from, to int) {
		for i := from; i < to; i++ {
			r.Add(store.UsageRecord{RequestID: fmt.Sprintf("r%04d", i), Key: "k"})
		}
	}
	look := func() (first *store.UsageRecord, ids []string, cleared bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, u := range r.pending {
			ids = append(ids, u.RequestID)
		}
		all := r.pending[:cap(r.pending)]
		return &all[0], ids, !slices.ContainsFunc(all[len(r.pending):], func(u store.UsageRecord) bool { return u != store.UsageRecord{} })
	}
	add(0, 400)
	first, _, _ := look()
	flushed := make(chan error, 1)
	go func() { flushed <- r.Flush(context.Background()) }()
	<-l.arrived
	add(400, 450) // while the first 400 are written
	close(l.release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	at, ids, cleared := look()
	if at != first || len(ids) != 50 || ids[0] != "r0400" || ids[49] != "r0449" || !cleared {
		t.Fatalf("after the flush: the same slice %v, lines %d (%v...), the rest cleared %v; want the 50 gathered meanwhile at its front",
			at == first, len(ids), ids[:min(len(ids), 2)], cleared)
	}
	add(450, 800)
	if at, ids, _ := look(); at != first || len(ids) != 400 {
		t.Errorf("%d lines gathered, in the same slice: %v; want 400 in it", len(ids), at == first)
	}
	if err := r.Flush(context.Background()); err != nil || len(l.got) != 800 {
		t.Errorf("the ledger holds %d records (%v), want 800", len(l.got), err)
	}
	if at, ids, cleared := look(); at != first || len(ids) != 0 || !cleared {
		t.Errorf("after writing every line: the same slice %v, %d lines, cleared %v", at == first, len(ids), cleared)
	}
}

// batchesAt records where each batch it is given begins.
type batchesAt struct {
	failingLedger
	at []*store.UsageRecord
}

func (l *batchesAt) RecordUsage(ctx context.Context, rs []store.UsageRecord) error {
	l.mu.Lock()
	l.at = append(l.at, &rs[0])
	l.mu.Unlock()
	return l.failingLedger.RecordUsage(ctx, rs)
}

// A backlog (a ledger away for a while) is written batch after batch from
// where it lies, not moved to the front after each batch, which would copy
// the lines left again and again (a million of them at most, MaxPending);
// only the last lines move.
func TestRecorderWritesABacklogInPlace(t *testing.T) {
	l := &batchesAt{failingLedger: failingLedger{fails: 1, got: map[string]store.UsageRecord{}}}
	r := NewRecorder(l, time.Hour, slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()))
	defer func() { _ = r.Close(context.Background()) }()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 4 * BatchSize {
		r.mu.Lock()
		r.pending = append(r.pending, store.UsageRecord{RequestID: fmt.Sprintf("r%05d", i), Key: "k"})
		r.mu.Unlock()
	}
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("the first write did not fail")
	}
	l.at = nil
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(l.got) != 4*BatchSize || len(l.at) != 4 {
		t.Fatalf("%d records in %d batches, want %d in 4", len(l.got), len(l.at), 4*BatchSize)
	}
	for i := 1; i < 3; i++ {
		if l.at[i] == l.at[0] {
			t.Errorf("batch %d was written from the front: the backlog was moved after each batch", i+1)
		}
	}
}
