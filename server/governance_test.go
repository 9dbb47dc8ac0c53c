package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"google.golang.org/genai"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/gen/parley/v1/parleyv1connect"
	"github.com/parleyhq/parley/server"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlite"
)

// dialectCall sends the "text" scenario's request of dialect d to a model
// of the gateway, with key, as that dialect's clients send it.
func dialectCall(t testing.TB, gw, d, key, model string) (*dialectReply, []byte) {
	t.Helper()
	body := fixture(t, "text", d, "request.json")
	url := gw
	switch d {
	case "messages":
		url += "/v1/messages"
	case "generate_content":
		url += "/v1beta/models/" + model + ":generateContent"
	case "responses":
		url += "/v1/responses"
	case "chat_completions":
		url += "/v1/chat/completions"
	}
	if d != "generate_content" {
		body = withModel(t, body, model, false)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	switch d {
	case "messages":
		req.Header.Set("x-api-key", key)
		req.Header.Set("anthropic-version", "2023-06-01")
	case "generate_content":
		req.Header.Set("x-goog-api-key", key)
	default:
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return &dialectReply{StatusCode: resp.StatusCode, Header: resp.Header}, out
}

// dialectReply is the status and headers of a reply read whole.
type dialectReply struct {
	StatusCode int
	Header     http.Header
}

// limitedKey is the secret of the key limitedKeys gives dialect d.
func limitedKey(d string) string { return "sk-limited-" + d + "-0123456789" }

// limitedKeys are keys with 2 requests per minute, one per dialect, so
// that each dialect's test has a minute of its own.
func limitedKeys() string {
	var b strings.Builder
	for _, d := range dialectList {
		fmt.Fprintf(&b, "  - {name: limited-%s, key: %s, limits: {requests_per_minute: 2, tokens_per_minute: 1000000}}\n", d.name, limitedKey(d.name))
	}
	return b.String()
}

// TestLimitsInEachDialect checks, for every client dialect, that a key over
// its requests_per_minute is refused before anything reaches an upstream,
// with the dialect's own 429 (the error type its official SDK maps to a
// rate-limit error) and Retry-After, and that the replies before carry the
// rate-limit headers the dialect's own service sends. (issue 20)
func TestLimitsInEachDialect(t *testing.T) {
	g := startGateway(t, gwExtra{keys: limitedKeys()})
	for _, d := range dialectList {
		t.Run(d.name, func(t *testing.T) {
			key, model := limitedKey(d.name), "via-"+d.name
			for i := range 2 {
				resp, body := dialectCall(t, g.url, d.name, key, model)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d: %d %s", i+1, resp.StatusCode, body)
				}
				h := resp.Header
				switch d.name {
				case "messages":
					if h.Get("anthropic-ratelimit-requests-limit") != "2" || h.Get("anthropic-ratelimit-requests-remaining") != strconv.Itoa(1-i) {
						t.Errorf("request %d: anthropic-ratelimit-requests-* = %q %q", i+1, h.Get("anthropic-ratelimit-requests-limit"), h.Get("anthropic-ratelimit-requests-remaining"))
					}
					if _, err := time.Parse(time.RFC3339, h.Get("anthropic-ratelimit-requests-reset")); err != nil {
						t.Errorf("anthropic-ratelimit-requests-reset = %q: %v", h.Get("anthropic-ratelimit-requests-reset"), err)
					}
					if h.Get("anthropic-ratelimit-tokens-limit") != "1000000" {
						t.Errorf("anthropic-ratelimit-tokens-limit = %q", h.Get("anthropic-ratelimit-tokens-limit"))
					}
				case "responses", "chat_completions":
					if h.Get("x-ratelimit-limit-requests") != "2" || h.Get("x-ratelimit-remaining-requests") != strconv.Itoa(1-i) {
						t.Errorf("request %d: x-ratelimit-*-requests = %q %q", i+1, h.Get("x-ratelimit-limit-requests"), h.Get("x-ratelimit-remaining-requests"))
					}
					if _, err := time.ParseDuration(h.Get("x-ratelimit-reset-requests")); err != nil {
						t.Errorf("x-ratelimit-reset-requests = %q: %v", h.Get("x-ratelimit-reset-requests"), err)
					}
					if h.Get("x-ratelimit-limit-tokens") != "1000000" || h.Get("x-ratelimit-remaining-tokens") == "" {
						t.Errorf("x-ratelimit-*-tokens = %q %q", h.Get("x-ratelimit-limit-tokens"), h.Get("x-ratelimit-remaining-tokens"))
					}
				case "generate_content":
					// The service sends no rate-limit headers.
					for name := range h {
						if strings.Contains(strings.ToLower(name), "ratelimit") {
							t.Errorf("a content-generation reply has %s", name)
						}
					}
				}
			}
			// The third, through the official SDK.
			res := sdks[d.name](t, g.url, key, model, fixture(t, "text", d.name, "request.json"), false)
			if res.status != http.StatusTooManyRequests {
				t.Fatalf("the third request: %v (status %d), want 429", res.err, res.status)
			}
			var (
				ae *anthropic.Error
				oe *openai.Error
				ge genai.APIError
			)
			switch {
			case errors.As(res.err, &ae):
				if !strings.Contains(ae.RawJSON(), `"rate_limit_error"`) || !strings.Contains(ae.RawJSON(), "requests_per_minute") {
					t.Errorf("the messages error = %s", ae.RawJSON())
				}
			case errors.As(res.err, &oe):
				if oe.Code != "rate_limit_exceeded" || oe.Type != "requests" || !strings.Contains(oe.Message, "requests_per_minute") {
					t.Errorf("the OpenAI error = code %q type %q: %s", oe.Code, oe.Type, oe.Message)
				}
			case errors.As(res.err, &ge):
				if ge.Status != "RESOURCE_EXHAUSTED" || !strings.Contains(ge.Message, "requests_per_minute") {
					t.Errorf("the content-generation error = %s: %s", ge.Status, ge.Message)
				}
			default:
				t.Errorf("the SDK's error is %T: %v", res.err, res.err)
			}
			resp, body := dialectCall(t, g.url, d.name, key, model)
			ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if resp.StatusCode != http.StatusTooManyRequests || err != nil || ra < 1 || ra > 60 {
				t.Errorf("the fourth request: %d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
			if d.name == "generate_content" && !bytes.Contains(body, []byte(`"type.googleapis.com/google.rpc.QuotaFailure"`)) {
				t.Errorf("the content-generation refusal names no quota: %s", body)
			}
			if n := len(g.fakes[d.name].requests()); n != 2 {
				t.Errorf("the upstream got %d requests, want 2: refusals must not reach it", n)
			}
		})
	}
}

// TestSDKRetryHonoursRetryAfter holds a key's one concurrent slot with a
// slow upstream reply: the official SDK's next request is refused with
// Retry-After: 1, and the SDK's own retry waits that long and then gets
// through. (issue 20)
func TestSDKRetryHonoursRetryAfter(t *testing.T) {
	g := startGateway(t, gwExtra{keys: "  - {name: single, key: sk-single-0123456789, limits: {concurrent_requests: 1}}\n"})
	release := make(chan struct{})
	g.fakes["messages"].set("text", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixture(t, "text", "messages", "response.json"))
	})
	first := make(chan int, 1)
	go func() {
		resp, _ := dialectCall(t, g.url, "messages", "sk-single-0123456789", "via-messages")
		first <- resp.StatusCode
	}()
	for len(g.fakes["messages"].requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		close(release)
	}()
	c := anthropic.NewClient(aoption.WithBaseURL(g.url), aoption.WithAPIKey("sk-single-0123456789"), aoption.WithMaxRetries(2))
	start := time.Now()
	var attempts []int
	_, err := c.Messages.New(context.Background(), anthropic.MessageNewParams{},
		aoption.WithRequestBody("application/json", withModel(t, fixture(t, "text", "messages", "request.json"), "via-messages", false)),
		aoption.WithMiddleware(func(r *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
			resp, err := next(r)
			if err == nil {
				attempts = append(attempts, resp.StatusCode)
			}
			return resp, err
		}))
	if err != nil {
		t.Fatalf("the SDK's retry did not get through: %v", err)
	}
	if len(attempts) != 2 || attempts[0] != http.StatusTooManyRequests || attempts[1] != http.StatusOK {
		t.Errorf("attempts = %v, want a 429 then a 200", attempts)
	}
	// The SDK waited what Retry-After said (1s), not its own shorter
	// backoff.
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("the SDK retried after %v, before the Retry-After of 1s", waited)
	}
	if s := <-first; s != http.StatusOK {
		t.Errorf("the first request: %d", s)
	}
}

