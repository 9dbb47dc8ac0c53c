package chatcompletions

import (
	"net/http"
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

// finishReasons maps this dialect's finish words.
var finishReasons = map[string]parleyv1.FinishReason{
	"stop":           parleyv1.FinishReason_FINISH_REASON_STOP,
	"length":         parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"tool_calls":     parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
	"function_call":  parleyv1.FinishReason_FINISH_REASON_TOOL_USE,
	"content_filter": parleyv1.FinishReason_FINISH_REASON_SAFETY,
}

func finishReason(word string) (parleyv1.FinishReason, string) {
	if r, ok := finishReasons[word]; ok {
		if word == "function_call" {
			return r, word
		}
		return r, ""
	}
	return parleyv1.FinishReason_FINISH_REASON_OTHER, word
}

// finishWord is the word a client of this dialect sees: a turn that ends
// in tool calls is tool_calls whatever the upstream said; safety stops of
// every kind are content_filter; limits are length; the rest stop.
func finishWord(reason parleyv1.FinishReason, message string, calls bool, origin parleyv1.Dialect) string {
	switch translate.ToolUseFinish(reason, calls) {
	case parleyv1.FinishReason_FINISH_REASON_TOOL_USE:
		if calls {
			return "tool_calls"
		}
		return "stop"
	case parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS, parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED:
		return "length"
	case parleyv1.FinishReason_FINISH_REASON_SAFETY, parleyv1.FinishReason_FINISH_REASON_RECITATION,
		parleyv1.FinishReason_FINISH_REASON_BLOCKLIST, parleyv1.FinishReason_FINISH_REASON_PROHIBITED_CONTENT,
		parleyv1.FinishReason_FINISH_REASON_SPII, parleyv1.FinishReason_FINISH_REASON_IMAGE_SAFETY,
		parleyv1.FinishReason_FINISH_REASON_REFUSAL:
		return "content_filter"
	case parleyv1.FinishReason_FINISH_REASON_OTHER:
		if origin == D && message != "" {
			return message
		}
	}
	return "stop"
}

// DecodeResponse implements translate.Upstream.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	var w Response
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(D, err)
	}
	resp := &parleyv1.Response{Id: w.ID, Model: w.Model, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED}
	header(resp, w.Object, w.Created, w.ServiceTier, w.SystemFingerprint)
	jsonx.Keep(&resp.Extensions, D, "", w.Unknown)
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
			jsonx.KeepValue(&resp.Extensions, D, "service_tier", quote(*tier))
		}
	}
	if fingerprint != nil {
		resp.SystemFingerprint = *fingerprint
	}
	if resp.Extensions == nil {
		resp.Extensions = &parleyv1.Extensions{Dialect: D}
	}
	_ = object
}

func decodeChoice(c *Choice, t translate.Target) *parleyv1.Candidate {
	cand := &parleyv1.Candidate{Index: int32(c.Index)}
	m := &c.Message
	if m.ReasoningContent != nil && *m.ReasoningContent != "" {
		cand.Parts = append(cand.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: *m.ReasoningContent}}})
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
		jsonx.KeepValue(&cand.Extensions, D, extNoAnnotations, jsontext.Value("true"))
	}
	if m.Refusal != nil {
		cand.Parts = append(cand.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: *m.Refusal}}})
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		p := translate.CallPart(tc.ID, tc.Function.Name, tc.Function.Arguments)
		jsonx.Keep(&p.Extensions, D, "", tc.Unknown)
		jsonx.Keep(&p.Extensions, D, "function", tc.Function.Unknown)
		cand.Parts = append(cand.Parts, p)
	}
	if c.FinishReason != nil {
		cand.FinishReason, cand.FinishMessage = finishReason(*c.FinishReason)
	}
	if c.Logprobs != nil {
		cand.Logprobs = canonicalLogprobs(c.Logprobs)
	}
	jsonx.Keep(&cand.Extensions, D, "", c.Unknown)
	jsonx.Keep(&cand.Extensions, D, "message", m.Unknown)
	_ = t
	return cand
}

