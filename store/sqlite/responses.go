package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
)

// turnsSchema is the schema step that adds stored responses, in the shape
// store.Responses describes.
const turnsSchema = `CREATE TABLE responses (
		id         TEXT PRIMARY KEY,
		owner      TEXT NOT NULL,
		expires_at INTEGER NOT NULL,
		inputs     INTEGER NOT NULL,
		turns      INTEGER NOT NULL,
		base       TEXT REFERENCES responses(id),
		hidden     INTEGER NOT NULL DEFAULT 0,
		body       BLOB NOT NULL
	);
	CREATE INDEX responses_expiry ON responses(expires_at);
	CREATE INDEX responses_base ON responses(base) WHERE base IS NOT NULL;
	CREATE INDEX responses_hidden ON responses(id) WHERE hidden != 0;
	CREATE TABLE turns (
		id   INTEGER PRIMARY KEY,
		hash BLOB NOT NULL UNIQUE,
		body BLOB NOT NULL
	);
	CREATE TABLE response_turns (
		response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
		position    INTEGER NOT NULL,
		hash        BLOB NOT NULL REFERENCES turns(hash),
		PRIMARY KEY (response_id, position)
	) WITHOUT ROWID;
	CREATE INDEX response_turns_hash ON response_turns(hash);`

// chainTurns lists a response's turns in position order: its own and
// those of its bases. The statement's one parameter is the response id;
// it selects what follows "SELECT" and the alias rt (response_turns).
// CROSS JOIN fixes the order of the loops: from the few responses of the
// chain to their turns, never a scan of every response's turns.
func chainTurns(what string) string {
	return `WITH RECURSIVE chain(id, base) AS (
			SELECT id, base FROM responses WHERE id = ?
			UNION ALL
			SELECT r.id, r.base FROM responses r JOIN chain c ON r.id = c.base)
		SELECT ` + what + ` FROM chain CROSS JOIN response_turns rt ON rt.response_id = chain.id`
}

var (
	// readTurns reads the positions and bodies of a response's turns.
	readTurns = chainTurns("rt.position, t.body") + ` CROSS JOIN turns t ON t.hash = rt.hash`
	// chainHashes reads the positions and hashes of a response's turns.
	chainHashes = chainTurns("rt.position, rt.hash")
	// readResponse reads a visible response's record.
	readResponse = `SELECT inputs, turns, body FROM responses WHERE id = ? AND expires_at > ? AND hidden = 0`
	// dropCheck reads a response's base and whether it may be dropped:
	// hidden, and nothing based on it.
	dropCheck = `SELECT base, hidden != 0 AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.base = r.id)
		FROM responses r WHERE id = ?`
	// dropTurn deletes a turn no response lists any more.
	dropTurn = `DELETE FROM turns WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM response_turns WHERE hash = ?)`
	// hiddenLeaves lists up to ? hidden responses nothing is based on.
	hiddenLeaves = `SELECT id FROM responses r WHERE hidden != 0
		AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.base = r.id) LIMIT ?`
	// respTurns reads a response's own turn count.
	respTurns = `SELECT turns FROM responses WHERE id = ?`
)

