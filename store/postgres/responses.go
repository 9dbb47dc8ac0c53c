package postgres

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
)

// chainTurns lists a response's turns: its own and those of its bases.
// The statement's one parameter is the response id; it selects what
// follows "SELECT" from the alias rt (position, hash). The turns of each
// response of the chain are looked up by key in a LATERAL subquery that
// OFFSET 0 keeps from being flattened: the planner cannot tell that a
// chain holds a few responses, and would otherwise hash-join it against
// every stored turn reference.
func chainTurns(what string) string {
	return `WITH RECURSIVE chain(id, base) AS (
			SELECT id, base FROM responses WHERE id = $1
			UNION ALL
			SELECT r.id, r.base FROM responses r JOIN chain c ON r.id = c.base)
		SELECT ` + what + ` FROM chain CROSS JOIN LATERAL (
			SELECT position, hash FROM response_turns WHERE response_id = chain.id OFFSET 0) rt`
}

var (
	// readTurns reads the positions and bodies of a response's turns.
	readTurns = chainTurns("rt.position, t.body") + ` CROSS JOIN LATERAL (SELECT body FROM turns WHERE hash = rt.hash OFFSET 0) t`
	// chainHashes reads the positions and hashes of a response's turns.
	chainHashes = chainTurns("rt.position, rt.hash")
)

// SaveResponse implements store.Responses. It is one transaction in two
// round trips: the first begins it and reads the previous response (locked
// against deletion until the transaction ends, so that a response based on
// it is never left without its base); the second writes the response, the
// turns not stored yet and its references to them, and commits.
func (p *Postgres) SaveResponse(ctx context.Context, r *parleyv1.StoredResponse) error {
	split, err := store.SplitResponse(r)
	if err != nil {
		return err
	}
	// A turn another transaction deletes between this save's insert and
	// its references fails their foreign key check, and the save runs
	// again.
	for range 3 {
		err = p.saveResponse(ctx, r, split)
		if !hasCode(err, deadlockDetected, serializationFail, foreignKeyViolation) {
			break
		}
	}
	if hasCode(err, uniqueViolation) {
		return store.ErrExists
	}
	return err
}

