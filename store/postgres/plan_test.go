package postgres

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/store/postgres/pgtest"
)

// The statements run per request, per claim or per swept response look
// rows up by key: none scans a table whose size grows with what is stored,
// as the planner's plans show on tables of realistic size.
func TestStatementPlans(t *testing.T) {
	p, err := Open(t.Context(), Options{DSN: pgtest.DSN(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	ctx := t.Context()
	for _, q := range []string{
		`INSERT INTO responses(id, owner, expires_at, inputs, turns, base, hidden, body)
			SELECT 'r' || g, 'a', g, 1, 2, NULL, g % 100 = 0, '' FROM generate_series(1, 20000) g`,
		`UPDATE responses SET base = 'r' || (g - 1) FROM generate_series(2, 20000) g WHERE id = 'r' || g AND g % 10 != 1`,
		`INSERT INTO turns(hash, body) SELECT decode(md5(g::text), 'hex'), '' FROM generate_series(1, 40000) g`,
		`INSERT INTO response_turns(response_id, position, hash)
			SELECT 'r' || g, p, decode(md5((2 * (g - 1) + p + 1)::text), 'hex') FROM generate_series(1, 20000) g, generate_series(0, 1) p`,
		`INSERT INTO tasks(id, owner, status, updated_at, lease_until, body)
			SELECT 't' || g, 'a', CASE WHEN g % 3 = 0 THEN 1 ELSE 2 END, 0, g, '' FROM generate_series(1, 20000) g`,
		`INSERT INTO deliveries(task_id, url, state, attempts, next_at, last_error)
			SELECT 't' || g, 'u', CASE WHEN g % 50 = 0 THEN 0 ELSE 1 END, 0, g, '' FROM generate_series(1, 20000) g`,
		`ANALYZE`,
	} {
		if _, err := p.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	for _, c := range []struct {
		q    string
		args []any
	}{
		{readTurns, []any{"r55"}},
		{chainHashes, []any{"r55"}},
		{dropTurnsQuery, []any{[][]byte{{1, 2}}}},
		{`SELECT base, hidden FROM responses WHERE id = $1 FOR UPDATE`, []any{"r5"}},
		{`SELECT EXISTS (SELECT 1 FROM responses WHERE base = $1)`, []any{"r5"}},
		{`SELECT id FROM responses WHERE expires_at <= $1 AND NOT hidden LIMIT $2 FOR UPDATE SKIP LOCKED`, []any{int64(50), 100}},
		{`SELECT id FROM responses r WHERE hidden
			AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.base = r.id OFFSET 0) LIMIT $1 FOR UPDATE SKIP LOCKED`, []any{100}},
		{`SELECT id FROM tasks WHERE status = 1 AND lease_until <= $1 ORDER BY lease_until, id LIMIT $2 FOR UPDATE SKIP LOCKED`, []any{int64(100), 200}},
		{`UPDATE tasks SET lease_until = $1 WHERE id = ANY($2) AND status = 1`, []any{int64(100), []string{"t1", "t2"}}},
		{`SELECT task_id FROM deliveries WHERE state = 0 AND next_at <= $1 ORDER BY next_at LIMIT $2 FOR UPDATE SKIP LOCKED`, []any{int64(100), 4}},
	} {
		rows, err := p.pool.Query(ctx, "EXPLAIN "+c.q, c.args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, c.q)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		for _, step := range plan {
			if strings.Contains(step, "Seq Scan on") {
				t.Errorf("a step scans a table:\n%s\n%s", c.q, strings.Join(plan, "\n"))
				break
			}
		}
	}
}
