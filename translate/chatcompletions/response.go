package chatcompletions

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// The response walk, both ways: an upstream's reply into a canonical
// response (DecodeResponse), and a canonical response into a client's
// reply (EncodeResponse), choice by choice.

// DecodeResponse implements translate.Upstream.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	var w Response
	if !readResponse(body, &w) {
		if err := jsonx.Unmarshal(body, &w); err != nil {
			return nil, translate.UpstreamProtocol(thisDialect, err)
		}
	}
	resp := &parleyv1.Response{Id: w.ID, Model: w.Model, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED}
	header(resp, w.Object, w.Created, w.ServiceTier, w.SystemFingerprint)
	jsonx.Keep(&resp.Extensions, thisDialect, "", w.Unknown)
	for i := range w.Choices {
		resp.Candidates = append(resp.Candidates, decodeChoice(&w.Choices[i], t))
	}
	if w.Usage != nil {
		resp.Usage = canonicalUsage(w.Usage, &resp.Extensions)
	}
	return resp, nil
}

// header reads the members a reply and a chunk share.
func header(resp *parleyv1.Response, object string, created int64, tier, fingerprint *string) {
	if created > 0 {
		resp.CreatedAt = timestamppb.New(time.Unix(created, 0))
	}
	if tier != nil {
		if st, ok := openai.ServiceTier(*tier); ok {
			resp.ServiceTier = st
		} else {
			jsonx.KeepValue(&resp.Extensions, thisDialect, "service_tier", jsonx.Quote(*tier))
		}
	}
	if fingerprint != nil {
		resp.SystemFingerprint = *fingerprint
	}
	if resp.Extensions == nil {
		resp.Extensions = &parleyv1.Extensions{Dialect: thisDialect}
	}
	_ = object
}

func decodeChoice(c *choice, t translate.Target) *parleyv1.Candidate {
	cand := &parleyv1.Candidate{Index: int32(c.Index)}
	m := &c.Message
	if m.ReasoningContent != nil && *m.ReasoningContent != "" {
		cand.Parts = append(cand.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: *m.ReasoningContent}}, Signature: makerStamp(t)})
	}
	if m.Content != nil && (m.Content.String || len(m.Content.Parts) > 0) {
		text := m.Content.Text
		for _, p := range m.Content.Parts {
			text += deref(p.Text)
		}
		tp := translate.TextPart(text)
		for _, a := range m.Annotations {
			if a.Type == "url_citation" && a.URLCitation != nil {
				u := a.URLCitation
				tp.GetText().Annotations = append(tp.GetText().Annotations, &parleyv1.Annotation{
					Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION, Url: u.URL, Title: u.Title,
					StartIndex: &u.StartIndex, EndIndex: &u.EndIndex,
				})
			}
		}
		cand.Parts = append(cand.Parts, tp)
	}
	if m.Annotations == nil {
		markNoAnnotations.Keep(&cand.Extensions, jsontext.Value("true"))
	}
	if m.Refusal != nil {
		cand.Parts = append(cand.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: *m.Refusal}}})
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		p := translate.CallPart(tc.ID, tc.Function.Name, tc.Function.Arguments)
		jsonx.Keep(&p.Extensions, thisDialect, "", tc.Unknown)
		jsonx.Keep(&p.Extensions, thisDialect, "function", tc.Function.Unknown)
		cand.Parts = append(cand.Parts, p)
	}
	if c.FinishReason != nil {
		cand.FinishReason, cand.FinishMessage = finishReason(*c.FinishReason)
	}
	if c.Logprobs != nil {
		cand.Logprobs = canonicalLogprobs(c.Logprobs)
	}
	jsonx.Keep(&cand.Extensions, thisDialect, "", c.Unknown)
	jsonx.Keep(&cand.Extensions, thisDialect, "message", m.Unknown)
	_ = t
	return cand
}

// EncodeResponse implements translate.Client.
func (Client) EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error) {
	w := wireResponse(req, resp)
	return jsonx.Encode(&w, appendResponse)
}

// wireResponse is the reply EncodeResponse writes.
func wireResponse(req *parleyv1.Request, resp *parleyv1.Response) Response {
	ext := resp.GetExtensions()
	w := Response{
		ID: responseID(resp), Object: "chat.completion", Created: created(resp), Model: model(req, resp),
		Choices: []choice{}, Usage: wireUsage(resp.GetUsage(), ext), Unknown: jsonx.Take(ext, thisDialect, ""),
	}
	w.ServiceTier, w.SystemFingerprint = tierAndFingerprint(resp)
	for _, c := range resp.GetCandidates() {
		w.Choices = append(w.Choices, encodeChoice(c, resp))
	}
	if len(w.Choices) == 0 && resp.GetPromptFeedback() != nil {
		// A prompt the upstream blocked: an empty filtered answer.
		word := "content_filter"
		w.Choices = append(w.Choices, choice{Message: message{Role: "assistant", Content: &Content{Null: true}, Annotations: []annotation{}}, FinishReason: &word})
	}
	return w
}