// governedGateway is a gateway with an SQLite store for managed keys and
// the ledger, and admin keys.
func governedGateway(t *testing.T, keys string) (*gateway, store.Store) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	// Registered first, so that it runs last: the gateway's close writes
	// the ledger's last records to the store.
	t.Cleanup(func() { _ = st.Close() })
	g := startGateway(t, gwExtra{keys: keys, top: "admin:\n  keys: [" + adminKey + "]\n", options: func(o *server.Options) {
		o.Keys, o.Ledger, o.LedgerFlush, o.KeyRefresh = st, st, 10*time.Millisecond, 50*time.Millisecond
	}})
	return g, st
}

const adminKey = "admin-0123456789abcdef"

// TestBudgetAndLedger spends a key's small token budget, whole and
// streamed, in every client dialect: the key is refused once the usage the
// upstreams reported crosses it, with the OpenAI dialects'
// insufficient_quota and x-should-retry: false; the ledger holds exactly
// the usage the fake upstreams reported, request by request. (issue 20)
func TestBudgetAndLedger(t *testing.T) {
	g, st := governedGateway(t, "  - {name: budget, key: sk-budget-0123456789, limits: {budget: {tokens: 40, per: day}}}\n")
	var want int64
	var sent int
	for _, d := range dialectList {
		resp, body := dialectCall(t, g.url, d.name, "sk-budget-0123456789", "via-"+d.name)
		if resp.StatusCode != http.StatusOK {
			// The budget is spent: the refusal names it.
			if resp.StatusCode != http.StatusTooManyRequests || !bytes.Contains(body, []byte("budget")) {
				t.Fatalf("%s: %d %s", d.name, resp.StatusCode, body)
			}
			if d.name == "responses" || d.name == "chat_completions" {
				var e struct{ Error struct{ Type, Code string } }
				_ = json.Unmarshal(body, &e)
				if e.Error.Type != "insufficient_quota" || e.Error.Code != "insufficient_quota" || resp.Header.Get("X-Should-Retry") != "false" {
					t.Errorf("%s: a spent budget = %s, x-should-retry %q", d.name, body, resp.Header.Get("X-Should-Retry"))
				}
			}
			break
		}
		sent++
		u := upstreamAnswer(t, "text", d, false).GetUsage()
		want += u.GetInputTokens() + u.GetOutputTokens()
	}
	if sent == 0 || sent == len(dialectList) {
		t.Fatalf("%d requests got through a budget of 40 tokens; the fixtures' usage should spend it part way", sent)
	}
	if err := g.server.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Usage(context.Background(), store.UsageQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), GroupBy: []string{store.GroupKey, store.GroupStatus}})
	if err != nil {
		t.Fatal(err)
	}
	var ok, refused int64
	for _, r := range rows {
		switch {
		case r.Key == "budget" && r.Status == http.StatusOK:
			ok = r.Requests
			if r.InputTokens+r.OutputTokens != want {
				t.Errorf("the ledger holds %d tokens, the upstreams reported %d", r.InputTokens+r.OutputTokens, want)
			}
		case r.Key == "budget" && r.Status == http.StatusTooManyRequests:
			refused = r.Requests
		}
	}
	if ok != int64(sent) || refused != 1 {
		t.Errorf("ledger rows %+v: want %d answered and 1 refused", rows, sent)
	}
}

