package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlite"
	"github.com/parleyhq/parley/tasks"
	"github.com/parleyhq/parley/translate"
	_ "github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/songgen"
)

func TestBlocked(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "172.31.0.1": true, "192.168.0.1": true,
		"169.254.169.254": true, "fe80::1": true, "fd00:ec2::254": true, "100.64.0.1": true, "0.0.0.0": true,
		"::": true, "224.0.0.1": true, "::ffff:10.0.0.1": true, "192.0.2.1": true, "64:ff9b::7f00:1": true,
		"93.184.215.14": false, "8.8.8.8": false, "2606:4700::1111": false,
	} {
		if got := tasks.Blocked(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Blocked(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestDeliveryGuard checks the second line of defence: a delivery whose
// address leads to a private address (as after DNS rebinding) is refused
// when it connects, and nothing reaches the receiver.
func TestDeliveryGuard(t *testing.T) {
	var calls atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer rc.Close()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	now := timestamppb.Now()
	task := &parleyv1.Task{Id: "t1", Owner: "a", Action: parleyv1.TaskAction_TASK_ACTION_LYRICS, Status: parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS, SubmittedAt: now, UpdatedAt: now, NotifyHook: rc.URL}
	if err := st.CreateTask(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	task.Status = parleyv1.TaskStatus_TASK_STATUS_SUCCESS
	if _, err := st.UpdateTask(t.Context(), task, &store.Delivery{TaskID: "t1", URL: rc.URL, NextAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	svc := tasks.New(tasks.Options{Store: st, Client: songgen.Client{}, HookAttempts: 1})
	svc.Deliver(t.Context())
	d, err := st.Delivery(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 || d.State != store.DeliveryAbandoned || !strings.Contains(d.LastError, "may not connect") {
		t.Errorf("calls %d, delivery %+v; want the connection refused by the guard", calls.Load(), d)
	}
}

// A service that stops while it polls gives up the claims it holds, so
// that another replica refreshes those tasks at once rather than when the
// claims run out.
func TestStopGivesUpClaims(t *testing.T) {
	polled := make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case polled <- struct{}{}:
		default:
		}
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done() // a music service that never answers
	}))
	defer up.Close()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	now := timestamppb.Now()
	task := &parleyv1.Task{Id: "t1", Owner: "a", Action: parleyv1.TaskAction_TASK_ACTION_MUSIC, Status: parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS,
		SubmittedAt: now, UpdatedAt: now, Upstream: "music", UpstreamTaskId: "up-1"}
	if err := st.CreateTask(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	music := tasks.NewMusicService(config.Upstream{Name: "music", BaseURL: up.URL, APIKey: "k", HeaderTimeout: config.Duration(time.Minute)}, songgen.Upstream{}, nil)
	svc := tasks.New(tasks.Options{Store: st, Upstream: music, Client: songgen.Client{}, PollInterval: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	<-polled
	if held, _ := st.ClaimTasks(t.Context(), time.Now(), time.Minute, 10); len(held) != 0 {
		t.Fatalf("a task claimed by the running service was claimed again: %v", held)
	}
	cancel()
	<-done
	got, err := st.ClaimTasks(t.Context(), time.Now(), time.Minute, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("after the service stopped: %v %v, want its task claimable at once", got, err)
	}
}

// A key added by a reload is scrubbed from what the music service writes
// from then on, as the keys the service started with are.
func TestUseKeysScrubsReloadedKeys(t *testing.T) {
	const added = "sk-added-by-reload-0123456789"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"code":"unauthorized","message":"the key `+added+` may not submit","data":null}`)
	}))
	defer up.Close()
	yaml := func(more string) *config.Config {
		c, err := config.Parse("parley.yaml", []byte(`keys:
  - {name: a, key: sk-first-client-key-0001}
`+more+`upstreams:
  - {name: music, dialect: songgen, base_url: "`+up.URL+`", api_key: sk-music-upstream-0001}
`), func(string) (string, bool) { return "", false }, dialects.All().Names())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	svc := tasks.FromConfig(yaml(""), dialects.All(), st, nil, nil, tasks.Options{})
	song := &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Song{Song: &parleyv1.SongInput{Mode: parleyv1.SongMode_SONG_MODE_INSPIRATION, Inspiration: "rain"}}}
	if _, err := svc.Submit(t.Context(), "a", song, ""); err == nil || !strings.Contains(err.Error(), added) {
		t.Fatalf("before the reload the key is not one Parley knows: %v", err)
	}
	svc.UseKeys(yaml("  - {name: b, key: " + added + "}\n"))
	if _, err := svc.Submit(t.Context(), "a", song, ""); err == nil || strings.Contains(err.Error(), added[:12]) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("after the reload: %v", err)
	}
}

// Two replicas on one store, polling a music service that answers more
// slowly than the poll interval: a task being queried is held for as long
// as its query may take, so no two queries of one task are ever in flight
// at once, and each task is still queried again and again.
func TestSlowQueriesAreNotRepeated(t *testing.T) {
	const interval, answer = 40 * time.Millisecond, 150 * time.Millisecond
	var (
		mu       sync.Mutex
		inFlight = map[string]int{}
		queried  = map[string]int{}
		overlaps []string
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			IDs []string `json:"ids"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		for _, id := range body.IDs {
			if inFlight[id]++; inFlight[id] > 1 {
				overlaps = append(overlaps, id)
			}
			queried[id]++
		}
		mu.Unlock()
		time.Sleep(answer)
		mu.Lock()
		var data []map[string]any
		for _, id := range body.IDs {
			inFlight[id]--
			data = append(data, map[string]any{"task_id": id, "action": "MUSIC", "status": "IN_PROGRESS", "progress": "10%", "data": []any{}})
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"code": "success", "message": "", "data": data})
	}))
	defer up.Close()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	now := timestamppb.Now()
	for i := range 3 {
		task := &parleyv1.Task{Id: fmt.Sprintf("t%d", i), Owner: "a", Action: parleyv1.TaskAction_TASK_ACTION_MUSIC, Status: parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS,
			SubmittedAt: now, UpdatedAt: now, Upstream: "music", UpstreamTaskId: fmt.Sprintf("up-%d", i)}
		if err := st.CreateTask(t.Context(), task); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 2 {
		music := tasks.NewMusicService(config.Upstream{Name: "music", BaseURL: up.URL, APIKey: "k", HeaderTimeout: config.Duration(time.Second)}, songgen.Upstream{}, nil)
		svc := tasks.New(tasks.Options{Store: st, Upstream: music, Client: songgen.Client{}, PollInterval: interval, MaxAge: time.Hour})
		wg.Go(func() { svc.Run(ctx) })
	}
	time.Sleep(20 * answer)
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(overlaps) > 0 {
		t.Errorf("tasks queried by both replicas at once: %v", overlaps)
	}
	for i := range 3 {
		if id := fmt.Sprintf("up-%d", i); queried[id] < 5 {
			t.Errorf("task %s was queried %d times in %s, want it queried on and on", id, queried[id], 20*answer)
		}
	}
}

// TestMusicSaysWhyTLSFailed: a music service over TLS that cannot be
// reached is reported with why, naming no host.
func TestMusicSaysWhyTLSFailed(t *testing.T) {
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	up.Config.ErrorLog = log.New(io.Discard, "", 0)
	up.StartTLS()
	defer up.Close()
	music := tasks.NewMusicService(config.Upstream{Name: "music", BaseURL: up.URL, APIKey: "k", HeaderTimeout: config.Duration(time.Second)}, songgen.Upstream{}, nil)
	_, err := music.Submit(t.Context(), &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Song{Song: &parleyv1.SongInput{Mode: parleyv1.SongMode_SONG_MODE_INSPIRATION, Inspiration: "the sea"}}}, "")
	want := "the music service music cannot be reached: its TLS certificate is not signed by an authority Parley trusts"
	var ue *translate.UpstreamError
	if !errors.As(err, &ue) || ue.Err.GetMessage() != want {
		t.Fatalf("%v, want %q", err, want)
	}
}

// TestMusicRedirectIsNotFollowed: a music service's redirect is its
// answer: the host it names gets nothing (the submission, a song charged
// for, and the key), and the error says a redirect came without saying
// where to.
func TestMusicRedirectIsNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		_, _ = io.WriteString(w, `{"code":200,"msg":"success","data":"task-1"}`)
	}))
	defer other.Close()
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path+"?account=acct-secret", status)
		}))
		music := tasks.NewMusicService(config.Upstream{Name: "music", BaseURL: up.URL, APIKey: "k", HeaderTimeout: config.Duration(time.Second)}, songgen.Upstream{}, nil)
		_, err := music.Submit(t.Context(), &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Song{Song: &parleyv1.SongInput{Mode: parleyv1.SongMode_SONG_MODE_INSPIRATION, Inspiration: "the sea"}}}, "")
		up.Close()
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("redirect (HTTP %d)", status)) {
			t.Errorf("%d: %v, want an error that says a redirect came", status, err)
			continue
		}
		if strings.Contains(err.Error(), other.URL) || strings.Contains(err.Error(), "acct-secret") {
			t.Errorf("%d: the error names where the redirect points: %v", status, err)
		}
	}
	if n := elsewhere.Load(); n > 0 {
		t.Errorf("the host a redirect named got %d requests", n)
	}
}
