package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// rsClient is the official responses SDK pointed at the gateway.
type rsClient struct {
	t testing.TB
	c openai.Client
}

func newRS(t testing.TB, url, key string) rsClient { return rsClient{t, openaiClient(url, key)} }

// create sends a request body through the SDK, whole or streamed (then
// accumulated by the SDK's own accumulator), and returns the response.
func (c rsClient) create(body map[string]any, stream bool) (*responses.Response, error) {
	c.t.Helper()
	if stream {
		body["stream"] = true
	}
	raw, err := json.Marshal(body)
	if err != nil {
		c.t.Fatal(err)
	}
	opt := ooption.WithRequestBody("application/json", raw)
	if !stream {
		return c.c.Responses.New(context.Background(), responses.ResponseNewParams{}, opt)
	}
	s := c.c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{}, opt)
	var acc responses.ResponseAccumulator
	for s.Next() {
		var se responses.ResponsesServerEventUnion
		if err := json.Unmarshal([]byte(s.Current().RawJSON()), &se); err != nil {
			c.t.Fatal(err)
		}
		if err := acc.AddEvent(se); err != nil {
			c.t.Fatalf("the SDK's accumulator rejected %q: %v", s.Current().Type, err)
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return acc.ReconstructedResponse()
}

// statusOf is the HTTP status of an SDK error, with its error code.
func statusOf(err error) (int, string) {
	var oe *openai.Error
	if errors.As(err, &oe) {
		return oe.StatusCode, oe.Code
	}
	return 0, ""
}

func outputText(r *responses.Response) string {
	var b strings.Builder
	for _, it := range r.Output {
		if it.Type == "message" {
			for _, p := range it.Content {
				b.WriteString(p.Text)
			}
		}
	}
	return b.String()
}

// opaqueValues lists the reasoning signatures and encrypted reasoning of
// canonical parts.
func opaqueValues(parts []*parleyv1.Part) []string {
	var out []string
	for _, p := range parts {
		if v := p.GetSignature().GetValue(); v != "" {
			out = append(out, v)
		}
		if v := p.GetReasoning().GetEncryptedContent().GetValue(); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// chainTurn is one turn of a stored conversation.
type chainTurn struct {
	scenario     string // what the upstream answers
	input        string // a user message; empty: the output of the call asked for
	instructions string
}

var fiveTurns = []chainTurn{
	{"reasoning", "Weather in Paris?", "Be brief."},
	{"tool", "Check it with the tool.", ""},
	{"text", "", ""},
	{"reasoning", "And tomorrow?", "Answer in French."},
	{"text", "Thanks.", ""},
}

// runChain plays turns from prev on, checking each reply and what reached
// the upstream; it returns the ids of the responses and the users' texts
// and opaque values the conversation holds by then.
type chainState struct {
	ids    []string
	users  []string
	opaque []string
	calls  int
	callID string
}

func (st *chainState) prev() string {
	if len(st.ids) == 0 {
		return ""
	}
	return st.ids[len(st.ids)-1]
}

func runTurns(t *testing.T, g *gateway, c rsClient, b dialect, stream bool, st *chainState, turns []chainTurn) {
	t.Helper()
	fake := g.fakes[b.name]
	for i, turn := range turns {
		fake.set(turn.scenario, nil)
		body := map[string]any{"model": "via-" + b.name}
		if turn.input != "" {
			body["input"] = turn.input
			st.users = append(st.users, turn.input)
		} else {
			body["input"] = []any{map[string]any{"type": "function_call_output", "call_id": st.callID, "output": "18C"}}
		}
		if turn.instructions != "" {
			body["instructions"] = turn.instructions
		}
		prev := st.prev()
		if prev != "" {
			body["previous_response_id"] = prev
		}
		r, err := c.create(body, stream)
		if err != nil {
			t.Fatalf("turn %d: %v", len(st.ids)+1, err)
		}
		n := len(st.ids) + 1
		if !strings.HasPrefix(r.ID, "resp_") || len(r.ID) != 53 || slices.Contains(st.ids, r.ID) {
			t.Errorf("turn %d: the id %q is not a new Parley response id", n, r.ID)
		}
		if r.PreviousResponseID != prev || storeMember(t, r) != "true" {
			t.Errorf("turn %d: previous_response_id %q (want %q), store %s", n, r.PreviousResponseID, prev, storeMember(t, r))
		}
		// Readable the moment the reply has ended, streamed or not.
		got, err := c.c.Responses.Get(context.Background(), r.ID, responses.ResponseGetParams{})
		if err != nil {
			t.Fatalf("turn %d: reading the response back: %v", n, err)
		}
		if got.ID != r.ID || outputText(got) != outputText(r) || len(got.Output) != len(r.Output) || got.PreviousResponseID != prev {
			t.Errorf("turn %d: read back %s %q (%d items), returned %s %q (%d items)", n, got.ID, outputText(got), len(got.Output), r.ID, outputText(r), len(r.Output))
		}

		// What reached the upstream: the whole conversation, in its dialect.
		reqs := fake.requests()
		if len(reqs) != 1 {
			t.Fatalf("turn %d: the upstream got %d requests", n, len(reqs))
		}
		if bytes.Contains(reqs[0].Body, []byte("previous_response_id")) || bytes.Contains(reqs[0].Body, []byte("resp_")) {
			t.Errorf("turn %d: a Parley response id reached the upstream: %s", n, reqs[0].Body)
		}
		up := decodeAt(t, b, reqs[0])
		a := askedOf(up)
		if !slices.Equal(a.User, st.users) {
			t.Errorf("turn %d: the upstream saw the user turns %q, want %q", n, a.User, st.users)
		}
		if a.System != turn.instructions {
			t.Errorf("turn %d: the upstream's instructions are %q, want only this turn's %q", n, a.System, turn.instructions)
		}
		if len(a.Calls) != st.calls || (st.calls > 0 && turn.input == "" && a.Results != 1) {
			t.Errorf("turn %d: the upstream saw calls %v and %d results (want %d calls)", n, a.Calls, a.Results, st.calls)
		}
		var sent []string
		for _, m := range up.GetMessages() {
			sent = append(sent, opaqueValues(m.GetParts())...)
			for _, p := range m.GetParts() {
				if tr := p.GetToolResult(); tr != nil && b.name != "generate_content" && tr.GetCallId() != st.callID {
					t.Errorf("turn %d: the result answers %q, the call was %q", n, tr.GetCallId(), st.callID)
				}
			}
		}
		for _, v := range st.opaque {
			if !slices.Contains(sent, v) {
				t.Errorf("turn %d: the earlier reasoning signature %.20q... did not reach the upstream", n, v)
			}
		}

		// What the conversation holds from now on.
		ans := upstreamAnswer(t, turn.scenario, b, stream)
		if b.name != "chat_completions" {
			st.opaque = append(st.opaque, opaqueValues(ans.GetCandidates()[0].GetParts())...)
		}
		for _, it := range r.Output {
			if it.Type == "function_call" {
				st.calls++
				st.callID = it.CallID
			}
		}
		st.ids = append(st.ids, r.ID)
		_ = i
	}
	t.Logf("%d opaque values carried", len(st.opaque))
}

// TestStoredChains: five-turn conversations on previous_response_id,
// through an upstream of every dialect, whole and streamed: reasoning in
// the first turn, a tool call in the second answered in the third, new
// instructions in the fourth. Every turn's upstream request holds the
// whole conversation in its own dialect, reasoning signatures included,
// and only the turn's own instructions; every response can be read back
// the moment it has been returned (guide §8 item 6).
func TestStoredChains(t *testing.T) {
	g := startGateway(t, gwExtra{dataDir: t.TempDir()})
	c := newRS(t, g.url, clientKey)
	for _, b := range dialectList {
		for _, stream := range []bool{false, true} {
			t.Run(b.name+"/"+map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
				runTurns(t, g, c, b, stream, &chainState{}, fiveTurns)
			})
		}
	}
}

// TestStoredRestart: a conversation continues across a restart on the
// same data directory.
func TestStoredRestart(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, gwExtra{dataDir: dir})
	b := dialectList[0]
	st := &chainState{}
	runTurns(t, g, newRS(t, g.url, clientKey), b, false, st, fiveTurns[:2])
	g.stop()
	g2 := startGateway(t, gwExtra{dataDir: dir, fakes: g.fakes})
	runTurns(t, g2, newRS(t, g2.url, clientKey), b, true, st, fiveTurns[2:])
}

// TestStoredAccess: retrieval, input items and their pages, deletion,
// another key's id, store false, and unknown ids, each in the responses
// dialect's shapes.
func TestStoredAccess(t *testing.T) {
	g := startGateway(t, gwExtra{dataDir: t.TempDir()})
	c := newRS(t, g.url, clientKey)
	st := &chainState{}
	b := dialectList[0] // messages: the narrow key may use it
	runTurns(t, g, c, b, false, st, fiveTurns)
	ctx := context.Background()

	// The last response's input: the whole conversation, newest first by
	// default, in pages.
	var all []string
	page, err := c.c.Responses.InputItems.List(ctx, st.ids[4], responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Data {
		all = append(all, it.ID)
	}
	var kinds []string
	for _, it := range page.Data {
		kinds = append(kinds, it.Type)
	}
	if len(all) < 9 || kinds[0] != "message" || !slices.Contains(kinds, "function_call") || !slices.Contains(kinds, "function_call_output") {
		t.Fatalf("input items %v", kinds)
	}
	// The SDK's own pager: pages of 2, each asked after the last id.
	var paged []string
	pager := c.c.Responses.InputItems.ListAutoPaging(ctx, st.ids[4], responses.InputItemListParams{Limit: openai.Int(2)})
	for pager.Next() {
		paged = append(paged, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(paged)
	if !slices.Equal(paged, all) {
		t.Errorf("pages of 2, newest first, give %v; ascending, %v", paged, all)
	}
	again, err := c.c.Responses.InputItems.List(ctx, st.ids[4], responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil || len(again.Data) != len(all) || again.Data[0].ID != all[0] {
		t.Errorf("the item ids change between reads: %v", err)
	}

	// Another key does not see the responses.
	other := newRS(t, g.url, "sk-narrow-key-0001")
	if _, err := other.c.Responses.Get(ctx, st.ids[0], responses.ResponseGetParams{}); !is404(err, "not_found") {
		t.Errorf("another key reads the response: %v", err)
	}
	if _, err := other.create(map[string]any{"model": "via-messages", "input": "hi", "previous_response_id": st.ids[0]}, false); !is404(err, "previous_response_not_found") {
		t.Errorf("another key continues the response: %v", err)
	}
	if err := other.c.Responses.Delete(ctx, st.ids[0]); !is404(err, "not_found") {
		t.Errorf("another key deletes the response: %v", err)
	}

	// Deleting one response leaves the others whole.
	if err := c.c.Responses.Delete(ctx, st.ids[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.c.Responses.Get(ctx, st.ids[2], responses.ResponseGetParams{}); !is404(err, "not_found") {
		t.Errorf("a deleted response is read: %v", err)
	}
	if err := c.c.Responses.Delete(ctx, st.ids[2]); !is404(err, "not_found") {
		t.Errorf("deleting twice: %v", err)
	}
	if _, err := c.create(map[string]any{"model": "via-messages", "input": "hi", "previous_response_id": st.ids[2]}, true); !is404(err, "previous_response_not_found") {
		t.Errorf("continuing a deleted response: %v", err)
	}
	g.fakes["messages"].set("text", nil)
	if _, err := c.create(map[string]any{"model": "via-messages", "input": "one more", "previous_response_id": st.ids[3]}, false); err != nil {
		t.Errorf("continuing a response after an earlier one was deleted: %v", err)
	} else if a := askedOf(decodeAt(t, b, g.fakes["messages"].requests()[0])); len(a.User) != 4 {
		t.Errorf("the conversation after a deletion holds the user turns %q", a.User)
	}

	// store false: answered, not kept.
	r, err := c.create(map[string]any{"model": "via-messages", "input": "do not keep this", "store": false}, false)
	if err != nil {
		t.Fatal(err)
	}
	if storeMember(t, r) != "false" {
		t.Errorf("store false shown as %s", storeMember(t, r))
	}
	if _, err := c.c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); !is404(err, "not_found") {
		t.Errorf("a response made with store false is read: %v", err)
	}
	if _, err := c.create(map[string]any{"model": "via-messages", "input": "hi", "previous_response_id": r.ID}, false); !is404(err, "previous_response_not_found") {
		t.Errorf("a response made with store false is continued: %v", err)
	}
	n := len(g.fakes["messages"].requests())
	if _, err := c.create(map[string]any{"model": "via-messages", "input": "hi", "previous_response_id": "resp_unknown"}, true); !is404(err, "previous_response_not_found") {
		t.Errorf("an unknown id: %v", err)
	}
	if len(g.fakes["messages"].requests()) != n {
		t.Errorf("a request on an unknown id reached the upstream")
	}
	for _, q := range []string{"limit=0", "limit=101", "order=up", "after=item_nope"} {
		resp, err := http.Get(g.url + "/v1/responses/" + st.ids[4] + "/input_items?" + q)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("input_items?%s: %d", q, resp.StatusCode)
		}
	}
}

// storeMember is the response object's store member as sent.
func storeMember(t testing.TB, r *responses.Response) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.RawJSON()), &m); err != nil {
		t.Fatal(err)
	}
	return string(m["store"])
}

func is404(err error, code string) bool {
	status, got := statusOf(err)
	return status == http.StatusNotFound && got == code
}

// TestStoredTruncation: against a model's configured context window,
// truncation auto drops turns from the middle of a rebuilt conversation
// (keeping the first and the latest), and the default, disabled, refuses
// the request with the service's 400 before it reaches the upstream. The
// stored conversation itself stays whole.
func TestStoredTruncation(t *testing.T) {
	g := startGateway(t, gwExtra{
		dataDir: t.TempDir(),
		models:  "  - {name: small, upstream: fake-responses, upstream_model: gpt-5, context_window: 120}\n",
	})
	c := newRS(t, g.url, clientKey)
	fake := g.fakes["responses"]
	fake.set("text", nil)
	say := func(i int) string { return strings.Repeat(string(rune('a'+i)), 80) } // 24 tokens with its turn
	prev := ""
	var sent []string
	for i := range 6 {
		body := map[string]any{"model": "small", "input": say(i), "truncation": "auto"}
		if prev != "" {
			body["previous_response_id"] = prev
		}
		r, err := c.create(body, i%2 == 1)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		prev = r.ID
		sent = append(sent, say(i))
	}
	reqs := fake.requests()
	last := askedOf(decodeAt(t, dialectList[2], reqs[len(reqs)-1]))
	if len(last.User) >= len(sent) || last.User[0] != sent[0] || last.User[len(last.User)-1] != sent[len(sent)-1] {
		t.Errorf("the upstream's last request holds the user turns %d of %d: want the first, the latest, and the middle dropped", len(last.User), len(sent))
	}
	items, err := c.c.Responses.InputItems.List(context.Background(), prev, responses.InputItemListParams{Limit: openai.Int(100)})
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, it := range items.Data {
		if it.Type == "message" && it.Role == "user" {
			users++
		}
	}
	if users != len(sent) {
		t.Errorf("the stored input holds %d user turns, want all %d", users, len(sent))
	}

	n := len(fake.requests())
	_, err = c.create(map[string]any{"model": "small", "input": say(7), "previous_response_id": prev}, false)
	status, code := statusOf(err)
	var oe *openai.Error
	if status != http.StatusBadRequest || code != "context_length_exceeded" || !errors.As(err, &oe) || oe.Param != "input" {
		t.Errorf("truncation disabled over the window: %d %q (%v)", status, code, err)
	}
	if len(fake.requests()) != n {
		t.Errorf("a request over the window reached the upstream")
	}
}

// TestConnectResponses: the Response service reads a response stored
// through the responses dialect, with its whole input, and deletes it, for
// its owner only, over every protocol.
func TestConnectResponses(t *testing.T) {
	g := startGateway(t, gwExtra{dataDir: t.TempDir()})
	st := &chainState{}
	runTurns(t, g, newRS(t, g.url, clientKey), dialectList[0], false, st, fiveTurns[:3])
	for i, protocol := range rpcProtocols {
		t.Run(protocol, func(t *testing.T) {
			c := newRPC(t, g.url, clientKey, protocol)
			res, err := c.responses.GetResponse(t.Context(), connect.NewRequest(&parleyv1.GetResponseRequest{Id: st.ids[2]}))
			if err != nil {
				t.Fatal(err)
			}
			rec := res.Msg.GetResponse()
			if rec.GetId() != st.ids[2] || rec.GetPreviousResponseId() != st.ids[1] || rec.GetOwner() != "test" || len(rec.GetInput()) != 5 {
				t.Errorf("stored response %s after %s by %s with %d input turns", rec.GetId(), rec.GetPreviousResponseId(), rec.GetOwner(), len(rec.GetInput()))
			}
			if len(rec.GetResponse().GetCandidates()) == 0 || len(rec.GetResponse().GetCandidates()[0].GetParts()) == 0 {
				t.Errorf("the stored response has no output: %v", rec.GetResponse())
			}
			narrow := newRPC(t, g.url, "sk-narrow-key-0001", protocol)
			if _, err := narrow.responses.GetResponse(t.Context(), connect.NewRequest(&parleyv1.GetResponseRequest{Id: st.ids[2]})); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("another key reads it: %v", err)
			}
			if _, err := narrow.responses.DeleteResponse(t.Context(), connect.NewRequest(&parleyv1.DeleteResponseRequest{Id: st.ids[i]})); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("another key deletes it: %v", err)
			}
			if _, err := c.responses.DeleteResponse(t.Context(), connect.NewRequest(&parleyv1.DeleteResponseRequest{Id: st.ids[i]})); err != nil {
				t.Fatal(err)
			}
			if _, err := c.responses.GetResponse(t.Context(), connect.NewRequest(&parleyv1.GetResponseRequest{Id: st.ids[i]})); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("a deleted response is read: %v", err)
			}
			if _, err := c.responses.GetResponse(t.Context(), connect.NewRequest(&parleyv1.GetResponseRequest{})); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("no id: %v", err)
			}
		})
	}
}

