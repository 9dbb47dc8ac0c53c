package dispatch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// refusingUpstream is a messages service that refuses every request
// carrying a thinking signature, as the service refuses one another
// account made, and answers the others; always refuses them all.
type refusingUpstream struct {
	url    string
	always bool
	mu     sync.Mutex
	bodies []string
}

func newRefusingUpstream(t *testing.T, always bool) *refusingUpstream {
	t.Helper()
	u := &refusingUpstream{always: always}
	reply := readFixture(t, "text", "messages", "response.json")
	stream := readFixture(t, "text", "messages", "stream.sse")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, string(b))
		u.mu.Unlock()
		if u.always || strings.Contains(string(b), `"signature"`) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid `+"`signature`"+` in `+"`thinking`"+` block"}}`)
			return
		}
		if strings.Contains(string(b), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write(stream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

func (u *refusingUpstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

// thinkingTurn is a request whose assistant turn carries a thinking
// block a messages client sent back as it got it: signed, by a service
// of the dialect, but not known to be this upstream's.
func thinkingTurn(stream bool) *parleyv1.Request {
	return &parleyv1.Request{Model: "m", Stream: stream, Messages: []*parleyv1.Message{
		translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Hello")),
		translate.NewMessage(parleyv1.Role_ROLE_ASSISTANT,
			&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "Say hello back."}},
				Signature: &parleyv1.Opaque{Value: "EqQBsignedByAnotherAccount", Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES}}},
			translate.TextPart("Hello!")),
		translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart("Again")),
	}}
}

