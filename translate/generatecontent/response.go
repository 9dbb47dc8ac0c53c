package generatecontent

import (
	"encoding/base64"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// finishReasons maps the dialect's finish reasons to canonical ones.
var finishReasons = map[string]parleyv1.FinishReason{
	"FINISH_REASON_UNSPECIFIED": parleyv1.FinishReason_FINISH_REASON_UNSPECIFIED,
	"STOP":                      parleyv1.FinishReason_FINISH_REASON_STOP,
	"MAX_TOKENS":                parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"SAFETY":                    parleyv1.FinishReason_FINISH_REASON_SAFETY,
	"RECITATION":                parleyv1.FinishReason_FINISH_REASON_RECITATION,
	"LANGUAGE":                  parleyv1.FinishReason_FINISH_REASON_LANGUAGE,
	"OTHER":                     parleyv1.FinishReason_FINISH_REASON_OTHER,
	"BLOCKLIST":                 parleyv1.FinishReason_FINISH_REASON_BLOCKLIST,
	"PROHIBITED_CONTENT":        parleyv1.FinishReason_FINISH_REASON_PROHIBITED_CONTENT,
	"SPII":                      parleyv1.FinishReason_FINISH_REASON_SPII,
	"MALFORMED_FUNCTION_CALL":   parleyv1.FinishReason_FINISH_REASON_MALFORMED_TOOL_CALL,
	"IMAGE_SAFETY":              parleyv1.FinishReason_FINISH_REASON_IMAGE_SAFETY,
	"UNEXPECTED_TOOL_CALL":      parleyv1.FinishReason_FINISH_REASON_UNEXPECTED_TOOL_CALL,
	"TOO_MANY_TOOL_CALLS":       parleyv1.FinishReason_FINISH_REASON_TOO_MANY_TOOL_CALLS,
}

// extFinish keeps a finish reason word with no canonical value.
const extFinish = "@finishReason"

func finishReason(s string, c *parleyv1.Candidate) parleyv1.FinishReason {
	if r, ok := finishReasons[s]; ok {
		return r
	}
	jsonx.KeepValue(&c.Extensions, D, extFinish, jsontext.Value(quote(s)))
	return parleyv1.FinishReason_FINISH_REASON_OTHER
}

// wireFinishReason maps a canonical finish reason back. Tool use and stop
// sequences are STOP here (the dialect has no words for them); a refusal is
// SAFETY; a paused turn or an exhausted context window is MAX_TOKENS, the
// nearest word for "cut short".
func wireFinishReason(r parleyv1.FinishReason, c *parleyv1.Candidate, same bool) string {
	if same {
		if v, ok := jsonx.Value(c.GetExtensions(), D, extFinish); ok {
			var s string
			_ = jsonx.Unmarshal(v, &s)
			return s
		}
	}
	switch r {
	case parleyv1.FinishReason_FINISH_REASON_UNSPECIFIED:
		return ""
	case parleyv1.FinishReason_FINISH_REASON_TOOL_USE, parleyv1.FinishReason_FINISH_REASON_STOP_SEQUENCE:
		return "STOP"
	case parleyv1.FinishReason_FINISH_REASON_REFUSAL:
		return "SAFETY"
	case parleyv1.FinishReason_FINISH_REASON_PAUSE_TURN, parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED:
		return "MAX_TOKENS"
	case parleyv1.FinishReason_FINISH_REASON_MALFORMED_TOOL_CALL:
		return "MALFORMED_FUNCTION_CALL"
	}
	for k, v := range finishReasons {
		if v == r && k != "FINISH_REASON_UNSPECIFIED" {
			return k
		}
	}
	return "OTHER"
}

// DecodeResponse implements translate.Upstream.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	var w Response
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(D, err)
	}
	if w.Error != nil {
		return nil, translate.UpstreamFailed(errorFromDetail(w.Error))
	}
	d := responseDecoder{t: t, id: w.ResponseID}
	resp := &parleyv1.Response{Id: w.ResponseID, Model: w.ModelVersion, Status: parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED, Extensions: upstreamMark()}
	for i := range w.Candidates {
		c, err := d.candidate(&w.Candidates[i], i)
		if err != nil {
			return nil, translate.UpstreamProtocol(D, fmt.Errorf("candidates[%d]: %w", i, err))
		}
		resp.Candidates = append(resp.Candidates, c)
	}
	if pf := w.PromptFeedback; pf != nil {
		resp.PromptFeedback = promptFeedback(pf, &resp.Extensions)
	}
	if u := w.UsageMetadata; u != nil {
		resp.Usage = canonicalUsage(u)
		jsonx.Keep(&resp.Extensions, D, "usageMetadata", u.Unknown)
		for name, list := range u.detailLists() {
			for i, m := range *list {
				jsonx.Keep(&resp.Extensions, D, detailKey(name, i), m.Unknown)
			}
		}
	}
	jsonx.Keep(&resp.Extensions, D, "", w.Unknown)
	return resp, nil
}

