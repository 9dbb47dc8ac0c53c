package tasks

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

func (s *Service) pollLoop(ctx context.Context) {
	tick := time.NewTicker(s.o.PollInterval)
	defer tick.Stop()
	for {
		s.Poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Poll refreshes every task in progress that is due once: tasks of the
// music upstream by batch queries, lyrics tasks of a chat model by starting
// their writing, and any task past the maximum age by failing it. A task is
// claimed from the store before it is refreshed, so that in a fleet
// sharing one database each task is refreshed by one replica at a time,
// and the tasks of a replica that died are taken up by the others when
// their claims run out. A claim lasts a poll interval and as long as a
// query of the music service may take besides (its time-out, per batch of
// ids), and the query is cut off where the claim ends, so that a slow
// service is never asked about a task twice at once; once the page is
// refreshed, its tasks come due one poll interval after their claim.
func (s *Service) Poll(ctx context.Context) {
	lease := s.o.PollInterval
	if s.o.Upstream != nil {
		lease += s.o.Upstream.FetchBound(activePage)
	}
	for ctx.Err() == nil {
		claimed := s.o.Now()
		page, err := s.o.Store.ClaimTasks(ctx, claimed, lease, activePage)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("tasks in progress could not be claimed", "error", err)
			}
			return
		}
		if len(page) > 0 {
			s.pollPage(ctx, page, claimed.Add(lease))
			if ctx.Err() != nil {
				s.release(ctx, page)
				return
			}
			s.giveBack(ctx, page, claimed.Add(s.o.PollInterval))
		}
		if len(page) < activePage {
			return
		}
	}
}

// release gives up the claims of tasks this replica will not refresh now
// that it stops, so that another replica takes them up at once rather
// than when the claims run out. A finished task is left as it is.
func (s *Service) release(ctx context.Context, page []*parleyv1.Task) {
	if err := s.o.Store.HoldTasks(context.WithoutCancel(ctx), s.o.Now(), taskIDs(page)...); err != nil {
		s.log.Warn("the claims of tasks could not be given up; they end with their leases", "tasks", len(page), "error", err)
	}
}

// giveBack makes the music tasks of a refreshed page due at next, one poll
// interval after their claim, rather than when the claim's allowance for a
// slow query ends. Lyrics tasks keep the hold their writing took.
func (s *Service) giveBack(ctx context.Context, page []*parleyv1.Task, next time.Time) {
	ids := make([]string, 0, len(page))
	for _, t := range page {
		if t.GetModel() == "" {
			ids = append(ids, t.GetId())
		}
	}
	if err := s.o.Store.HoldTasks(ctx, next, ids...); err != nil && ctx.Err() == nil {
		s.log.Warn("refreshed tasks could not be given back; they come due when their claims end", "tasks", len(ids), "error", err)
	}
}

func taskIDs(ts []*parleyv1.Task) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.GetId()
	}
	return ids
}

// pollPage refreshes a claimed page of tasks, whose claim ends at due.
func (s *Service) pollPage(ctx context.Context, page []*parleyv1.Task, due time.Time) {
	byUpstream := map[string][]*parleyv1.Task{}
	for _, t := range page {
		switch {
		case t.GetModel() != "":
			if !s.expire(ctx, t) {
				s.startLyrics(ctx, t)
			}
		case s.o.Upstream != nil && t.GetUpstream() == s.o.Upstream.Name():
			byUpstream[t.GetUpstream()] = append(byUpstream[t.GetUpstream()], t)
		default:
			// Its upstream is no longer configured; the age limit ends it.
			s.expire(ctx, t)
		}
	}
	for _, ts := range byUpstream {
		ids := make([]string, 0, len(ts))
		for _, t := range ts {
			ids = append(ids, t.GetUpstreamTaskId())
		}
		ups, err := s.fetch(ctx, ids, due)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("the music service could not be polled", "upstream", s.o.Upstream.Name(), "tasks", len(ids), "error", err)
		}
		got := make(map[string]*translate.TaskUpdate, len(ups))
		for _, u := range ups {
			got[u.UpstreamID] = u
		}
		for _, t := range ts {
			if u := got[t.GetUpstreamTaskId()]; u != nil {
				s.apply(ctx, t, u)
			} else {
				s.expire(ctx, t)
			}
		}
	}
}

