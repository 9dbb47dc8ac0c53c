package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley/store/sqlite"
)

// A sweep larger than one transaction's share goes on until everything
// expired is gone, chains included.
func TestSQLiteSweepInBatches(t *testing.T) {
	defer sqlite.SetSweepBatch(3)()
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "parley.db"))
	now := time.Unix(1800000000, 0)
	for i := range 4 {
		for j, r := range chain(3, now) {
			r.Id = fmt.Sprintf("resp_%d_%d", i, j)
			if j > 0 {
				r.PreviousResponseId = fmt.Sprintf("resp_%d_%d", i, j-1)
			}
			r.Response.Id = r.Id
			if err := s.SaveResponse(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := count(t, s, `SELECT count(*) FROM responses WHERE base IS NOT NULL`); n != 8 {
		t.Fatalf("%d responses continue another, want 8", n)
	}
	n, err := s.SweepResponses(ctx, now.Add(time.Hour))
	if err != nil || n != 12 {
		t.Fatalf("swept %d (%v), want all 12", n, err)
	}
	for _, table := range []string{"responses", "response_turns", "turns"} {
		if n := count(t, s, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%d rows left in %s", n, table)
		}
	}
}
