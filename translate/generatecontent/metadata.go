package generatecontent

import (
	"encoding/base64"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Candidate metadata: citations, grounding and grounding attributions, URL
// retrievals, token counts and log probabilities, from an upstream's reply
// and toward a client. Safety ratings are in safety.go.

// metadata decodes a candidate's safety, citation, grounding and
// log-probability data.
func (d responseDecoder) metadata(w *candidate, c *parleyv1.Candidate) {
	c.SafetyRatings = safetyRatings(w.SafetyRatings)
	if cm := w.CitationMetadata; cm != nil {
		for _, s := range slices.Concat(cm.CitationSources, cm.Citations) {
			a := &parleyv1.Annotation{Kind: parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION, Url: s.URI, License: s.License, Title: s.Title, StartIndex: s.StartIndex, EndIndex: s.EndIndex}
			jsonx.Keep(&a.Extensions, thisDialect, "", s.Unknown)
			c.Citations = append(c.Citations, a)
		}
		if len(cm.CitationSources)+len(cm.Citations) == 0 {
			markCitations.Keep(&c.Extensions, jsontext.Value("true"))
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
			jsonx.KeepValue(&c.Extensions, thisDialect, "urlContextMetadata", jsontext.Value("{}"))
		}
	}
	for _, ga := range w.GroundingAttributions {
		c.GroundingAttributions = append(c.GroundingAttributions, attribution(&ga))
	}
}

func (e clientEncoder) candidateMetadata(w *candidate, c *parleyv1.Candidate) {
	w.SafetyRatings = wireSafetyRatings(c.GetSafetyRatings())
	if len(c.GetCitations()) > 0 || e.same && markCitations.In(c.GetExtensions()) {
		cm := &citationMetadata{}
		for _, a := range c.GetCitations() {
			cs := citationSource{URI: a.GetUrl(), License: a.GetLicense(), Title: a.GetTitle(), StartIndex: a.StartIndex, EndIndex: a.EndIndex}
			if e.same {
				cs.Unknown = jsonx.Take(a.GetExtensions(), thisDialect, "")
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
	if len(c.GetUrlRetrievals()) > 0 || e.same && jsonx.Has(c.GetExtensions(), thisDialect, "urlContextMetadata") {
		uc := &urlContextMetadata{}
		for _, u := range c.GetUrlRetrievals() {
			um := urlMetadata{RetrievedURL: u.GetUrl()}
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
		wa := groundingAttribution{SourceID: &attributionSourceID{}}
		switch s := ga.GetSource().(type) {
		case *parleyv1.GroundingAttribution_Passage:
			wa.SourceID.GroundingPassage = &groundingPassage{PassageID: s.Passage.GetPassageId(), PartIndex: ptr(int64(s.Passage.GetPartIndex()))}
		case *parleyv1.GroundingAttribution_RetrieverChunk:
			wa.SourceID.SemanticRetrieverChunk = &semanticRetrieverChunk{Source: s.RetrieverChunk.GetSource(), Chunk: s.RetrieverChunk.GetChunk()}
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

func urlStatus(s string) parleyv1.UrlRetrievalStatus {
	switch s {
	case "URL_RETRIEVAL_STATUS_SUCCESS":
		return parleyv1.UrlRetrievalStatus_URL_RETRIEVAL_STATUS_SUCCESS
	case "URL_RETRIEVAL_STATUS_ERROR":
		return parleyv1.UrlRetrievalStatus_URL_RETRIEVAL_STATUS_ERROR
	}
	return parleyv1.UrlRetrievalStatus_URL_RETRIEVAL_STATUS_UNSPECIFIED
}

func attribution(w *groundingAttribution) *parleyv1.GroundingAttribution {
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
		parts, _ := dec.parts(w.Content.Parts, "", false)
		a.Content = parts
	}
	return a
}

func grounding(w *groundingMetadata, ext **parleyv1.Extensions) *parleyv1.GroundingMetadata {
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
			jsonx.KeepValue(ext, thisDialect, "groundingMetadata/retrievalMetadata", jsontext.Value("{}"))
		}
	}
	// Unknown members of the grounding objects (maps widgets, flagging
	// URIs ...) are kept whole for this dialect.
	if len(w.Unknown) > 0 || hasUnknownGrounding(w) {
		raw, _ := jsonx.Marshal(w)
		markGrounding.Keep(ext, raw)
	}
	return g
}

func hasUnknownGrounding(w *groundingMetadata) bool {
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

func wireGrounding(g *parleyv1.GroundingMetadata, c *parleyv1.Candidate, same bool) *groundingMetadata {
	if g == nil {
		return nil
	}
	if same {
		if v, ok := markGrounding.Value(c.GetExtensions()); ok {
			var raw groundingMetadata
			if jsonx.Unmarshal(v, &raw) == nil {
				return &raw
			}
		}
	}
	w := &groundingMetadata{WebSearchQueries: g.GetWebSearchQueries()}
	for _, ch := range g.GetChunks() {
		switch s := ch.GetSource().(type) {
		case *parleyv1.GroundingChunk_Web:
			w.GroundingChunks = append(w.GroundingChunks, groundingChunk{Web: &webChunk{URI: s.Web.GetUri(), Title: s.Web.GetTitle(), Domain: s.Web.GetDomain()}})
		case *parleyv1.GroundingChunk_RetrievedContext:
			w.GroundingChunks = append(w.GroundingChunks, groundingChunk{RetrievedContext: &retrievedChunk{URI: s.RetrievedContext.GetUri(), Title: s.RetrievedContext.GetTitle(), Text: s.RetrievedContext.GetText()}})
		}
	}
	for _, s := range g.GetSupports() {
		ws := groundingSupport{GroundingChunkIndices: s.GetChunkIndices(), ConfidenceScores: s.GetConfidenceScores()}
		if seg := s.GetSegment(); seg != nil {
			ws.Segment = &segment{Text: seg.GetText()}
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
		w.SearchEntryPoint = &searchEntryPoint{RenderedContent: sep.GetRenderedContent()}
		if len(sep.GetSdkBlob()) > 0 {
			w.SearchEntryPoint.SDKBlob = base64.StdEncoding.EncodeToString(sep.GetSdkBlob())
		}
	}
	if g.DynamicRetrievalScore != nil {
		w.RetrievalMetadata = &retrievalMetadata{GoogleSearchDynamicRetrievalScore: g.DynamicRetrievalScore}
	} else if same && jsonx.Has(c.GetExtensions(), thisDialect, "groundingMetadata/retrievalMetadata") {
		w.RetrievalMetadata = &retrievalMetadata{}
	}
	return w
}

func logprobs(w *logprobsResult) *parleyv1.Logprobs {
	lp := &parleyv1.Logprobs{}
	conv := func(c logprobCandidate) *parleyv1.TokenLogprob {
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

func wireLogprobs(lp *parleyv1.Logprobs) *logprobsResult {
	if lp == nil {
		return nil
	}
	conv := func(t *parleyv1.TokenLogprob) logprobCandidate {
		c := logprobCandidate{Token: t.GetToken(), LogProbability: ptr(t.GetLogprob())}
		if t.TokenId != nil {
			c.TokenID = ptr(int64(t.GetTokenId()))
		}
		return c
	}
	w := &logprobsResult{}
	for _, t := range lp.GetChosen() {
		w.ChosenCandidates = append(w.ChosenCandidates, conv(t))
	}
	for _, top := range lp.GetTop() {
		tc := topCandidates{}
		for _, t := range top.GetCandidates() {
			tc.Candidates = append(tc.Candidates, conv(t))
		}
		w.TopCandidates = append(w.TopCandidates, tc)
	}
	return w
}
