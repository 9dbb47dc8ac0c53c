package generatecontent

import (
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// skipSignature is the signature the service documents for function calls
// in history it did not produce itself (another service's turns): without
// one, thinking models reject the request.
var skipSignature = base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))

// Upstream is the content-generation dialect as upstream services speak it.
type Upstream struct{}

var _ translate.Upstream = Upstream{}

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return D }

// EncodeRequest implements translate.Upstream. Streams use ?alt=sse; the key
// goes in x-goog-api-key, never in the URL.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == D}
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	body, err := jsonx.Marshal(w)
	if err != nil {
		return nil, err
	}
	model := t.Model
	if model == "" {
		model = req.GetModel()
	}
	model = strings.TrimPrefix(model, "models/")
	out := &translate.Outgoing{
		Method: http.MethodPost,
		Path:   "/v1beta/models/" + url.PathEscape(model) + ":generateContent",
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   body,
		Stream: req.GetStream(),
	}
	if req.GetStream() {
		out.Path = "/v1beta/models/" + url.PathEscape(model) + ":streamGenerateContent"
		out.Query = url.Values{"alt": {"sse"}}
	}
	if t.APIKey != "" {
		out.Header.Set("x-goog-api-key", t.APIKey)
	}
	// This dialect caches by cachedContent, not by per-block hints.
	out.Dropped = translate.CacheHintPaths(req)
	return out, nil
}

type encoder struct {
	req  *parleyv1.Request
	t    translate.Target
	same bool
}

func (e *encoder) take(prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(e.req.GetExtensions(), D, prefix)
}

func (e *encoder) request() (*Request, error) {
	w := &Request{CachedContent: e.req.GetCachedContent(), Unknown: e.take("")}
	msgs := e.req.GetMessages()
	var system []*parleyv1.Part
	system = append(system, e.req.GetInstructions()...)
	if !e.same {
		lead, rest := translate.SplitLeadingSystem(msgs)
		for _, m := range lead {
			system = append(system, m.GetParts()...)
		}
		msgs = translate.NormaliseTurns(rest)
	}
	if len(system) > 0 {
		parts, err := e.parts(system, "instructions", false)
		if err != nil {
			return nil, err
		}
		w.SystemInstruction = &Content{Parts: parts, Unknown: e.take("systemInstruction")}
		if v, ok := jsonx.Value(e.req.GetExtensions(), D, "systemInstruction/role"); ok && e.same {
			_ = jsonx.Unmarshal(v, &w.SystemInstruction.Role)
		}
	}
	contents := ContentList{}
	current := currentTurnStart(msgs)
	for i, m := range msgs {
		c, err := e.content(m, i, i >= current)
		if err != nil {
			return nil, err
		}
		if len(c.Parts) == 0 && !e.same {
			continue
		}
		contents = append(contents, c)
	}
	w.Contents = &contents
	tools, err := e.tools()
	if err != nil {
		return nil, err
	}
	w.Tools = tools
	w.ToolConfig = e.toolConfig()
	w.SafetySettings = e.safety()
	gc, err := e.generationConfig()
	if err != nil {
		return nil, err
	}
	w.GenerationConfig = gc
	return w, nil
}

// currentTurnStart returns the index of the first message of the current
// step: the model turns since the last user text. Function calls there need
// a signature on thinking models.
func currentTurnStart(msgs []*parleyv1.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.GetRole() != parleyv1.Role_ROLE_ASSISTANT {
			for _, p := range m.GetParts() {
				if p.GetText() != nil || p.GetMedia() != nil {
					return i
				}
			}
		}
	}
	return 0
}

func (e *encoder) content(m *parleyv1.Message, i int, current bool) (Content, error) {
	c := Content{Role: "user"}
	if m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
		c.Role = "model"
	}
	if e.same {
		if v, ok := jsonx.Value(m.GetExtensions(), D, extRole); ok {
			_ = jsonx.Unmarshal(v, &c.Role)
		}
		c.Unknown = jsonx.Take(m.GetExtensions(), D, "")
	}
	parts, err := e.parts(m.GetParts(), fmt.Sprintf("messages[%d]", i), current && m.GetRole() == parleyv1.Role_ROLE_ASSISTANT)
	if err != nil {
		return Content{}, err
	}
	c.Parts = parts
	return c, nil
}

