package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

func text(role parleyv1.Role, s string) *parleyv1.Message {
	return &parleyv1.Message{Role: role, Parts: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: s}}}}}
}

// chain builds n responses, each continuing the one before: the input of
// response i is the whole conversation so far plus a new user turn; the
// first user turn carries an image of 200 KB.
func chain(n int, created time.Time) []*parleyv1.StoredResponse {
	image := &parleyv1.Message{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{
		{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{MimeType: "image/png", Source: &parleyv1.Media_Data{Data: bytes.Repeat([]byte{7}, 200<<10)}}}},
		{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "what is this?"}}},
	}}
	var out []*parleyv1.StoredResponse
	history := []*parleyv1.Message{image}
	prev := ""
	for i := range n {
		if i > 0 {
			history = append(history, text(parleyv1.Role_ROLE_USER, fmt.Sprintf("and then, %d?", i)))
		}
		id := "resp_" + string(rune('a'+i))
		answer := text(parleyv1.Role_ROLE_ASSISTANT, "answer "+id)
		r := &parleyv1.StoredResponse{
			Id: id, Owner: "alice", CreatedAt: timestamppb.New(created), PreviousResponseId: prev,
			Request:   &parleyv1.Request{Model: "m", Instructions: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "be brief " + id}}}}},
			Input:     append([]*parleyv1.Message(nil), history...),
			Response:  &parleyv1.Response{Id: id, Model: "m", Candidates: []*parleyv1.Candidate{{Parts: answer.GetParts(), FinishReason: parleyv1.FinishReason_FINISH_REASON_STOP}}},
			ExpiresAt: timestamppb.New(created.Add(time.Hour)),
		}
		out = append(out, r)
		history = append(history, translate.OutputTurn(r.GetResponse()))
		prev = id
	}
	return out
}

