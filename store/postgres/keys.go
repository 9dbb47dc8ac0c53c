package postgres

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
)

// errNoKey refuses a nil key, a caller's mistake.
var errNoKey = errors.New("store: no key given")

// keyRecord is what is stored of a key: a copy without its secret, so
// that the caller's message is left as it was.
func keyRecord(k *parleyv1.ManagedKey) ([]byte, *parleyv1.ManagedKey, error) {
	if k == nil {
		return nil, nil, errNoKey
	}
	rec := proto.CloneOf(k)
	rec.Key = ""
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(rec)
	return body, rec, err
}

// revokedAt is the revoked_at column of a record: NULL while it is live.
func revokedAt(k *parleyv1.ManagedKey) *int64 {
	if k.GetRevokeTime() == nil {
		return nil
	}
	at := unixNanos(k.GetRevokeTime().AsTime())
	return &at
}

// unixNanos is t in Unix nanoseconds, clamped to what an int64 holds, so
// that the zero time reads as the beginning of time rather than as an
// arbitrary instant.
func unixNanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

func decodeKey(body, digest []byte) (store.StoredKey, error) {
	k := &parleyv1.ManagedKey{}
	if err := proto.Unmarshal(body, k); err != nil {
		return store.StoredKey{}, err
	}
	return store.StoredKey{Key: k, Digest: digest}, nil
}

// CreateKey implements store.Keys.
func (p *Postgres) CreateKey(ctx context.Context, k *parleyv1.ManagedKey, digest []byte) error {
	body, rec, err := keyRecord(k)
	if err != nil {
		return err
	}
	if digest == nil {
		digest = []byte{}
	}
	_, err = p.pool.Exec(ctx, `INSERT INTO managed_keys(name, digest, revoked_at, updated_at, body) VALUES ($1, $2, $3, $4, $5)`,
		rec.GetName(), digest, revokedAt(rec), unixNanos(rec.GetUpdateTime().AsTime()), body)
	if hasCode(err, uniqueViolation) {
		return store.ErrExists
	}
	return err
}

// ManagedKeys implements store.Keys.
func (p *Postgres) ManagedKeys(ctx context.Context) ([]store.StoredKey, error) {
	rows, err := p.pool.Query(ctx, `SELECT body, digest FROM managed_keys ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.StoredKey{}
	for rows.Next() {
		var body, digest []byte
		if err := rows.Scan(&body, &digest); err != nil {
			return nil, err
		}
		k, err := decodeKey(body, digest)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// ManagedKey implements store.Keys.
func (p *Postgres) ManagedKey(ctx context.Context, name string) (store.StoredKey, error) {
	var body, digest []byte
	err := p.pool.QueryRow(ctx, `SELECT body, digest FROM managed_keys WHERE name = $1`, name).Scan(&body, &digest)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.StoredKey{}, store.ErrNotFound
	}
	if err != nil {
		return store.StoredKey{}, err
	}
	return decodeKey(body, digest)
}

// liveKey reads the record of a key that is not revoked, and the
// updated_at it is stored with, and locks it until the transaction ends: a
// change that commits first leaves the newest row to read (or nothing,
// after a revoke), so that a change never brings a revoked key back and
// the updated_at compared is the one the write replaces.
func liveKey(ctx context.Context, tx pgx.Tx, name string) (*parleyv1.ManagedKey, int64, error) {
	var body []byte
	var updatedAt int64
	err := tx.QueryRow(ctx, `SELECT body, updated_at FROM managed_keys WHERE name = $1 AND revoked_at IS NULL FOR UPDATE`, name).Scan(&body, &updatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, store.ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	k := &parleyv1.ManagedKey{}
	return k, updatedAt, proto.Unmarshal(body, k)
}

// UpdateKey implements store.Keys. The stored create time and hint are
// kept, and the key stays live whatever revoke time the caller's message
// carries: only RevokeKey revokes. The row is locked while its updated_at
// is compared with read and until the write commits; the UPDATE repeats
// the condition all the same.
func (p *Postgres) UpdateKey(ctx context.Context, k *parleyv1.ManagedKey, read time.Time) error {
	if k == nil {
		return errNoKey
	}
	want := unixNanos(read)
	return p.inTx(ctx, func(tx pgx.Tx) error {
		old, updatedAt, err := liveKey(ctx, tx, k.GetName())
		if err != nil {
			return err
		}
		if updatedAt != want {
			return store.ErrConflict
		}
		rec := proto.CloneOf(k)
		rec.CreateTime, rec.Hint, rec.RevokeTime = old.GetCreateTime(), old.GetHint(), nil
		body, rec, err := keyRecord(rec)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE managed_keys SET updated_at = $1, body = $2 WHERE name = $3 AND revoked_at IS NULL AND updated_at = $4`,
			unixNanos(rec.GetUpdateTime().AsTime()), body, rec.GetName(), want)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return store.ErrConflict
		}
		return nil
	})
}

// RevokeKey implements store.Keys.
func (p *Postgres) RevokeKey(ctx context.Context, name string, at time.Time) (*parleyv1.ManagedKey, error) {
	var out *parleyv1.ManagedKey
	err := p.inTx(ctx, func(tx pgx.Tx) error {
		k, _, err := liveKey(ctx, tx, name)
		if err != nil {
			return err
		}
		k.RevokeTime, k.UpdateTime = timestamppb.New(at), timestamppb.New(at)
		body, rec, err := keyRecord(k)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE managed_keys SET revoked_at = $1, updated_at = $1, body = $2 WHERE name = $3`,
			unixNanos(at), body, name); err != nil {
			return err
		}
		out = rec
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
