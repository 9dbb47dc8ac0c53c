package songgen_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/songgen"
)

const dir = "../../testdata/songgen"

// TestSubmitGolden pins each submit body's canonical input and the body
// relayed to a music upstream.
func TestSubmitGolden(t *testing.T) {
	decoders := map[string]func([]byte) (*songgen.Submission, error){
		"music":  func(b []byte) (*songgen.Submission, error) { return songgen.DecodeMusic(b, nil) },
		"lyrics": songgen.DecodeLyrics,
		"upload": songgen.DecodeUpload,
		"concat": songgen.DecodeConcat,
	}
	for _, c := range golden.Cases(t, dir+"/submit") {
		t.Run(c.Name, func(t *testing.T) {
			kind, _, _ := strings.Cut(c.Name, "-")
			sub, err := decoders[kind](c.Read(t, "request.json"))
			if err != nil {
				t.Fatal(err)
			}
			golden.Proto(t, c.Path("canonical.json"), sub.Input)
			path, body, err := songgen.EncodeSubmit(sub.Input, "up-continued")
			if err != nil {
				t.Fatal(err)
			}
			golden.JSON(t, c.Path("upstream.json"), body)
			want := map[string]string{"music": songgen.PathMusic, "lyrics": songgen.PathLyrics, "upload": songgen.PathUpload, "concat": songgen.PathConcat}[kind]
			if path != want {
				t.Errorf("relayed to %s, want %s", path, want)
			}
			var raw struct {
				NotifyHook string `json:"notify_hook"`
			}
			_ = json.Unmarshal(c.Read(t, "request.json"), &raw)
			if sub.NotifyHook != raw.NotifyHook {
				t.Errorf("notify_hook = %q, want %q", sub.NotifyHook, raw.NotifyHook)
			}
			if strings.Contains(string(body), "notify_hook") {
				t.Error("the client's notify_hook was relayed upstream")
			}
		})
	}
}

// TestTaskGolden pins the task object of canonical tasks.
func TestTaskGolden(t *testing.T) {
	for _, c := range golden.Cases(t, dir+"/task") {
		t.Run(c.Name, func(t *testing.T) {
			task := &parleyv1.Task{}
			if err := protojson.Unmarshal(c.Read(t, "canonical.json"), task); err != nil {
				t.Fatal(err)
			}
			body, err := songgen.EncodeTask(task)
			if err != nil {
				t.Fatal(err)
			}
			golden.JSON(t, c.Path("wire.json"), body)
			if strings.Contains(string(body), task.GetUpstreamTaskId()) && task.GetUpstreamTaskId() != "" {
				t.Error("the upstream's task id shows in the task object")
			}
		})
	}
}

// TestUpstreamGolden pins how upstream fetch replies are read.
func TestUpstreamGolden(t *testing.T) {
	for _, c := range golden.Cases(t, dir+"/upstream") {
		t.Run(c.Name, func(t *testing.T) {
			ups, err := songgen.DecodeFetchReply(http.StatusOK, nil, c.Read(t, "reply.json"))
			if err != nil {
				t.Fatal(err)
			}
			var out []json.RawMessage
			for _, u := range ups {
				task := &parleyv1.Task{UpstreamTaskId: u.UpstreamID, Status: u.Status, Progress: u.Progress, FailReason: u.FailReason, Songs: u.Songs, Lyrics: u.Lyrics}
				b, err := protojson.Marshal(task)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, b)
			}
			b, _ := json.Marshal(out)
			golden.JSON(t, c.Path("updates.json"), b)
		})
	}
}

func TestMapStatus(t *testing.T) {
	const (
		run  = parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS
		ok   = parleyv1.TaskStatus_TASK_STATUS_SUCCESS
		fail = parleyv1.TaskStatus_TASK_STATUS_FAIL
	)
	for word, want := range map[string]parleyv1.TaskStatus{
		"NOT_START": run, "SUBMITTED": run, "QUEUED": run, "IN_PROGRESS": run, "UNKNOWN": run, "streaming": run,
		"SUCCESS": ok, "complete": ok, "FAILURE": fail, "FAIL": fail, "error": fail, "": run, "SOMETHING_NEW": run,
	} {
		if got, _ := songgen.MapStatus(word); got != want {
			t.Errorf("MapStatus(%q) = %v, want %v", word, got, want)
		}
	}
	if _, known := songgen.MapStatus("UNKNOWN"); known {
		t.Error("UNKNOWN is reported as a known word")
	}
}

