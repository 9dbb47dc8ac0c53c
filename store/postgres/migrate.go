package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's steps, NNNN_name.sql, applied in order;
// a step once released is never edited, only followed by another.
//
//go:embed migrations/*.sql
var migrations embed.FS

// step is one migration.
type step struct {
	version int
	name    string
	sql     string
}

// steps reads the embedded migrations, numbered 1, 2, 3... without gaps.
func steps() ([]step, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]step, 0, len(names))
	for i, n := range names {
		base := path.Base(n)
		num, name, ok := strings.Cut(strings.TrimSuffix(base, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("migration %s: want %04d_name.sql", base, i+1)
		}
		b, err := migrations.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, step{version: v, name: name, sql: string(b)})
	}
	return out, nil
}

// Version is the schema version this Parley knows.
func Version() int {
	s, err := steps()
	if err != nil {
		panic(err) // embedded at build time: a test catches it first
	}
	return len(s)
}

// migrateLock names the advisory lock migrations run under, per schema, so
// that replicas starting at once migrate one after the other and all but
// the first find nothing left to do.
const migrateLock = `SELECT pg_advisory_lock(hashtext('parley.migrate.' || current_schema()))`
const migrateUnlock = `SELECT pg_advisory_unlock(hashtext('parley.migrate.' || current_schema()))`

// versionTable records the steps applied.
const versionTable = `CREATE TABLE IF NOT EXISTS parley_schema (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// ErrNewerSchema is returned when the database was migrated by a newer
// Parley than this one.
type ErrNewerSchema struct{ Database, Known int }

func (e *ErrNewerSchema) Error() string {
	return fmt.Sprintf("the database schema is at version %d, newer than this Parley knows (%d): run a Parley at least as new as the one that migrated it", e.Database, e.Known)
}

// migrate applies the steps the database lacks under the advisory lock, and
// returns how many it applied. With apply false it applies nothing and
// fails when any step is missing.
func migrate(ctx context.Context, pool *pgxpool.Pool, apply bool) (int, error) {
	all, err := steps()
	if err != nil {
		return 0, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, migrateLock); err != nil {
		return 0, err
	}
	defer func() {
		// Released with the session otherwise; a failed unlock is not
		// worth failing what was applied.
		_, _ = conn.Exec(context.WithoutCancel(ctx), migrateUnlock)
	}()
	if _, err := conn.Exec(ctx, versionTable); err != nil {
		return 0, err
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM parley_schema`).Scan(&current); err != nil {
		return 0, err
	}
	if current > len(all) {
		return 0, &ErrNewerSchema{Database: current, Known: len(all)}
	}
	if !apply && current < len(all) {
		return 0, fmt.Errorf("the database schema is at version %d of %d: run `parley migrate` first", current, len(all))
	}
	applied := 0
	for _, s := range all[current:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, s.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO parley_schema(version, name) VALUES ($1, $2)`, s.version, s.name)
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migration %04d_%s: %w", s.version, s.name, err)
		}
		applied++
	}
	return applied, nil
}
