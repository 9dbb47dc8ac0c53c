package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/server"
	"github.com/parleyhq/parley/store/sqlite"
	"github.com/parleyhq/parley/tasks"
	"github.com/parleyhq/parley/translate/songgen"
)

const (
	aliceKey = "sk-alice-key-0001"
	bobKey   = "sk-bob-key-0001"
)

type musicOpts struct {
	dataDir      string // reuse a data directory (restart); a new one when empty
	fake         *musicFake
	noUpstream   bool
	lyricsModel  string
	allowPrivate bool
	maxAge       time.Duration
	secret       string
	maxBody      int64  // limits.max_body_bytes and max_inflight_body_bytes, when set
	keys         string // more client keys, as YAML list items
	admin        bool   // configure the admin key adminKey
}

// musicGW is a running gateway with the music task service.
type musicGW struct {
	url   string
	dir   string
	fake  *musicFake
	store *sqlite.SQLite
	stop  func() // stops the service, the server and the store, as a shutdown does
}

func startMusic(t testing.TB, o musicOpts) *musicGW {
	t.Helper()
	g := &musicGW{dir: o.dataDir, fake: o.fake}
	if g.dir == "" {
		g.dir = t.TempDir()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "keys:\n  - {name: alice, key: %s}\n  - {name: bob, key: %s}\n%supstreams:\n  - {name: echo, dialect: echo}\n", aliceKey, bobKey, o.keys)
	if !o.noUpstream {
		if g.fake == nil {
			g.fake = newMusicFake(t)
		}
		fmt.Fprintf(&b, "  - {name: music, dialect: songgen, base_url: %q, api_key: %s, header_timeout: 5s}\n", g.fake.srv.URL, musicUpstreamKey)
	}
	b.WriteString("models:\n  - {name: echo, upstream: echo}\nsonggen:\n")
	if o.lyricsModel != "" {
		fmt.Fprintf(&b, "  lyrics_model: %s\n", o.lyricsModel)
	}
	fmt.Fprintf(&b, "  allow_private_hooks: %v\n", o.allowPrivate)
	if o.secret != "" {
		fmt.Fprintf(&b, "  notify_secret: %s\n", o.secret)
	}
	if o.admin {
		fmt.Fprintf(&b, "admin:\n  keys: [%s]\n", adminKey)
	}
	cfg, err := config.Parse("music.yaml", []byte(b.String()), func(string) (string, bool) { return "", false }, dialects.All().Names())
	if err != nil {
		t.Fatal(err)
	}
	if o.maxBody > 0 {
		cfg.Limits.MaxBodyBytes, cfg.Limits.MaxInflightBodyBytes = o.maxBody, o.maxBody
	}
	// Faster than the configuration allows, so that tests finish quickly.
	cfg.Songgen.PollInterval = config.Duration(20 * time.Millisecond)
	if o.maxAge > 0 {
		cfg.Songgen.MaxAge = config.Duration(o.maxAge)
	}
	d, err := dispatch.FromConfig(cfg, dialects.All(), dispatch.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.store, err = sqlite.Open(t.Context(), filepath.Join(g.dir, "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	svc := tasks.FromConfig(cfg, dialects.All(), g.store, d, nil, tasks.Options{
		HookBackoff: func(int) time.Duration { return 10 * time.Millisecond },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	sv := server.New(server.Options{Config: cfg, Dispatcher: d, Dialects: dialects.All(), Tasks: svc, TaskStore: g.store, Ledger: g.store, LedgerFlush: 10 * time.Millisecond})
	srv := startServer(t, sv)
	g.url = srv.URL
	stopped := false
	g.stop = func() {
		if stopped {
			return
		}
		stopped = true
		srv.Close()
		_ = sv.Close(context.Background())
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the task service did not stop within 10s of its context ending")
		}
		_ = g.store.Close()
	}
	t.Cleanup(g.stop)
	return g
}

// reply is an envelope as a client reads it.
type reply struct {
	Status  int
	Header  http.Header
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (g *musicGW) call(t testing.TB, method, path, key, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, g.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r reply
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("%s %s: the reply is not the envelope (%v): %s", method, path, err, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	r.Status, r.Header = resp.StatusCode, resp.Header
	return r
}

// submit posts a submit body and returns the task id, failing the test
// on anything but success.
func (g *musicGW) submit(t testing.TB, path, key, body string) string {
	t.Helper()
	r := g.call(t, http.MethodPost, path, key, body)
	if r.Status != http.StatusOK || r.Code != songgen.CodeSuccess || r.Message != "" {
		t.Fatalf("submit %s %s: %d %s %s", path, body, r.Status, r.Code, r.Message)
	}
	var id string
	if err := json.Unmarshal(r.Data, &id); err != nil || id == "" {
		t.Fatalf("submit: data %s is not a task id", r.Data)
	}
	return id
}

// wireTask is the task object, read strictly: every field the spec lists.
type wireTask struct {
	TaskID     string          `json:"task_id"`
	NotifyHook string          `json:"notify_hook"`
	Action     string          `json:"action"`
	Status     string          `json:"status"`
	FailReason string          `json:"fail_reason"`
	SubmitTime int64           `json:"submit_time"`
	StartTime  int64           `json:"start_time"`
	FinishTime int64           `json:"finish_time"`
	Progress   string          `json:"progress"`
	Data       json.RawMessage `json:"data"`
}

func decodeTask(t testing.TB, raw []byte) wireTask {
	t.Helper()
	var w wireTask
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("not a task object (%v): %s", err, raw)
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(raw, &all)
	if len(all) != 10 {
		t.Errorf("the task object has %d fields, want the spec's 10: %s", len(all), raw)
	}
	return w
}

func (g *musicGW) fetch(t testing.TB, key, id string) (wireTask, reply) {
	t.Helper()
	r := g.call(t, http.MethodGet, "/songgen/fetch/"+id, key, "")
	if r.Status != http.StatusOK {
		return wireTask{}, r
	}
	return decodeTask(t, r.Data), r
}

// await polls a task the way the spec advises a client to (here every
// 20ms) until it is no longer IN_PROGRESS, checking on the way that
// progress never goes down and finish_time stays 0.
func (g *musicGW) await(t testing.TB, key, id string) (wireTask, []string) {
	t.Helper()
	var seen []string
	last := -1
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		w, r := g.fetch(t, key, id)
		if r.Status != http.StatusOK {
			t.Fatalf("fetch %s: %d %s %s", id, r.Status, r.Code, r.Message)
		}
		var p int
		if _, err := fmt.Sscanf(w.Progress, "%d%%", &p); err != nil || !strings.HasSuffix(w.Progress, "%") {
			t.Fatalf("progress %q is not shaped <n>%%", w.Progress)
		}
		if p < last {
			t.Fatalf("progress went down from %d%% to %s", last, w.Progress)
		}
		last = p
		if len(seen) == 0 || seen[len(seen)-1] != w.Status+" "+w.Progress {
			seen = append(seen, w.Status+" "+w.Progress)
		}
		if w.Status != songgen.StatusInProgress {
			if w.FinishTime == 0 || w.FinishTime < w.SubmitTime {
				t.Errorf("finished task has finish_time %d (submit_time %d)", w.FinishTime, w.SubmitTime)
			}
			return w, seen
		}
		if w.FinishTime != 0 {
			t.Errorf("task in progress has finish_time %d", w.FinishTime)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s did not finish within 20s; states seen %v", id, seen)
	return wireTask{}, nil
}

func (g *musicGW) countTasks(t testing.TB) int {
	t.Helper()
	var n int
	if err := g.store.DB().QueryRow("SELECT count(*) FROM tasks").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
