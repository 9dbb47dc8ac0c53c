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
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

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
	g := startGateway(t, gwExtra{keys: keys, top: "admin:\n  keys: [" + adminKey + "]\n", options: func(o *server.Options) {
		o.Keys, o.Ledger, o.LedgerFlush, o.KeyRefresh = st, st, 10*time.Millisecond, 50*time.Millisecond
	}})
	t.Cleanup(func() { _ = st.Close() })
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

// adminDo calls the admin API.
func adminDo(t *testing.T, gw, method, path, key, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, gw+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	} else {
		m = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, m, resp.Header
}

// TestAdminKeys creates, lists, changes and revokes a managed key through
// the admin API, and uses it through a client dialect in between: the
// secret is shown once, limits set by PATCH hold at once, a revoked key is
// refused. Bad bodies get 400 naming the field and create nothing; client
// keys get 401. (issue 20)
func TestAdminKeys(t *testing.T) {
	g, st := governedGateway(t, "")
	status, created, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey,
		`{"name":"team-a","models":["via-*"],"metadata":{"team":"a","owner":"ana"},"limits":{"requests_per_minute":100,"budget":{"usd":5,"per":"day"}}}`)
	secret, _ := created["key"].(string)
	if status != http.StatusCreated || !strings.HasPrefix(secret, "prly_") || created["hint"] != secret[:11] {
		t.Fatalf("create: %d %v", status, created)
	}
	if resp, body := dialectCall(t, g.url, "responses", secret, "via-chat_completions"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the new key: %d %s", resp.StatusCode, body)
	}
	status, list, _ := adminDo(t, g.url, "GET", "/admin/v1/keys", adminKey, "")
	data, _ := list["data"].([]any)
	if status != http.StatusOK || len(data) != 1 || strings.Contains(fmt.Sprint(list), secret) {
		t.Fatalf("list: %d %v (the secret must not be listed)", status, list)
	}
	// A limit set by PATCH holds at once on this replica, counting the
	// request already made this minute.
	status, patched, _ := adminDo(t, g.url, "PATCH", "/admin/v1/keys/team-a", adminKey, `{"limits":{"requests_per_minute":2},"metadata":null}`)
	// A merge patch: the budget the patch does not name stays.
	if lim, _ := patched["limits"].(map[string]any); status != http.StatusOK || patched["metadata"] != nil || lim["requests_per_minute"] != float64(2) || lim["budget"] == nil {
		t.Fatalf("patch: %d %v", status, patched)
	}
	if resp, _ := dialectCall(t, g.url, "responses", secret, "via-chat_completions"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the second request under the new limit: %d", resp.StatusCode)
	}
	if resp, _ := dialectCall(t, g.url, "responses", secret, "via-chat_completions"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the third request under a limit of 2: %d", resp.StatusCode)
	}
	status, revoked, _ := adminDo(t, g.url, "DELETE", "/admin/v1/keys/team-a", adminKey, "")
	if status != http.StatusOK || revoked["revoked_at"] == nil {
		t.Fatalf("revoke: %d %v", status, revoked)
	}
	if resp, _ := dialectCall(t, g.url, "messages", secret, "via-messages"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a revoked key: %d", resp.StatusCode)
	}
	if status, _, _ := adminDo(t, g.url, "DELETE", "/admin/v1/keys/team-a", adminKey, ""); status != http.StatusNotFound {
		t.Errorf("revoking twice: %d", status)
	}
	if status, _, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey, `{"name":"team-a"}`); status != http.StatusConflict {
		t.Errorf("a revoked key's name again: %d", status)
	}
	if status, _, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey, `{"name":"test"}`); status != http.StatusConflict {
		t.Errorf("the name of a configured key: %d", status)
	}

	for _, tc := range []struct{ body, field string }{
		{`{"name":""}`, "name"},
		{`{"name":"has space"}`, "name"},
		{`{"name":"x","limits":{"requests_per_minute":-1}}`, "limits.requests_per_minute"},
		{`{"name":"x","limits":{"requests_per_minute":"many"}}`, "limits.requests_per_minute"},
		{`{"name":"x","limits":{"budget":{"usd":5}}}`, "limits.budget.per"},
		{`{"name":"x","limits":{"budget":{"usd":5,"per":"year"}}}`, "limits.budget.per"},
		{`{"name":"x","limits":{"budget":{"usd":5,"tokens":5,"per":"day"}}}`, "limits.budget"},
		{`{"name":"x","models":["[bad"]}`, "models[0]"},
		{`{"name":"x","colour":"red"}`, "colour"},
		{`{"name":"x","key":"prly_chosen"}`, "key"},
		{`{"name":"x","expires_at":"tomorrow"}`, "expires_at"},
	} {
		status, body, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey, tc.body)
		e, _ := body["error"].(map[string]any)
		if status != http.StatusBadRequest || e["field"] != tc.field {
			t.Errorf("%s: %d %v, want 400 naming %s", tc.body, status, body, tc.field)
		}
	}
	if status, body, _ := adminDo(t, g.url, "POST", "/admin/v1/keys", adminKey, `{"name":`); status != http.StatusBadRequest {
		t.Errorf("a truncated body: %d %v", status, body)
	}
	if ks, _ := st.ManagedKeys(context.Background()); len(ks) != 1 {
		t.Errorf("bad bodies created keys: %d keys", len(ks))
	}
	// Only admin keys.
	for _, key := range []string{"", clientKey, "admin-0123456789abcdeX"} {
		if status, _, _ := adminDo(t, g.url, "GET", "/admin/v1/keys", key, ""); status != http.StatusUnauthorized {
			t.Errorf("key %q: %d, want 401", key, status)
		}
	}
}

