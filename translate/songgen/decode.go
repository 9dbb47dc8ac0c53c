package songgen

import (
	"net/url"
	"slices"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// DefaultModelVersion is the mv of a song body that names none.
const DefaultModelVersion = "chirp-v3-0"

// DefaultModelVersions are the mv values accepted unless configured: the
// spec's two, and chirp-v4, which the spec's own example sends.
var DefaultModelVersions = []string{"chirp-v3-0", "chirp-v3-5", "chirp-v4"}

// MaxFetchIDs bounds the ids of one batch query.
const MaxFetchIDs = 500

// Submission is a decoded submit request.
type Submission struct {
	Input      *parleyv1.TaskInput
	NotifyHook string
}

func decode(body []byte, v any) error {
	if err := jsonx.Unmarshal(body, v); err != nil {
		return decodeError(body, err)
	}
	return nil
}

// DecodeMusic reads a generate-song body. The mode follows from the
// fields present (empty strings count as absent): any continuation field
// makes a continuation, which needs all three and may carry prompt, title
// and tags for the continued part; else ai_description_prompt makes
// inspiration mode, which takes none of prompt, title and tags; else
// prompt, title and tags make custom mode (prompt may be left out when
// make_instrumental is true: an instrumental has no lyrics). A body that
// fits no mode, or mixes inspiration with another, is refused naming the
// fields. versions lists the accepted mv values.
func DecodeMusic(body []byte, versions []string) (*Submission, error) {
	var b musicBody
	if err := decode(body, &b); err != nil {
		return nil, err
	}
	song := &parleyv1.SongInput{
		Prompt:         b.Prompt,
		Title:          b.Title,
		Tags:           b.Tags,
		ModelVersion:   b.MV,
		Instrumental:   b.MakeInstrumental,
		Inspiration:    b.AIDescriptionPrompt,
		ContinueTaskId: b.TaskID,
		ContinueAt:     b.ContinueAt,
		ContinueClipId: b.ContinueClipID,
	}
	custom := present(map[string]string{"prompt": b.Prompt, "title": b.Title, "tags": b.Tags})
	cont := present(map[string]string{"task_id": b.TaskID, "continue_clip_id": b.ContinueClipID})
	if b.ContinueAt != nil {
		cont = append(cont, "continue_at")
		slices.Sort(cont)
	}
	inspiration := b.AIDescriptionPrompt != ""
	switch {
	case len(cont) > 0:
		if inspiration {
			return nil, fieldError(CodeInvalidMode, "ai_description_prompt", "inspiration mode cannot be combined with continuation (%s); give one or the other", strings.Join(cont, ", "))
		}
		for _, f := range []string{"task_id", "continue_at", "continue_clip_id"} {
			if !slices.Contains(cont, f) {
				return nil, fieldError(CodeMissingField, f, "is required for a continuation, which needs task_id, continue_at and continue_clip_id")
			}
		}
		if *b.ContinueAt < 0 {
			return nil, InvalidField("continue_at", "must be a second of the song, 0 or more; got %g", *b.ContinueAt)
		}
		song.Mode = parleyv1.SongMode_SONG_MODE_CONTINUATION
	case inspiration && len(custom) > 0:
		return nil, fieldError(CodeInvalidMode, "ai_description_prompt", "inspiration mode cannot be combined with custom-mode fields (%s); give ai_description_prompt alone, or prompt, title and tags", strings.Join(custom, ", "))
	case inspiration:
		song.Mode = parleyv1.SongMode_SONG_MODE_INSPIRATION
	case len(custom) > 0:
		for _, f := range []string{"prompt", "title", "tags"} {
			if f == "prompt" && b.MakeInstrumental {
				continue
			}
			if !slices.Contains(custom, f) {
				return nil, fieldError(CodeMissingField, f, "is required in custom mode, which needs prompt, title and tags")
			}
		}
		song.Mode = parleyv1.SongMode_SONG_MODE_CUSTOM
	default:
		return nil, fieldError(CodeInvalidMode, "", "the body fits no mode: give ai_description_prompt (inspiration mode); or prompt, title and tags (custom mode); or task_id, continue_at and continue_clip_id (continuation)")
	}
	if song.ModelVersion == "" {
		song.ModelVersion = DefaultModelVersion
	}
	if len(versions) == 0 {
		versions = DefaultModelVersions
	}
	if !slices.Contains(versions, song.ModelVersion) {
		return nil, InvalidField("mv", "%q is not one of the accepted model versions: %s", song.ModelVersion, strings.Join(versions, ", "))
	}
	if err := checkHook(b.NotifyHook); err != nil {
		return nil, err
	}
	return &Submission{Input: &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Song{Song: song}}, NotifyHook: b.NotifyHook}, nil
}

