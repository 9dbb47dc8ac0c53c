// Package sqlite is the embedded store: Parley's default, one database
// file under data_dir for a single process. It implements the contracts of
// package store; store/storetest runs the same suite against it as against
// every other backend.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
)

// SQLite is the embedded store: one database file, written in WAL mode
// with synchronous=FULL, so that a task whose id was returned to a client
// is on disk, and survives a crash of the process or of the machine.
// Writes go through write (commit.go), which commits the writes that
// arrive together in one transaction.
type SQLite struct {
	db *sql.DB
	// wmu serialises commits in the process: SQLite takes one writer at a
	// time, and a writer that finds the lock taken sleeps in its busy
	// handler for milliseconds, where a mutex hands over in microseconds.
	wmu sync.Mutex
	// qmu guards queue, the writes waiting for the next commit.
	qmu   sync.Mutex
	queue []*writeJob
	// commits counts committed transactions, for tests.
	commits atomic.Int64
	// stmts are the statements of every stored-response request, parsed
	// once rather than per call.
	stmts struct {
		response, readTurns, respTurns, chainHashes, insertUsage *sql.Stmt
	}
}

var _ store.Store = (*SQLite)(nil)

// schema is applied in steps; PRAGMA user_version records how many ran.
var schema = []string{
	`CREATE TABLE tasks (
		id         TEXT PRIMARY KEY,
		owner      TEXT NOT NULL,
		status     INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		body       BLOB NOT NULL
	);
	CREATE INDEX tasks_active ON tasks(id) WHERE status = 1;
	CREATE TABLE deliveries (
		task_id    TEXT PRIMARY KEY REFERENCES tasks(id),
		url        TEXT NOT NULL,
		state      INTEGER NOT NULL,
		attempts   INTEGER NOT NULL,
		next_at    INTEGER NOT NULL,
		last_error TEXT NOT NULL
	);
	CREATE INDEX deliveries_due ON deliveries(next_at) WHERE state = 0;`,
	turnsSchema,
	// Claims: a task is polled by whoever holds its lease.
	`ALTER TABLE tasks ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
	DROP INDEX tasks_active;
	CREATE INDEX tasks_due ON tasks(lease_until, id) WHERE status = 1;`,
	governanceSchema,
	// RecentTasks: the console lists tasks by their last update.
	`CREATE INDEX tasks_recent ON tasks(updated_at, id);`,
}

// Open opens (creating if needed) the database file at path.
func Open(ctx context.Context, path string) (*SQLite, error) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &SQLite{db: db}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if err := s.prepare(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	return s, nil
}

func (s *SQLite) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		q    string
	}{
		{&s.stmts.response, readResponse},
		{&s.stmts.readTurns, readTurns},
		{&s.stmts.respTurns, respTurns},
		{&s.stmts.chainHashes, chainHashes},
		{&s.stmts.insertUsage, insertUsage},
	} {
		var err error
		if *p.stmt, err = s.db.PrepareContext(ctx, p.q); err != nil {
			return err
		}
	}
	return nil
}

func (s *SQLite) migrate(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > len(schema) {
		return fmt.Errorf("the database is at schema version %d, newer than this Parley knows (%d)", version, len(schema))
	}
	for i := version; i < len(schema); i++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, schema[i]); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("schema step %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

func nanos(t *parleyv1.Task) int64 { return t.GetUpdatedAt().AsTime().UnixNano() }

// CreateTask implements store.Tasks.
func (s *SQLite) CreateTask(ctx context.Context, t *parleyv1.Task) error {
	body, err := proto.Marshal(t)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tasks(id, owner, status, updated_at, body) VALUES(?, ?, ?, ?, ?)`,
			t.GetId(), t.GetOwner(), int(t.GetStatus()), nanos(t), body)
		if isConstraint(err) {
			return store.ErrExists
		}
		return err
	})
}

// Task implements store.Tasks.
func (s *SQLite) Task(ctx context.Context, id string) (*parleyv1.Task, error) {
	var body []byte
	err := s.db.QueryRowContext(ctx, `SELECT body FROM tasks WHERE id = ?`, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return store.DecodeTask(body)
}

// Tasks implements store.Tasks.
func (s *SQLite) Tasks(ctx context.Context, ids []string) ([]*parleyv1.Task, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	marks := strings.Repeat("?,", len(ids))
	return s.query(ctx, `SELECT body FROM tasks WHERE id IN (`+marks[:len(marks)-1]+`)`, args...)
}

func (s *SQLite) query(ctx context.Context, q string, args ...any) ([]*parleyv1.Task, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []*parleyv1.Task
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, err
		}
		t, err := store.DecodeTask(body)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// UpdateTask implements store.Tasks.
func (s *SQLite) UpdateTask(ctx context.Context, t *parleyv1.Task, d *store.Delivery) (bool, error) {
	body, err := proto.Marshal(t)
	if err != nil {
		return false, err
	}
	var updated bool
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET status = ?, updated_at = ?, body = ? WHERE id = ? AND status = ?`,
			int(t.GetStatus()), nanos(t), body, t.GetId(), int(parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		if d != nil {
			if err := saveDelivery(ctx, tx, d); err != nil {
				return err
			}
		}
		updated = true
		return nil
	})
	return updated && err == nil, err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func saveDelivery(ctx context.Context, x execer, d *store.Delivery) error {
	_, err := x.ExecContext(ctx, `INSERT INTO deliveries(task_id, url, state, attempts, next_at, last_error) VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(task_id) DO UPDATE SET url = excluded.url, state = excluded.state, attempts = excluded.attempts,
		next_at = excluded.next_at, last_error = excluded.last_error`,
		d.TaskID, d.URL, int(d.State), d.Attempts, d.NextAt.UnixNano(), d.LastError)
	return err
}

// ClaimTasks implements store.Tasks. One process holds the database, so
// the claim is a plain update; it still goes through the group commit.
func (s *SQLite) ClaimTasks(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*parleyv1.Task, error) {
	var out []*parleyv1.Task
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `UPDATE tasks SET lease_until = ? WHERE id IN
			(SELECT id FROM tasks WHERE status = 1 AND lease_until <= ? ORDER BY lease_until, id LIMIT ?)
			RETURNING body`, now.Add(lease).UnixNano(), now.UnixNano(), limit)
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var body []byte
			if err := rows.Scan(&body); err != nil {
				return err
			}
			t, err := store.DecodeTask(body)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
}