func (p *Postgres) saveResponse(ctx context.Context, r *parleyv1.StoredResponse, split *store.Split) (err error) {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	defer func() {
		if err != nil {
			// Whatever failed, the connection goes back to the pool out
			// of any transaction (or is closed by pgx when it cannot be).
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()

	first := &pgx.Batch{}
	first.Queue("BEGIN")
	prev := r.GetPreviousResponseId()
	var (
		prevTurns = -1
		chain     []chainTurn
	)
	if prev != "" {
		first.Queue(`SELECT turns FROM responses WHERE id = $1 FOR KEY SHARE`, prev).QueryRow(func(row pgx.Row) error {
			var n int32
			err := row.Scan(&n)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			prevTurns = int(n)
			return err
		})
		first.Queue(chainHashes, prev).Query(func(rows pgx.Rows) error {
			var err error
			chain, err = pgx.CollectRows(rows, pgx.RowToStructByPos[chainTurn])
			return err
		})
	}
	if err := conn.SendBatch(ctx, first).Close(); err != nil {
		return err
	}

	var base *string // NULL unless the previous response's turns lead this one's
	from := leads(prevTurns, chain, split.Hashes)
	if from > 0 {
		base = &prev
	}
	second := &pgx.Batch{}
	second.Queue(`INSERT INTO responses(id, owner, expires_at, inputs, turns, base, body) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.GetId(), r.GetOwner(), r.GetExpiresAt().AsTime().UnixNano(), split.Inputs, len(split.Bodies), base, split.Record)
	if from < len(split.Bodies) {
		// Each content once, in hash order, so that two saves sharing
		// turns take their row locks in one order and never deadlock.
		type turn struct{ hash, body []byte }
		uniq := make([]turn, 0, len(split.Bodies)-from)
		for i := from; i < len(split.Bodies); i++ {
			uniq = append(uniq, turn{split.Hashes[i], split.Bodies[i]})
		}
		slices.SortFunc(uniq, func(a, b turn) int { return bytes.Compare(a.hash, b.hash) })
		uniq = slices.CompactFunc(uniq, func(a, b turn) bool { return bytes.Equal(a.hash, b.hash) })
		hashes, bodies := make([][]byte, len(uniq)), make([][]byte, len(uniq))
		for i, t := range uniq {
			hashes[i], bodies[i] = t.hash, t.body
		}
		positions := make([]int32, 0, len(split.Bodies)-from)
		for i := from; i < len(split.Bodies); i++ {
			positions = append(positions, int32(i))
		}
		second.Queue(`INSERT INTO turns(hash, body) SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT (hash) DO NOTHING`, hashes, bodies)
		second.Queue(`INSERT INTO response_turns(response_id, position, hash) SELECT $1, * FROM unnest($2::integer[], $3::bytea[])`,
			r.GetId(), positions, split.Hashes[from:])
	}
	second.Queue("COMMIT")
	return conn.SendBatch(ctx, second).Close()
}

// chainTurn is one turn of a stored chain, as chainHashes reads it.
type chainTurn struct {
	Position int32
	Hash     []byte
}

// leads returns how many turns the previous response has (n, -1 when it
// is gone) when its chain's turns are the first of hashes, else 0: a
// conversation that does not continue it word for word lists all its own.
func leads(n int, chain []chainTurn, hashes [][]byte) int {
	if n <= 0 || n > len(hashes) || len(chain) != n {
		return 0
	}
	seen := make([]bool, n)
	for _, t := range chain {
		pos := int(t.Position)
		if pos < 0 || pos >= n || seen[pos] || !bytes.Equal(t.Hash, hashes[pos]) {
			return 0
		}
		seen[pos] = true
	}
	return n
}

// Response implements store.Responses. The record and the turns are read
// in one round trip.
func (p *Postgres) Response(ctx context.Context, id string, now time.Time) (*parleyv1.StoredResponse, error) {
	b := &pgx.Batch{}
	var (
		body          []byte
		inputs, count int32
		found         bool
		turns         *store.Turns
	)
	b.Queue(`SELECT inputs, turns, body FROM responses WHERE id = $1 AND expires_at > $2 AND NOT hidden`, id, now.UnixNano()).
		QueryRow(func(row pgx.Row) error {
			err := row.Scan(&inputs, &count, &body)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			found = err == nil
			turns = store.NewTurns(id, int(count))
			return err
		})
	got := 0
	b.Queue(readTurns, id).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var (
				pos int32
				t   []byte
			)
			if err := rows.Scan(&pos, &t); err != nil {
				return err
			}
			got++
			if found {
				if err := turns.Add(int(pos), t); err != nil {
					return err
				}
			}
		}
		return rows.Err()
	})
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	if !found || got == 0 && count > 0 {
		// Not there, or deleted between the two reads.
		return nil, store.ErrNotFound
	}
	return turns.Response(body, int(inputs))
}

// DeleteResponse implements store.Responses.
func (p *Postgres) DeleteResponse(ctx context.Context, id string) error {
	return p.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE responses SET hidden = true WHERE id = $1 AND NOT hidden`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		_, err = dropChain(ctx, tx, id)
		return err
	})
}

// drop removes a hidden response that nothing is based on, with the turns
// no other response lists, and returns its base (which may be droppable
// now); it reports whether it removed anything. The row is locked first,
// so that a save basing a response on it either finished (and is seen
// here) or waits and then finds it gone.
func drop(ctx context.Context, tx pgx.Tx, id string) (base string, dropped bool, err error) {
	var (
		b      *string
		hidden bool
	)
	err = tx.QueryRow(ctx, `SELECT base, hidden FROM responses WHERE id = $1 FOR UPDATE`, id).Scan(&b, &hidden)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !hidden {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var based bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM responses WHERE base = $1)`, id).Scan(&based); err != nil || based {
		return "", false, err
	}
	rows, err := tx.Query(ctx, `DELETE FROM response_turns WHERE response_id = $1 RETURNING hash`, id)
	if err != nil {
		return "", false, err
	}
	hashes, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return "", false, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM responses WHERE id = $1`, id); err != nil {
		return "", false, err
	}
	if err := dropTurns(ctx, tx, hashes); err != nil {
		return "", false, err
	}
	if b != nil {
		base = *b
	}
	return base, true, nil
}

