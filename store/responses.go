package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Responses stores the responses of the responses dialect. A chain of
// responses shares most of its conversation: each turn (a message of the
// input, or a response's output) is kept once, by its content, however
// many responses refer to it, so that an image sent in the first turn of a
// long conversation is stored once, not once per response.
type Responses interface {
	// SaveResponse stores a response with its whole input; r.expires_at
	// says when it goes.
	SaveResponse(ctx context.Context, r *parleyv1.StoredResponse) error
	// Response returns a response that has not expired by now, or
	// ErrNotFound.
	Response(ctx context.Context, id string, now time.Time) (*parleyv1.StoredResponse, error)
	// DeleteResponse deletes a response, or returns ErrNotFound.
	DeleteResponse(ctx context.Context, id string) error
	// SweepResponses deletes the responses expired by now, and the turns
	// no response refers to any more; it returns how many responses went.
	SweepResponses(ctx context.Context, now time.Time) (int, error)
}

var _ Responses = (*SQLite)(nil)

// turnsSchema is the schema step that adds stored responses.
const turnsSchema = `CREATE TABLE responses (
		id         TEXT PRIMARY KEY,
		owner      TEXT NOT NULL,
		expires_at INTEGER NOT NULL,
		inputs     INTEGER NOT NULL,
		body       BLOB NOT NULL
	);
	CREATE INDEX responses_expiry ON responses(expires_at);
	CREATE TABLE turns (
		hash BLOB PRIMARY KEY,
		body BLOB NOT NULL
	) WITHOUT ROWID;
	CREATE TABLE response_turns (
		response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
		position    INTEGER NOT NULL,
		hash        BLOB NOT NULL REFERENCES turns(hash),
		PRIMARY KEY (response_id, position)
	) WITHOUT ROWID;
	CREATE INDEX response_turns_hash ON response_turns(hash);`

var deterministic = proto.MarshalOptions{Deterministic: true}

// turnsOf lists the turns of a response: its input, then its output as an
// assistant turn (when it has one). The output turn is built the same way
// a later request's rebuilt history holds it, so both share one row.
func turnsOf(r *parleyv1.StoredResponse) []*parleyv1.Message {
	turns := append([]*parleyv1.Message(nil), r.GetInput()...)
	if out := OutputTurn(r.GetResponse()); out != nil {
		turns = append(turns, out)
	}
	return turns
}

// OutputTurn is a response's output as an assistant turn of a later
// conversation: the parts of its first candidate; nil when it has none.
func OutputTurn(resp *parleyv1.Response) *parleyv1.Message {
	cs := resp.GetCandidates()
	if len(cs) == 0 || len(cs[0].GetParts()) == 0 {
		return nil
	}
	return &parleyv1.Message{Role: parleyv1.Role_ROLE_ASSISTANT, Parts: cs[0].GetParts()}
}

// SaveResponse implements Responses.
func (s *SQLite) SaveResponse(ctx context.Context, r *parleyv1.StoredResponse) error {
	turns := turnsOf(r)
	bodies := make([][]byte, len(turns))
	hashes := make([][]byte, len(turns))
	for i, t := range turns {
		b, err := deterministic.Marshal(t)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		bodies[i], hashes[i] = b, h[:]
	}
	// The record keeps everything but the turns; only the response is
	// copied (to leave out its output), never the conversation.
	resp := proto.CloneOf(r.GetResponse())
	if cs := resp.GetCandidates(); len(cs) > 0 {
		cs[0].Parts = nil
	}
	rec := &parleyv1.StoredResponse{
		Id: r.GetId(), Owner: r.GetOwner(), CreatedAt: r.GetCreatedAt(), PreviousResponseId: r.GetPreviousResponseId(),
		Request: r.GetRequest(), Response: resp, ExpiresAt: r.GetExpiresAt(),
	}
	body, err := proto.Marshal(rec)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO responses(id, owner, expires_at, inputs, body) VALUES(?, ?, ?, ?, ?)`,
			r.GetId(), r.GetOwner(), r.GetExpiresAt().AsTime().UnixNano(), len(r.GetInput()), body); err != nil {
			if isConstraint(err) {
				return ErrExists
			}
			return err
		}
		// Many rows to a statement: a statement costs more than a row.
		for lo := 0; lo < len(turns); lo += rowsPerInsert {
			hi := min(lo+rowsPerInsert, len(turns))
			turnArgs := make([]any, 0, 2*(hi-lo))
			refArgs := make([]any, 0, 3*(hi-lo))
			for i := lo; i < hi; i++ {
				turnArgs = append(turnArgs, hashes[i], bodies[i])
				refArgs = append(refArgs, r.GetId(), i, hashes[i])
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO turns(hash, body) VALUES `+rows(hi-lo, "(?, ?)")+` ON CONFLICT(hash) DO NOTHING`, turnArgs...); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO response_turns(response_id, position, hash) VALUES `+rows(hi-lo, "(?, ?, ?)"), refArgs...); err != nil {
				return err
			}
		}
		return nil
	})
}

// rowsPerInsert bounds the rows of one INSERT, well under SQLite's limit
// of bound variables.
const rowsPerInsert = 500

// rows is n copies of a row's placeholders, comma-separated.
func rows(n int, row string) string {
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// Response implements Responses.
func (s *SQLite) Response(ctx context.Context, id string, now time.Time) (*parleyv1.StoredResponse, error) {
	var (
		body   []byte
		inputs int
	)
	err := s.db.QueryRowContext(ctx, `SELECT inputs, body FROM responses WHERE id = ? AND expires_at > ?`, id, now.UnixNano()).Scan(&inputs, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r := &parleyv1.StoredResponse{}
	if err := proto.Unmarshal(body, r); err != nil {
		return nil, fmt.Errorf("store: a stored response cannot be read: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.body FROM response_turns rt JOIN turns t ON t.hash = rt.hash
		WHERE rt.response_id = ? ORDER BY rt.position`, id)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var turns []*parleyv1.Message
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		m := &parleyv1.Message{}
		if err := proto.Unmarshal(b, m); err != nil {
			return nil, fmt.Errorf("store: a stored turn cannot be read: %w", err)
		}
		turns = append(turns, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(turns) < inputs {
		return nil, fmt.Errorf("store: response %s has %d of its %d input turns", id, len(turns), inputs)
	}
	if len(turns) > inputs {
		// The last turn is the output of the first candidate.
		r.GetResponse().GetCandidates()[0].Parts = turns[inputs].GetParts()
	}
	r.Input = turns[:inputs]
	return r, nil
}

// DeleteResponse implements Responses.
func (s *SQLite) DeleteResponse(ctx context.Context, id string) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var hashes [][]byte
		rows, err := tx.QueryContext(ctx, `SELECT hash FROM response_turns WHERE response_id = ?`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var h []byte
			if err := rows.Scan(&h); err != nil {
				_ = rows.Close()
				return err
			}
			hashes = append(hashes, h)
		}
		_ = rows.Close()
		res, err := tx.ExecContext(ctx, `DELETE FROM responses WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = ErrNotFound
			}
			return err
		}
		for _, h := range hashes {
			if _, err := tx.ExecContext(ctx, `DELETE FROM turns WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM response_turns WHERE hash = ?)`, h, h); err != nil {
				return err
			}
		}
		return nil
	})
}

// SweepResponses implements Responses.
func (s *SQLite) SweepResponses(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM responses WHERE expires_at <= ?`, now.UnixNano())
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM turns WHERE NOT EXISTS (SELECT 1 FROM response_turns rt WHERE rt.hash = turns.hash)`)
		return err
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}