type responseDecoder struct {
	t  translate.Target
	id string // the response's id, for the ids of calls that came without one
}

// syntheticID names a call the service gave no id: stable for the same
// reply, distinct across replies (whose ids differ).
func syntheticID(respID string, cand, part int) string {
	if respID == "" {
		return fmt.Sprintf("call_%d_%d", cand, part)
	}
	return fmt.Sprintf("call_%s_%d_%d", sanitizeID(respID), cand, part)
}

func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (d responseDecoder) part(w *Part, cand, index int) (*parleyv1.Part, error) {
	dec := decoder{}
	p, err := dec.part(w, "", index)
	if err != nil {
		return nil, err
	}
	if tc := p.GetToolCall(); tc != nil && jsonx.Has(p.GetExtensions(), D, extSyntheticID) {
		tc.Id = syntheticID(d.id, cand, index)
	}
	if p.Signature != nil {
		p.Signature = translate.Stamp(p.Signature.GetValue(), D, d.t)
	}
	if r := p.GetReasoning(); r != nil && r.EncryptedContent != nil {
		r.EncryptedContent = translate.Stamp(r.EncryptedContent.GetValue(), D, d.t)
	}
	return p, nil
}

func (d responseDecoder) candidate(w *Candidate, i int) (*parleyv1.Candidate, error) {
	c := &parleyv1.Candidate{Index: int32(i)}
	if w.Index != nil {
		c.Index = int32(*w.Index)
	} else {
		jsonx.KeepValue(&c.Extensions, D, "@noindex", jsontext.Value("true"))
	}
	if w.Content != nil {
		for j := range w.Content.Parts {
			p, err := d.part(&w.Content.Parts[j], int(c.Index), j)
			if err != nil {
				return nil, fmt.Errorf("content.parts[%d]: %w", j, err)
			}
			c.Parts = append(c.Parts, p)
		}
		if w.Content.Role != "model" {
			jsonx.KeepValue(&c.Extensions, D, "content/role", jsontext.Value(quote(w.Content.Role)))
		}
		jsonx.Keep(&c.Extensions, D, "content", w.Content.Unknown)
	}
	if w.FinishReason != "" {
		c.FinishReason = finishReason(w.FinishReason, c)
	}
	c.FinishReason = translate.ToolUseFinish(c.FinishReason, translate.HasToolCalls(c.Parts) && w.FinishReason != "")
	c.FinishMessage = w.FinishMessage
	d.metadata(w, c)
	jsonx.Keep(&c.Extensions, D, "", w.Unknown)
	return c, nil
}

// metadata decodes a candidate's safety, citation, grounding and
// log-probability data.
func (d responseDecoder) metadata(w *Candidate, c *parleyv1.Candidate) {
	c.SafetyRatings = safetyRatings(w.SafetyRatings)
	if cm := w.CitationMetadata; cm != nil {
		for _, s := range slices.Concat(cm.CitationSources, cm.Citations) {
			a := &parleyv1.Annotation{Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION, Url: s.URI, License: s.License, Title: s.Title, StartIndex: s.StartIndex, EndIndex: s.EndIndex}
			jsonx.Keep(&a.Extensions, D, "", s.Unknown)
			c.Citations = append(c.Citations, a)
		}
		if len(cm.CitationSources)+len(cm.Citations) == 0 {
			jsonx.KeepValue(&c.Extensions, D, "@citations", jsontext.Value("true"))
		}
	}
	if w.TokenCount != nil {
		c.TokenCount = ptr(clampInt32(*w.TokenCount))
	}
	c.AvgLogprobs = w.AvgLogprobs
	if gm := w.GroundingMetadata; gm != nil {
		c.Grounding = grounding(gm, &c.Extensions)
	}
	if lr := w.LogprobsResult; lr != nil {
		c.Logprobs = logprobs(lr)
	}
	if uc := w.URLContextMetadata; uc != nil {
		for _, u := range uc.URLMetadata {
			c.UrlRetrievals = append(c.UrlRetrievals, &parleyv1.UrlRetrieval{Url: u.RetrievedURL, Status: urlStatus(u.URLRetrievalStatus)})
		}
		if len(uc.URLMetadata) == 0 {
			jsonx.KeepValue(&c.Extensions, D, "urlContextMetadata", jsontext.Value("{}"))
		}
	}
	for _, ga := range w.GroundingAttributions {
		c.GroundingAttributions = append(c.GroundingAttributions, attribution(&ga))
	}
}

