package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
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
		response, readTurns, respTurns, chainHashes *sql.Stmt
	}
}

var _ Tasks = (*SQLite)(nil)

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
}

// OpenSQLite opens (creating if needed) the database file at path.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
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

// CreateTask implements Tasks.
func (s *SQLite) CreateTask(ctx context.Context, t *parleyv1.Task) error {
	body, err := proto.Marshal(t)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tasks(id, owner, status, updated_at, body) VALUES(?, ?, ?, ?, ?)`,
			t.GetId(), t.GetOwner(), int(t.GetStatus()), nanos(t), body)
		if isConstraint(err) {
			return ErrExists
		}
		return err
	})
}

func decodeTask(body []byte) (*parleyv1.Task, error) {
	t := &parleyv1.Task{}
	if err := proto.Unmarshal(body, t); err != nil {
		return nil, fmt.Errorf("store: a stored task cannot be read: %w", err)
	}
	return t, nil
}

// Task implements Tasks.
func (s *SQLite) Task(ctx context.Context, id string) (*parleyv1.Task, error) {
	var body []byte
	err := s.db.QueryRowContext(ctx, `SELECT body FROM tasks WHERE id = ?`, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return decodeTask(body)
}

// Tasks implements Tasks.
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
		t, err := decodeTask(body)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// UpdateTask implements Tasks.
func (s *SQLite) UpdateTask(ctx context.Context, t *parleyv1.Task, d *Delivery) (bool, error) {
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

func saveDelivery(ctx context.Context, x execer, d *Delivery) error {
	_, err := x.ExecContext(ctx, `INSERT INTO deliveries(task_id, url, state, attempts, next_at, last_error) VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(task_id) DO UPDATE SET url = excluded.url, state = excluded.state, attempts = excluded.attempts,
		next_at = excluded.next_at, last_error = excluded.last_error`,
		d.TaskID, d.URL, int(d.State), d.Attempts, d.NextAt.UnixNano(), d.LastError)
	return err
}

// ActiveTasks implements Tasks.
func (s *SQLite) ActiveTasks(ctx context.Context, after string, limit int) ([]*parleyv1.Task, error) {
	return s.query(ctx, `SELECT body FROM tasks WHERE status = 1 AND id > ? ORDER BY id LIMIT ?`, after, limit)
}

// DueDeliveries implements Tasks.
func (s *SQLite) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]*Delivery, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT task_id, url, state, attempts, next_at, last_error FROM deliveries
		WHERE state = 0 AND next_at <= ? ORDER BY next_at LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []*Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

func scanDelivery(r scanner) (*Delivery, error) {
	d := &Delivery{}
	var next int64
	var state int
	if err := r.Scan(&d.TaskID, &d.URL, &state, &d.Attempts, &next, &d.LastError); err != nil {
		return nil, err
	}
	d.State, d.NextAt = DeliveryState(state), time.Unix(0, next)
	return d, nil
}

// SaveDelivery implements Tasks.
func (s *SQLite) SaveDelivery(ctx context.Context, d *Delivery) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return saveDelivery(ctx, tx, d) })
}

// Delivery implements Tasks.
func (s *SQLite) Delivery(ctx context.Context, taskID string) (*Delivery, error) {
	d, err := scanDelivery(s.db.QueryRowContext(ctx, `SELECT task_id, url, state, attempts, next_at, last_error FROM deliveries WHERE task_id = ?`, taskID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return d, err
}

// DB is the underlying database, for tests and maintenance.
func (s *SQLite) DB() *sql.DB { return s.db }
