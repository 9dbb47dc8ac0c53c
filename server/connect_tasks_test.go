package server_test

import (
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/songgen"
)

func customSong(prompt string) *parleyv1.TaskInput {
	return &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Song{Song: &parleyv1.SongInput{
		Mode: parleyv1.SongMode_SONG_MODE_CUSTOM, Prompt: prompt, Title: "Rain", Tags: "pop",
	}}}
}

// awaitRPC polls GetTask every 20ms until the task has finished, checking
// that progress never goes down.
func awaitRPC(t *testing.T, c rpcClient, id string) *parleyv1.Task {
	t.Helper()
	last := int32(-1)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := c.tasks.GetTask(t.Context(), connect.NewRequest(&parleyv1.GetTaskRequest{Id: id}))
		if err != nil {
			t.Fatal(err)
		}
		task := res.Msg.GetTask()
		if task.GetProgress() < last {
			t.Fatalf("progress went down from %d to %d", last, task.GetProgress())
		}
		last = task.GetProgress()
		if task.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS {
			return task
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s did not finish within 20s", id)
	return nil
}

// TestConnectTasks: submit -> poll -> SUCCESS through the Task service over
// every protocol, on the same task service and store as /songgen.
func TestConnectTasks(t *testing.T) {
	g := startMusic(t, musicOpts{lyricsModel: "echo"})
	for i, protocol := range rpcProtocols {
		t.Run(protocol, func(t *testing.T) {
			alice, bob := newRPC(t, g.url, aliceKey, protocol), newRPC(t, g.url, bobKey, protocol)
			res, err := alice.tasks.SubmitTask(t.Context(), connect.NewRequest(&parleyv1.SubmitTaskRequest{Input: customSong("la la la")}))
			if err != nil {
				t.Fatal(err)
			}
			task := res.Msg.GetTask()
			if task.GetId() == "" || task.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS || task.GetUpstreamTaskId() != "" {
				t.Fatalf("submitted task %v", task)
			}
			if mv := task.GetInput().GetSong().GetModelVersion(); mv != songgen.DefaultModelVersion {
				t.Errorf("model version %q, want the default filled in", mv)
			}
			subs := g.fake.submitted()
			if len(subs) != i+1 || subs[i].Body["title"] != "Rain" || subs[i].Body["mv"] != songgen.DefaultModelVersion {
				t.Fatalf("the music service got %v", subs)
			}

			done := awaitRPC(t, alice, task.GetId())
			if done.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_SUCCESS || done.GetProgress() != 100 || len(done.GetSongs()) == 0 || done.GetFinishedAt() == nil {
				t.Fatalf("finished task %v", done)
			}
			if done.GetUpstreamTaskId() != "" {
				t.Errorf("the upstream's id is shown: %q", done.GetUpstreamTaskId())
			}
			// The same task through the JSON interface.
			if w, r := g.fetch(t, aliceKey, task.GetId()); r.Status != http.StatusOK || w.Status != songgen.StatusSuccess {
				t.Errorf("/songgen/fetch shows %d %v", r.Status, w)
			}
			// Another key's task is unknown.
			if _, err := bob.tasks.GetTask(t.Context(), connect.NewRequest(&parleyv1.GetTaskRequest{Id: task.GetId()})); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("bob reads alice's task: %v", err)
			}

			// Lyrics by the chat model, then a filtered list.
			lr, err := alice.tasks.SubmitTask(t.Context(), connect.NewRequest(&parleyv1.SubmitTaskRequest{
				Input: &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Lyrics{Lyrics: &parleyv1.LyricsInput{Prompt: "rain on the window"}}},
			}))
			if err != nil {
				t.Fatal(err)
			}
			lyr := awaitRPC(t, alice, lr.Msg.GetTask().GetId())
			if lyr.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_SUCCESS || lyr.GetLyrics().GetText() == "" || lyr.GetModel() != "echo" {
				t.Fatalf("lyrics task %v", lyr)
			}
			ids := []string{lyr.GetId(), "no-such-task", task.GetId(), lyr.GetId()}
			for _, tc := range []struct {
				action parleyv1.TaskAction
				want   []string
			}{
				{parleyv1.TaskAction_TASK_ACTION_UNSPECIFIED, []string{lyr.GetId(), task.GetId()}},
				{parleyv1.TaskAction_TASK_ACTION_MUSIC, []string{task.GetId()}},
				{parleyv1.TaskAction_TASK_ACTION_LYRICS, []string{lyr.GetId()}},
			} {
				lres, err := alice.tasks.ListTasks(t.Context(), connect.NewRequest(&parleyv1.ListTasksRequest{Ids: ids, Action: tc.action}))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, x := range lres.Msg.GetTasks() {
					got = append(got, x.GetId())
					if x.GetUpstreamTaskId() != "" {
						t.Errorf("the upstream's id is shown in the list")
					}
				}
				if len(got) != len(tc.want) || (len(got) > 0 && (got[0] != tc.want[0] || got[len(got)-1] != tc.want[len(tc.want)-1])) {
					t.Errorf("list %s: %v, want %v", tc.action, got, tc.want)
				}
			}
			if lres, err := bob.tasks.ListTasks(t.Context(), connect.NewRequest(&parleyv1.ListTasksRequest{Ids: ids})); err != nil || len(lres.Msg.GetTasks()) != 0 {
				t.Errorf("bob lists alice's tasks: %v %v", lres, err)
			}
		})
	}
}

