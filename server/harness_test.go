package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/dispatch"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/server"
	"github.com/parleyhq/parley/store/sqlite"
	"github.com/parleyhq/parley/stored"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
)

// tableDir holds recorded wire traffic of each dialect per scenario: the
// client request, the upstream's whole reply, its stream and its error.
const tableDir = "../testdata/cross_table"

const clientKey = "sk-parley-test-key-0001"

type dialect struct {
	name     string
	client   translate.Client
	upstream translate.Upstream
}

var dialectList = []dialect{
	{"messages", messages.Client{}, messages.Upstream{}},
	{"generate_content", generatecontent.Client{}, generatecontent.Upstream{}},
	{"responses", responses.Client{}, responses.Upstream{}},
	{"chat_completions", chatcompletions.Client{}, chatcompletions.Upstream{}},
}

func upstreamKey(d string) string { return "up-key-" + d }

func fixture(t testing.TB, scenario, d, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tableDir, scenario, d, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// received is one request as a fake upstream saw it.
type received struct {
	Method, Path string
	Query        map[string][]string
	Header       http.Header
	Body         []byte
}

// fakeUpstream speaks one dialect faithfully by replaying the recorded
// traffic of a scenario. It checks the upstream key where the dialect
// puts it (401 otherwise) and that a content-generation stream asks for
// ?alt=sse (400 otherwise), and records what it received.
type fakeUpstream struct {
	t       testing.TB
	dialect string
	srv     *httptest.Server

	mu       sync.Mutex
	scenario string
	got      []received
	// handle, when set, answers instead of the recordings.
	handle func(w http.ResponseWriter, r *http.Request, n int)
}

func newFake(t testing.TB, d string) *fakeUpstream {
	f := &fakeUpstream{t: t, dialect: d, scenario: "text"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeUpstream) set(scenario string, handle func(http.ResponseWriter, *http.Request, int)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scenario, f.handle, f.got = scenario, handle, nil
}

func (f *fakeUpstream) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

func (f *fakeUpstream) keyOK(r *http.Request) bool {
	want := upstreamKey(f.dialect)
	switch f.dialect {
	case "messages":
		return r.Header.Get("x-api-key") == want
	case "generate_content":
		return r.Header.Get("x-goog-api-key") == want || r.URL.Query().Get("key") == want
	}
	return r.Header.Get("Authorization") == "Bearer "+want
}

func (f *fakeUpstream) isStream(r *http.Request, body []byte) bool {
	if f.dialect == "generate_content" {
		return strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	}
	var b struct{ Stream bool }
	_ = json.Unmarshal(body, &b)
	return b.Stream
}

func (f *fakeUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.got = append(f.got, received{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	n, scenario, handle := len(f.got), f.scenario, f.handle
	f.mu.Unlock()
	if !f.keyOK(r) {
		http.Error(w, `{"error":{"message":"bad upstream key","type":"authentication_error"}}`, http.StatusUnauthorized)
		return
	}
	if handle != nil {
		handle(w, r, n)
		return
	}
	if count, ok := countReplies[f.dialect]; ok && isCountPath(r.URL.Path) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, count)
		return
	}
	stream := f.isStream(r, body)
	if stream && f.dialect == "generate_content" && r.URL.Query().Get("alt") != "sse" {
		http.Error(w, `{"error":{"code":400,"message":"stream without alt=sse","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	if scenario == "errors" {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write(fixture(f.t, scenario, f.dialect, "error.json"))
		return
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixture(f.t, scenario, f.dialect, "response.json"))
		return
	}
	writeStream(w, fixture(f.t, scenario, f.dialect, "stream.sse"), nil)
}

// countReplies are each dialect's count-tokens replies, as the services
// document them; every one says 42.
var countReplies = map[string]string{
	"messages":         `{"input_tokens":42}`,
	"generate_content": `{"totalTokens":42,"promptTokensDetails":[{"modality":"TEXT","tokenCount":42}]}`,
	"responses":        `{"object":"response.input_tokens","input_tokens":42}`,
}

func isCountPath(p string) bool {
	return strings.HasSuffix(p, "/count_tokens") || strings.HasSuffix(p, ":countTokens") || strings.HasSuffix(p, "/input_tokens")
}

// writeStream sends a recorded stream event by event, flushing each;
// between, when set, runs before each event after the first.
func writeStream(w http.ResponseWriter, stream []byte, between func(i int) bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	stream = bytes.ReplaceAll(stream, []byte("\r\n"), []byte("\n"))
	for i, ev := range bytes.SplitAfter(stream, []byte("\n\n")) {
		if len(bytes.TrimSpace(ev)) == 0 {
			continue
		}
		if i > 0 && between != nil && !between(i) {
			return
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		_ = rc.Flush()
	}
}

// gateway is Parley in front of one fake upstream per dialect, each
// reachable as the model "via-<dialect>".
type gateway struct {
	url   string
	fakes map[string]*fakeUpstream
	d     *dispatch.Dispatcher
	// stop closes the server and its store, as a shutdown does.
	stop   func()
	server *server.Server
}

// gwExtra is configuration added to the gateway's: top-level keys, more
// upstreams and more models, as YAML lines.
type gwExtra struct {
	top, upstreams, models string
	// idle is the fake upstreams' idle_timeout; 2s when empty.
	idle string
	// dataDir, when set, holds the store of responses.
	dataDir string
	// fakes, when set, are the upstreams to use (a restart keeps them).
	fakes map[string]*fakeUpstream
	// logger, when set, receives the server's log lines.
	logger *slog.Logger
	// keys are more client keys, as YAML list items.
	keys string
	// options, when set, changes the server's options before it starts.
	options func(*server.Options)
}

func startGateway(t testing.TB, extra gwExtra) *gateway {
	g := &gateway{fakes: map[string]*fakeUpstream{}}
	var b strings.Builder
	fmt.Fprintf(&b, "keys:\n  - {name: test, key: %s}\n  - {name: narrow, key: sk-narrow-key-0001, models: [\"via-m*\"]}\n%supstreams:\n", clientKey, extra.keys)
	if extra.idle == "" {
		extra.idle = "2s"
	}
	for _, d := range dialectList {
		if f := extra.fakes[d.name]; f != nil {
			g.fakes[d.name] = f
		} else {
			g.fakes[d.name] = newFake(t, d.name)
		}
		fmt.Fprintf(&b, "  - {name: fake-%s, dialect: %s, base_url: %q, api_key: %s, max_retries: 0, idle_timeout: %s}\n",
			d.name, d.name, g.fakes[d.name].srv.URL, upstreamKey(d.name), extra.idle)
	}
	b.WriteString(extra.upstreams)
	b.WriteString("models:\n")
	for _, d := range dialectList {
		fmt.Fprintf(&b, "  - {name: via-%s, upstream: fake-%s, upstream_model: %s}\n", d.name, d.name, upstreamModel[d.name])
	}
	b.WriteString(extra.models)
	b.WriteString(extra.top)
	cfg, err := config.Parse("e2e.yaml", []byte(b.String()), func(string) (string, bool) { return "", false }, dialects.All().Names())
	if err != nil {
		t.Fatal(err)
	}
	g.d, err = dispatch.FromConfig(cfg, dialects.All(), dispatch.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.d.Backoff = func(int) time.Duration { return time.Millisecond }
	opts := server.Options{Config: cfg, Dispatcher: g.d, Dialects: dialects.All(), Logger: extra.logger}
	var st *sqlite.SQLite
	if extra.dataDir != "" {
		if st, err = sqlite.Open(context.Background(), filepath.Join(extra.dataDir, "parley.db")); err != nil {
			t.Fatal(err)
		}
		opts.Stored = stored.New(stored.Options{
			Store: st, Retention: cfg.Responses.Retention.D(), SweepInterval: cfg.Responses.SweepInterval.D(),
			Window: g.d.Router().ContextWindow,
		})
	}
	if extra.options != nil {
		extra.options(&opts)
	}
	g.server = server.New(opts)
	srv := startServer(t, g.server)
	g.url = srv.URL
	var once sync.Once
	g.stop = func() {
		once.Do(func() {
			srv.Close()
			_ = g.server.Close(context.Background())
			if st != nil {
				_ = st.Close()
			}
		})
	}
	t.Cleanup(g.stop)
	return g
}

// startServer serves h on a loopback port as parley serve does: HTTP/1.1
// and cleartext HTTP/2.
func startServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = server.Protocols()
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

var upstreamModel = map[string]string{
	"messages": "claude-sonnet-4-5", "generate_content": "gemini-2.5-flash", "responses": "gpt-5", "chat_completions": "gpt-4.1",
}

// answer is what a client learns from a reply, in terms every dialect
// can state.
type answer struct {
	Text      string
	Calls     []call
	Finish    string // stop, tool, length
	In, Out   int64
	Reasoning bool
}

type call struct {
	Name string
	Args map[string]any
}

func parseArgs(t testing.TB, s string) map[string]any {
	t.Helper()
	if s == "" {
		return map[string]any{}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("tool arguments %q are not a JSON object: %v", s, err)
	}
	return m
}

// answerOf states a canonical response as an answer.
func answerOf(t testing.TB, r *parleyv1.Response) answer {
	var a answer
	c := r.GetCandidates()[0]
	for _, p := range c.GetParts() {
		switch {
		case p.GetText() != nil:
			a.Text += p.GetText().GetText()
		case p.GetToolCall() != nil:
			a.Calls = append(a.Calls, call{p.GetToolCall().GetName(), parseArgs(t, p.GetToolCall().GetArguments())})
		case p.GetReasoning() != nil:
			a.Reasoning = a.Reasoning || p.GetReasoning().GetText() != "" || len(p.GetReasoning().GetSummary()) > 0
		}
	}
	switch c.GetFinishReason() {
	case parleyv1.FinishReason_FINISH_REASON_TOOL_USE:
		a.Finish = "tool"
	case parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS:
		a.Finish = "length"
	default:
		a.Finish = "stop"
	}
	if len(a.Calls) > 0 && a.Finish == "stop" {
		a.Finish = "tool"
	}
	a.In, a.Out = r.GetUsage().GetInputTokens(), r.GetUsage().GetOutputTokens()
	return a
}

// expected is the answer a scenario's upstream of dialect d gives, whole
// or streamed, read by that dialect's own decoder.
func expected(t testing.TB, scenario string, d dialect, stream bool) answer {
	t.Helper()
	return answerOf(t, upstreamAnswer(t, scenario, d, stream))
}

// upstreamAnswer is a scenario's answer as the upstream of dialect d
// gives it, whole or streamed, read by that dialect's decoder.
func upstreamAnswer(t testing.TB, scenario string, d dialect, stream bool) *parleyv1.Response {
	t.Helper()
	tg := translate.Target{Upstream: "fake-" + d.name, Model: upstreamModel[d.name]}
	if !stream {
		r, err := d.upstream.DecodeResponse(tg, fixture(t, scenario, d.name, "response.json"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	acc := translate.NewAccumulator()
	for ev, err := range translate.DecodeStream(d.upstream.Dialect(), bytes.NewReader(fixture(t, scenario, d.name, "stream.sse")), d.upstream.NewStreamDecoder(tg), translate.StreamLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	return acc.Response()
}

// asked is what a request asks, in terms every dialect can state.
type asked struct {
	System  string
	User    []string
	Calls   []string
	Results int
	Media   int
	Tools   []string
}

func askedOf(r *parleyv1.Request) asked {
	var a asked
	sys := func(ps []*parleyv1.Part) {
		for _, p := range ps {
			a.System += p.GetText().GetText()
		}
	}
	sys(r.GetInstructions())
	for _, m := range r.GetMessages() {
		if m.GetRole() == parleyv1.Role_ROLE_SYSTEM || m.GetRole() == parleyv1.Role_ROLE_DEVELOPER {
			sys(m.GetParts())
			continue
		}
		for _, p := range m.GetParts() {
			switch {
			case p.GetText() != nil && m.GetRole() == parleyv1.Role_ROLE_USER:
				a.User = append(a.User, p.GetText().GetText())
			case p.GetToolCall() != nil:
				a.Calls = append(a.Calls, p.GetToolCall().GetName())
			case p.GetToolResult() != nil:
				a.Results++
			case p.GetMedia() != nil:
				a.Media++
			}
		}
	}
	for _, tl := range r.GetTools() {
		a.Tools = append(a.Tools, tl.GetFunction().GetName())
	}
	return a
}

// decodeAt decodes a request body as a client of d sent it.
func decodeAt(t testing.TB, d dialect, rec received) *parleyv1.Request {
	t.Helper()
	in := &translate.Incoming{Header: rec.Header, Query: rec.Query, Body: rec.Body}
	if d.name == "generate_content" {
		call := strings.TrimPrefix(rec.Path, "/v1beta/")
		model, method, _ := strings.Cut(call, ":")
		in.Model, in.Stream = model, method == "streamGenerateContent"
	}
	r, err := d.client.DecodeRequest(in)
	if err != nil {
		t.Fatalf("the %s upstream got a request its own decoder rejects: %v\n%s", d.name, err, rec.Body)
	}
	return r
}