// dropTurnsQuery deletes the turns among $1 that no response lists.
const dropTurnsQuery = `DELETE FROM turns t WHERE t.hash = ANY($1) AND NOT EXISTS (SELECT 1 FROM response_turns rt WHERE rt.hash = t.hash)`

// lockTurnsQuery locks the turns among $1, in one order.
const lockTurnsQuery = `SELECT 1 FROM turns WHERE hash = ANY($1) ORDER BY hash FOR UPDATE`

// dropTurns deletes the turns among hashes that no response lists. The
// turns are locked first: two sweepers dropping the last two responses
// that list a turn would each still see the other's listing (not yet
// committed) and both keep the turn; with the lock, the second's delete
// starts after the first committed, and sees that nothing lists it. A save
// elsewhere may have just listed one (its foreign key refuses the delete):
// then each turn is tried on its own, and the one in use stays.
func dropTurns(ctx context.Context, tx pgx.Tx, hashes [][]byte) error {
	if len(hashes) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, lockTurnsQuery, hashes); err != nil {
		return err
	}
	err := savepoint(ctx, tx, dropTurnsQuery, hashes)
	if !hasCode(err, foreignKeyViolation) {
		return err
	}
	for _, h := range hashes {
		if err := savepoint(ctx, tx, dropTurnsQuery, [][]byte{h}); err != nil && !hasCode(err, foreignKeyViolation) {
			return err
		}
	}
	return nil
}

// savepoint runs one statement under a savepoint, so that its failure
// leaves the transaction usable.
func savepoint(ctx context.Context, tx pgx.Tx, q string, args ...any) error {
	return pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
		_, err := sp.Exec(ctx, q, args...)
		return err
	})
}

// dropChain drops a hidden response and the hidden bases it alone held.
func dropChain(ctx context.Context, tx pgx.Tx, id string) (int, error) {
	return store.DropChain(id, func(id string) (string, bool, error) { return drop(ctx, tx, id) })
}

// sweepBatch bounds the responses one sweep transaction hides or starts
// dropping from, so that its locks are held briefly.
const sweepBatch = 100

// SweepResponses implements store.Responses. Expired responses are hidden,
// then every hidden response that nothing is based on is dropped, with the
// hidden bases it alone held. Rows are taken with SKIP LOCKED: replicas
// sweeping at once take different rows, and none drops a row twice.
func (p *Postgres) SweepResponses(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		var hid, dropped int
		err := p.inTx(ctx, func(tx pgx.Tx) error {
			hid, dropped = 0, 0
			tag, err := tx.Exec(ctx, `UPDATE responses SET hidden = true WHERE id IN (
				SELECT id FROM responses WHERE expires_at <= $1 AND NOT hidden LIMIT $2 FOR UPDATE SKIP LOCKED)`,
				now.UnixNano(), sweepBatch)
			if err != nil {
				return err
			}
			hid = int(tag.RowsAffected())
			// OFFSET 0 keeps NOT EXISTS a lookup by key per hidden
			// response; as an anti-join the planner would hash every
			// response's base.
			rows, err := tx.Query(ctx, `SELECT id FROM responses r WHERE hidden
				AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.base = r.id OFFSET 0) LIMIT $1 FOR UPDATE SKIP LOCKED`, sweepBatch)
			if err != nil {
				return err
			}
			leaves, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			for _, id := range leaves {
				n, err := dropChain(ctx, tx, id)
				if err != nil {
					return err
				}
				dropped += n
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += dropped
		if hid == 0 && dropped == 0 {
			return total, nil
		}
	}
}
