package messages

import (
	"encoding/base64"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Media, both ways: image and document blocks and their sources (base64,
// plain text, URL, file id).

func media(b *Block, path string) (*parleyv1.Media, error) {
	var src source
	if len(b.Source) == 0 {
		return nil, translate.Invalid(path+".source", "Field required")
	}
	if err := jsonx.Unmarshal(b.Source, &src); err != nil {
		return nil, decodeErrorAt(err, path+".source")
	}
	m := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE}
	if b.Type == "document" {
		m.Kind = parleyv1.MediaKind_MEDIA_KIND_DOCUMENT
		if b.Title != nil {
			m.Title = *b.Title
		}
		if b.Context != nil {
			m.Context = *b.Context
		}
	}
	spath := path + ".source"
	switch src.Type {
	case "base64":
		if src.MediaType == "" {
			return nil, translate.Invalid(spath+".media_type", "Field required")
		}
		if b.Type == "image" && !imageTypes[src.MediaType] {
			return nil, translate.Invalid(spath+".media_type", "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'")
		}
		data, err := base64.StdEncoding.DecodeString(src.Data)
		if err != nil {
			return nil, translate.Invalid(spath+".data", "invalid base64 data")
		}
		m.MimeType = src.MediaType
		m.Source = &parleyv1.Media_Data{Data: data}
	case "text":
		if b.Type != "document" {
			return nil, translate.Invalid(spath+".type", "Input should be 'base64', 'url' or 'file'")
		}
		m.MimeType = "text/plain"
		if src.MediaType != "" {
			m.MimeType = src.MediaType
		}
		m.Source = &parleyv1.Media_Data{Data: []byte(src.Data)}
	case "url":
		if src.URL == "" {
			return nil, translate.Invalid(spath+".url", "Field required")
		}
		m.Source = &parleyv1.Media_Uri{Uri: src.URL}
		if b.Type == "document" {
			m.MimeType = "application/pdf"
		}
	case "file":
		if src.FileID == "" {
			return nil, translate.Invalid(spath+".file_id", "Field required")
		}
		m.Source = &parleyv1.Media_FileId{FileId: src.FileID}
	case "content":
		return nil, nil // a document made of blocks: kept raw
	default:
		return nil, translate.Invalid(spath+".type", "Input should be 'base64', 'url', 'text', 'content' or 'file'")
	}
	if len(src.Unknown) > 0 {
		return nil, nil
	}
	return m, nil
}

var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// media fills b with a media block. b is the caller's: a Block returned
// by value would take its size again in the caller's frame.
func (e *encoder) media(b *Block, m *parleyv1.Media, field string) error {
	*b = Block{Type: "image"}
	doc := m.GetKind() == parleyv1.MediaKind_MEDIA_KIND_DOCUMENT || m.GetMimeType() == "application/pdf" || strings.HasPrefix(m.GetMimeType(), "text/")
	switch {
	case doc:
		b.Type = "document"
		if m.GetTitle() != "" {
			b.Title = ptr(m.GetTitle())
		}
		if m.GetContext() != "" {
			b.Context = ptr(m.GetContext())
		}
	case m.GetKind() == parleyv1.MediaKind_MEDIA_KIND_IMAGE || strings.HasPrefix(m.GetMimeType(), "image/"):
	default:
		return translate.Unsupported(thisDialect, field+".media", "the messages style takes images and documents, not %s", describeMedia(m))
	}
	var src source
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_Data:
		switch {
		case b.Type == "document" && strings.HasPrefix(m.GetMimeType(), "text/"):
			src = source{Type: "text", MediaType: "text/plain", Data: string(s.Data)}
		case b.Type == "document" && m.GetMimeType() != "application/pdf":
			return translate.Unsupported(thisDialect, field+".media.mime_type", "the messages style takes PDF and plain-text documents, not %s", m.GetMimeType())
		case b.Type == "image" && !imageTypes[m.GetMimeType()]:
			return translate.Unsupported(thisDialect, field+".media.mime_type", "the messages style takes JPEG, PNG, GIF and WebP images, not %s", m.GetMimeType())
		default:
			src = source{Type: "base64", MediaType: m.GetMimeType(), Data: base64.StdEncoding.EncodeToString(s.Data)}
		}
	case *parleyv1.Media_Uri:
		if !strings.HasPrefix(s.Uri, "https://") && !strings.HasPrefix(s.Uri, "http://") {
			return translate.Unsupported(thisDialect, field+".media.uri", "the messages style fetches http(s) URLs only, not %q", s.Uri)
		}
		src = source{Type: "url", URL: s.Uri}
	case *parleyv1.Media_FileId:
		src = source{Type: "file", FileID: s.FileId}
	default:
		return translate.Invalid(field+".media", "media without data, URI or file id")
	}
	raw, ok := src.appendTo(nil)
	if !ok {
		var err error
		if raw, err = jsonx.Marshal(src); err != nil {
			return err
		}
	}
	b.Source = raw
	return nil
}

// appendTo appends the source as Marshal writes it, without reflection
// (whose writing of a struct goes several kilobytes deep); ok is false
// when Marshal must write it (members of its own, text that is not
// UTF-8).
func (s *source) appendTo(b []byte) (_ []byte, ok bool) {
	if len(s.Unknown) > 0 {
		return b, false
	}
	b = append(b, `{"type":`...)
	if b, ok = jsonx.AppendQuote(b, s.Type); !ok {
		return b, false
	}
	for _, m := range [...]struct{ name, v string }{
		{`,"media_type":`, s.MediaType}, {`,"data":`, s.Data}, {`,"url":`, s.URL}, {`,"file_id":`, s.FileID},
	} {
		if m.v == "" {
			continue
		}
		if b, ok = jsonx.AppendQuote(append(b, m.name...), m.v); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func describeMedia(m *parleyv1.Media) string {
	if m.GetMimeType() != "" {
		return m.GetMimeType()
	}
	return strings.ToLower(strings.TrimPrefix(m.GetKind().String(), "MEDIA_KIND_"))
}
