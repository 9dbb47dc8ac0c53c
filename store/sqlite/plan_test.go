package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

// The statements run per request or per swept response look rows up by
// key: none scans a table whose size grows with the number of stored
// responses.
func TestStatementPlans(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for _, q := range []string{
		readTurns,
		chainHashes,
		dropCheck,
		dropTurn,
		hiddenLeaves,
		`SELECT hash FROM response_turns WHERE response_id = ?`,
		`SELECT id FROM responses WHERE expires_at <= ? AND hidden = 0 LIMIT ?`,
		`SELECT id FROM tasks WHERE status = 1 AND lease_until <= ? ORDER BY lease_until, id LIMIT ?`,
		`SELECT task_id FROM deliveries WHERE state = 0 AND next_at <= ? ORDER BY next_at LIMIT ?`,
		`UPDATE tasks SET lease_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND status = 1`,
	} {
		rows, err := s.db.Query("EXPLAIN QUERY PLAN "+q, "x", "x")
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		_ = rows.Close()
		for _, step := range plan {
			// The chain's own rows, the hidden responses (a partial
			// index, which holds only what is being swept) and a list of
			// ids given as JSON may be scanned.
			if strings.HasPrefix(step, "SCAN ") && step != "SCAN c" && step != "SCAN chain" && step != "SCAN r USING INDEX responses_hidden" &&
				!strings.HasPrefix(step, "SCAN json_each VIRTUAL TABLE") {
				t.Errorf("%q scans a table:\n%s\n%s", step, q, strings.Join(plan, "\n"))
			}
		}
	}
}
