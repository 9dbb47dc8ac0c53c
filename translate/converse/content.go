package converse

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Content blocks toward the service: one canonical part gives the blocks
// of one ContentBlock union, and a cache point after them when the part
// ends a cacheable prefix. Media (images, documents, videos) and their
// names are here; reasoning and tool blocks are in reasoning.go and
// tools.go.

// part returns the blocks of one part: none when the part cannot go to
// this upstream (another service's reasoning, another service's hosted
// tool), one usually, and a cache point after it when it carries one.
func (e *encoder) part(p *parleyv1.Part, at translate.PartPath) ([]ContentBlock, error) {
	var b ContentBlock
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		if k.Text.GetText() == "" {
			return nil, nil // the service refuses blank text blocks
		}
		b.Text = ptr(k.Text.GetText())
	case *parleyv1.Part_Refusal:
		if k.Refusal.GetText() == "" {
			return nil, nil
		}
		b.Text = ptr(k.Refusal.GetText())
	case *parleyv1.Part_Media:
		var err error
		if b, err = e.media(k.Media, at.String()+".media"); err != nil {
			return nil, err
		}
	case *parleyv1.Part_ToolCall:
		tu, err := e.toolUse(k.ToolCall, at)
		if err != nil {
			return nil, err
		}
		b.ToolUse = tu
	case *parleyv1.Part_ToolResult:
		tr, err := e.toolResult(k.ToolResult, at)
		if err != nil {
			return nil, err
		}
		b.ToolResult = tr
	case *parleyv1.Part_Reasoning:
		rc := e.reasoning(p, k.Reasoning)
		if rc == nil {
			return nil, nil
		}
		b.ReasoningContent = rc
	case *parleyv1.Part_ExecutableCode:
		// Code another service ran for the model: kept as text so that the
		// model still sees what happened.
		lang := strings.ToLower(strings.TrimPrefix(k.ExecutableCode.GetLanguage().String(), "CODE_LANGUAGE_"))
		b.Text = ptr("```" + lang + "\n" + k.ExecutableCode.GetCode() + "\n```")
	case *parleyv1.Part_CodeExecutionResult:
		b.Text = ptr("Code execution output:\n" + k.CodeExecutionResult.GetOutput())
	case *parleyv1.Part_HostedToolCall, *parleyv1.Part_HostedToolResult:
		return nil, nil // another service's server tool: nothing to send
	case *parleyv1.Part_ItemReference:
		return nil, translate.Unsupported(thisDialect, at.String()+".item_reference", "an item reference needs the stored response it points to")
	default:
		// Another dialect's item kept whole for that dialect alone.
		e.drop(at.String())
		return nil, nil
	}
	out := []ContentBlock{b}
	if cp := newCachePoint(p.GetCacheControl()); cp != nil {
		out = append(out, ContentBlock{CachePoint: cp})
	}
	return out, nil
}

// cachePoint is the cache point of a canonical breakpoint: the default
// lifetime (five minutes), or one hour for a longer one, as the service
// offers those two.
func newCachePoint(cc *parleyv1.CacheControl) *cachePoint {
	if cc == nil {
		return nil
	}
	cp := &cachePoint{Type: "default"}
	if ttl := cc.GetTtl(); ttl != nil {
		if ttl.AsDuration() > 5*time.Minute {
			cp.TTL = "1h"
		} else {
			cp.TTL = "5m"
		}
	}
	return cp
}

var imageFormats = map[string]string{
	"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp",
}

var documentFormats = map[string]string{
	"application/pdf":    "pdf",
	"text/csv":           "csv",
	"application/msword": "doc",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/vnd.ms-excel": "xls",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
	"text/html":     "html",
	"text/plain":    "txt",
	"text/markdown": "md",
}

var videoFormats = map[string]string{
	"video/x-matroska": "mkv", "video/quicktime": "mov", "video/mp4": "mp4", "video/webm": "webm",
	"video/x-flv": "flv", "video/mpeg": "mpeg", "video/x-ms-wmv": "wmv", "video/3gpp": "three_gp",
}