func (e *encoder) parts(ps []*parleyv1.Part, field string, currentModelTurn bool) (PartList, error) {
	out := make(PartList, 0, len(ps))
	firstCall := true
	for j, p := range ps {
		wp, ok, err := e.part(p, fmt.Sprintf("%s.parts[%d]", field, j))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if wp.FunctionCall != nil && currentModelTurn && firstCall && wp.ThoughtSignature == "" && !e.same {
			// The first call of a step needs a signature on thinking models;
			// for another service's call Parley sends the documented
			// placeholder.
			wp.ThoughtSignature = skipSignature
		}
		if wp.FunctionCall != nil {
			firstCall = false
		}
		out = append(out, wp)
	}
	return out, nil
}

func (e *encoder) partUnknown(p *parleyv1.Part, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(p.GetExtensions(), D, prefix)
}

// signature returns the thought signature to send with a part: only one this
// upstream's dialect made.
func (e *encoder) signature(op *parleyv1.Opaque) string {
	if translate.SendableTo(op, D, e.t.Upstream) {
		return op.GetValue()
	}
	return ""
}

func (e *encoder) part(p *parleyv1.Part, field string) (Part, bool, error) {
	w := Part{Unknown: e.partUnknown(p, ""), ThoughtSignature: e.signature(p.GetSignature())}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		if k.Text.GetText() == "" && w.ThoughtSignature == "" && !e.same {
			return Part{}, false, nil
		}
		w.Text = ptr(k.Text.GetText())
		if v, ok := jsonx.Value(p.GetExtensions(), D, "thought"); ok && e.same && string(v) == "false" {
			w.Thought = ptr(false)
			delete(w.Unknown, "thought")
		}
	case *parleyv1.Part_Refusal:
		w.Text = ptr(k.Refusal.GetText())
	case *parleyv1.Part_Reasoning:
		r := k.Reasoning
		if w.ThoughtSignature == "" {
			if sig := e.signature(r.GetEncryptedContent()); sig != "" {
				w.ThoughtSignature = sig
			}
		}
		if w.ThoughtSignature == "" && (!e.same || p.GetSignature() != nil || r.GetEncryptedContent() != nil) {
			// Another service's thinking (for a client of this dialect,
			// a thought Parley sealed for it): nothing this one can use.
			return Part{}, false, nil
		}
		w.Text, w.Thought = ptr(r.GetText()), ptr(true)
	case *parleyv1.Part_Media:
		if err := e.media(&w, k.Media, p, field); err != nil {
			return Part{}, false, err
		}
	case *parleyv1.Part_ToolCall:
		tc := k.ToolCall
		args := strings.TrimSpace(tc.GetArguments())
		if args == "" {
			args = "{}"
		}
		if v := jsontext.Value(args); !v.IsValid() || v.Kind() != '{' {
			return Part{}, false, translate.Unsupported(D, field+".tool_call.arguments", "the arguments of tool call %q are not a JSON object", tc.GetId())
		}
		fc := &FunctionCall{Name: tc.GetName(), Args: jsontext.Value(args), Unknown: e.partUnknown(p, "functionCall")}
		if e.same && !jsonx.Has(p.GetExtensions(), D, extSyntheticID) {
			fc.ID = tc.GetId()
		}
		w.FunctionCall = fc
	case *parleyv1.Part_ToolResult:
		fr, err := e.functionResponse(p, k.ToolResult, field)
		if err != nil {
			return Part{}, false, err
		}
		w.FunctionResponse = fr
	case *parleyv1.Part_ExecutableCode:
		ec := k.ExecutableCode
		w.ExecutableCode = &ExecutableCode{Code: ec.GetCode(), ID: ec.GetId(), Unknown: e.partUnknown(p, "executableCode")}
		switch ec.GetLanguage() {
		case parleyv1.CodeLanguage_CODE_LANGUAGE_PYTHON:
			w.ExecutableCode.Language = "PYTHON"
		default:
			w.ExecutableCode.Language = "LANGUAGE_UNSPECIFIED"
		}
		if v, ok := jsonx.Value(p.GetExtensions(), D, "@language"); ok && e.same {
			_ = jsonx.Unmarshal(v, &w.ExecutableCode.Language)
		}
	case *parleyv1.Part_CodeExecutionResult:
		cr := k.CodeExecutionResult
		w.CodeExecutionResult = &CodeExecutionResult{Outcome: wireOutcome(cr.GetOutcome()), Output: cr.GetOutput(), ID: cr.GetId(), Unknown: e.partUnknown(p, "codeExecutionResult")}
		if v, ok := jsonx.Value(p.GetExtensions(), D, extOutcome); ok && e.same {
			_ = jsonx.Unmarshal(v, &w.CodeExecutionResult.Outcome)
		}
	case *parleyv1.Part_HostedToolCall, *parleyv1.Part_HostedToolResult:
		return Part{}, false, nil // another service's server tools
	case *parleyv1.Part_ItemReference:
		return Part{}, false, translate.Unsupported(D, field+".item_reference", "an item reference needs the stored response it points to")
	case nil:
		if v, ok := jsonx.Value(p.GetExtensions(), D, extBlock); ok {
			var raw Part
			if err := jsonx.Unmarshal(v, &raw); err != nil {
				return Part{}, false, err
			}
			return raw, true, nil
		}
		return Part{}, false, nil
	}
	return w, true, nil
}

