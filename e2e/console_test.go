package e2e_test

import (
	"bufio"
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
	"testing"
	"time"
)

// consoleAdminKey is the admin key the browser signs in with.
const consoleAdminKey = "admin-console-0123456789abcdef"

// The web console in a real headless Chromium (e2e/console/console.spec.mjs,
// driven by playwright-core): sign-in, the overview with its chart and live
// figures, creating, editing and revoking a key, a bad value's field error,
// usage with its CSV export, models and routes, keyboard navigation, the
// first load's size, a keyless gateway's open console and a gateway
// without admin keys saying how to turn the console on. It needs node,
// Chromium at /usr/bin/chromium (or $CHROMIUM) and `npm ci` run in
// e2e/console; without them it skips, unless CI is set.
func TestConsole(t *testing.T) {
	node := consoleTools(t)

	chat := chatFake(t)
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
`, clientKey, chat.URL, flaky.URL)
	// The default store: SQLite under the process's directory.
	g := start(t, writeConfig(t, cfg), t.TempDir(), "PARLEY_ADMIN_KEY="+consoleAdminKey)
	g.waitReady(t)

	// A gateway with no key of any kind: its console opens without sign-in.
	open := start(t, writeConfig(t, "upstreams:\n  - {name: echo, dialect: echo}\nmodels:\n  - {name: echo, upstream: echo}\n"), t.TempDir())
	open.waitReady(t)
	// A gateway with client keys and no admin key: no admin API, no console.
	off := start(t, writeConfig(t, fmt.Sprintf("keys:\n  - {name: alice, key: %s}\nupstreams:\n  - {name: echo, dialect: echo}\nmodels:\n  - {name: echo, upstream: echo}\n", clientKey)), t.TempDir())
	off.waitReady(t)

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
	waitFor(t, "the ledger to hold every request", func() bool {
		req, _ := http.NewRequest(http.MethodGet, g.url+"/admin/v1/usage?from=2000-01-01", nil)
		req.Header.Set("Authorization", "Bearer "+consoleAdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var out struct {
			Data []struct {
				Requests int `json:"requests"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&out) != nil || len(out.Data) != 1 {
			return false
		}
		return out.Data[0].Requests == sent
	})

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "console.spec.mjs")
	cmd.Dir = "console"
	cmd.Env = append(os.Environ(), "PARLEY_URL="+g.url, "PARLEY_ADMIN_KEY="+consoleAdminKey, "PARLEY_OPEN_URL="+open.url, "PARLEY_OFF_URL="+off.url)
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
	if _, err := os.Stat(filepath.Join("console", "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "e2e/console/node_modules/playwright-core (npm ci --prefix e2e/console)")
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
