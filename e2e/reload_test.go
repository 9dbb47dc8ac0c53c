package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const secondKey = "sk-fleet-client-0002"

func (r *replica) callWith(t *testing.T, key, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = fmt.Fprint(&b, resp.Status)
	return resp.StatusCode, b.String()
}

// SIGHUP re-reads the configuration: a model and a key added are served at
// once; a broken file changes nothing and is logged with the message that
// `parley config check` prints; a stream opened before a reload finishes
// whole on the configuration it started with; a changed data_dir is named
// as needing a restart.
func TestReload(t *testing.T) {
	up, started := slowChat(t, 8, 150*time.Millisecond)
	file := writeConfig(t, reloadConfig(up.URL, false))
	r := start(t, file, t.TempDir())
	r.waitReady(t)
	chat := func(key, model string) int {
		status, _ := r.callWith(t, key, "/v1/chat/completions", fmt.Sprintf(`{"model":%q,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, model))
		return status
	}
	if got := chat(secondKey, "m2"); got != http.StatusUnauthorized {
		t.Fatalf("the second key before the reload: %d, want 401", got)
	}
	streams := openStreams(t, r)
	waitFor(t, "the streams reached the upstream", func() bool { return started.Load() == int32(len(streamCases)) })

	reloads := strings.Count(r.logs.String(), "configuration reloaded")
	if err := os.WriteFile(file, []byte(reloadConfig(up.URL, true)), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = r.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, "the reload", func() bool { return strings.Count(r.logs.String(), "configuration reloaded") > reloads })
	if got := chat(secondKey, "m2"); got != http.StatusOK {
		t.Errorf("the added key and model after the reload: %d, want 200", got)
	}
	if got := chat(clientKey, "m"); got != http.StatusOK {
		t.Errorf("the first key and model after the reload: %d, want 200", got)
	}

	// A broken file: refused, with config check's message; nothing changes.
	if err := os.WriteFile(file, []byte("keys:\n  - {name: alice, key: "+clientKey+"}\nmodels:\n  - {name: m, upstream: nobody}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check, _ := exec.Command(parley(t), "config", "check", file).CombinedOutput()
	_ = r.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, "the refused reload", func() bool { return strings.Contains(r.logs.String(), "reload refused") })
	if msg := strings.TrimPrefix(strings.TrimSpace(string(check)), "parley: "); msg == "" || !strings.Contains(r.logs.String(), "error="+strconv.Quote(msg)) {
		t.Errorf("the refused reload's log does not carry config check's message %q:\n%s", msg, r.logs.String())
	}
	if got := chat(secondKey, "m2"); got != http.StatusOK {
		t.Errorf("the previous configuration after a refused reload: %d, want 200", got)
	}

	// A changed data directory is named: it needs a restart.
	if err := os.WriteFile(file, []byte(reloadConfig(up.URL, true)+"data_dir: elsewhere\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reloads = strings.Count(r.logs.String(), "configuration reloaded")
	_ = r.cmd.Process.Signal(syscall.SIGHUP)
	// The warning follows the reload's own line: wait for it, not for that.
	waitFor(t, "the third reload", func() bool {
		return strings.Count(r.logs.String(), "configuration reloaded") > reloads && strings.Contains(r.logs.String(), "take effect only after a restart")
	})
	if !strings.Contains(r.logs.String(), "settings=data_dir") {
		t.Errorf("a changed data_dir is not named as needing a restart:\n%s", r.logs.String())
	}

	for _, c := range streamCases {
		body := <-streams[c.dialect]
		if !strings.HasPrefix(body, "status 200") || !strings.Contains(body, c.end) || !strings.Contains(body, "word7") {
			t.Errorf("%s: a stream opened before the reloads did not finish whole:\n%s", c.dialect, tail(body, 600))
		}
	}
}

func reloadConfig(upstream string, more bool) string {
	cfg := fmt.Sprintf(`keys:
  - {name: alice, key: %s}
upstreams:
  - {name: chat, dialect: chat_completions, base_url: %q, api_key: sk-chat-upstream}
models:
  - {name: m, upstream: chat}
`, clientKey, upstream)
	if more {
		cfg = strings.Replace(cfg, "upstreams:", fmt.Sprintf("  - {name: bob, key: %s}\nupstreams:", secondKey), 1)
		cfg += "  - {name: m2, upstream: chat}\n"
	}
	return cfg
}
