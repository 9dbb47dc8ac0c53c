package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/responses"
)

// The responses dialect is stateful: store defaults to true, and a request
// may continue a stored response by previous_response_id. Parley keeps
// the responses itself, whatever upstream served them, and always rebuilds
// the conversation: the earlier input and output turns (reasoning with its
// signatures, tool calls and their results) go before the request's own
// input, and the upstream, of any dialect, gets the whole conversation.
// previous_response_id never reaches an upstream, so a response stored by
// Parley continues on any route, fallbacks included, and the ids a client
// sees are always Parley's own (resp_ and 48 hex digits) for stored
// responses. Instructions are not carried over, as the dialect says.

// keeper follows one responses-dialect request: the chain it continues,
// the id it will be shown under, and what is saved once it has ended.
type keeper struct {
	s       *Server
	owner   string
	id      string // empty when the response is not stored
	prevID  string
	created time.Time
	// req is the request as decoded, whose settings are kept; input is
	// its whole conversation before any truncation.
	req   *parleyv1.Request
	input []*parleyv1.Message
	acc   *translate.Accumulator
}

// errorWithCode is a responses-dialect error with the real service's code
// and param.
func errorWithCode(code parleyv1.Code, param, wireCode, format string, args ...any) error {
	e := &parleyv1.Error{
		Code:       code,
		Message:    fmt.Sprintf(format, args...),
		Origin:     &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_RESPONSES},
		Extensions: &parleyv1.Extensions{Dialect: parleyv1.Dialect_DIALECT_RESPONSES, Fields: map[string]string{"code": strconv.Quote(wireCode)}},
	}
	if param != "" {
		e.FieldViolations = []*parleyv1.FieldViolation{{Field: param, Description: e.GetMessage()}}
	}
	return &translate.StatusError{Err: e}
}

// storedResponse reads a response of owner; another key's response, an
// expired one and an unknown id are all unknown.
func (s *Server) storedResponse(ctx context.Context, owner, id, param string) (*parleyv1.StoredResponse, error) {
	notFound := func() error {
		if param == "previous_response_id" {
			return errorWithCode(parleyv1.Code_CODE_NOT_FOUND, param, "previous_response_not_found", "Previous response with id '%s' not found.", id)
		}
		return errorWithCode(parleyv1.Code_CODE_NOT_FOUND, param, "not_found", "Response with id '%s' not found.", id)
	}
	if s.responses == nil {
		return nil, notFound()
	}
	r, err := s.responses.Response(ctx, id, time.Now())
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && r.GetOwner() != owner):
		return nil, notFound()
	case err != nil:
		s.log.Error("a stored response could not be read", "id", id, "error", err)
		return nil, translate.Status(parleyv1.Code_CODE_INTERNAL, "the stored response could not be read")
	}
	return r, nil
}

// keepFor prepares a responses-dialect request: it rebuilds the chain the
// request continues, applies truncation against the model's configured
// context window, and decides the id of a stored response.
func (s *Server) keepFor(ctx context.Context, p *principal, req *parleyv1.Request) (*keeper, error) {
	k := &keeper{s: s, owner: p.name, created: time.Now(), req: req}
	if id := req.GetPreviousResponseId(); id != "" {
		prev, err := s.storedResponse(ctx, p.name, id, "previous_response_id")
		if err != nil {
			return nil, err
		}
		history := prev.GetInput()
		if out := store.OutputTurn(prev.GetResponse()); out != nil {
			history = append(history, out)
		}
		req.Messages = append(history, req.GetMessages()...)
		k.prevID = id
		// Rebuilt here: no upstream is asked to resolve it.
		req.PreviousResponseId = ""
	}
	k.input = req.GetMessages()
	if err := s.truncate(req); err != nil {
		return nil, err
	}
	if s.responses != nil && (req.Store == nil || req.GetStore()) {
		req.Store = proto.Bool(true)
		var b [24]byte
		_, _ = rand.Read(b[:])
		k.id = "resp_" + hex.EncodeToString(b[:])
	}
	return k, nil
}

