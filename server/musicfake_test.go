package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const musicUpstreamKey = "sk-music-upstream-0001"

// musicFake is an in-process music service speaking the songgen interface
// with asynchronous progress: each task moves one step per batch query
// that asks for it, through the words real relays use (NOT_START, QUEUED,
// IN_PROGRESS with streaming songs, then SUCCESS with complete songs).
// The prompt steers it: "FAIL" fails the task at the third step with a
// reason, "STUCK" stays UNKNOWN, "RATE" and "DOWN" refuse the submit with
// 429 and 503. Progress goes back once on the way (40% then 30%), as
// relays' progress does.
type musicFake struct {
	t   testing.TB
	srv *httptest.Server

	mu      sync.Mutex
	n       int
	tasks   map[string]*fakeTask
	submits []fakeSubmit
	fetches [][]string
	down    bool // batch queries fail with 502
}

type fakeTask struct {
	action string
	body   map[string]any
	steps  int
}

type fakeSubmit struct {
	Path string
	Body map[string]any
	ID   string
}

func newMusicFake(t testing.TB) *musicFake {
	f := &musicFake{t: t, tasks: map[string]*fakeTask{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *musicFake) envelope(w http.ResponseWriter, status int, code, msg string, data any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg, "data": data})
}

func (f *musicFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+musicUpstreamKey {
		f.envelope(w, http.StatusUnauthorized, "unauthorized", "bad key", nil)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.envelope(w, http.StatusBadRequest, "invalid_json", err.Error(), nil)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/songgen/fetch":
		f.fetch(w, body)
		return
	case "/songgen/submit/music", "/songgen/submit/lyrics", "/songgen/uploads/audio-url", "/songgen/submit/concat":
	default:
		f.envelope(w, http.StatusNotFound, "not_found", r.URL.Path, nil)
		return
	}
	prompt := fmt.Sprint(body["prompt"], body["ai_description_prompt"])
	switch {
	case strings.Contains(prompt, "RATE"):
		w.Header().Set("Retry-After", "3")
		f.envelope(w, http.StatusTooManyRequests, "rate_limited", "too many songs at once", nil)
		return
	case strings.Contains(prompt, "DOWN"):
		f.envelope(w, http.StatusServiceUnavailable, "unavailable", "maintenance", nil)
		return
	case strings.Contains(prompt, "LEAKSUBMIT"):
		f.envelope(w, http.StatusUnauthorized, "unauthorized", "the key "+musicUpstreamKey+" is not allowed to submit", nil)
		return
	}
	if id, ok := body["task_id"].(string); ok && f.tasks[id] == nil {
		f.envelope(w, http.StatusBadRequest, "invalid_task", "no task "+id+" to continue", nil)
		return
	}
	f.n++
	id := fmt.Sprintf("up-%03d", f.n)
	action := "MUSIC"
	if r.URL.Path == "/songgen/submit/lyrics" {
		action = "LYRICS"
	}
	f.tasks[id] = &fakeTask{action: action, body: body}
	f.submits = append(f.submits, fakeSubmit{Path: r.URL.Path, Body: body, ID: id})
	f.envelope(w, http.StatusOK, "success", "", id)
}

func (f *musicFake) fetch(w http.ResponseWriter, body map[string]any) {
	if f.down {
		f.envelope(w, http.StatusBadGateway, "bad_gateway", "the generator is down", nil)
		return
	}
	var ids []string
	for _, v := range body["ids"].([]any) {
		ids = append(ids, v.(string))
	}
	f.fetches = append(f.fetches, ids)
	out := []any{}
	for _, id := range ids {
		ft := f.tasks[id]
		if ft == nil {
			continue
		}
		ft.steps++
		out = append(out, f.state(id, ft))
	}
	f.envelope(w, http.StatusOK, "success", "", out)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func (f *musicFake) song(id string, ft *fakeTask, n int, status string) map[string]any {
	var duration any
	if status == "complete" {
		duration = 120.5 + float64(n)
	}
	return map[string]any{
		"id": fmt.Sprintf("%s-clip-%d", id, n), "title": str(ft.body["title"]), "status": status,
		"metadata": map[string]any{
			"tags": str(ft.body["tags"]), "prompt": str(ft.body["prompt"]), "duration": duration,
			"error_type": nil, "error_message": nil, "audio_prompt_id": nil,
			"ai_description_prompt": str(ft.body["ai_description_prompt"]),
		},
		"audio_url":       fmt.Sprintf("https://cdn.music.example/%s-%d.mp3", id, n),
		"image_url":       fmt.Sprintf("https://cdn.music.example/%s-%d.jpg", id, n),
		"image_large_url": fmt.Sprintf("https://cdn.music.example/%s-%d-large.jpg", id, n),
		"video_url":       "", "model_name": "chirp-v3", "major_model_version": "v3",
	}
}

// state is the upstream task object after ft.steps queries.
func (f *musicFake) state(id string, ft *fakeTask) map[string]any {
	task := map[string]any{"task_id": id, "action": ft.action, "notify_hook": "", "fail_reason": "", "submit_time": 1, "start_time": 1, "finish_time": 0}
	prompt := fmt.Sprint(ft.body["prompt"], ft.body["ai_description_prompt"])
	streaming := []any{f.song(id, ft, 1, "streaming"), f.song(id, ft, 2, "streaming")}
	switch {
	case strings.Contains(prompt, "STUCK"):
		task["status"], task["progress"], task["data"] = "UNKNOWN", "", nil
	case strings.Contains(prompt, "LEAKFAIL") && ft.steps >= 2:
		task["status"], task["progress"], task["fail_reason"] = "FAILURE", "100%", "quota of key "+musicUpstreamKey+" exhausted"
		task["data"] = []any{}
	case strings.Contains(prompt, "FAIL") && ft.steps >= 3:
		task["status"], task["progress"], task["fail_reason"] = "FAILURE", "100%", "the generator refused the lyrics"
		task["data"] = []any{}
	case ft.steps == 1:
		task["status"], task["progress"], task["data"] = "NOT_START", "", nil
	case ft.steps == 2:
		task["status"], task["progress"], task["data"] = "QUEUED", "0%", []any{}
	case ft.steps == 3:
		task["status"], task["progress"], task["data"] = "IN_PROGRESS", "40%", streaming
	case ft.steps == 4:
		task["status"], task["progress"], task["data"] = "IN_PROGRESS", "30%", streaming
	default:
		task["status"], task["progress"], task["finish_time"] = "SUCCESS", "100%", 2
		if ft.action == "LYRICS" {
			task["data"] = map[string]any{"id": id + "-lyrics", "title": "Upstream lyrics", "text": "[Verse]\n" + str(ft.body["prompt"]), "status": "complete"}
		} else {
			task["data"] = []any{f.song(id, ft, 1, "complete"), f.song(id, ft, 2, "complete")}
		}
	}
	return task
}

func (f *musicFake) submitted() []fakeSubmit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeSubmit(nil), f.submits...)
}

func (f *musicFake) fetchBatches() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.fetches...)
}

func (f *musicFake) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}