// SaveResponse implements store.Responses.
func (s *SQLite) SaveResponse(ctx context.Context, r *parleyv1.StoredResponse) error {
	split, err := store.SplitResponse(r)
	if err != nil {
		return err
	}
	body, bodies, hashes := split.Record, split.Bodies, split.Hashes
	turns := bodies
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var base any // NULL unless the previous response's turns lead this one's
		from := 0
		if prev := r.GetPreviousResponseId(); prev != "" {
			n, err := s.leads(ctx, tx, prev, hashes)
			if err != nil {
				return err
			}
			if n > 0 {
				base, from = prev, n
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO responses(id, owner, expires_at, inputs, turns, base, body) VALUES(?, ?, ?, ?, ?, ?, ?)`,
			r.GetId(), r.GetOwner(), r.GetExpiresAt().AsTime().UnixNano(), split.Inputs, len(turns), base, body); err != nil {
			if isConstraint(err) {
				return store.ErrExists
			}
			return err
		}
		if from == len(turns) {
			return nil
		}
		// A prepared statement a row: the driver binds a statement's
		// variables in time quadratic in their number, so many rows to a
		// statement cost more than a statement each.
		turn, err := tx.PrepareContext(ctx, `INSERT INTO turns(hash, body) VALUES (?, ?) ON CONFLICT(hash) DO NOTHING`)
		if err != nil {
			return err
		}
		defer func() { _ = turn.Close() }()
		ref, err := tx.PrepareContext(ctx, `INSERT INTO response_turns(response_id, position, hash) VALUES (?, ?, ?)`)
		if err != nil {
			return err
		}
		defer func() { _ = ref.Close() }()
		for i := from; i < len(turns); i++ {
			if _, err := turn.ExecContext(ctx, hashes[i], bodies[i]); err != nil {
				return err
			}
			if _, err := ref.ExecContext(ctx, r.GetId(), i, hashes[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// leads returns how many turns the stored response prev has when they are
// the first of hashes, else 0 (prev gone, or a conversation that does not
// continue it word for word).
func (s *SQLite) leads(ctx context.Context, tx *sql.Tx, prev string, hashes [][]byte) (int, error) {
	var n int
	err := tx.StmtContext(ctx, s.stmts.respTurns).QueryRowContext(ctx, prev).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) || n == 0 || n > len(hashes) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rows, err := tx.StmtContext(ctx, s.stmts.chainHashes).QueryContext(ctx, prev)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rows.Close() }()
	seen, matched := make([]bool, n), 0
	for rows.Next() {
		var (
			pos int
			h   []byte
		)
		if err := rows.Scan(&pos, &h); err != nil {
			return 0, err
		}
		if pos < 0 || pos >= n || seen[pos] || !bytes.Equal(h, hashes[pos]) {
			return 0, rows.Err()
		}
		seen[pos] = true
		matched++
	}
	if err := rows.Err(); err != nil || matched != n {
		return 0, err
	}
	return n, nil
}

// Response implements store.Responses.
func (s *SQLite) Response(ctx context.Context, id string, now time.Time) (*parleyv1.StoredResponse, error) {
	var (
		body          []byte
		inputs, count int
	)
	err := s.stmts.response.QueryRowContext(ctx, id, now.UnixNano()).Scan(&inputs, &count, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	rows, err := s.stmts.readTurns.QueryContext(ctx, id)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	turns := store.NewTurns(id, count)
	for rows.Next() {
		var (
			pos int
			b   []byte
		)
		if err := rows.Scan(&pos, &b); err != nil {
			return nil, err
		}
		if err := turns.Add(pos, b); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return turns.Response(body, inputs)
}

// DeleteResponse implements store.Responses.
func (s *SQLite) DeleteResponse(ctx context.Context, id string) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE responses SET hidden = 1 WHERE id = ? AND hidden = 0`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = store.ErrNotFound
			}
			return err
		}
		// Remove it, and the hidden bases it alone held, unless a later
		// response is based on it.
		_, err = dropChain(ctx, tx, id)
		return err
	})
}

// drop removes a hidden response that nothing is based on, with the turns
// no other response lists, and returns its base (which may be droppable
// now); it reports whether it removed anything.
func drop(ctx context.Context, tx *sql.Tx, id string) (base string, dropped bool, err error) {
	var (
		b  sql.NullString
		ok bool
	)
	err = tx.QueryRowContext(ctx, dropCheck, id).Scan(&b, &ok)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !ok {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var hashes [][]byte
	rows, err := tx.QueryContext(ctx, `SELECT hash FROM response_turns WHERE response_id = ?`, id)
	if err != nil {
		return "", false, err
	}
	for rows.Next() {
		var h []byte
		if err := rows.Scan(&h); err != nil {
			_ = rows.Close()
			return "", false, err
		}
		hashes = append(hashes, h)
	}
	_ = rows.Close()
	if _, err := tx.ExecContext(ctx, `DELETE FROM responses WHERE id = ?`, id); err != nil {
		return "", false, err
	}
	for _, h := range hashes {
		if _, err := tx.ExecContext(ctx, dropTurn, h, h); err != nil {
			return "", false, err
		}
	}
	return b.String, true, nil
}

// dropChain drops a hidden response and the hidden bases it alone held.
func dropChain(ctx context.Context, tx *sql.Tx, id string) (int, error) {
	return store.DropChain(id, func(id string) (string, bool, error) { return drop(ctx, tx, id) })
}

// sweepBatch bounds the responses one sweep transaction hides or starts
// dropping from, so that other writes wait for it only briefly.
var sweepBatch = 500

// SweepResponses implements store.Responses. Expired responses are hidden, then
// every hidden response that nothing is based on is dropped, with the
// hidden bases it alone held: the work is the responses that go, not the
// responses kept.
func (s *SQLite) SweepResponses(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		var hid, dropped int64
		err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, `UPDATE responses SET hidden = 1 WHERE id IN
				(SELECT id FROM responses WHERE expires_at <= ? AND hidden = 0 LIMIT ?)`, now.UnixNano(), sweepBatch)
			if err != nil {
				return err
			}
			if hid, err = res.RowsAffected(); err != nil {
				return err
			}
			rows, err := tx.QueryContext(ctx, hiddenLeaves, sweepBatch)
			if err != nil {
				return err
			}
			var leaves []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					_ = rows.Close()
					return err
				}
				leaves = append(leaves, id)
			}
			if err := rows.Close(); err != nil {
				return err
			}
			for _, id := range leaves {
				n, err := dropChain(ctx, tx, id)
				if err != nil {
					return err
				}
				dropped += int64(n)
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += int(dropped)
		if hid == 0 && dropped == 0 {
			return total, nil
		}
	}
}

func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}
