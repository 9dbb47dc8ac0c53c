package generatecontent

import (
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// appendRequest appends the request w as jsonx.Marshal writes it, without
// reflection (TestQuickRequestIsTheMarshalledRequest, FuzzQuickRequest):
// the contents and system instruction (as a reply's contents are
// written, function responses and code included), function declarations
// and the built-in tools that carry their settings as they came, the
// tool config, safety settings, generation config and cached content,
// and the members kept from a client of this dialect. ok is false for
// what it leaves to Marshal (a speech config, a search-retrieval or
// computer-use tool, a function response's media) and what Marshal
// would refuse.
func appendRequest(b []byte, w *Request) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.NonEmpty(b, `"model":`, w.Model); !ok {
		return b, false
	}
	if w.Contents != nil {
		if b, ok = jsonx.AppendList(m.Name(b, `"contents":`), *w.Contents, appendContent); !ok {
			return b, false
		}
	}
	if w.Tools != nil {
		if b, ok = jsonx.AppendList(m.Name(b, `"tools":`), w.Tools, appendTool); !ok {
			return b, false
		}
	}
	if c := w.ToolConfig; c != nil {
		var cm jsonx.Members
		b = m.Name(b, `"toolConfig":{`)
		if f := c.FunctionCallingConfig; f != nil {
			var fm jsonx.Members
			b = cm.Name(b, `"functionCallingConfig":{`)
			if b, ok = fm.NonEmpty(b, `"mode":`, f.Mode); !ok {
				return b, false
			}
			if f.AllowedFunctionNames != nil {
				if b, ok = appendStrings(fm.Name(b, `"allowedFunctionNames":`), f.AllowedFunctionNames); !ok {
					return b, false
				}
			}
			if b, ok = fm.Kept(b, f.Unknown); !ok {
				return b, false
			}
			b = append(b, '}')
		}
		if b, ok = cm.Kept(b, c.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if w.SafetySettings != nil {
		if b, ok = jsonx.AppendList(m.Name(b, `"safetySettings":`), w.SafetySettings, appendSafetySetting); !ok {
			return b, false
		}
	}
	if w.SystemInstruction != nil {
		if b, ok = appendContent(m.Name(b, `"systemInstruction":`), w.SystemInstruction); !ok {
			return b, false
		}
	}
	if w.GenerationConfig != nil {
		if b, ok = appendGenerationConfig(m.Name(b, `"generationConfig":`), w.GenerationConfig); !ok {
			return b, false
		}
	}
	if b, ok = m.NonEmpty(b, `"cachedContent":`, w.CachedContent); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, w.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

func appendString(b []byte, s *string) ([]byte, bool) { return jsonx.AppendQuote(b, *s) }

func appendStrings(b []byte, list []string) ([]byte, bool) {
	return jsonx.AppendList(b, list, appendString)
}

// appendTool appends function declarations or a built-in tool.
func appendTool(b []byte, t *Tool) (_ []byte, ok bool) {
	if t.GoogleSearchRetrieval != nil || t.ComputerUse != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if t.FunctionDeclarations != nil {
		if b, ok = jsonx.AppendList(m.Name(b, `"functionDeclarations":`), t.FunctionDeclarations, appendDeclaration); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct {
		name string
		v    []byte
	}{{`"codeExecution":`, t.CodeExecution}, {`"googleSearch":`, t.GoogleSearch}, {`"urlContext":`, t.URLContext}} {
		if b, ok = m.Raw(b, f.name, f.v); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, t.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendDeclaration appends a function's declaration.
func appendDeclaration(b []byte, d *functionDeclaration) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"name":`, d.Name); !ok {
		return b, false
	}
	if b, ok = m.NonEmpty(b, `"description":`, d.Description); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"parameters":`, d.Parameters); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"parametersJsonSchema":`, d.ParametersJSONSchema); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, d.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

func appendSafetySetting(b []byte, s *safetySetting) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"category":`, s.Category); !ok {
		return b, false
	}
	if b, ok = m.String(b, `"threshold":`, s.Threshold); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, s.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

func appendGenerationConfig(b []byte, g *generationConfig) (_ []byte, ok bool) {
	if g.SpeechConfig != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if g.StopSequences != nil {
		if b, ok = appendStrings(m.Name(b, `"stopSequences":`), g.StopSequences); !ok {
			return b, false
		}
	}
	if b, ok = m.NonEmpty(b, `"responseMimeType":`, g.ResponseMimeType); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"responseSchema":`, g.ResponseSchema); !ok {
		return b, false
	}
	if b, ok = m.Raw(b, `"responseJsonSchema":`, g.ResponseJSONSchema); !ok {
		return b, false
	}
	if g.ResponseModalities != nil {
		if b, ok = appendStrings(m.Name(b, `"responseModalities":`), g.ResponseModalities); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"candidateCount":`, g.CandidateCount)
	b = m.Int(b, `"maxOutputTokens":`, g.MaxOutputTokens)
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{`"temperature":`, g.Temperature}, {`"topP":`, g.TopP}, {`"topK":`, g.TopK}} {
		if b, ok = m.Float(b, f.name, f.v); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"seed":`, g.Seed)
	if b, ok = m.Float(b, `"presencePenalty":`, g.PresencePenalty); !ok {
		return b, false
	}
	if b, ok = m.Float(b, `"frequencyPenalty":`, g.FrequencyPenalty); !ok {
		return b, false
	}
	b = m.Bool(b, `"responseLogprobs":`, g.ResponseLogprobs)
	b = m.Int(b, `"logprobs":`, g.Logprobs)
	b = m.Bool(b, `"enableEnhancedCivicAnswers":`, g.EnableEnhancedCivicAnswers)
	if t := g.ThinkingConfig; t != nil {
		var tm jsonx.Members
		b = m.Name(b, `"thinkingConfig":{`)
		b = tm.Bool(b, `"includeThoughts":`, t.IncludeThoughts)
		b = tm.Int(b, `"thinkingBudget":`, t.ThinkingBudget)
		if b, ok = tm.NonEmpty(b, `"thinkingLevel":`, t.ThinkingLevel); !ok {
			return b, false
		}
		if b, ok = tm.Kept(b, t.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if b, ok = m.NonEmpty(b, `"mediaResolution":`, g.MediaResolution); !ok {
		return b, false
	}
	if b, ok = m.Kept(b, g.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}