// TestConnectTaskBadInput: a task input that no music service could take
// is refused with InvalidArgument naming the canonical field; nothing is
// stored and nothing relayed.
func TestConnectTaskBadInput(t *testing.T) {
	g := startMusic(t, musicOpts{})
	song := func(edit func(s *parleyv1.SongInput)) *parleyv1.TaskInput {
		in := customSong("la")
		edit(in.GetSong())
		return in
	}
	cases := []struct {
		name  string
		req   *parleyv1.SubmitTaskRequest
		code  connect.Code
		field string
	}{
		{"no input", &parleyv1.SubmitTaskRequest{}, connect.CodeInvalidArgument, "input"},
		{"no mode", &parleyv1.SubmitTaskRequest{Input: song(func(s *parleyv1.SongInput) { s.Mode = 0 })}, connect.CodeInvalidArgument, "input.song.mode"},
		{"custom without title", &parleyv1.SubmitTaskRequest{Input: song(func(s *parleyv1.SongInput) { s.Title = "" })}, connect.CodeInvalidArgument, "input.song.title"},
		{"inspiration with lyrics", &parleyv1.SubmitTaskRequest{Input: song(func(s *parleyv1.SongInput) {
			s.Mode, s.Inspiration = parleyv1.SongMode_SONG_MODE_INSPIRATION, "rain"
		})}, connect.CodeInvalidArgument, "input.song.prompt"},
		{"continuation without clip", &parleyv1.SubmitTaskRequest{Input: song(func(s *parleyv1.SongInput) {
			s.Mode, s.ContinueTaskId, s.ContinueAt = parleyv1.SongMode_SONG_MODE_CONTINUATION, "t1", proto.Float64(3)
		})}, connect.CodeInvalidArgument, "input.song.continue_clip_id"},
		{"unknown model version", &parleyv1.SubmitTaskRequest{Input: song(func(s *parleyv1.SongInput) { s.ModelVersion = "chirp-v9" })}, connect.CodeInvalidArgument, "input.song.model_version"},
		{"continuation of an unknown task", &parleyv1.SubmitTaskRequest{Input: song(func(s *parleyv1.SongInput) {
			s.Mode, s.ContinueTaskId, s.ContinueAt, s.ContinueClipId = parleyv1.SongMode_SONG_MODE_CONTINUATION, "no-such-task", proto.Float64(3), "clip"
		})}, connect.CodeNotFound, "task_id"},
		{"empty lyrics prompt", &parleyv1.SubmitTaskRequest{Input: &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Lyrics{Lyrics: &parleyv1.LyricsInput{Prompt: "  "}}}}, connect.CodeInvalidArgument, "input.lyrics.prompt"},
		{"upload of a non-http URL", &parleyv1.SubmitTaskRequest{Input: &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Upload{Upload: &parleyv1.UploadInput{Url: "file:///etc/passwd"}}}}, connect.CodeInvalidArgument, "input.upload.url"},
		{"concat without clip", &parleyv1.SubmitTaskRequest{Input: &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Concat{Concat: &parleyv1.ConcatInput{}}}}, connect.CodeInvalidArgument, "input.concat.clip_id"},
		{"hook not http", &parleyv1.SubmitTaskRequest{Input: customSong("la"), NotifyHook: "ftp://example.com/x"}, connect.CodeInvalidArgument, "notify_hook"},
		{"hook on loopback", &parleyv1.SubmitTaskRequest{Input: customSong("la"), NotifyHook: "http://127.0.0.1:9/hook"}, connect.CodeInvalidArgument, "notify_hook"},
	}
	for _, protocol := range rpcProtocols {
		c := newRPC(t, g.url, aliceKey, protocol)
		for _, tc := range cases {
			t.Run(protocol+"/"+tc.name, func(t *testing.T) {
				_, err := c.tasks.SubmitTask(t.Context(), connect.NewRequest(tc.req))
				f := failureOf(t, err)
				if f.code != tc.code || len(f.violations) == 0 || f.violations[0].GetField() != tc.field {
					t.Errorf("%s %v, want %s naming %s (%v)", f.code, f.violations, tc.code, tc.field, err)
				}
			})
		}
	}
	if n := g.countTasks(t); n != 0 {
		t.Errorf("%d tasks stored", n)
	}
	if subs := g.fake.submitted(); len(subs) != 0 {
		t.Errorf("refused tasks reached the music service: %v", subs)
	}
	for _, key := range []string{"", "sk-wrong"} {
		_, err := newRPC(t, g.url, key, "grpc").tasks.GetTask(t.Context(), connect.NewRequest(&parleyv1.GetTaskRequest{Id: "x"}))
		if connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("key %q: %v", key, err)
		}
	}
	if _, err := newRPC(t, g.url, aliceKey, "connect").tasks.ListTasks(t.Context(), connect.NewRequest(&parleyv1.ListTasksRequest{Ids: []string{"a", ""}})); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("an empty id: %v", err)
	}
}
