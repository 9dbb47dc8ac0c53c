package chatcompletions

import (
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// appendRequest appends the request w as jsonx.Marshal writes it, without
// reflection (TestQuickRequestIsTheMarshalledRequest): turns of text and
// images with their tool calls, function tools, the tool choice, the
// response format and the common settings. ok is false for what it leaves
// to jsonx.Marshal: audio and file parts, logit bias, audio output, web
// search options, and what Marshal would refuse. The members of maps
// (metadata, kept members) go in Marshal's sorted order.
func appendRequest(b []byte, w *Request) (_ []byte, ok bool) {
	if w.LogitBias != nil || w.Audio != nil || w.WebSearchOptions != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"model":`, w.Model); !ok {
		return b, false
	}
	if b, ok = jsonx.List(m.Name(b, `"messages":[`), w.Messages, appendTurn); !ok {
		return b, false
	}
	if w.Tools != nil {
		if b, ok = jsonx.List(m.Name(b, `"tools":[`), w.Tools, appendToolDef); !ok {
			return b, false
		}
	}
	if tc := w.ToolChoice; tc != nil {
		if b, ok = appendToolChoice(m.Name(b, `"tool_choice":`), tc); !ok {
			return b, false
		}
	}
	b = m.Bool(b, `"parallel_tool_calls":`, w.ParallelToolCalls)
	if f := w.ResponseFormat; f != nil {
		if b, ok = appendResponseFormat(m.Name(b, `"response_format":`), f); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"max_tokens":`, w.MaxTokens)
	b = m.Int(b, `"max_completion_tokens":`, w.MaxCompletionTokens)
	b = m.Int(b, `"n":`, w.N)
	if st := w.Stop; st != nil {
		b = m.Name(b, `"stop":`)
		if st.String && len(st.Values) == 1 {
			if b, ok = jsonx.AppendQuote(b, st.Values[0]); !ok {
				return b, false
			}
		} else if b, ok = appendStringList(b, st.Values); !ok {
			return b, false
		}
	}
	b = m.Int(b, `"seed":`, w.Seed)
	b = m.Bool(b, `"logprobs":`, w.Logprobs)
	b = m.Int(b, `"top_logprobs":`, w.TopLogprobs)
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{`"presence_penalty":`, w.PresencePenalty}, {`"frequency_penalty":`, w.FrequencyPenalty}, {`"temperature":`, w.Temperature}, {`"top_p":`, w.TopP}} {
		if b, ok = m.Float(b, f.name, f.v); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct{ name, v string }{{`"reasoning_effort":`, w.ReasoningEffort}, {`"verbosity":`, w.Verbosity}} {
		if f.v != "" {
			if b, ok = m.String(b, f.name, f.v); !ok {
				return b, false
			}
		}
	}
	if w.Modalities != nil {
		if b, ok = appendStringList(m.Name(b, `"modalities":`), w.Modalities); !ok {
			return b, false
		}
	}
	b = m.Bool(b, `"stream":`, w.Stream)
	if o := w.StreamOptions; o != nil {
		var om jsonx.Members
		b = om.Bool(append(m.Name(b, `"stream_options":`), '{'), `"include_usage":`, o.IncludeUsage)
		if b, ok = om.Kept(b, o.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	for _, f := range [...]struct {
		name string
		v    *string
	}{{`"user":`, w.User}, {`"prompt_cache_key":`, w.PromptCacheKey}} {
		if f.v != nil {
			if b, ok = m.String(b, f.name, *f.v); !ok {
				return b, false
			}
		}
	}
	if w.Metadata != nil {
		if b, ok = jsonx.AppendStringMap(m.Name(b, `"metadata":`), w.Metadata); !ok {
			return b, false
		}
	}
	if w.ServiceTier != "" {
		if b, ok = m.String(b, `"service_tier":`, w.ServiceTier); !ok {
			return b, false
		}
	}
	b = m.Bool(b, `"store":`, w.Store)
	if b, ok = m.Kept(b, w.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendTurn appends one message of a request.
func appendTurn(b []byte, t *message) (_ []byte, ok bool) {
	if len(t.Annotations) > 0 {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"role":`, t.Role); !ok {
		return b, false
	}
	if c := t.Content; c != nil {
		b = m.Name(b, `"content":`)
		switch {
		case c.Null:
			b = append(b, "null"...)
		case c.String:
			if b, ok = jsonx.AppendQuote(b, c.Text); !ok {
				return b, false
			}
		default:
			if b, ok = jsonx.List(append(b, '['), c.Parts, appendPart); !ok {
				return b, false
			}
		}
	}
	if t.Name != "" {
		if b, ok = m.String(b, `"name":`, t.Name); !ok {
			return b, false
		}
	}
	if t.ToolCalls != nil {
		if b, ok = jsonx.List(m.Name(b, `"tool_calls":[`), t.ToolCalls, appendWholeToolCall); !ok {
			return b, false
		}
	}
	if t.ToolCallID != "" {
		if b, ok = m.String(b, `"tool_call_id":`, t.ToolCallID); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct {
		name string
		v    *string
	}{{`"refusal":`, t.Refusal}, {`"reasoning_content":`, t.ReasoningContent}} {
		if f.v != nil {
			if b, ok = m.String(b, f.name, *f.v); !ok {
				return b, false
			}
		}
	}
	if t.Annotations != nil {
		b = append(m.Name(b, `"annotations":`), "[]"...)
	}
	if b, ok = m.Kept(b, t.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendPart appends a content part of text, a refusal or an image.
func appendPart(b []byte, p *ContentPart) (_ []byte, ok bool) {
	if p.InputAudio != nil || p.File != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, p.Type); !ok {
		return b, false
	}
	if p.Text != nil {
		if b, ok = m.String(b, `"text":`, *p.Text); !ok {
			return b, false
		}
	}
	if u := p.ImageURL; u != nil {
		var um jsonx.Members
		if b, ok = um.String(append(m.Name(b, `"image_url":`), '{'), `"url":`, u.URL); !ok {
			return b, false
		}
		if u.Detail != "" {
			if b, ok = um.String(b, `"detail":`, u.Detail); !ok {
				return b, false
			}
		}
		if b, ok = um.Kept(b, u.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if p.Refusal != nil {
		if b, ok = m.String(b, `"refusal":`, *p.Refusal); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, p.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendToolDef appends a tool.
func appendToolDef(b []byte, t *tool) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, t.Type); !ok {
		return b, false
	}
	if f := t.Function; f != nil {
		var fm jsonx.Members
		if b, ok = fm.String(append(m.Name(b, `"function":`), '{'), `"name":`, f.Name); !ok {
			return b, false
		}
		if f.Description != nil {
			if b, ok = fm.String(b, `"description":`, *f.Description); !ok {
				return b, false
			}
		}
		if f.Parameters != nil {
			if b, ok = jsonx.AppendRaw(fm.Name(b, `"parameters":`), f.Parameters); !ok {
				return b, false
			}
		}
		b = fm.Bool(b, `"strict":`, f.Strict)
		if b, ok = fm.Kept(b, f.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if b, ok = m.Kept(b, t.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendToolChoice appends a tool choice: a mode, or an object naming a
// function.
func appendToolChoice(b []byte, tc *ToolChoice) (_ []byte, ok bool) {
	if tc.Mode != "" {
		return jsonx.AppendQuote(b, tc.Mode)
	}
	if tc.AllowedTools != nil {
		return b, false
	}
	b = append(b, '{')
	var m jsonx.Members
	if tc.Type != "" {
		if b, ok = m.String(b, `"type":`, tc.Type); !ok {
			return b, false
		}
	}
	if f := tc.Function; f != nil {
		var fm jsonx.Members
		if b, ok = fm.String(append(m.Name(b, `"function":`), '{'), `"name":`, f.Name); !ok {
			return b, false
		}
		if b, ok = fm.Kept(b, f.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if b, ok = m.Kept(b, tc.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendResponseFormat appends a response format.
func appendResponseFormat(b []byte, f *responseFormat) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"type":`, f.Type); !ok {
		return b, false
	}
	if js := f.JSONSchema; js != nil {
		var jm jsonx.Members
		if b, ok = jm.String(append(m.Name(b, `"json_schema":`), '{'), `"name":`, js.Name); !ok {
			return b, false
		}
		if js.Description != nil {
			if b, ok = jm.String(b, `"description":`, *js.Description); !ok {
				return b, false
			}
		}
		if js.Schema != nil {
			if b, ok = jsonx.AppendRaw(jm.Name(b, `"schema":`), js.Schema); !ok {
				return b, false
			}
		}
		b = jm.Bool(b, `"strict":`, js.Strict)
		if b, ok = jm.Kept(b, js.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if b, ok = m.Kept(b, f.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendStringList appends a list of strings (an empty one for nil).
func appendStringList(b []byte, list []string) (_ []byte, ok bool) {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = jsonx.AppendQuote(b, s); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}