func urlStatus(s string) parleyv1.UrlRetrievalStatus {
	switch s {
	case "URL_RETRIEVAL_STATUS_SUCCESS":
		return parleyv1.UrlRetrievalStatus_URL_RETRIEVAL_STATUS_SUCCESS
	case "URL_RETRIEVAL_STATUS_ERROR":
		return parleyv1.UrlRetrievalStatus_URL_RETRIEVAL_STATUS_ERROR
	}
	return parleyv1.UrlRetrievalStatus_URL_RETRIEVAL_STATUS_UNSPECIFIED
}

func attribution(w *GroundingAttribution) *parleyv1.GroundingAttribution {
	a := &parleyv1.GroundingAttribution{}
	if s := w.SourceID; s != nil {
		switch {
		case s.GroundingPassage != nil:
			a.Source = &parleyv1.GroundingAttribution_Passage{Passage: &parleyv1.GroundingPassageId{PassageId: s.GroundingPassage.PassageID, PartIndex: int32(deref(s.GroundingPassage.PartIndex))}}
		case s.SemanticRetrieverChunk != nil:
			a.Source = &parleyv1.GroundingAttribution_RetrieverChunk{RetrieverChunk: &parleyv1.SemanticRetrieverChunk{Source: s.SemanticRetrieverChunk.Source, Chunk: s.SemanticRetrieverChunk.Chunk}}
		}
	}
	if w.Content != nil {
		dec := decoder{}
		parts, _ := dec.parts(w.Content.Parts, "")
		a.Content = parts
	}
	return a
}

func safetyRatings(rs []SafetyRating) []*parleyv1.SafetyRating {
	var out []*parleyv1.SafetyRating
	for _, r := range rs {
		out = append(out, &parleyv1.SafetyRating{
			Category:         parleyv1.HarmCategory(parleyv1.HarmCategory_value[r.Category]),
			Probability:      parleyv1.HarmProbability(parleyv1.HarmProbability_value["HARM_PROBABILITY_"+r.Probability]),
			Blocked:          deref(r.Blocked),
			ProbabilityScore: r.ProbabilityScore,
			Severity:         parleyv1.HarmSeverity(parleyv1.HarmSeverity_value[r.Severity]),
			SeverityScore:    r.SeverityScore,
		})
	}
	return out
}

func wireSafetyRatings(rs []*parleyv1.SafetyRating) []SafetyRating {
	var out []SafetyRating
	for _, r := range rs {
		w := SafetyRating{Category: r.GetCategory().String(), ProbabilityScore: r.ProbabilityScore, SeverityScore: r.SeverityScore}
		if r.GetProbability() != parleyv1.HarmProbability_HARM_PROBABILITY_UNSPECIFIED {
			w.Probability = strings.TrimPrefix(r.GetProbability().String(), "HARM_PROBABILITY_")
		}
		if r.GetSeverity() != parleyv1.HarmSeverity_HARM_SEVERITY_UNSPECIFIED {
			w.Severity = r.GetSeverity().String()
		}
		if r.GetBlocked() {
			w.Blocked = ptr(true)
		}
		out = append(out, w)
	}
	return out
}

func promptFeedback(w *PromptFeedback, ext **parleyv1.Extensions) *parleyv1.PromptFeedback {
	pf := &parleyv1.PromptFeedback{SafetyRatings: safetyRatings(w.SafetyRatings), BlockReasonMessage: w.BlockReasonMessage}
	if w.BlockReason != "" {
		if v, ok := parleyv1.BlockReason_value["BLOCK_REASON_"+w.BlockReason]; ok {
			pf.BlockReason = parleyv1.BlockReason(v)
		} else {
			pf.BlockReason = parleyv1.BlockReason_BLOCK_REASON_OTHER
			jsonx.KeepValue(ext, D, "@blockReason", jsontext.Value(quote(w.BlockReason)))
		}
	}
	jsonx.Keep(ext, D, "promptFeedback", w.Unknown)
	return pf
}

func wirePromptFeedback(pf *parleyv1.PromptFeedback, resp *parleyv1.Response, same bool) *PromptFeedback {
	if pf == nil {
		return nil
	}
	w := &PromptFeedback{SafetyRatings: wireSafetyRatings(pf.GetSafetyRatings()), BlockReasonMessage: pf.GetBlockReasonMessage()}
	if pf.GetBlockReason() != parleyv1.BlockReason_BLOCK_REASON_UNSPECIFIED {
		w.BlockReason = strings.TrimPrefix(pf.GetBlockReason().String(), "BLOCK_REASON_")
	}
	if same {
		if v, ok := jsonx.Value(resp.GetExtensions(), D, "@blockReason"); ok {
			_ = jsonx.Unmarshal(v, &w.BlockReason)
		}
		w.Unknown = jsonx.Take(resp.GetExtensions(), D, "promptFeedback")
	}
	return w
}