// TestBadSubmit checks each bad body gets its envelope code, HTTP status
// and the field named.
func TestBadSubmit(t *testing.T) {
	music := func(b []byte) error { _, err := songgen.DecodeMusic(b, nil); return err }
	lyrics := func(b []byte) error { _, err := songgen.DecodeLyrics(b); return err }
	upload := func(b []byte) error { _, err := songgen.DecodeUpload(b); return err }
	concat := func(b []byte) error { _, err := songgen.DecodeConcat(b); return err }
	fetch := func(b []byte) error { _, err := songgen.DecodeFetch(b); return err }
	cases := []struct {
		name   string
		decode func([]byte) error
		body   string
		code   string
		field  string
	}{
		{"empty body", music, ``, songgen.CodeInvalidJSON, ""},
		{"not json", music, `{"prompt": `, songgen.CodeInvalidJSON, ""},
		{"array body", lyrics, `["a"]`, songgen.CodeInvalidJSON, ""},
		{"wrong type", music, `{"ai_description_prompt": "x", "make_instrumental": "yes"}`, songgen.CodeInvalidField, "make_instrumental"},
		{"continue_at string", music, `{"task_id": "a", "continue_at": "10", "continue_clip_id": "c"}`, songgen.CodeInvalidField, "continue_at"},
		{"no mode", music, `{"mv": "chirp-v3-0"}`, songgen.CodeInvalidMode, ""},
		{"empty strings only", music, `{"prompt": "", "title": "", "tags": "", "ai_description_prompt": ""}`, songgen.CodeInvalidMode, ""},
		{"inspiration and custom", music, `{"ai_description_prompt": "x", "prompt": "la", "title": "t"}`, songgen.CodeInvalidMode, "ai_description_prompt"},
		{"inspiration and continuation", music, `{"ai_description_prompt": "x", "task_id": "a"}`, songgen.CodeInvalidMode, "ai_description_prompt"},
		{"custom without tags", music, `{"prompt": "la", "title": "t"}`, songgen.CodeMissingField, "tags"},
		{"custom without prompt", music, `{"title": "t", "tags": "pop"}`, songgen.CodeMissingField, "prompt"},
		{"continuation without clip", music, `{"task_id": "a", "continue_at": 3}`, songgen.CodeMissingField, "continue_clip_id"},
		{"continuation without at", music, `{"task_id": "a", "continue_clip_id": "c"}`, songgen.CodeMissingField, "continue_at"},
		{"negative continue_at", music, `{"task_id": "a", "continue_at": -1, "continue_clip_id": "c"}`, songgen.CodeInvalidField, "continue_at"},
		{"unknown mv", music, `{"ai_description_prompt": "x", "mv": "chirp-v9"}`, songgen.CodeInvalidField, "mv"},
		{"bad hook", music, `{"ai_description_prompt": "x", "notify_hook": "ftp://x"}`, songgen.CodeInvalidField, "notify_hook"},
		{"relative hook", lyrics, `{"prompt": "x", "notify_hook": "/hook"}`, songgen.CodeInvalidField, "notify_hook"},
		{"lyrics without prompt", lyrics, `{}`, songgen.CodeMissingField, "prompt"},
		{"lyrics blank prompt", lyrics, `{"prompt": "  "}`, songgen.CodeMissingField, "prompt"},
		{"upload without url", upload, `{}`, songgen.CodeMissingField, "url"},
		{"upload bad url", upload, `{"url": "demo.mp3"}`, songgen.CodeInvalidField, "url"},
		{"concat without clip", concat, `{"is_infill": true}`, songgen.CodeMissingField, "clip_id"},
		{"concat infill string", concat, `{"clip_id": "c", "is_infill": "true"}`, songgen.CodeInvalidField, "is_infill"},
		{"fetch without ids", fetch, `{"action": "MUSIC"}`, songgen.CodeMissingField, "ids"},
		{"fetch ids not array", fetch, `{"ids": "a,b"}`, songgen.CodeInvalidField, "ids"},
		{"fetch empty id", fetch, `{"ids": ["a", ""]}`, songgen.CodeInvalidField, "ids[1]"},
		{"fetch bad action", fetch, `{"ids": ["a"], "action": "VIDEO"}`, songgen.CodeInvalidField, "action"},
		{"fetch too many", fetch, `{"ids": [` + strings.Repeat(`"a",`, songgen.MaxFetchIDs) + `"b"]}`, songgen.CodeInvalidField, "ids"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode([]byte(tc.body))
			if err == nil {
				t.Fatal("accepted")
			}
			e := translate.ToProto(err)
			status, body := songgen.EncodeError(e)
			if status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", status)
			}
			var env songgen.Envelope
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatal(err)
			}
			if env.Code != tc.code || string(env.Data) != "null" || env.Message == "" {
				t.Errorf("envelope = %s; want code %s", body, tc.code)
			}
			field := ""
			if fv := e.GetFieldViolations(); len(fv) > 0 {
				field = fv[0].GetField()
			}
			if field != tc.field || (tc.field != "" && !strings.Contains(env.Message, tc.field)) {
				t.Errorf("field = %q, message %q; want field %q named", field, env.Message, tc.field)
			}
		})
	}
}

