package responses

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Message items and their content parts, in all directions: text with its
// annotations, refusals, images and files, read from a client's input or an
// upstream's output (itemDecoder.contentPart), written toward an upstream
// (encoder.content) and toward a client (newMessageItem, contentOf).

func (d *itemDecoder) contentPart(w *ContentPart, field string) (*parleyv1.Part, error) {
	var p *parleyv1.Part
	switch w.Type {
	case "input_text", "output_text":
		if w.Text == nil {
			return nil, translate.Invalid(field+".text", "is required")
		}
		p = translate.TextPart(*w.Text)
		for _, a := range w.Annotations {
			if ca, ok := canonicalAnnotation(a); ok {
				p.GetText().Annotations = append(p.GetText().Annotations, ca)
			}
		}
		if w.Type == "output_text" && w.Annotations == nil {
			markNoAnn.Keep(&p.Extensions, jsontext.Value("true"))
		}
		if w.Type == "output_text" && len(w.Annotations) > len(p.GetText().GetAnnotations()) {
			raw, _ := jsonx.Marshal(w.Annotations)
			jsonx.KeepValue(&p.Extensions, thisDialect, "annotations", raw)
		}
		if w.Type == "output_text" {
			markType.KeepString(&p.Extensions, w.Type)
		}
	case "refusal":
		p = &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: deref(w.Refusal)}}}
	case "input_image":
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, Detail: openai.Detail(w.Detail)}
		switch {
		case w.FileID != nil && *w.FileID != "":
			media.Source = &parleyv1.Media_FileId{FileId: *w.FileID}
		case w.ImageURL != nil && *w.ImageURL != "":
			if mime, data, ok := openai.ParseDataURL(*w.ImageURL); ok {
				media.MimeType, media.Source = mime, &parleyv1.Media_Data{Data: data}
			} else {
				media.Source = &parleyv1.Media_Uri{Uri: *w.ImageURL}
			}
		default:
			return nil, translate.Invalid(field, "an input_image needs image_url or file_id")
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
	case "input_file":
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_FILE, Filename: deref(w.Filename)}
		switch {
		case w.FileID != nil && *w.FileID != "":
			media.Source = &parleyv1.Media_FileId{FileId: *w.FileID}
		case w.FileData != nil:
			mime, data, ok := openai.ParseDataURL(*w.FileData)
			if !ok {
				return nil, translate.Invalid(field+".file_data", "must be a base64 data URL (data:application/pdf;base64,...)")
			}
			media.MimeType, media.Kind, media.Source = mime, openai.KindOfMIME(mime), &parleyv1.Media_Data{Data: data}
		case w.FileURL != nil:
			media.Source = &parleyv1.Media_Uri{Uri: *w.FileURL}
		default:
			return nil, translate.Invalid(field, "an input_file needs file_data, file_id or file_url")
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
	default:
		// A part of a type Parley does not model: kept whole, marshalled
		// off the request's stack (what it keeps as it came is
		// reformatted as deep as it nests).
		raw, err := jsonx.MarshalOffStack(w)
		if err != nil {
			return nil, translate.Invalid(field, "%v", err)
		}
		p = &parleyv1.Part{}
		markPart.Keep(&p.Extensions, raw)
		return p, nil
	}
	jsonx.Keep(&p.Extensions, thisDialect, "", w.Unknown)
	return p, nil
}

// content renders a part that belongs in a message item; isContent is
// false for a part that is an item of its own.
func (e *encoder) content(p *parleyv1.Part, role parleyv1.Role, field string) (*ContentPart, bool, error) {
	unknown := e.take(p.GetExtensions(), "")
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		typ := "input_text"
		if role == parleyv1.Role_ROLE_ASSISTANT {
			typ = "output_text"
		}
		if s, ok := markType.String(p.GetExtensions()); ok && e.same {
			typ = s
		}
		cp := &ContentPart{Type: typ, Text: &k.Text.Text, Unknown: unknown}
		if typ == "output_text" {
			cp.Annotations = annotations(k.Text.GetAnnotations(), p, e.same)
			delete(cp.Unknown, "annotations")
		}
		return cp, true, nil
	case *parleyv1.Part_Refusal:
		return &ContentPart{Type: "refusal", Refusal: &k.Refusal.Text, Unknown: unknown}, true, nil
	case *parleyv1.Part_Media:
		cp, err := e.media(k.Media, field)
		if err != nil {
			return nil, true, err
		}
		cp.Unknown = unknown
		return cp, true, nil
	case *parleyv1.Part_ExecutableCode:
		s := "```python\n" + k.ExecutableCode.GetCode() + "\n```"
		return &ContentPart{Type: "output_text", Text: &s, Annotations: []annotation{}}, true, nil
	case *parleyv1.Part_CodeExecutionResult:
		s := "```\n" + k.CodeExecutionResult.GetOutput() + "\n```"
		return &ContentPart{Type: "output_text", Text: &s, Annotations: []annotation{}}, true, nil
	case nil:
		if v, ok := markPart.Value(p.GetExtensions()); ok && e.same {
			var cp ContentPart
			if err := jsonx.Unmarshal(v, &cp); err == nil {
				return &cp, true, nil
			}
		}
		if !markItem.In(p.GetExtensions()) {
			// Another dialect's block kept whole for that dialect alone.
			e.dropped = append(e.dropped, field)
		}
	}
	return nil, false, nil
}

