package sqlite

import (
	"context"
	"database/sql"
	"errors"
)

// A write is one caller's change, run inside a transaction shared with
// other callers' writes. It returns the caller's own error; an error rolls
// back this write alone.
type write func(ctx context.Context, tx *sql.Tx) error

type writeJob struct {
	ctx  context.Context
	fn   write
	done chan error // buffered: the committer never waits on a caller
}

// write runs fn durably: it returns once fn's change is committed (or
// has failed). Writes that arrive while a commit is in progress are
// queued and committed together by whichever of them takes the commit
// lock next, so that a busy gateway pays one fsync for many writes
// (group commit), while a lone write pays exactly what it did alone.
// There is no background goroutine: a caller commits its own write or
// finds it committed.
func (s *SQLite) write(ctx context.Context, fn write) error {
	j := &writeJob{ctx: ctx, fn: fn, done: make(chan error, 1)}
	s.qmu.Lock()
	s.queue = append(s.queue, j)
	s.qmu.Unlock()

	s.wmu.Lock()
	select {
	case err := <-j.done: // an earlier committer took it
		s.wmu.Unlock()
		return err
	default:
	}
	s.qmu.Lock()
	batch := s.queue
	s.queue = nil
	s.qmu.Unlock()
	s.commit(batch)
	s.wmu.Unlock()
	return <-j.done
}

// maxBatch bounds the writes of one transaction, so that one commit does
// not hold the others up for long.
const maxBatch = 256

// commit runs a batch of writes in transactions of up to maxBatch, each
// write under its own savepoint when it shares the transaction, and
// reports to every job exactly once.
func (s *SQLite) commit(batch []*writeJob) {
	for len(batch) > 0 {
		n := min(len(batch), maxBatch)
		s.commitOne(batch[:n])
		batch = batch[n:]
	}
}

func (s *SQLite) commitOne(batch []*writeJob) {
	errs := make([]error, len(batch))
	report := func() {
		for i, j := range batch {
			j.done <- errs[i]
		}
	}
	defer report()
	// The transaction outlives any one caller: a caller that goes away
	// after its write has begun still gets a whole write or none.
	ctx := context.WithoutCancel(batch[0].ctx)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return
	}
	defer func() { _ = tx.Rollback() }()
	shared := len(batch) > 1
	wrote := false
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			errs[i] = err // gone before its write began: nothing written
			continue
		}
		if !shared {
			errs[i] = j.fn(ctx, tx)
			wrote = errs[i] == nil
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			errs[i] = err
			continue
		}
		if errs[i] = j.fn(ctx, tx); errs[i] != nil {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO w"); err != nil {
				// The transaction cannot be trusted any more: fail
				// every write of the batch.
				for k := range errs {
					errs[k] = errors.Join(errs[k], err)
				}
				return
			}
		} else {
			wrote = true
		}
		if _, err := tx.ExecContext(ctx, "RELEASE w"); err != nil {
			for k := range errs {
				errs[k] = errors.Join(errs[k], err)
			}
			return
		}
	}
	if !wrote {
		return
	}
	if err := tx.Commit(); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return
	}
	s.commits.Add(1)
}