// truncate fits a request into its model's configured context window (by
// dispatch.Estimate's count): truncation auto drops whole turns from the
// middle, keeping the first and as many of the latest as fit, and never a
// tool result without its call; otherwise, the request fails with the
// service's context_length_exceeded.
func (s *Server) truncate(req *parleyv1.Request) error {
	window := s.d.Router().ContextWindow(req.GetModel())
	if window <= 0 {
		return nil
	}
	total := dispatch.Estimate(req)
	if total <= window {
		return nil
	}
	tooLong := func() error {
		return errorWithCode(parleyv1.Code_CODE_INVALID_ARGUMENT, "input", "context_length_exceeded",
			"Your input exceeds the context window of this model (%d tokens, about %d given). Please adjust your input and try again.", window, total)
	}
	msgs := req.GetMessages()
	if req.GetTruncation() != parleyv1.Truncation_TRUNCATION_AUTO || len(msgs) < 3 {
		return tooLong()
	}
	cost := func(m *parleyv1.Message) int64 {
		return dispatch.Estimate(&parleyv1.Request{Messages: []*parleyv1.Message{m}})
	}
	// Drop from the second turn on until the rest fits.
	n := total
	cut := 1
	for cut < len(msgs)-1 && n > window {
		n -= cost(msgs[cut])
		cut++
	}
	// A kept turn must not answer a call that was dropped.
	for cut < len(msgs)-1 && hasResults(msgs[cut]) {
		n -= cost(msgs[cut])
		cut++
	}
	if n > window {
		return tooLong()
	}
	req.Messages = append([]*parleyv1.Message{msgs[0]}, msgs[cut:]...)
	return nil
}

func hasResults(m *parleyv1.Message) bool {
	for _, p := range m.GetParts() {
		if p.GetToolResult() != nil {
			return true
		}
	}
	return false
}

// shown sets on a response what the client is shown: the stored id, the
// chain it continued, and its creation time.
func (k *keeper) shown(r *parleyv1.Response) {
	if r == nil {
		return
	}
	if k.id != "" {
		r.Id = k.id
	}
	if k.prevID != "" {
		r.PreviousResponseId = k.prevID
	}
	if r.GetCreatedAt() == nil {
		r.CreatedAt = timestamppb.New(k.created)
	}
}

// whole finishes a whole reply: it shows the stored id and saves the
// response before the reply goes out.
func (k *keeper) whole(ctx context.Context, resp *parleyv1.Response) {
	k.shown(resp)
	k.save(ctx, resp)
}

// event follows a stream: the start shows the stored id; at the end (the
// done event, before it is sent) the accumulated response is saved, so
// that it can be read the moment the stream has ended.
func (k *keeper) event(ctx context.Context, ev *parleyv1.StreamEvent) {
	if st := ev.GetStart(); st != nil {
		if st.Response == nil {
			st.Response = &parleyv1.Response{}
		}
		k.shown(st.GetResponse())
	}
	if k.id == "" {
		return
	}
	if k.acc == nil {
		k.acc = translate.NewAccumulator()
	}
	if err := k.acc.Add(ev); err != nil {
		// The stream encoder reports the broken order to the client.
		k.id = ""
		return
	}
	if ev.GetDone() != nil {
		k.save(ctx, k.acc.Response())
	}
}

// save stores the response when it is to be stored. A failure is logged:
// the client still gets its answer, and a later request continuing it
// gets the unknown-id error.
func (k *keeper) save(ctx context.Context, resp *parleyv1.Response) {
	if k.id == "" {
		return
	}
	msgs := k.req.Messages
	k.req.Messages = nil
	settings := proto.CloneOf(k.req)
	k.req.Messages = msgs
	settings.PreviousResponseId = k.prevID
	settings.Stream = false
	rec := &parleyv1.StoredResponse{
		Id: k.id, Owner: k.owner, CreatedAt: timestamppb.New(k.created), PreviousResponseId: k.prevID,
		Request: settings, Input: k.input, Response: resp,
		ExpiresAt: timestamppb.New(k.created.Add(k.s.cfg.Responses.Retention.D())),
	}
	if err := k.s.responses.SaveResponse(context.WithoutCancel(ctx), rec); err != nil {
		k.s.log.Error("a response could not be stored", "id", k.id, "error", err)
	}
}