// simplify writes a foreign client's text-only message as a string, the
// form every service of this dialect takes for any role.
func simplify(it *Item) {
	if it.Type != "" || it.Content == nil || it.Content.String {
		return
	}
	n := 0
	for _, c := range it.Content.Parts {
		if (c.Type != "input_text" && c.Type != "output_text") || c.Text == nil {
			return
		}
		n += len(*c.Text)
	}
	if len(it.Content.Parts) == 1 {
		// One text (a long turn of an agent's conversation) is the
		// string as it is, not a copy.
		it.Content = &Content{String: true, Text: *it.Content.Parts[0].Text}
		return
	}
	var b strings.Builder
	b.Grow(n)
	for _, c := range it.Content.Parts {
		b.WriteString(*c.Text)
	}
	it.Content = &Content{String: true, Text: b.String()}
}

// annotations renders a text part's annotations; a client of this dialect
// gets back the ones Parley does not model as they came.
func annotations(list []*parleyv1.Annotation, p *parleyv1.Part, same bool) []annotation {
	if v, ok := jsonx.Value(p.GetExtensions(), thisDialect, "annotations"); ok && same {
		var raw []annotation
		if jsonx.Unmarshal(v, &raw) == nil {
			return raw
		}
	}
	if same && markNoAnn.In(p.GetExtensions()) && len(list) == 0 {
		return nil
	}
	out := []annotation{}
	for _, a := range list {
		if w, ok := wireAnnotation(a); ok {
			out = append(out, w)
		}
	}
	return out
}

// isMessagePart reports whether p belongs in a message item.
func isMessagePart(p *parleyv1.Part) bool {
	switch p.GetKind().(type) {
	case *parleyv1.Part_Text, *parleyv1.Part_Refusal, *parleyv1.Part_ExecutableCode, *parleyv1.Part_CodeExecutionResult:
		return true
	}
	return false
}

func newMessageItem(p *parleyv1.Part) Item {
	id := p.GetItemId()
	if id == "" {
		id = translate.NewID("msg_")
	}
	status := statusWord(p.GetStatus())
	if status == "" {
		status = "completed"
	}
	return Item{Type: "message", ID: id, Status: status, Role: "assistant", Content: &Content{Parts: []ContentPart{}}, Unknown: itemUnknown(p)}
}

// contentOf renders a message part as a content part.
func contentOf(p *parleyv1.Part) ContentPart {
	unknown := jsonx.Take(p.GetExtensions(), thisDialect, "")
	delete(unknown, "annotations")
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Refusal:
		return ContentPart{Type: "refusal", Refusal: new(k.Refusal.GetText()), Unknown: unknown}
	case *parleyv1.Part_ExecutableCode:
		return ContentPart{Type: "output_text", Text: new("```python\n" + k.ExecutableCode.GetCode() + "\n```"), Annotations: []annotation{}}
	case *parleyv1.Part_CodeExecutionResult:
		return ContentPart{Type: "output_text", Text: new("```\n" + k.CodeExecutionResult.GetOutput() + "\n```"), Annotations: []annotation{}}
	}
	t := p.GetText()
	return ContentPart{Type: "output_text", Text: new(t.GetText()), Annotations: annotations(t.GetAnnotations(), p, true), Unknown: unknown}
}

func canonicalAnnotation(a annotation) (*parleyv1.Annotation, bool) {
	if len(a.Unknown) > 0 {
		return nil, false
	}
	switch a.Type {
	case "url_citation":
		return &parleyv1.Annotation{Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION, Url: a.URL, Title: a.Title, StartIndex: a.StartIndex, EndIndex: a.EndIndex}, true
	case "file_citation":
		return &parleyv1.Annotation{Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_FILE_CITATION, FileId: a.FileID, Filename: a.Filename, Index: a.Index}, true
	case "file_path":
		return &parleyv1.Annotation{Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_FILE_PATH, FileId: a.FileID, Index: a.Index}, true
	}
	return nil, false
}

func wireAnnotation(a *parleyv1.Annotation) (annotation, bool) {
	switch a.GetKind() {
	case parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION:
		if a.GetUrl() == "" {
			return annotation{}, false
		}
		w := annotation{Type: "url_citation", URL: a.GetUrl(), Title: a.GetTitle(), StartIndex: a.StartIndex, EndIndex: a.EndIndex}
		if w.StartIndex == nil {
			w.StartIndex, w.EndIndex = new(int64(0)), new(int64(0))
		}
		return w, true
	case parleyv1.AnnotationKind_ANNOTATION_KIND_FILE_CITATION:
		return annotation{Type: "file_citation", FileID: a.GetFileId(), Filename: a.GetFilename(), Index: orZero(a.Index)}, true
	case parleyv1.AnnotationKind_ANNOTATION_KIND_FILE_PATH:
		return annotation{Type: "file_path", FileID: a.GetFileId(), Index: orZero(a.Index)}, true
	}
	return annotation{}, false
}

func orZero(p *int64) *int64 {
	if p == nil {
		return new(int64(0))
	}
	return p
}