// present lists, sorted, the names whose values are not empty.
func present(fields map[string]string) []string {
	var names []string
	for k, v := range fields {
		if v != "" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

// DecodeLyrics reads a generate-lyrics body.
func DecodeLyrics(body []byte) (*Submission, error) {
	var b lyricsBody
	if err := decode(body, &b); err != nil {
		return nil, err
	}
	if strings.TrimSpace(b.Prompt) == "" {
		return nil, Missing("prompt")
	}
	if err := checkHook(b.NotifyHook); err != nil {
		return nil, err
	}
	in := &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Lyrics{Lyrics: &parleyv1.LyricsInput{Prompt: b.Prompt}}}
	return &Submission{Input: in, NotifyHook: b.NotifyHook}, nil
}

// DecodeUpload reads an upload-audio body.
func DecodeUpload(body []byte) (*Submission, error) {
	var b uploadBody
	if err := decode(body, &b); err != nil {
		return nil, err
	}
	if b.URL == "" {
		return nil, Missing("url")
	}
	if u, err := url.Parse(b.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, InvalidField("url", "%q is not an absolute http or https URL", b.URL)
	}
	if err := checkHook(b.NotifyHook); err != nil {
		return nil, err
	}
	in := &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Upload{Upload: &parleyv1.UploadInput{Url: b.URL}}}
	return &Submission{Input: in, NotifyHook: b.NotifyHook}, nil
}

// DecodeConcat reads a concatenate body.
func DecodeConcat(body []byte) (*Submission, error) {
	var b concatBody
	if err := decode(body, &b); err != nil {
		return nil, err
	}
	if b.ClipID == "" {
		return nil, Missing("clip_id")
	}
	if err := checkHook(b.NotifyHook); err != nil {
		return nil, err
	}
	in := &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Concat{Concat: &parleyv1.ConcatInput{ClipId: b.ClipID, Infill: b.IsInfill}}}
	return &Submission{Input: in, NotifyHook: b.NotifyHook}, nil
}

// checkHook checks the form of a notify_hook; whether its host may be
// called is the task service's decision.
func checkHook(hook string) error {
	if hook == "" {
		return nil
	}
	u, err := url.Parse(hook)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return InvalidField("notify_hook", "%q is not an absolute http or https URL", hook)
	}
	return nil
}

// fetch is a decoded batch query.
type fetch struct {
	// IDs in the order asked, without repeats.
	IDs []string
	// Action filters the tasks; unspecified keeps all.
	Action parleyv1.TaskAction
}

// DecodeFetch reads a batch-query body. ids is required (an empty array
// is allowed and answers an empty array); action, when given, is MUSIC or
// LYRICS, in any letter case.
func DecodeFetch(body []byte) (*fetch, error) {
	var b fetchBody
	if err := decode(body, &b); err != nil {
		return nil, err
	}
	if b.IDs == nil {
		return nil, Missing("ids")
	}
	if len(*b.IDs) > MaxFetchIDs {
		return nil, InvalidField("ids", "holds %d ids; at most %d are allowed in one query", len(*b.IDs), MaxFetchIDs)
	}
	f := &fetch{}
	seen := map[string]bool{}
	for i, id := range *b.IDs {
		if id == "" {
			return nil, InvalidField("ids["+itoa(i)+"]", "is empty")
		}
		if !seen[id] {
			seen[id] = true
			f.IDs = append(f.IDs, id)
		}
	}
	switch strings.ToUpper(b.Action) {
	case "":
	case ActionMusic:
		f.Action = parleyv1.TaskAction_TASK_ACTION_MUSIC
	case ActionLyrics:
		f.Action = parleyv1.TaskAction_TASK_ACTION_LYRICS
	default:
		return nil, InvalidField("action", "%q is not MUSIC or LYRICS", b.Action)
	}
	return f, nil
}
