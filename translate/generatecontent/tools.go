package generatecontent

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Tools: function declarations and built-in tools, the tool config,
// function calls and responses, code execution, and call ids (made up for
// calls that came without one, matched for responses without one).

// tool flattens one tool object: each function declaration and each
// built-in tool becomes a canonical tool.
func tool(w *Tool, path string) ([]*parleyv1.Tool, error) {
	var out []*parleyv1.Tool
	for i := range w.FunctionDeclarations {
		fd := &w.FunctionDeclarations[i]
		fpath := translate.Index(path+".functionDeclarations", i)
		if fd.Name == "" {
			return nil, translate.Invalid(fpath+".name", "required field name is missing")
		}
		ft := &parleyv1.FunctionTool{Name: fd.Name, Description: fd.Description}
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_Function{Function: ft}}
		switch {
		case len(fd.ParametersJSONSchema) > 0:
			ft.Parameters = string(fd.ParametersJSONSchema)
			markJSONSchema.Keep(&t.Extensions, jsontext.Value("true"))
		case len(fd.Parameters) > 0:
			s, err := schemaToJSONSchema(fd.Parameters)
			if err != nil {
				return nil, decodeErrorAt(err, fpath+".parameters")
			}
			ft.Parameters = s
		}
		jsonx.Keep(&t.Extensions, thisDialect, "", fd.Unknown)
		out = append(out, t)
	}
	if w.CodeExecution != nil {
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_CodeExecution{CodeExecution: &parleyv1.CodeExecutionTool{}}}
		keepObject(&t.Extensions, "codeExecution", w.CodeExecution)
		out = append(out, t)
	}
	if w.GoogleSearch != nil {
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_WebSearch{WebSearch: &parleyv1.WebSearchTool{}}}
		keepObject(&t.Extensions, "googleSearch", w.GoogleSearch)
		out = append(out, t)
	}
	if gsr := w.GoogleSearchRetrieval; gsr != nil {
		ws := &parleyv1.WebSearchTool{Version: "google_search_retrieval", DynamicRetrieval: &parleyv1.DynamicRetrieval{}}
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_WebSearch{WebSearch: ws}}
		if drc := gsr.DynamicRetrievalConfig; drc != nil {
			if strings.EqualFold(drc.Mode, "MODE_DYNAMIC") {
				ws.DynamicRetrieval.Mode = parleyv1.DynamicRetrievalMode_DYNAMIC_RETRIEVAL_MODE_DYNAMIC
			}
			ws.DynamicRetrieval.Threshold = drc.DynamicThreshold
			if drc.Mode != "" && drc.Mode != "MODE_DYNAMIC" {
				markMode.KeepString(&t.Extensions, drc.Mode)
			}
			jsonx.Keep(&t.Extensions, thisDialect, "googleSearchRetrieval/dynamicRetrievalConfig", drc.Unknown)
		}
		jsonx.Keep(&t.Extensions, thisDialect, "googleSearchRetrieval", gsr.Unknown)
		out = append(out, t)
	}
	if w.URLContext != nil {
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_UrlContext{UrlContext: &parleyv1.UrlContextTool{}}}
		keepObject(&t.Extensions, "urlContext", w.URLContext)
		out = append(out, t)
	}
	if cu := w.ComputerUse; cu != nil {
		t := &parleyv1.Tool{Kind: &parleyv1.Tool_ComputerUse{ComputerUse: &parleyv1.ComputerUseTool{Environment: cu.Environment}}}
		jsonx.Keep(&t.Extensions, thisDialect, "computerUse", cu.Unknown)
		out = append(out, t)
	}
	if len(w.Unknown) > 0 {
		// Tools Parley does not model (maps, file search stores, MCP ...).
		raw, err := jsonx.Marshal(Tool{Unknown: w.Unknown})
		if err != nil {
			return nil, err
		}
		t := &parleyv1.Tool{}
		markBlock.Keep(&t.Extensions, raw)
		out = append(out, t)
	}
	return out, nil
}

// keepObject keeps the members of a built-in tool's settings object.
func keepObject(ext **parleyv1.Extensions, name string, raw jsontext.Value) {
	var u jsonx.Unknown
	if jsonx.Unmarshal(raw, &u) == nil && len(u) > 0 {
		jsonx.Keep(ext, thisDialect, name, u)
	}
}

