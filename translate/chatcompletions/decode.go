package chatcompletions

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// D is this package's dialect.
const D = parleyv1.Dialect_DIALECT_CHAT_COMPLETIONS

// Extension keys that are not wire members: they record how the client
// spelled something, so that the same spelling goes back out.
const (
	extString        = "@string"         // the content was a string
	extNull          = "@null"           // the content was null
	extMaxTokens     = "@max_tokens"     // the limit was spelled max_tokens
	extStopString    = "@stop_string"    // stop was a string
	extTool          = "@tool"           // a tool with no canonical home, raw
	extWebSearch     = "@web_search"     // web search came as web_search_options
	extCallType      = "@type"           // a tool call type other than function
	extRefusalPart   = "@refusal_part"   // a refusal given as a content part
	extUsageRequired = "@include_usage"  // stream_options.include_usage as sent
	extAllowedMode   = "@allowed_tools"  // tool_choice was an allowed_tools object
	extRefusalNull   = "@refusal_null"   // the reply's refusal member was null
	extFinishWord    = "@finish_reason"  // the upstream's own finish word
	extNoAnnotations = "@no_annotations" // the reply message had no annotations member
)

// Client is the chat-completions dialect as clients speak it.
type Client struct{}

var _ translate.Client = Client{}

// Dialect implements translate.Client.
func (Client) Dialect() parleyv1.Dialect { return D }

// APIKey implements translate.Client: clients send Authorization: Bearer.
func (Client) APIKey(in *translate.Incoming) string { return translate.BearerToken(in.Header) }

// DecodeRequest implements translate.Client.
func (Client) DecodeRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if err := jsonx.Unmarshal(in.Body, &w); err != nil {
		return nil, openai.InputError(err)
	}
	return decodeRequest(&w)
}

func decodeRequest(w *Request) (*parleyv1.Request, error) {
	if w.Model == "" {
		return nil, translate.Invalid("model", "is required")
	}
	if len(w.Messages) == 0 {
		return nil, translate.Invalid("messages", "must hold at least one message")
	}
	req := &parleyv1.Request{Model: w.Model, Stream: w.Stream != nil && *w.Stream, Metadata: w.Metadata}
	jsonx.Keep(&req.Extensions, D, "", w.Unknown)
	if req.Extensions == nil {
		req.Extensions = &parleyv1.Extensions{Dialect: D}
	}
	names := map[string]string{}
	for i := range w.Messages {
		m, err := decodeMessage(&w.Messages[i], i, names)
		if err != nil {
			return nil, err
		}
		req.Messages = append(req.Messages, m)
	}
	if err := decodeTools(req, w); err != nil {
		return nil, err
	}
	if err := decodeSettings(req, w); err != nil {
		return nil, err
	}
	return req, nil
}

var roles = map[string]parleyv1.Role{
	"system":    parleyv1.Role_ROLE_SYSTEM,
	"developer": parleyv1.Role_ROLE_DEVELOPER,
	"user":      parleyv1.Role_ROLE_USER,
	"assistant": parleyv1.Role_ROLE_ASSISTANT,
	"tool":      parleyv1.Role_ROLE_TOOL,
}