func canonicalLogprobs(l *Logprobs) *parleyv1.Logprobs {
	out := &parleyv1.Logprobs{}
	for _, tl := range l.Content {
		out.Chosen = append(out.Chosen, tokenLogprob(tl))
		top := &parleyv1.TopLogprobs{}
		for _, alt := range tl.TopLogprobs {
			top.Candidates = append(top.Candidates, tokenLogprob(alt))
		}
		out.Top = append(out.Top, top)
	}
	for _, tl := range l.Refusal {
		out.Refusal = append(out.Refusal, tokenLogprob(tl))
	}
	return out
}

func tokenLogprob(tl TokenLogprob) *parleyv1.TokenLogprob {
	t := &parleyv1.TokenLogprob{Token: tl.Token, Logprob: tl.Logprob}
	var bs []int
	if len(tl.Bytes) > 0 && jsonx.Unmarshal(tl.Bytes, &bs) == nil {
		t.Bytes = make([]byte, len(bs))
		for i, b := range bs {
			t.Bytes[i] = byte(b)
		}
	}
	return t
}

func wireLogprobs(l *parleyv1.Logprobs) *Logprobs {
	if l == nil {
		return nil
	}
	out := &Logprobs{}
	for i, c := range l.GetChosen() {
		tl := wireToken(c)
		if i < len(l.GetTop()) {
			tl.TopLogprobs = []TokenLogprob{}
			for _, alt := range l.GetTop()[i].GetCandidates() {
				tl.TopLogprobs = append(tl.TopLogprobs, wireToken(alt))
			}
		}
		out.Content = append(out.Content, tl)
	}
	for _, r := range l.GetRefusal() {
		out.Refusal = append(out.Refusal, wireToken(r))
	}
	return out
}

func wireToken(t *parleyv1.TokenLogprob) TokenLogprob {
	tl := TokenLogprob{Token: t.GetToken(), Logprob: t.GetLogprob(), Bytes: jsontext.Value("null")}
	if t.GetBytes() != nil {
		bs := make([]int, len(t.GetBytes()))
		for i, b := range t.GetBytes() {
			bs[i] = int(b)
		}
		tl.Bytes, _ = jsonx.Marshal(bs)
	}
	return tl
}

func canonicalUsage(u *Usage, ext **parleyv1.Extensions) *parleyv1.Usage {
	out := &parleyv1.Usage{InputTokens: &u.PromptTokens, OutputTokens: &u.CompletionTokens, TotalTokens: &u.TotalTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
		if d.AudioTokens != nil {
			out.InputDetails = append(out.InputDetails, &parleyv1.ModalityTokens{Modality: parleyv1.Modality_MODALITY_AUDIO, Tokens: *d.AudioTokens})
		}
		jsonx.Keep(ext, D, "usage/prompt_tokens_details", d.Unknown)
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
		out.AcceptedPredictionTokens, out.RejectedPredictionTokens = d.AcceptedPredictionTokens, d.RejectedPredictionTokens
		if d.AudioTokens != nil {
			out.OutputDetails = append(out.OutputDetails, &parleyv1.ModalityTokens{Modality: parleyv1.Modality_MODALITY_AUDIO, Tokens: *d.AudioTokens})
		}
		jsonx.Keep(ext, D, "usage/completion_tokens_details", d.Unknown)
	}
	jsonx.Keep(ext, D, "usage", u.Unknown)
	return out
}

func modality(list []*parleyv1.ModalityTokens, m parleyv1.Modality) *int64 {
	for _, x := range list {
		if x.GetModality() == m {
			v := x.GetTokens()
			return &v
		}
	}
	return nil
}

