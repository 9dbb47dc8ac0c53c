package responses

import (
	"regexp"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Settings, in both directions: sampling, limits, log probabilities,
// include, text (verbosity and the response format), reasoning effort and
// summary, metadata, service tier, truncation and user, and, toward an
// upstream, store and previous_response_id. What an upstream of this
// dialect cannot take is listed in Outgoing.Dropped. The response's echo
// of the settings is in echo.go.

var inclusions = map[string]parleyv1.OutputInclusion{
	"reasoning.encrypted_content":           parleyv1.OutputInclusion_OUTPUT_INCLUSION_REASONING_ENCRYPTED_CONTENT,
	"file_search_call.results":              parleyv1.OutputInclusion_OUTPUT_INCLUSION_FILE_SEARCH_RESULTS,
	"message.input_image.image_url":         parleyv1.OutputInclusion_OUTPUT_INCLUSION_INPUT_IMAGE_URLS,
	"computer_call_output.output.image_url": parleyv1.OutputInclusion_OUTPUT_INCLUSION_COMPUTER_OUTPUT_IMAGE_URLS,
	"message.output_text.logprobs":          parleyv1.OutputInclusion_OUTPUT_INCLUSION_OUTPUT_LOGPROBS,
	"web_search_call.action.sources":        parleyv1.OutputInclusion_OUTPUT_INCLUSION_WEB_SEARCH_SOURCES,
	"code_interpreter_call.outputs":         parleyv1.OutputInclusion_OUTPUT_INCLUSION_CODE_EXECUTION_OUTPUTS,
}

var formatName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func decodeSettings(req *parleyv1.Request, w *Request) error {
	g := &parleyv1.GenerationConfig{Temperature: w.Temperature, TopP: w.TopP}
	if t := w.Temperature; t != nil && (*t < 0 || *t > 2) {
		return translate.Invalid("temperature", "must be between 0 and 2; got %v", *t)
	}
	if p := w.TopP; p != nil && (*p < 0 || *p > 1) {
		return translate.Invalid("top_p", "must be between 0 and 1; got %v", *p)
	}
	if n := w.MaxOutputTokens; n != nil {
		// The service's own lower bound.
		if *n < 16 {
			return translate.Invalid("max_output_tokens", "must be at least 16; got %d", *n)
		}
		g.MaxOutputTokens = new(int32(min(*n, 1<<31-1)))
	}
	if n := w.TopLogprobs; n != nil {
		if *n < 0 || *n > 20 {
			return translate.Invalid("top_logprobs", "must be between 0 and 20")
		}
		g.TopLogprobs = new(int32(*n))
	}
	for i, s := range w.Include {
		inc, ok := inclusions[s]
		if !ok {
			return translate.Invalid("include.["+strconv.Itoa(i)+"]", "unknown value %q", s)
		}
		req.Include = append(req.Include, inc)
		if inc == parleyv1.OutputInclusion_OUTPUT_INCLUSION_OUTPUT_LOGPROBS {
			g.Logprobs = new(true)
		}
	}
	if t := w.Text; t != nil {
		if t.Verbosity != nil {
			v, ok := openai.Verbosity(*t.Verbosity)
			if !ok {
				return translate.Invalid("text.verbosity", "must be low, medium or high; got %q", *t.Verbosity)
			}
			g.Verbosity = v
		}
		if f := t.Format; f != nil {
			rf, err := decodeFormat(f)
			if err != nil {
				return err
			}
			req.ResponseFormat = rf
			jsonx.Keep(&req.Extensions, thisDialect, "text/format", f.Unknown)
		}
		jsonx.Keep(&req.Extensions, thisDialect, "text", t.Unknown)
	}
	req.Generation = g
	if r := w.Reasoning; r != nil {
		rc := &parleyv1.ReasoningConfig{}
		if r.Effort != nil {
			e, ok := openai.Effort(*r.Effort)
			if !ok {
				return translate.Invalid("reasoning.effort", "must be one of none, minimal, low, medium, high, xhigh; got %q", *r.Effort)
			}
			rc.Effort = e
		}
		summary := r.Summary
		if summary == nil && r.GenerateSummary != nil {
			summary = r.GenerateSummary
			markGenerateSummary.Keep(&req.Extensions, jsontext.Value("true"))
		}
		if summary != nil {
			s, ok := summaries[*summary]
			if !ok {
				return translate.Invalid("reasoning.summary", "must be auto, concise or detailed; got %q", *summary)
			}
			rc.Summary = s
		}
		jsonx.Keep(&req.Extensions, thisDialect, "reasoning", r.Unknown)
		req.Reasoning = rc
	}
	if err := openai.Metadata("metadata", w.Metadata); err != nil {
		return err
	}
	if w.ServiceTier != nil {
		t, ok := openai.ServiceTier(*w.ServiceTier)
		if !ok {
			return translate.Invalid("service_tier", "must be one of auto, default, flex, priority; got %q", *w.ServiceTier)
		}
		req.ServiceTier = t
	}
	if w.Truncation != nil {
		switch *w.Truncation {
		case "auto":
			req.Truncation = parleyv1.Truncation_TRUNCATION_AUTO
		case "disabled":
			req.Truncation = parleyv1.Truncation_TRUNCATION_DISABLED
		default:
			return translate.Invalid("truncation", "must be auto or disabled; got %q", *w.Truncation)
		}
	}
	if w.User != nil {
		req.EndUserId = *w.User
	}
	if w.PromptCacheKey != nil {
		req.PromptCacheKey = *w.PromptCacheKey
	}
	return nil
}

func decodeFormat(f *format) (*parleyv1.ResponseFormat, error) {
	switch f.Type {
	case "text":
		return &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT}, nil
	case "json_object":
		return &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT}, nil
	case "json_schema":
		if !formatName.MatchString(f.Name) {
			return nil, translate.Invalid("text.format.name", "must be 1 to 64 letters, digits, underscores or dashes; got %q", f.Name)
		}
		if len(f.Schema) == 0 || f.Schema.Kind() != '{' {
			return nil, translate.Invalid("text.format.schema", "is required and must be a JSON schema object")
		}
		return &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Name: f.Name, Description: deref(f.Description), Schema: string(f.Schema), Strict: f.Strict}, nil
	}
	return nil, translate.Invalid("text.format.type", "must be text, json_schema or json_object; got %q", f.Type)
}