func readToolConfig(req *parleyv1.Request, tc *toolConfig) error {
	jsonx.Keep(&req.Extensions, thisDialect, "toolConfig", tc.Unknown)
	fcc := tc.FunctionCallingConfig
	if fcc == nil {
		return nil
	}
	out := &parleyv1.ToolChoice{AllowedNames: fcc.AllowedFunctionNames}
	switch strings.ToUpper(fcc.Mode) {
	case "AUTO":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
	case "ANY":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED
	case "NONE":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE
	case "", "MODE_UNSPECIFIED":
	case "VALIDATED":
		// Calls are checked against the schemas; the canonical model has no
		// such mode, so it is the model's choice, with the word kept.
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
	default:
		return translate.Invalid("toolConfig.functionCallingConfig.mode", "mode must be one of MODE_UNSPECIFIED, AUTO, ANY, NONE, VALIDATED")
	}
	if fcc.Mode != "" && fcc.Mode != strings.ToUpper(fcc.Mode) || strings.ToUpper(fcc.Mode) == "VALIDATED" || strings.ToUpper(fcc.Mode) == "MODE_UNSPECIFIED" {
		markMode.KeepString(&req.Extensions, fcc.Mode)
	}
	jsonx.Keep(&req.Extensions, thisDialect, "toolConfig/functionCallingConfig", fcc.Unknown)
	req.ToolChoice = out
	return nil
}

