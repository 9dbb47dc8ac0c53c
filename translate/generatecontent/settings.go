package generatecontent

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Settings: generationConfig (sampling, limits, modalities, media
// resolution, speech) and the response format with its schema, in both
// directions. The schema conversion itself is in schema.go; thinkingConfig
// toward an upstream is in reasoning.go.

var modalities = map[string]parleyv1.Modality{
	"TEXT": parleyv1.Modality_MODALITY_TEXT, "IMAGE": parleyv1.Modality_MODALITY_IMAGE,
	"AUDIO": parleyv1.Modality_MODALITY_AUDIO, "VIDEO": parleyv1.Modality_MODALITY_VIDEO,
	"DOCUMENT": parleyv1.Modality_MODALITY_DOCUMENT,
}

var mediaResolutions = map[string]parleyv1.MediaResolution{
	"MEDIA_RESOLUTION_LOW":    parleyv1.MediaResolution_MEDIA_RESOLUTION_LOW,
	"MEDIA_RESOLUTION_MEDIUM": parleyv1.MediaResolution_MEDIA_RESOLUTION_MEDIUM,
	"MEDIA_RESOLUTION_HIGH":   parleyv1.MediaResolution_MEDIA_RESOLUTION_HIGH,
}

func readGenerationConfig(req *parleyv1.Request, gc *generationConfig) error {
	g := &parleyv1.GenerationConfig{
		StopSequences:        gc.StopSequences,
		Temperature:          gc.Temperature,
		TopP:                 gc.TopP,
		PresencePenalty:      gc.PresencePenalty,
		FrequencyPenalty:     gc.FrequencyPenalty,
		Seed:                 gc.Seed,
		Logprobs:             gc.ResponseLogprobs,
		EnhancedCivicAnswers: gc.EnableEnhancedCivicAnswers,
	}
	const p = "generationConfig."
	if len(gc.StopSequences) > 5 {
		return translate.Invalid(p+"stopSequences", "at most 5 stop sequences are allowed")
	}
	if t := gc.Temperature; t != nil && (*t < 0 || *t > 2) {
		return translate.Invalid(p+"temperature", "temperature must be in [0.0, 2.0]")
	}
	if gc.TopK != nil {
		g.TopK = ptr(int32(*gc.TopK))
		if float64(int32(*gc.TopK)) != *gc.TopK {
			jsonx.KeepValue(&req.Extensions, thisDialect, "generationConfig/topK", jsontext.Value(fmt.Sprint(*gc.TopK)))
		}
	}
	if gc.MaxOutputTokens != nil {
		g.MaxOutputTokens = ptr(clampInt32(*gc.MaxOutputTokens))
	}
	if gc.CandidateCount != nil {
		g.CandidateCount = ptr(clampInt32(*gc.CandidateCount))
	}
	if gc.Logprobs != nil {
		g.TopLogprobs = ptr(clampInt32(*gc.Logprobs))
	}
	for i, m := range gc.ResponseModalities {
		mod, ok := modalities[strings.ToUpper(m)]
		if !ok {
			return translate.Invalid(fmt.Sprintf("%sresponseModalities[%d]", p, i), "modality must be one of TEXT, IMAGE, AUDIO")
		}
		g.OutputModalities = append(g.OutputModalities, mod)
	}
	if gc.MediaResolution != "" {
		mr, ok := mediaResolutions[strings.ToUpper(gc.MediaResolution)]
		if !ok && !strings.EqualFold(gc.MediaResolution, "MEDIA_RESOLUTION_UNSPECIFIED") {
			return translate.Invalid(p+"mediaResolution", "unknown media resolution %q", gc.MediaResolution)
		}
		g.MediaResolution = mr
	}
	if sc := gc.SpeechConfig; sc != nil {
		g.Speech = &parleyv1.SpeechConfig{LanguageCode: sc.LanguageCode}
		if vc := sc.VoiceConfig; vc != nil && vc.PrebuiltVoiceConfig != nil {
			g.Speech.Voice = vc.PrebuiltVoiceConfig.VoiceName
		}
		if ms := sc.MultiSpeakerVoiceConfig; ms != nil {
			for _, s := range ms.SpeakerVoiceConfigs {
				sv := &parleyv1.SpeakerVoice{Speaker: s.Speaker}
				if s.VoiceConfig != nil && s.VoiceConfig.PrebuiltVoiceConfig != nil {
					sv.Voice = s.VoiceConfig.PrebuiltVoiceConfig.VoiceName
				}
				g.Speech.Speakers = append(g.Speech.Speakers, sv)
			}
		}
		if hasUnknownSpeech(sc) {
			raw, err := jsonx.MarshalOffStack(sc)
			if err != nil {
				return err
			}
			markSpeechConfig.Keep(&req.Extensions, raw)
		}
	}
	if tc := gc.ThinkingConfig; tc != nil {
		rc := &parleyv1.ReasoningConfig{IncludeThoughts: tc.IncludeThoughts}
		if b := tc.ThinkingBudget; b != nil {
			switch {
			case *b == 0:
				rc.Mode = parleyv1.ReasoningMode_REASONING_MODE_DISABLED
			case *b < 0:
				rc.Mode = parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE
			default:
				rc.Mode = parleyv1.ReasoningMode_REASONING_MODE_ENABLED
				rc.BudgetTokens = ptr(clampInt32(*b))
			}
			if *b < -1 {
				jsonx.KeepValue(&req.Extensions, thisDialect, "generationConfig/thinkingConfig/thinkingBudget", jsontext.Value(fmt.Sprint(*b)))
			}
		}
		if tc.ThinkingLevel != "" {
			e, ok := levels[strings.ToUpper(tc.ThinkingLevel)]
			if !ok && !strings.EqualFold(tc.ThinkingLevel, "THINKING_LEVEL_UNSPECIFIED") {
				return translate.Invalid(p+"thinkingConfig.thinkingLevel", "thinkingLevel must be one of MINIMAL, LOW, MEDIUM, HIGH")
			}
			rc.Effort = e
			markLevel.KeepString(&req.Extensions, tc.ThinkingLevel)
		}
		jsonx.Keep(&req.Extensions, thisDialect, "generationConfig/thinkingConfig", tc.Unknown)
		req.Reasoning = rc
	}
	if err := responseFormat(req, gc); err != nil {
		return err
	}
	jsonx.Keep(&req.Extensions, thisDialect, "generationConfig", gc.Unknown)
	req.Generation = g
	return nil
}

func hasUnknownSpeech(sc *speechConfig) bool {
	if len(sc.Unknown) > 0 {
		return true
	}
	if vc := sc.VoiceConfig; vc != nil && (len(vc.Unknown) > 0 || vc.PrebuiltVoiceConfig == nil || len(vc.PrebuiltVoiceConfig.Unknown) > 0) {
		return true
	}
	if ms := sc.MultiSpeakerVoiceConfig; ms != nil {
		if len(ms.Unknown) > 0 {
			return true
		}
		for _, s := range ms.SpeakerVoiceConfigs {
			if len(s.Unknown) > 0 || s.VoiceConfig == nil || s.VoiceConfig.PrebuiltVoiceConfig == nil || len(s.VoiceConfig.Unknown) > 0 {
				return true
			}
		}
	}
	return false
}

func responseFormat(req *parleyv1.Request, gc *generationConfig) error {
	const p = "generationConfig."
	schema := ""
	switch {
	case len(gc.ResponseJSONSchema) > 0:
		schema = string(gc.ResponseJSONSchema)
		markJSONSchema.Keep(&req.Extensions, jsontext.Value("true"))
	case len(gc.ResponseSchema) > 0:
		var s string
		var err error
		offstack.Run(func() { s, err = schemaToJSONSchema(gc.ResponseSchema) })
		if err != nil {
			return decodeErrorAt(err, p+"responseSchema")
		}
		schema = s
	}
	rf := &parleyv1.ResponseFormat{Schema: schema}
	switch gc.ResponseMimeType {
	case "":
		if schema == "" {
			return nil
		}
		rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA
		markMime.Keep(&req.Extensions, jsontext.Value(`""`))
	case "text/plain":
		rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT
	case "application/json":
		rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT
		if schema != "" {
			rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA
		}
	case "text/x.enum":
		rf.Kind = parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_ENUM
	default:
		return translate.Invalid(p+"responseMimeType", "responseMimeType must be text/plain, application/json or text/x.enum, not %q", gc.ResponseMimeType)
	}
	req.ResponseFormat = rf
	return nil
}

func (e *encoder) generationConfig() (*generationConfig, error) {
	g := e.req.GetGeneration()
	w := &generationConfig{Unknown: e.take("generationConfig")}
	if g != nil {
		if n := len(g.GetStopSequences()); n > 5 {
			return nil, translate.Unsupported(thisDialect, "generation.stop_sequences", "the content-generation style takes at most 5 stop sequences, not %d", n)
		}
		w.StopSequences = g.GetStopSequences()
		w.Temperature = g.Temperature
		w.TopP = g.TopP
		if g.TopK != nil {
			w.TopK = ptr(float64(g.GetTopK()))
		}
		if v, ok := jsonx.Value(e.req.GetExtensions(), thisDialect, "generationConfig/topK"); ok && e.same {
			_ = jsonx.Unmarshal(v, &w.TopK)
			delete(w.Unknown, "topK")
		}
		w.Seed = g.Seed
		w.PresencePenalty, w.FrequencyPenalty = g.PresencePenalty, g.FrequencyPenalty
		w.ResponseLogprobs = g.Logprobs
		w.EnableEnhancedCivicAnswers = g.EnhancedCivicAnswers
		if g.MaxOutputTokens != nil {
			w.MaxOutputTokens = ptr(int64(g.GetMaxOutputTokens()))
		}
		if g.CandidateCount != nil {
			w.CandidateCount = ptr(int64(g.GetCandidateCount()))
		}
		if g.TopLogprobs != nil {
			w.Logprobs = ptr(int64(g.GetTopLogprobs()))
		}
		for _, m := range g.GetOutputModalities() {
			w.ResponseModalities = append(w.ResponseModalities, strings.TrimPrefix(m.String(), "MODALITY_"))
		}
		if g.GetMediaResolution() != parleyv1.MediaResolution_MEDIA_RESOLUTION_UNSPECIFIED {
			w.MediaResolution = g.GetMediaResolution().String()
		}
		w.SpeechConfig = e.speech(g.GetSpeech())
	}
	if err := e.responseFormat(w); err != nil {
		return nil, err
	}
	w.ThinkingConfig = e.thinking()
	if g == nil && isZeroGeneration(w) {
		return nil, nil
	}
	return w, nil
}

func isZeroGeneration(w *generationConfig) bool {
	b, err := jsonx.EncodeOffStack(w, appendGenerationConfig)
	return err == nil && string(b) == "{}"
}

func (e *encoder) speech(s *parleyv1.SpeechConfig) *speechConfig {
	if v, ok := markSpeechConfig.Value(e.req.GetExtensions()); ok && e.same {
		var raw speechConfig
		if jsonx.Unmarshal(v, &raw) == nil {
			return &raw
		}
	}
	if s == nil {
		return nil
	}
	out := &speechConfig{LanguageCode: s.GetLanguageCode()}
	if s.GetVoice() != "" {
		out.VoiceConfig = &voiceConfig{PrebuiltVoiceConfig: &prebuiltVoiceConfig{VoiceName: s.GetVoice()}}
	}
	if len(s.GetSpeakers()) > 0 {
		ms := &multiSpeakerVoiceConfig{}
		for _, sp := range s.GetSpeakers() {
			ms.SpeakerVoiceConfigs = append(ms.SpeakerVoiceConfigs, speakerVoiceConfig{Speaker: sp.GetSpeaker(), VoiceConfig: &voiceConfig{PrebuiltVoiceConfig: &prebuiltVoiceConfig{VoiceName: sp.GetVoice()}}})
		}
		out.MultiSpeakerVoiceConfig = ms
	}
	return out
}

func (e *encoder) responseFormat(w *generationConfig) error {
	rf := e.req.GetResponseFormat()
	if rf == nil {
		return nil
	}
	switch rf.GetKind() {
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT:
		w.ResponseMimeType = "text/plain"
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT:
		w.ResponseMimeType = "application/json"
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA:
		w.ResponseMimeType = "application/json"
		if s, ok := markMime.String(e.req.GetExtensions()); ok && e.same {
			w.ResponseMimeType = s
		}
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_ENUM:
		w.ResponseMimeType = "text/x.enum"
	}
	if rf.GetSchema() == "" {
		return nil
	}
	if e.same && markJSONSchema.In(e.req.GetExtensions()) {
		w.ResponseJSONSchema = jsontext.Value(rf.GetSchema())
		return nil
	}
	if e.same || rf.GetKind() != parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA {
		// An enum answer's schema is the Schema form's alone.
		s, err := jsonSchemaToSchema(rf.GetSchema())
		if err != nil {
			return translate.Unsupported(thisDialect, "response_format.schema", "%v", err)
		}
		w.ResponseSchema = s
		return nil
	}
	form, err := formOf(rf.GetSchema())
	if err != nil {
		return translate.Unsupported(thisDialect, "response_format.schema", "%v", err)
	}
	w.ResponseSchema, w.ResponseJSONSchema = form.schema, form.jsonSchema
	e.dropSchema("response_format.schema", form.dropped)
	return nil
}
