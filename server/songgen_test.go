package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/translate/songgen"
)

// song is the song object, read strictly.
type song struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Metadata struct {
		Tags                string   `json:"tags"`
		Prompt              string   `json:"prompt"`
		Duration            *float64 `json:"duration"`
		ErrorType           *string  `json:"error_type"`
		ErrorMessage        *string  `json:"error_message"`
		AudioPromptID       *string  `json:"audio_prompt_id"`
		AIDescriptionPrompt string   `json:"ai_description_prompt"`
	} `json:"metadata"`
	AudioURL          string `json:"audio_url"`
	ImageURL          string `json:"image_url"`
	ImageLargeURL     string `json:"image_large_url"`
	VideoURL          string `json:"video_url"`
	ModelName         string `json:"model_name"`
	MajorModelVersion string `json:"major_model_version"`
}

type lyricsObject struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

func songsOf(t testing.TB, w wireTask) []song {
	t.Helper()
	var s []song
	dec := json.NewDecoder(strings.NewReader(string(w.Data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || s == nil {
		t.Fatalf("data of a %s task is not an array of song objects (%v): %s", w.Action, err, w.Data)
	}
	return s
}

func lyricsOf(t testing.TB, w wireTask) lyricsObject {
	t.Helper()
	var l lyricsObject
	dec := json.NewDecoder(strings.NewReader(string(w.Data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("data of a LYRICS task is not a lyrics object (%v): %s", err, w.Data)
	}
	return l
}

// TestMusicModes follows each song mode from submit to SUCCESS through
// polling, and checks what reached the music service.
func TestMusicModes(t *testing.T) {
	g := startMusic(t, musicOpts{allowPrivate: true})
	before := time.Now().Unix()

	insp := g.submit(t, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "a calm song about rain", "make_instrumental": true, "prompt": "", "title": "", "tags": ""}`)
	custom := g.submit(t, songgen.PathMusic, aliceKey, `{"prompt": "[Verse]\nRain on the roof", "title": "Tin Roof", "tags": "lo-fi, chill", "mv": "chirp-v4"}`)

	w, seen := g.await(t, aliceKey, custom)
	if w.Status != songgen.StatusSuccess || w.Progress != "100%" || w.Action != songgen.ActionMusic || w.FailReason != "" || w.NotifyHook != "" {
		t.Fatalf("custom task = %+v", w)
	}
	if w.SubmitTime < before || w.SubmitTime > time.Now().Unix() || w.StartTime < w.SubmitTime {
		t.Errorf("submit_time %d start_time %d are not Unix seconds of now", w.SubmitTime, w.StartTime)
	}
	if !slices.Contains(seen, "IN_PROGRESS 0%") || seen[len(seen)-1] != "SUCCESS 100%" {
		t.Errorf("states seen %v; want IN_PROGRESS 0%% first and SUCCESS 100%% last", seen)
	}
	songs := songsOf(t, w)
	if len(songs) != 2 {
		t.Fatalf("%d songs, want 2", len(songs))
	}
	s := songs[0]
	if s.Status != "complete" || s.Title != "Tin Roof" || s.Metadata.Tags != "lo-fi, chill" || s.Metadata.Duration == nil ||
		s.Metadata.ErrorType != nil || s.Metadata.ErrorMessage != nil || s.AudioURL == "" || s.ModelName != "chirp-v3" || s.VideoURL != "" {
		t.Errorf("song = %+v", s)
	}

	// Continue the custom song from one of its clips.
	cont := g.submit(t, songgen.PathMusic, aliceKey, `{"task_id": "`+custom+`", "continue_at": 60.5, "continue_clip_id": "`+s.ID+`", "prompt": "[Bridge]\nThe rain moves on", "title": "Tin Roof II", "tags": "lo-fi"}`)
	for _, id := range []string{insp, cont} {
		if w, _ := g.await(t, aliceKey, id); w.Status != songgen.StatusSuccess || len(songsOf(t, w)) != 2 {
			t.Errorf("task %s = %+v", id, w)
		}
	}

	subs := g.fake.submitted()
	if len(subs) != 3 {
		t.Fatalf("%d submits reached the music service, want 3", len(subs))
	}
	byTitle := map[string]fakeSubmit{}
	for _, s := range subs {
		byTitle[str(s.Body["title"])] = s
		for _, id := range []string{insp, custom, cont} {
			if s.ID == id {
				t.Errorf("Parley's task id %s is the upstream's", id)
			}
		}
		if _, ok := s.Body["notify_hook"]; ok {
			t.Error("notify_hook was relayed to the music service")
		}
	}
	if b := byTitle[""].Body; b["ai_description_prompt"] != "a calm song about rain" || b["make_instrumental"] != true || b["mv"] != "chirp-v3-0" || b["prompt"] != nil {
		t.Errorf("inspiration relayed as %v", b)
	}
	if b := byTitle["Tin Roof"].Body; b["mv"] != "chirp-v4" || b["tags"] != "lo-fi, chill" || b["ai_description_prompt"] != nil {
		t.Errorf("custom relayed as %v", b)
	}
	b := byTitle["Tin Roof II"].Body
	if b["task_id"] != byTitle["Tin Roof"].ID || b["continue_at"] != 60.5 || b["continue_clip_id"] != s.ID {
		t.Errorf("continuation relayed as %v; want the upstream's id %s for task_id", b, byTitle["Tin Roof"].ID)
	}
}

// TestMusicOtherOperations covers lyrics, upload and concatenation
// through the music service, and their task objects.
func TestMusicOtherOperations(t *testing.T) {
	g := startMusic(t, musicOpts{})
	lyr := g.submit(t, songgen.PathLyrics, aliceKey, `{"prompt": "first snow"}`)
	w, _ := g.fetch(t, aliceKey, lyr)
	if w.Action != songgen.ActionLyrics || w.Status != songgen.StatusInProgress || lyricsOf(t, w).Status != "running" {
		t.Errorf("lyrics task before any poll = %+v", w)
	}
	up := g.submit(t, songgen.PathUpload, aliceKey, `{"url": "https://cdn.example.com/demo.mp3"}`)
	cat := g.submit(t, songgen.PathConcat, aliceKey, `{"clip_id": "clip-9", "is_infill": true}`)

	w, _ = g.await(t, aliceKey, lyr)
	if l := lyricsOf(t, w); w.Status != songgen.StatusSuccess || l.Status != "complete" || !strings.Contains(l.Text, "first snow") || l.Title == "" {
		t.Errorf("lyrics task = %+v, lyrics %+v", w, l)
	}
	for _, id := range []string{up, cat} {
		w, _ := g.await(t, aliceKey, id)
		if w.Status != songgen.StatusSuccess || w.Action != songgen.ActionMusic || len(songsOf(t, w)) == 0 {
			t.Errorf("task %s = %+v", id, w)
		}
	}
	paths := map[string]map[string]any{}
	for _, s := range g.fake.submitted() {
		paths[s.Path] = s.Body
	}
	if paths[songgen.PathUpload]["url"] != "https://cdn.example.com/demo.mp3" || paths[songgen.PathConcat]["clip_id"] != "clip-9" ||
		paths[songgen.PathConcat]["is_infill"] != true || paths[songgen.PathLyrics]["prompt"] != "first snow" {
		t.Errorf("relayed bodies = %v", paths)
	}
}

// TestMusicFailures covers a task the music service fails, and one it
// never finishes (failed at the maximum age), both with reasons.
func TestMusicFailures(t *testing.T) {
	g := startMusic(t, musicOpts{maxAge: 400 * time.Millisecond})
	failing := g.submit(t, songgen.PathMusic, aliceKey, `{"prompt": "FAIL please", "title": "x", "tags": "pop"}`)
	stuck := g.submit(t, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "STUCK forever"}`)
	w, _ := g.await(t, aliceKey, failing)
	if w.Status != songgen.StatusFail || w.FailReason != "the generator refused the lyrics" || w.Progress != "100%" {
		t.Errorf("failed task = %+v", w)
	}
	w, _ = g.await(t, aliceKey, stuck)
	if w.Status != songgen.StatusFail || !strings.Contains(w.FailReason, "max_age") {
		t.Errorf("stuck task = %+v; want FAIL naming songgen.max_age", w)
	}
	// A finished task is final: more polling rounds do not change it.
	time.Sleep(100 * time.Millisecond)
	if again, _ := g.fetch(t, aliceKey, stuck); again.Status != songgen.StatusFail || again.FinishTime != w.FinishTime {
		t.Errorf("a finished task changed: %+v", again)
	}
}

// TestLyricsByChatModel serves lyrics with the echo model and no music
// service at all, as the default set-up does.
func TestLyricsByChatModel(t *testing.T) {
	g := startMusic(t, musicOpts{noUpstream: true, lyricsModel: "echo"})
	id := g.submit(t, songgen.PathLyrics, aliceKey, `{"prompt": "Winter Light\n\n[Verse]\nthe first snow on the window"}`)
	w, _ := g.await(t, aliceKey, id)
	l := lyricsOf(t, w)
	if w.Status != songgen.StatusSuccess || w.Action != songgen.ActionLyrics || l.Status != "complete" || l.Title != "Winter Light" ||
		!strings.Contains(l.Text, "the first snow") || l.ID == "" {
		t.Errorf("lyrics task = %+v, lyrics %+v", w, l)
	}
	r := g.call(t, http.MethodPost, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "rain"}`)
	if r.Status != http.StatusServiceUnavailable || r.Code != songgen.CodeUpstreamUnavailable || !strings.Contains(r.Message, "songgen") {
		t.Errorf("music with no music service: %d %s %s", r.Status, r.Code, r.Message)
	}
	if n := g.countTasks(t); n != 1 {
		t.Errorf("%d tasks stored, want 1 (a refused submit stores none)", n)
	}
}

// TestBatchQuery checks the order, the action filter, unknown ids and
// other keys' ids.
func TestBatchQuery(t *testing.T) {
	g := startMusic(t, musicOpts{})
	m := g.submit(t, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "rain"}`)
	l := g.submit(t, songgen.PathLyrics, aliceKey, `{"prompt": "snow"}`)
	u := g.submit(t, songgen.PathUpload, aliceKey, `{"url": "https://cdn.example.com/a.mp3"}`)
	b := g.submit(t, songgen.PathMusic, bobKey, `{"ai_description_prompt": "bob's song"}`)

	ids := func(key, body string) []string {
		t.Helper()
		r := g.call(t, http.MethodPost, songgen.PathFetch, key, body)
		if r.Status != http.StatusOK || r.Code != songgen.CodeSuccess {
			t.Fatalf("fetch %s: %d %s %s", body, r.Status, r.Code, r.Message)
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(r.Data, &raws); err != nil || raws == nil {
			t.Fatalf("data %s is not an array", r.Data)
		}
		out := []string{}
		for _, raw := range raws {
			out = append(out, decodeTask(t, raw).TaskID)
		}
		return out
	}
	all := `"` + l + `", "no-such-task", "` + m + `", "` + b + `", "` + u + `", "` + m + `"`
	for _, tc := range []struct {
		key, body string
		want      []string
	}{
		{aliceKey, `{"ids": [` + all + `]}`, []string{l, m, u}},
		{aliceKey, `{"ids": [` + all + `], "action": "MUSIC"}`, []string{m, u}},
		{aliceKey, `{"ids": [` + all + `], "action": "LYRICS"}`, []string{l}},
		{bobKey, `{"ids": [` + all + `]}`, []string{b}},
		{aliceKey, `{"ids": []}`, []string{}},
		{aliceKey, `{"ids": ["nothing", "here"]}`, []string{}},
	} {
		if got := ids(tc.key, tc.body); !slices.Equal(got, tc.want) {
			t.Errorf("fetch %s as %s = %v, want %v", tc.body, tc.key[:6], got, tc.want)
		}
	}
}

// TestOwnership checks that another key's task is answered as unknown.
func TestOwnership(t *testing.T) {
	g := startMusic(t, musicOpts{})
	id := g.submit(t, songgen.PathMusic, aliceKey, `{"prompt": "la", "title": "t", "tags": "pop"}`)
	if w, r := g.fetch(t, aliceKey, id); r.Status != http.StatusOK || w.TaskID != id {
		t.Fatalf("owner cannot read its task: %d %s", r.Status, r.Message)
	}
	_, other := g.fetch(t, bobKey, id)
	_, unknown := g.fetch(t, bobKey, "00000000-0000-4000-8000-000000000000")
	for _, r := range []reply{other, unknown} {
		if r.Status != http.StatusNotFound || r.Code != songgen.CodeTaskNotFound || string(r.Data) != "null" {
			t.Errorf("reply = %d %s %s", r.Status, r.Code, r.Data)
		}
	}
	if strings.ReplaceAll(other.Message, id, "X") != strings.ReplaceAll(unknown.Message, "00000000-0000-4000-8000-000000000000", "X") {
		t.Errorf("another key's task and an unknown id are told apart: %q vs %q", other.Message, unknown.Message)
	}
	r := g.call(t, http.MethodPost, songgen.PathMusic, bobKey, `{"task_id": "`+id+`", "continue_at": 3, "continue_clip_id": "c"}`)
	if r.Status != http.StatusNotFound || r.Code != songgen.CodeTaskNotFound || !strings.Contains(r.Message, "task_id") {
		t.Errorf("continuing another key's task: %d %s %s", r.Status, r.Code, r.Message)
	}
	if n := len(g.fake.submitted()); n != 1 {
		t.Errorf("%d submits reached the music service, want 1", n)
	}
}

// TestSonggenBadInput is the table of bad requests over HTTP: each gets
// its envelope, nothing is stored and nothing reaches the music service.
func TestSonggenBadInput(t *testing.T) {
	g := startMusic(t, musicOpts{})
	big := `{"prompt": "` + strings.Repeat("a", 33<<20) + `"}`
	for _, tc := range []struct {
		name, method, path, key, body string
		status                        int
		code                          string
	}{
		{"no key", "POST", songgen.PathMusic, "", `{"ai_description_prompt": "x"}`, 401, songgen.CodeUnauthorized},
		{"wrong key", "POST", songgen.PathLyrics, "sk-wrong-key-0001", `{"prompt": "x"}`, 401, songgen.CodeUnauthorized},
		{"no key on fetch", "GET", songgen.PathFetch + "/x", "", ``, 401, songgen.CodeUnauthorized},
		{"bad json", "POST", songgen.PathMusic, aliceKey, `{"prompt": `, 400, songgen.CodeInvalidJSON},
		{"empty body", "POST", songgen.PathLyrics, aliceKey, ``, 400, songgen.CodeInvalidJSON},
		{"no mode", "POST", songgen.PathMusic, aliceKey, `{"mv": "chirp-v3-5"}`, 400, songgen.CodeInvalidMode},
		{"mixed modes", "POST", songgen.PathMusic, aliceKey, `{"ai_description_prompt": "x", "title": "t"}`, 400, songgen.CodeInvalidMode},
		{"missing tags", "POST", songgen.PathMusic, aliceKey, `{"prompt": "x", "title": "t"}`, 400, songgen.CodeMissingField},
		{"unknown mv", "POST", songgen.PathMusic, aliceKey, `{"ai_description_prompt": "x", "mv": "chirp-v9"}`, 400, songgen.CodeInvalidField},
		{"wrong type", "POST", songgen.PathConcat, aliceKey, `{"clip_id": 7}`, 400, songgen.CodeInvalidField},
		{"continue unknown", "POST", songgen.PathMusic, aliceKey, `{"task_id": "nope", "continue_at": 1, "continue_clip_id": "c"}`, 404, songgen.CodeTaskNotFound},
		{"missing url", "POST", songgen.PathUpload, aliceKey, `{}`, 400, songgen.CodeMissingField},
		{"fetch without ids", "POST", songgen.PathFetch, aliceKey, `{}`, 400, songgen.CodeMissingField},
		{"fetch bad action", "POST", songgen.PathFetch, aliceKey, `{"ids": ["a"], "action": "VIDEO"}`, 400, songgen.CodeInvalidField},
		{"unknown task", "GET", songgen.PathFetch + "/nope", aliceKey, ``, 404, songgen.CodeTaskNotFound},
		{"too large", "POST", songgen.PathLyrics, aliceKey, big, 413, songgen.CodeTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call(t, tc.method, tc.path, tc.key, tc.body)
			if r.Status != tc.status || r.Code != tc.code || r.Message == "" || string(r.Data) != "null" {
				t.Errorf("%d %s %q %s; want %d %s", r.Status, r.Code, r.Message, r.Data, tc.status, tc.code)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
	if n := g.countTasks(t); n != 0 {
		t.Errorf("%d tasks stored after bad requests", n)
	}
	if n := len(g.fake.submitted()); n != 0 {
		t.Errorf("%d bad requests reached the music service", n)
	}
}

// TestSubmitUpstreamFailures: a refused or failed submit creates no task.
func TestSubmitUpstreamFailures(t *testing.T) {
	g := startMusic(t, musicOpts{})
	r := g.call(t, http.MethodPost, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "RATE"}`)
	if r.Status != http.StatusTooManyRequests || r.Code != songgen.CodeRateLimited || r.Header.Get("Retry-After") != "3" || !strings.Contains(r.Message, "too many songs") {
		t.Errorf("rate limited: %d %s %q Retry-After %q", r.Status, r.Code, r.Message, r.Header.Get("Retry-After"))
	}
	r = g.call(t, http.MethodPost, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "DOWN"}`)
	if r.Status != http.StatusServiceUnavailable || r.Code != songgen.CodeUpstreamUnavailable {
		t.Errorf("upstream 503: %d %s %q", r.Status, r.Code, r.Message)
	}
	g.fake.srv.Close()
	r = g.call(t, http.MethodPost, songgen.PathLyrics, aliceKey, `{"prompt": "snow"}`)
	if r.Status != http.StatusServiceUnavailable || r.Code != songgen.CodeUpstreamUnavailable || strings.Contains(r.Message, "127.0.0.1") {
		t.Errorf("upstream unreachable: %d %s %q", r.Status, r.Code, r.Message)
	}
	if n := g.countTasks(t); n != 0 {
		t.Errorf("%d tasks stored after failed submits", n)
	}
}

// TestPollingBatchesAndOutage checks that tasks are polled in batches,
// and that an outage of the music service while polling delays tasks
// without failing them.
func TestPollingBatchesAndOutage(t *testing.T) {
	g := startMusic(t, musicOpts{})
	g.fake.setDown(true)
	var ids []string
	for range 6 {
		ids = append(ids, g.submit(t, songgen.PathMusic, aliceKey, `{"ai_description_prompt": "rain"}`))
	}
	time.Sleep(150 * time.Millisecond)
	for _, id := range ids {
		if w, _ := g.fetch(t, aliceKey, id); w.Status != songgen.StatusInProgress {
			t.Fatalf("task %s is %s during an outage", id, w.Status)
		}
	}
	g.fake.setDown(false)
	for _, id := range ids {
		if w, _ := g.await(t, aliceKey, id); w.Status != songgen.StatusSuccess {
			t.Errorf("task %s = %+v", id, w)
		}
	}
	most := 0
	for _, b := range g.fake.fetchBatches() {
		most = max(most, len(b))
	}
	if most < len(ids) {
		t.Errorf("largest batch query held %d ids; want all %d tasks in one", most, len(ids))
	}
}
