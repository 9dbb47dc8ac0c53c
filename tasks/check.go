package tasks

import (
	"net/url"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// CheckInput holds a canonical task input (a Connect client's, which no
// wire decoder has seen) to the rules the /songgen decoders apply, and
// names bad fields by their canonical path: input.song.title and so on.
// It returns the input as it will be submitted: a copy with the default
// model version filled in. versions lists the accepted model versions
// (empty: config.DefaultModelVersions).
func CheckInput(in *parleyv1.TaskInput, hook string, versions []string) (*parleyv1.TaskInput, error) {
	if err := checkHookForm("notify_hook", hook); err != nil {
		return nil, err
	}
	switch k := in.GetKind().(type) {
	case *parleyv1.TaskInput_Song:
		song, err := checkSong(k.Song, versions)
		if err != nil {
			return nil, err
		}
		return &parleyv1.TaskInput{Kind: &parleyv1.TaskInput_Song{Song: song}}, nil
	case *parleyv1.TaskInput_Lyrics:
		if strings.TrimSpace(k.Lyrics.GetPrompt()) == "" {
			return nil, translate.Invalid("input.lyrics.prompt", "is required")
		}
	case *parleyv1.TaskInput_Upload:
		if k.Upload.GetUrl() == "" {
			return nil, translate.Invalid("input.upload.url", "is required")
		}
		if err := checkHookForm("input.upload.url", k.Upload.GetUrl()); err != nil {
			return nil, err
		}
	case *parleyv1.TaskInput_Concat:
		if k.Concat.GetClipId() == "" {
			return nil, translate.Invalid("input.concat.clip_id", "is required")
		}
	default:
		return nil, translate.Invalid("input", "is required: one of song, lyrics, upload or concat")
	}
	return in, nil
}

// checkSong checks a song input against its mode.
func checkSong(s *parleyv1.SongInput, versions []string) (*parleyv1.SongInput, error) {
	const at = "input.song."
	set := func(fields map[string]bool) []string {
		var names []string
		for k, v := range fields {
			if v {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		return names
	}
	custom := set(map[string]bool{"prompt": s.GetPrompt() != "", "title": s.GetTitle() != "", "tags": s.GetTags() != ""})
	cont := set(map[string]bool{"continue_task_id": s.GetContinueTaskId() != "", "continue_at": s.ContinueAt != nil, "continue_clip_id": s.GetContinueClipId() != ""})
	switch s.GetMode() {
	case parleyv1.SongMode_SONG_MODE_INSPIRATION:
		if s.GetInspiration() == "" {
			return nil, translate.Invalid(at+"inspiration", "is required in inspiration mode")
		}
		if others := append(custom, cont...); len(others) > 0 {
			return nil, translate.Invalid(at+others[0], "is not taken in inspiration mode (the service writes lyrics, title and tags)")
		}
	case parleyv1.SongMode_SONG_MODE_CUSTOM:
		for _, f := range []string{"prompt", "title", "tags"} {
			if !slices.Contains(custom, f) && (f != "prompt" || !s.GetInstrumental()) {
				return nil, translate.Invalid(at+f, "is required in custom mode")
			}
		}
		if s.GetInspiration() != "" || len(cont) > 0 {
			return nil, translate.Invalid(at+"mode", "custom mode takes no inspiration and no continuation fields")
		}
	case parleyv1.SongMode_SONG_MODE_CONTINUATION:
		for _, f := range []string{"continue_task_id", "continue_at", "continue_clip_id"} {
			if !slices.Contains(cont, f) {
				return nil, translate.Invalid(at+f, "is required for a continuation")
			}
		}
		if s.GetContinueAt() < 0 {
			return nil, translate.Invalid(at+"continue_at", "must be a second of the song, 0 or more; got %g", s.GetContinueAt())
		}
		if s.GetInspiration() != "" {
			return nil, translate.Invalid(at+"inspiration", "is not taken by a continuation")
		}
	default:
		return nil, translate.Invalid(at+"mode", "is required: INSPIRATION, CUSTOM or CONTINUATION")
	}
	if len(versions) == 0 {
		versions = config.DefaultModelVersions
	}
	mv := s.GetModelVersion()
	if mv == "" {
		mv = config.DefaultModelVersion
	}
	if !slices.Contains(versions, mv) {
		return nil, translate.Invalid(at+"model_version", "%q is not one of the accepted model versions: %s", mv, strings.Join(versions, ", "))
	}
	if mv == s.GetModelVersion() {
		return s, nil
	}
	out := proto.CloneOf(s)
	out.ModelVersion = mv
	return out, nil
}

// checkHookForm checks that an address is an absolute http or https URL.
func checkHookForm(field, addr string) error {
	if addr == "" {
		return nil
	}
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return translate.Invalid(field, "%q is not an absolute http or https URL", addr)
	}
	return nil
}
