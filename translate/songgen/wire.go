package songgen

import "github.com/go-json-experiment/json/jsontext"

// Envelope wraps the reply of every operation.
type Envelope struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data"`
}

// musicBody is the generate-song body. Strings that are empty count as
// absent when the mode is chosen: clients commonly send every field with
// empty defaults.
type musicBody struct {
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

// lyricsBody is the generate-lyrics body.
type lyricsBody struct {
	Prompt     string `json:"prompt"`
	NotifyHook string `json:"notify_hook"`
}

// uploadBody is the upload-audio body. notify_hook is accepted here too,
// as on every submit.
type uploadBody struct {
	URL        string `json:"url"`
	NotifyHook string `json:"notify_hook"`
}

// concatBody is the concatenate body.
type concatBody struct {
	ClipID     string `json:"clip_id"`
	IsInfill   bool   `json:"is_infill"`
	NotifyHook string `json:"notify_hook"`
}

// fetchBody is the batch-query body.
type fetchBody struct {
	IDs    *[]string `json:"ids"`
	Action string    `json:"action"`
}

// task is the task object.
type task struct {
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

// song is the song object.
type song struct {
	ID                string   `json:"id"`
	Title             string   `json:"title"`
	Status            string   `json:"status"`
	Metadata          metadata `json:"metadata"`
	AudioURL          string   `json:"audio_url"`
	ImageURL          string   `json:"image_url"`
	ImageLargeURL     string   `json:"image_large_url"`
	VideoURL          string   `json:"video_url"`
	ModelName         string   `json:"model_name"`
	MajorModelVersion string   `json:"major_model_version"`
}

// metadata is a song's metadata; the pointer fields are null while
// unknown, as the spec says.
type metadata struct {
	Tags                string   `json:"tags"`
	Prompt              string   `json:"prompt"`
	Duration            *float64 `json:"duration"`
	ErrorType           *string  `json:"error_type"`
	ErrorMessage        *string  `json:"error_message"`
	AudioPromptID       *string  `json:"audio_prompt_id"`
	AIDescriptionPrompt string   `json:"ai_description_prompt"`
}

// lyrics is the lyrics object.
type lyrics struct {
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
