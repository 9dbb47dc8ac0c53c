package responses

import (
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Media: images (input_image) and files (input_file). They are read in
// itemDecoder.contentPart (messages.go); toward an upstream they are
// written by encoder.media. Audio and video have no input form here.

func (e *encoder) media(m *parleyv1.Media, field string) (*ContentPart, error) {
	kind := m.GetKind()
	if kind == parleyv1.MediaKind_MEDIA_KIND_UNSPECIFIED {
		kind = openai.KindOfMIME(m.GetMimeType())
	}
	switch kind {
	case parleyv1.MediaKind_MEDIA_KIND_IMAGE:
		cp := &ContentPart{Type: "input_image", Detail: openai.DetailWord(m.GetDetail())}
		if id, ok := m.GetSource().(*parleyv1.Media_FileId); ok {
			cp.FileID = &id.FileId
		} else {
			u := openai.MediaURL(m)
			cp.ImageURL = &u
		}
		if cp.Detail == "" && !e.same {
			cp.Detail = "auto"
		}
		return cp, nil
	case parleyv1.MediaKind_MEDIA_KIND_AUDIO, parleyv1.MediaKind_MEDIA_KIND_VIDEO:
		return nil, translate.Unsupported(thisDialect, field+".media", "the responses style takes no %s input", strings.ToLower(strings.TrimPrefix(kind.String(), "MEDIA_KIND_")))
	}
	cp := &ContentPart{Type: "input_file"}
	if m.GetFilename() != "" {
		cp.Filename = new(m.GetFilename())
	}
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_FileId:
		cp.FileID = &s.FileId
	case *parleyv1.Media_Data:
		cp.FileData = new(openai.DataURL(m.GetMimeType(), s.Data))
		if cp.Filename == nil {
			cp.Filename = new("document" + extension(m.GetMimeType()))
		}
	case *parleyv1.Media_Uri:
		cp.FileURL = &s.Uri
	}
	return cp, nil
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
