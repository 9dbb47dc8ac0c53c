package chatcompletions

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Path is where requests of this dialect go, below the upstream's base URL.
const Path = "/v1/chat/completions"

// Upstream is the chat-completions dialect as services speak it.
type Upstream struct{}

var _ translate.Upstream = Upstream{}

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return D }

type encoder struct {
	req  *parleyv1.Request
	t    translate.Target
	same bool // the client spoke this dialect
	// dropped lists canonical fields the request asked for that this
	// dialect cannot carry.
	dropped []string
}

// EncodeRequest implements translate.Upstream.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := &encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == D}
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	body, err := jsonx.Marshal(w)
	if err != nil {
		return nil, err
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if t.APIKey != "" {
		h.Set("Authorization", "Bearer "+t.APIKey)
	}
	if req.GetStream() {
		h.Set("Accept", "text/event-stream")
	}
	dropped := append(translate.CacheHintPaths(req), e.dropped...)
	return &translate.Outgoing{Method: http.MethodPost, Path: Path, Header: h, Body: body, Stream: req.GetStream(), Dropped: dropped}, nil
}

func (e *encoder) take(ext *parleyv1.Extensions, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(ext, D, prefix)
}

func (e *encoder) has(ext *parleyv1.Extensions, name string) bool {
	return e.same && jsonx.Has(ext, D, name)
}

func (e *encoder) request() (*Request, error) {
	req := e.req
	w := &Request{Model: e.t.Model, Unknown: e.take(req.GetExtensions(), "")}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	if len(req.GetInstructions()) > 0 {
		w.Messages = append(w.Messages, Message{Role: "system", Content: &Content{String: true, Text: joinText(req.GetInstructions())}})
	}
	msgs := req.GetMessages()
	if !e.same {
		msgs = dropEmptyText(msgs)
	}
	for i, m := range msgs {
		out, err := e.message(m, "messages["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		w.Messages = append(w.Messages, out...)
	}
	if err := e.tools(w); err != nil {
		return nil, err
	}
	e.settings(w)
	return w, nil
}

// dropEmptyText leaves out empty text parts, and turns left empty, of a
// client of another dialect.
func dropEmptyText(msgs []*parleyv1.Message) []*parleyv1.Message {
	out := make([]*parleyv1.Message, 0, len(msgs))
	for _, m := range msgs {
		keep := m.GetParts()[:0:0]
		for _, p := range m.GetParts() {
			if t := p.GetText(); t != nil && t.GetText() == "" {
				continue
			}
			keep = append(keep, p)
		}
		if len(keep) == 0 {
			continue
		}
		if len(keep) != len(m.GetParts()) {
			m = &parleyv1.Message{Role: m.GetRole(), Parts: keep, Name: m.GetName(), Extensions: m.GetExtensions()}
		}
		out = append(out, m)
	}
	return out
}

func joinText(parts []*parleyv1.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if t := p.GetText(); t != nil {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(t.GetText())
		}
	}
	return b.String()
}

var roleWords = map[parleyv1.Role]string{
	parleyv1.Role_ROLE_SYSTEM:    "system",
	parleyv1.Role_ROLE_DEVELOPER: "developer",
	parleyv1.Role_ROLE_USER:      "user",
	parleyv1.Role_ROLE_ASSISTANT: "assistant",
	parleyv1.Role_ROLE_TOOL:      "tool",
}

