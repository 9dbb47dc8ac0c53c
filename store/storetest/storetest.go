// Package storetest is the contract suite of package store: every backend
// runs the same cases, so that what a test here pins holds for SQLite and
// PostgreSQL alike. A backend's own tests keep to what only it has (its
// group commit, its query plans, its migrations).
package storetest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// Backend is what the suite needs of a backend.
type Backend struct {
	// Open opens a store on fresh data for the test; the store is
	// closed when the test ends.
	Open func(t testing.TB) Opened
}

// Opened is one store under test.
type Opened struct {
	Store store.Store
	// Reopen closes the store and opens the same data again, as a
	// restart does.
	Reopen func(t testing.TB) store.Store
	// Count runs a query of one integer (a count over the tables that
	// store.Responses describes: responses, response_turns, turns).
	Count func(t testing.TB, query string) int
}

// Run runs every case of the contract.
func Run(t *testing.T, b Backend) {
	t.Run("Tasks", func(t *testing.T) { testTasks(t, b) })
	t.Run("ClaimTasks", func(t *testing.T) { testClaimTasks(t, b) })
	t.Run("ClaimTasksAtOnce", func(t *testing.T) { testClaimTasksAtOnce(t, b) })
	t.Run("ClaimDeliveries", func(t *testing.T) { testClaimDeliveries(t, b) })
	t.Run("RecentTasks", func(t *testing.T) { testRecentTasks(t, b) })
	t.Run("Responses", func(t *testing.T) { testResponses(t, b) })
	t.Run("ResponseBases", func(t *testing.T) { testResponseBases(t, b) })
	t.Run("SweepMany", func(t *testing.T) { testSweepMany(t, b) })
	t.Run("SweepersShare", func(t *testing.T) { testSweepersShare(t, b) })
	t.Run("SavesAtOnce", func(t *testing.T) { testSavesAtOnce(t, b) })
	t.Run("SaveWhileBaseGoes", func(t *testing.T) { testSaveWhileBaseGoes(t, b) })
	t.Run("Keys", func(t *testing.T) { testKeys(t, b) })
	t.Run("KeysConflicts", func(t *testing.T) { testKeysConflicts(t, b) })
	t.Run("KeysUpdateConflict", func(t *testing.T) { testKeysUpdateConflict(t, b) })
	t.Run("KeysLostUpdate", func(t *testing.T) { testKeysLostUpdate(t, b) })
	t.Run("Ledger", func(t *testing.T) { testLedger(t, b) })
	t.Run("LedgerGroups", func(t *testing.T) { testLedgerGroups(t, b) })
	t.Run("LedgerIdempotent", func(t *testing.T) { testLedgerIdempotent(t, b) })
	t.Run("Spent", func(t *testing.T) { testSpent(t, b) })
}

// Task is a task in the given state.
func Task(id string, status parleyv1.TaskStatus) *parleyv1.Task {
	return &parleyv1.Task{
		Id: id, Owner: "alice", Action: parleyv1.TaskAction_TASK_ACTION_MUSIC, Status: status,
		SubmittedAt: timestamppb.New(time.Unix(1700000000, 0)), UpdatedAt: timestamppb.Now(),
		Input: &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Lyrics{Lyrics: &parleyv1.LyricsInput{Prompt: "rain"}}},
	}
}

// Text is a message of one text part.
func Text(role parleyv1.Role, s string) *parleyv1.Message {
	return &parleyv1.Message{Role: role, Parts: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: s}}}}}
}

// Chain builds n responses, each continuing the one before: the input of
// response i is the whole conversation so far plus a new user turn; the
// first user turn carries an image of 200 KB. Ids are prefix + a, b, c...
func Chain(prefix string, n int, created time.Time) []*parleyv1.StoredResponse {
	image := &parleyv1.Message{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{
		{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{MimeType: "image/png", Source: &parleyv1.Media_Data{Data: bytes.Repeat([]byte{7}, 200<<10)}}}},
		{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "what is this?"}}},
	}}
	var out []*parleyv1.StoredResponse
	history := []*parleyv1.Message{image}
	prev := ""
	for i := range n {
		if i > 0 {
			history = append(history, Text(parleyv1.Role_ROLE_USER, fmt.Sprintf("and then, %d?", i)))
		}
		id := prefix + string(rune('a'+i))
		answer := Text(parleyv1.Role_ROLE_ASSISTANT, "answer "+id)
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
