package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A write that fails after some of its statements leaves none of them,
// also when it shares its transaction with writes that succeed.
func TestSharedWriteRollsBackAlone(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	insert := func(id string, fail bool) write {
		return func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tasks(id, owner, status, updated_at, body) VALUES(?, 'o', 1, 0, x'')`, id); err != nil {
				return err
			}
			if fail {
				return errors.New("refused after its first statement")
			}
			return nil
		}
	}
	s.wmu.Lock()
	errs := make([]error, 5)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() { errs[i] = s.write(ctx, insert(fmt.Sprintf("t-%d", i), i == 2)) })
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.qmu.Lock()
		n := len(s.queue)
		s.qmu.Unlock()
		if n == 5 {
			break
		}
		if time.Now().After(deadline) {
			s.wmu.Unlock()
			t.Fatalf("%d of 5 writes queued", n)
		}
	}
	before := s.commits.Load()
	s.wmu.Unlock()
	wg.Wait()
	if s.commits.Load()-before != 1 {
		t.Errorf("%d commits, want 1", s.commits.Load()-before)
	}
	for i, err := range errs {
		var n int
		if qerr := s.db.QueryRowContext(ctx, `SELECT count(*) FROM tasks WHERE id = ?`, fmt.Sprintf("t-%d", i)).Scan(&n); qerr != nil {
			t.Fatal(qerr)
		}
		if want := map[bool]int{true: 0, false: 1}[i == 2]; n != want || (err != nil) != (i == 2) {
			t.Errorf("write %d: err %v, %d rows; want %d rows", i, err, n, want)
		}
	}
}