func responseID(resp *parleyv1.Response) string {
	if id := resp.GetId(); id != "" {
		return id
	}
	return translate.NewID("chatcmpl-")
}

func created(resp *parleyv1.Response) int64 {
	if resp.GetCreatedAt() != nil {
		return resp.GetCreatedAt().GetSeconds()
	}
	return time.Now().Unix()
}

func model(req *parleyv1.Request, resp *parleyv1.Response) string {
	if m := resp.GetModel(); m != "" {
		return m
	}
	return req.GetModel()
}

func tierAndFingerprint(resp *parleyv1.Response) (tier, fingerprint *string) {
	if s := openai.ServiceTierWord(resp.GetServiceTier()); s != "" {
		tier = &s
	}
	if f := resp.GetSystemFingerprint(); f != "" {
		fingerprint = &f
	}
	return tier, fingerprint
}

func encodeChoice(c *parleyv1.Candidate, resp *parleyv1.Response) choice {
	ext := c.GetExtensions()
	m := message{Role: "assistant", Unknown: jsonx.Take(ext, thisDialect, "message")}
	var text, reasoning, refusal strings.Builder
	hasText, hasReasoning, hasRefusal := false, false, false
	calls := false
	for _, p := range c.GetParts() {
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Text:
			offset := int64(utf8.RuneCountInString(text.String()))
			for _, a := range k.Text.GetAnnotations() {
				if wa, ok := wireAnnotation(a, offset); ok {
					m.Annotations = append(m.Annotations, wa)
				}
			}
			hasText = true
			text.WriteString(k.Text.GetText())
		case *parleyv1.Part_Reasoning:
			hasReasoning = true
			if reasoning.Len() > 0 {
				reasoning.WriteString("\n\n")
			}
			reasoning.WriteString(reasoningText(k.Reasoning))
		case *parleyv1.Part_Refusal:
			hasRefusal = true
			refusal.WriteString(k.Refusal.GetText())
		case *parleyv1.Part_ToolCall:
			calls = true
			tc := toolCall{ID: k.ToolCall.GetId(), Type: "function", Function: function{Name: translate.CallName(k.ToolCall), Arguments: k.ToolCall.GetArguments()},
				Unknown: jsonx.Take(p.GetExtensions(), thisDialect, "")}
			tc.Function.Unknown = jsonx.Take(p.GetExtensions(), thisDialect, "function")
			if tc.ID == "" {
				tc.ID = translate.NewID("call_")
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		case *parleyv1.Part_ExecutableCode:
			hasText = true
			text.WriteString("\n```python\n" + k.ExecutableCode.GetCode() + "\n```\n")
		case *parleyv1.Part_CodeExecutionResult:
			hasText = true
			text.WriteString("\n```\n" + k.CodeExecutionResult.GetOutput() + "\n```\n")
		}
	}
	for _, a := range c.GetCitations() {
		if wa, ok := wireAnnotation(a, 0); ok {
			m.Annotations = append(m.Annotations, wa)
		}
	}
	if hasText {
		m.Content = &Content{String: true, Text: text.String()}
	} else {
		m.Content = &Content{Null: true}
	}
	if hasReasoning {
		s := reasoning.String()
		m.ReasoningContent = &s
	}
	if hasRefusal {
		s := refusal.String()
		m.Refusal = &s
	}
	if m.Annotations == nil && !markNoAnnotations.In(ext) {
		m.Annotations = []annotation{}
	}
	word := finishWord(c.GetFinishReason(), c.GetFinishMessage(), calls, resp.GetExtensions().GetDialect())
	ch := choice{Index: int64(c.GetIndex()), Message: m, FinishReason: &word, Logprobs: wireLogprobs(c.GetLogprobs()), Unknown: jsonx.Take(ext, thisDialect, "")}
	return ch
}

// reasoningText is what a reasoning part shows as reasoning_content: its
// text, else its summaries.
func reasoningText(r *parleyv1.Reasoning) string {
	if r.GetText() != "" {
		return r.GetText()
	}
	return strings.Join(r.GetSummary(), "\n\n")
}

func wireAnnotation(a *parleyv1.Annotation, offset int64) (annotation, bool) {
	if a.GetKind() != parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION || a.GetUrl() == "" {
		return annotation{}, false
	}
	u := &urlCitation{URL: a.GetUrl(), Title: a.GetTitle(), StartIndex: a.GetStartIndex() + offset, EndIndex: a.GetEndIndex() + offset}
	return annotation{Type: "url_citation", URLCitation: u}, true
}