func TestSQLiteResponses(t *testing.T) {
	// SaveResponse copies the record field by field (to leave out the
	// conversation): a new field must be copied there, and set below.
	if n := (&parleyv1.StoredResponse{}).ProtoReflect().Descriptor().Fields().Len(); n != 8 {
		t.Fatalf("StoredResponse has %d fields: keep the new ones in SaveResponse and in this test's chain", n)
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	s := open(t, path)
	now := time.Unix(1800000000, 0)
	rs := chain(5, now)
	for _, r := range rs {
		if err := s.SaveResponse(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveResponse(ctx, rs[0]); !errors.Is(err, store.ErrExists) {
		t.Errorf("saving an id twice: %v", err)
	}
	// Every turn once: 1 image turn + 4 user turns + 5 answers.
	var turns, imageBytes int
	if err := s.DB().QueryRow(`SELECT count(*), coalesce(sum(length(body)), 0) FROM turns`).Scan(&turns, &imageBytes); err != nil {
		t.Fatal(err)
	}
	if turns != 10 || imageBytes > 210<<10 {
		t.Errorf("%d turns of %d bytes stored, want 10 turns holding the 200 KB image once", turns, imageBytes)
	}
	// Each response lists only the turns after those of the response it
	// continues: 2 each, not 2+4+6+8+10.
	if refs := count(t, s, `SELECT count(*) FROM response_turns`); refs != 10 {
		t.Errorf("%d turn references for 5 chained responses, want 10", refs)
	}

	// Reopened, every response reads back as saved.
	_ = s.Close()
	s = open(t, path)
	for _, r := range rs {
		got, err := s.Response(ctx, r.GetId(), now)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(r, got) {
			t.Errorf("%s read back differently (-saved +read):\n%s", r.GetId(), cmp.Diff(r, got, protocmp.Transform()))
		}
	}
	if _, err := s.Response(ctx, "resp_zz", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := s.Response(ctx, rs[0].GetId(), now.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an expired response is still read: %v", err)
	}

	// Deleting the last response keeps the turns the others share.
	if err := s.DeleteResponse(ctx, rs[4].GetId()); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteResponse(ctx, rs[4].GetId()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	if _, err := s.Response(ctx, rs[3].GetId(), now); err != nil {
		t.Errorf("a response before the deleted one: %v", err)
	}
	if err := s.DB().QueryRow(`SELECT count(*) FROM turns`).Scan(&turns); err != nil || turns != 8 {
		t.Errorf("%d turns left after deleting the last response, want 8 (its last question and its answer gone) (%v)", turns, err)
	}

	// The sweep removes what expired, and every turn with it.
	later := chain(1, now.Add(2*time.Hour))[0]
	later.Id = "resp_later"
	if err := s.SaveResponse(ctx, later); err != nil {
		t.Fatal(err)
	}
	n, err := s.SweepResponses(ctx, now.Add(time.Hour))
	if err != nil || n != 4 {
		t.Fatalf("swept %d (%v), want the 4 expired", n, err)
	}
	if err := s.DB().QueryRow(`SELECT count(*) FROM turns`).Scan(&turns); err != nil || turns != 2 {
		t.Errorf("%d turns left, want the 2 of the response that has not expired (%v)", turns, err)
	}
	if _, err := s.Response(ctx, "resp_later", now.Add(time.Hour)); err != nil {
		t.Errorf("the unexpired response: %v", err)
	}
}

func count(t *testing.T, s *store.SQLite, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A response that later ones continue can be deleted or expire: it is not
// readable any more, the later ones still read whole, and its turns go
// with the last response that needs them.
func TestSQLiteResponseBases(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "parley.db"))
	now := time.Unix(1800000000, 0)
	rs := chain(6, now)
	for i, r := range rs {
		r.ExpiresAt = timestamppb.New(now.Add(time.Duration(i+1) * time.Hour)) // the first goes first
		if err := s.SaveResponse(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	whole := func(i int, at time.Time) {
		t.Helper()
		got, err := s.Response(ctx, rs[i].GetId(), at)
		if err != nil {
			t.Fatalf("%s: %v", rs[i].GetId(), err)
		}
		if !proto.Equal(rs[i], got) {
			t.Errorf("%s read back differently (-saved +read):\n%s", rs[i].GetId(), cmp.Diff(rs[i], got, protocmp.Transform()))
		}
	}

	// Deleting the third hides it; the fourth still holds its turns.
	if err := s.DeleteResponse(ctx, rs[2].GetId()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Response(ctx, rs[2].GetId(), now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted response is read: %v", err)
	}
	if err := s.DeleteResponse(ctx, rs[2].GetId()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting it twice: %v", err)
	}
	whole(3, now)
	whole(5, now)

	// A later response may still be based on the hidden one (a client
	// that read it before it went); a conversation that does not start
	// with the previous response's turns lists all of its own.
	branch := chain(4, now)[3]
	branch.Id, branch.PreviousResponseId = "resp_branch", rs[2].GetId()
	if err := s.SaveResponse(ctx, branch); err != nil {
		t.Fatal(err)
	}
	other := proto.CloneOf(rs[1])
	other.Id, other.PreviousResponseId = "resp_other", rs[3].GetId()
	if err := s.SaveResponse(ctx, other); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, `SELECT count(*) FROM response_turns WHERE response_id = 'resp_other'`); n != len(other.GetInput())+1 {
		t.Errorf("a response that does not continue its previous one lists %d turns, want all %d", n, len(other.GetInput())+1)
	}
	for _, id := range []string{"resp_branch", "resp_other"} {
		if _, err := s.Response(ctx, id, now); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if err := s.DeleteResponse(ctx, "resp_branch"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteResponse(ctx, "resp_other"); err != nil {
		t.Fatal(err)
	}

	// The first two expire; the sweep keeps them, hidden, for the rest.
	later := now.Add(2*time.Hour + time.Minute)
	if n, err := s.SweepResponses(ctx, later); err != nil || n != 0 {
		t.Fatalf("swept %d (%v), want none: every hidden response is a base", n, err)
	}
	for _, i := range []int{0, 1} {
		if _, err := s.Response(ctx, rs[i].GetId(), later); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired %s: %v", rs[i].GetId(), err)
		}
	}
	whole(5, later)

	// Deleting the last three leaves nothing needed: everything goes,
	// at once or at the next sweep.
	for _, i := range []int{5, 4, 3} {
		if err := s.DeleteResponse(ctx, rs[i].GetId()); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.SweepResponses(ctx, later); err != nil || n != 0 {
		t.Errorf("swept %d (%v), want 0: a deletion drops the hidden bases it alone held", n, err)
	}
	for table, want := range map[string]int{"responses": 0, "response_turns": 0, "turns": 0} {
		if n := count(t, s, `SELECT count(*) FROM `+table); n != want {
			t.Errorf("%d rows left in %s, want %d", n, table, want)
		}
	}
}

// A sweep larger than one transaction's share goes on until everything
// expired is gone, chains included.
func TestSQLiteSweepInBatches(t *testing.T) {
	defer store.SetSweepBatch(3)()
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "parley.db"))
	now := time.Unix(1800000000, 0)
	for i := range 4 {
		for j, r := range chain(3, now) {
			r.Id = fmt.Sprintf("resp_%d_%d", i, j)
			if j > 0 {
				r.PreviousResponseId = fmt.Sprintf("resp_%d_%d", i, j-1)
			}
			r.Response.Id = r.Id
			if err := s.SaveResponse(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := count(t, s, `SELECT count(*) FROM responses WHERE base IS NOT NULL`); n != 8 {
		t.Fatalf("%d responses continue another, want 8", n)
	}
	n, err := s.SweepResponses(ctx, now.Add(time.Hour))
	if err != nil || n != 12 {
		t.Fatalf("swept %d (%v), want all 12", n, err)
	}
	for _, table := range []string{"responses", "response_turns", "turns"} {
		if n := count(t, s, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%d rows left in %s", n, table)
		}
	}
}
