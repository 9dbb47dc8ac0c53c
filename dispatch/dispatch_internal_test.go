package dispatch

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"

	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
	"github.com/parleyhq/parley/translate/sse"
)

func TestOrderedByWeight(t *testing.T) {
	routes := []*route{{upstream: "a", weight: 1}, {upstream: "b", weight: 3}, {upstream: "c", weight: 0}}
	names := func(rs []*route) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.upstream)
		}
		return strings.Join(s, ",")
	}
	for draw, want := range map[int]string{0: "a,b,c", 1: "b,a,c", 3: "b,a,c"} {
		if got := names(ordered(routes, func(int) int { return draw })); got != want {
			t.Errorf("draw %d: %s, want %s", draw, got, want)
		}
	}
	// Over many draws, b comes first about three times as often as a.
	counts := map[string]int{}
	for range 4000 {
		counts[ordered(routes, rand.IntN)[0].upstream]++
	}
	if counts["c"] != 0 || counts["b"] < 2700 || counts["b"] > 3300 {
		t.Errorf("first-route counts %v", counts)
	}
}

func TestRetryDecision(t *testing.T) {
	d := New(&Router{})
	d.Backoff = func(n int) time.Duration { return time.Duration(n+1) * time.Second }
	d.MaxRetryWait = 10 * time.Second
	retryable := &parleyv1.Error{Retry: &parleyv1.RetryAdvice{Retryable: true}}
	after := func(s int) *parleyv1.Error {
		return &parleyv1.Error{Retry: &parleyv1.RetryAdvice{Retryable: true, RetryAfter: durationpb.New(time.Duration(s) * time.Second)}}
	}
	cases := []struct {
		name        string
		e           *parleyv1.Error
		try, max    int
		wait        time.Duration
		again, next bool
	}{
		{"not retryable", &parleyv1.Error{}, 0, 2, 0, false, false},
		{"backoff", retryable, 1, 2, 2 * time.Second, true, false},
		{"retries spent", retryable, 2, 2, 0, false, true},
		{"retry-after honoured", after(3), 0, 2, 3 * time.Second, true, false},
		{"retry-after too long", after(60), 0, 2, 0, false, true},
	}
	for _, tc := range cases {
		wait, again, next := d.retryDecision(tc.e, tc.try, tc.max)
		if wait != tc.wait || again != tc.again || next != tc.next {
			t.Errorf("%s: %v %v %v", tc.name, wait, again, next)
		}
	}
}

