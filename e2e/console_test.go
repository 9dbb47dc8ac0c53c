package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/store/postgres/pgtest"
)

// consoleAdminKey is the admin key the browser signs in with.
const consoleAdminKey = "admin-console-0123456789abcdef"

// The web console in a real headless Chromium (e2e/console/console.spec.mjs,
// driven by playwright-core): sign-in, the overview with its chart and live
// figures, creating, editing and revoking a key, a bad value's field error,
// usage with its CSV export, models and routes, try-it (a prompt through a
// chosen dialect, both sides shown, the reply streamed), the music tasks
// with their callbacks, keyboard navigation, the first load's size, a
// keyless gateway's open console and a gateway without admin keys saying
// how to turn the console on. A key made in the console is used through
// the official OpenAI SDK, seen in the overview and the usage, revoked and
// refused. Then a fleet: two replicas on one PostgreSQL database, where
// what one replica serves shows in the other's console and a key made in
// one console works through the other replica; without PARLEY_TEST_POSTGRES
// that part is skipped, unless CI is set. It needs node, Chromium at
// /usr/bin/chromium (or $CHROMIUM) and `npm ci` run in e2e/console; without
// them it skips, unless CI is set. Its screenshots, one per page, are the
// test's artifacts: go test ./e2e -run TestConsole -artifacts -outputdir DIR
// keeps them.
func TestConsole(t *testing.T) {
	node := consoleTools(t)

	chat := consoleChatFake(t)
	music := newMusicFake(t)
	// The fleet's music fake makes songs; lyrics are submitted to it as
	// songs, so that its tasks finish alike.
	songs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/songgen/submit/lyrics" {
			r.URL.Path = "/songgen/submit/music"
		}
		music.srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(songs.Close)
	// Two callback receivers: one takes each callback, one refuses them
	// all (its callbacks stay pending, with their last error).
	var delivered atomic.Int32
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		delivered.Add(1)
	}))
	t.Cleanup(hooks.Close)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the receiver is down for maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(refusing.Close)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"the fake upstream fails on purpose","type":"server_error"}}`)
	}))
	t.Cleanup(flaky.Close)

	cfg := fmt.Sprintf(`keys:
  - {name: alice, key: %s}
  - {name: batch, key: sk-console-batch-0001}
upstreams:
  - {name: echo, dialect: echo}
  - {name: chat, dialect: chat_completions, base_url: %q, api_key: sk-chat-upstream}
  - {name: flaky, dialect: chat_completions, base_url: %q, api_key: sk-flaky-upstream, max_retries: 0}
  - {name: music, dialect: songgen, base_url: %q, api_key: sk-music-upstream}
models:
  - name: m
    upstream: chat
    context_window: 128000
    pricing: {input: 3.00, output: 15.00, cache_read: 0.30, cache_write: 3.75}
  - name: echo
    upstream: echo
    pricing: {input: 1.00, output: 2.00}
  - name: mixed
    context_window: 32000
    routes:
      - {upstream: chat, upstream_model: m, weight: 3}
      - {upstream: echo, upstream_model: echo, weight: 1}
      - {upstream: flaky, upstream_model: m, weight: 1}
  - name: flaky
    upstream: flaky
admin:
  keys: [${PARLEY_ADMIN_KEY}]
ledger:
  flush_interval: 100ms
songgen:
  poll_interval: 200ms
  allow_private_hooks: true
