package chatcompletions

import (
	"encoding/base64"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Content parts, both ways: images (image_url), audio (input_audio) and
// files, with the text and refusal parts read beside them.

func decodePart(w *ContentPart, field place, assistant bool) (*parleyv1.Part, error) {
	var p *parleyv1.Part
	switch w.Type {
	case "text":
		if w.Text == nil {
			return nil, translate.Invalid(field.at(".text"), "is required in a text part")
		}
		p = translate.TextPart(*w.Text)
	case "refusal":
		if !assistant || w.Refusal == nil {
			return nil, translate.Invalid(field.at(""), "a refusal part belongs to an assistant message and needs refusal")
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: *w.Refusal}}}
		markRefusalPart.Keep(&p.Extensions, jsontext.Value("true"))
	case "image_url":
		if w.ImageURL == nil || w.ImageURL.URL == "" {
			return nil, translate.Invalid(field.at(".image_url.url"), "is required in an image_url part")
		}
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, Detail: openai.Detail(w.ImageURL.Detail)}
		if mime, data, ok := openai.ParseDataURL(w.ImageURL.URL); ok {
			media.MimeType, media.Source = mime, &parleyv1.Media_Data{Data: data}
		} else {
			media.Source = &parleyv1.Media_Uri{Uri: w.ImageURL.URL}
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
		jsonx.Keep(&p.Extensions, thisDialect, "image_url", w.ImageURL.Unknown)
	case "input_audio":
		if w.InputAudio == nil || w.InputAudio.Data == "" {
			return nil, translate.Invalid(field.at(".input_audio.data"), "is required in an input_audio part")
		}
		data, err := base64Std(w.InputAudio.Data)
		if err != nil {
			return nil, translate.Invalid(field.at(".input_audio.data"), "is not base64: %v", err)
		}
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_AUDIO, Format: w.InputAudio.Format, MimeType: audioMIME(w.InputAudio.Format), Source: &parleyv1.Media_Data{Data: data}}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
		jsonx.Keep(&p.Extensions, thisDialect, "input_audio", w.InputAudio.Unknown)
	case "file":
		f := w.File
		if f == nil || f.FileData == "" && f.FileID == "" {
			return nil, translate.Invalid(field.at(".file"), "needs file_data or file_id")
		}
		media := &parleyv1.Media{Filename: f.Filename, Kind: parleyv1.MediaKind_MEDIA_KIND_FILE}
		switch {
		case f.FileID != "":
			media.Source = &parleyv1.Media_FileId{FileId: f.FileID}
		default:
			mime, data, ok := openai.ParseDataURL(f.FileData)
			if !ok {
				return nil, translate.Invalid(field.at(".file.file_data"), "must be a base64 data URL (data:application/pdf;base64,...)")
			}
			media.MimeType, media.Kind, media.Source = mime, openai.KindOfMIME(mime), &parleyv1.Media_Data{Data: data}
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
		jsonx.Keep(&p.Extensions, thisDialect, "file", f.Unknown)
	default:
		return nil, translate.Invalid(field.at(".type"), "unknown content part type %q", w.Type)
	}
	jsonx.Keep(&p.Extensions, thisDialect, "", w.Unknown)
	return p, nil
}

var audioMIMEs = map[string]string{"wav": "audio/wav", "mp3": "audio/mpeg"}

func audioMIME(format string) string {
	if m, ok := audioMIMEs[format]; ok {
		return m
	}
	return ""
}

func (e *encoder) media(m *parleyv1.Media, p *parleyv1.Part, field string) (ContentPart, error) {
	unknown := e.take(p.GetExtensions(), "")
	kind := m.GetKind()
	if kind == parleyv1.MediaKind_MEDIA_KIND_UNSPECIFIED {
		kind = openai.KindOfMIME(m.GetMimeType())
	}
	switch kind {
	case parleyv1.MediaKind_MEDIA_KIND_IMAGE:
		if _, ok := m.GetSource().(*parleyv1.Media_FileId); ok {
			return ContentPart{}, translate.Unsupported(thisDialect, field+".media.file_id", "an image by file id has no form in the chat-completions style")
		}
		u := openai.MediaURL(m)
		if u == "" {
			return ContentPart{}, translate.Unsupported(thisDialect, field+".media", "an image needs inline data or a URL")
		}
		return ContentPart{Type: "image_url", ImageURL: &imageURL{URL: u, Detail: openai.DetailWord(m.GetDetail()), Unknown: e.take(p.GetExtensions(), "image_url")}, Unknown: unknown}, nil
	case parleyv1.MediaKind_MEDIA_KIND_AUDIO:
		data, ok := m.GetSource().(*parleyv1.Media_Data)
		if !ok {
			return ContentPart{}, translate.Unsupported(thisDialect, field+".media", "audio must be inline in the chat-completions style")
		}
		format := m.GetFormat()
		if format == "" {
			format = strings.TrimPrefix(strings.TrimPrefix(m.GetMimeType(), "audio/"), "x-")
			if format == "mpeg" {
				format = "mp3"
			}
		}
		if format != "wav" && format != "mp3" {
			return ContentPart{}, translate.Unsupported(thisDialect, field+".media.mime_type", "audio input must be wav or mp3, not %q", m.GetMimeType())
		}
		return ContentPart{Type: "input_audio", InputAudio: &inputAudio{Data: base64.StdEncoding.EncodeToString(data.Data), Format: format, Unknown: e.take(p.GetExtensions(), "input_audio")}, Unknown: unknown}, nil
	case parleyv1.MediaKind_MEDIA_KIND_VIDEO:
		return ContentPart{}, translate.Unsupported(thisDialect, field+".media", "the chat-completions style takes no video")
	}
	f := &file{Filename: m.GetFilename(), Unknown: e.take(p.GetExtensions(), "file")}
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_FileId:
		f.FileID = s.FileId
	case *parleyv1.Media_Data:
		f.FileData = openai.DataURL(m.GetMimeType(), s.Data)
		if f.Filename == "" && !e.same {
			f.Filename = "document" + extension(m.GetMimeType())
		}
	case *parleyv1.Media_Uri:
		return ContentPart{}, translate.Unsupported(thisDialect, field+".media.uri", "a file by URL has no form in the chat-completions style; send it inline")
	}
	return ContentPart{Type: "file", File: f, Unknown: unknown}, nil
}

func mediaNoun(m *parleyv1.Media) string {
	switch m.GetKind() {
	case parleyv1.MediaKind_MEDIA_KIND_IMAGE:
		return "image"
	case parleyv1.MediaKind_MEDIA_KIND_AUDIO:
		return "audio"
	case parleyv1.MediaKind_MEDIA_KIND_VIDEO:
		return "video"
	}
	return "file"
}

func extension(mime string) string {
	switch mime {
	case "application/pdf":
		return ".pdf"
	case "text/plain":
		return ".txt"
	}
	return ""
}