// fetch queries the music service for the upstream tasks ids, claimed
// until due: the query is cut off there, since another replica may take
// the tasks up then.
func (s *Service) fetch(ctx context.Context, ids []string, due time.Time) ([]*translate.TaskUpdate, error) {
	ctx, cancel := context.WithDeadline(ctx, due)
	defer cancel()
	return s.o.Upstream.Fetch(ctx, ids)
}

// apply merges what the upstream reported into a task and stores it when
// anything changed; a task still in progress past the maximum age fails.
func (s *Service) apply(ctx context.Context, t *parleyv1.Task, u *translate.TaskUpdate) {
	next := proto.Clone(t).(*parleyv1.Task)
	if u.Progress > next.GetProgress() {
		next.Progress = u.Progress
	}
	if len(u.Songs) > 0 {
		next.Songs = u.Songs
	}
	if u.Lyrics != nil {
		next.Lyrics = u.Lyrics
	}
	switch u.Status {
	case parleyv1.TaskStatus_TASK_STATUS_SUCCESS:
		s.finish(next, parleyv1.TaskStatus_TASK_STATUS_SUCCESS, "")
	case parleyv1.TaskStatus_TASK_STATUS_FAIL:
		s.finish(next, parleyv1.TaskStatus_TASK_STATUS_FAIL, failReason(u))
	default:
		if s.tooOld(next) {
			s.finish(next, parleyv1.TaskStatus_TASK_STATUS_FAIL, s.ageReason())
		}
	}
	if proto.Equal(t, next) {
		return
	}
	s.save(ctx, next)
}

// failReason is the upstream's reason, else the first song error, else a
// sentence naming the upstream's word.
func failReason(u *translate.TaskUpdate) string {
	if u.FailReason != "" {
		return u.FailReason
	}
	for _, song := range u.Songs {
		if m := song.GetMetadata(); m.GetErrorMessage() != "" {
			return m.GetErrorMessage()
		}
	}
	return fmt.Sprintf("the music service reported %s without a reason", u.Word)
}

func (s *Service) tooOld(t *parleyv1.Task) bool {
	return s.o.Now().Sub(t.GetSubmittedAt().AsTime()) > s.o.MaxAge
}

func (s *Service) ageReason() string {
	return fmt.Sprintf("the task did not finish within %s of its submission (songgen.max_age)", s.o.MaxAge)
}

// expire fails a task past the maximum age, and reports whether it did.
func (s *Service) expire(ctx context.Context, t *parleyv1.Task) bool {
	if !s.tooOld(t) {
		return false
	}
	next := proto.Clone(t).(*parleyv1.Task)
	s.finish(next, parleyv1.TaskStatus_TASK_STATUS_FAIL, s.ageReason())
	s.save(ctx, next)
	return true
}

// finish marks a task final.
func (s *Service) finish(t *parleyv1.Task, status parleyv1.TaskStatus, reason string) {
	t.Status, t.FailReason, t.Progress = status, reason, 100
	t.FinishedAt = timestamppb.New(s.o.Now())
}

// save stores a changed task, with its callback when it has finished.
func (s *Service) save(ctx context.Context, t *parleyv1.Task) {
	t.UpdatedAt = timestamppb.New(s.o.Now())
	var d *store.Delivery
	final := t.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS
	if final && t.GetNotifyHook() != "" {
		d = &store.Delivery{TaskID: t.GetId(), URL: t.GetNotifyHook(), State: store.DeliveryPending, NextAt: s.o.Now()}
	}
	wrote, err := s.o.Store.UpdateTask(ctx, t, d)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.log.Error("a task could not be updated", "task", t.GetId(), "error", err)
		}
	case wrote && final:
		s.log.Info("task finished", "task", t.GetId(), "status", t.GetStatus().String(), "upstream", t.GetUpstream(), "model", t.GetModel())
		if d != nil {
			wake(s.notifyWake)
		}
	}
}
