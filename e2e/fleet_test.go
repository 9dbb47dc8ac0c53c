package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/store/postgres/pgtest"
)

// A stored conversation made alternately through three replicas reads
// back, continues and is deleted through any of them; two hundred stored
// turns made at once across the fleet are all there afterwards, each once.
func TestStoredResponsesAcrossReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	chat := chatFake(t)
	rs := fleetOf(t, 3, dsn, chat.URL, chat.URL)

	prev := ""
	var chain []string
	for turn := range 6 {
		r := rs[turn%3]
		body := fmt.Sprintf(`{"model":"m","input":"turn %d","store":true`, turn)
		if prev != "" {
			body += fmt.Sprintf(`,"previous_response_id":%q`, prev)
		}
		status, out := r.call(t, http.MethodPost, "/v1/responses", body+"}")
		if status != http.StatusOK {
			t.Fatalf("turn %d through replica %d: %d %v", turn, turn%3, status, out)
		}
		// Each turn's upstream request holds the whole conversation: one
		// user message per turn so far and one answer per earlier turn.
		if text := outputText(out); text != fmt.Sprintf("heard %d messages", 2*turn+1) {
			t.Fatalf("turn %d through replica %d: the upstream %s, want the whole history", turn, turn%3, text)
		}
		prev, _ = out["id"].(string)
		chain = append(chain, prev)
	}
	for i, id := range chain {
		for j, r := range rs {
			if status, out := r.call(t, http.MethodGet, "/v1/responses/"+id, ""); status != http.StatusOK || out["id"] != id {
				t.Errorf("response %d through replica %d: %d %v", i, j, status, out)
			}
		}
	}
	last := chain[len(chain)-1]
	if status, out := rs[1].call(t, http.MethodDelete, "/v1/responses/"+last, ""); status != http.StatusOK || out["deleted"] != true {
		t.Fatalf("delete through replica 1: %d %v", status, out)
	}
	for j, r := range rs {
		if status, _ := r.call(t, http.MethodGet, "/v1/responses/"+last, ""); status != http.StatusNotFound {
			t.Errorf("a deleted response through replica %d: %d, want 404", j, status)
		}
		body := fmt.Sprintf(`{"model":"m","input":"more","previous_response_id":%q}`, last)
		if status, _ := r.call(t, http.MethodPost, "/v1/responses", body); status != http.StatusNotFound && status != http.StatusBadRequest {
			t.Errorf("continuing a deleted response through replica %d: %d, want it refused", j, status)
		}
	}

	const n = 200
	ids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			status, out := rs[i%3].call(t, http.MethodPost, "/v1/responses", fmt.Sprintf(`{"model":"m","input":"question %d","store":true}`, i))
			if status != http.StatusOK {
				t.Errorf("stored turn %d: %d %v", i, status, out)
				return
			}
			ids[i], _ = out["id"].(string)
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, id := range ids {
		if id == "" || seen[id] {
			t.Fatalf("stored turn %d has id %q, empty or given twice", i, id)
		}
		seen[id] = true
		if status, out := rs[(i+1)%3].call(t, http.MethodGet, "/v1/responses/"+id, ""); status != http.StatusOK || out["id"] != id {
			t.Errorf("stored turn %d read through another replica: %d %v", i, status, out)
		}
	}
}