func wireUsage(u *parleyv1.Usage, ext *parleyv1.Extensions) *Usage {
	if u == nil {
		return nil
	}
	w := &Usage{PromptTokens: u.GetInputTokens(), CompletionTokens: u.GetOutputTokens(), TotalTokens: u.GetTotalTokens(), Unknown: jsonx.Take(ext, D, "usage")}
	if u.TotalTokens == nil {
		w.TotalTokens = w.PromptTokens + w.CompletionTokens
	}
	audioIn := modality(u.GetInputDetails(), parleyv1.Modality_MODALITY_AUDIO)
	if u.CacheReadTokens != nil || audioIn != nil {
		w.PromptTokensDetails = &PromptDetails{CachedTokens: u.CacheReadTokens, AudioTokens: audioIn, Unknown: jsonx.Take(ext, D, "usage/prompt_tokens_details")}
	}
	audioOut := modality(u.GetOutputDetails(), parleyv1.Modality_MODALITY_AUDIO)
	if u.ReasoningTokens != nil || audioOut != nil || u.AcceptedPredictionTokens != nil || u.RejectedPredictionTokens != nil {
		w.CompletionTokensDetails = &OutputDetails{ReasoningTokens: u.ReasoningTokens, AudioTokens: audioOut,
			AcceptedPredictionTokens: u.AcceptedPredictionTokens, RejectedPredictionTokens: u.RejectedPredictionTokens,
			Unknown: jsonx.Take(ext, D, "usage/completion_tokens_details")}
	}
	return w
}

// EncodeResponse implements translate.Client.
func (Client) EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error) {
	ext := resp.GetExtensions()
	w := Response{
		ID: responseID(resp), Object: "chat.completion", Created: created(resp), Model: model(req, resp),
		Choices: []Choice{}, Usage: wireUsage(resp.GetUsage(), ext), Unknown: jsonx.Take(ext, D, ""),
	}
	w.ServiceTier, w.SystemFingerprint = tierAndFingerprint(resp)
	for _, c := range resp.GetCandidates() {
		w.Choices = append(w.Choices, encodeChoice(c, resp))
	}
	if len(w.Choices) == 0 && resp.GetPromptFeedback() != nil {
		// A prompt the upstream blocked: an empty filtered answer.
		word := "content_filter"
		w.Choices = append(w.Choices, Choice{Message: Message{Role: "assistant", Content: &Content{Null: true}, Annotations: []Annotation{}}, FinishReason: &word})
	}
	return jsonx.Marshal(w)
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

func encodeChoice(c *parleyv1.Candidate, resp *parleyv1.Response) Choice {
	ext := c.GetExtensions()
	m := Message{Role: "assistant", Unknown: jsonx.Take(ext, D, "message")}
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
			tc := ToolCall{ID: k.ToolCall.GetId(), Type: "function", Function: Function{Name: k.ToolCall.GetName(), Arguments: k.ToolCall.GetArguments()},
				Unknown: jsonx.Take(p.GetExtensions(), D, "")}
			tc.Function.Unknown = jsonx.Take(p.GetExtensions(), D, "function")
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
	if m.Annotations == nil && !jsonx.Has(ext, D, extNoAnnotations) {
		m.Annotations = []Annotation{}
	}
	word := finishWord(c.GetFinishReason(), c.GetFinishMessage(), calls, resp.GetExtensions().GetDialect())
	ch := Choice{Index: int64(c.GetIndex()), Message: m, FinishReason: &word, Logprobs: wireLogprobs(c.GetLogprobs()), Unknown: jsonx.Take(ext, D, "")}
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

func wireAnnotation(a *parleyv1.Annotation, offset int64) (Annotation, bool) {
	if a.GetKind() != parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION || a.GetUrl() == "" {
		return Annotation{}, false
	}
	u := &URLCitation{URL: a.GetUrl(), Title: a.GetTitle(), StartIndex: a.GetStartIndex() + offset, EndIndex: a.GetEndIndex() + offset}
	return Annotation{Type: "url_citation", URLCitation: u}, true
}

// EncodeError implements translate.Client.
func (Client) EncodeError(e *parleyv1.Error) (int, []byte) { return openai.EncodeError(e) }

// DecodeError implements translate.Upstream.
func (Upstream) DecodeError(status int, header http.Header, body []byte) *parleyv1.Error {
	return openai.DecodeError(D, status, header, body)
}
