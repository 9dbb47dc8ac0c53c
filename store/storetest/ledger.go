package storetest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/parleyhq/parley/store"
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
// writer sends them from a busy gateway, with request ids as the gateway
// makes them. With random ids (the second form) each batch lands all over
// the request-id index, the cost time-ordered ids avoid.
func benchRecordUsage(b *testing.B, be Backend, random bool) {
	s := be.Open(b).Store
	ctx := b.Context()
	batch := make([]store.UsageRecord, 100)
	n := 0
	for b.Loop() {
		for i := range batch {
			id := store.NewRequestID()
			if random {
				id = fmt.Sprintf("req_%016x%016x", rand.Uint64(), rand.Uint64())
			}
			batch[i] = usage(id, ledgerBase.Add(time.Duration(n)*time.Millisecond), fmt.Sprintf("key-%d", n%20),
				"gpt-4o", "openai", "openai", "chat", 200, 1200, 300, 4500)
			n++
		}
		if err := s.RecordUsage(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}