func grounding(w *GroundingMetadata, ext **parleyv1.Extensions) *parleyv1.GroundingMetadata {
	g := &parleyv1.GroundingMetadata{WebSearchQueries: w.WebSearchQueries}
	for _, c := range w.GroundingChunks {
		switch {
		case c.Web != nil:
			g.Chunks = append(g.Chunks, &parleyv1.GroundingChunk{Source: &parleyv1.GroundingChunk_Web{Web: &parleyv1.WebSource{Uri: c.Web.URI, Title: c.Web.Title, Domain: c.Web.Domain}}})
		case c.RetrievedContext != nil:
			g.Chunks = append(g.Chunks, &parleyv1.GroundingChunk{Source: &parleyv1.GroundingChunk_RetrievedContext{RetrievedContext: &parleyv1.RetrievedContext{Uri: c.RetrievedContext.URI, Title: c.RetrievedContext.Title, Text: c.RetrievedContext.Text}}})
		default:
			g.Chunks = append(g.Chunks, &parleyv1.GroundingChunk{})
		}
	}
	for _, s := range w.GroundingSupports {
		gs := &parleyv1.GroundingSupport{ChunkIndices: s.GroundingChunkIndices, ConfidenceScores: s.ConfidenceScores}
		if seg := s.Segment; seg != nil {
			gs.Segment = &parleyv1.TextSegment{PartIndex: int32(deref(seg.PartIndex)), StartIndex: int32(deref(seg.StartIndex)), EndIndex: int32(deref(seg.EndIndex)), Text: seg.Text}
		}
		g.Supports = append(g.Supports, gs)
	}
	if sep := w.SearchEntryPoint; sep != nil {
		blob, _ := decodeBase64(sep.SDKBlob)
		g.SearchEntryPoint = &parleyv1.SearchEntryPoint{RenderedContent: sep.RenderedContent, SdkBlob: blob}
	}
	if rm := w.RetrievalMetadata; rm != nil {
		g.DynamicRetrievalScore = rm.GoogleSearchDynamicRetrievalScore
		if g.DynamicRetrievalScore == nil {
			g.DynamicRetrievalScore = rm.WebSearchDynamicRetrievalScore
		}
		if g.DynamicRetrievalScore == nil {
			jsonx.KeepValue(ext, D, "groundingMetadata/retrievalMetadata", jsontext.Value("{}"))
		}
	}
	// Unknown members of the grounding objects (maps widgets, flagging
	// URIs ...) are kept whole for this dialect.
	if len(w.Unknown) > 0 || hasUnknownGrounding(w) {
		raw, _ := jsonx.Marshal(w)
		jsonx.KeepValue(ext, D, "@grounding", raw)
	}
	return g
}

func hasUnknownGrounding(w *GroundingMetadata) bool {
	for _, c := range w.GroundingChunks {
		if len(c.Unknown) > 0 || c.Web != nil && len(c.Web.Unknown) > 0 || c.RetrievedContext != nil && len(c.RetrievedContext.Unknown) > 0 || c.Web == nil && c.RetrievedContext == nil {
			return true
		}
	}
	for _, s := range w.GroundingSupports {
		if len(s.Unknown) > 0 || s.Segment != nil && len(s.Segment.Unknown) > 0 {
			return true
		}
	}
	return w.SearchEntryPoint != nil && len(w.SearchEntryPoint.Unknown) > 0 || w.RetrievalMetadata != nil && len(w.RetrievalMetadata.Unknown) > 0
}

