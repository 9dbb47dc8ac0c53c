package postgres

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
)

func nanos(t *parleyv1.Task) int64 { return t.GetUpdatedAt().AsTime().UnixNano() }

// CreateTask implements store.Tasks.
func (p *Postgres) CreateTask(ctx context.Context, t *parleyv1.Task) error {
	body, err := proto.Marshal(t)
	if err != nil {
		return err
	}
	_, err = p.pool.Exec(ctx, `INSERT INTO tasks(id, owner, status, updated_at, body) VALUES ($1, $2, $3, $4, $5)`,
		t.GetId(), t.GetOwner(), int32(t.GetStatus()), nanos(t), body)
	if hasCode(err, uniqueViolation) {
		return store.ErrExists
	}
	return err
}

// Task implements store.Tasks.
func (p *Postgres) Task(ctx context.Context, id string) (*parleyv1.Task, error) {
	var body []byte
	err := p.pool.QueryRow(ctx, `SELECT body FROM tasks WHERE id = $1`, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return store.DecodeTask(body)
}

// Tasks implements store.Tasks.
func (p *Postgres) Tasks(ctx context.Context, ids []string) ([]*parleyv1.Task, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return p.tasks(ctx, `SELECT body FROM tasks WHERE id = ANY($1)`, ids)
}

func (p *Postgres) tasks(ctx context.Context, q string, args ...any) ([]*parleyv1.Task, error) {
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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

// UpdateTask implements store.Tasks. The update and the delivery are one
// statement, so one round trip and one transaction.
func (p *Postgres) UpdateTask(ctx context.Context, t *parleyv1.Task, d *store.Delivery) (bool, error) {
	body, err := proto.Marshal(t)
	if err != nil {
		return false, err
	}
	const update = `UPDATE tasks SET status = $1, updated_at = $2, body = $3 WHERE id = $4 AND status = 1 RETURNING id`
	var n int
	if d == nil {
		err = p.pool.QueryRow(ctx, `WITH u AS (`+update+`) SELECT count(*) FROM u`,
			int32(t.GetStatus()), nanos(t), body, t.GetId()).Scan(&n)
	} else {
		err = p.pool.QueryRow(ctx, `WITH u AS (`+update+`), d AS (
			INSERT INTO deliveries(task_id, url, state, attempts, next_at, last_error)
			SELECT id, $5, $6, $7, $8, $9 FROM u
			ON CONFLICT (task_id) DO UPDATE SET url = excluded.url, state = excluded.state, attempts = excluded.attempts,
				next_at = excluded.next_at, last_error = excluded.last_error)
			SELECT count(*) FROM u`,
			int32(t.GetStatus()), nanos(t), body, t.GetId(),
			d.URL, int32(d.State), int32(d.Attempts), d.NextAt.UnixNano(), d.LastError).Scan(&n)
	}
	return n == 1 && err == nil, err
}

// ClaimTasks implements store.Tasks. SKIP LOCKED lets replicas claiming at
// once take different tasks instead of waiting for each other.
func (p *Postgres) ClaimTasks(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*parleyv1.Task, error) {
	return p.tasks(ctx, `UPDATE tasks SET lease_until = $1 WHERE id IN (
			SELECT id FROM tasks WHERE status = 1 AND lease_until <= $2
			ORDER BY lease_until, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING body`, now.Add(lease).UnixNano(), now.UnixNano(), limit)
}

// HoldTasks implements store.Tasks.
func (p *Postgres) HoldTasks(ctx context.Context, until time.Time, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := p.pool.Exec(ctx, `UPDATE tasks SET lease_until = $1 WHERE id = ANY($2) AND status = 1`, until.UnixNano(), ids)
	return err
}

const deliveryColumns = `task_id, url, state, attempts, next_at, last_error`

// ClaimDeliveries implements store.Tasks.
func (p *Postgres) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*store.Delivery, error) {
	rows, err := p.pool.Query(ctx, `UPDATE deliveries SET next_at = $1 WHERE task_id IN (
			SELECT task_id FROM deliveries WHERE state = 0 AND next_at <= $2
			ORDER BY next_at LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING `+deliveryColumns, now.Add(lease).UnixNano(), now.UnixNano(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func scanDelivery(r pgx.Row) (*store.Delivery, error) {
	d := &store.Delivery{}
	var (
		next            int64
		state, attempts int32
	)
	if err := r.Scan(&d.TaskID, &d.URL, &state, &attempts, &next, &d.LastError); err != nil {
		return nil, err
	}
	d.State, d.Attempts, d.NextAt = store.DeliveryState(state), int(attempts), time.Unix(0, next)
	return d, nil
}

// SaveDelivery implements store.Tasks.
func (p *Postgres) SaveDelivery(ctx context.Context, d *store.Delivery) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO deliveries(`+deliveryColumns+`) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (task_id) DO UPDATE SET url = excluded.url, state = excluded.state, attempts = excluded.attempts,
			next_at = excluded.next_at, last_error = excluded.last_error`,
		d.TaskID, d.URL, int32(d.State), int32(d.Attempts), d.NextAt.UnixNano(), d.LastError)
	return err
}

// Delivery implements store.Tasks.
func (p *Postgres) Delivery(ctx context.Context, taskID string) (*store.Delivery, error) {
	d, err := scanDelivery(p.pool.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE task_id = $1`, taskID))
	if errors.Is(err, pgx.ErrNoRows) {
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
	WHERE t.updated_at < $1
	ORDER BY t.updated_at DESC, t.id DESC LIMIT $2`

// RecentTasks implements store.Tasks.
func (p *Postgres) RecentTasks(ctx context.Context, limit int, before time.Time) ([]store.TaskView, error) {
	limit = min(max(limit, 1), maxRecent)
	until := int64(math.MaxInt64)
	if !before.IsZero() {
		until = before.UnixNano()
	}
	rows, err := p.pool.Query(ctx, recentTasks, until, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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
	r   pgx.Row
	pre []any
}

func (p prefixed) Scan(dest ...any) error {
	return p.r.Scan(append(append(make([]any, 0, len(p.pre)+len(dest)), p.pre...), dest...)...)
}