func decodeMessage(wm *Message, i int, names map[string]string) (*parleyv1.Message, error) {
	field := openai.Path("messages", strconv.Itoa(i))
	role, ok := roles[wm.Role]
	if !ok {
		if wm.Role == "function" {
			return nil, translate.Invalid(field+".role", "the function role is deprecated; send tool results with role tool and tool_call_id")
		}
		return nil, translate.Invalid(field+".role", "must be one of system, developer, user, assistant, tool; got %q", wm.Role)
	}
	m := &parleyv1.Message{Role: role, Name: wm.Name}
	jsonx.Keep(&m.Extensions, D, "", wm.Unknown)
	switch role {
	case parleyv1.Role_ROLE_TOOL:
		if wm.ToolCallID == "" {
			return nil, translate.Invalid(field+".tool_call_id", "is required in a tool message")
		}
		content, err := decodeContent(m, wm.Content, field, false)
		if err != nil {
			return nil, err
		}
		m.Parts = []*parleyv1.Part{{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{
			CallId: wm.ToolCallID, Name: names[wm.ToolCallID], Content: content,
		}}}}
		return m, nil
	case parleyv1.Role_ROLE_ASSISTANT:
		if wm.ReasoningContent != nil {
			m.Parts = append(m.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: *wm.ReasoningContent}}})
		}
		content, err := decodeContent(m, wm.Content, field, true)
		if err != nil {
			return nil, err
		}
		m.Parts = append(m.Parts, content...)
		if wm.Refusal != nil {
			m.Parts = append(m.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: *wm.Refusal}}})
		}
		for j := range wm.ToolCalls {
			tc := &wm.ToolCalls[j]
			f := field + ".tool_calls." + "[" + strconv.Itoa(j) + "]"
			if tc.Function.Name == "" {
				return nil, translate.Invalid(f+".function.name", "is required")
			}
			p := translate.CallPart(tc.ID, tc.Function.Name, tc.Function.Arguments)
			if tc.Type != "" && tc.Type != "function" {
				jsonx.KeepValue(&p.Extensions, D, extCallType, quote(tc.Type))
			}
			jsonx.Keep(&p.Extensions, D, "", tc.Unknown)
			jsonx.Keep(&p.Extensions, D, "function", tc.Function.Unknown)
			names[tc.ID] = tc.Function.Name
			m.Parts = append(m.Parts, p)
		}
		return m, nil
	}
	if wm.Content == nil {
		return nil, translate.Invalid(field+".content", "is required")
	}
	content, err := decodeContent(m, wm.Content, field, false)
	if err != nil {
		return nil, err
	}
	m.Parts = content
	return m, nil
}

// decodeContent reads a message's content; the form (string, parts or
// null) is noted on the message.
func decodeContent(m *parleyv1.Message, c *Content, field string, assistant bool) ([]*parleyv1.Part, error) {
	switch {
	case c == nil:
		return nil, nil
	case c.Null:
		jsonx.KeepValue(&m.Extensions, D, extNull, jsontext.Value("true"))
		return nil, nil
	case c.String:
		jsonx.KeepValue(&m.Extensions, D, extString, jsontext.Value("true"))
		return []*parleyv1.Part{translate.TextPart(c.Text)}, nil
	}
	parts := make([]*parleyv1.Part, 0, len(c.Parts))
	for j := range c.Parts {
		p, err := decodePart(&c.Parts[j], field+".content.["+strconv.Itoa(j)+"]", assistant)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func decodePart(w *ContentPart, field string, assistant bool) (*parleyv1.Part, error) {
	var p *parleyv1.Part
	switch w.Type {
	case "text":
		if w.Text == nil {
			return nil, translate.Invalid(field+".text", "is required in a text part")
		}
		p = translate.TextPart(*w.Text)
	case "refusal":
		if !assistant || w.Refusal == nil {
			return nil, translate.Invalid(field, "a refusal part belongs to an assistant message and needs refusal")
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: *w.Refusal}}}
		jsonx.KeepValue(&p.Extensions, D, extRefusalPart, jsontext.Value("true"))
	case "image_url":
		if w.ImageURL == nil || w.ImageURL.URL == "" {
			return nil, translate.Invalid(field+".image_url.url", "is required in an image_url part")
		}
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE, Detail: openai.Detail(w.ImageURL.Detail)}
		if mime, data, ok := openai.ParseDataURL(w.ImageURL.URL); ok {
			media.MimeType, media.Source = mime, &parleyv1.Media_Data{Data: data}
		} else {
			media.Source = &parleyv1.Media_Uri{Uri: w.ImageURL.URL}
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
		jsonx.Keep(&p.Extensions, D, "image_url", w.ImageURL.Unknown)
	case "input_audio":
		if w.InputAudio == nil || w.InputAudio.Data == "" {
			return nil, translate.Invalid(field+".input_audio.data", "is required in an input_audio part")
		}
		data, err := base64Std(w.InputAudio.Data)
		if err != nil {
			return nil, translate.Invalid(field+".input_audio.data", "is not base64: %v", err)
		}
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_AUDIO, Format: w.InputAudio.Format, MimeType: audioMIME(w.InputAudio.Format), Source: &parleyv1.Media_Data{Data: data}}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
		jsonx.Keep(&p.Extensions, D, "input_audio", w.InputAudio.Unknown)
	case "file":
		f := w.File
		if f == nil || f.FileData == "" && f.FileID == "" {
			return nil, translate.Invalid(field+".file", "needs file_data or file_id")
		}
		media := &parleyv1.Media{Filename: f.Filename, Kind: parleyv1.MediaKind_MEDIA_KIND_FILE}
		switch {
		case f.FileID != "":
			media.Source = &parleyv1.Media_FileId{FileId: f.FileID}
		default:
			mime, data, ok := openai.ParseDataURL(f.FileData)
			if !ok {
				return nil, translate.Invalid(field+".file.file_data", "must be a base64 data URL (data:application/pdf;base64,...)")
			}
			media.MimeType, media.Kind, media.Source = mime, openai.KindOfMIME(mime), &parleyv1.Media_Data{Data: data}
		}
		p = &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: media}}
		jsonx.Keep(&p.Extensions, D, "file", f.Unknown)
	default:
		return nil, translate.Invalid(field+".type", "unknown content part type %q", w.Type)
	}
	jsonx.Keep(&p.Extensions, D, "", w.Unknown)
	return p, nil
}

