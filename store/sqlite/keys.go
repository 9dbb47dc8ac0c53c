package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
)

// governanceSchema is the schema step that adds managed keys and the usage
// ledger, in the shapes store.Keys and store.Ledger describe. A key's
// record is its deterministic protobuf encoding, without the secret;
// revoked_at is set once it is revoked, so that a change can be refused
// without decoding the record. A usage record keeps its UTC day as text,
// computed when it is written, so that grouping by day is the same here as
// in every other backend.
const governanceSchema = `CREATE TABLE managed_keys (
		name       TEXT PRIMARY KEY,
		digest     BLOB NOT NULL UNIQUE,
		revoked_at INTEGER,
		updated_at INTEGER NOT NULL,
		body       BLOB NOT NULL
	);
	CREATE TABLE usage_records (
		request_id         TEXT PRIMARY KEY,
		time               INTEGER NOT NULL,
		day                TEXT NOT NULL,
		key                TEXT NOT NULL,
		model              TEXT NOT NULL,
		upstream           TEXT NOT NULL,
		dialect            TEXT NOT NULL,
		operation          TEXT NOT NULL,
		status             INTEGER NOT NULL,
		input_tokens       INTEGER NOT NULL,
		output_tokens      INTEGER NOT NULL,
		cache_read_tokens  INTEGER NOT NULL,
		cache_write_tokens INTEGER NOT NULL,
		reasoning_tokens   INTEGER NOT NULL,
		cost_nanos         INTEGER NOT NULL,
		duration_nanos     INTEGER NOT NULL,
		ttft_nanos         INTEGER NOT NULL
	);
	CREATE INDEX usage_records_time ON usage_records(time);
	CREATE INDEX usage_records_key_time ON usage_records(key, time);`

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
func revokedAt(k *parleyv1.ManagedKey) any {
	if k.GetRevokeTime() == nil {
		return nil
	}
	return unixNanos(k.GetRevokeTime().AsTime())
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
func (s *SQLite) CreateKey(ctx context.Context, k *parleyv1.ManagedKey, digest []byte) error {
	body, rec, err := keyRecord(k)
	if err != nil {
		return err
	}
	if digest == nil {
		digest = []byte{}
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO managed_keys(name, digest, revoked_at, updated_at, body) VALUES(?, ?, ?, ?, ?)`,
			rec.GetName(), digest, revokedAt(rec), unixNanos(rec.GetUpdateTime().AsTime()), body)
		if isUnique(err) {
			return store.ErrExists
		}
		return err
	})
}

// ManagedKeys implements store.Keys.
func (s *SQLite) ManagedKeys(ctx context.Context) ([]store.StoredKey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT body, digest FROM managed_keys ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
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
func (s *SQLite) ManagedKey(ctx context.Context, name string) (store.StoredKey, error) {
	var body, digest []byte
	err := s.db.QueryRowContext(ctx, `SELECT body, digest FROM managed_keys WHERE name = ?`, name).Scan(&body, &digest)
	if errors.Is(err, sql.ErrNoRows) {
		return store.StoredKey{}, store.ErrNotFound
	}
	if err != nil {
		return store.StoredKey{}, err
	}
	return decodeKey(body, digest)
}

// liveKey reads the record of a key that is not revoked, and the
// updated_at it is stored with, inside a write.
func liveKey(ctx context.Context, tx *sql.Tx, name string) (*parleyv1.ManagedKey, int64, error) {
	var body []byte
	var updatedAt int64
	err := tx.QueryRowContext(ctx, `SELECT body, updated_at FROM managed_keys WHERE name = ? AND revoked_at IS NULL`, name).Scan(&body, &updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
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
// carries: only RevokeKey revokes. The check of updated_at and the write
// are in one transaction, and SQLite runs one write transaction at a
// time, so no other change comes between them; the UPDATE repeats the
// condition all the same.
func (s *SQLite) UpdateKey(ctx context.Context, k *parleyv1.ManagedKey, read time.Time) error {
	if k == nil {
		return errNoKey
	}
	want := unixNanos(read)
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
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
		res, err := tx.ExecContext(ctx, `UPDATE managed_keys SET updated_at = ?, body = ? WHERE name = ? AND revoked_at IS NULL AND updated_at = ?`,
			unixNanos(rec.GetUpdateTime().AsTime()), body, rec.GetName(), want)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err == nil && n != 1 {
			err = store.ErrConflict
		}
		return err
	})
}

// RevokeKey implements store.Keys.
func (s *SQLite) RevokeKey(ctx context.Context, name string, at time.Time) (*parleyv1.ManagedKey, error) {
	var out *parleyv1.ManagedKey
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		k, _, err := liveKey(ctx, tx, name)
		if err != nil {
			return err
		}
		k.RevokeTime, k.UpdateTime = timestamppb.New(at), timestamppb.New(at)
		body, rec, err := keyRecord(k)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE managed_keys SET revoked_at = ?, updated_at = ?, body = ? WHERE name = ?`,
			unixNanos(at), unixNanos(at), body, name); err != nil {
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

// isUnique reports a write refused for a key, primary or unique, that is
// taken.
func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE)
}