func wireGrounding(g *parleyv1.GroundingMetadata, c *parleyv1.Candidate, same bool) *GroundingMetadata {
	if g == nil {
		return nil
	}
	if same {
		if v, ok := jsonx.Value(c.GetExtensions(), D, "@grounding"); ok {
			var raw GroundingMetadata
			if jsonx.Unmarshal(v, &raw) == nil {
				return &raw
			}
		}
	}
	w := &GroundingMetadata{WebSearchQueries: g.GetWebSearchQueries()}
	for _, ch := range g.GetChunks() {
		switch s := ch.GetSource().(type) {
		case *parleyv1.GroundingChunk_Web:
			w.GroundingChunks = append(w.GroundingChunks, GroundingChunk{Web: &WebChunk{URI: s.Web.GetUri(), Title: s.Web.GetTitle(), Domain: s.Web.GetDomain()}})
		case *parleyv1.GroundingChunk_RetrievedContext:
			w.GroundingChunks = append(w.GroundingChunks, GroundingChunk{RetrievedContext: &RetrievedChunk{URI: s.RetrievedContext.GetUri(), Title: s.RetrievedContext.GetTitle(), Text: s.RetrievedContext.GetText()}})
		}
	}
	for _, s := range g.GetSupports() {
		ws := GroundingSupport{GroundingChunkIndices: s.GetChunkIndices(), ConfidenceScores: s.GetConfidenceScores()}
		if seg := s.GetSegment(); seg != nil {
			ws.Segment = &Segment{Text: seg.GetText()}
			if seg.GetPartIndex() != 0 {
				ws.Segment.PartIndex = ptr(int64(seg.GetPartIndex()))
			}
			if seg.GetStartIndex() != 0 {
				ws.Segment.StartIndex = ptr(int64(seg.GetStartIndex()))
			}
			ws.Segment.EndIndex = ptr(int64(seg.GetEndIndex()))
		}
		w.GroundingSupports = append(w.GroundingSupports, ws)
	}
	if sep := g.GetSearchEntryPoint(); sep != nil {
		w.SearchEntryPoint = &SearchEntryPoint{RenderedContent: sep.GetRenderedContent()}
		if len(sep.GetSdkBlob()) > 0 {
			w.SearchEntryPoint.SDKBlob = base64.StdEncoding.EncodeToString(sep.GetSdkBlob())
		}
	}
	if g.DynamicRetrievalScore != nil {
		w.RetrievalMetadata = &RetrievalMetadata{GoogleSearchDynamicRetrievalScore: g.DynamicRetrievalScore}
	} else if same && jsonx.Has(c.GetExtensions(), D, "groundingMetadata/retrievalMetadata") {
		w.RetrievalMetadata = &RetrievalMetadata{}
	}
	return w
}

func logprobs(w *LogprobsResult) *parleyv1.Logprobs {
	lp := &parleyv1.Logprobs{}
	conv := func(c LogprobCandidate) *parleyv1.TokenLogprob {
		t := &parleyv1.TokenLogprob{Token: c.Token, Logprob: deref(c.LogProbability)}
		if c.TokenID != nil {
			t.TokenId = ptr(clampInt32(*c.TokenID))
		}
		return t
	}
	for _, c := range w.ChosenCandidates {
		lp.Chosen = append(lp.Chosen, conv(c))
	}
	for _, tc := range w.TopCandidates {
		top := &parleyv1.TopLogprobs{}
		for _, c := range tc.Candidates {
			top.Candidates = append(top.Candidates, conv(c))
		}
		lp.Top = append(lp.Top, top)
	}
	return lp
}

func wireLogprobs(lp *parleyv1.Logprobs) *LogprobsResult {
	if lp == nil {
		return nil
	}
	conv := func(t *parleyv1.TokenLogprob) LogprobCandidate {
		c := LogprobCandidate{Token: t.GetToken(), LogProbability: ptr(t.GetLogprob())}
		if t.TokenId != nil {
			c.TokenID = ptr(int64(t.GetTokenId()))
		}
		return c
	}
	w := &LogprobsResult{}
	for _, t := range lp.GetChosen() {
		w.ChosenCandidates = append(w.ChosenCandidates, conv(t))
	}
	for _, top := range lp.GetTop() {
		tc := TopCandidates{}
		for _, t := range top.GetCandidates() {
			tc.Candidates = append(tc.Candidates, conv(t))
		}
		w.TopCandidates = append(w.TopCandidates, tc)
	}
	return w
}

var modalityNames = map[string]parleyv1.Modality{
	"TEXT": parleyv1.Modality_MODALITY_TEXT, "IMAGE": parleyv1.Modality_MODALITY_IMAGE, "AUDIO": parleyv1.Modality_MODALITY_AUDIO,
	"VIDEO": parleyv1.Modality_MODALITY_VIDEO, "DOCUMENT": parleyv1.Modality_MODALITY_DOCUMENT,
}

func modalityTokens(list []ModalityTokenCount) []*parleyv1.ModalityTokens {
	var out []*parleyv1.ModalityTokens
	for _, m := range list {
		out = append(out, &parleyv1.ModalityTokens{Modality: modalityNames[m.Modality], Tokens: deref(m.TokenCount)})
	}
	return out
}

func wireModalityTokens(list []*parleyv1.ModalityTokens) []ModalityTokenCount {
	var out []ModalityTokenCount
	for _, m := range list {
		out = append(out, ModalityTokenCount{Modality: strings.TrimPrefix(m.GetModality().String(), "MODALITY_"), TokenCount: ptr(m.GetTokens())})
	}
	return out
}

