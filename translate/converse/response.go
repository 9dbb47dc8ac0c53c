package converse

import (
	"errors"
	"fmt"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The reply walk: a /converse reply into a canonical response, and the
// content blocks of a reply (shared with nothing in the stream, whose
// blocks arrive in pieces).

// DecodeResponse implements translate.Upstream. The reply names neither
// itself nor its model: the response has the target's model and no id,
// which the gateway gives it (its request id), as for every upstream that
// names none.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	var w Response
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(thisDialect, err)
	}
	if w.Output == nil || w.Output.Message == nil {
		return nil, translate.UpstreamProtocol(thisDialect, errors.New("reply without output.message"))
	}
	resp := &parleyv1.Response{
		Model:      t.Model,
		Status:     parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED,
		Extensions: &parleyv1.Extensions{Dialect: thisDialect},
	}
	c := &parleyv1.Candidate{}
	for i := range w.Output.Message.Content {
		p, err := replyBlock(&w.Output.Message.Content[i], t)
		if err != nil {
			return nil, translate.UpstreamProtocol(thisDialect, fmt.Errorf("output.message.content.%d: %w", i, err))
		}
		if p != nil {
			c.Parts = append(c.Parts, p)
		}
	}
	c.FinishReason, c.FinishMessage = finishReason(w.StopReason)
	c.FinishReason = translate.ToolUseFinish(c.FinishReason, translate.HasToolCalls(c.Parts))
	c.StopSequence = stopSequence(c.FinishReason, w.AdditionalModelResponseFields)
	resp.Candidates = []*parleyv1.Candidate{c}
	if w.Usage != nil {
		resp.Usage = canonicalUsage(w.Usage)
	}
	resp.ServiceTier = readServiceTier(w.ServiceTier)
	return resp, nil
}

// replyBlock is the canonical part of a block of a reply; nil for a block
// Parley does not model (an image the model made, a guard block).
func replyBlock(b *ContentBlock, t translate.Target) (*parleyv1.Part, error) {
	switch {
	case b.Text != nil:
		return translate.TextPart(*b.Text), nil
	case b.ToolUse != nil:
		tu := b.ToolUse
		if tu.ToolUseID == "" || tu.Name == "" {
			return nil, errors.New("toolUse without toolUseId or name")
		}
		args := strings.TrimSpace(string(tu.Input))
		if args == "" || args == "null" {
			args = "{}"
		}
		return translate.CallPart(tu.ToolUseID, tu.Name, args), nil
	case b.ReasoningContent != nil:
		rc := b.ReasoningContent
		if rc.ReasoningText == nil && len(rc.RedactedContent) == 0 {
			return nil, errors.New("reasoningContent without reasoningText or redactedContent")
		}
		return reasoningPart(rc, t), nil
	case b.CitationsContent != nil:
		return citationsPart(b.CitationsContent), nil
	}
	return nil, nil
}

// citationsPart is generated text with its citations: one text part
// whose annotations are the citations.
func citationsPart(cc *citationsContent) *parleyv1.Part {
	var text strings.Builder
	for _, c := range cc.Content {
		text.WriteString(c.Text)
	}
	t := &parleyv1.Text{Text: text.String()}
	for i := range cc.Citations {
		if a := annotation(&cc.Citations[i]); a != nil {
			t.Annotations = append(t.Annotations, a)
		}
	}
	return &parleyv1.Part{Kind: &parleyv1.Part_Text{Text: t}}
}

// annotation is a citation as a canonical annotation: a web page, or a
// span of a document of the request (by characters, pages or chunks);
// nil for a location Parley does not model.
func annotation(c *citation) *parleyv1.Annotation {
	a := &parleyv1.Annotation{Title: c.Title}
	var cited strings.Builder
	for _, s := range c.SourceContent {
		cited.WriteString(s.Text)
	}
	a.CitedText = cited.String()
	l := c.Location
	if l == nil {
		return nil
	}
	span := func(r *documentRange, unit parleyv1.LocationUnit) *parleyv1.Annotation {
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION
		a.Location = &parleyv1.CitationLocation{Unit: unit, DocumentIndex: deref(r.DocumentIndex), DocumentTitle: c.Title, Start: deref(r.Start), End: deref(r.End)}
		return a
	}
	switch {
	case l.Web != nil:
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION
		a.Url = l.Web.URL
		return a
	case l.DocumentChar != nil:
		return span(l.DocumentChar, parleyv1.LocationUnit_LOCATION_UNIT_CHARACTER)
	case l.DocumentPage != nil:
		return span(l.DocumentPage, parleyv1.LocationUnit_LOCATION_UNIT_PAGE)
	case l.DocumentChunk != nil:
		return span(l.DocumentChunk, parleyv1.LocationUnit_LOCATION_UNIT_CONTENT_BLOCK)
	}
	return nil
}

func readServiceTier(st *serviceTier) parleyv1.ServiceTier {
	switch st.GetType() {
	case "priority":
		return parleyv1.ServiceTier_SERVICE_TIER_PRIORITY
	case "flex":
		return parleyv1.ServiceTier_SERVICE_TIER_FLEX
	case "default":
		return parleyv1.ServiceTier_SERVICE_TIER_DEFAULT
	}
	return parleyv1.ServiceTier_SERVICE_TIER_UNSPECIFIED
}

// GetType is the tier's type, "" for none.
func (st *serviceTier) GetType() string {
	if st == nil {
		return ""
	}
	return st.Type
}