// TestLedgerMatchesUpstreamUsage sends every client dialect to every
// upstream dialect and checks the ledger record by
// record against the usage each fake upstream reported, for whole
// replies; TestStreamCharges covers streams. (issue 20)
func TestLedgerMatchesUpstreamUsage(t *testing.T) {
	g, st := governedGateway(t, "")
	type sent struct{ in, out int64 }
	want := map[string]sent{}
	var mu sync.Mutex
	for _, a := range dialectList {
		for _, b := range dialectList {
			resp, body := dialectCall(t, g.url, a.name, clientKey, "via-"+b.name)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s → %s: %d %s", a.name, b.name, resp.StatusCode, body)
			}
			u := upstreamAnswer(t, "text", b, false).GetUsage()
			mu.Lock()
			w := want["via-"+b.name]
			w.in += u.GetInputTokens()
			w.out += u.GetOutputTokens()
			want["via-"+b.name] = w
			mu.Unlock()
		}
	}
	if err := g.server.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Usage(context.Background(), store.UsageQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), GroupBy: []string{store.GroupModel, store.GroupUpstream}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(dialectList) {
		t.Fatalf("rows = %+v", rows)
	}
	for _, r := range rows {
		w := want[r.Model]
		if r.Requests != int64(len(dialectList)) || r.InputTokens != w.in || r.OutputTokens != w.out || r.Upstream != "fake-"+strings.TrimPrefix(r.Model, "via-") {
			t.Errorf("ledger %+v, want %d requests, %d in, %d out", r, len(dialectList), w.in, w.out)
		}
	}
}

