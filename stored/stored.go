// Package stored keeps the responses of stateful dialects and continues
// them, whatever upstream served them. A dialect is stateful when its
// client implements translate.StoredClient (the responses dialect is):
// its clients expect a response to be kept (store defaults to true), to be
// continued by id (previous_response_id), read back and deleted.
//
// The rules are Parley's, the same for every stateful dialect:
//
//   - Parley always rebuilds the conversation: the earlier input and output
//     turns (reasoning with its signatures, tool calls and their results)
//     go before the request's own input, and the upstream, of any dialect,
//     gets the whole conversation. The id of the response continued never
//     reaches an upstream, so a stored response continues on any route,
//     fallbacks included. Instructions are not carried over, as the
//     responses dialect says.
//   - A stored response is shown under Parley's own id (resp_ and 48 hex
//     digits), belongs to the client key that made it, and is saved before
//     its reply (or its stream's last event) goes out, so that it can be
//     read at once. Another key's response, an expired one and an unknown
//     id are all unknown, with the dialect's not-found error.
//   - Truncation works against the model's configured context window, by
//     translate.Estimate's count: "auto" drops whole turns from the middle,
//     keeping the first and as many of the latest as fit, and never a tool
//     result without its call; otherwise the request fails with the
//     dialect's context-too-long error.
//   - A response is deleted after the retention period by a sweep.
//
// What the dialect owns is how all this reads on its wire: its errors, the
// deletion reply, and the paging of a response's input items.
package stored

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// Options configure a Service.
type Options struct {
	// Store keeps the responses; nil keeps none, and every id is then
	// unknown.
	Store store.Responses
	// Retention is how long a stored response is kept.
	Retention time.Duration
	// SweepInterval is how often expired responses are deleted.
	SweepInterval time.Duration
	// Window is a model's configured context window in tokens, 0 when
	// unknown; nil knows none.
	Window func(model string) int64
	// Logger receives store failures; nil discards.
	Logger *slog.Logger
}

// Service keeps and continues stored responses.
type Service struct {
	o   Options
	log *slog.Logger
}

// New returns a Service.
func New(o Options) *Service {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Window == nil {
		o.Window = func(string) int64 { return 0 }
	}
	return &Service{o: o, log: log}
}

// Get reads a response of owner. field names where the id came from, for
// the error ("" for a path).
func (s *Service) Get(ctx context.Context, c translate.StoredClient, owner, id, field string) (*parleyv1.StoredResponse, error) {
	return s.read(ctx, c, owner, id, field, false)
}

func (s *Service) read(ctx context.Context, c translate.StoredClient, owner, id, field string, continued bool) (*parleyv1.StoredResponse, error) {
	notFound := func() error {
		if c == nil {
			return translate.Status(parleyv1.Code_CODE_NOT_FOUND, "response %q not found", id)
		}
		return c.StoredNotFound(id, field, continued)
	}
	if s.o.Store == nil {
		return nil, notFound()
	}
	r, err := s.o.Store.Response(ctx, id, time.Now())
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && r.GetOwner() != owner):
		return nil, notFound()
	case err != nil:
		s.log.Error("a stored response could not be read", "id", id, "error", err)
		return nil, translate.Status(parleyv1.Code_CODE_INTERNAL, "the stored response could not be read")
	}
	return r, nil
}

// Delete deletes a response of owner; other responses of its conversation
// stay whole.
func (s *Service) Delete(ctx context.Context, c translate.StoredClient, owner, id, field string) error {
	if _, err := s.Get(ctx, c, owner, id, field); err != nil {
		return err
	}
	if err := s.o.Store.DeleteResponse(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("a stored response could not be deleted", "id", id, "error", err)
		return translate.Status(parleyv1.Code_CODE_INTERNAL, "the response could not be deleted")
	}
	return nil
}

