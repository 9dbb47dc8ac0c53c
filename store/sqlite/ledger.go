package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/store"
)

// usageColumns are a usage record's columns, in the order usageArgs binds
// them.
const usageColumns = `request_id, time, day, key, model, upstream, dialect, operation, status,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
	cost_nanos, duration_nanos, ttft_nanos`

// usageWidth is the number of usageColumns.
const usageWidth = 17

// usageDay is the UTC day of a record's time, the text its day column
// holds.
func usageDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

func usageArgs(args []any, r *store.UsageRecord) []any {
	return append(args, r.RequestID, unixNanos(r.Time), usageDay(r.Time), r.Key, r.Model, r.Upstream, r.Dialect, r.Operation, r.Status,
		r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens, r.ReasoningTokens,
		r.CostNanos, int64(r.Duration), int64(r.TTFT))
}

// RecordUsage implements store.Ledger. The records go in one write, a
// single-row INSERT, prepared once when the store opens, executed for
// each: the driver binds a statement's variables in time quadratic in
// their number, so many rows to one statement cost far more than a
// statement per row. A request id already stored, by an earlier call or
// earlier in this one, is skipped.
func (s *SQLite) RecordUsage(ctx context.Context, rs []store.UsageRecord) error {
	if len(rs) == 0 {
		return nil
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stmt := tx.StmtContext(ctx, s.stmts.insertUsage)
		args := make([]any, 0, usageWidth)
		for i := range rs {
			if _, err := stmt.ExecContext(ctx, usageArgs(args[:0], &rs[i])...); err != nil {
				return err
			}
		}
		return nil
	})
}

// insertUsage stores one usage record.
var insertUsage = `INSERT INTO usage_records(` + usageColumns + `) VALUES (` +
	strings.TrimSuffix(strings.Repeat("?, ", usageWidth), ", ") + `) ON CONFLICT(request_id) DO NOTHING`

// usageSums are the sums of a group, in the order of store.UsageSums.
const usageSums = `count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
	coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0), coalesce(sum(reasoning_tokens), 0),
	coalesce(sum(cost_nanos), 0), coalesce(sum(duration_nanos), 0)`

// Usage implements store.Ledger.
func (s *SQLite) Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error) {
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
	where := []string{"time >= ?", "time < ?"}
	args := []any{unixNanos(q.From), unixNanos(q.To)}
	for _, f := range []struct {
		col string
		v   string
	}{{"key", q.Key}, {"model", q.Model}, {"upstream", q.Upstream}, {"dialect", q.Dialect}, {"operation", q.Operation}} {
		if f.v != "" {
			where, args = append(where, f.col+" = ?"), append(args, f.v)
		}
	}
	if q.Status != 0 {
		where, args = append(where, "status = ?"), append(args, q.Status)
	}
	sel := usageSums
	group := ""
	if len(cols) > 0 {
		list := strings.Join(cols, ", ")
		sel = list + ", " + usageSums
		group = " GROUP BY " + list + " ORDER BY " + list
	}
	rs, err := s.db.QueryContext(ctx, `SELECT `+sel+` FROM usage_records WHERE `+strings.Join(where, " AND ")+group, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rs.Close() }()
	out := []store.UsageRow{}
	for rs.Next() {
		var r store.UsageRow
		fields := make([]any, 0, len(dims)+8)
		for _, d := range dims {
			fields = append(fields, store.UsageField(&r, d))
		}
		if err := rs.Scan(append(fields, store.UsageSums(&r)...)...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// Spent implements store.Ledger.
func (s *SQLite) Spent(ctx context.Context, key string, since time.Time) (costNanos, tokens int64, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT coalesce(sum(cost_nanos), 0), coalesce(sum(input_tokens + output_tokens), 0)
		FROM usage_records WHERE key = ? AND time >= ?`, key, unixNanos(since)).Scan(&costNanos, &tokens)
	return costNanos, tokens, err
}