// TestStreamCharges streams every client dialect from every upstream
// dialect through the official SDKs and checks the ledger against the
// usage the fake upstreams' streams reported; then cuts a stream after
// its first words and checks that the key is charged what was produced.
// (issue 20)
func TestStreamCharges(t *testing.T) {
	g, st := governedGateway(t, "")
	want := map[string][2]int64{}
	for _, a := range dialectList {
		for _, b := range dialectList {
			res := sdks[a.name](t, g.url, clientKey, "via-"+b.name, fixture(t, "text", a.name, "request.json"), true)
			if res.err != nil {
				t.Fatalf("%s → %s: %v", a.name, b.name, res.err)
			}
			u := upstreamAnswer(t, "text", b, true).GetUsage()
			w := want["via-"+b.name]
			want["via-"+b.name] = [2]int64{w[0] + u.GetInputTokens(), w[1] + u.GetOutputTokens()}
		}
	}
	// A stream the client leaves after its first words.
	g.fakes["messages"].set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_cut\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+strings.Repeat("word ", 40)+"\"}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	body := withModel(t, fixture(t, "text", "chat_completions", "request.json"), "via-messages", true)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.url+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var got []byte
	for !bytes.Contains(got, []byte("word")) {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("the stream ended before its words: %v %s", err, got)
		}
	}
	cancel()
	_ = resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	var rows []store.UsageRow
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		rows, err = st.Usage(context.Background(), store.UsageQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), Status: 499})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 && rows[0].Requests == 1 {
			break
		}
	}
	if len(rows) != 1 || rows[0].Requests != 1 || rows[0].InputTokens != 30 || rows[0].OutputTokens != 50 {
		t.Errorf("the cut stream's ledger = %+v, want 30 input tokens and the 50 produced (200 bytes)", rows)
	}
	// A stream the upstream cuts after its first words: the client gets
	// the dialect's error event, and the key is charged what was produced,
	// under the error's status.
	g.fakes["messages"].set("text", func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_cut\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+strings.Repeat("word ", 40)+"\"}}\n\n")
	})
	req, _ = http.NewRequest(http.MethodPost, g.url+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cutBody, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !bytes.Contains(cutBody, []byte(`"error"`)) {
		t.Errorf("the cut stream did not end with an error: %s", cutBody)
	}
	if err := g.server.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err = st.Usage(context.Background(), store.UsageQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), GroupBy: []string{store.GroupStatus}})
	if err != nil {
		t.Fatal(err)
	}
	if last := rows[len(rows)-1]; len(rows) != 3 || last.Status < 500 || last.InputTokens != 30 || last.OutputTokens != 50 {
		t.Errorf("the stream cut by the upstream: ledger rows by status %+v, want one 5xx with 30 in and 50 out", rows)
	}
	rows, err = st.Usage(context.Background(), store.UsageQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), GroupBy: []string{store.GroupModel}, Status: http.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(dialectList) {
		t.Fatalf("rows = %+v", rows)
	}
	for _, r := range rows {
		if w := want[r.Model]; r.InputTokens != w[0] || r.OutputTokens != w[1] {
			t.Errorf("%s: the ledger has %d in, %d out; the streams reported %d, %d", r.Model, r.InputTokens, r.OutputTokens, w[0], w[1])
		}
	}
}

// waitUntil polls cond for up to 5s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not within 5s")
		}
	}
}

