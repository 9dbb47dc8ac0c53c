package store_test

import (
	"fmt"
	"path/filepath"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// BenchmarkSQLiteSubmitFetch is one submit (a durable insert) and one
// fetch (a read by id) of a task, against the embedded store on disk.
func BenchmarkSQLiteSubmitFetch(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "parley.db"))
	ctx := b.Context()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("t-%09d", i)
		i++
		if err := s.CreateTask(ctx, task(id, parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS)); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Task(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSQLiteFetch is a read by id among 10,000 tasks.
func BenchmarkSQLiteFetch(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "parley.db"))
	ctx := b.Context()
	for i := range 10000 {
		if err := s.CreateTask(ctx, task(fmt.Sprintf("t-%05d", i), parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS)); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		if _, err := s.Task(ctx, fmt.Sprintf("t-%05d", i%10000)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
