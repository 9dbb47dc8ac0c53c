package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Responses stores the responses of the responses dialect. A chain of
// responses shares most of its conversation: each turn (a message of the
// input, or a response's output) is kept once, by its content, however
// many responses refer to it, so that an image sent in the first turn of a
// long conversation is stored once, not once per response.
//
// Every backend keeps the same shape. A response lists its turns by
// position. When it continues another response whose turns are the first
// of its own (as every rebuilt chain does), it names that response as its
// base and lists only the turns after them: saving the 21st turn of a
// conversation writes the two new turns, not all 42, and reading follows
// the bases back. A response that is deleted or has expired while a later
// one is based on it stays, hidden, until nothing is based on it. A turn's
// body is kept once per content (its SHA-256) and goes when no response
// lists it.
type Responses interface {
	// SaveResponse stores a response with its whole input; r.expires_at
	// says when it goes.
	SaveResponse(ctx context.Context, r *parleyv1.StoredResponse) error
	// Response returns a response that has not expired by now, or
	// ErrNotFound.
	Response(ctx context.Context, id string, now time.Time) (*parleyv1.StoredResponse, error)
	// DeleteResponse deletes a response, or returns ErrNotFound.
	DeleteResponse(ctx context.Context, id string) error
	// SweepResponses deletes the responses expired by now, and the turns
	// no response refers to any more; it returns how many responses went.
	// Replicas sweeping at once share the work: none drops a response
	// another has taken on.
	SweepResponses(ctx context.Context, now time.Time) (int, error)
}

// Split is a response as a backend writes it: the record (everything but
// the conversation) and the turns, each with its content hash.
type Split struct {
	Record []byte   // the StoredResponse without input and output
	Inputs int      // how many of the turns are the input
	Bodies [][]byte // the turns, input then output, deterministic
	Hashes [][]byte // the SHA-256 of each body
}

var deterministic = proto.MarshalOptions{Deterministic: true}

// SplitResponse splits a response for saving. Its turns are its input,
// then its output as an assistant turn (when it has one), built the way a
// later request's rebuilt history holds it, so that both share one row.
func SplitResponse(r *parleyv1.StoredResponse) (*Split, error) {
	turns := append([]*parleyv1.Message(nil), r.GetInput()...)
	if out := translate.OutputTurn(r.GetResponse()); out != nil {
		turns = append(turns, out)
	}
	s := &Split{Inputs: len(r.GetInput()), Bodies: make([][]byte, len(turns)), Hashes: make([][]byte, len(turns))}
	for i, t := range turns {
		b, err := deterministic.Marshal(t)
		if err != nil {
			return nil, err
		}
		h := sha256.Sum256(b)
		s.Bodies[i], s.Hashes[i] = b, h[:]
	}
	// The record keeps everything but the turns; only the response is
	// copied (to leave out its output), never the conversation.
	resp := proto.CloneOf(r.GetResponse())
	if cs := resp.GetCandidates(); len(cs) > 0 {
		cs[0].Parts = nil
	}
	rec := &parleyv1.StoredResponse{
		Id: r.GetId(), Owner: r.GetOwner(), CreatedAt: r.GetCreatedAt(), PreviousResponseId: r.GetPreviousResponseId(),
		Request: r.GetRequest(), Response: resp, ExpiresAt: r.GetExpiresAt(),
	}
	var err error
	if s.Record, err = proto.Marshal(rec); err != nil {
		return nil, err
	}
	return s, nil
}

// Turns collects a response's turns as a backend reads them back, in
// whatever order they come (a chain's turns come base by base), placed by
// position.
type Turns struct {
	id    string
	turns []*parleyv1.Message
	got   int
}

// NewTurns expects count turns of response id.
func NewTurns(id string, count int) *Turns {
	return &Turns{id: id, turns: make([]*parleyv1.Message, count)}
}

// Add places the turn at pos.
func (ts *Turns) Add(pos int, body []byte) error {
	if pos < 0 || pos >= len(ts.turns) || ts.turns[pos] != nil {
		return fmt.Errorf("store: response %s lists turn %d twice or out of its %d", ts.id, pos, len(ts.turns))
	}
	m := &parleyv1.Message{}
	if err := proto.Unmarshal(body, m); err != nil {
		return fmt.Errorf("store: a stored turn cannot be read: %w", err)
	}
	ts.turns[pos] = m
	ts.got++
	return nil
}

// Response joins the record and the turns into the response as saved.
func (ts *Turns) Response(record []byte, inputs int) (*parleyv1.StoredResponse, error) {
	r := &parleyv1.StoredResponse{}
	if err := proto.Unmarshal(record, r); err != nil {
		return nil, fmt.Errorf("store: a stored response cannot be read: %w", err)
	}
	count := len(ts.turns)
	if ts.got != count || count < inputs {
		return nil, fmt.Errorf("store: response %s has %d of its %d turns", ts.id, ts.got, count)
	}
	if count > inputs {
		// The last turn is the output of the first candidate.
		r.GetResponse().GetCandidates()[0].Parts = ts.turns[inputs].GetParts()
	}
	r.Input = ts.turns[:inputs]
	return r, nil
}

// DecodeTask reads a task's stored body.
func DecodeTask(body []byte) (*parleyv1.Task, error) {
	t := &parleyv1.Task{}
	if err := proto.Unmarshal(body, t); err != nil {
		return nil, fmt.Errorf("store: a stored task cannot be read: %w", err)
	}
	return t, nil
}

// DropChain drops a hidden response and then each hidden base it alone
// held, one at a time with drop (which removes one response when it is
// hidden and nothing is based on it, and returns its base); it returns how
// many went.
func DropChain(id string, drop func(id string) (base string, dropped bool, err error)) (int, error) {
	n := 0
	for id != "" {
		next, dropped, err := drop(id)
		if err != nil || !dropped {
			return n, err
		}
		n++
		id = next
	}
	return n, nil
}
