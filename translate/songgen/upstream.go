package songgen

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Paths of the interface, relative to the base URL.
const (
	PathMusic  = "/songgen/submit/music"
	PathLyrics = "/songgen/submit/lyrics"
	PathUpload = "/songgen/uploads/audio-url"
	PathConcat = "/songgen/submit/concat"
	PathFetch  = "/songgen/fetch"
)

// EncodeSubmit is the path and body that relay a task to a music upstream
// speaking this same interface. continueID is the upstream's own id of
// the task a continuation continues. The client's notify_hook is not
// passed on: Parley polls, and calls the client itself.
func EncodeSubmit(in *parleyv1.TaskInput, continueID string) (path string, body []byte, err error) {
	switch k := in.GetKind().(type) {
	case *parleyv1.TaskInput_Song:
		s := k.Song
		b := musicBody{
			Prompt:           s.GetPrompt(),
			MV:               s.GetModelVersion(),
			Title:            s.GetTitle(),
			Tags:             s.GetTags(),
			MakeInstrumental: s.GetInstrumental(),
		}
		switch s.GetMode() {
		case parleyv1.SongMode_SONG_MODE_INSPIRATION:
			b = musicBody{AIDescriptionPrompt: s.GetInspiration(), MV: s.GetModelVersion(), MakeInstrumental: s.GetInstrumental()}
		case parleyv1.SongMode_SONG_MODE_CONTINUATION:
			b.TaskID, b.ContinueAt, b.ContinueClipID = continueID, s.ContinueAt, s.GetContinueClipId()
		}
		body, err = jsonx.Marshal(omitEmptyMusic(b))
		return PathMusic, body, err
	case *parleyv1.TaskInput_Lyrics:
		body, err = jsonx.Marshal(map[string]string{"prompt": k.Lyrics.GetPrompt()})
		return PathLyrics, body, err
	case *parleyv1.TaskInput_Upload:
		body, err = jsonx.Marshal(map[string]string{"url": k.Upload.GetUrl()})
		return PathUpload, body, err
	case *parleyv1.TaskInput_Concat:
		body, err = jsonx.Marshal(map[string]any{"clip_id": k.Concat.GetClipId(), "is_infill": k.Concat.GetInfill()})
		return PathConcat, body, err
	}
	return "", nil, fmt.Errorf("songgen: task input has no kind")
}

// omitEmptyMusic keeps only the fields of a song body that carry a value,
// so that the upstream chooses the same mode Parley did.
func omitEmptyMusic(b musicBody) map[string]any {
	m := map[string]any{"mv": b.MV}
	for k, v := range map[string]string{"prompt": b.Prompt, "title": b.Title, "tags": b.Tags, "task_id": b.TaskID, "continue_clip_id": b.ContinueClipID, "ai_description_prompt": b.AIDescriptionPrompt} {
		if v != "" {
			m[k] = v
		}
	}
	if b.ContinueAt != nil {
		m["continue_at"] = *b.ContinueAt
	}
	if b.MakeInstrumental {
		m["make_instrumental"] = true
	}
	return m
}

// EncodeFetch is the body of a batch query for upstream ids.
func EncodeFetch(ids []string) ([]byte, error) {
	return jsonx.Marshal(map[string]any{"ids": ids})
}

// DecodeSubmitReply reads the upstream's reply to a submit: its task id.
func DecodeSubmitReply(status int, h http.Header, body []byte) (string, error) {
	var env Envelope
	if err := jsonx.Unmarshal(body, &env); err != nil || status < 200 || status > 299 || env.Code != CodeSuccess {
		return "", UpstreamError(status, h, body)
	}
	var id string
	if err := jsonx.Unmarshal(env.Data, &id); err != nil || id == "" {
		return "", upstreamProtocol("its submit reply has no task id in data")
	}
	return id, nil
}

// DecodeFetchReply reads the upstream's reply to a batch query. A task
// whose data cannot be read is reported with no songs rather than failing
// the batch; a reply that is not the envelope is an error.
func DecodeFetchReply(status int, h http.Header, body []byte) ([]*translate.TaskUpdate, error) {
	var env Envelope
	if err := jsonx.Unmarshal(body, &env); err != nil || status < 200 || status > 299 || env.Code != CodeSuccess {
		return nil, UpstreamError(status, h, body)
	}
	var tasks []upstreamTask
	if err := jsonx.Unmarshal(env.Data, &tasks); err != nil {
		return nil, upstreamProtocol("its fetch reply has no array of tasks in data")
	}
	out := make([]*translate.TaskUpdate, 0, len(tasks))
	for i := range tasks {
		out = append(out, update(&tasks[i]))
	}
	return out, nil
}

func update(t *upstreamTask) *translate.TaskUpdate {
	u := &translate.TaskUpdate{UpstreamID: t.TaskID, Word: t.Status, FailReason: t.FailReason, Progress: progress(t.Progress)}
	u.Status, _ = MapStatus(t.Status)
	switch data := t.Data; {
	case len(data) == 0 || data.Kind() == 'n':
	case data.Kind() == '[':
		var songs []song
		if jsonx.Unmarshal(data, &songs) == nil {
			for i := range songs {
				u.Songs = append(u.Songs, canonicalSong(&songs[i]))
			}
		}
	case data.Kind() == '{':
		var l lyrics
		if jsonx.Unmarshal(data, &l) == nil {
			u.Lyrics = &parleyv1.Lyrics{Id: l.ID, Text: l.Text, Title: l.Title, Status: l.Status}
		}
	}
	return u
}