func (e *encoder) settings(w *Request) error {
	req, g := e.req, e.req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	ext := req.GetExtensions()
	w.Temperature, w.TopP = g.Temperature, g.TopP
	if g.MaxOutputTokens != nil {
		// The service's lower bound is 16.
		w.MaxOutputTokens = new(max(int64(g.GetMaxOutputTokens()), 16))
	}
	if g.TopLogprobs != nil {
		w.TopLogprobs = new(int64(g.GetTopLogprobs()))
	}
	if g.GetCandidateCount() > 1 {
		return translate.Unsupported(thisDialect, "generation.candidate_count", "the responses style returns one answer per request")
	}
	for _, d := range []struct {
		set  bool
		name string
	}{
		{len(g.GetStopSequences()) > 0, "generation.stop_sequences"},
		{g.Seed != nil, "generation.seed"},
		{g.PresencePenalty != nil, "generation.presence_penalty"},
		{g.FrequencyPenalty != nil, "generation.frequency_penalty"},
		{len(g.GetLogitBias()) > 0, "generation.logit_bias"},
		{g.TopK != nil, "generation.top_k"},
		{g.GetSpeech() != nil, "generation.speech"},
		{g.GetMediaResolution() != parleyv1.MediaResolution_MEDIA_RESOLUTION_UNSPECIFIED, "generation.media_resolution"},
		{g.EnhancedCivicAnswers != nil, "generation.enhanced_civic_answers"},
		{len(req.GetSafetySettings()) > 0, "safety_settings"},
		{req.GetCachedContent() != "", "cached_content"},
	} {
		if d.set {
			e.dropped = append(e.dropped, d.name)
		}
	}
	if g.Logprobs != nil && *g.Logprobs && !hasInclusion(req, parleyv1.OutputInclusion_OUTPUT_INCLUSION_OUTPUT_LOGPROBS) {
		w.Include = append(w.Include, "message.output_text.logprobs")
	}
	for _, inc := range req.GetInclude() {
		for s, v := range inclusions {
			if v == inc {
				w.Include = append(w.Include, s)
			}
		}
	}
	// Made on the stack, and copied to the heap only when it says
	// something: most requests set no text configuration.
	text := textConfig{Unknown: e.take(ext, "text")}
	if v := openai.VerbosityWord(g.GetVerbosity()); v != "" {
		text.Verbosity = new(v)
	}
	if rf := req.GetResponseFormat(); rf != nil {
		f := &format{Unknown: e.take(ext, "text/format")}
		switch rf.GetKind() {
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT:
			f.Type = "text"
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT:
			f.Type = "json_object"
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA:
			f.Type, f.Name, f.Strict = "json_schema", rf.GetName(), rf.Strict
			if f.Name == "" || !formatName.MatchString(f.Name) {
				f.Name = "response"
			}
			if rf.GetDescription() != "" {
				f.Description = new(rf.GetDescription())
			}
			f.Schema = jsontext.Value(rf.GetSchema())
			if rf.GetSchema() == "" {
				f.Schema = jsontext.Value(`{"type":"object"}`)
			}
		default:
			f = nil
			e.dropped = append(e.dropped, "response_format")
		}
		text.Format = f
	}
	if text.Format != nil || text.Verbosity != nil || len(text.Unknown) > 0 {
		w.Text = new(text)
	}
	if rc := req.GetReasoning(); rc != nil {
		r := &reasoningConfig{Unknown: e.take(ext, "reasoning")}
		effort := rc.GetEffort()
		switch {
		case effort != parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
		case rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
			effort = parleyv1.ReasoningEffort_REASONING_EFFORT_NONE
		case rc.BudgetTokens != nil:
			effort = translate.EffortForBudget(rc.GetBudgetTokens())
		}
		if s := openai.EffortWord(effort); s != "" {
			r.Effort = new(s)
		}
		var summary string
		for s, v := range summaries {
			if v == rc.GetSummary() {
				summary = s
			}
		}
		if summary == "" && !e.same && (rc.GetIncludeThoughts() || rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_ENABLED) {
			// A client of another dialect that asked to see reasoning
			// sees the summaries.
			summary = "auto"
		}
		if summary != "" {
			if e.has(ext, markGenerateSummary) {
				r.GenerateSummary = new(summary)
			} else {
				r.Summary = new(summary)
			}
		}
		if r.Effort != nil || r.Summary != nil || r.GenerateSummary != nil || len(r.Unknown) > 0 || e.same {
			w.Reasoning = r
		}
		if !e.same && effort != parleyv1.ReasoningEffort_REASONING_EFFORT_NONE && !hasInclusion(req, parleyv1.OutputInclusion_OUTPUT_INCLUSION_REASONING_ENCRYPTED_CONTENT) {
			// Clients of other dialects send their history back whole:
			// the reasoning must come back encrypted to be sent again.
			w.Include = append(w.Include, "reasoning.encrypted_content")
		}
	}
	if len(req.GetMetadata()) > 0 {
		w.Metadata = req.GetMetadata()
	}
	if s := openai.ServiceTierWord(req.GetServiceTier()); s != "" {
		w.ServiceTier = new(s)
	}
	if req.GetEndUserId() != "" {
		w.User = new(req.GetEndUserId())
	}
	if req.GetPromptCacheKey() != "" {
		w.PromptCacheKey = new(req.GetPromptCacheKey())
	}
	switch req.GetTruncation() {
	case parleyv1.Truncation_TRUNCATION_AUTO:
		w.Truncation = new("auto")
	case parleyv1.Truncation_TRUNCATION_DISABLED:
		w.Truncation = new("disabled")
	}
	if e.same {
		w.Store = req.Store
		if req.GetPreviousResponseId() != "" {
			w.PreviousResponseID = new(req.GetPreviousResponseId())
		}
	} else {
		// A client of another dialect sends its whole history every
		// time: nothing needs keeping upstream.
		w.Store = new(false)
		if req.GetPreviousResponseId() != "" {
			e.dropped = append(e.dropped, "previous_response_id")
		}
	}
	return nil
}

func hasInclusion(req *parleyv1.Request, inc parleyv1.OutputInclusion) bool {
	for _, i := range req.GetInclude() {
		if i == inc {
			return true
		}
	}
	return false
}