func wireOutcome(o parleyv1.CodeOutcome) string {
	switch o {
	case parleyv1.CodeOutcome_CODE_OUTCOME_OK:
		return "OUTCOME_OK"
	case parleyv1.CodeOutcome_CODE_OUTCOME_FAILED:
		return "OUTCOME_FAILED"
	case parleyv1.CodeOutcome_CODE_OUTCOME_DEADLINE_EXCEEDED:
		return "OUTCOME_DEADLINE_EXCEEDED"
	}
	return "OUTCOME_UNSPECIFIED"
}

// media writes inline data as inlineData and a URI as fileData. URIs go as
// they are: Parley fetches nothing; the service reads the URIs it can (its
// own file URIs, cloud storage, some public URLs).
func (e *encoder) media(w *Part, m *parleyv1.Media, p *parleyv1.Part, field string) error {
	mt := m.GetMimeType()
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_Data:
		if mt == "" {
			mt = defaultMime(m)
		}
		if mt == "" {
			return translate.Unsupported(D, field+".media.mime_type", "inline media needs a MIME type")
		}
		w.InlineData = &Blob{MimeType: mt, Data: base64.StdEncoding.EncodeToString(s.Data), Unknown: e.partUnknown(p, "inlineData")}
	case *parleyv1.Media_Uri:
		if mt == "" {
			mt = mime.TypeByExtension(path.Ext(s.Uri))
			if i := strings.IndexByte(mt, ';'); i >= 0 {
				mt = mt[:i]
			}
		}
		if mt == "" {
			mt = defaultMime(m)
		}
		w.FileData = &FileData{MimeType: mt, FileURI: s.Uri, Unknown: e.partUnknown(p, "fileData")}
	case *parleyv1.Media_FileId:
		if !strings.HasPrefix(s.FileId, "files/") && !strings.Contains(s.FileId, "/files/") {
			return translate.Unsupported(D, field+".media.file_id", "file id %q is not a file of this service", s.FileId)
		}
		w.FileData = &FileData{MimeType: mt, FileURI: s.FileId}
	default:
		return translate.Invalid(field+".media", "media without data, URI or file id")
	}
	return nil
}

func defaultMime(m *parleyv1.Media) string {
	switch m.GetKind() {
	case parleyv1.MediaKind_MEDIA_KIND_DOCUMENT:
		return "application/pdf"
	case parleyv1.MediaKind_MEDIA_KIND_AUDIO:
		if f := m.GetFormat(); f != "" {
			return "audio/" + f
		}
	}
	return ""
}

// functionResponse renders a tool result. Its content is the response
// object when it is one JSON object; other content goes in as
// {"output": text} (or {"error": text} for a failed call), the keys the
// service's SDKs use.
func (e *encoder) functionResponse(p *parleyv1.Part, tr *parleyv1.ToolResult, field string) (*FunctionResponse, error) {
	name := tr.GetName()
	if name == "" {
		name = e.callName(tr.GetCallId())
	}
	if name == "" {
		return nil, translate.Unsupported(D, field+".tool_result.name", "the result of tool call %q names no function, and no call with that id is in the conversation", tr.GetCallId())
	}
	var text strings.Builder
	for _, c := range tr.GetContent() {
		switch {
		case c.GetText() != nil:
			text.WriteString(c.GetText().GetText())
		case c.GetMedia() != nil:
			// Media in tool results has no place in this dialect's
			// function response; it is described rather than lost silently.
			fmt.Fprintf(&text, "[%s omitted]", describeMedia(c.GetMedia()))
		}
	}
	fr := &FunctionResponse{Name: name, Unknown: e.partUnknown(p, "functionResponse")}
	if e.same && !jsonx.Has(p.GetExtensions(), D, extSyntheticID) {
		fr.ID = tr.GetCallId()
	}
	s := strings.TrimSpace(text.String())
	if v := jsontext.Value(s); v.IsValid() && v.Kind() == '{' && !tr.GetIsError() {
		fr.Response = v
		return fr, nil
	}
	key := "output"
	if tr.GetIsError() {
		key = "error"
	}
	raw, err := jsonx.Marshal(map[string]string{key: text.String()})
	if err != nil {
		return nil, err
	}
	fr.Response = raw
	return fr, nil
}