// canonicalUsage: promptTokenCount counts cached tokens, as canonical input
// does; candidatesTokenCount leaves the thoughts out, so canonical output is
// candidates + thoughts.
func canonicalUsage(u *UsageMetadata) *parleyv1.Usage {
	out := &parleyv1.Usage{
		InputTokens:         u.PromptTokenCount,
		CacheReadTokens:     u.CachedContentTokenCount,
		ReasoningTokens:     u.ThoughtsTokenCount,
		ToolUseInputTokens:  u.ToolUsePromptTokenCount,
		TotalTokens:         u.TotalTokenCount,
		InputDetails:        modalityTokens(u.PromptTokensDetails),
		CacheDetails:        modalityTokens(u.CacheTokensDetails),
		OutputDetails:       modalityTokens(u.CandidatesTokensDetails),
		ToolUseInputDetails: modalityTokens(u.ToolUsePromptTokensDetails),
	}
	if u.CandidatesTokenCount != nil || u.ThoughtsTokenCount != nil {
		out.OutputTokens = ptr(deref(u.CandidatesTokenCount) + deref(u.ThoughtsTokenCount))
	}
	return out
}

func wireUsage(u *parleyv1.Usage) *UsageMetadata {
	if u == nil {
		return nil
	}
	w := &UsageMetadata{
		PromptTokenCount:           u.InputTokens,
		CachedContentTokenCount:    u.CacheReadTokens,
		ThoughtsTokenCount:         u.ReasoningTokens,
		ToolUsePromptTokenCount:    u.ToolUseInputTokens,
		TotalTokenCount:            u.TotalTokens,
		PromptTokensDetails:        wireModalityTokens(u.GetInputDetails()),
		CacheTokensDetails:         wireModalityTokens(u.GetCacheDetails()),
		CandidatesTokensDetails:    wireModalityTokens(u.GetOutputDetails()),
		ToolUsePromptTokensDetails: wireModalityTokens(u.GetToolUseInputDetails()),
	}
	if u.OutputTokens != nil {
		w.CandidatesTokenCount = ptr(max(u.GetOutputTokens()-u.GetReasoningTokens(), 0))
	}
	if w.TotalTokenCount == nil && (u.InputTokens != nil || u.OutputTokens != nil) {
		w.TotalTokenCount = ptr(u.GetInputTokens() + u.GetOutputTokens() + u.GetToolUseInputTokens())
	}
	return w
}

// EncodeResponse implements translate.Client.
func (Client) EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error) {
	same := resp.GetExtensions().GetDialect() == D
	w := Response{ResponseID: resp.GetId(), ModelVersion: resp.GetModel()}
	if w.ModelVersion == "" {
		w.ModelVersion = req.GetModel()
	}
	enc := clientEncoder{same: same}
	for _, c := range resp.GetCandidates() {
		wc, err := enc.candidate(c, false)
		if err != nil {
			return nil, err
		}
		w.Candidates = append(w.Candidates, wc)
	}
	w.PromptFeedback = wirePromptFeedback(resp.GetPromptFeedback(), resp, same)
	w.UsageMetadata = wireUsage(resp.GetUsage())
	if same {
		w.Unknown = jsonx.Take(resp.GetExtensions(), D, "")
		if w.UsageMetadata != nil {
			w.UsageMetadata.Unknown = jsonx.Take(resp.GetExtensions(), D, "usageMetadata")
			for name, list := range w.UsageMetadata.detailLists() {
				for i := range *list {
					(*list)[i].Unknown = jsonx.Take(resp.GetExtensions(), D, detailKey(name, i))
				}
			}
		}
	}
	return jsonx.Marshal(w)
}

// clientEncoder renders canonical parts for a client of this dialect.
type clientEncoder struct {
	same bool
}

func (e clientEncoder) candidate(c *parleyv1.Candidate, stream bool) (Candidate, error) {
	w := Candidate{FinishMessage: c.GetFinishMessage(), AvgLogprobs: c.AvgLogprobs}
	if !e.same || !jsonx.Has(c.GetExtensions(), D, "@noindex") {
		w.Index = ptr(int64(c.GetIndex()))
	}
	parts := PartList{}
	for _, p := range c.GetParts() {
		wp, ok, err := e.part(p)
		if err != nil {
			return Candidate{}, err
		}
		if ok {
			parts = append(parts, wp)
		}
	}
	if len(parts) > 0 || !stream {
		w.Content = &Content{Role: "model", Parts: parts}
		if e.same {
			if v, ok := jsonx.Value(c.GetExtensions(), D, "content/role"); ok {
				_ = jsonx.Unmarshal(v, &w.Content.Role)
			}
			w.Content.Unknown = jsonx.Take(c.GetExtensions(), D, "content")
		}
	}
	w.FinishReason = wireFinishReason(c.GetFinishReason(), c, e.same)
	e.candidateMetadata(&w, c)
	if e.same {
		w.Unknown = jsonx.Take(c.GetExtensions(), D, "")
	}
	return w, nil
}

