package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
)

const inProgress = parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS

func ids(ts []*parleyv1.Task) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.GetId())
	}
	slices.Sort(out)
	return out
}

func testTasks(t *testing.T, b Backend) {
	ctx := t.Context()
	o := b.Open(t)
	s := o.Store
	a := Task("t-a", inProgress)
	if err := s.CreateTask(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTask(ctx, a); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	if _, err := s.Task(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
	got, err := s.Task(ctx, "t-a")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a, got, protocmp.Transform()); d != "" {
		t.Fatalf("stored task differs (-want +got):\n%s", d)
	}
	for _, id := range []string{"t-c", "t-b", "t-d"} {
		if err := s.CreateTask(ctx, Task(id, inProgress)); err != nil {
			t.Fatal(err)
		}
	}
	many, err := s.Tasks(ctx, []string{"t-b", "nope", "t-a"})
	if err != nil || len(many) != 2 {
		t.Fatalf("Tasks: %d tasks, %v; want 2", len(many), err)
	}
	if none, err := s.Tasks(ctx, nil); err != nil || len(none) != 0 {
		t.Fatalf("Tasks of no ids: %v %v", none, err)
	}

	// Finishing writes the delivery with the task; a finished task is final.
	done := Task("t-b", parleyv1.TaskStatus_TASK_STATUS_SUCCESS)
	due := time.Now()
	ok, err := s.UpdateTask(ctx, done, &store.Delivery{TaskID: "t-b", URL: "http://127.0.0.1:1/hook", NextAt: due})
	if err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
	ok, err = s.UpdateTask(ctx, Task("t-b", parleyv1.TaskStatus_TASK_STATUS_FAIL), nil)
	if err != nil || ok {
		t.Fatalf("updating a finished task: wrote=%v err=%v; want no write", ok, err)
	}
	if ok, err := s.UpdateTask(ctx, Task("nope", parleyv1.TaskStatus_TASK_STATUS_FAIL), nil); err != nil || ok {
		t.Fatalf("updating an unknown task: wrote=%v err=%v; want no write", ok, err)
	}

	// A restart keeps tasks and the pending delivery.
	s = o.Reopen(t)
	if got, err := s.Task(ctx, "t-b"); err != nil || got.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_SUCCESS {
		t.Fatalf("after reopen: %v %v", got.GetStatus(), err)
	}
	if ds, _ := s.ClaimDeliveries(ctx, due.Add(-time.Second), time.Minute, 10); len(ds) != 0 {
		t.Fatalf("a delivery due later is claimed early: %+v", ds)
	}
	ds, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10)
	if err != nil || len(ds) != 1 || ds[0].TaskID != "t-b" || ds[0].URL != "http://127.0.0.1:1/hook" || ds[0].State != store.DeliveryPending {
		t.Fatalf("due deliveries after reopen: %+v %v", ds, err)
	}
	ds[0].State, ds[0].Attempts = store.DeliveryDone, 1
	if err := s.SaveDelivery(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
	if ds, _ := s.ClaimDeliveries(ctx, time.Now().Add(time.Hour), time.Minute, 10); len(ds) != 0 {
		t.Fatalf("a done delivery is still due: %+v", ds)
	}
	if d, err := s.Delivery(ctx, "t-b"); err != nil || d.State != store.DeliveryDone || d.Attempts != 1 {
		t.Fatalf("delivery: %+v %v", d, err)
	}
	if _, err := s.Delivery(ctx, "t-a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delivery of a task without one: %v", err)
	}
}