func describeMedia(m *parleyv1.Media) string {
	if m.GetMimeType() != "" {
		return m.GetMimeType()
	}
	return strings.ToLower(strings.TrimPrefix(m.GetKind().String(), "MEDIA_KIND_"))
}

// callName finds the function name of a call by id in the conversation.
func (e *encoder) callName(id string) string {
	for _, m := range e.req.GetMessages() {
		for _, p := range m.GetParts() {
			if tc := p.GetToolCall(); tc != nil && tc.GetId() == id {
				return tc.GetName()
			}
		}
	}
	return ""
}

func (e *encoder) tools() ([]Tool, error) {
	var out []Tool
	fnIndex := -1
	for i, t := range e.req.GetTools() {
		field := fmt.Sprintf("tools[%d]", i)
		switch k := t.GetKind().(type) {
		case *parleyv1.Tool_Function:
			fd, err := e.declaration(t, k.Function, field)
			if err != nil {
				return nil, err
			}
			if fnIndex < 0 {
				fnIndex = len(out)
				out = append(out, Tool{})
			}
			out[fnIndex].FunctionDeclarations = append(out[fnIndex].FunctionDeclarations, fd)
		case *parleyv1.Tool_CodeExecution:
			out = append(out, Tool{CodeExecution: e.settings(t, "codeExecution")})
		case *parleyv1.Tool_WebSearch:
			ws := k.WebSearch
			if ws.GetDynamicRetrieval() != nil || ws.GetVersion() == "google_search_retrieval" {
				gsr := &GoogleSearchRetrieval{Unknown: e.toolUnknown(t, "googleSearchRetrieval")}
				if dr := ws.GetDynamicRetrieval(); dr != nil {
					gsr.DynamicRetrievalConfig = &DynamicRetrievalConfig{DynamicThreshold: dr.Threshold, Unknown: e.toolUnknown(t, "googleSearchRetrieval/dynamicRetrievalConfig")}
					if dr.GetMode() == parleyv1.DynamicRetrievalMode_DYNAMIC_RETRIEVAL_MODE_DYNAMIC {
						gsr.DynamicRetrievalConfig.Mode = "MODE_DYNAMIC"
					}
					if v, ok := jsonx.Value(t.GetExtensions(), D, "@mode"); ok && e.same {
						_ = jsonx.Unmarshal(v, &gsr.DynamicRetrievalConfig.Mode)
					}
				}
				out = append(out, Tool{GoogleSearchRetrieval: gsr})
				continue
			}
			out = append(out, Tool{GoogleSearch: e.settings(t, "googleSearch")})
		case *parleyv1.Tool_UrlContext:
			out = append(out, Tool{URLContext: e.settings(t, "urlContext")})
		case *parleyv1.Tool_ComputerUse:
			env := k.ComputerUse.GetEnvironment()
			if env == "" || !e.same && !strings.HasPrefix(env, "ENVIRONMENT_") {
				env = "ENVIRONMENT_BROWSER"
			}
			out = append(out, Tool{ComputerUse: &ComputerUse{Environment: env, Unknown: e.toolUnknown(t, "computerUse")}})
		case *parleyv1.Tool_FileSearch:
			return nil, translate.Unsupported(D, field+".file_search", "the content-generation style has no file search over vector stores")
		case *parleyv1.Tool_Bash, *parleyv1.Tool_TextEditor:
			return nil, translate.Unsupported(D, field, "the content-generation style has no built-in %s tool; declare it as a function", toolName(t))
		case nil:
			if v, ok := jsonx.Value(t.GetExtensions(), D, extBlock); ok && e.same {
				var raw Tool
				if err := jsonx.Unmarshal(v, &raw); err != nil {
					return nil, err
				}
				out = append(out, raw)
			}
		}
	}
	return out, nil
}