func (e clientEncoder) candidateMetadata(w *Candidate, c *parleyv1.Candidate) {
	w.SafetyRatings = wireSafetyRatings(c.GetSafetyRatings())
	if len(c.GetCitations()) > 0 || e.same && jsonx.Has(c.GetExtensions(), D, "@citations") {
		cm := &CitationMetadata{}
		for _, a := range c.GetCitations() {
			cs := CitationSource{URI: a.GetUrl(), License: a.GetLicense(), Title: a.GetTitle(), StartIndex: a.StartIndex, EndIndex: a.EndIndex}
			if e.same {
				cs.Unknown = jsonx.Take(a.GetExtensions(), D, "")
			}
			cm.CitationSources = append(cm.CitationSources, cs)
		}
		w.CitationMetadata = cm
	}
	if c.TokenCount != nil {
		w.TokenCount = ptr(int64(c.GetTokenCount()))
	}
	w.GroundingMetadata = wireGrounding(c.GetGrounding(), c, e.same)
	w.LogprobsResult = wireLogprobs(c.GetLogprobs())
	if len(c.GetUrlRetrievals()) > 0 || e.same && jsonx.Has(c.GetExtensions(), D, "urlContextMetadata") {
		uc := &URLContextMetadata{}
		for _, u := range c.GetUrlRetrievals() {
			um := URLMetadata{RetrievedURL: u.GetUrl()}
			if u.GetStatus() != parleyv1.UrlRetrievalStatus_URL_RETRIEVAL_STATUS_UNSPECIFIED {
				um.URLRetrievalStatus = u.GetStatus().String()
			}
			uc.URLMetadata = append(uc.URLMetadata, um)
		}
		w.URLContextMetadata = uc
		if e.same {
			delete(w.Unknown, "urlContextMetadata")
		}
	}
	for _, ga := range c.GetGroundingAttributions() {
		wa := GroundingAttribution{SourceID: &AttributionSourceID{}}
		switch s := ga.GetSource().(type) {
		case *parleyv1.GroundingAttribution_Passage:
			wa.SourceID.GroundingPassage = &GroundingPassage{PassageID: s.Passage.GetPassageId(), PartIndex: ptr(int64(s.Passage.GetPartIndex()))}
		case *parleyv1.GroundingAttribution_RetrieverChunk:
			wa.SourceID.SemanticRetrieverChunk = &SemanticRetrieverChunk{Source: s.RetrieverChunk.GetSource(), Chunk: s.RetrieverChunk.GetChunk()}
		}
		if len(ga.GetContent()) > 0 {
			parts := PartList{}
			for _, p := range ga.GetContent() {
				if wp, ok, err := e.part(p); err == nil && ok {
					parts = append(parts, wp)
				}
			}
			wa.Content = &Content{Parts: parts}
		}
		w.GroundingAttributions = append(w.GroundingAttributions, wa)
	}
}

