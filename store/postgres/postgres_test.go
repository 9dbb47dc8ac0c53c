package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/postgres"
	"github.com/parleyhq/parley/store/postgres/pgtest"
	"github.com/parleyhq/parley/store/storetest"
	_ "github.com/parleyhq/parley/translate/golden"
)

func open(t testing.TB, dsn string) *postgres.Postgres {
	t.Helper()
	p, err := postgres.Open(t.Context(), postgres.Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

var backend = storetest.Backend{Open: func(t testing.TB) storetest.Opened {
	dsn := pgtest.DSN(t)
	p := open(t, dsn)
	o := storetest.Opened{Store: p}
	o.Reopen = func(t testing.TB) store.Store {
		_ = p.Close()
		p = open(t, dsn)
		return p
	}
	o.Count = func(t testing.TB, q string) int {
		t.Helper()
		var n int
		if err := p.Pool().QueryRow(context.Background(), q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return o
}}

func TestContract(t *testing.T) { storetest.Run(t, backend) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, backend) }

// Replicas starting at once migrate exactly once, under the advisory lock.
func TestMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied []int
	)
	for range 3 {
		wg.Go(func() {
			n, err := postgres.Migrate(t.Context(), postgres.Options{DSN: dsn})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			applied = append(applied, n)
			mu.Unlock()
		})
	}
	wg.Wait()
	total := 0
	for _, n := range applied {
		total += n
	}
	if total != postgres.Version() {
		t.Fatalf("three migrators applied %v steps, want %d in all", applied, postgres.Version())
	}
	p := open(t, dsn)
	var rows int
	if err := p.Pool().QueryRow(t.Context(), `SELECT count(*) FROM parley_schema`).Scan(&rows); err != nil || rows != postgres.Version() {
		t.Fatalf("parley_schema holds %d steps (%v), want %d", rows, err, postgres.Version())
	}
}

// A database migrated by a newer Parley is refused with a message that
// says so; one not migrated is refused when migrations are off.
func TestSchemaVersionChecks(t *testing.T) {
	dsn := pgtest.DSN(t)
	if _, err := postgres.Open(t.Context(), postgres.Options{DSN: dsn, NoMigrate: true}); err == nil || !strings.Contains(err.Error(), "parley migrate") {
		t.Fatalf("an empty database with migrations off: %v", err)
	}
	p := open(t, dsn)
	if _, err := p.Pool().Exec(t.Context(), `INSERT INTO parley_schema(version, name) VALUES (999, 'future')`); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(t.Context(), postgres.Options{DSN: dsn})
	var newer *postgres.ErrNewerSchema
	if !errors.As(err, &newer) || newer.Database != 999 || !strings.Contains(err.Error(), "newer than this Parley") {
		t.Fatalf("a newer schema: %v", err)
	}
}

// An unreachable database is an error naming its host and port, never
// the password of the connection string.
func TestUnreachable(t *testing.T) {
	_, err := postgres.Open(t.Context(), postgres.Options{DSN: "postgres://parley:s3cret-pw@127.0.0.1:1/parley?sslmode=disable&connect_timeout=2"})
	if err == nil {
		t.Fatal("opened a database on port 1")
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error %q: want host and port, and no password", err)
	}
	if got := postgres.Describe("postgres://parley:s3cret-pw@db.internal:5433/parley?sslmode=require"); got != "postgres://parley@db.internal:5433/parley" {
		t.Fatalf("Describe: %q", got)
	}
	if _, err := postgres.ParseDSN("postgres://parley:s3cret-pw@db:notaport/x"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("ParseDSN error %v", err)
	}
}
