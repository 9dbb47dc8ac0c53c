package server

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// taskJSON is a music task as the console lists it: what was asked, where
// it stands, and its callback's delivery (the receiver's host only: a hook
// address may carry a token in its path or query).
type taskJSON struct {
	ID          string        `json:"id"`
	Owner       string        `json:"owner"`
	Action      string        `json:"action"`
	Status      string        `json:"status"`
	Progress    int32         `json:"progress"`
	SubmittedAt *time.Time    `json:"submitted_at,omitempty"`
	UpdatedAt   *time.Time    `json:"updated_at,omitempty"`
	FinishedAt  *time.Time    `json:"finished_at,omitempty"`
	FailReason  string        `json:"fail_reason,omitempty"`
	Upstream    string        `json:"upstream,omitempty"`
	Model       string        `json:"model,omitempty"`
	Callback    *callbackJSON `json:"callback"`
}

type callbackJSON struct {
	Host      string     `json:"host"`
	State     string     `json:"state"`
	Attempts  int        `json:"attempts"`
	NextAt    *time.Time `json:"next_at,omitempty"`
	LastError string     `json:"last_error,omitempty"`
}

type tasksReply struct {
	Data []taskJSON `json:"data"`
	// NextBefore pages back: the before of the next page, null at the
	// end.
	NextBefore *time.Time `json:"next_before"`
}

// enumName is an enum value's name without its prefix, lower case:
// TASK_STATUS_IN_PROGRESS is in_progress.
func enumName(name, prefix string) string {
	return strings.ToLower(strings.TrimPrefix(name, prefix))
}

var deliveryStates = map[store.DeliveryState]string{
	store.DeliveryPending: "pending", store.DeliveryDone: "done", store.DeliveryAbandoned: "abandoned",
}

// adminTasks lists the music tasks most recently updated, with their
// callbacks: GET /admin/v1/tasks?limit=50&before=<RFC 3339>.
func (s *Server) adminTasks(r *http.Request) (int, any, error) {
	if s.taskStore == nil {
		return 0, nil, translate.Status(parleyv1.Code_CODE_FAILED_PRECONDITION, "music tasks need a store")
	}
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return 0, nil, translate.Invalid("limit", "%q is not a number from 1 to 500", v)
		}
		limit = n
	}
	var before time.Time
	if v := q.Get("before"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return 0, nil, translate.Invalid("before", "%q is not an RFC 3339 time", v)
		}
		before = t
	}
	views, err := s.taskStore.RecentTasks(r.Context(), limit, before)
	if err != nil {
		return 0, nil, err
	}
	out := tasksReply{Data: make([]taskJSON, 0, len(views))}
	for _, v := range views {
		t := v.Task
		tj := taskJSON{
			ID: t.GetId(), Owner: t.GetOwner(), Action: enumName(t.GetAction().String(), "TASK_ACTION_"),
			Status: enumName(t.GetStatus().String(), "TASK_STATUS_"), Progress: t.GetProgress(),
			SubmittedAt: timeOf(t.GetSubmittedAt()), UpdatedAt: timeOf(t.GetUpdatedAt()), FinishedAt: timeOf(t.GetFinishedAt()),
			FailReason: t.GetFailReason(), Upstream: t.GetUpstream(), Model: t.GetModel(),
		}
		if d := v.Delivery; d != nil {
			cb := &callbackJSON{State: deliveryStates[d.State], Attempts: d.Attempts, LastError: d.LastError}
			if u, err := url.Parse(d.URL); err == nil {
				cb.Host = u.Host
			}
			if d.State == store.DeliveryPending && !d.NextAt.IsZero() {
				next := d.NextAt.UTC()
				cb.NextAt = &next
			}
			tj.Callback = cb
		}
		out.Data = append(out.Data, tj)
	}
	if len(views) == limit {
		out.NextBefore = timeOf(views[len(views)-1].Task.GetUpdatedAt())
	}
	return http.StatusOK, out, nil
}
