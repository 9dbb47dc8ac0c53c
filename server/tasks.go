package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/govern"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tasks"
	"github.com/parleyhq/parley/translate"
)

// taskOp is one operation of a task dialect: it gets the caller and the
// request, and returns the body of a successful reply.
type taskOp func(ctx context.Context, c translate.TaskClient, p *principal, r *http.Request, body []byte) ([]byte, error)

// taskRoutes registers the endpoints of every task dialect.
func (s *Server) taskRoutes(ds translate.Dialects) {
	for _, d := range ds.Tasks() {
		if d.TaskClient == nil {
			continue
		}
		label := d.Name()
		for _, rt := range d.Routes {
			var op taskOp
			switch rt.Op {
			case translate.OpSubmitTask:
				op = s.submitTask(rt.Pattern, label)
			case translate.OpQueryTasks:
				op = s.queryTasks
			case translate.OpGetTask:
				op = s.getTask
			default:
				continue
			}
			s.mux.Handle(rt.Pattern, s.taskEndpoint(d.TaskClient, label, op))
		}
	}
}

// submitTask submits a task of the kind the endpoint takes.
func (s *Server) submitTask(pattern, label string) taskOp {
	return func(ctx context.Context, c translate.TaskClient, p *principal, _ *http.Request, body []byte) ([]byte, error) {
		sub, err := c.DecodeSubmission(pattern, body, s.tasks.ModelVersions())
		if err != nil {
			return nil, err
		}
		t, err := s.governTask(ctx, p, label, sub.Input, func() (*parleyv1.Task, error) {
			return s.tasks.Submit(ctx, p.name, sub.Input, sub.NotifyHook)
		})
		if err != nil {
			return nil, err
		}
		return c.EncodeSubmitted(t.GetId())
	}
}

// queryTasks answers a query for several tasks.
func (s *Server) queryTasks(ctx context.Context, c translate.TaskClient, p *principal, _ *http.Request, body []byte) ([]byte, error) {
	ids, action, err := c.DecodeQuery(body)
	if err != nil {
		return nil, err
	}
	ts, err := s.tasks.List(ctx, p.name, ids, action)
	if err != nil {
		return nil, err
	}
	return c.EncodeTasks(ts)
}

// getTask answers for the task the path names.
func (s *Server) getTask(ctx context.Context, c translate.TaskClient, p *principal, r *http.Request, _ []byte) ([]byte, error) {
	t, err := s.tasks.Get(ctx, p.name, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return c.EncodeTask(t)
}

// taskEndpoint serves one operation: key, body within the size limit, the
// operation, and its reply, or the dialect's error with its status (and
// Retry-After when the task service advised one).
func (s *Server) taskEndpoint(c translate.TaskClient, label string, op taskOp) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start, id := time.Now(), store.NewRequestID()
		w.Header().Set("X-Request-Id", id)
		status, owner, err := http.StatusOK, "", error(nil)
		defer func() {
			s.metrics.requests.WithLabelValues(label, "", "", strconv.Itoa(status)).Inc()
			s.metrics.duration.WithLabelValues(label, "", "").Observe(time.Since(start).Seconds())
			attrs := []any{"dialect", label, "method", r.Method, "path", r.URL.Path, "status", status, "key", owner, "duration", time.Since(start), "request_id", id}
			if err != nil {
				attrs = append(attrs, "error", err.Error())
			}
			s.log.Info("request", attrs...)
		}()
		var body []byte
		body, err = s.taskServe(c, op, w, r, &owner)
		if err != nil {
			status = s.taskFail(c, w, id, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

func (s *Server) taskServe(c translate.TaskClient, op taskOp, w http.ResponseWriter, r *http.Request, owner *string) ([]byte, error) {
	st := s.state()
	p, err := st.keys.authenticate(c.APIKey(&translate.Incoming{Header: r.Header, Query: r.URL.Query()}))
	if err != nil {
		return nil, err
	}
	*owner = p.name
	if s.tasks == nil {
		return nil, &translate.StatusError{Err: &parleyv1.Error{
			Code: parleyv1.Code_CODE_UNAVAILABLE, Reason: translate.ReasonUpstreamUnavailable, Message: "music tasks are not enabled on this server",
		}}
	}
	var body []byte
	if r.Method == http.MethodPost {
		if body, err = st.readBody(w, r); err != nil {
			return nil, err
		}
		// Held, like a chat body, while the task request is served.
		n := int64(len(body))
		if err := s.bodies.take(n); err != nil {
			return nil, err
		}
		defer s.bodies.give(n)
	}
	return op(r.Context(), c, p, r, body)
}

// taskFail writes the dialect's error and returns its status.
func (s *Server) taskFail(c translate.TaskClient, w http.ResponseWriter, id string, err error) int {
	e := translate.ToProto(err)
	if e.GetCode() == parleyv1.Code_CODE_INTERNAL {
		s.log.Error("task request failed", "request_id", id, "error", err)
	}
	if errors.Is(err, context.Canceled) {
		e = &parleyv1.Error{Code: parleyv1.Code_CODE_CANCELED, Message: "the request was canceled"}
	}
	status, body := c.EncodeError(e)
	setRetryAfter(w.Header(), e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}

// governTask submits a task within its key's limits (requests per minute
// and in flight; a task has no tokens) and writes its ledger line, whose
// operation names the task's action ("submit_music").
func (s *Server) governTask(ctx context.Context, p *principal, dialect string, in *parleyv1.TaskInput, submit func() (*parleyv1.Task, error)) (*parleyv1.Task, error) {
	key := p.key
	if key == nil {
		key = &govern.Key{Name: p.name}
	}
	start, id := time.Now(), store.NewRequestID()
	ticket, _, err := s.gov.Admit(context.WithoutCancel(ctx), key, id, nil)
	var t *parleyv1.Task
	if err == nil {
		t, err = submit()
	}
	op := "submit"
	if a := tasks.ActionOf(in); a != parleyv1.TaskAction_TASK_ACTION_UNSPECIFIED {
		op += "_" + strings.ToLower(strings.TrimPrefix(a.String(), "TASK_ACTION_"))
	}
	end := govern.End{RequestID: id, Operation: op, Dialect: dialect, Status: govern.StatusOf(translate.ToProto(err)),
		Start: start, Duration: time.Since(start)}
	if err == nil {
		end.Status = http.StatusOK
		end.RequestID = t.GetId()
	}
	ticket.Settle(end)
	return t, err
}
