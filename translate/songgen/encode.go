package songgen

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Wire spellings of actions and statuses.
const (
	ActionMusic  = "MUSIC"
	ActionLyrics = "LYRICS"

	StatusInProgress = "IN_PROGRESS"
	StatusSuccess    = "SUCCESS"
	StatusFail       = "FAIL"
)

// Lyrics status words, as the music service uses them.
const (
	LyricsRunning  = "running"
	LyricsComplete = translate.LyricsComplete
	LyricsError    = "error"
)

func itoa(i int) string { return strconv.Itoa(i) }

// WireAction is the action a task shows. Upload and concatenation tasks
// produce songs, so they show as MUSIC with an array of song objects in
// data: the spec knows only MUSIC and LYRICS, and clients choose how to
// read data by action.
func WireAction(a parleyv1.TaskAction) string {
	if a == parleyv1.TaskAction_TASK_ACTION_LYRICS {
		return ActionLyrics
	}
	return ActionMusic
}

// WireStatus is the status word a task shows.
func WireStatus(s parleyv1.TaskStatus) string {
	switch s {
	case parleyv1.TaskStatus_TASK_STATUS_SUCCESS:
		return StatusSuccess
	case parleyv1.TaskStatus_TASK_STATUS_FAIL:
		return StatusFail
	}
	return StatusInProgress
}

// unix is a timestamp in seconds since the epoch, 0 when unset.
func unix(t *timestamppb.Timestamp) int64 {
	if t == nil {
		return 0
	}
	return t.GetSeconds()
}

// WireTask is the task object of a canonical task: every field the spec
// lists, with empty strings and zero where it says so.
func WireTask(t *parleyv1.Task) *task {
	w := &task{
		TaskID:     t.GetId(),
		NotifyHook: t.GetNotifyHook(),
		Action:     WireAction(t.GetAction()),
		Status:     WireStatus(t.GetStatus()),
		FailReason: t.GetFailReason(),
		SubmitTime: unix(t.GetSubmittedAt()),
		StartTime:  unix(t.GetStartedAt()),
		FinishTime: unix(t.GetFinishedAt()),
		Progress:   strconv.Itoa(int(t.GetProgress())) + "%",
	}
	if t.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_SUCCESS && t.GetStatus() != parleyv1.TaskStatus_TASK_STATUS_FAIL {
		w.FinishTime = 0
	}
	if w.Action == ActionLyrics {
		w.Data, _ = jsonx.Marshal(wireLyrics(t))
	} else {
		songs := make([]song, 0, len(t.GetSongs()))
		for _, s := range t.GetSongs() {
			songs = append(songs, wireSong(s))
		}
		w.Data, _ = jsonx.Marshal(songs)
	}
	return w
}

// wireLyrics is the lyrics object of a lyrics task: before the lyrics
// exist, an object with empty text and the status word "running" ("error"
// when the task failed), so that data always has the one shape.
func wireLyrics(t *parleyv1.Task) lyrics {
	if l := t.GetLyrics(); l != nil {
		return lyrics{ID: l.GetId(), Text: l.GetText(), Title: l.GetTitle(), Status: l.GetStatus()}
	}
	status := LyricsRunning
	if t.GetStatus() == parleyv1.TaskStatus_TASK_STATUS_FAIL {
		status = LyricsError
	}
	return lyrics{Status: status}
}

func wireSong(s *parleyv1.Song) song {
	m := s.GetMetadata()
	return song{
		ID:     s.GetId(),
		Title:  s.GetTitle(),
		Status: s.GetStatus(),
		Metadata: metadata{
			Tags:                m.GetTags(),
			Prompt:              m.GetPrompt(),
			Duration:            m.Duration,
			ErrorType:           m.ErrorType,
			ErrorMessage:        m.ErrorMessage,
			AudioPromptID:       m.AudioPromptId,
			AIDescriptionPrompt: m.GetInspiration(),
		},
		AudioURL:          s.GetAudioUrl(),
		ImageURL:          s.GetImageUrl(),
		ImageLargeURL:     s.GetImageLargeUrl(),
		VideoURL:          s.GetVideoUrl(),
		ModelName:         s.GetModelName(),
		MajorModelVersion: s.GetMajorModelVersion(),
	}
}

// EncodeTask is the task object as JSON, the body of a notify_hook call.
func EncodeTask(t *parleyv1.Task) ([]byte, error) { return jsonx.Marshal(WireTask(t)) }

// Success is the envelope of a successful operation around data.
func Success(data any) ([]byte, error) {
	raw, err := jsonx.Marshal(data)
	if err != nil {
		return nil, err
	}
	return jsonx.Marshal(Envelope{Code: CodeSuccess, Message: "", Data: jsontext.Value(raw)})
}

// EncodeTasks is the envelope of a batch query.
func EncodeTasks(ts []*parleyv1.Task) ([]byte, error) {
	out := make([]*task, 0, len(ts))
	for _, t := range ts {
		out = append(out, WireTask(t))
	}
	return Success(out)
}