// Sweep deletes expired responses now and every sweep interval until ctx
// ends.
func (s *Service) Sweep(ctx context.Context) {
	if s.o.Store == nil {
		return
	}
	t := time.NewTicker(s.o.SweepInterval)
	defer t.Stop()
	for {
		if n, err := s.o.Store.SweepResponses(ctx, time.Now()); err != nil && ctx.Err() == nil {
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

// Begin prepares a request of a stateful dialect: it rebuilds the
// conversation the request continues, truncates it to the model's context
// window, and decides the id the response will be stored and shown under.
// The Turn it returns follows the reply.
func (s *Service) Begin(ctx context.Context, c translate.StoredClient, owner string, req *parleyv1.Request) (*Turn, error) {
	t := &Turn{s: s, owner: owner, created: time.Now(), req: req}
	if id := req.GetPreviousResponseId(); id != "" {
		prev, err := s.read(ctx, c, owner, id, "", true)
		if err != nil {
			return nil, err
		}
		history := prev.GetInput()
		if out := translate.OutputTurn(prev.GetResponse()); out != nil {
			history = append(history, out)
		}
		req.Messages = append(history, req.GetMessages()...)
		t.prevID = id
		// Rebuilt here: no upstream is asked to resolve it.
		req.PreviousResponseId = ""
	}
	t.input = req.GetMessages()
	if err := s.truncate(c, req); err != nil {
		return nil, err
	}
	if s.o.Store != nil && (req.Store == nil || req.GetStore()) {
		req.Store = proto.Bool(true)
		var b [24]byte
		_, _ = rand.Read(b[:])
		t.id = "resp_" + hex.EncodeToString(b[:])
	}
	return t, nil
}

// truncate fits a request into its model's configured context window.
func (s *Service) truncate(c translate.StoredClient, req *parleyv1.Request) error {
	window := s.o.Window(req.GetModel())
	if window <= 0 {
		return nil
	}
	total := translate.Estimate(req)
	if total <= window {
		return nil
	}
	tooLong := func() error {
		if c == nil {
			return translate.Invalid("input", "exceeds the context window of this model (%d tokens, about %d given)", window, total)
		}
		return c.ContextTooLong(window, total)
	}
	msgs := req.GetMessages()
	if req.GetTruncation() != parleyv1.Truncation_TRUNCATION_AUTO || len(msgs) < 3 {
		return tooLong()
	}
	cost := func(m *parleyv1.Message) int64 {
		return translate.Estimate(&parleyv1.Request{Messages: []*parleyv1.Message{m}})
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

// Verbatim reports whether the request is as the client sent it: it
// continues nothing, was not truncated, and is not stored, so that it may
// go on to an upstream of its own dialect as it came.
func (t *Turn) Verbatim() bool {
	return t.id == "" && t.prevID == "" && len(t.input) == len(t.req.GetMessages())
}

func hasResults(m *parleyv1.Message) bool {
	for _, p := range m.GetParts() {
		if p.GetToolResult() != nil {
			return true
		}
	}
	return false
}

// Turn follows one request of a stateful dialect through its reply: the
// response it continues, the id it is shown under, and what is saved once
// the reply has ended.
type Turn struct {
	s       *Service
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

// LetGoOfRequest drops what the turn holds of its request once the reply
// has begun, when it saves nothing with the reply (a response not
// stored): after the start it only labels what the client is shown. It
// reports whether it did; a turn that saves its reply keeps the request to
// save with it.
func (t *Turn) LetGoOfRequest() bool {
	if t.id != "" {
		return false
	}
	t.req, t.input = nil, nil
	return true
}

// label sets on a response what the client is shown: the stored id, the
// response it continued, and its creation time.
func (t *Turn) label(r *parleyv1.Response) {
	if r == nil {
		return
	}
	if t.id != "" {
		r.Id = t.id
	}
	if t.prevID != "" {
		r.PreviousResponseId = t.prevID
	}
	if r.GetCreatedAt() == nil {
		r.CreatedAt = timestamppb.New(t.created)
	}
}

// Finish ends a whole reply: it labels the response and saves it before
// the reply goes out.
func (t *Turn) Finish(ctx context.Context, resp *parleyv1.Response) {
	t.label(resp)
	t.save(ctx, resp)
}

// Observe follows a stream: the start is labelled; at the end (the done
// event, before it is sent) the accumulated response is saved, so that it
// can be read the moment the stream has ended.
func (t *Turn) Observe(ctx context.Context, ev *parleyv1.StreamEvent) {
	if st := ev.GetStart(); st != nil {
		if st.Response == nil {
			st.Response = &parleyv1.Response{}
		}
		t.label(st.GetResponse())
	}
	if t.id == "" {
		return
	}
	if t.acc == nil {
		t.acc = translate.NewAccumulator()
	}
	if err := t.acc.Add(ev); err != nil {
		// The stream encoder reports the broken order to the client.
		t.id = ""
		return
	}
	if ev.GetDone() != nil {
		t.save(ctx, t.acc.Response())
	}
}

// save stores the response when it is to be stored. A failure is logged:
// the client still gets its answer, and a later request continuing it
// gets the unknown-id error.
func (t *Turn) save(ctx context.Context, resp *parleyv1.Response) {
	if t.id == "" {
		return
	}
	msgs := t.req.Messages
	t.req.Messages = nil
	settings := proto.CloneOf(t.req)
	t.req.Messages = msgs
	settings.PreviousResponseId = t.prevID
	settings.Stream = false
	rec := &parleyv1.StoredResponse{
		Id: t.id, Owner: t.owner, CreatedAt: timestamppb.New(t.created), PreviousResponseId: t.prevID,
		Request: settings, Input: t.input, Response: resp,
		ExpiresAt: timestamppb.New(t.created.Add(t.s.o.Retention)),
	}
	if err := t.s.o.Store.SaveResponse(context.WithoutCancel(ctx), rec); err != nil {
		t.s.log.Error("a response could not be stored", "id", t.id, "error", err)
	}
}