func toolName(t *parleyv1.Tool) string {
	switch t.GetKind().(type) {
	case *parleyv1.Tool_Bash:
		return "bash"
	case *parleyv1.Tool_TextEditor:
		return "text editor"
	}
	return "such"
}

func (e *encoder) toolUnknown(t *parleyv1.Tool, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(t.GetExtensions(), D, prefix)
}

// settings is a built-in tool's settings object: {} unless the client of
// this dialect gave members.
func (e *encoder) settings(t *parleyv1.Tool, name string) jsontext.Value {
	if u := e.toolUnknown(t, name); len(u) > 0 {
		raw, err := jsonx.Marshal(u)
		if err == nil {
			return raw
		}
	}
	return jsontext.Value("{}")
}

func (e *encoder) declaration(t *parleyv1.Tool, f *parleyv1.FunctionTool, field string) (FunctionDeclaration, error) {
	fd := FunctionDeclaration{Name: f.GetName(), Description: f.GetDescription(), Unknown: e.toolUnknown(t, "")}
	if f.GetParameters() == "" {
		return fd, nil
	}
	if e.same && jsonx.Has(t.GetExtensions(), D, extJSONSchema) {
		fd.ParametersJSONSchema = jsontext.Value(f.GetParameters())
		return fd, nil
	}
	s, err := jsonSchemaToSchema(f.GetParameters())
	if err != nil {
		return FunctionDeclaration{}, translate.Unsupported(D, field+".function.parameters", "%v", err)
	}
	fd.Parameters = s
	return fd, nil
}

func (e *encoder) toolConfig() *ToolConfig {
	tc := e.req.GetToolChoice()
	unknown := e.take("toolConfig")
	if tc == nil && len(unknown) == 0 {
		return nil
	}
	out := &ToolConfig{Unknown: unknown}
	if tc == nil {
		return out
	}
	fcc := &FunctionCallingConfig{AllowedFunctionNames: tc.GetAllowedNames(), Unknown: e.take("toolConfig/functionCallingConfig")}
	switch tc.GetMode() {
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
		fcc.Mode = "AUTO"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		fcc.Mode = "NONE"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		fcc.Mode = "ANY"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
		fcc.Mode = "ANY"
		if tc.GetName() != "" {
			fcc.AllowedFunctionNames = []string{tc.GetName()}
		}
	}
	if v, ok := jsonx.Value(e.req.GetExtensions(), D, "@mode"); ok && e.same {
		_ = jsonx.Unmarshal(v, &fcc.Mode)
	}
	if fcc.Mode == "" && len(fcc.AllowedFunctionNames) == 0 && len(fcc.Unknown) == 0 {
		// Only parallel_calls was set, which this dialect has no switch for.
		if len(unknown) == 0 {
			return nil
		}
		return out
	}
	out.FunctionCallingConfig = fcc
	return out
}

func (e *encoder) safety() []SafetySetting {
	if v, ok := jsonx.Value(e.req.GetExtensions(), D, extSafety); ok && e.same {
		var raw []SafetySetting
		if jsonx.Unmarshal(v, &raw) == nil {
			return raw
		}
	}
	var out []SafetySetting
	for _, s := range e.req.GetSafetySettings() {
		out = append(out, SafetySetting{Category: s.GetCategory().String(), Threshold: strings.TrimPrefix(s.GetThreshold().String(), "HARM_BLOCK_THRESHOLD_")})
	}
	return out
}