// part renders one answer part. Signatures another dialect made are
// sealed; every part here can carry one.
func (e clientEncoder) part(p *parleyv1.Part) (Part, bool, error) {
	w := Part{}
	if e.same {
		w.Unknown = jsonx.Take(p.GetExtensions(), D, "")
	}
	if sig := p.GetSignature(); sig != nil {
		w.ThoughtSignature = translate.SealOpaque(sig, D, translate.SealAsIs)
	}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		w.Text = ptr(k.Text.GetText())
		if e.same {
			if v, ok := jsonx.Value(p.GetExtensions(), D, "thought"); ok && string(v) == "false" {
				w.Thought = ptr(false)
				delete(w.Unknown, "thought")
			}
		}
	case *parleyv1.Part_Refusal:
		w.Text = ptr(k.Refusal.GetText())
	case *parleyv1.Part_Reasoning:
		r := k.Reasoning
		text := r.GetText()
		if text == "" && len(r.GetSummary()) > 0 {
			text = strings.Join(r.GetSummary(), "\n\n")
		}
		w.Text, w.Thought = ptr(text), ptr(true)
		if w.ThoughtSignature == "" && r.GetEncryptedContent() != nil {
			w.ThoughtSignature = translate.SealOpaque(r.GetEncryptedContent(), D, translate.SealEncrypted)
		}
	case *parleyv1.Part_Media:
		m := k.Media
		switch s := m.GetSource().(type) {
		case *parleyv1.Media_Data:
			w.InlineData = &Blob{MimeType: m.GetMimeType(), Data: base64.StdEncoding.EncodeToString(s.Data)}
		case *parleyv1.Media_Uri:
			w.FileData = &FileData{MimeType: m.GetMimeType(), FileURI: s.Uri}
		case *parleyv1.Media_FileId:
			w.FileData = &FileData{MimeType: m.GetMimeType(), FileURI: s.FileId}
		}
		if e.same {
			if w.InlineData != nil {
				w.InlineData.Unknown = jsonx.Take(p.GetExtensions(), D, "inlineData")
			}
			if w.FileData != nil {
				w.FileData.Unknown = jsonx.Take(p.GetExtensions(), D, "fileData")
			}
		}
	case *parleyv1.Part_ToolCall:
		tc := k.ToolCall
		fc := &FunctionCall{Name: tc.GetName(), Args: toolArgs(tc.GetArguments())}
		if !e.same || !jsonx.Has(p.GetExtensions(), D, extSyntheticID) {
			fc.ID = tc.GetId()
		}
		if e.same {
			fc.Unknown = jsonx.Take(p.GetExtensions(), D, "functionCall")
		}
		w.FunctionCall = fc
	case *parleyv1.Part_ExecutableCode:
		ec := k.ExecutableCode
		w.ExecutableCode = &ExecutableCode{Code: ec.GetCode(), ID: ec.GetId(), Language: "PYTHON"}
		if ec.GetLanguage() != parleyv1.CodeLanguage_CODE_LANGUAGE_PYTHON {
			w.ExecutableCode.Language = "LANGUAGE_UNSPECIFIED"
		}
		if e.same {
			w.ExecutableCode.Unknown = jsonx.Take(p.GetExtensions(), D, "executableCode")
		}
	case *parleyv1.Part_CodeExecutionResult:
		cr := k.CodeExecutionResult
		w.CodeExecutionResult = &CodeExecutionResult{Outcome: wireOutcome(cr.GetOutcome()), Output: cr.GetOutput(), ID: cr.GetId()}
		if e.same {
			if v, ok := jsonx.Value(p.GetExtensions(), D, extOutcome); ok {
				_ = jsonx.Unmarshal(v, &w.CodeExecutionResult.Outcome)
			}
			w.CodeExecutionResult.Unknown = jsonx.Take(p.GetExtensions(), D, "codeExecutionResult")
		}
	case nil:
		if v, ok := jsonx.Value(p.GetExtensions(), D, extBlock); ok {
			var raw Part
			if err := jsonx.Unmarshal(v, &raw); err != nil {
				return Part{}, false, err
			}
			return raw, true, nil
		}
		return Part{}, false, nil
	default:
		// Hosted tool calls of another service, tool results and item
		// references have no place in an answer of this dialect.
		return Part{}, false, nil
	}
	return w, true, nil
}

// toolArgs is a call's arguments as the args object the dialect requires;
// arguments that are not an object (a model's malformed output) are passed
// as {"_raw_arguments": "..."} so the client sees them.
func toolArgs(args string) jsontext.Value {
	args = strings.TrimSpace(args)
	if args == "" {
		return jsontext.Value("{}")
	}
	if v := jsontext.Value(args); v.IsValid() && v.Kind() == '{' {
		return v
	}
	raw, _ := jsonx.Marshal(map[string]string{"_raw_arguments": args})
	return raw
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// upstreamMark is the extension bag of a decoded response: it names this
// dialect as the one that made the response, so that a client of the same
// dialect gets its members back as they came, even when there are no
// members to carry.
func upstreamMark() *parleyv1.Extensions {
	return &parleyv1.Extensions{Dialect: D}
}

// detailLists names the per-modality lists of a usage report, for the
// members of their entries that the canonical counts do not hold.
func (u *UsageMetadata) detailLists() iter.Seq2[string, *[]ModalityTokenCount] {
	return func(yield func(string, *[]ModalityTokenCount) bool) {
		_ = yield("promptTokensDetails", &u.PromptTokensDetails) &&
			yield("cacheTokensDetails", &u.CacheTokensDetails) &&
			yield("candidatesTokensDetails", &u.CandidatesTokensDetails) &&
			yield("toolUsePromptTokensDetails", &u.ToolUsePromptTokensDetails)
	}
}

// detailKey is the extension prefix of entry i of a per-modality list.
func detailKey(list string, i int) string {
	return "usageMetadata/" + list + "/" + strconv.Itoa(i)
}
