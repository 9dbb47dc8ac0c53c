package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/store"
)

// insertUsage writes a batch of usage records given as one array per
// column: one statement, the same whatever the batch's size, so that it
// is parsed and planned once per connection and sends no more parameters
// for a thousand records than for one.
const insertUsage = `INSERT INTO usage_records(request_id, time, day, key, model, upstream, dialect, operation, status,
		input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
		cost_nanos, duration_nanos, ttft_nanos)
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::integer[],
		$10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[],
		$15::bigint[], $16::bigint[], $17::bigint[])
	ON CONFLICT (request_id) DO NOTHING`

// usageDay is the UTC day of a record's time, the text its day column
// holds.
func usageDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// RecordUsage implements store.Ledger. The batch is one statement, so one
// transaction; a request id already stored, by an earlier call or earlier
// in this one, is skipped. The records go in the order of their request
// ids, so that replicas writing overlapping batches at once wait for each
// other in the same order instead of deadlocking.
func (p *Postgres) RecordUsage(ctx context.Context, rs []store.UsageRecord) error {
	if len(rs) == 0 {
		return nil
	}
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rs[a].RequestID, rs[b].RequestID) })
	n := len(rs)
	strs := func() []string { return make([]string, n) }
	ints := func() []int64 { return make([]int64, n) }
	ids, days, keys, models, upstreams, dialects, operations := strs(), strs(), strs(), strs(), strs(), strs(), strs()
	times, in, out, cacheRead, cacheWrite, reasoning, cost, dur, ttft := ints(), ints(), ints(), ints(), ints(), ints(), ints(), ints(), ints()
	statuses := make([]int32, n)
	for i, j := range order {
		r := &rs[j]
		ids[i], times[i], days[i] = r.RequestID, unixNanos(r.Time), usageDay(r.Time)
		keys[i], models[i], upstreams[i], dialects[i], operations[i] = r.Key, r.Model, r.Upstream, r.Dialect, r.Operation
		statuses[i] = int32(r.Status)
		in[i], out[i], cacheRead[i], cacheWrite[i], reasoning[i] = r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens, r.ReasoningTokens
		cost[i], dur[i], ttft[i] = r.CostNanos, int64(r.Duration), int64(r.TTFT)
	}
	var err error
	for range 3 {
		_, err = p.pool.Exec(ctx, insertUsage, ids, times, days, keys, models, upstreams, dialects, operations, statuses,
			in, out, cacheRead, cacheWrite, reasoning, cost, dur, ttft)
		if !hasCode(err, deadlockDetected, serializationFail) {
			break
		}
	}
	return err
}

// usageSums are the sums of a group, in the order of store.UsageSums. A
// sum of bigints is numeric in PostgreSQL; it is read back as a bigint.
const usageSums = `count(*), coalesce(sum(input_tokens), 0)::bigint, coalesce(sum(output_tokens), 0)::bigint,
	coalesce(sum(cache_read_tokens), 0)::bigint, coalesce(sum(cache_write_tokens), 0)::bigint,
	coalesce(sum(reasoning_tokens), 0)::bigint, coalesce(sum(cost_nanos), 0)::bigint, coalesce(sum(duration_nanos), 0)::bigint`

// Usage implements store.Ledger.
func (p *Postgres) Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error) {
	var dims, cols []string
	for _, d := range q.GroupBy {
		col, ok := store.UsageColumns[d]
		if !ok {
			return nil, fmt.Errorf("store: usage cannot be grouped by %q", d)
		}
		if !slices.Contains(cols, col) {
			dims, cols = append(dims, d), append(cols, col)
		}
	}
	where := []string{"time >= $1", "time < $2"}
	args := []any{unixNanos(q.From), unixNanos(q.To)}
	filter := func(col string, v any) {
		args = append(args, v)
		where = append(where, col+" = $"+strconv.Itoa(len(args)))
	}
	for _, f := range []struct {
		col string
		v   string
	}{{"key", q.Key}, {"model", q.Model}, {"upstream", q.Upstream}, {"dialect", q.Dialect}, {"operation", q.Operation}} {
		if f.v != "" {
			filter(f.col, f.v)
		}
	}
	if q.Status != 0 {
		filter("status", int32(q.Status))
	}
	sel := usageSums
	group := ""
	if len(cols) > 0 {
		list := strings.Join(cols, ", ")
		sel = list + ", " + usageSums
		group = " GROUP BY " + list + " ORDER BY " + list
	}
	rows, err := p.pool.Query(ctx, `SELECT `+sel+` FROM usage_records WHERE `+strings.Join(where, " AND ")+group, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.UsageRow{}
	for rows.Next() {
		var r store.UsageRow
		fields := make([]any, 0, len(dims)+8)
		for _, d := range dims {
			fields = append(fields, store.UsageField(&r, d))
		}
		if err := rows.Scan(append(fields, store.UsageSums(&r)...)...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Spent implements store.Ledger.
func (p *Postgres) Spent(ctx context.Context, key string, since time.Time) (costNanos, tokens int64, err error) {
	err = p.pool.QueryRow(ctx, `SELECT coalesce(sum(cost_nanos), 0)::bigint, coalesce(sum(input_tokens + output_tokens), 0)::bigint
		FROM usage_records WHERE key = $1 AND time >= $2`, key, unixNanos(since)).Scan(&costNanos, &tokens)
	return costNanos, tokens, err
}
