package songgen

import "github.com/go-json-experiment/json/jsontext"

// Envelope wraps the reply of every operation.
type Envelope struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data"`
}

// MusicBody is the generate-song body. Strings that are empty count as
// absent when the mode is chosen: clients commonly send every field with
// empty defaults.
type MusicBody struct {
	Prompt              string   `json:"prompt"`
	MV                  string   `json:"mv"`
	Title               string   `json:"title"`
	Tags                string   `json:"tags"`
	MakeInstrumental    bool     `json:"make_instrumental"`
	TaskID              string   `json:"task_id"`
	ContinueAt          *float64 `json:"continue_at"`
	ContinueClipID      string   `json:"continue_clip_id"`
	AIDescriptionPrompt string   `json:"ai_description_prompt"`
	NotifyHook          string   `json:"notify_hook"`
}

// LyricsBody is the generate-lyrics body.
type LyricsBody struct {
	Prompt     string `json:"prompt"`
	NotifyHook string `json:"notify_hook"`
}

// UploadBody is the upload-audio body. notify_hook is accepted here too,
// as on every submit.
type UploadBody struct {
	URL        string `json:"url"`
	NotifyHook string `json:"notify_hook"`
}

// ConcatBody is the concatenate body.
type ConcatBody struct {
	ClipID     string `json:"clip_id"`
	IsInfill   bool   `json:"is_infill"`
	NotifyHook string `json:"notify_hook"`
}

// FetchBody is the batch-query body.
type FetchBody struct {
	IDs    *[]string `json:"ids"`
	Action string    `json:"action"`
}

// Task is the task object.
type Task struct {
	TaskID     string         `json:"task_id"`
	NotifyHook string         `json:"notify_hook"`
	Action     string         `json:"action"`
	Status     string         `json:"status"`
	FailReason string         `json:"fail_reason"`
	SubmitTime int64          `json:"submit_time"`
	StartTime  int64          `json:"start_time"`
	FinishTime int64          `json:"finish_time"`
	Progress   string         `json:"progress"`
	Data       jsontext.Value `json:"data"`
}

// Song is the song object.
type Song struct {
	ID                string   `json:"id"`
	Title             string   `json:"title"`
	Status            string   `json:"status"`
	Metadata          Metadata `json:"metadata"`
	AudioURL          string   `json:"audio_url"`
	ImageURL          string   `json:"image_url"`
	ImageLargeURL     string   `json:"image_large_url"`
	VideoURL          string   `json:"video_url"`
	ModelName         string   `json:"model_name"`
	MajorModelVersion string   `json:"major_model_version"`
}

// Metadata is a song's metadata; the pointer fields are null while
// unknown, as the spec says.
type Metadata struct {
	Tags                string   `json:"tags"`
	Prompt              string   `json:"prompt"`
	Duration            *float64 `json:"duration"`
	ErrorType           *string  `json:"error_type"`
	ErrorMessage        *string  `json:"error_message"`
	AudioPromptID       *string  `json:"audio_prompt_id"`
	AIDescriptionPrompt string   `json:"ai_description_prompt"`
}

// Lyrics is the lyrics object.
type Lyrics struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// upstreamTask is a task object as music upstreams send it: the same
// fields, read leniently (progress as "40%" or 40, data as an array of
// songs or one object, timestamps ignored).
type upstreamTask struct {
	TaskID     string         `json:"task_id"`
	Action     string         `json:"action"`
	Status     string         `json:"status"`
	FailReason string         `json:"fail_reason"`
	Progress   jsontext.Value `json:"progress"`
	Data       jsontext.Value `json:"data"`
}