func outputText(resp map[string]any) string {
	var b strings.Builder
	out, _ := resp["output"].([]any)
	for _, item := range out {
		m, _ := item.(map[string]any)
		content, _ := m["content"].([]any)
		for _, c := range content {
			cm, _ := c.(map[string]any)
			if s, ok := cm["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// musicFake is a music service whose tasks finish after five batch
// queries each; it records when each task was queried, and by whom (the
// key each replica's configuration gives it).
type musicFake struct {
	srv     *httptest.Server
	mu      sync.Mutex
	n       int
	steps   map[string]int
	fetched map[string][]query
	// hold, when set, is asked of each batch query's client address; a
	// query it holds waits until release is closed, unanswered.
	hold    func(remote string) bool
	held    chan []string
	release chan struct{}
}

type query struct {
	at time.Time
	by string
}

func newMusicFake(t *testing.T) *musicFake {
	f := &musicFake{steps: map[string]int{}, fetched: map[string][]query{}, held: make(chan []string, 1), release: make(chan struct{})}
	envelope := func(w http.ResponseWriter, data any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"code": "success", "message": "", "data": data})
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			IDs []string `json:"ids"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		if hold := f.hold; r.URL.Path != "/songgen/submit/music" && hold != nil && hold(r.RemoteAddr) {
			f.hold = nil
			f.mu.Unlock()
			f.held <- body.IDs
			<-f.release
			return
		}
		defer f.mu.Unlock()
		if r.URL.Path == "/songgen/submit/music" {
			f.n++
			id := fmt.Sprintf("up-%03d", f.n)
			f.steps[id] = 0
			envelope(w, id)
			return
		}
		now := time.Now()
		out := []any{}
		for _, id := range body.IDs {
			if _, ok := f.steps[id]; !ok {
				continue
			}
			f.steps[id]++
			f.fetched[id] = append(f.fetched[id], query{at: now, by: r.Header.Get("Authorization")})
			task := map[string]any{"task_id": id, "action": "MUSIC", "status": "IN_PROGRESS", "progress": "50%", "data": []any{},
				"fail_reason": "", "submit_time": 1, "start_time": 1, "finish_time": 0}
			if f.steps[id] >= 5 {
				task["status"], task["progress"], task["finish_time"] = "SUCCESS", "100%", 2
				task["data"] = []any{map[string]any{"id": id + "-clip", "title": "t", "status": "complete",
					"audio_url": "https://cdn.music.example/" + id + ".mp3", "metadata": map[string]any{"duration": 120.5}}}
			}
			out = append(out, task)
		}
		envelope(w, out)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// Twenty music tasks submitted across three replicas all finish and are
// called back although one replica is killed while they are in progress;
// no task is queried by two replicas within one poll interval.
func TestMusicTasksSurviveAKilledReplica(t *testing.T) {
	dsn := pgtest.DSN(t)
	music := newMusicFake(t)
	chat := chatFake(t)
	var (
		hookMu sync.Mutex
		hooked = map[string]int{}
	)
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hookMu.Lock()
		hooked[r.Header.Get("X-Parley-Task-Id")]++
		hookMu.Unlock()
	}))
	t.Cleanup(hooks.Close)
	rs := fleetOf(t, 3, dsn, chat.URL, music.srv.URL)

	started := time.Now()
	var ids []string
	for i := range 20 {
		status, out := rs[i%3].call(t, http.MethodPost, "/songgen/submit/music",
			fmt.Sprintf(`{"ai_description_prompt":"song %d","notify_hook":%q}`, i, hooks.URL))
		id, _ := out["data"].(string)
		if status != http.StatusOK || id == "" {
			t.Fatalf("submit %d through replica %d: %d %v", i, i%3, status, out)
		}
		ids = append(ids, id)
	}
	// Kill a replica while it is polling tasks it has claimed, as a
	// crashed host: the music service holds the next batch query until
	// the replica that made it is dead.
	victim := -1
	music.mu.Lock()
	music.hold = func(remote string) bool {
		for i, r := range rs {
			if ok, err := ownsConn(r.cmd.Process.Pid, remote); ok && err == nil {
				victim = i
				return true
			}
		}
		return false
	}
	music.mu.Unlock()
	var orphaned []string
	select {
	case orphaned = <-music.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the replica to be killed polled no task within 30s")
	}
	killed := rs[victim]
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-killed.done
	close(music.release)
	t.Logf("killed replica %d while it polled %d of the 20 tasks", victim, len(orphaned))
	alive := slices.Delete(slices.Clone(rs), victim, victim+1)

	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for {
			status, out := alive[0].call(t, http.MethodGet, "/songgen/fetch/"+id, "")
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
	for {
		hookMu.Lock()
		missing := 0
		for _, id := range ids {
			if hooked[id] == 0 {
				missing++
			}
		}
		hookMu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 20 callbacks never arrived", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(started)

	music.mu.Lock()
	defer music.mu.Unlock()
	if len(music.steps) != 20 {
		t.Fatalf("the music service got %d submits, want 20 (a submit is never repeated)", len(music.steps))
	}
	// The replica that claimed a task queries it once: no other replica
	// queries it until the claim runs out, one poll interval later. Two
	// replicas' queries of one task are therefore about an interval
	// apart: less by the time between the first replica's claim and its
	// query reaching the service, which a busy machine stretches, so the
	// check allows half an interval for it; replicas querying one task at
	// once would be apart by nothing at all. And no task is queried more
	// often than once an interval (the count).
	const slack = pollInterval / 2
	for id, qs := range music.fetched {
		slices.SortFunc(qs, func(a, b query) int { return a.at.Compare(b.at) })
		for k := 1; k < len(qs); k++ {
			if gap := qs[k].at.Sub(qs[k-1].at); qs[k].by != qs[k-1].by && gap < pollInterval-slack {
				t.Errorf("task %s was queried by two replicas within %s (queries %d and %d of %d)", id, gap, k, k+1, len(qs))
			}
		}
		if limit := int(elapsed/pollInterval) + 2; len(qs) > limit {
			t.Errorf("task %s was queried %d times in %s, more than one per interval", id, len(qs), elapsed)
		}
	}
}