// TestAdminOff answers 404 under /admin/ when no admin key is configured.
func TestAdminOff(t *testing.T) {
	g := startGateway(t, gwExtra{})
	for _, p := range []string{"/admin/v1/keys", "/admin/v1/usage", "/admin/"} {
		if status, _, _ := adminDo(t, g.url, "GET", p, clientKey, ""); status != http.StatusNotFound {
			t.Errorf("%s: %d", p, status)
		}
	}
}

// TestAdminUsage reads the ledger back grouped, as JSON and as CSV, with
// bad queries named. (issue 20)
func TestAdminUsage(t *testing.T) {
	g, _ := governedGateway(t, "")
	for range 3 {
		dialectCall(t, g.url, "messages", clientKey, "via-messages")
	}
	dialectCall(t, g.url, "chat_completions", clientKey, "via-responses")
	deadline := time.Now().Add(5 * time.Second)
	var body map[string]any
	for time.Now().Before(deadline) {
		var status int
		status, body, _ = adminDo(t, g.url, "GET", "/admin/v1/usage?group_by=key,model,day", adminKey, "")
		if status != http.StatusOK {
			t.Fatalf("usage: %d %v", status, body)
		}
		if data, _ := body["data"].([]any); len(data) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	data, _ := body["data"].([]any)
	if len(data) != 2 {
		t.Fatalf("usage = %v", body)
	}
	first := data[0].(map[string]any)
	if first["key"] != "test" || first["model"] != "via-messages" || first["requests"] != float64(3) || first["input_tokens"] != float64(36) ||
		first["day"] != time.Now().UTC().Format(time.DateOnly) || first["upstream"] != nil || first["status"] != nil {
		t.Errorf("first row = %v", first)
	}
	req, _ := http.NewRequest("GET", g.url+"/admin/v1/usage?group_by=model", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("Accept", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" || len(lines) != 3 ||
		lines[0] != "model,requests,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,cost_usd,duration_ms" ||
		!strings.HasPrefix(lines[1], "via-messages,3,36,15,") {
		t.Errorf("CSV = %s", raw)
	}
	for _, q := range []string{"group_by=colour", "from=yesterday", "status=abc", "from=2026-01-02&to=2026-01-01"} {
		status, body, _ := adminDo(t, g.url, "GET", "/admin/v1/usage?"+q, adminKey, "")
		e, _ := body["error"].(map[string]any)
		if status != http.StatusBadRequest || e["field"] == nil {
			t.Errorf("%s: %d %v", q, status, body)
		}
	}
}

// TestAdminService drives the Connect AdminService: create with a secret
// shown once, update by field mask, usage, revoke; bad requests name the
// field; client keys are refused. A Connect generation call over its key's
// limit gets resource_exhausted. (issue 20)
func TestAdminService(t *testing.T) {
	g, _ := governedGateway(t, "")
	ctx := context.Background()
	auth := func(key string) connect.ClientOption {
		return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, r connect.AnyRequest) (connect.AnyResponse, error) {
				r.Header().Set("Authorization", "Bearer "+key)
				return next(ctx, r)
			}
		}))
	}
	c := parleyv1connect.NewAdminServiceClient(http.DefaultClient, g.url, auth(adminKey))
	created, err := c.CreateKey(ctx, connect.NewRequest(&parleyv1.CreateKeyRequest{Key: &parleyv1.ManagedKey{
		Name: "rpc", Limits: &parleyv1.KeyLimits{RequestsPerMinute: proto.Int64(1)},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	secret := created.Msg.GetKey().GetKey()
	if !strings.HasPrefix(secret, "prly_") {
		t.Fatalf("created = %v", created.Msg)
	}
	gen := parleyv1connect.NewGenerationServiceClient(http.DefaultClient, g.url, auth(secret))
	req := &parleyv1.GenerateRequest{Request: &parleyv1.Request{Model: "via-messages", Messages: []*parleyv1.Message{{
		Role: parleyv1.Role_ROLE_USER, Parts: []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: "hi"}}}},
	}}}}
	if _, err := gen.Generate(ctx, connect.NewRequest(req)); err != nil {
		t.Fatalf("the first call: %v", err)
	}
	_, err = gen.Generate(ctx, connect.NewRequest(req))
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(err.Error(), "requests_per_minute") {
		t.Fatalf("the second call over 1 per minute: %v", err)
	}
	up, err := c.UpdateKey(ctx, connect.NewRequest(&parleyv1.UpdateKeyRequest{
		Key:        &parleyv1.ManagedKey{Name: "rpc", Metadata: map[string]string{"team": "b"}},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"metadata"}},
	}))
	if err != nil || up.Msg.GetKey().GetMetadata()["team"] != "b" || up.Msg.GetKey().GetLimits().GetRequestsPerMinute() != 1 {
		t.Fatalf("update: %v %v", up, err)
	}
	_, err = c.UpdateKey(ctx, connect.NewRequest(&parleyv1.UpdateKeyRequest{
		Key: &parleyv1.ManagedKey{Name: "rpc"}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"name"}},
	}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("a mask naming name: %v", err)
	}
	_, err = c.CreateKey(ctx, connect.NewRequest(&parleyv1.CreateKeyRequest{Key: &parleyv1.ManagedKey{Name: "x", Limits: &parleyv1.KeyLimits{
		Budget: &parleyv1.Budget{Usd: proto.Float64(5)},
	}}}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "key.limits.budget.per") {
		t.Errorf("a budget without a period: %v", err)
	}
	list, err := c.ListKeys(ctx, connect.NewRequest(&parleyv1.ListKeysRequest{}))
	if err != nil || len(list.Msg.GetKeys()) != 1 || list.Msg.GetKeys()[0].GetKey() != "" {
		t.Fatalf("list: %v %v", list, err)
	}
	if _, err := c.RevokeKey(ctx, connect.NewRequest(&parleyv1.RevokeKeyRequest{Name: "rpc"})); err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(ctx, connect.NewRequest(req)); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("a revoked key: %v", err)
	}
	var usage *connect.Response[parleyv1.QueryUsageResponse]
	waitUntil(t, func() bool {
		usage, err = c.QueryUsage(ctx, connect.NewRequest(&parleyv1.QueryUsageRequest{
			StartTime: timestamppb.New(time.Now().Add(-time.Hour)), GroupBy: []string{"key", "status"}, Key: "rpc",
		}))
		return err == nil && len(usage.Msg.GetRows()) == 2
	})
	if rows := usage.Msg.GetRows(); rows[0].GetStatus() != 200 || rows[0].GetRequests() != 1 || rows[1].GetStatus() != 429 {
		t.Errorf("usage = %v", rows)
	}
	client := parleyv1connect.NewAdminServiceClient(http.DefaultClient, g.url, auth(clientKey))
	if _, err := client.ListKeys(ctx, connect.NewRequest(&parleyv1.ListKeysRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("a client key on the admin service: %v", err)
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

// TestGovernanceMetrics checks the Prometheus series: tokens and cost by
// key name and model, refusals by key and limit, never a secret; the
// ledger's cost is the model's pricing of the upstream's usage. (issue 20)
func TestGovernanceMetrics(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	g := startGateway(t, gwExtra{
		keys:   "  - {name: metered, key: sk-metered-0123456789, limits: {budget: {usd: 0.00001, per: month}}}\n",
		models: "  - {name: priced, upstream: fake-messages, upstream_model: claude-sonnet-4-5, pricing: {input: 3.00, output: 15.00}}\n",
		options: func(o *server.Options) {
			o.Ledger, o.LedgerFlush = st, 10*time.Millisecond
		},
	})
	if resp, body := dialectCall(t, g.url, "chat_completions", "sk-metered-0123456789", "priced"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the first request: %d %s", resp.StatusCode, body)
	}
	// 12 × $3 + 5 × $15 per million: $0.000111, over the budget of $0.00001.
	if resp, body := dialectCall(t, g.url, "chat_completions", "sk-metered-0123456789", "priced"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the second request over a spent budget: %d %s", resp.StatusCode, body)
	}
	resp, err := http.Get(g.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	metrics := string(raw)
	for _, want := range []string{
		`parley_key_tokens_total{key="metered",kind="input",model="priced"} 12`,
		`parley_key_tokens_total{key="metered",kind="output",model="priced"} 5`,
		`parley_key_cost_usd_total{key="metered",model="priced"} 0.000111`,
		`parley_limit_refusals_total{key="metered",limit="budget"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(metrics, "parley_key_"))
		}
	}
	if strings.Contains(metrics, "sk-metered") {
		t.Error("/metrics holds a client key")
	}
	if err := g.server.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Usage(context.Background(), store.UsageQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), Status: http.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].CostNanos != 111_000 {
		t.Errorf("the ledger's cost = %+v, want 111000 nano-USD", rows)
	}
}