`, clientKey, chat.URL, flaky.URL, songs.URL)
	// The default store: SQLite under the process's directory.
	g := start(t, writeConfig(t, cfg), t.TempDir(), "PARLEY_ADMIN_KEY="+consoleAdminKey)
	g.waitReady(t)

	// A gateway with no key of any kind: its console opens without sign-in.
	open := start(t, writeConfig(t, "upstreams:\n  - {name: echo, dialect: echo}\nmodels:\n  - {name: echo, upstream: echo}\n"), t.TempDir())
	open.waitReady(t)
	// A gateway with client keys and no admin key: no admin API, no console.
	off := start(t, writeConfig(t, fmt.Sprintf("keys:\n  - {name: alice, key: %s}\nupstreams:\n  - {name: echo, dialect: echo}\nmodels:\n  - {name: echo, upstream: echo}\n", clientKey)), t.TempDir())
	off.waitReady(t)

	// The fleet: two replicas sharing one PostgreSQL database (keys, ledger),
	// each with the same admin key. Without a database it is left out
	// (pgtest.DSN would skip the whole test), unless CI is set.
	var fleet []*replica
	if os.Getenv(pgtest.Env) != "" || os.Getenv("CI") != "" {
		fleet = consoleFleet(t, pgtest.DSN(t), chat.URL)
	} else {
		t.Logf("the fleet's part is skipped: set %s=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run it", pgtest.Env)
	}

	// Traffic for the ledger and the live figures: answers, streams and
	// failures, through two keys.
	sent := 0
	send := func(r *replica, key, model string, stream bool, want int) {
		t.Helper()
		body := fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"hello console"}]}`, model, stream)
		status, reply := r.post(t, key, body)
		if status != want && (want != 0 || status < 500) {
			t.Fatalf("%s through %s: %d %s, want %d (0: any 5xx)", model, r.url, status, reply, want)
		}
		if r == g {
			sent++
		}
	}
	for i := range 6 {
		send(g, clientKey, "m", false, http.StatusOK)
		send(g, "sk-console-batch-0001", "echo", i%2 == 0, http.StatusOK)
	}
	for range 4 {
		send(g, clientKey, "mixed", false, http.StatusOK)
	}
	send(g, "sk-console-batch-0001", "flaky", false, 0)
	send(open, "", "echo", false, http.StatusOK)

	// Music tasks, each a line in the ledger too: lyrics, lyrics called
	// back, and a song whose callbacks are refused.
	var taskIDs []string
	for _, sub := range []struct{ path, body string }{
		{"/songgen/submit/lyrics", `{"prompt":"rain on the console"}`},
		{"/songgen/submit/lyrics", fmt.Sprintf(`{"prompt":"a callback","notify_hook":%q}`, hooks.URL+"/done?token=not-shown")},
		{"/songgen/submit/music", fmt.Sprintf(`{"ai_description_prompt":"a song nobody hears of","notify_hook":%q}`, refusing.URL+"/hook")},
	} {
		status, out := g.call(t, http.MethodPost, sub.path, sub.body)
		id, _ := out["data"].(string)
		if status != http.StatusOK || id == "" {
			t.Fatalf("POST %s: %d %v", sub.path, status, out)
		}
		taskIDs = append(taskIDs, id)
		sent++
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range taskIDs {
		for {
			status, out := g.call(t, http.MethodGet, "/songgen/fetch/"+id, "")
			data, _ := out["data"].(map[string]any)
			if status == http.StatusOK && data["status"] == "SUCCESS" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s did not finish: %d %v", id, status, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(t, "a callback delivered and one refused", func() bool {
		if delivered.Load() == 0 {
			return false
		}
		var out struct {
			Data []struct {
				ID       string `json:"id"`
				Callback *struct {
					State     string `json:"state"`
					LastError string `json:"last_error"`
				} `json:"callback"`
			} `json:"data"`
		}
		if status := adminGet(g, "/admin/v1/tasks?limit=50", &out); status != http.StatusOK {
			t.Fatalf("GET /admin/v1/tasks: %d", status)
		}
		states := map[string]string{}
		for _, d := range out.Data {
			if d.Callback != nil && (d.Callback.State != "pending" || d.Callback.LastError != "") {
				states[d.ID] = d.Callback.State
			}
		}
		return states[taskIDs[1]] == "done" && states[taskIDs[2]] == "pending"
	})
	waitFor(t, "the ledger to hold every request", func() bool {
		var out struct {
			Data []struct {
				Requests int `json:"requests"`
			} `json:"data"`
		}
		if adminGet(g, "/admin/v1/usage?from=2000-01-01", &out) != http.StatusOK || len(out.Data) != 1 {
			return false
		}
		return out.Data[0].Requests == sent
	})

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "console.spec.mjs")
	cmd.Dir = "console"
	cmd.Env = append(os.Environ(), "PARLEY_SHOTS="+t.ArtifactDir(), "PARLEY_URL="+g.url, "PARLEY_ADMIN_KEY="+consoleAdminKey, "PARLEY_OPEN_URL="+open.url, "PARLEY_OFF_URL="+off.url,
		"PARLEY_TASKS="+strings.Join(taskIDs, ","))
	if fleet != nil {
		cmd.Env = append(cmd.Env, "PARLEY_FLEET_A="+fleet[0].url, "PARLEY_FLEET_B="+fleet[1].url, "PARLEY_FLEET_KEY="+clientKey, "PARLEY_FLEET_KEY_NAME=alice")
	}
	cmd.WaitDelay = 5 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var wg sync.WaitGroup
	wg.Go(func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			t.Log(sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	})
	err := cmd.Run()
	_ = pw.Close()
	wg.Wait()
	if err != nil {
		t.Fatalf("node console.spec.mjs: %v (its output is above)", err)
	}
}