// message renders one canonical turn as one or more chat messages: tool
// results become tool messages (placed first, right after the assistant
// turn that called), the rest of the turn one message.
func (e *encoder) message(m *parleyv1.Message, field string) ([]Message, error) {
	role, ok := roleWords[m.GetRole()]
	if !ok {
		role = "user"
	}
	var out []Message
	main := Message{Role: role, Name: m.GetName(), Unknown: e.take(m.GetExtensions(), "")}
	var parts []ContentPart
	var reasoning, refusal strings.Builder
	hasReasoning, hasRefusal := false, false
	for j, p := range m.GetParts() {
		pf := field + ".parts[" + strconv.Itoa(j) + "]"
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Text:
			parts = append(parts, ContentPart{Type: "text", Text: &k.Text.Text, Unknown: e.take(p.GetExtensions(), "")})
		case *parleyv1.Part_Media:
			cp, err := e.media(k.Media, p, pf)
			if err != nil {
				return nil, err
			}
			parts = append(parts, cp)
		case *parleyv1.Part_ToolCall:
			tc := ToolCall{ID: k.ToolCall.GetId(), Type: "function", Function: Function{Name: k.ToolCall.GetName(), Arguments: k.ToolCall.GetArguments()},
				Unknown: e.take(p.GetExtensions(), "")}
			tc.Function.Unknown = e.take(p.GetExtensions(), "function")
			if v, ok := jsonx.Value(p.GetExtensions(), D, extCallType); ok && e.same {
				_ = jsonx.Unmarshal(v, &tc.Type)
			}
			if tc.Function.Arguments == "" {
				tc.Function.Arguments = "{}"
			}
			main.ToolCalls = append(main.ToolCalls, tc)
		case *parleyv1.Part_ToolResult:
			tm, err := e.toolResult(k.ToolResult, pf)
			if err != nil {
				return nil, err
			}
			if m.GetRole() == parleyv1.Role_ROLE_TOOL && e.same {
				tm.Unknown = main.Unknown
				tm.Content.String = jsonx.Has(m.GetExtensions(), D, extString)
			}
			out = append(out, tm)
		case *parleyv1.Part_Reasoning:
			// Reasoning text goes back only to a service of this dialect
			// from a client of this dialect: the client put it there.
			// Services that never sent it reject it.
			if e.same {
				hasReasoning = true
				reasoning.WriteString(k.Reasoning.GetText())
			}
		case *parleyv1.Part_Refusal:
			if e.has(p.GetExtensions(), extRefusalPart) {
				parts = append(parts, ContentPart{Type: "refusal", Refusal: &k.Refusal.Text})
				continue
			}
			hasRefusal = true
			refusal.WriteString(k.Refusal.GetText())
		case *parleyv1.Part_ExecutableCode:
			text := "```python\n" + k.ExecutableCode.GetCode() + "\n```"
			parts = append(parts, ContentPart{Type: "text", Text: &text})
		case *parleyv1.Part_CodeExecutionResult:
			text := k.CodeExecutionResult.GetOutput()
			parts = append(parts, ContentPart{Type: "text", Text: &text})
		case *parleyv1.Part_HostedToolCall, *parleyv1.Part_HostedToolResult:
			// Provider-run tool steps only the provider that ran them can
			// read again.
		case *parleyv1.Part_ItemReference:
			return nil, translate.Unsupported(D, pf+".item_reference", "an item reference needs the stored response it points to")
		}
	}
	if m.GetRole() == parleyv1.Role_ROLE_TOOL {
		return out, nil
	}
	if hasReasoning {
		s := reasoning.String()
		main.ReasoningContent = &s
	}
	if hasRefusal {
		s := refusal.String()
		main.Refusal = &s
	}
	main.Content = e.content(m, parts, role)
	if main.Content == nil && len(main.ToolCalls) == 0 && main.Refusal == nil && main.ReasoningContent == nil {
		if len(out) > 0 {
			return out, nil
		}
		main.Content = &Content{String: true}
	}
	return append(out, main), nil
}

// content picks the content's form: as the client of this dialect sent
// it; else a string when the turn is text alone (the form every
// compatible server takes), else parts.
func (e *encoder) content(m *parleyv1.Message, parts []ContentPart, role string) *Content {
	ext := m.GetExtensions()
	if e.has(ext, extNull) {
		return &Content{Null: true}
	}
	if len(parts) == 0 {
		return nil
	}
	allText := true
	for _, p := range parts {
		if p.Type != "text" || len(p.Unknown) > 0 {
			allText = false
		}
	}
	switch {
	case e.same && e.has(ext, extString) && len(parts) == 1 && allText:
		return &Content{String: true, Text: *parts[0].Text}
	case e.same:
		return &Content{Parts: parts}
	case allText && (role != "user" || len(parts) == 1):
		var b strings.Builder
		for i, p := range parts {
			if i > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(*p.Text)
		}
		return &Content{String: true, Text: b.String()}
	}
	return &Content{Parts: parts}
}

