package chatcompletions

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Request settings, both ways: sampling, limits, stop sequences,
// log-probabilities, modalities and audio, reasoning_effort,
// response_format, stream_options, user, metadata, service tier and store,
// the settings this dialect has no field for (Outgoing.Dropped), and the
// members of a client of this dialect that ride in the extension bag.

func decodeSettings(req *parleyv1.Request, w *Request) error {
	g := &parleyv1.GenerationConfig{
		Temperature: w.Temperature, TopP: w.TopP, Seed: w.Seed, Logprobs: w.Logprobs,
		PresencePenalty: w.PresencePenalty, FrequencyPenalty: w.FrequencyPenalty, LogitBias: w.LogitBias,
	}
	if t := w.Temperature; t != nil && (*t < 0 || *t > 2) {
		return translate.Invalid("temperature", "must be between 0 and 2; got %v", *t)
	}
	if p := w.TopP; p != nil && (*p < 0 || *p > 1) {
		return translate.Invalid("top_p", "must be between 0 and 1; got %v", *p)
	}
	switch {
	case w.MaxCompletionTokens != nil:
		g.MaxOutputTokens = int32p(*w.MaxCompletionTokens)
		if w.MaxTokens != nil {
			raw, _ := jsonx.Marshal(*w.MaxTokens)
			jsonx.KeepValue(&req.Extensions, thisDialect, "max_tokens", raw)
		}
	case w.MaxTokens != nil:
		g.MaxOutputTokens = int32p(*w.MaxTokens)
		markMaxTokens.Keep(&req.Extensions, jsontext.Value("true"))
	}
	if v := g.MaxOutputTokens; v != nil && *v < 1 {
		return translate.Invalid("max_completion_tokens", "must be at least 1")
	}
	if w.N != nil {
		if *w.N < 1 || *w.N > 128 {
			return translate.Invalid("n", "must be between 1 and 128")
		}
		g.CandidateCount = int32p(*w.N)
	}
	if w.TopLogprobs != nil {
		if *w.TopLogprobs < 0 || *w.TopLogprobs > 20 {
			return translate.Invalid("top_logprobs", "must be between 0 and 20")
		}
		g.TopLogprobs = int32p(*w.TopLogprobs)
	}
	if w.Stop != nil {
		if len(w.Stop.Values) > 4 {
			return translate.Invalid("stop", "holds %d sequences; at most 4 are allowed", len(w.Stop.Values))
		}
		g.StopSequences = w.Stop.Values
		if w.Stop.String {
			markStopString.Keep(&req.Extensions, jsontext.Value("true"))
		}
	}
	if w.Verbosity != "" {
		v, ok := openai.Verbosity(w.Verbosity)
		if !ok {
			return translate.Invalid("verbosity", "must be low, medium or high; got %q", w.Verbosity)
		}
		g.Verbosity = v
	}
	for i, m := range w.Modalities {
		switch m {
		case "text":
			g.OutputModalities = append(g.OutputModalities, parleyv1.Modality_MODALITY_TEXT)
		case "audio":
			g.OutputModalities = append(g.OutputModalities, parleyv1.Modality_MODALITY_AUDIO)
		default:
			return translate.Invalid(openai.Path("modalities", strconv.Itoa(i)), "must be text or audio; got %q", m)
		}
	}
	if a := w.Audio; a != nil {
		g.Speech = &parleyv1.SpeechConfig{Voice: a.Voice, AudioFormat: a.Format}
		jsonx.Keep(&req.Extensions, thisDialect, "audio", a.Unknown)
	}
	req.Generation = g
	if w.ReasoningEffort != "" {
		e, ok := openai.Effort(w.ReasoningEffort)
		if !ok {
			return translate.Invalid("reasoning_effort", "must be one of none, minimal, low, medium, high, xhigh; got %q", w.ReasoningEffort)
		}
		// A chat client that asks for reasoning reads it back as
		// reasoning_content, as thinking services of this dialect send
		// it: upstreams that show reasoning only when asked are asked.
		req.Reasoning = &parleyv1.ReasoningConfig{Effort: e}
		if e != parleyv1.ReasoningEffort_REASONING_EFFORT_NONE {
			req.Reasoning.IncludeThoughts = new(true)
		}
	}
	if w.ResponseFormat != nil {
		rf, err := decodeFormat(w.ResponseFormat)
		if err != nil {
			return err
		}
		req.ResponseFormat = rf
		jsonx.Keep(&req.Extensions, thisDialect, "response_format", w.ResponseFormat.Unknown)
		if w.ResponseFormat.JSONSchema != nil {
			jsonx.Keep(&req.Extensions, thisDialect, "response_format/json_schema", w.ResponseFormat.JSONSchema.Unknown)
		}
	}
	if so := w.StreamOptions; so != nil {
		req.StreamUsage = so.IncludeUsage
		jsonx.Keep(&req.Extensions, thisDialect, "stream_options", so.Unknown)
		if so.IncludeUsage != nil {
			markUsageRequired.Keep(&req.Extensions, jsontext.Value(strconv.FormatBool(*so.IncludeUsage)))
		} else {
			markUsageRequired.Keep(&req.Extensions, jsontext.Value("null"))
		}
	}
	if w.User != nil {
		req.EndUserId = *w.User
	}
	if w.PromptCacheKey != nil {
		req.PromptCacheKey = *w.PromptCacheKey
	}
	if err := openai.Metadata("metadata", w.Metadata); err != nil {
		return err
	}
	if w.ServiceTier != "" {
		t, ok := openai.ServiceTier(w.ServiceTier)
		if !ok {
			return translate.Invalid("service_tier", "must be one of auto, default, flex, scale, priority; got %q", w.ServiceTier)
		}
		req.ServiceTier = t
	}
	req.Store = w.Store
	return nil
}