// MapStatus maps a status word onto the spec's three. Besides the spec's
// own words it knows those real relays report (NOT_START, SUBMITTED,
// QUEUED, IN_PROGRESS, SUCCESS, FAILURE, UNKNOWN) and the music service's
// item words (streaming, complete, error). Unknown words, UNKNOWN
// included, keep the task in progress: the maximum age ends it if the
// upstream never says more. known is false for a word not in the table.
func MapStatus(word string) (s parleyv1.TaskStatus, known bool) {
	switch strings.ToUpper(strings.TrimSpace(word)) {
	case "SUCCESS", "SUCCEEDED", "COMPLETE", "COMPLETED":
		return parleyv1.TaskStatus_TASK_STATUS_SUCCESS, true
	case "FAIL", "FAILURE", "FAILED", "ERROR", "CANCELLED", "CANCELED":
		return parleyv1.TaskStatus_TASK_STATUS_FAIL, true
	case "NOT_START", "SUBMITTED", "QUEUED", "PENDING", "IN_PROGRESS", "PROCESSING", "RUNNING", "STREAMING":
		return parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS, true
	}
	return parleyv1.TaskStatus_TASK_STATUS_IN_PROGRESS, false
}

// progress reads "40%", "40" or 40; -1 when absent or unreadable.
func progress(v jsontext.Value) int32 {
	if len(v) == 0 {
		return -1
	}
	var f float64
	switch v.Kind() {
	case '0':
		if jsonx.Unmarshal(v, &f) != nil {
			return -1
		}
	case '"':
		var s string
		if jsonx.Unmarshal(v, &s) != nil {
			return -1
		}
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64); err != nil {
			return -1
		}
	default:
		return -1
	}
	return int32(math.Max(0, math.Min(100, math.Floor(f))))
}

func canonicalSong(s *song) *parleyv1.Song {
	return &parleyv1.Song{
		Id:     s.ID,
		Title:  s.Title,
		Status: s.Status,
		Metadata: &parleyv1.SongMetadata{
			Tags:          s.Metadata.Tags,
			Prompt:        s.Metadata.Prompt,
			Duration:      s.Metadata.Duration,
			ErrorType:     s.Metadata.ErrorType,
			ErrorMessage:  s.Metadata.ErrorMessage,
			AudioPromptId: s.Metadata.AudioPromptID,
			Inspiration:   s.Metadata.AIDescriptionPrompt,
		},
		AudioUrl:          s.AudioURL,
		ImageUrl:          s.ImageURL,
		ImageLargeUrl:     s.ImageLargeURL,
		VideoUrl:          s.VideoURL,
		ModelName:         s.ModelName,
		MajorModelVersion: s.MajorModelVersion,
	}
}

// UpstreamError is the canonical error for a music upstream's failed
// reply: 429 stays rate_limited with its Retry-After; a refusal of
// Parley's own key is the upstream's fault (502), not the caller's; other
// 4xx replies, and envelopes with a code other than success, reject the
// request (400) with the upstream's message; 5xx replies are
// upstream_error (502), or upstream_unavailable (503) when it says so.
func UpstreamError(status int, h http.Header, body []byte) error {
	var env Envelope
	msg := ""
	if jsonx.Unmarshal(body, &env) == nil {
		msg = env.Message
		if msg == "" && env.Code != CodeSuccess {
			msg = env.Code
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &parleyv1.Error{Message: "the music service answered " + strconv.Itoa(status) + ": " + msg, Retry: translate.Retry(translate.ReplyRetryFacts(status, h))}
	switch {
	case status == http.StatusTooManyRequests:
		e.Code, e.Reason, e.HttpStatus = parleyv1.Code_CODE_RESOURCE_EXHAUSTED, CodeRateLimited, http.StatusTooManyRequests
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Code, e.Reason, e.HttpStatus = parleyv1.Code_CODE_UNKNOWN, CodeUpstreamError, http.StatusBadGateway
		e.Message = "the music service refused Parley's upstream key (" + strconv.Itoa(status) + "): " + msg
	case status >= 200 && status < 500:
		e.Code, e.Reason, e.HttpStatus = parleyv1.Code_CODE_INVALID_ARGUMENT, CodeUpstreamRejected, http.StatusBadRequest
	case status == http.StatusServiceUnavailable:
		e.Code, e.Reason, e.HttpStatus = parleyv1.Code_CODE_UNAVAILABLE, CodeUpstreamUnavailable, http.StatusServiceUnavailable
	default:
		e.Code, e.Reason, e.HttpStatus = parleyv1.Code_CODE_UNKNOWN, CodeUpstreamError, http.StatusBadGateway
	}
	return translate.UpstreamFailed(e)
}

func upstreamProtocol(what string) error {
	return translate.UpstreamFailed(&parleyv1.Error{
		Code: parleyv1.Code_CODE_UNKNOWN, Reason: CodeUpstreamError, HttpStatus: http.StatusBadGateway,
		Message: "the music service's reply could not be read: " + what,
	})
}
