package storetest

import (
	"fmt"
	"runtime"
	"sync"
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
	b.Run("SubmitFetchParallel16", func(b *testing.B) { benchSubmitFetchParallel(b, be) })
	b.Run("Stored21stTurn", func(b *testing.B) { benchStored21st(b, be, false) })
	b.Run("Stored21stTurnParallel16", func(b *testing.B) { benchStored21st(b, be, true) })
	b.Run("SaveParallel16", func(b *testing.B) { benchSaveParallel(b, be) })
	b.Run("PollRound10k", func(b *testing.B) { benchPollRound(b, be, 1) })
	b.Run("PollRound10kParallel16", func(b *testing.B) { benchPollRound(b, be, 16) })
	b.Run("RecordUsage100", func(b *testing.B) { benchRecordUsage(b, be, false) })
	b.Run("RecordUsage100RandomIDs", func(b *testing.B) { benchRecordUsage(b, be, true) })
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

// benchSubmitFetchParallel is a submit and a fetch of a task from 16
// requests at a time.
func benchSubmitFetchParallel(b *testing.B, be Backend) {
	s := be.Open(b).Store
	ctx := b.Context()
	var n atomic.Int64
	b.SetParallelism(16 / max(1, parallelism()))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("t-%09d", n.Add(1))
			if err := s.CreateTask(ctx, Task(id, inProgress)); err != nil {
				b.Error(err)
				return
			}
			if _, err := s.Task(ctx, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchStored21st saves the 21st turn of a conversation whose first 20
// are stored, and reads it back, as a continued request does; in
// parallel, 16 requests at a time each continue a conversation of their
// own, as 16 users of a busy gateway would.
func benchStored21st(b *testing.B, be Backend, parallel bool) {
	s := be.Open(b).Store
	ctx := b.Context()
	now := time.Unix(1800000000, 0)
	conversations := 1
	if parallel {
		conversations = 16
	}
	type conversation struct {
		last    *parleyv1.StoredResponse
		history []*parleyv1.Message
	}
	convs := make([]conversation, conversations)
	for k := range convs {
		rs := Chain(fmt.Sprintf("resp_%02d_", k), 20, now)
		for _, r := range rs {
			if err := s.SaveResponse(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
		last := rs[len(rs)-1]
		convs[k] = conversation{last, append(append([]*parleyv1.Message(nil), last.GetInput()...), translate.OutputTurn(last.GetResponse()))}
	}
	var n atomic.Int64
	turn := func(c conversation) error {
		id := fmt.Sprintf("resp_21st_%09d", n.Add(1))
		prev, err := s.Response(ctx, c.last.GetId(), now)
		if err != nil {
			return err
		}
		if len(prev.GetInput()) != len(c.last.GetInput()) {
			return fmt.Errorf("the 20th turn read back with %d messages, want %d", len(prev.GetInput()), len(c.last.GetInput()))
		}
		return s.SaveResponse(ctx, &parleyv1.StoredResponse{
			Id: id, Owner: "alice", CreatedAt: timestamppb.New(now), PreviousResponseId: c.last.GetId(),
			Request:   &parleyv1.Request{Model: "m"},
			Input:     append(append([]*parleyv1.Message(nil), c.history...), Text(parleyv1.Role_ROLE_USER, "and the 21st, "+id+"?")),
			Response:  &parleyv1.Response{Id: id, Model: "m", Candidates: []*parleyv1.Candidate{{Parts: Text(parleyv1.Role_ROLE_ASSISTANT, "answer "+id).GetParts()}}},
			ExpiresAt: timestamppb.New(now.Add(time.Hour)),
		})
	}
	b.ResetTimer()
	if !parallel {
		for b.Loop() {
			if err := turn(convs[0]); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var users atomic.Int64
	b.SetParallelism(16 / max(1, parallelism()))
	b.RunParallel(func(pb *testing.PB) {
		c := convs[int(users.Add(1)-1)%len(convs)]
		for pb.Next() {
			if err := turn(c); err != nil {
				b.Error(err)
				return
			}
		}
	})
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
// progress, in pages of 200, by one claimer or by several at once, as the
// replicas of a fleet claim.
func benchPollRound(b *testing.B, be Backend, claimers int) {
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
		var claimed atomic.Int64
		var wg sync.WaitGroup
		for range claimers {
			wg.Go(func() {
				for {
					page, err := s.ClaimTasks(ctx, now, time.Second, 200)
					if err != nil {
						b.Error(err)
						return
					}
					claimed.Add(int64(len(page)))
					if len(page) < 200 {
						return
					}
				}
			})
		}
		wg.Wait()
		if c := claimed.Load(); c != 10000 {
			b.Fatalf("a round claimed %d of 10000", c)
		}
	}
}

// parallelism is GOMAXPROCS, which RunParallel multiplies.
func parallelism() int { return runtime.GOMAXPROCS(0) }