// consoleFleet starts two replicas on the database dsn, with the console's
// admin key, a client key (alice, clientKey) and the chat upstream; the
// ledger is flushed every 100ms so that one replica's requests soon show in
// the other's console.
func consoleFleet(t *testing.T, dsn, chatURL string) []*replica {
	t.Helper()
	cfg := fmt.Sprintf(`keys:
  - {name: alice, key: %s}
upstreams:
  - {name: echo, dialect: echo}
  - {name: chat, dialect: chat_completions, base_url: %q, api_key: sk-chat-upstream}
models:
  - name: m
    upstream: chat
    pricing: {input: 3.00, output: 15.00}
  - {name: echo, upstream: echo}
store:
  driver: postgres
  dsn: ${PARLEY_DATABASE_URL}
admin:
  keys: [${PARLEY_ADMIN_KEY}]
ledger:
  flush_interval: 100ms
`, clientKey, chatURL)
	file := writeConfig(t, cfg)
	rs := make([]*replica, 2)
	var wg sync.WaitGroup
	for i := range rs {
		rs[i] = start(t, file, t.TempDir(), "PARLEY_DATABASE_URL="+dsn, "PARLEY_ADMIN_KEY="+consoleAdminKey)
		wg.Go(func() { rs[i].waitReady(t) })
	}
	wg.Wait()
	return rs
}

// consoleTools finds node, Chromium and playwright-core, or skips the test
// (fails it when CI is set), naming what is missing.
func consoleTools(t *testing.T) string {
	t.Helper()
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, chromium+" (apt-get install chromium)")
	}
	for _, pkg := range []string{"playwright-core", "openai"} {
		if _, err := os.Stat(filepath.Join("console", "node_modules", pkg, "package.json")); err != nil {
			missing = append(missing, "e2e/console/node_modules/"+pkg+" (npm ci --prefix e2e/console)")
		}
	}
	if len(missing) > 0 {
		msg := "the console's browser test needs " + strings.Join(missing, ", ")
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// adminGet reads an admin endpoint of r with the console's admin key into
// out; it returns the status, 0 when r did not answer.
func adminGet(r *replica, path string, out any) int {
	req, err := http.NewRequest(http.MethodGet, r.url+path, nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+consoleAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return 0
	}
	return resp.StatusCode
}

// consoleChatFake is chatFake, and for a request that asks for a stream it
// streams the same answer as chat-completions chunks, a word at a time, so
// that try-it shows a reply as it comes; a last message that asks for it
// "slowly" gets a word a second (for the Stop button).
func consoleChatFake(t *testing.T) *httptest.Server {
	whole := chatFake(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Content any `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(body, &req) != nil || !req.Stream {
			r.Body = io.NopCloser(bytes.NewReader(body))
			whole.Config.Handler.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish, usage string) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]%s}\n\n", delta, finish, usage)
			w.(http.Flusher).Flush()
		}
		pause := 20 * time.Millisecond
		if n := len(req.Messages); n > 0 {
			if last, _ := req.Messages[n-1].Content.(string); strings.Contains(last, "slowly") {
				pause = time.Second
			}
		}
		for i, word := range []string{"heard", fmt.Sprintf(" %d", len(req.Messages)), " messages"} {
			role := ""
			if i == 0 {
				role = `"role":"assistant",`
			}
			chunk(fmt.Sprintf(`{%s"content":%q}`, role, word), "null", "")
			select {
			case <-time.After(pause):
			case <-r.Context().Done():
				return
			}
		}
		chunk("{}", `"stop"`, `,"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}`)
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}