func TestURLJoin(t *testing.T) {
	cases := []struct{ base, path, want string }{
		{"https://api.anthropic.com", "/v1/messages", "https://api.anthropic.com/v1/messages"},
		{"https://api.openai.com/v1", "/v1/responses", "https://api.openai.com/v1/responses"},
		{"https://host/openai/v1/", "/v1/chat/completions", "https://host/openai/v1/chat/completions"},
		{"https://host/proxy", "/v1/messages", "https://host/proxy/v1/messages"},
	}
	for _, tc := range cases {
		b, err := NewHTTPBackend("x", messages.Upstream{}, tc.base, HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.url(&translate.Outgoing{Path: tc.path}); got != tc.want {
			t.Errorf("%s + %s = %s, want %s", tc.base, tc.path, got, tc.want)
		}
	}
	b, _ := NewHTTPBackend("x", responses.Upstream{}, "https://host/?tenant=7", HTTPOptions{})
	if got := b.url(&translate.Outgoing{Path: "/v1/responses", Query: map[string][]string{"alt": {"sse"}}}); got != "https://host/v1/responses?alt=sse&tenant=7" {
		t.Errorf("query join = %s", got)
	}
}

// TestTargetIsTheJoinedURL: the URL a request is sent to, kept for its
// path and query, is the one url joins, as net/http parses it; a second
// request to the same path and query shares it, one with another query
// does not, and one with more than a member is made anew each time.
func TestTargetIsTheJoinedURL(t *testing.T) {
	b, err := NewHTTPBackend("x", responses.Upstream{}, "https://user:pw@host:/v1/?tenant=7", HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	outs := []*translate.Outgoing{
		{Path: "/v1/responses"},
		{Path: "/v1/responses", Query: url.Values{"alt": {"sse"}}},
		{Path: "/v1/responses", Query: url.Values{"alt": {"json"}}},
		{Path: "/v1beta/models/a%2Fb:generateContent"},
		{Path: "/v1/responses", Query: url.Values{"alt": {"sse"}, "x": {"1"}}},
		{Path: "/v1/responses", Query: url.Values{"alt": {"sse", "json"}}},
	}
	for i, out := range outs {
		want, err := http.NewRequest(http.MethodPost, b.url(out), nil)
		if err != nil {
			t.Fatal(err)
		}
		u, err := b.target(out)
		if err != nil {
			t.Fatal(err)
		}
		if u.String() != want.URL.String() || u.Host != want.Host || u.User.String() != want.URL.User.String() {
			t.Errorf("%s %v: target %s (host %s), want %s (host %s)", out.Path, out.Query, u, u.Host, want.URL, want.Host)
		}
		again, _ := b.target(out)
		if shared := again == u; shared != (i < 4) {
			t.Errorf("%s %v: shared %v the second time", out.Path, out.Query, shared)
		}
	}
	if u1, u2 := mustTarget(t, b, outs[1]), mustTarget(t, b, outs[2]); u1 == u2 || u1.RawQuery == u2.RawQuery {
		t.Errorf("two queries share a URL: %s, %s", u1, u2)
	}
}

func mustTarget(t *testing.T, b *HTTPBackend, out *translate.Outgoing) *url.URL {
	t.Helper()
	u, err := b.target(out)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestTargetsAreBounded: past maxURLs paths, URLs are made per request
// and not kept.
func TestTargetsAreBounded(t *testing.T) {
	b, _ := NewHTTPBackend("x", messages.Upstream{}, "http://host", HTTPOptions{})
	for i := range maxURLs + 10 {
		out := &translate.Outgoing{Path: fmt.Sprintf("/v1/models/m%d", i)}
		if u := mustTarget(t, b, out); u.Path != out.Path {
			t.Fatalf("path %s, want %s", u.Path, out.Path)
		}
	}
	if n := len(b.urls.m); n != maxURLs {
		t.Fatalf("%d URLs kept, want %d", n, maxURLs)
	}
}

func TestEchoChunks(t *testing.T) {
	for _, text := range []string{"", "one", "one two three four five six seven", "  spaced   out  words here "} {
		if got := strings.Join(chunks(text), ""); got != text {
			t.Errorf("chunks of %q join to %q", text, got)
		}
	}
	if n := len(chunks("one two three four five six seven")); n != 3 {
		t.Errorf("%d chunks, want 3", n)
	}
}

func TestEstimate(t *testing.T) {
	req := &parleyv1.Request{
		Instructions: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "12345678"}}}},
		Messages: []*parleyv1.Message{{Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{
			{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "abcd"}}},
			{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{}}},
		}}},
	}
	if got := translate.Estimate(req); got != 2+4+1+258 {
		t.Errorf("Estimate = %d", got)
	}
}

// A forwarded stream's upstream events are kept, copied from the reader's
// buffer, until taken; the buffer they are kept in is held for one burst
// only: once released (the server releases it when the burst is
// written), a stream waiting on its upstream holds none, and the next
// burst takes one again.
func TestFramesAreHeldForABurst(t *testing.T) {
	var c Call
	if c.TakeFrames() != nil {
		t.Fatal("frames before any event")
	}
	for burst := range 2 {
		data := []byte("first")
		c.keepFrame(sse.Event{Type: "a", Data: data})
		copy(data, "XXXXX")
		c.keepFrame(sse.Event{Type: "b", Data: []byte("second")})
		got := c.TakeFrames()
		if len(got) != 2 || got[0].Type != "a" || string(got[0].Data) != "first" || got[1].Type != "b" || string(got[1].Data) != "second" {
			t.Fatalf("burst %d: frames %v", burst, got)
		}
		if len(c.TakeFrames()) != 0 {
			t.Fatalf("burst %d: frames taken twice", burst)
		}
		c.ReleaseFrames()
		if c.frames != nil {
			t.Fatalf("burst %d: a released buffer is still held", burst)
		}
	}
	c.ReleaseFrames()
}