// media is an image, document or video block. Inline bytes go as bytes;
// an s3:// URI as the source's S3 location; the service fetches nothing
// else, so any other URL or a file id is an UnsupportedError.
func (e *encoder) media(m *parleyv1.Media, field string) (ContentBlock, error) {
	src, err := mediaSource(m, field)
	if err != nil {
		return ContentBlock{}, err
	}
	mime := strings.ToLower(strings.TrimSpace(strings.Split(m.GetMimeType(), ";")[0]))
	switch kind := m.GetKind(); {
	case kind == parleyv1.MediaKind_MEDIA_KIND_IMAGE || kind == parleyv1.MediaKind_MEDIA_KIND_UNSPECIFIED && strings.HasPrefix(mime, "image/"):
		f, ok := formatOf(m, mime, imageFormats)
		if !ok {
			return ContentBlock{}, translate.Unsupported(thisDialect, field+".mime_type", "the Converse API takes PNG, JPEG, GIF and WebP images, not %s", describe(m))
		}
		return ContentBlock{Image: &imageBlock{Format: f, Source: src}}, nil
	case kind == parleyv1.MediaKind_MEDIA_KIND_VIDEO || kind == parleyv1.MediaKind_MEDIA_KIND_UNSPECIFIED && strings.HasPrefix(mime, "video/"):
		f, ok := formatOf(m, mime, videoFormats)
		if !ok {
			return ContentBlock{}, translate.Unsupported(thisDialect, field+".mime_type", "the Converse API takes MKV, MOV, MP4, WebM, FLV, MPEG, WMV and 3GP videos, not %s", describe(m))
		}
		return ContentBlock{Video: &videoBlock{Format: f, Source: src}}, nil
	case kind == parleyv1.MediaKind_MEDIA_KIND_AUDIO || strings.HasPrefix(mime, "audio/"):
		return ContentBlock{}, translate.Unsupported(thisDialect, field, "the Converse API takes no audio")
	}
	f, ok := formatOf(m, mime, documentFormats)
	if !ok {
		return ContentBlock{}, translate.Unsupported(thisDialect, field+".mime_type", "the Converse API takes PDF, CSV, DOC, DOCX, XLS, XLSX, HTML, TXT and MD documents, not %s", describe(m))
	}
	return ContentBlock{Document: &documentBlock{Format: f, Name: e.documentName(m), Source: src, Context: m.GetContext()}}, nil
}

func mediaSource(m *parleyv1.Media, field string) (*MediaSource, error) {
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_Data:
		return &MediaSource{Bytes: s.Data}, nil
	case *parleyv1.Media_Uri:
		if strings.HasPrefix(s.Uri, "s3://") {
			return &MediaSource{S3Location: &s3Location{URI: s.Uri}}, nil
		}
		return nil, translate.Unsupported(thisDialect, field+".uri", "the Converse API reads media inline or from S3 (s3://), not from %q", s.Uri)
	case *parleyv1.Media_FileId:
		return nil, translate.Unsupported(thisDialect, field+".file_id", "the Converse API has no file store: file %q cannot be sent", s.FileId)
	}
	return nil, translate.Invalid(field, "media without data, URI or file id")
}

// formatOf is the service's word for the media's format: by its MIME
// type, else by its name (formatOfName).
func formatOf(m *parleyv1.Media, mime string, formats map[string]string) (string, bool) {
	if f, ok := formats[mime]; ok {
		return f, true
	}
	return formatOfName(m, formats)
}

// formatOfName reads a format from the extension of the media's file
// name or URI, for media that came without a known MIME type.
func formatOfName(m *parleyv1.Media, formats map[string]string) (string, bool) {
	name := m.GetFilename()
	if name == "" {
		name = m.GetUri()
	}
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return "", false
	}
	ext := strings.ToLower(name[i+1:])
	if ext == "jpg" {
		ext = "jpeg"
	}
	for _, f := range formats {
		if f == ext {
			return f, true
		}
	}
	return "", false
}

func describe(m *parleyv1.Media) string {
	if m.GetMimeType() != "" {
		return m.GetMimeType()
	}
	return "media of unknown type"
}

// documentName is the name a document goes by. The service requires one,
// unique within the request, of letters, digits, single spaces, hyphens,
// parentheses and square brackets. It is the document's title, else its
// file name without the extension, with every other character as a
// space; "document" when nothing is left; a later document of the same
// name gets " (2)", " (3)" ...
func (e *encoder) documentName(m *parleyv1.Media) string {
	name := m.GetTitle()
	if name == "" {
		name = m.GetFilename()
		if i := strings.LastIndexByte(name, '.'); i > 0 {
			name = name[:i]
		}
	}
	var b strings.Builder
	space := false
	for _, r := range name {
		ok := r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || strings.ContainsRune("-()[]", r)
		if !ok {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	base := b.String()
	if len(base) > 200 {
		base = strings.TrimSpace(base[:200])
	}
	if base == "" {
		base = "document"
	}
	out := base
	for n := 2; e.docNames[strings.ToLower(out)]; n++ {
		out = fmt.Sprintf("%s (%d)", base, n)
	}
	e.docNames[strings.ToLower(out)] = true
	return out
}