func (e *encoder) tools() ([]Tool, error) {
	var out []Tool
	fnIndex := -1
	for i, t := range e.req.GetTools() {
		field := translate.Index("tools", i)
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
				gsr := &googleSearchRetrieval{Unknown: e.toolUnknown(t, "googleSearchRetrieval")}
				if dr := ws.GetDynamicRetrieval(); dr != nil {
					gsr.DynamicRetrievalConfig = &dynamicRetrievalConfig{DynamicThreshold: dr.Threshold, Unknown: e.toolUnknown(t, "googleSearchRetrieval/dynamicRetrievalConfig")}
					if dr.GetMode() == parleyv1.DynamicRetrievalMode_DYNAMIC_RETRIEVAL_MODE_DYNAMIC {
						gsr.DynamicRetrievalConfig.Mode = "MODE_DYNAMIC"
					}
					if s, ok := markMode.String(t.GetExtensions()); ok && e.same {
						gsr.DynamicRetrievalConfig.Mode = s
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
			out = append(out, Tool{ComputerUse: &computerUse{Environment: env, Unknown: e.toolUnknown(t, "computerUse")}})
		case *parleyv1.Tool_FileSearch:
			return nil, translate.Unsupported(thisDialect, field+".file_search", "the content-generation style has no file search over vector stores")
		case *parleyv1.Tool_Bash, *parleyv1.Tool_TextEditor:
			return nil, translate.Unsupported(thisDialect, field, "the content-generation style has no built-in %s tool; declare it as a function", toolName(t))
		case nil:
			v, ok := markBlock.Value(t.GetExtensions())
			if !ok || !e.same {
				// A tool another dialect kept whole, of a kind this one
				// has not.
				e.dropped = append(e.dropped, field)
				continue
			}
			var raw Tool
			if err := jsonx.Unmarshal(v, &raw); err != nil {
				return nil, err
			}
			out = append(out, raw)
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
	return jsonx.Take(t.GetExtensions(), thisDialect, prefix)
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

func (e *encoder) declaration(t *parleyv1.Tool, f *parleyv1.FunctionTool, field string) (functionDeclaration, error) {
	fd := functionDeclaration{Name: translate.FunctionName(f), Description: f.GetDescription(), Unknown: e.toolUnknown(t, "")}
	if f.GetParameters() == "" {
		return fd, nil
	}
	if e.same && markJSONSchema.In(t.GetExtensions()) {
		fd.ParametersJSONSchema = jsontext.Value(f.GetParameters())
		return fd, nil
	}
	if e.same {
		s, err := jsonSchemaToSchema(f.GetParameters())
		if err != nil {
			return functionDeclaration{}, translate.Unsupported(thisDialect, field+".function.parameters", "%v", err)
		}
		fd.Parameters = s
		return fd, nil
	}
	form, err := formOf(f.GetParameters())
	if err != nil {
		return functionDeclaration{}, translate.Unsupported(thisDialect, field+".function.parameters", "%v", err)
	}
	fd.Parameters, fd.ParametersJSONSchema = form.schema, form.jsonSchema
	e.dropSchema(field+".function.parameters", form.dropped)
	return fd, nil
}

func (e *encoder) toolConfig() *toolConfig {
	tc := e.req.GetToolChoice()
	unknown := e.take("toolConfig")
	if tc == nil && len(unknown) == 0 {
		return nil
	}
	out := &toolConfig{Unknown: unknown}
	if tc == nil {
		return out
	}
	fcc := &functionCallingConfig{AllowedFunctionNames: tc.GetAllowedNames(), Unknown: e.take("toolConfig/functionCallingConfig")}
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
	if s, ok := markMode.String(e.req.GetExtensions()); ok && e.same {
		fcc.Mode = s
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

// nameResults gives function responses without an id the id of the call
// they answer: the first unanswered call of the same name in the model turn
// before them, else the first unanswered call, in order.
func (d *decoder) nameResults(msgs []*parleyv1.Message) {
	var calls []*parleyv1.ToolCall
	answered := map[*parleyv1.ToolCall]bool{}
	for _, m := range msgs {
		if m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
			calls = calls[:0]
			for _, p := range m.GetParts() {
				if tc := p.GetToolCall(); tc != nil {
					calls = append(calls, tc)
				}
			}
			continue
		}
		for _, p := range m.GetParts() {
			tr := p.GetToolResult()
			if tr == nil {
				continue
			}
			if tr.GetCallId() != "" {
				for _, c := range calls {
					if c.GetId() == tr.GetCallId() {
						answered[c] = true
					}
				}
				continue
			}
			var match *parleyv1.ToolCall
			for _, c := range calls {
				if !answered[c] && c.GetName() == tr.GetName() {
					match = c
					break
				}
			}
			if match == nil {
				for _, c := range calls {
					if !answered[c] {
						match = c
						break
					}
				}
			}
			if match != nil {
				answered[match] = true
				tr.CallId = match.GetId()
			} else {
				tr.CallId = translate.NewID("call_")
			}
		}
	}
}

// functionResponse renders a tool result. Its content is the response
// object when it is one JSON object; other content goes in as
// {"output": text} (or {"error": text} for a failed call), the keys the
// service's SDKs use.
func (e *encoder) functionResponse(p *parleyv1.Part, tr *parleyv1.ToolResult, field string) (*functionResponse, error) {
	// The call's own name first: a grouped function's call goes by its
	// flat name, which the result must repeat.
	name := e.callName(tr.GetCallId())
	if name == "" {
		name = tr.GetName()
	}
	if name == "" {
		return nil, translate.Unsupported(thisDialect, field+".tool_result.name", "the result of tool call %q names no function, and no call with that id is in the conversation", tr.GetCallId())
	}
	var text strings.Builder
	var nested []functionResponsePart
	for _, c := range tr.GetContent() {
		switch {
		case c.GetText() != nil:
			text.WriteString(c.GetText().GetText())
		case c.GetMedia() != nil:
			// Gemini 3 models read media inside the function response;
			// for earlier ones it follows the function responses of the
			// turn (resultMedia), for a client of another dialect; what
			// neither can hold is described rather than lost silently.
			if w, ok := e.nestedMedia(c); ok {
				name := fmt.Sprintf("%s-%d%s", sanitizeID(tr.GetCallId()), len(nested), mediaExt(c.GetMedia()))
				if w.InlineData != nil {
					w.InlineData.Unknown = jsonx.Unknown{"displayName": jsonx.Quote(name)}
				}
				nested = append(nested, functionResponsePart{InlineData: w.InlineData, FileData: w.FileData})
				fmt.Fprintf(&text, "[%s attached to this response: %s]", describeMedia(c.GetMedia()), name)
			} else if _, err := e.movedMedia(c); err == nil && !e.same {
				fmt.Fprintf(&text, "[%s attached after this response]", describeMedia(c.GetMedia()))
			} else {
				fmt.Fprintf(&text, "[%s omitted]", describeMedia(c.GetMedia()))
			}
		}
	}
	fr := &functionResponse{Name: name, Parts: nested, Unknown: e.partUnknown(p, "functionResponse")}
	if !synthetic(p, tr.GetCallId()) {
		fr.ID = tr.GetCallId()
	}
	// A result that is a JSON object goes as it is; any other text goes
	// as {"output": text}.
	s := strings.TrimSpace(text.String())
	if !tr.GetIsError() && jsonx.IsObject(s) {
		fr.Response = jsontext.Value(s)
		return fr, nil
	}
	key := "output"
	if tr.GetIsError() {
		key = "error"
	}
	// {"key":text}, as Marshal writes a map of one string; what the quick
	// way declines (invalid UTF-8), Marshal writes or refuses.
	raw, ok := jsonx.AppendQuote(append(make([]byte, 0, len(key)+text.Len()+8), `{"`+key+`":`...), text.String())
	if !ok {
		var err error
		if raw, err = jsonx.Marshal(map[string]string{key: text.String()}); err != nil {
			return nil, err
		}
		fr.Response = raw
		return fr, nil
	}
	fr.Response = append(raw, '}')
	return fr, nil
}

// callName finds the function name of a call by id in the conversation.
func (e *encoder) callName(id string) string {
	for _, m := range e.req.GetMessages() {
		for _, p := range m.GetParts() {
			if tc := p.GetToolCall(); tc != nil && tc.GetId() == id {
				return translate.CallName(tc)
			}
		}
	}
	return ""
}

// syntheticID names a call the service gave no id: stable for the same
// reply, distinct across replies (whose ids differ).
// synthetic reports whether a call id is one Parley made for a call the
// service gave none (syntheticID), which the service is not sent: marked
// so by a client of this dialect, or of that form from any client. Any
// other id goes to the service on the call and on its response: Gemini 3
// models match each response to its call by id, and answer nothing when
// they cannot (earlier models ignore ids).
func synthetic(p *parleyv1.Part, id string) bool {
	return id == "" || markSyntheticID.In(p.GetExtensions()) || syntheticForm.MatchString(id)
}

// syntheticForm is the form of syntheticID's ids.
var syntheticForm = regexp.MustCompile(`^call_(?:[A-Za-z0-9_-]*_)?\d+_\d+$`)

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

// toolArgs is a call's arguments as the args object the dialect requires;
// arguments that are not an object (a model's malformed output) are passed
// as {"_raw_arguments": "..."} so the client sees them.
func toolArgs(args string) jsontext.Value {
	args = strings.TrimSpace(args)
	if args == "" {
		return jsontext.Value("{}")
	}
	if jsonx.IsObject(args) {
		return jsontext.Value(args)
	}
	raw, _ := jsonx.Marshal(map[string]string{"_raw_arguments": args})
	return raw
}

var outcomes = map[string]parleyv1.CodeOutcome{
	"":                          parleyv1.CodeOutcome_CODE_OUTCOME_UNSPECIFIED,
	"OUTCOME_UNSPECIFIED":       parleyv1.CodeOutcome_CODE_OUTCOME_UNSPECIFIED,
	"OUTCOME_OK":                parleyv1.CodeOutcome_CODE_OUTCOME_OK,
	"OK":                        parleyv1.CodeOutcome_CODE_OUTCOME_OK,
	"OUTCOME_FAILED":            parleyv1.CodeOutcome_CODE_OUTCOME_FAILED,
	"FAILED":                    parleyv1.CodeOutcome_CODE_OUTCOME_FAILED,
	"OUTCOME_DEADLINE_EXCEEDED": parleyv1.CodeOutcome_CODE_OUTCOME_DEADLINE_EXCEEDED,
	"DEADLINE_EXCEEDED":         parleyv1.CodeOutcome_CODE_OUTCOME_DEADLINE_EXCEEDED,
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

// resultMedia is the media of a tool result, as parts that follow the
// function responses of their turn, each after a text naming its call:
// the service's function response holds no media, and its clients send
// images after the response the same way (the Gemini CLI does).
func (e *encoder) resultMedia(tr *parleyv1.ToolResult, field string) PartList {
	var out PartList
	for _, c := range tr.GetContent() {
		if c.GetMedia() == nil {
			continue
		}
		if _, nested := e.nestedMedia(c); nested {
			continue // inside the function response
		}
		w, err := e.movedMedia(c)
		if err != nil {
			continue // described in the response instead
		}
		label := "[" + describeMedia(c.GetMedia()) + " from the result of tool call " + tr.GetCallId() + "]"
		out = append(out, Part{Text: &label}, w)
	}
	return out
}

// movedMedia is a tool result's media as a part of its own.
func (e *encoder) movedMedia(c *parleyv1.Part) (Part, error) {
	var w Part
	err := e.media(&w, c.GetMedia(), c, "tool_result.content")
	return w, err
}

// nestsResultMedia reports whether the upstream's model reads media inside
// a function response (functionResponse.parts): Gemini 3 models and later
// do, earlier ones do not.
func (e *encoder) nestsResultMedia() bool {
	model := e.t.Model
	if model == "" {
		model = e.req.GetModel()
	}
	model = model[strings.LastIndexByte(model, '/')+1:]
	m := geminiMajor.FindStringSubmatch(model)
	if m == nil {
		return false
	}
	major, err := strconv.Atoi(m[1])
	return err == nil && major >= 3
}

var geminiMajor = regexp.MustCompile(`^gemini-(\d+)`)

// nestedMedia is a tool result's media as a part of a function response,
// when the model reads it there and takes its type (images, PDFs and
// plain text).
func (e *encoder) nestedMedia(c *parleyv1.Part) (Part, bool) {
	if !e.nestsResultMedia() {
		return Part{}, false
	}
	w, err := e.movedMedia(c)
	if err != nil {
		return Part{}, false
	}
	mt := ""
	switch {
	case w.InlineData != nil:
		mt = w.InlineData.MimeType
	case w.FileData != nil:
		mt = w.FileData.MimeType
	}
	switch mt {
	case "image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain":
		return w, true
	}
	return Part{}, false
}

// mediaExt is the file extension of a media's type, for the name a model
// sees it by.
func mediaExt(m *parleyv1.Media) string {
	switch m.GetMimeType() {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/webp":
		return ".webp"
	case "application/pdf":
		return ".pdf"
	case "text/plain":
		return ".txt"
	}
	return ""
}