func (e *encoder) generationConfig() (*GenerationConfig, error) {
	g := e.req.GetGeneration()
	w := &GenerationConfig{Unknown: e.take("generationConfig")}
	if g != nil {
		if n := len(g.GetStopSequences()); n > 5 {
			return nil, translate.Unsupported(D, "generation.stop_sequences", "the content-generation style takes at most 5 stop sequences, not %d", n)
		}
		w.StopSequences = g.GetStopSequences()
		w.Temperature = g.Temperature
		w.TopP = g.TopP
		if g.TopK != nil {
			w.TopK = ptr(float64(g.GetTopK()))
		}
		if v, ok := jsonx.Value(e.req.GetExtensions(), D, "generationConfig/topK"); ok && e.same {
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

func isZeroGeneration(w *GenerationConfig) bool {
	b, err := jsonx.Marshal(w)
	return err == nil && string(b) == "{}"
}

func (e *encoder) speech(s *parleyv1.SpeechConfig) *SpeechConfig {
	if v, ok := jsonx.Value(e.req.GetExtensions(), D, "@speechConfig"); ok && e.same {
		var raw SpeechConfig
		if jsonx.Unmarshal(v, &raw) == nil {
			return &raw
		}
	}
	if s == nil {
		return nil
	}
	out := &SpeechConfig{LanguageCode: s.GetLanguageCode()}
	if s.GetVoice() != "" {
		out.VoiceConfig = &VoiceConfig{PrebuiltVoiceConfig: &PrebuiltVoiceConfig{VoiceName: s.GetVoice()}}
	}
	if len(s.GetSpeakers()) > 0 {
		ms := &MultiSpeakerVoiceConfig{}
		for _, sp := range s.GetSpeakers() {
			ms.SpeakerVoiceConfigs = append(ms.SpeakerVoiceConfigs, SpeakerVoiceConfig{Speaker: sp.GetSpeaker(), VoiceConfig: &VoiceConfig{PrebuiltVoiceConfig: &PrebuiltVoiceConfig{VoiceName: sp.GetVoice()}}})
		}
		out.MultiSpeakerVoiceConfig = ms
	}
	return out
}

func (e *encoder) responseFormat(w *GenerationConfig) error {
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
		if v, ok := jsonx.Value(e.req.GetExtensions(), D, "@mime"); ok && e.same {
			_ = jsonx.Unmarshal(v, &w.ResponseMimeType)
		}
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_ENUM:
		w.ResponseMimeType = "text/x.enum"
	}
	if rf.GetSchema() == "" {
		return nil
	}
	if e.same && jsonx.Has(e.req.GetExtensions(), D, extJSONSchema) {
		w.ResponseJSONSchema = jsontext.Value(rf.GetSchema())
		return nil
	}
	s, err := jsonSchemaToSchema(rf.GetSchema())
	if err != nil {
		return translate.Unsupported(D, "response_format.schema", "%v", err)
	}
	w.ResponseSchema = s
	return nil
}

// thinking maps the reasoning settings: a budget as thinkingBudget (0 when
// disabled, -1 when adaptive), an effort level as thinkingLevel when the
// client gave one in this dialect, else as the budget of the level (see
// translate.BudgetForEffort). Thoughts are included when the client asked
// for reasoning in a dialect that shows it, unless it said otherwise.
func (e *encoder) thinking() *ThinkingConfig {
	rc := e.req.GetReasoning()
	if rc == nil {
		return nil
	}
	tc := &ThinkingConfig{IncludeThoughts: rc.IncludeThoughts, Unknown: e.take("generationConfig/thinkingConfig")}
	level := e.same && jsonx.Has(e.req.GetExtensions(), D, extLevel)
	switch rc.GetMode() {
	case parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
		tc.ThinkingBudget = ptr(int64(0))
	case parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE:
		tc.ThinkingBudget = ptr(int64(-1))
	case parleyv1.ReasoningMode_REASONING_MODE_ENABLED:
		if rc.BudgetTokens != nil {
			tc.ThinkingBudget = ptr(int64(rc.GetBudgetTokens()))
		}
	}
	if v, ok := jsonx.Value(e.req.GetExtensions(), D, "generationConfig/thinkingConfig/thinkingBudget"); ok && e.same {
		_ = jsonx.Unmarshal(v, &tc.ThinkingBudget)
		delete(tc.Unknown, "thinkingBudget")
	}
	if eff := rc.GetEffort(); eff != parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
		switch {
		case level:
			v, _ := jsonx.Value(e.req.GetExtensions(), D, extLevel)
			_ = jsonx.Unmarshal(v, &tc.ThinkingLevel)
		case eff == parleyv1.ReasoningEffort_REASONING_EFFORT_NONE:
			tc.ThinkingBudget = ptr(int64(0))
		case tc.ThinkingBudget == nil:
			tc.ThinkingBudget = ptr(int64(translate.BudgetForEffort(eff)))
		}
	}
	if tc.IncludeThoughts == nil && !e.same && (tc.ThinkingBudget == nil || *tc.ThinkingBudget != 0) {
		tc.IncludeThoughts = ptr(true)
	}
	return tc
}
