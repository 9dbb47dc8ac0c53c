package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

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

// RecentTasks lists tasks newest first, ties by id, each with its delivery
// in whatever state it is; pages back by time without skipping or
// repeating; and reads the same after a restart.
func testRecentTasks(t *testing.T, b Backend) {
	ctx := t.Context()
	o := b.Open(t)
	s := o.Store
	if got, err := s.RecentTasks(ctx, 10, time.Time{}); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("an empty store: %#v %v, want an empty slice", got, err)
	}

	// Tasks are created out of order of their ids and of their times; the
	// times are apart by seconds and nanoseconds.
	base := time.Unix(1_800_000_000, 0)
	at := func(k int) time.Time { return base.Add(time.Duration(k)*time.Second + time.Duration(k)) }
	want := map[string]store.TaskView{} // by id, as the store should hold it
	for _, c := range []struct {
		id string
		k  int
	}{{"t-e", 5}, {"t-a", 9}, {"t-h", 1}, {"t-c", 7}, {"t-b", 2}, {"t-g", 4}, {"t-d", 3}, {"t-f", 6}} {
		task := Task(c.id, inProgress)
		task.UpdatedAt = timestamppb.New(at(c.k))
		if err := s.CreateTask(ctx, task); err != nil {
			t.Fatal(err)
		}
		want[c.id] = store.TaskView{Task: task}
	}
	// Some finish, later than any was created: with a pending delivery, a
	// delivered one, an abandoned one, and one without a callback.
	next := base.Add(time.Hour + 17)
	for _, c := range []struct {
		id     string
		k      int
		status parleyv1.TaskStatus
		d      *store.Delivery // saved after the update, when its state is not pending
	}{
		{"t-h", 12, parleyv1.TaskStatus_TASK_STATUS_SUCCESS, &store.Delivery{URL: "http://hook.example/h", NextAt: next}},
		{"t-d", 10, parleyv1.TaskStatus_TASK_STATUS_SUCCESS, &store.Delivery{URL: "http://hook.example/d", State: store.DeliveryDone, Attempts: 1, NextAt: next}},
		{"t-f", 14, parleyv1.TaskStatus_TASK_STATUS_FAIL, &store.Delivery{URL: "http://hook.example/f", State: store.DeliveryAbandoned, Attempts: 8, NextAt: next.Add(time.Minute), LastError: "the receiver answered 503"}},
		{"t-a", 11, parleyv1.TaskStatus_TASK_STATUS_FAIL, nil},
	} {
		task := Task(c.id, c.status)
		task.UpdatedAt = timestamppb.New(at(c.k))
		var first *store.Delivery
		if c.d != nil {
			c.d.TaskID = c.id
			first = &store.Delivery{TaskID: c.id, URL: c.d.URL, NextAt: next}
		}
		if ok, err := s.UpdateTask(ctx, task, first); err != nil || !ok {
			t.Fatalf("finishing %s: %v %v", c.id, ok, err)
		}
		if c.d != nil && c.d.State != store.DeliveryPending {
			if err := s.SaveDelivery(ctx, c.d); err != nil {
				t.Fatal(err)
			}
		}
		want[c.id] = store.TaskView{Task: task, Delivery: c.d}
	}
	order := []string{"t-f", "t-h", "t-a", "t-d", "t-c", "t-e", "t-g", "t-b"}

	check := func(what string, got []store.TaskView, err error, ids []string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var gotIDs []string
		for _, v := range got {
			gotIDs = append(gotIDs, v.Task.GetId())
		}
		if d := cmp.Diff(ids, gotIDs, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%s: tasks (-want +got):\n%s", what, d)
		}
		for _, v := range got {
			w := want[v.Task.GetId()]
			if d := cmp.Diff(w.Task, v.Task, protocmp.Transform()); d != "" {
				t.Errorf("%s: task %s (-want +got):\n%s", what, w.Task.GetId(), d)
			}
			if d := cmp.Diff(w.Delivery, v.Delivery); d != "" {
				t.Errorf("%s: delivery of %s (-want +got):\n%s", what, w.Task.GetId(), d)
			}
		}
	}
	all, err := s.RecentTasks(ctx, 100, time.Time{})
	check("all", all, err, order)
	got, err := s.RecentTasks(ctx, 3, time.Time{})
	check("limit 3", got, err, order[:3])
	got, err = s.RecentTasks(ctx, 0, time.Time{})
	check("limit 0, taken as 1", got, err, order[:1])
	got, err = s.RecentTasks(ctx, -5, time.Time{})
	check("a negative limit, taken as 1", got, err, order[:1])
	// before is exclusive, to the nanosecond.
	got, err = s.RecentTasks(ctx, 100, at(11))
	check("before t-a's update", got, err, order[3:])
	got, err = s.RecentTasks(ctx, 100, at(11).Add(1))
	check("a nanosecond after t-a's update", got, err, order[2:])
	got, err = s.RecentTasks(ctx, 100, at(1))
	check("before the oldest", got, err, nil)

	// Paging back from the last task seen returns each task once.
	page := func(s store.Store, size int) []string {
		var seen []string
		before := time.Time{}
		for range len(order) + 2 {
			got, err := s.RecentTasks(ctx, size, before)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range got {
				seen = append(seen, v.Task.GetId())
			}
			if len(got) < size {
				return seen
			}
			before = got[len(got)-1].Task.GetUpdatedAt().AsTime()
		}
		t.Fatalf("paging by %d does not end: %v", size, seen)
		return nil
	}
	for _, size := range []int{1, 3, 4} {
		if d := cmp.Diff(order, page(s, size)); d != "" {
			t.Fatalf("pages of %d (-want +got):\n%s", size, d)
		}
	}

	// A restart keeps it all.
	s = o.Reopen(t)
	all, err = s.RecentTasks(ctx, 100, time.Time{})
	check("after reopen", all, err, order)
	if d := cmp.Diff(order, page(s, 3)); d != "" {
		t.Fatalf("pages after reopen (-want +got):\n%s", d)
	}

	// Tasks updated at the same moment come by id, last first.
	tie := base.Add(-time.Hour)
	for _, id := range []string{"t-y", "t-z", "t-x"} {
		task := Task(id, inProgress)
		task.UpdatedAt = timestamppb.New(tie)
		if err := s.CreateTask(ctx, task); err != nil {
			t.Fatal(err)
		}
		want[id] = store.TaskView{Task: task}
	}
	got, err = s.RecentTasks(ctx, 100, at(1))
	check("a tie", got, err, []string{"t-z", "t-y", "t-x"})
}
