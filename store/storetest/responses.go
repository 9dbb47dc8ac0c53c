package storetest

import (
	"errors"
	"fmt"
	"sync"
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

func readsWhole(t *testing.T, s store.Store, want *parleyv1.StoredResponse, at time.Time) {
	t.Helper()
	got, err := s.Response(t.Context(), want.GetId(), at)
	if err != nil {
		t.Fatalf("%s: %v", want.GetId(), err)
	}
	if !proto.Equal(want, got) {
		t.Errorf("%s read back differently (-saved +read):\n%s", want.GetId(), cmp.Diff(want, got, protocmp.Transform()))
	}
}

func testResponses(t *testing.T, b Backend) {
	// SplitResponse copies the record field by field (to leave out the
	// conversation): a new field must be copied there, and set in Chain.
	if n := (&parleyv1.StoredResponse{}).ProtoReflect().Descriptor().Fields().Len(); n != 8 {
		t.Fatalf("StoredResponse has %d fields: keep the new ones in store.SplitResponse and in Chain", n)
	}
	ctx := t.Context()
	o := b.Open(t)
	s := o.Store
	now := time.Unix(1800000000, 0)
	rs := Chain("resp_", 5, now)
	for _, r := range rs {
		if err := s.SaveResponse(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveResponse(ctx, rs[0]); !errors.Is(err, store.ErrExists) {
		t.Errorf("saving an id twice: %v", err)
	}
	// Every turn once: 1 image turn + 4 user turns + 5 answers.
	turns := o.Count(t, `SELECT count(*) FROM turns`)
	imageBytes := o.Count(t, `SELECT coalesce(sum(length(body)), 0) FROM turns`)
	if turns != 10 || imageBytes > 210<<10 {
		t.Errorf("%d turns of %d bytes stored, want 10 turns holding the 200 KB image once", turns, imageBytes)
	}
	// Each response lists only the turns after those of the response it
	// continues: 2 each, not 2+4+6+8+10.
	if refs := o.Count(t, `SELECT count(*) FROM response_turns`); refs != 10 {
		t.Errorf("%d turn references for 5 chained responses, want 10", refs)
	}

	// Reopened, every response reads back as saved.
	s = o.Reopen(t)
	for _, r := range rs {
		readsWhole(t, s, r, now)
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
	if turns := o.Count(t, `SELECT count(*) FROM turns`); turns != 8 {
		t.Errorf("%d turns left after deleting the last response, want 8 (its last question and its answer gone)", turns)
	}

	// The sweep removes what expired, and every turn with it.
	later := Chain("resp_later_", 1, now.Add(2*time.Hour))[0]
	if err := s.SaveResponse(ctx, later); err != nil {
		t.Fatal(err)
	}
	n, err := s.SweepResponses(ctx, now.Add(time.Hour))
	if err != nil || n != 4 {
		t.Fatalf("swept %d (%v), want the 4 expired", n, err)
	}
	if turns := o.Count(t, `SELECT count(*) FROM turns`); turns != 2 {
		t.Errorf("%d turns left, want the 2 of the response that has not expired", turns)
	}
	readsWhole(t, s, later, now.Add(time.Hour))
}

// A response that later ones continue can be deleted or expire: it is not
// readable any more, the later ones still read whole, and its turns go
// with the last response that needs them.
func testResponseBases(t *testing.T, b Backend) {
	ctx := t.Context()
	o := b.Open(t)
	s := o.Store
	now := time.Unix(1800000000, 0)
	rs := Chain("resp_", 6, now)
	for i, r := range rs {
		r.ExpiresAt = timestamppb.New(now.Add(time.Duration(i+1) * time.Hour)) // the first goes first
		if err := s.SaveResponse(ctx, r); err != nil {
			t.Fatal(err)
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
	readsWhole(t, s, rs[3], now)
	readsWhole(t, s, rs[5], now)

	// A later response may still be based on the hidden one (a client
	// that read it before it went); a conversation that does not start
	// with the previous response's turns lists all of its own.
	branch := Chain("resp_", 4, now)[3]
	branch.Id, branch.PreviousResponseId = "resp_branch", rs[2].GetId()
	if err := s.SaveResponse(ctx, branch); err != nil {
		t.Fatal(err)
	}
	other := proto.CloneOf(rs[1])
	other.Id, other.PreviousResponseId = "resp_other", rs[3].GetId()
	if err := s.SaveResponse(ctx, other); err != nil {
		t.Fatal(err)
	}
	if n := o.Count(t, `SELECT count(*) FROM response_turns WHERE response_id = 'resp_other'`); n != len(other.GetInput())+1 {
		t.Errorf("a response that does not continue its previous one lists %d turns, want all %d", n, len(other.GetInput())+1)
	}
	readsWhole(t, s, branch, now)
	readsWhole(t, s, other, now)
	for _, id := range []string{"resp_branch", "resp_other"} {
		if err := s.DeleteResponse(ctx, id); err != nil {
			t.Fatal(err)
		}
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
	readsWhole(t, s, rs[5], later)

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
	emptied(t, o)
}

func emptied(t *testing.T, o Opened) {
	t.Helper()
	for _, table := range []string{"responses", "response_turns", "turns"} {
		if n := o.Count(t, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%d rows left in %s", n, table)
		}
	}
}

// chains saves k chains of n responses each, ids prefix<i>_<letter>.
func chains(t *testing.T, s store.Store, prefix string, k, n int, created time.Time) {
	t.Helper()
	for i := range k {
		for _, r := range Chain(fmt.Sprintf("%s%d_", prefix, i), n, created) {
			if err := s.SaveResponse(t.Context(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A sweep of more than one batch goes on until everything expired is
// gone, chains included.
func testSweepMany(t *testing.T, b Backend) {
	o := b.Open(t)
	now := time.Unix(1800000000, 0)
	chains(t, o.Store, "resp_", 300, 3, now)
	if n := o.Count(t, `SELECT count(*) FROM responses WHERE base IS NOT NULL`); n != 600 {
		t.Fatalf("%d responses continue another, want 600", n)
	}
	n, err := o.Store.SweepResponses(t.Context(), now.Add(time.Hour))
	if err != nil || n != 900 {
		t.Fatalf("swept %d (%v), want all 900", n, err)
	}
	emptied(t, o)
}

// Sweepers running at once (one per replica) drop every expired response
// exactly once between them.
func testSweepersShare(t *testing.T, b Backend) {
	o := b.Open(t)
	now := time.Unix(1800000000, 0)
	chains(t, o.Store, "resp_", 200, 2, now)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
	)
	for range 3 {
		wg.Go(func() {
			n, err := o.Store.SweepResponses(t.Context(), now.Add(time.Hour))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != 400 {
		t.Errorf("three sweepers dropped %d responses between them, want 400", total)
	}
	emptied(t, o)
}

// Two hundred turns saved at once, many of them continuing one shared
// opening, all read back whole.
func testSavesAtOnce(t *testing.T, b Backend) {
	o := b.Open(t)
	s := o.Store
	now := time.Unix(1800000000, 0)
	opening := Chain("resp_open_", 1, now)[0]
	if err := s.SaveResponse(t.Context(), opening); err != nil {
		t.Fatal(err)
	}
	const n = 200
	rs := make([]*parleyv1.StoredResponse, n)
	for i := range rs {
		r := proto.CloneOf(opening)
		r.Id = fmt.Sprintf("resp_%03d", i)
		r.PreviousResponseId = opening.GetId()
		r.Input = append(append([]*parleyv1.Message(nil), opening.GetInput()...), translate.OutputTurn(opening.GetResponse()),
			Text(parleyv1.Role_ROLE_USER, fmt.Sprintf("question %d", i%50))) // shared by four responses each
		r.Response = &parleyv1.Response{Id: r.Id, Model: "m", Candidates: []*parleyv1.Candidate{{Parts: Text(parleyv1.Role_ROLE_ASSISTANT, "ok").GetParts()}}}
		rs[i] = r
	}
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() {
			if err := s.SaveResponse(t.Context(), r); err != nil {
				t.Errorf("%s: %v", r.GetId(), err)
			}
		})
	}
	wg.Wait()
	for _, r := range rs {
		readsWhole(t, s, r, now)
	}
	// The opening's 2 turns, 50 questions, one answer.
	if turns := o.Count(t, `SELECT count(*) FROM turns`); turns != 53 {
		t.Errorf("%d turns stored, want 53", turns)
	}
}

// A turn saved while the response it continues is deleted elsewhere
// neither fails nor loses a turn: it is saved whole whichever comes first.
func testSaveWhileBaseGoes(t *testing.T, b Backend) {
	o := b.Open(t)
	s := o.Store
	now := time.Unix(1800000000, 0)
	for i := range 30 {
		rs := Chain(fmt.Sprintf("resp_%d_", i), 2, now)
		if err := s.SaveResponse(t.Context(), rs[0]); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := s.DeleteResponse(t.Context(), rs[0].GetId()); err != nil {
				t.Errorf("delete %s: %v", rs[0].GetId(), err)
			}
		})
		wg.Go(func() {
			if err := s.SaveResponse(t.Context(), rs[1]); err != nil {
				t.Errorf("save %s: %v", rs[1].GetId(), err)
			}
		})
		wg.Wait()
		readsWhole(t, s, rs[1], now)
	}
}