func decodeFormat(f *responseFormat) (*parleyv1.ResponseFormat, error) {
	switch f.Type {
	case "text":
		return &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT}, nil
	case "json_object":
		return &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT}, nil
	case "json_schema":
		s := f.JSONSchema
		if s == nil || s.Name == "" {
			return nil, translate.Invalid("response_format.json_schema.name", "is required")
		}
		if len(s.Name) > 64 {
			return nil, translate.Invalid("response_format.json_schema.name", "is longer than 64 characters")
		}
		return &parleyv1.ResponseFormat{
			Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Name: s.Name,
			Description: deref(s.Description), Schema: string(s.Schema), Strict: s.Strict,
		}, nil
	}
	return nil, translate.Invalid("response_format.type", "must be text, json_object or json_schema; got %q", f.Type)
}

func (e *encoder) settings(w *Request) {
	req, g := e.req, e.req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	ext := req.GetExtensions()
	w.Temperature, w.TopP, w.Seed = g.Temperature, g.TopP, g.Seed
	w.PresencePenalty, w.FrequencyPenalty, w.LogitBias = g.PresencePenalty, g.FrequencyPenalty, g.GetLogitBias()
	w.Logprobs = g.Logprobs
	if g.MaxOutputTokens != nil {
		v := int64(*g.MaxOutputTokens)
		if e.has(ext, markMaxTokens) {
			w.MaxTokens = &v
		} else {
			w.MaxCompletionTokens = &v
		}
	}
	if g.CandidateCount != nil {
		n := int64(*g.CandidateCount)
		w.N = &n
	}
	if g.TopLogprobs != nil {
		n := int64(*g.TopLogprobs)
		w.TopLogprobs = &n
	}
	if len(g.GetStopSequences()) > 0 {
		w.Stop = &Stop{Values: g.GetStopSequences(), String: e.has(ext, markStopString)}
	}
	w.Verbosity = openai.VerbosityWord(g.GetVerbosity())
	for _, m := range g.GetOutputModalities() {
		switch m {
		case parleyv1.Modality_MODALITY_TEXT:
			w.Modalities = append(w.Modalities, "text")
		case parleyv1.Modality_MODALITY_AUDIO:
			w.Modalities = append(w.Modalities, "audio")
		default:
			e.dropped = append(e.dropped, "generation.output_modalities")
		}
	}
	if s := g.GetSpeech(); s != nil {
		if s.GetVoice() != "" {
			w.Audio = &audioParam{Voice: s.GetVoice(), Format: s.GetAudioFormat(), Unknown: e.take(ext, "audio")}
			if w.Audio.Format == "" {
				w.Audio.Format = "wav"
			}
		} else {
			e.dropped = append(e.dropped, "generation.speech")
		}
	}
	if g.TopK != nil {
		e.dropped = append(e.dropped, "generation.top_k")
	}
	if g.GetMediaResolution() != parleyv1.MediaResolution_MEDIA_RESOLUTION_UNSPECIFIED {
		e.dropped = append(e.dropped, "generation.media_resolution")
	}
	if g.EnhancedCivicAnswers != nil {
		e.dropped = append(e.dropped, "generation.enhanced_civic_answers")
	}
	if len(req.GetSafetySettings()) > 0 {
		e.dropped = append(e.dropped, "safety_settings")
	}
	if req.GetCachedContent() != "" {
		e.dropped = append(e.dropped, "cached_content")
	}
	if req.GetPreviousResponseId() != "" {
		e.dropped = append(e.dropped, "previous_response_id")
	}
	if req.GetTruncation() != parleyv1.Truncation_TRUNCATION_UNSPECIFIED && !e.same {
		e.dropped = append(e.dropped, "truncation")
	}
	if rc := req.GetReasoning(); rc != nil {
		effort := rc.GetEffort()
		switch {
		case effort != parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
		case rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
			effort = parleyv1.ReasoningEffort_REASONING_EFFORT_NONE
		case rc.BudgetTokens != nil:
			effort = translate.EffortForBudget(rc.GetBudgetTokens())
		case rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_ENABLED:
			effort = parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM
		}
		w.ReasoningEffort = openai.EffortWord(effort)
		if rc.GetSummary() != parleyv1.ReasoningSummary_REASONING_SUMMARY_UNSPECIFIED {
			e.dropped = append(e.dropped, "reasoning.summary")
		}
	}
	if rf := req.GetResponseFormat(); rf != nil {
		f := &responseFormat{Unknown: e.take(ext, "response_format")}
		switch rf.GetKind() {
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT:
			f.Type = "text"
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT:
			f.Type = "json_object"
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA:
			f.Type = "json_schema"
			name := rf.GetName()
			if name == "" {
				name = "response"
			}
			f.JSONSchema = &jsonSchema{Name: name, Strict: rf.Strict, Unknown: e.take(ext, "response_format/json_schema")}
			if rf.GetDescription() != "" {
				d := rf.GetDescription()
				f.JSONSchema.Description = &d
			}
			if rf.GetSchema() != "" {
				f.JSONSchema.Schema = jsontext.Value(rf.GetSchema())
			}
		default:
			f = nil
			e.dropped = append(e.dropped, "response_format")
		}
		w.ResponseFormat = f
	}
	if req.GetStream() {
		w.Stream = &req.Stream
		// Usage is always asked for: the gateway counts tokens whatever
		// the client wanted, and the client encoder leaves the usage chunk
		// out when the client did not ask for it.
		yes := true
		w.StreamOptions = &streamOptions{IncludeUsage: &yes, Unknown: e.take(ext, "stream_options")}
	} else if e.same && markUsageRequired.In(ext) {
		w.StreamOptions = &streamOptions{IncludeUsage: req.StreamUsage, Unknown: e.take(ext, "stream_options")}
	}
	if req.GetEndUserId() != "" {
		u := req.GetEndUserId()
		w.User = &u
	}
	if k := req.GetPromptCacheKey(); k != "" {
		w.PromptCacheKey = &k
	}
	if len(req.GetMetadata()) > 0 {
		w.Metadata = req.GetMetadata()
	}
	w.ServiceTier = openai.ServiceTierWord(req.GetServiceTier())
	if e.same {
		w.Store = req.Store
	} else if req.Store != nil {
		// The store member of this dialect keeps completions for the
		// service's own tools; a responses client's store means
		// Parley's response store, which is not the upstream's business.
		e.dropped = append(e.dropped, "store")
	}
}

func (e *encoder) take(ext *parleyv1.Extensions, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(ext, thisDialect, prefix)
}

func (e *encoder) has(ext *parleyv1.Extensions, m jsonx.Mark) bool {
	return e.same && m.In(ext)
}
