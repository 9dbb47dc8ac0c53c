package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlite"
)

// lineUp starts n writes while commits are held, waits until all n are
// queued, then lets them go; it returns each write's error by index.
func lineUp(t *testing.T, s *sqlite.SQLite, n int, write func(i int) error) []error {
	t.Helper()
	release := s.HoldCommits()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = write(i) })
	}
	waitQueued(t, s, n, release)
	release()
	wg.Wait()
	return errs
}

func TestGroupCommit(t *testing.T) {
	ctx := t.Context()

	t.Run("writes that wait together commit together", func(t *testing.T) {
		s := open(t, filepath.Join(t.TempDir(), "parley.db"))
		before := s.Commits()
		rs := chain(40, time.Unix(1700000000, 0))
		errs := lineUp(t, s, 40, func(i int) error {
			if i%2 == 0 {
				return s.SaveResponse(ctx, rs[i])
			}
			return s.CreateTask(ctx, task(fmt.Sprintf("t-%02d", i), parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS))
		})
		for i, err := range errs {
			if err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		}
		if n := s.Commits() - before; n != 1 {
			t.Errorf("40 queued writes took %d commits, want 1", n)
		}
		for i := 0; i < 40; i += 2 {
			got, err := s.Response(ctx, rs[i].GetId(), time.Unix(1700000000, 0))
			if err != nil || len(got.GetInput()) != len(rs[i].GetInput()) {
				t.Errorf("response %d: %d turns, %v", i, len(got.GetInput()), err)
			}
			if _, err := s.Task(ctx, fmt.Sprintf("t-%02d", i+1)); err != nil {
				t.Errorf("task %d: %v", i+1, err)
			}
		}
	})

	t.Run("a failed write fails alone", func(t *testing.T) {
		s := open(t, filepath.Join(t.TempDir(), "parley.db"))
		if err := s.CreateTask(ctx, task("t-taken", parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS)); err != nil {
			t.Fatal(err)
		}
		errs := lineUp(t, s, 9, func(i int) error {
			id := fmt.Sprintf("t-%d", i)
			if i == 4 {
				id = "t-taken"
			}
			return s.CreateTask(ctx, task(id, parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS))
		})
		for i, err := range errs {
			want := error(nil)
			if i == 4 {
				want = store.ErrExists
			}
			if !errors.Is(err, want) {
				t.Errorf("write %d: %v, want %v", i, err, want)
			}
			if i != 4 {
				if _, err := s.Task(ctx, fmt.Sprintf("t-%d", i)); err != nil {
					t.Errorf("task %d was not kept: %v", i, err)
				}
			}
		}
	})

	t.Run("a caller gone before its write began writes nothing", func(t *testing.T) {
		s := open(t, filepath.Join(t.TempDir(), "parley.db"))
		gone, cancel := context.WithCancel(ctx)
		cancel()
		errs := lineUp(t, s, 3, func(i int) error {
			c := ctx
			if i == 1 {
				c = gone
			}
			return s.CreateTask(c, task(fmt.Sprintf("t-%d", i), parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS))
		})
		if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], context.Canceled) {
			t.Fatalf("errors %v; want nil, canceled, nil", errs)
		}
		if _, err := s.Task(ctx, "t-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the gone caller's task: %v, want not found", err)
		}
		if _, err := s.Task(ctx, "t-2"); err != nil {
			t.Errorf("the write after it: %v", err)
		}
	})

	t.Run("a lone write commits at once", func(t *testing.T) {
		s := open(t, filepath.Join(t.TempDir(), "parley.db"))
		before := s.Commits()
		if err := s.CreateTask(ctx, task("t-alone", parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS)); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateTask(ctx, task("t-alone", parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS)); !errors.Is(err, store.ErrExists) {
			t.Fatalf("a second insert: %v, want ErrExists", err)
		}
		if n := s.Commits() - before; n != 1 {
			t.Errorf("%d commits, want 1 (the failed write commits nothing)", n)
		}
	})
}

// A response whose previous one is deleted between the save's check of
// their turns and its write is stored whole, not on a base that is gone.
func TestSaveAfterItsBaseWent(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "parley.db"))
	now := time.Unix(1700000000, 0)
	rs := chain(2, now)
	if err := s.SaveResponse(ctx, rs[0]); err != nil {
		t.Fatal(err)
	}
	release := s.HoldCommits()
	var wg sync.WaitGroup
	var delErr, saveErr error
	wg.Go(func() { delErr = s.DeleteResponse(ctx, rs[0].GetId()) })
	waitQueued(t, s, 1, release)
	wg.Go(func() { saveErr = s.SaveResponse(ctx, rs[1]) })
	waitQueued(t, s, 2, release)
	release()
	wg.Wait()
	if delErr != nil || saveErr != nil {
		t.Fatalf("delete: %v, save: %v", delErr, saveErr)
	}
	got, err := s.Response(ctx, rs[1].GetId(), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetInput()) != len(rs[1].GetInput()) {
		t.Errorf("%d input turns read back, want %d", len(got.GetInput()), len(rs[1].GetInput()))
	}
	if _, err := s.Response(ctx, rs[0].GetId(), now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the deleted response: %v", err)
	}
}

func waitQueued(t *testing.T, s *sqlite.SQLite, n int, release func()) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.Queued() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("only %d of %d writes queued", s.Queued(), n)
		}
	}
}