// SweepResponses deletes expired stored responses now and every sweep
// interval until ctx ends.
func (s *Server) SweepResponses(ctx context.Context) {
	if s.responses == nil {
		return
	}
	t := time.NewTicker(s.cfg.Responses.SweepInterval.D())
	defer t.Stop()
	for {
		if n, err := s.responses.SweepResponses(ctx, time.Now()); err != nil && ctx.Err() == nil {
			s.log.Error("expired responses could not be deleted", "error", err)
		} else if n > 0 {
			s.log.Info("expired responses deleted", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// deleteStored deletes a response of owner.
func (s *Server) deleteStored(ctx context.Context, owner, id, param string) error {
	if _, err := s.storedResponse(ctx, owner, id, param); err != nil {
		return err
	}
	if err := s.responses.DeleteResponse(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("a stored response could not be deleted", "id", id, "error", err)
		return translate.Status(parleyv1.Code_CODE_INTERNAL, "the response could not be deleted")
	}
	return nil
}

// getResponse serves GET /v1/responses/{id}: the response as it was
// returned, with the settings of its request.
func (s *Server) getResponse(c translate.Client) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x, p := s.keyedExchange(w, r, c)
		if p == nil {
			return
		}
		rec, err := s.storedResponse(r.Context(), p.name, r.PathValue("id"), "")
		if err != nil {
			x.fail(err)
			return
		}
		x.call.Model = rec.GetRequest().GetModel()
		body, err := c.EncodeResponse(rec.GetRequest(), rec.GetResponse())
		if err != nil {
			x.fail(err)
			return
		}
		x.ok(body)
	})
}

// deleteResponse serves DELETE /v1/responses/{id}.
func (s *Server) deleteResponse(c translate.Client) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x, p := s.keyedExchange(w, r, c)
		if p == nil {
			return
		}
		id := r.PathValue("id")
		if err := s.deleteStored(r.Context(), p.name, id, ""); err != nil {
			x.fail(err)
			return
		}
		body, err := responses.EncodeDeleted(id)
		if err != nil {
			x.fail(err)
			return
		}
		x.ok(body)
	})
}

// inputItems serves GET /v1/responses/{id}/input_items: the whole input
// of a response (its rebuilt conversation and its own input), paged with
// the service's parameters: limit (1 to 100, default 20), order (asc or
// desc, default desc), after and before (item ids).
func (s *Server) inputItems(c translate.Client) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x, p := s.keyedExchange(w, r, c)
		if p == nil {
			return
		}
		q := r.URL.Query()
		limit := 20
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100 {
				x.fail(translate.Invalid("limit", "must be an integer from 1 to 100; got %q", v))
				return
			}
			limit = n
		}
		order := q.Get("order")
		switch order {
		case "":
			order = "desc"
		case "asc", "desc":
		default:
			x.fail(translate.Invalid("order", "must be asc or desc; got %q", order))
			return
		}
		rec, err := s.storedResponse(r.Context(), p.name, r.PathValue("id"), "")
		if err != nil {
			x.fail(err)
			return
		}
		items, err := responses.InputItems(rec.GetInput(), rec.GetId())
		if err != nil {
			x.fail(err)
			return
		}
		if order == "desc" {
			slices.Reverse(items)
		}
		for _, cursor := range []string{"after", "before"} {
			id := q.Get(cursor)
			if id == "" {
				continue
			}
			i := slices.IndexFunc(items, func(it responses.Item) bool { return it.ID == id })
			if i < 0 {
				x.fail(translate.Invalid(cursor, "no input item of this response has the id %q", id))
				return
			}
			if cursor == "after" {
				items = items[i+1:]
			} else {
				items = items[:i]
			}
		}
		more := len(items) > limit
		if more {
			if q.Get("before") != "" && q.Get("after") == "" {
				// Paging backwards: the page ends at the cursor.
				items = items[len(items)-limit:]
			} else {
				items = items[:limit]
			}
		}
		body, err := responses.EncodeItemList(items, more)
		if err != nil {
			x.fail(err)
			return
		}
		x.ok(body)
	})
}
