package store_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

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

// BenchmarkSQLiteSaveParallel is durable saves of stored responses (a
// short conversation each, with a turn of its own) from 16 requests at a
// time, as a busy gateway makes them.
func BenchmarkSQLiteSaveParallel(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "parley.db"))
	ctx := b.Context()
	var n atomic.Int64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			id := fmt.Sprintf("resp_%09d", i)
			r := &parleyv1.StoredResponse{
				Id: id, Owner: "alice", CreatedAt: timestamppb.New(time.Unix(0, 0)), ExpiresAt: timestamppb.New(time.Unix(3600, 0)),
				Request: &parleyv1.Request{Model: "m"},
				Input: []*parleyv1.Message{
					text(parleyv1.Role_ROLE_USER, "the same opening question"),
					text(parleyv1.Role_ROLE_ASSISTANT, "the same opening answer"),
					text(parleyv1.Role_ROLE_USER, fmt.Sprintf("question %d", i)),
				},
				Response: &parleyv1.Response{Id: id, Model: "m", Candidates: []*parleyv1.Candidate{{Parts: text(parleyv1.Role_ROLE_ASSISTANT, "answer "+id).GetParts()}}},
			}
			if err := s.SaveResponse(ctx, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSQLiteSubmitParallel is durable task inserts from 16 requests
// at a time.
func BenchmarkSQLiteSubmitParallel(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "parley.db"))
	ctx := b.Context()
	var n atomic.Int64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.CreateTask(ctx, task(fmt.Sprintf("t-%09d", n.Add(1)), parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
