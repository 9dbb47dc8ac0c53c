package storetest

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Bench runs the benchmarks every backend is measured by, named alike so
// that benchstat sets them side by side.
func Bench(b *testing.B, be Backend) {
	b.Run("SubmitFetch", func(b *testing.B) { benchSubmitFetch(b, be) })
	b.Run("SubmitParallel16", func(b *testing.B) { benchSubmitParallel(b, be) })
	b.Run("Stored21stTurn", func(b *testing.B) { benchStored21st(b, be) })
	b.Run("SaveParallel16", func(b *testing.B) { benchSaveParallel(b, be) })
	b.Run("PollRound10k", func(b *testing.B) { benchPollRound(b, be) })
}

// benchSubmitFetch is one submit (a durable insert) and one fetch (a read
// by id) of a task.
func benchSubmitFetch(b *testing.B, be Backend) {
	s := be.Open(b).Store
	ctx := b.Context()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("t-%09d", i)
		i++
		if err := s.CreateTask(ctx, Task(id, inProgress)); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Task(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSubmitParallel is durable task inserts from 16 requests at a time.
func benchSubmitParallel(b *testing.B, be Backend) {
	s := be.Open(b).Store
	ctx := b.Context()
	var n atomic.Int64
	b.SetParallelism(16 / max(1, parallelism()))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.CreateTask(ctx, Task(fmt.Sprintf("t-%09d", n.Add(1)), inProgress)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchStored21st saves the 21st turn of a conversation whose first 20
// are stored, and reads it back, as a continued request does.
func benchStored21st(b *testing.B, be Backend) {
	s := be.Open(b).Store
	ctx := b.Context()
	now := time.Unix(1800000000, 0)
	rs := Chain("resp_", 20, now)
	for _, r := range rs {
		if err := s.SaveResponse(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	last := rs[len(rs)-1]
	history := append(append([]*parleyv1.Message(nil), last.GetInput()...), translate.OutputTurn(last.GetResponse()))
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("resp_21st_%09d", i)
		i++
		prev, err := s.Response(ctx, last.GetId(), now)
		if err != nil || len(prev.GetInput()) != len(last.GetInput()) {
			b.Fatal(err)
		}
		r := &parleyv1.StoredResponse{
			Id: id, Owner: "alice", CreatedAt: timestamppb.New(now), PreviousResponseId: last.GetId(),
			Request:   &parleyv1.Request{Model: "m"},
			Input:     append(append([]*parleyv1.Message(nil), history...), Text(parleyv1.Role_ROLE_USER, "and the 21st, "+id+"?")),
			Response:  &parleyv1.Response{Id: id, Model: "m", Candidates: []*parleyv1.Candidate{{Parts: Text(parleyv1.Role_ROLE_ASSISTANT, "answer "+id).GetParts()}}},
			ExpiresAt: timestamppb.New(now.Add(time.Hour)),
		}
		if err := s.SaveResponse(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSaveParallel is durable saves of stored responses (a short
// conversation each, with a turn of its own) from 16 requests at a time,
// as a busy gateway makes them.
func benchSaveParallel(b *testing.B, be Backend) {
	s := be.Open(b).Store
	ctx := b.Context()
	var n atomic.Int64
	b.SetParallelism(16 / max(1, parallelism()))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			id := fmt.Sprintf("resp_%09d", i)
			r := &parleyv1.StoredResponse{
				Id: id, Owner: "alice", CreatedAt: timestamppb.New(time.Unix(0, 0)), ExpiresAt: timestamppb.New(time.Unix(3600, 0)),
				Request: &parleyv1.Request{Model: "m"},
				Input: []*parleyv1.Message{
					Text(parleyv1.Role_ROLE_USER, "the same opening question"),
					Text(parleyv1.Role_ROLE_ASSISTANT, "the same opening answer"),
					Text(parleyv1.Role_ROLE_USER, fmt.Sprintf("question %d", i)),
				},
				Response: &parleyv1.Response{Id: id, Model: "m", Candidates: []*parleyv1.Candidate{{Parts: Text(parleyv1.Role_ROLE_ASSISTANT, "answer "+id).GetParts()}}},
			}
			if err := s.SaveResponse(ctx, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchPollRound is one poll round's claims over 10,000 tasks in
// progress, in pages of 200 as the task service takes them.
func benchPollRound(b *testing.B, be Backend) {
	s := be.Open(b).Store
	ctx := b.Context()
	for i := range 10000 {
		if err := s.CreateTask(ctx, Task(fmt.Sprintf("t-%05d", i), inProgress)); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now()
	for b.Loop() {
		now = now.Add(time.Minute)
		claimed := 0
		for {
			page, err := s.ClaimTasks(ctx, now, time.Second, 200)
			if err != nil {
				b.Fatal(err)
			}
			claimed += len(page)
			if len(page) < 200 {
				break
			}
		}
		if claimed != 10000 {
			b.Fatalf("a round claimed %d of 10000", claimed)
		}
	}
}

// parallelism is GOMAXPROCS, which RunParallel multiplies.
func parallelism() int { return runtime.GOMAXPROCS(0) }