// A claimed task is held until its lease ends, then claimable again;
// finished tasks are never claimed; a claim takes at most its limit.
func testClaimTasks(t *testing.T, b Backend) {
	ctx := t.Context()
	s := b.Open(t).Store
	for i := range 5 {
		if err := s.CreateTask(ctx, Task(fmt.Sprintf("t-%d", i), inProgress)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.UpdateTask(ctx, Task("t-4", parleyv1.TaskStatus_TASK_STATUS_FAIL), nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	const lease = 10 * time.Second
	first, err := s.ClaimTasks(ctx, now, lease, 3)
	if err != nil || len(first) != 3 {
		t.Fatalf("first claim: %v %v, want 3 tasks", ids(first), err)
	}
	rest, err := s.ClaimTasks(ctx, now, lease, 3)
	if err != nil {
		t.Fatal(err)
	}
	all := append(ids(first), ids(rest)...)
	slices.Sort(all)
	if d := cmp.Diff([]string{"t-0", "t-1", "t-2", "t-3"}, all); d != "" {
		t.Fatalf("two claims took (-want +got):\n%s", d)
	}
	if held, _ := s.ClaimTasks(ctx, now.Add(lease-time.Millisecond), lease, 10); len(held) != 0 {
		t.Fatalf("tasks claimed while their lease holds: %v", ids(held))
	}
	again, err := s.ClaimTasks(ctx, now.Add(lease), lease, 10)
	if err != nil || len(again) != 4 {
		t.Fatalf("after the lease: %v %v, want the 4 again", ids(again), err)
	}
	// A task's body comes back whole with its claim.
	if again[0].GetInput().GetLyrics().GetPrompt() != "rain" {
		t.Fatalf("a claimed task: %v", again[0])
	}
	// Updating a claimed task does not end its lease early.
	if _, err := s.UpdateTask(ctx, Task("t-0", inProgress), nil); err != nil {
		t.Fatal(err)
	}
	if held, _ := s.ClaimTasks(ctx, now.Add(lease+time.Millisecond), lease, 10); len(held) != 0 {
		t.Fatalf("an updated task lost its lease: %v", ids(held))
	}
	// A task held longer stays out of claims; one given up is claimable.
	at := now.Add(2 * lease)
	if err := s.HoldTasks(ctx, at.Add(time.Hour), "t-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.HoldTasks(ctx, now, "t-2", "nope"); err != nil {
		t.Fatalf("giving up a task and an unknown one: %v", err)
	}
	if err := s.HoldTasks(ctx, now); err != nil {
		t.Fatalf("holding no task: %v", err)
	}
	got, err := s.ClaimTasks(ctx, at, lease, 10)
	if d := cmp.Diff([]string{"t-0", "t-2", "t-3"}, ids(got)); err != nil || d != "" {
		t.Fatalf("claims with t-1 held (-want +got):\n%s %v", d, err)
	}
}

// Claimers racing for the same due tasks take each exactly once.
func testClaimTasksAtOnce(t *testing.T, b Backend) {
	ctx := t.Context()
	s := b.Open(t).Store
	const n = 60
	for i := range n {
		if err := s.CreateTask(ctx, Task(fmt.Sprintf("t-%03d", i), inProgress)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	var (
		mu  sync.Mutex
		got = map[string]int{}
		wg  sync.WaitGroup
	)
	for range 6 {
		wg.Go(func() {
			for {
				ts, err := s.ClaimTasks(ctx, now, time.Minute, 4)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, t := range ts {
					got[t.GetId()]++
				}
				mu.Unlock()
				if len(ts) < 4 {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(got) != n {
		t.Errorf("%d of %d tasks claimed", len(got), n)
	}
	for id, k := range got {
		if k != 1 {
			t.Errorf("%s claimed %d times", id, k)
		}
	}
}

// A claimed delivery is due again when its lease ends, unless its outcome
// was saved.
func testClaimDeliveries(t *testing.T, b Backend) {
	ctx := t.Context()
	s := b.Open(t).Store
	now := time.Now()
	for i := range 4 {
		id := fmt.Sprintf("t-%d", i)
		if err := s.CreateTask(ctx, Task(id, inProgress)); err != nil {
			t.Fatal(err)
		}
		d := &store.Delivery{TaskID: id, URL: "http://hook.example/" + id, NextAt: now.Add(time.Duration(i) * time.Second)}
		if ok, err := s.UpdateTask(ctx, Task(id, parleyv1.TaskStatus_TASK_STATUS_SUCCESS), d); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	const lease = 30 * time.Second
	ds, err := s.ClaimDeliveries(ctx, now.Add(time.Second), lease, 10)
	if err != nil || len(ds) != 2 {
		t.Fatalf("due by now+1s: %+v %v, want t-0 and t-1", ds, err)
	}
	if more, _ := s.ClaimDeliveries(ctx, now.Add(time.Second), lease, 10); len(more) != 0 {
		t.Fatalf("claimed twice: %+v", more)
	}
	// t-0 fails and is rescheduled; t-1's claimer dies.
	for _, d := range ds {
		if d.TaskID == "t-0" {
			d.Attempts, d.LastError, d.NextAt = 1, "the receiver answered 500", now.Add(2*time.Second)
			if err := s.SaveDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	ds, err = s.ClaimDeliveries(ctx, now.Add(3*time.Second), lease, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.TaskID)
	}
	slices.Sort(got)
	if d := cmp.Diff([]string{"t-0", "t-2", "t-3"}, got); d != "" {
		t.Fatalf("claimable at now+3s (-want +got):\n%s", d)
	}
	ds, err = s.ClaimDeliveries(ctx, now.Add(time.Second+lease), lease, 10)
	if err != nil || len(ds) != 1 || ds[0].TaskID != "t-1" {
		t.Fatalf("the dead claimer's delivery after its lease: %+v %v", ds, err)
	}
	if d, err := s.Delivery(ctx, "t-0"); err != nil || d.Attempts != 1 || d.LastError != "the receiver answered 500" {
		t.Fatalf("t-0: %+v %v", d, err)
	}
}