func TestFetchFilterAndOrder(t *testing.T) {
	f, err := songgen.DecodeFetch([]byte(`{"ids": ["b", "a", "b"], "action": "lyrics"}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.IDs, ",") != "b,a" || f.Action != parleyv1.TaskAction_TASK_ACTION_LYRICS {
		t.Errorf("fetch = %+v", f)
	}
}

// TestErrorTable checks the status and code of each canonical failure,
// and of the music upstream's replies.
func TestErrorTable(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{translate.Status(parleyv1.Code_CODE_UNAUTHENTICATED, "no key"), 401, songgen.CodeUnauthorized},
		{translate.Status(parleyv1.Code_CODE_NOT_FOUND, "no task"), 404, songgen.CodeTaskNotFound},
		{translate.Status(parleyv1.Code_CODE_INTERNAL, "disk"), 500, songgen.CodeInternal},
		{&translate.StatusError{Err: &parleyv1.Error{Code: parleyv1.Code_CODE_INVALID_ARGUMENT, HttpStatus: 413, Message: "big"}}, 413, songgen.CodeTooLarge},
		{songgen.UpstreamError(429, http.Header{"Retry-After": {"7"}}, []byte(`{"code":"rate_limit","message":"slow down","data":null}`)), 429, songgen.CodeRateLimited},
		{songgen.UpstreamError(400, nil, []byte(`{"code":"bad","message":"prompt too long","data":null}`)), 400, songgen.CodeUpstreamRejected},
		{songgen.UpstreamError(200, nil, []byte(`{"code":"quota","message":"no credits","data":null}`)), 400, songgen.CodeUpstreamRejected},
		{songgen.UpstreamError(401, nil, []byte(`unauthorized`)), 502, songgen.CodeUpstreamError},
		{songgen.UpstreamError(500, nil, []byte(`<html>`)), 502, songgen.CodeUpstreamError},
		{songgen.UpstreamError(503, nil, nil), 503, songgen.CodeUpstreamUnavailable},
	} {
		e := translate.ToProto(tc.err)
		status, body := songgen.EncodeError(e)
		var env songgen.Envelope
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatal(err)
		}
		if status != tc.status || env.Code != tc.code || env.Message == "" {
			t.Errorf("%v: %d %s, want %d %s", tc.err, status, body, tc.status, tc.code)
		}
	}
	if e := translate.ToProto(songgen.UpstreamError(429, http.Header{"Retry-After": {"7"}}, nil)); e.GetRetry().GetRetryAfter().AsDuration().Seconds() != 7 {
		t.Errorf("Retry-After lost: %v", e.GetRetry())
	}
	if _, err := songgen.DecodeSubmitReply(200, nil, []byte(`{"code":"success","message":"","data":""}`)); err == nil {
		t.Error("a submit reply with no task id was accepted")
	}
}
