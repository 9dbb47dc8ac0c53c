package store

import (
	"path/filepath"
	"strings"
	"testing"
)

// The statements run per request look rows up by key: none scans a table
// whose size grows with the number of stored responses.
func TestStatementPlans(t *testing.T) {
	s, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for _, q := range []string{
		readTurns,
		chainHashes,
		`SELECT base, hidden != 0 AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.base = r.id) FROM responses r WHERE id = ?`,
		`SELECT hash FROM response_turns WHERE response_id = ?`,
		`DELETE FROM turns WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM response_turns WHERE hash = ?)`,
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
			if strings.HasPrefix(step, "SCAN ") && step != "SCAN c" && step != "SCAN chain" {
				t.Errorf("%q scans a table:\n%s\n%s", step, q, strings.Join(plan, "\n"))
			}
		}
	}
}
