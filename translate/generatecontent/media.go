package generatecontent

import (
	"encoding/base64"
	"fmt"
	"mime"
	"path"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Media: inline data (inlineData) and URIs and files (fileData). The media
// of a client's request or an upstream's reply is read in parts.go with
// inlineMedia and kindOf, and written toward a client there; toward an
// upstream it is written by encoder.media, with the MIME type guessed when
// it is unknown.

func inlineMedia(b *blob, path string) (*parleyv1.Media, error) {
	if b.MimeType == "" {
		return nil, translate.Invalid(path+".mimeType", "required field mimeType is missing")
	}
	data, err := decodeBase64(b.Data)
	if err != nil {
		return nil, translate.Invalid(path+".data", "invalid base64 data")
	}
	return &parleyv1.Media{Kind: kindOf(b.MimeType), MimeType: b.MimeType, Source: &parleyv1.Media_Data{Data: data}}, nil
}

// decodeBase64 reads standard or URL-safe base64, padded or not, as Google
// APIs accept both.
func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("invalid base64")
}

func kindOf(mime string) parleyv1.MediaKind {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return parleyv1.MediaKind_MEDIA_KIND_IMAGE
	case strings.HasPrefix(mime, "audio/"):
		return parleyv1.MediaKind_MEDIA_KIND_AUDIO
	case strings.HasPrefix(mime, "video/"):
		return parleyv1.MediaKind_MEDIA_KIND_VIDEO
	case mime == "application/pdf" || strings.HasPrefix(mime, "text/"):
		return parleyv1.MediaKind_MEDIA_KIND_DOCUMENT
	}
	return parleyv1.MediaKind_MEDIA_KIND_FILE
}

// media writes inline data as inlineData and a URI as fileData. URIs go as
// they are: Parley fetches nothing; the service reads the URIs it can (its
// own file URIs, cloud storage, some public URLs).
func (e *encoder) media(w *Part, m *parleyv1.Media, p *parleyv1.Part, field string) error {
	mt := m.GetMimeType()
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_Data:
		if mt == "" {
			mt = defaultMime(m)
		}
		if mt == "" {
			return translate.Unsupported(thisDialect, field+".media.mime_type", "inline media needs a MIME type")
		}
		w.InlineData = &blob{MimeType: mt, Data: base64.StdEncoding.EncodeToString(s.Data), Unknown: e.partUnknown(p, "inlineData")}
	case *parleyv1.Media_Uri:
		if mt == "" {
			mt = mime.TypeByExtension(path.Ext(s.Uri))
			if i := strings.IndexByte(mt, ';'); i >= 0 {
				mt = mt[:i]
			}
		}
		if mt == "" {
			mt = defaultMime(m)
		}
		w.FileData = &fileData{MimeType: mt, FileURI: s.Uri, Unknown: e.partUnknown(p, "fileData")}
	case *parleyv1.Media_FileId:
		if !strings.HasPrefix(s.FileId, "files/") && !strings.Contains(s.FileId, "/files/") {
			return translate.Unsupported(thisDialect, field+".media.file_id", "file id %q is not a file of this service", s.FileId)
		}
		w.FileData = &fileData{MimeType: mt, FileURI: s.FileId}
	default:
		return translate.Invalid(field+".media", "media without data, URI or file id")
	}
	return nil
}

func defaultMime(m *parleyv1.Media) string {
	switch m.GetKind() {
	case parleyv1.MediaKind_MEDIA_KIND_DOCUMENT:
		return "application/pdf"
	case parleyv1.MediaKind_MEDIA_KIND_AUDIO:
		if f := m.GetFormat(); f != "" {
			return "audio/" + f
		}
	}
	return ""
}

func describeMedia(m *parleyv1.Media) string {
	if m.GetMimeType() != "" {
		return m.GetMimeType()
	}
	return strings.ToLower(strings.TrimPrefix(m.GetKind().String(), "MEDIA_KIND_"))
}

// responseMedia is a piece of media of a function response, as the
// canonical result's content.
func responseMedia(fp *functionResponsePart, path string) (*parleyv1.Part, error) {
	p := &parleyv1.Part{}
	switch {
	case fp.InlineData != nil:
		m, err := inlineMedia(fp.InlineData, path+".inlineData")
		if err != nil {
			return nil, err
		}
		p.Kind = &parleyv1.Part_Media{Media: m}
		jsonx.Keep(&p.Extensions, thisDialect, "inlineData", fp.InlineData.Unknown)
	case fp.FileData != nil:
		if fp.FileData.FileURI == "" {
			return nil, translate.Invalid(path+".fileData.fileUri", "required field fileUri is missing")
		}
		p.Kind = &parleyv1.Part_Media{Media: &parleyv1.Media{Kind: kindOf(fp.FileData.MimeType), MimeType: fp.FileData.MimeType, Source: &parleyv1.Media_Uri{Uri: fp.FileData.FileURI}}}
		jsonx.Keep(&p.Extensions, thisDialect, "fileData", fp.FileData.Unknown)
	default:
		return nil, translate.Invalid(path, "a function response part holds inlineData or fileData")
	}
	return p, nil
}