// TestTaskLimits refuses a music task submission over its key's
// requests_per_minute with the music interface's rate_limited envelope,
// status 429 and Retry-After, before the music service hears of it; so
// does the Connect TaskService. (issue 20)
func TestTaskLimits(t *testing.T) {
	g := startMusic(t, musicOpts{keys: "  - {name: paced, key: sk-paced-music-0001, limits: {requests_per_minute: 1}}\n"})
	g.submit(t, "/songgen/submit/lyrics", "sk-paced-music-0001", `{"prompt":"rain"}`)
	before := len(g.fake.submitted())
	r := g.call(t, http.MethodPost, "/songgen/submit/lyrics", "sk-paced-music-0001", `{"prompt":"snow"}`)
	if r.Status != http.StatusTooManyRequests || r.Code != "rate_limited" || !strings.Contains(r.Message, "requests_per_minute") || r.Header.Get("Retry-After") == "" {
		t.Errorf("the second submission: %d %s %q, Retry-After %q", r.Status, r.Code, r.Message, r.Header.Get("Retry-After"))
	}
	c := parleyv1connect.NewTaskServiceClient(http.DefaultClient, g.url, connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, r connect.AnyRequest) (connect.AnyResponse, error) {
			r.Header().Set("Authorization", "Bearer sk-paced-music-0001")
			return next(ctx, r)
		}
	})))
	_, err := c.SubmitTask(context.Background(), connect.NewRequest(&parleyv1.SubmitTaskRequest{Input: &parleyv1.TaskInput{
		Kind: &parleyv1.TaskInput_Lyrics{Lyrics: &parleyv1.LyricsInput{Prompt: "sleet"}},
	}}))
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Errorf("the Connect submission: %v", err)
	}
	if n := len(g.fake.submitted()); n != before {
		t.Errorf("the music service got %d more submissions", n-before)
	}
	// The ledger counts submissions per key and operation, refused ones
	// under their status.
	g.stop()
	st, err := sqlite.Open(context.Background(), filepath.Join(g.dir, "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	rows, err := st.Usage(context.Background(), store.UsageQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour),
		GroupBy: []string{store.GroupKey, store.GroupOperation, store.GroupStatus}, Key: "paced"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Operation != "submit_lyrics" || rows[0].Status != 200 || rows[0].Requests != 1 || rows[1].Status != 429 || rows[1].Requests != 2 {
		t.Errorf("the ledger's task rows = %+v", rows)
	}
}

// tokenKeys are keys with a small tokens_per_minute, one per dialect.
func tokenKeys() string {
	var b strings.Builder
	for _, d := range dialectList {
		fmt.Fprintf(&b, "  - {name: tokens-%s, key: sk-tokens-%s-0123456789, limits: {tokens_per_minute: 20}}\n", d.name, d.name)
	}
	return b.String()
}

// TestTokenLimitsThroughSDKs spends a key's tokens_per_minute in every
// client dialect: the upstream reports 17 tokens for the first request,
// and the second, whose estimate no longer fits the minute, is refused as
// the dialect's token rate limit through its official SDK. (issue 20)
func TestTokenLimitsThroughSDKs(t *testing.T) {
	g := startGateway(t, gwExtra{keys: tokenKeys()})
	for _, d := range dialectList {
		t.Run(d.name, func(t *testing.T) {
			key, model := "sk-tokens-"+d.name+"-0123456789", "via-"+d.name
			body := fixture(t, "text", d.name, "request.json")
			if res := sdks[d.name](t, g.url, key, model, body, true); res.err != nil {
				t.Fatalf("the first request: %v", res.err)
			}
			res := sdks[d.name](t, g.url, key, model, body, false)
			if res.status != http.StatusTooManyRequests {
				t.Fatalf("the second request: %v (status %d)", res.err, res.status)
			}
			msg := res.err.Error()
			var oe *openai.Error
			if errors.As(res.err, &oe) {
				msg = oe.Message
				if oe.Type != "tokens" || oe.Code != "rate_limit_exceeded" {
					t.Errorf("the OpenAI error = type %q code %q", oe.Type, oe.Code)
				}
			}
			if !strings.Contains(msg, "tokens_per_minute") {
				t.Errorf("the refusal does not name the limit: %s", msg)
			}
			if n := len(g.fakes[d.name].requests()); n != 1 {
				t.Errorf("the upstream got %d requests, want 1", n)
			}
		})
	}
}
