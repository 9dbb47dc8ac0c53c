package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/parleyhq/parley/translate/golden"
)

const clientKey = "sk-fleet-client-0001"

// pollInterval is the replicas' songgen.poll_interval, and so the lease a
// replica holds on each task it polls.
const pollInterval = 400 * time.Millisecond

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// parley builds the command once for the package's tests.
func parley(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "parley-fleet-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "parley")
		out, err := exec.Command("go", "build", "-o", binary, "../cmd/parley").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		_ = os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// replica is one running `parley serve`.
type replica struct {
	addr, url string
	cmd       *exec.Cmd
	logs      *syncBuffer
	done      chan struct{} // closed when the process has ended
	exit      error         // how it ended, once done is closed
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// fleetOf starts n replicas on one database with the given upstreams.
func fleetOf(t *testing.T, n int, dsn, chatURL, musicURL string) []*replica {
	t.Helper()
	cfg := fmt.Sprintf(`keys:
  - {name: alice, key: %s}
upstreams:
  - {name: chat, dialect: chat_completions, base_url: %q, api_key: sk-chat-upstream}
  - {name: music, dialect: songgen, base_url: %q, api_key: "${MUSIC_KEY}", header_timeout: 5s}
models:
  - {name: m, upstream: chat}
songgen:
  poll_interval: %s
  allow_private_hooks: true
store:
  driver: postgres
  dsn: ${PARLEY_DATABASE_URL}
`, clientKey, chatURL, musicURL, pollInterval)
	file := writeConfig(t, cfg)
	rs := make([]*replica, n)
	var wg sync.WaitGroup
	for i := range rs {
		// Each replica has a key of its own toward the music service, so
		// that the service can tell which replica queried it.
		rs[i] = start(t, file, t.TempDir(), "PARLEY_DATABASE_URL="+dsn, fmt.Sprintf("MUSIC_KEY=sk-music-replica-%d", i))
		wg.Go(func() { rs[i].waitReady(t) })
	}
	wg.Wait()
	return rs
}

func writeConfig(t *testing.T, cfg string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "parley.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// start runs `parley serve` with a configuration file in dir, on a free
// loopback port; the process is stopped with SIGTERM when the test ends
// (unless it has ended already), and its logs are shown if the test failed.
func start(t *testing.T, file, dir string, env ...string) *replica {
	t.Helper()
	addr := freeAddr(t)
	r := &replica{addr: addr, url: "http://" + addr, logs: &syncBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(parley(t), "serve", "--config", file, "--listen", addr)
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stderr, r.cmd.Stdout = r.logs, r.logs
	r.cmd.Dir = dir
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exit = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(15 * time.Second):
			_ = r.cmd.Process.Kill()
			t.Errorf("parley on %s did not stop within 15s of SIGTERM", addr)
		}
		if t.Failed() {
			t.Logf("parley on %s logs:\n%s", addr, r.logs.String())
		}
	})
	return r
}

func (r *replica) waitReady(t *testing.T) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-r.done:
			t.Errorf("a replica exited at start:\n%s", r.logs.String())
			return
		default:
		}
		if resp, err := http.Get(r.url + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("a replica was not ready within 30s:\n%s", r.logs.String())
}

// call sends a JSON request with the client key and decodes the reply.
func (r *replica) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+clientKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	if out == nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out
}

// chatFake is a chat-completions upstream that answers each request with
// how many messages it was sent, so that a continued conversation shows
// whether its history arrived whole.
func chatFake(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"heard %d messages"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`, len(req.Messages))
	}))
	t.Cleanup(srv.Close)
	return srv
}
