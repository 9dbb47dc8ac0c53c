package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/google/go-cmp/cmp"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	_ "github.com/parleyhq/parley/translate/golden"
)

func open(t testing.TB, path string) *store.SQLite {
	t.Helper()
	s, err := store.OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func task(id string, status parleyv1.TaskStatus) *parleyv1.Task {
	return &parleyv1.Task{
		Id: id, Owner: "alice", Action: parleyv1.TaskAction_TASK_ACTION_MUSIC, Status: status,
		SubmittedAt: timestamppb.New(time.Unix(1700000000, 0)), UpdatedAt: timestamppb.Now(),
		Input: &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Lyrics{Lyrics: &parleyv1.LyricsInput{Prompt: "rain"}}},
	}
}

func TestSQLiteTasks(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	s := open(t, path)
	a := task("t-a", parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS)
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
		if err := s.CreateTask(ctx, task(id, parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS)); err != nil {
			t.Fatal(err)
		}
	}
	many, err := s.Tasks(ctx, []string{"t-b", "nope", "t-a"})
	if err != nil || len(many) != 2 {
		t.Fatalf("Tasks: %d tasks, %v; want 2", len(many), err)
	}

	// Finishing writes the delivery with the task; a finished task is final.
	done := task("t-b", parleyv1.TaskStatus_TASK_STATUS_SUCCESS)
	due := time.Now()
	ok, err := s.UpdateTask(ctx, done, &store.Delivery{TaskID: "t-b", URL: "http://127.0.0.1:1/hook", NextAt: due})
	if err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
	ok, err = s.UpdateTask(ctx, task("t-b", parleyv1.TaskStatus_TASK_STATUS_FAIL), nil)
	if err != nil || ok {
		t.Fatalf("updating a finished task: wrote=%v err=%v; want no write", ok, err)
	}

	// Paging through the active tasks visits each once, in id order.
	var seen []string
	after := ""
	for {
		page, err := s.ActiveTasks(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, p := range page {
			seen = append(seen, p.GetId())
		}
		after = page[len(page)-1].GetId()
	}
	if d := cmp.Diff([]string{"t-a", "t-c", "t-d"}, seen); d != "" {
		t.Fatalf("active tasks (-want +got):\n%s", d)
	}

	// A restart (reopening the file) keeps tasks and the pending delivery.
	_ = s.Close()
	s = open(t, path)
	if got, err := s.Task(ctx, "t-b"); err != nil || got.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_SUCCESS {
		t.Fatalf("after reopen: %v %v", got.GetStatus(), err)
	}
	ds, err := s.DueDeliveries(ctx, time.Now(), 10)
	if err != nil || len(ds) != 1 || ds[0].TaskID != "t-b" || !ds[0].NextAt.Equal(time.Unix(0, due.UnixNano())) {
		t.Fatalf("due deliveries after reopen: %+v %v", ds, err)
	}
	if ds, _ := s.DueDeliveries(ctx, due.Add(-time.Second), 10); len(ds) != 0 {
		t.Fatalf("a delivery due later is reported early: %+v", ds)
	}
	ds[0].State, ds[0].Attempts = store.DeliveryDone, 1
	if err := s.SaveDelivery(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
	if ds, _ := s.DueDeliveries(ctx, time.Now(), 10); len(ds) != 0 {
		t.Fatalf("a done delivery is still due: %+v", ds)
	}
	if d, err := s.Delivery(ctx, "t-b"); err != nil || d.State != store.DeliveryDone || d.Attempts != 1 {
		t.Fatalf("delivery: %+v %v", d, err)
	}
	if _, err := s.Delivery(ctx, "t-a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delivery of a task without one: %v", err)
	}
}

func TestSQLiteRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s := open(t, path)
	if _, err := s.DB().ExecContext(context.Background(), "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, err := store.OpenSQLite(t.Context(), path); err == nil {
		t.Fatal("a database from a newer Parley was opened")
	}
}