func decodeTools(req *parleyv1.Request, w *Request) error {
	for i := range w.Tools {
		wt := &w.Tools[i]
		field := openai.Path("tools", strconv.Itoa(i))
		t := &parleyv1.Tool{}
		switch wt.Type {
		case "function":
			f := wt.Function
			if f == nil || f.Name == "" {
				return translate.Invalid(field+".function.name", "is required")
			}
			ft := &parleyv1.FunctionTool{Name: f.Name, Description: deref(f.Description), Parameters: string(f.Parameters), Strict: f.Strict}
			t.Kind = &parleyv1.Tool_Function{Function: ft}
			jsonx.Keep(&t.Extensions, D, "function", f.Unknown)
			if f.Description != nil && *f.Description == "" {
				jsonx.KeepValue(&t.Extensions, D, "function/description", jsontext.Value(`""`))
			}
			jsonx.Keep(&t.Extensions, D, "", wt.Unknown)
		default:
			raw, err := jsonx.Marshal(wt)
			if err != nil {
				return translate.Invalid(field, "%v", err)
			}
			jsonx.KeepValue(&t.Extensions, D, extTool, raw)
		}
		req.Tools = append(req.Tools, t)
	}
	if ws := w.WebSearchOptions; ws != nil {
		t := &parleyv1.WebSearchTool{}
		switch ws.SearchContextSize {
		case "low":
			t.ContextSize = parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_LOW
		case "medium":
			t.ContextSize = parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_MEDIUM
		case "high":
			t.ContextSize = parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_HIGH
		case "":
		default:
			return translate.Invalid("web_search_options.search_context_size", "must be low, medium or high")
		}
		tool := &parleyv1.Tool{Kind: &parleyv1.Tool_WebSearch{WebSearch: t}}
		if loc := ws.UserLocation; loc != nil {
			if a := loc.Approximate; a != nil {
				t.UserLocation = &parleyv1.UserLocation{City: a.City, Country: a.Country, Region: a.Region, Timezone: a.Timezone}
				jsonx.Keep(&tool.Extensions, D, "user_location/approximate", a.Unknown)
			}
			jsonx.Keep(&tool.Extensions, D, "user_location", loc.Unknown)
		}
		jsonx.Keep(&tool.Extensions, D, "", ws.Unknown)
		jsonx.KeepValue(&tool.Extensions, D, extWebSearch, jsontext.Value("true"))
		req.Tools = append(req.Tools, tool)
	}
	if tc := w.ToolChoice; tc != nil {
		c := &parleyv1.ToolChoice{}
		switch {
		case tc.Mode == "auto":
			c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
		case tc.Mode == "none":
			c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE
		case tc.Mode == "required":
			c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED
		case tc.Mode != "":
			return translate.Invalid("tool_choice", "must be none, auto, required or an object; got %q", tc.Mode)
		case tc.Type == "function":
			if tc.Function == nil || tc.Function.Name == "" {
				return translate.Invalid("tool_choice.function.name", "is required")
			}
			c.Mode, c.Name = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, tc.Function.Name
		case tc.Type == "allowed_tools":
			at := tc.AllowedTools
			if at == nil {
				return translate.Invalid("tool_choice.allowed_tools", "is required")
			}
			switch at.Mode {
			case "auto":
				c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
			case "required":
				c.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED
			default:
				return translate.Invalid("tool_choice.allowed_tools.mode", "must be auto or required")
			}
			for _, t := range at.Tools {
				if t.Function != nil {
					c.AllowedNames = append(c.AllowedNames, t.Function.Name)
				}
			}
			jsonx.KeepValue(&req.Extensions, D, extAllowedMode, jsontext.Value("true"))
		default:
			return translate.Invalid("tool_choice.type", "must be function or allowed_tools; got %q", tc.Type)
		}
		req.ToolChoice = c
	}
	if w.ParallelToolCalls != nil {
		if req.ToolChoice == nil {
			req.ToolChoice = &parleyv1.ToolChoice{}
		}
		req.ToolChoice.ParallelCalls = w.ParallelToolCalls
	}
	return nil
}

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
			jsonx.KeepValue(&req.Extensions, D, "max_tokens", raw)
		}
	case w.MaxTokens != nil:
		g.MaxOutputTokens = int32p(*w.MaxTokens)
		jsonx.KeepValue(&req.Extensions, D, extMaxTokens, jsontext.Value("true"))
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
			jsonx.KeepValue(&req.Extensions, D, extStopString, jsontext.Value("true"))
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
		jsonx.Keep(&req.Extensions, D, "audio", a.Unknown)
	}
	req.Generation = g
	if w.ReasoningEffort != "" {
		e, ok := openai.Effort(w.ReasoningEffort)
		if !ok {
			return translate.Invalid("reasoning_effort", "must be one of none, minimal, low, medium, high, xhigh; got %q", w.ReasoningEffort)
		}
		req.Reasoning = &parleyv1.ReasoningConfig{Effort: e}
	}
	if w.ResponseFormat != nil {
		rf, err := decodeFormat(w.ResponseFormat)
		if err != nil {
			return err
		}
		req.ResponseFormat = rf
		jsonx.Keep(&req.Extensions, D, "response_format", w.ResponseFormat.Unknown)
		if w.ResponseFormat.JSONSchema != nil {
			jsonx.Keep(&req.Extensions, D, "response_format/json_schema", w.ResponseFormat.JSONSchema.Unknown)
		}
	}
	if so := w.StreamOptions; so != nil {
		req.StreamUsage = so.IncludeUsage
		jsonx.Keep(&req.Extensions, D, "stream_options", so.Unknown)
		if so.IncludeUsage != nil {
			jsonx.KeepValue(&req.Extensions, D, extUsageRequired, jsontext.Value(strconv.FormatBool(*so.IncludeUsage)))
		} else {
			jsonx.KeepValue(&req.Extensions, D, extUsageRequired, jsontext.Value("null"))
		}
	}
	if w.User != nil {
		req.EndUserId = *w.User
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

func decodeFormat(f *ResponseFormat) (*parleyv1.ResponseFormat, error) {
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

func int32p(v int64) *int32 {
	if v > 1<<31-1 {
		v = 1<<31 - 1
	}
	x := int32(v)
	return &x
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func quote(s string) jsontext.Value {
	b, _ := jsonx.Marshal(s)
	return b
}

var audioMIMEs = map[string]string{"wav": "audio/wav", "mp3": "audio/mpeg"}

func audioMIME(format string) string {
	if m, ok := audioMIMEs[format]; ok {
		return m
	}
	return ""
}