func (e *encoder) toolResult(r *parleyv1.ToolResult, field string) (Message, error) {
	tm := Message{Role: "tool", ToolCallID: r.GetCallId()}
	var parts []ContentPart
	for _, p := range r.GetContent() {
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Text:
			parts = append(parts, ContentPart{Type: "text", Text: &k.Text.Text, Unknown: e.take(p.GetExtensions(), "")})
		case *parleyv1.Part_Media:
			// Tool messages take text alone.
			text := "[" + mediaNoun(k.Media) + " omitted: a tool message of this dialect holds text only]"
			parts = append(parts, ContentPart{Type: "text", Text: &text})
		}
	}
	if r.GetIsError() && !e.same {
		if len(parts) > 0 && parts[0].Text != nil {
			s := "Error: " + *parts[0].Text
			parts[0].Text = &s
		} else {
			s := "Error"
			parts = []ContentPart{{Type: "text", Text: &s}}
		}
	}
	if e.same {
		tm.Content = &Content{Parts: parts}
		if len(parts) == 1 && parts[0].Type == "text" && len(parts[0].Unknown) == 0 {
			tm.Content = &Content{String: true, Text: *parts[0].Text}
		}
		return tm, nil
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(*p.Text)
	}
	tm.Content = &Content{String: true, Text: b.String()}
	return tm, nil
}

func mediaNoun(m *parleyv1.Media) string {
	switch m.GetKind() {
	case parleyv1.MediaKind_MEDIA_KIND_IMAGE:
		return "image"
	case parleyv1.MediaKind_MEDIA_KIND_AUDIO:
		return "audio"
	case parleyv1.MediaKind_MEDIA_KIND_VIDEO:
		return "video"
	}
	return "file"
}

func (e *encoder) media(m *parleyv1.Media, p *parleyv1.Part, field string) (ContentPart, error) {
	unknown := e.take(p.GetExtensions(), "")
	kind := m.GetKind()
	if kind == parleyv1.MediaKind_MEDIA_KIND_UNSPECIFIED {
		kind = openai.KindOfMIME(m.GetMimeType())
	}
	switch kind {
	case parleyv1.MediaKind_MEDIA_KIND_IMAGE:
		if _, ok := m.GetSource().(*parleyv1.Media_FileId); ok {
			return ContentPart{}, translate.Unsupported(D, field+".media.file_id", "an image by file id has no form in the chat-completions style")
		}
		u := openai.MediaURL(m)
		if u == "" {
			return ContentPart{}, translate.Unsupported(D, field+".media", "an image needs inline data or a URL")
		}
		return ContentPart{Type: "image_url", ImageURL: &ImageURL{URL: u, Detail: openai.DetailWord(m.GetDetail()), Unknown: e.take(p.GetExtensions(), "image_url")}, Unknown: unknown}, nil
	case parleyv1.MediaKind_MEDIA_KIND_AUDIO:
		data, ok := m.GetSource().(*parleyv1.Media_Data)
		if !ok {
			return ContentPart{}, translate.Unsupported(D, field+".media", "audio must be inline in the chat-completions style")
		}
		format := m.GetFormat()
		if format == "" {
			format = strings.TrimPrefix(strings.TrimPrefix(m.GetMimeType(), "audio/"), "x-")
			if format == "mpeg" {
				format = "mp3"
			}
		}
		if format != "wav" && format != "mp3" {
			return ContentPart{}, translate.Unsupported(D, field+".media.mime_type", "audio input must be wav or mp3, not %q", m.GetMimeType())
		}
		return ContentPart{Type: "input_audio", InputAudio: &InputAudio{Data: base64.StdEncoding.EncodeToString(data.Data), Format: format, Unknown: e.take(p.GetExtensions(), "input_audio")}, Unknown: unknown}, nil
	case parleyv1.MediaKind_MEDIA_KIND_VIDEO:
		return ContentPart{}, translate.Unsupported(D, field+".media", "the chat-completions style takes no video")
	}
	f := &File{Filename: m.GetFilename(), Unknown: e.take(p.GetExtensions(), "file")}
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_FileId:
		f.FileID = s.FileId
	case *parleyv1.Media_Data:
		f.FileData = openai.DataURL(m.GetMimeType(), s.Data)
		if f.Filename == "" && !e.same {
			f.Filename = "document" + extension(m.GetMimeType())
		}
	case *parleyv1.Media_Uri:
		return ContentPart{}, translate.Unsupported(D, field+".media.uri", "a file by URL has no form in the chat-completions style; send it inline")
	}
	return ContentPart{Type: "file", File: f, Unknown: unknown}, nil
}

func extension(mime string) string {
	switch mime {
	case "application/pdf":
		return ".pdf"
	case "text/plain":
		return ".txt"
	}
	return ""
}