func refusingDispatcher(t *testing.T, url string) *Dispatcher {
	t.Helper()
	c := &config.Config{
		Upstreams: []config.Upstream{{Name: "up", Dialect: "messages", BaseURL: url, APIKey: "sk-upstream-key-0123456789"}},
		Models:    []config.Model{{Name: "m", Upstream: "up"}},
	}
	d, err := FromConfig(c, dialects.All(), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRefusedReasoningIsRetriedWithout: an upstream that refuses the
// reasoning a request carried back as not its own gets the request again
// at once, without any reasoning, and the caller gets the answer; the
// call says so (guide §8 item 19). Whole and streamed.
func TestRefusedReasoningIsRetriedWithout(t *testing.T) {
	for _, stream := range []bool{false, true} {
		u := newRefusingUpstream(t, false)
		d := refusingDispatcher(t, u.url)
		call := &Call{}
		req := thinkingTurn(stream)
		var err error
		if stream {
			_, acc, serr := collect(t, d.Stream(context.Background(), req, call))
			err = serr
			if err == nil && !acc.Ended() {
				t.Fatal("the stream did not end")
			}
		} else {
			_, err = d.Generate(context.Background(), req, call)
		}
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		seen := u.seen()
		if len(seen) != 2 || call.Attempts != 2 || call.ReasoningRetry != "up" {
			t.Fatalf("stream=%v: %d requests, %d attempts, reasoning retry %q; want 2, 2, up", stream, len(seen), call.Attempts, call.ReasoningRetry)
		}
		if !strings.Contains(seen[0], "EqQBsignedByAnotherAccount") || strings.Contains(seen[1], "EqQBsignedByAnotherAccount") || !strings.Contains(seen[1], "Again") {
			t.Errorf("stream=%v: the first request should carry the thinking and the second not:\n%s\n%s", stream, seen[0], seen[1])
		}
		if len(call.Failures) != 1 || !call.Failures[0].Err.GetRefusedReasoning() {
			t.Errorf("stream=%v: failures %v", stream, call.Failures)
		}
		if req.GetMessages()[1].GetParts()[0].GetSignature().GetOrigin().GetDialect() != parleyv1.Dialect_DIALECT_MESSAGES {
			t.Errorf("stream=%v: the caller's request was changed", stream)
		}
	}
}

// TestRefusedReasoningIsRetriedOnce: an upstream that refuses the
// request again without reasoning fails it, after two requests, with its
// own error.
func TestRefusedReasoningIsRetriedOnce(t *testing.T) {
	u := newRefusingUpstream(t, true)
	d := refusingDispatcher(t, u.url)
	call := &Call{}
	_, err := d.Generate(context.Background(), thinkingTurn(false), call)
	if e := translate.ToProto(err); e.GetHttpStatus() != http.StatusBadRequest || !e.GetRefusedReasoning() {
		t.Fatalf("error %v, want the upstream's refusal", err)
	}
	if n := len(u.seen()); n != 2 || call.Attempts != 2 {
		t.Errorf("%d requests, %d attempts; want 2", n, call.Attempts)
	}
}

// TestAffinityToTheMakerOfTheReasoning: a model with two routes sends a
// conversation whose reasoning one of them made to that one first, even
// when the weights draw the other; without reasoning the weights decide;
// and when the maker fails, the other route serves the turn, without the
// reasoning it could not read (issue 23).
func TestAffinityToTheMakerOfTheReasoning(t *testing.T) {
	a, b := newCountingUpstream(t, false), newCountingUpstream(t, false)
	c := &config.Config{
		Upstreams: []config.Upstream{
			{Name: "acct-a", Dialect: "messages", BaseURL: a.url, APIKey: "sk-upstream-key-a-0123456789"},
			{Name: "acct-b", Dialect: "messages", BaseURL: b.url, APIKey: "sk-upstream-key-b-0123456789"},
		},
		Models: []config.Model{{Name: "m", Routes: []config.Route{{Upstream: "acct-a", Weight: 1}, {Upstream: "acct-b", Weight: 1}}}},
	}
	d, err := FromConfig(c, dialects.All(), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Backoff = func(int) time.Duration { return 0 }
	d.Rand = func(n int) int { return n - 1 } // the weights draw acct-b
	made := func(upstream string) *parleyv1.Request {
		req := thinkingTurn(false)
		req.GetMessages()[1].GetParts()[0].Signature.Origin.Upstream = upstream
		return req
	}
	call := &Call{}
	if _, err := d.Generate(context.Background(), made("acct-a"), call); err != nil {
		t.Fatal(err)
	}
	if call.Upstream != "acct-a" || a.n.Load() != 1 || b.n.Load() != 0 {
		t.Errorf("the reasoning acct-a made went to %s (a %d, b %d)", call.Upstream, a.n.Load(), b.n.Load())
	}
	call = &Call{}
	if _, err := d.Generate(context.Background(), chatRequest(false), call); err != nil {
		t.Fatal(err)
	}
	if call.Upstream != "acct-b" {
		t.Errorf("without reasoning the request went to %s, not the route the weights drew", call.Upstream)
	}
	a.down.Store(true)
	call = &Call{}
	if _, err := d.Generate(context.Background(), made("acct-a"), call); err != nil {
		t.Fatal(err)
	}
	if call.Upstream != "acct-b" || strings.Contains(b.last(), "EqQBsignedByAnotherAccount") {
		t.Errorf("with its maker down the turn went to %s carrying %s", call.Upstream, b.last())
	}
}

// countingUpstream is a messages service that counts its requests and
// answers them, or fails them all with a 500 while down.
type countingUpstream struct {
	url  string
	n    atomic.Int32
	down atomic.Bool
	mu   sync.Mutex
	body string
}

func newCountingUpstream(t *testing.T, down bool) *countingUpstream {
	t.Helper()
	u := &countingUpstream{}
	u.down.Store(down)
	reply := readFixture(t, "text", "messages", "response.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.body = string(b)
		u.mu.Unlock()
		if u.down.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"down"}}`)
			return
		}
		u.n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

func (u *countingUpstream) last() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.body
}

// TestAffinityByConversationKey: without reasoning to follow, a request
// that names its conversation (prompt_cache_key, else the end user) goes
// first to the route its key draws, whatever the random draw, so that its
// turns meet their prompt cache; over many keys the routes share them by
// weight; the maker of the reasoning still comes first; and a drawn route
// that fails falls back as configured.
func TestAffinityByConversationKey(t *testing.T) {
	a, b := newCountingUpstream(t, false), newCountingUpstream(t, false)
	c := &config.Config{
		Upstreams: []config.Upstream{
			{Name: "acct-a", Dialect: "messages", BaseURL: a.url, APIKey: "sk-upstream-key-a-0123456789"},
			{Name: "acct-b", Dialect: "messages", BaseURL: b.url, APIKey: "sk-upstream-key-b-0123456789"},
		},
		Models: []config.Model{{Name: "m", Routes: []config.Route{{Upstream: "acct-a", Weight: 3}, {Upstream: "acct-b", Weight: 1}}}},
	}
	d, err := FromConfig(c, dialects.All(), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Backoff = func(int) time.Duration { return 0 }
	first := func(req *parleyv1.Request) string {
		plan, err := d.plan(req)
		if err != nil {
			t.Fatal(err)
		}
		return plan[0].upstream
	}
	keyed := func(key, user string) *parleyv1.Request {
		req := chatRequest(false)
		req.PromptCacheKey, req.EndUserId = key, user
		return req
	}
	wins := map[string]int{}
	for i := range 4000 {
		key := fmt.Sprintf("conv-%d", i)
		got := first(keyed(key, ""))
		for draw := range 3 {
			d.Rand = func(n int) int { return (draw * 7) % n }
			if again := first(keyed(key, "")); again != got {
				t.Fatalf("key %s drew %s, then %s", key, got, again)
			}
		}
		wins[got]++
	}
	if share := float64(wins["acct-a"]) / 4000; share < 0.72 || share > 0.78 {
		t.Errorf("acct-a (weight 3 of 4) drew %.3f of the keys", share)
	}
	// The end user is the key when there is no prompt cache key.
	if first(keyed("", "user_1_session_2")) != first(keyed("user_1_session_2", "")) {
		t.Error("the end user's id does not draw as the key")
	}
	// The maker of the reasoning comes before the key's draw.
	var key string
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("conv-%d", i); first(keyed(k, "")) == "acct-a" {
			key = k
		}
	}
	made := thinkingTurn(false)
	made.GetMessages()[1].GetParts()[0].Signature.Origin.Upstream = "acct-b"
	made.PromptCacheKey = key
	if got := first(made); got != "acct-b" {
		t.Errorf("the maker's turn went first to %s", got)
	}
	// The drawn route down: the other serves.
	a.down.Store(true)
	call := &Call{}
	if _, err := d.Generate(context.Background(), keyed(key, ""), call); err != nil || call.Upstream != "acct-b" {
		t.Errorf("with the drawn route down: %v, served by %s", err, call.Upstream)
	}
}