// HoldTasks implements store.Tasks. The ids go as one JSON array, so
// that the statement is the same whatever their number.
func (s *SQLite) HoldTasks(ctx context.Context, until time.Time, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET lease_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND status = 1`, until.UnixNano(), string(list))
		return err
	})
}

// ClaimDeliveries implements store.Tasks.
func (s *SQLite) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*store.Delivery, error) {
	var out []*store.Delivery
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `UPDATE deliveries SET next_at = ? WHERE task_id IN
			(SELECT task_id FROM deliveries WHERE state = 0 AND next_at <= ? ORDER BY next_at LIMIT ?)
			RETURNING task_id, url, state, attempts, next_at, last_error`, now.Add(lease).UnixNano(), now.UnixNano(), limit)
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	return out, err
}

type scanner interface{ Scan(dest ...any) error }

func scanDelivery(r scanner) (*store.Delivery, error) {
	d := &store.Delivery{}
	var next int64
	var state int
	if err := r.Scan(&d.TaskID, &d.URL, &state, &d.Attempts, &next, &d.LastError); err != nil {
		return nil, err
	}
	d.State, d.NextAt = store.DeliveryState(state), time.Unix(0, next)
	return d, nil
}

// SaveDelivery implements store.Tasks.
func (s *SQLite) SaveDelivery(ctx context.Context, d *store.Delivery) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return saveDelivery(ctx, tx, d) })
}

// Delivery implements store.Tasks.
func (s *SQLite) Delivery(ctx context.Context, taskID string) (*store.Delivery, error) {
	d, err := scanDelivery(s.db.QueryRowContext(ctx, `SELECT task_id, url, state, attempts, next_at, last_error FROM deliveries WHERE task_id = ?`, taskID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return d, err
}

// maxRecent is the most tasks one RecentTasks call returns.
const maxRecent = 500

// recentTasks lists tasks newest first with their deliveries, if any. A
// missing delivery comes back as zeros, told apart by has, so that the
// columns scan as scanDelivery expects.
const recentTasks = `SELECT t.body, d.task_id IS NOT NULL AS has,
		coalesce(d.task_id, ''), coalesce(d.url, ''), coalesce(d.state, 0), coalesce(d.attempts, 0),
		coalesce(d.next_at, 0), coalesce(d.last_error, '')
	FROM tasks t LEFT JOIN deliveries d ON d.task_id = t.id
	WHERE t.updated_at < ?
	ORDER BY t.updated_at DESC, t.id DESC LIMIT ?`

// RecentTasks implements store.Tasks.
func (s *SQLite) RecentTasks(ctx context.Context, limit int, before time.Time) ([]store.TaskView, error) {
	limit = min(max(limit, 1), maxRecent)
	until := int64(math.MaxInt64)
	if !before.IsZero() {
		until = before.UnixNano()
	}
	rows, err := s.db.QueryContext(ctx, recentTasks, until, limit)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := []store.TaskView{}
	for rows.Next() {
		var (
			body []byte
			has  bool
		)
		d, err := scanDelivery(prefixed{rows, []any{&body, &has}})
		if err != nil {
			return nil, err
		}
		t, err := store.DecodeTask(body)
		if err != nil {
			return nil, err
		}
		if !has {
			d = nil
		}
		out = append(out, store.TaskView{Task: t, Delivery: d})
	}
	return out, rows.Err()
}

// prefixed scans the columns before those a helper scans.
type prefixed struct {
	r   scanner
	pre []any
}

func (p prefixed) Scan(dest ...any) error {
	return p.r.Scan(append(append(make([]any, 0, len(p.pre)+len(dest)), p.pre...), dest...)...)
}

// DB is the underlying database, for tests and maintenance.
func (s *SQLite) DB() *sql.DB { return s.db }
