package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/songgen"
)

// songgenOp is one operation of the music task interface: it gets the
// caller and the request, and returns the data of a successful envelope.
type songgenOp func(ctx context.Context, p *principal, r *http.Request, body []byte) (any, error)

// songgenRoutes registers the six operations under /songgen.
func (s *Server) songgenRoutes() {
	submit := func(decode func([]byte) (*songgen.Submission, error)) songgenOp {
		return func(ctx context.Context, p *principal, _ *http.Request, body []byte) (any, error) {
			sub, err := decode(body)
			if err != nil {
				return nil, err
			}
			t, err := s.tasks.Submit(ctx, p.name, sub.Input, sub.NotifyHook)
			if err != nil {
				return nil, err
			}
			return t.GetId(), nil
		}
	}
	s.mux.Handle("POST "+songgen.PathMusic, s.songgen(submit(func(b []byte) (*songgen.Submission, error) {
		return songgen.DecodeMusic(b, s.tasks.ModelVersions())
	})))
	s.mux.Handle("POST "+songgen.PathLyrics, s.songgen(submit(songgen.DecodeLyrics)))
	s.mux.Handle("POST "+songgen.PathUpload, s.songgen(submit(songgen.DecodeUpload)))
	s.mux.Handle("POST "+songgen.PathConcat, s.songgen(submit(songgen.DecodeConcat)))
	s.mux.Handle("POST "+songgen.PathFetch, s.songgen(func(ctx context.Context, p *principal, _ *http.Request, body []byte) (any, error) {
		f, err := songgen.DecodeFetch(body)
		if err != nil {
			return nil, err
		}
		ts, err := s.tasks.List(ctx, p.name, f.IDs, f.Action)
		if err != nil {
			return nil, err
		}
		out := make([]*songgen.Task, 0, len(ts))
		for _, t := range ts {
			out = append(out, songgen.WireTask(t))
		}
		return out, nil
	}))
	s.mux.Handle("GET "+songgen.PathFetch+"/{task_id}", s.songgen(func(ctx context.Context, p *principal, r *http.Request, _ []byte) (any, error) {
		t, err := s.tasks.Get(ctx, p.name, r.PathValue("task_id"))
		if err != nil {
			return nil, err
		}
		return songgen.WireTask(t), nil
	}))
}

// songgen serves one operation: key (Authorization: Bearer), body within
// the size limit, the operation, and the envelope, or the error envelope
// with its status (and Retry-After when the music service advised one).
func (s *Server) songgen(op songgenOp) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start, id := time.Now(), newRequestID()
		w.Header().Set("X-Request-Id", id)
		status, owner, err := http.StatusOK, "", error(nil)
		defer func() {
			s.metrics.requests.WithLabelValues("songgen", "", "", strconv.Itoa(status)).Inc()
			s.metrics.duration.WithLabelValues("songgen", "", "").Observe(time.Since(start).Seconds())
			attrs := []any{"dialect", "songgen", "method", r.Method, "path", r.URL.Path, "status", status, "key", owner, "duration", time.Since(start), "request_id", id}
			if err != nil {
				attrs = append(attrs, "error", err.Error())
			}
			s.log.Info("request", attrs...)
		}()
		data, err := s.songgenServe(op, w, r, &owner)
		if err != nil {
			status = s.songgenFail(w, id, err)
			return
		}
		body, err := songgen.Success(data)
		if err != nil {
			status = s.songgenFail(w, id, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

func (s *Server) songgenServe(op songgenOp, w http.ResponseWriter, r *http.Request, owner *string) (any, error) {
	p, err := s.keys.authenticate(bearer(r.Header.Get("Authorization")))
	if err != nil {
		return nil, err
	}
	*owner = p.name
	if s.tasks == nil {
		return nil, &translate.StatusError{Err: &parleyv1.Error{
			Code: parleyv1.Code_CODE_UNAVAILABLE, Reason: songgen.CodeUpstreamUnavailable, Message: "music tasks are not enabled on this server",
		}}
	}
	var body []byte
	if r.Method == http.MethodPost {
		if body, err = s.readBody(w, r); err != nil {
			return nil, err
		}
	}
	return op(r.Context(), p, r, body)
}

// songgenFail writes an error envelope and returns its status.
func (s *Server) songgenFail(w http.ResponseWriter, id string, err error) int {
	e := translate.ToProto(err)
	if e.GetCode() == parleyv1.Code_CODE_INTERNAL {
		s.log.Error("songgen request failed", "request_id", id, "error", err)
	}
	if errors.Is(err, context.Canceled) {
		e = &parleyv1.Error{Code: parleyv1.Code_CODE_CANCELED, Message: "the request was canceled"}
	}
	status, body := songgen.EncodeError(e)
	setRetryAfter(w.Header(), e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}

// bearer is the token of an Authorization: Bearer header.
func bearer(h string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