// TestStoredAcrossDialects: one conversation whose turns go to upstreams
// of different dialects, as a change of model or a fallback does: each
// upstream gets the whole conversation in its own dialect, and reasoning
// signatures only where they came from (guide §8 item 6).
func TestStoredAcrossDialects(t *testing.T) {
	g := startGateway(t, gwExtra{dataDir: t.TempDir()})
	c := newRS(t, g.url, clientKey)
	var users []string
	own := map[string][]string{}
	prev := ""
	for i, b := range []dialect{dialectList[0], dialectList[1], dialectList[3], dialectList[2], dialectList[0]} {
		fake := g.fakes[b.name]
		fake.set("reasoning", nil)
		q := "question " + string(rune('A'+i))
		users = append(users, q)
		body := map[string]any{"model": "via-" + b.name, "input": q}
		if prev != "" {
			body["previous_response_id"] = prev
		}
		r, err := c.create(body, i%2 == 0)
		if err != nil {
			t.Fatalf("turn %d via %s: %v", i+1, b.name, err)
		}
		prev = r.ID
		reqs := fake.requests()
		if len(reqs) != 1 {
			t.Fatalf("turn %d: the %s upstream got %d requests", i+1, b.name, len(reqs))
		}
		up := decodeAt(t, b, reqs[0])
		if a := askedOf(up); !slices.Equal(a.User, users) {
			t.Errorf("turn %d via %s: the upstream saw %q, want %q", i+1, b.name, a.User, users)
		}
		assistants := 0
		for _, m := range up.GetMessages() {
			if m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
				assistants++
			}
		}
		if assistants != i {
			t.Errorf("turn %d via %s: %d earlier answers reached the upstream, want %d", i+1, b.name, assistants, i)
		}
		var sent []string
		for _, m := range up.GetMessages() {
			sent = append(sent, opaqueValues(m.GetParts())...)
		}
		// Only the signatures this dialect's upstream made earlier.
		if want := own[b.name]; !slices.Equal(sent, want) {
			t.Errorf("turn %d via %s: the upstream got the signatures %.30q, want its own %.30q", i+1, b.name, sent, want)
		}
		own[b.name] = append(own[b.name], opaqueValues(upstreamAnswer(t, "reasoning", b, i%2 == 0).GetCandidates()[0].GetParts())...)
	}
}
