package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlite"
	"github.com/parleyhq/parley/store/storetest"
	_ "github.com/parleyhq/parley/translate/golden"
)

func open(t testing.TB, path string) *sqlite.SQLite {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func task(id string, status parleyv1.TaskStatus) *parleyv1.Task { return storetest.Task(id, status) }

func chain(n int, created time.Time) []*parleyv1.StoredResponse {
	return storetest.Chain("resp_", n, created)
}

func count(t testing.TB, s *sqlite.SQLite, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var backend = storetest.Backend{Open: func(t testing.TB) storetest.Opened {
	path := filepath.Join(t.TempDir(), "parley.db")
	s := open(t, path)
	o := storetest.Opened{Store: s}
	o.Reopen = func(t testing.TB) store.Store {
		_ = s.Close()
		s = open(t, path)
		return s
	}
	o.Count = func(t testing.TB, q string) int { return count(t, s, q) }
	return o
}}

func TestContract(t *testing.T) { storetest.Run(t, backend) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, backend) }

func TestSQLiteRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s := open(t, path)
	if _, err := s.DB().ExecContext(context.Background(), "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, err := sqlite.Open(t.Context(), path); err == nil {
		t.Fatal("a database from a newer Parley was opened")
	}
}
