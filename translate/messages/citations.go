package messages

import (
	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Citations on text blocks, both ways: this dialect's citation locations
// as canonical annotations, and annotations back as citations, for an
// upstream and for a client.

func citations(raw jsontext.Value, path string, ext **parleyv1.Extensions) ([]*parleyv1.Annotation, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if raw.Kind() == 'n' {
		jsonx.KeepValue(ext, thisDialect, "citations", raw)
		return nil, nil
	}
	var cs []citation
	if err := jsonx.Unmarshal(raw, &cs); err != nil {
		return nil, decodeErrorAt(err, path)
	}
	out := make([]*parleyv1.Annotation, 0, len(cs))
	for _, c := range cs {
		a, ok := readCitation(&c)
		if !ok {
			// A citation type Parley does not model: keep all of them raw
			// for this dialect.
			jsonx.KeepValue(ext, thisDialect, "citations", raw)
			return nil, nil
		}
		out = append(out, a)
	}
	return out, nil
}

func readCitation(c *citation) (*parleyv1.Annotation, bool) {
	if len(c.Unknown) > 0 {
		return nil, false
	}
	a := &parleyv1.Annotation{CitedText: c.CitedText}
	loc := &parleyv1.CitationLocation{}
	if c.DocumentIndex != nil {
		loc.DocumentIndex = *c.DocumentIndex
	}
	if c.DocumentTitle != nil {
		loc.DocumentTitle = *c.DocumentTitle
	}
	if c.FileID != nil {
		a.FileId = *c.FileID
	}
	switch c.Type {
	case "char_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION
		loc.Unit = parleyv1.LocationUnit_LOCATION_UNIT_CHARACTER
		loc.Start, loc.End = deref(c.StartCharIndex), deref(c.EndCharIndex)
	case "page_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION
		loc.Unit = parleyv1.LocationUnit_LOCATION_UNIT_PAGE
		loc.Start, loc.End = deref(c.StartPageNum), deref(c.EndPageNum)
	case "content_block_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION
		loc.Unit = parleyv1.LocationUnit_LOCATION_UNIT_CONTENT_BLOCK
		loc.Start, loc.End = deref(c.StartBlock), deref(c.EndBlock)
	case "web_search_result_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION
		if c.URL != nil {
			a.Url = *c.URL
		}
		if c.Title != nil {
			a.Title = *c.Title
		}
		if c.EncryptedIndex != nil {
			a.EncryptedIndex = *c.EncryptedIndex
		}
		return a, c.URL != nil
	case "search_result_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_SEARCH_RESULT_CITATION
		loc.Unit = parleyv1.LocationUnit_LOCATION_UNIT_CONTENT_BLOCK
		loc.DocumentIndex = deref(c.SearchIndex)
		loc.Start, loc.End = deref(c.StartBlock), deref(c.EndBlock)
		if c.Source != nil {
			a.Url = *c.Source
		}
		if c.Title != nil {
			a.Title = *c.Title
		}
	default:
		return nil, false
	}
	a.Location = loc
	return a, true
}

func (e *encoder) wireCitations(p *parleyv1.Part) jsontext.Value {
	if e.same {
		if v, ok := jsonx.Value(p.GetExtensions(), thisDialect, "citations"); ok {
			return v
		}
	}
	anns := p.GetText().GetAnnotations()
	if len(anns) == 0 {
		return nil
	}
	out := make([]citation, 0, len(anns))
	for _, a := range anns {
		if c, ok := wireCitation(a); ok {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	raw, _ := jsonx.Marshal(out)
	return raw
}

func wireCitation(a *parleyv1.Annotation) (citation, bool) {
	c := citation{CitedText: a.GetCitedText()}
	loc := a.GetLocation()
	if a.GetFileId() != "" {
		c.FileID = ptr(a.GetFileId())
	}
	switch a.GetKind() {
	case parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION:
		c.DocumentIndex = ptr(loc.GetDocumentIndex())
		if loc.GetDocumentTitle() != "" {
			c.DocumentTitle = ptr(loc.GetDocumentTitle())
		}
		switch loc.GetUnit() {
		case parleyv1.LocationUnit_LOCATION_UNIT_PAGE:
			c.Type, c.StartPageNum, c.EndPageNum = "page_location", ptr(loc.GetStart()), ptr(loc.GetEnd())
		case parleyv1.LocationUnit_LOCATION_UNIT_CONTENT_BLOCK:
			c.Type, c.StartBlock, c.EndBlock = "content_block_location", ptr(loc.GetStart()), ptr(loc.GetEnd())
		default:
			c.Type, c.StartCharIndex, c.EndCharIndex = "char_location", ptr(loc.GetStart()), ptr(loc.GetEnd())
		}
	case parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION:
		if a.GetEncryptedIndex() == "" {
			return citation{}, false // only this dialect's own search results can be cited back
		}
		c.Type, c.URL, c.EncryptedIndex = "web_search_result_location", ptr(a.GetUrl()), ptr(a.GetEncryptedIndex())
		if a.GetTitle() != "" {
			c.Title = ptr(a.GetTitle())
		}
	case parleyv1.AnnotationKind_ANNOTATION_KIND_SEARCH_RESULT_CITATION:
		c.Type = "search_result_location"
		c.SearchIndex, c.StartBlock, c.EndBlock = ptr(loc.GetDocumentIndex()), ptr(loc.GetStart()), ptr(loc.GetEnd())
		c.Source, c.Title = ptr(a.GetUrl()), ptr(a.GetTitle())
	default:
		return citation{}, false
	}
	return c, true
}

func clientCitations(p *parleyv1.Part, same bool) jsontext.Value {
	if same {
		if v, ok := jsonx.Value(p.GetExtensions(), thisDialect, "citations"); ok {
			return v
		}
	}
	anns := p.GetText().GetAnnotations()
	if len(anns) == 0 {
		return nil
	}
	out := make([]citation, 0, len(anns))
	for _, a := range anns {
		c, ok := wireCitation(a)
		if !ok && a.GetKind() == parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION {
			// A web citation of another service: shown to the client, and
			// left out again if it comes back toward this dialect.
			c, ok = citation{Type: "web_search_result_location", CitedText: a.GetCitedText(), URL: ptr(a.GetUrl()), Title: ptr(a.GetTitle()), EncryptedIndex: ptr("")}, true
		}
		if ok {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	raw, _ := jsonx.Marshal(out)
	return raw
}