func (e *encoder) tools(w *Request) error {
	for i, t := range e.req.GetTools() {
		field := "tools[" + strconv.Itoa(i) + "]"
		switch k := t.GetKind().(type) {
		case *parleyv1.Tool_Function:
			f := k.Function
			fd := &FunctionDef{Name: f.GetName(), Strict: f.Strict, Unknown: e.take(t.GetExtensions(), "function")}
			if f.GetDescription() != "" || e.has(t.GetExtensions(), "function/description") {
				d := f.GetDescription()
				fd.Description = &d
			}
			delete(fd.Unknown, "description")
			if f.GetParameters() != "" {
				fd.Parameters = jsontext.Value(f.GetParameters())
			} else if !e.same {
				fd.Parameters = jsontext.Value(`{"type":"object","properties":{}}`)
			}
			w.Tools = append(w.Tools, Tool{Type: "function", Function: fd, Unknown: e.take(t.GetExtensions(), "")})
		case *parleyv1.Tool_WebSearch:
			ws := &WebSearchOptions{Unknown: e.take(t.GetExtensions(), "")}
			switch k.WebSearch.GetContextSize() {
			case parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_LOW:
				ws.SearchContextSize = "low"
			case parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_MEDIUM:
				ws.SearchContextSize = "medium"
			case parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_HIGH:
				ws.SearchContextSize = "high"
			}
			if l := k.WebSearch.GetUserLocation(); l != nil {
				ws.UserLocation = &WebSearchLocation{Type: "approximate", Unknown: e.take(t.GetExtensions(), "user_location"),
					Approximate: &Approximate{City: l.GetCity(), Country: l.GetCountry(), Region: l.GetRegion(), Timezone: l.GetTimezone(), Unknown: e.take(t.GetExtensions(), "user_location/approximate")}}
			}
			if len(k.WebSearch.GetAllowedDomains()) > 0 || len(k.WebSearch.GetBlockedDomains()) > 0 {
				e.dropped = append(e.dropped, field+".web_search.allowed_domains")
			}
			w.WebSearchOptions = ws
		case nil:
			if v, ok := jsonx.Value(t.GetExtensions(), D, extTool); ok {
				var raw Tool
				if err := jsonx.Unmarshal(v, &raw); err != nil {
					return err
				}
				w.Tools = append(w.Tools, raw)
			}
		default:
			return translate.Unsupported(D, field, "the chat-completions style has functions and web search only")
		}
	}
	tc := e.req.GetToolChoice()
	if tc == nil {
		return nil
	}
	if tc.ParallelCalls != nil && (len(w.Tools) > 0 || e.same) {
		w.ParallelToolCalls = tc.ParallelCalls
	}
	mode := ""
	switch tc.GetMode() {
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
		mode = "auto"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		mode = "none"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		mode = "required"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
		if tc.GetName() == "" {
			return translate.Unsupported(D, "tool_choice.kind", "the chat-completions style can force a function only")
		}
		w.ToolChoice = &ToolChoice{Type: "function", Function: &NamedFunc{Name: tc.GetName()}}
		return nil
	default:
		return nil
	}
	switch names := tc.GetAllowedNames(); {
	case len(names) == 1 && mode == "required" && !e.has(e.req.GetExtensions(), extAllowedMode):
		w.ToolChoice = &ToolChoice{Type: "function", Function: &NamedFunc{Name: names[0]}}
	case len(names) > 0:
		at := &AllowedTools{Mode: mode}
		if mode == "none" {
			at.Mode = "auto"
		}
		for _, n := range names {
			at.Tools = append(at.Tools, Tool{Type: "function", Function: &FunctionDef{Name: n}})
		}
		w.ToolChoice = &ToolChoice{Type: "allowed_tools", AllowedTools: at}
	default:
		w.ToolChoice = &ToolChoice{Mode: mode}
	}
	return nil
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
		if e.has(ext, extMaxTokens) {
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
		w.Stop = &Stop{Values: g.GetStopSequences(), String: e.has(ext, extStopString)}
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
			w.Audio = &AudioParam{Voice: s.GetVoice(), Format: s.GetAudioFormat(), Unknown: e.take(ext, "audio")}
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
		f := &ResponseFormat{Unknown: e.take(ext, "response_format")}
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
			f.JSONSchema = &JSONSchema{Name: name, Strict: rf.Strict, Unknown: e.take(ext, "response_format/json_schema")}
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
		w.StreamOptions = &StreamOptions{IncludeUsage: &yes, Unknown: e.take(ext, "stream_options")}
	} else if e.same && jsonx.Has(ext, D, extUsageRequired) {
		w.StreamOptions = &StreamOptions{IncludeUsage: req.StreamUsage, Unknown: e.take(ext, "stream_options")}
	}
	if req.GetEndUserId() != "" {
		u := req.GetEndUserId()
		w.User = &u
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
