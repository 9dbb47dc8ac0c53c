package messages

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Tools, both ways: tool definitions (custom tools and the typed built-in
// tools with their dated versions), tool_choice, the input of tool calls
// and the content of tool results. Tools the service runs itself are in
// server_tools.go.

func readToolChoice(tc *toolChoice) (*parleyv1.ToolChoice, error) {
	out := &parleyv1.ToolChoice{}
	switch tc.Type {
	case "auto":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
	case "any":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED
	case "none":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE
	case "tool":
		if tc.Name == "" {
			return nil, translate.Invalid("tool_choice.tool.name", "Field required")
		}
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL
		out.Name = tc.Name
	default:
		return nil, translate.Invalid("tool_choice.type", "Input should be 'auto', 'any', 'tool' or 'none'")
	}
	if tc.DisableParallelToolUse != nil {
		out.ParallelCalls = ptr(!*tc.DisableParallelToolUse)
	}
	return out, nil
}

// builtinPrefixes maps the type prefix of a built-in tool to its kind.
var builtinPrefixes = []struct {
	prefix string
	kind   parleyv1.ToolKind
}{
	{"computer_", parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE},
	{"bash_", parleyv1.ToolKind_TOOL_KIND_BASH},
	{"text_editor_", parleyv1.ToolKind_TOOL_KIND_TEXT_EDITOR},
	{"web_search_", parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH},
	{"code_execution_", parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION},
	{"web_fetch_", parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT},
}

func builtinKind(typ string) parleyv1.ToolKind {
	for _, b := range builtinPrefixes {
		if strings.HasPrefix(typ, b.prefix) {
			return b.kind
		}
	}
	return parleyv1.ToolKind_TOOL_KIND_UNSPECIFIED
}

func readTool(w *tool, path string) (*parleyv1.Tool, error) {
	t := &parleyv1.Tool{}
	if w.CacheControl != nil {
		cc, err := readCacheControl(w.CacheControl, path+".cache_control")
		if err != nil {
			return nil, err
		}
		t.CacheControl = cc
	}
	keepName := func(def string) string {
		if w.Name == def {
			return ""
		}
		return w.Name
	}
	switch kind := builtinKind(w.Type); {
	case w.Type == "" || w.Type == "custom":
		if w.Name == "" {
			return nil, translate.Invalid(path+".name", "Field required")
		}
		if len(w.InputSchema) == 0 {
			return nil, translate.Invalid(path+".input_schema", "Field required")
		}
		ft := &parleyv1.FunctionTool{Name: w.Name, Parameters: string(w.InputSchema), Strict: w.Strict}
		if w.Description != nil {
			ft.Description = *w.Description
		}
		t.Kind = &parleyv1.Tool_Function{Function: ft}
		if w.Type == "custom" {
			jsonx.KeepValue(&t.Extensions, thisDialect, "type", jsontext.Value(`"custom"`))
		}
	case kind == parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE:
		ct := &parleyv1.ComputerUseTool{Version: w.Type, Name: keepName("computer")}
		if w.DisplayWidthPx == nil || w.DisplayHeightPx == nil {
			return nil, translate.Invalid(path+".display_width_px", "Field required")
		}
		ct.DisplayWidth, ct.DisplayHeight = int32(*w.DisplayWidthPx), int32(*w.DisplayHeightPx)
		if w.DisplayNumber != nil {
			ct.DisplayNumber = ptr(int32(*w.DisplayNumber))
		}
		t.Kind = &parleyv1.Tool_ComputerUse{ComputerUse: ct}
	case kind == parleyv1.ToolKind_TOOL_KIND_BASH:
		t.Kind = &parleyv1.Tool_Bash{Bash: &parleyv1.BashTool{Version: w.Type, Name: keepName("bash")}}
	case kind == parleyv1.ToolKind_TOOL_KIND_TEXT_EDITOR:
		te := &parleyv1.TextEditorTool{Version: w.Type, Name: w.Name}
		if w.MaxCharacters != nil {
			te.MaxCharacters = ptr(clampInt32(*w.MaxCharacters))
		}
		t.Kind = &parleyv1.Tool_TextEditor{TextEditor: te}
	case kind == parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:
		ws := &parleyv1.WebSearchTool{Version: w.Type, AllowedDomains: w.AllowedDomains, BlockedDomains: w.BlockedDomains}
		if w.MaxUses != nil {
			ws.MaxUses = ptr(clampInt32(*w.MaxUses))
		}
		if ul := w.UserLocation; ul != nil {
			ws.UserLocation = &parleyv1.UserLocation{City: ul.City, Region: ul.Region, Country: ul.Country, Timezone: ul.Timezone}
			jsonx.Keep(&t.Extensions, thisDialect, "user_location", ul.Unknown)
		}
		t.Kind = &parleyv1.Tool_WebSearch{WebSearch: ws}
		if w.Name != "web_search" {
			jsonx.KeepValue(&t.Extensions, thisDialect, "name", jsonx.Quote(w.Name))
		}
	case kind == parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION:
		t.Kind = &parleyv1.Tool_CodeExecution{CodeExecution: &parleyv1.CodeExecutionTool{Version: w.Type}}
		if w.Name != "code_execution" {
			jsonx.KeepValue(&t.Extensions, thisDialect, "name", jsonx.Quote(w.Name))
		}
	case kind == parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT:
		t.Kind = &parleyv1.Tool_UrlContext{UrlContext: &parleyv1.UrlContextTool{Version: w.Type}}
		if w.Name != "web_fetch" {
			jsonx.KeepValue(&t.Extensions, thisDialect, "name", jsonx.Quote(w.Name))
		}
	default:
		// A tool type Parley does not model (memory, tool search, MCP
		// toolsets ...): kept whole for an upstream of this dialect.
		raw, err := jsonx.Marshal(w)
		if err != nil {
			return nil, err
		}
		markBlock.Keep(&t.Extensions, raw)
		return t, nil
	}
	if t.GetFunction() == nil {
		if w.Description != nil {
			jsonx.KeepValue(&t.Extensions, thisDialect, "description", jsonx.Quote(*w.Description))
		}
		if len(w.InputSchema) > 0 {
			jsonx.KeepValue(&t.Extensions, thisDialect, "input_schema", w.InputSchema)
		}
		if w.Strict != nil {
			jsonx.KeepValue(&t.Extensions, thisDialect, "strict", jsontext.Value(fmt.Sprint(*w.Strict)))
		}
	}
	jsonx.Keep(&t.Extensions, thisDialect, "", w.Unknown)
	return t, nil
}

func (e *encoder) tools(w *Request) error {
	tc := e.req.GetToolChoice()
	allowed := map[string]bool{}
	for _, n := range tc.GetAllowedNames() {
		allowed[n] = true
	}
	for i, t := range e.req.GetTools() {
		wt, ok, err := e.tool(t, translate.Index("tools", i))
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if len(allowed) > 0 && t.GetFunction() != nil && !allowed[t.GetFunction().GetName()] {
			continue // the dialect has no allow-list: offer only the allowed functions
		}
		w.Tools = append(w.Tools, wt)
	}
	if tc == nil {
		return nil
	}
	c := &toolChoice{Unknown: e.take("tool_choice")}
	switch tc.GetMode() {
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
		c.Type = "auto"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		c.Type = "none"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		c.Type = "any"
		if len(tc.GetAllowedNames()) == 1 {
			c.Type, c.Name = "tool", tc.GetAllowedNames()[0]
		}
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
		c.Type, c.Name = "tool", tc.GetName()
		if c.Name == "" {
			c.Name = builtinToolName(tc.GetKind())
		}
		if c.Name == "" {
			return translate.Unsupported(thisDialect, "tool_choice.kind", "the messages style cannot force the built-in tool %s", tc.GetKind())
		}
	default:
		if tc.ParallelCalls == nil {
			return nil
		}
		c.Type = "auto"
	}
	if tc.ParallelCalls != nil && c.Type != "none" {
		c.DisableParallelToolUse = ptr(!tc.GetParallelCalls())
	}
	w.ToolChoice = c
	return nil
}

func builtinToolName(k parleyv1.ToolKind) string {
	switch k {
	case parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:
		return "web_search"
	case parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION:
		return "code_execution"
	case parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE:
		return "computer"
	case parleyv1.ToolKind_TOOL_KIND_BASH:
		return "bash"
	case parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT:
		return "web_fetch"
	}
	return ""
}

// Built-in tool versions used when the client's dialect named none.
const (
	defaultComputerVersion     = "computer_20250124"
	defaultBashVersion         = "bash_20250124"
	defaultEditorVersion       = "text_editor_20250728"
	defaultWebSearchVersion    = "web_search_20250305"
	defaultCodeExecVersion     = "code_execution_20250825"
	defaultWebFetchVersion     = "web_fetch_20250910"
	computerUseBetaFor20250124 = "computer-use-2025-01-24"
)

func versionOr(v, prefix, def string) string {
	if strings.HasPrefix(v, prefix) {
		return v
	}
	return def
}

func (e *encoder) tool(t *parleyv1.Tool, field string) (tool, bool, error) {
	var w tool
	if e.same {
		if v, ok := markBlock.Value(t.GetExtensions()); ok {
			if err := jsonx.Unmarshal(v, &w); err != nil {
				return tool{}, false, err
			}
			return w, true, nil
		}
		w.Unknown = jsonx.Take(t.GetExtensions(), thisDialect, "")
		if v, ok := w.Unknown["type"]; ok {
			_ = jsonx.Unmarshal(v, &w.Type)
			delete(w.Unknown, "type")
		}
		for _, k := range []string{"name", "description", "input_schema", "strict"} {
			v, ok := w.Unknown[k]
			if !ok {
				continue
			}
			delete(w.Unknown, k)
			switch k {
			case "name":
				_ = jsonx.Unmarshal(v, &w.Name)
			case "description":
				w.Description = new(string)
				_ = jsonx.Unmarshal(v, w.Description)
			case "input_schema":
				w.InputSchema = v
			case "strict":
				w.Strict = new(bool)
				_ = jsonx.Unmarshal(v, w.Strict)
			}
		}
	}
	w.CacheControl = wireCacheControl(t.GetCacheControl())
	nameOr := func(def string) string {
		if w.Name != "" {
			return w.Name
		}
		return def
	}
	switch k := t.GetKind().(type) {
	case *parleyv1.Tool_Function:
		f := k.Function
		w.Name = translate.FunctionName(f)
		if f.GetDescription() != "" {
			w.Description = ptr(f.GetDescription())
		}
		schema := f.GetParameters()
		if schema == "" {
			schema = `{"type":"object","properties":{}}`
		}
		w.InputSchema = jsontext.Value(schema)
		if !e.same {
			v, err := foreignSchema(schema, f.GetStrict())
			if err != nil {
				return tool{}, false, translate.Invalid(field+".parameters", "%v", err)
			}
			w.InputSchema = v
		}
		w.Strict = f.Strict
	case *parleyv1.Tool_ComputerUse:
		c := k.ComputerUse
		w.Type = versionOr(c.GetVersion(), "computer_", defaultComputerVersion)
		w.Name = nameOr("computer")
		if c.GetName() != "" {
			w.Name = c.GetName()
		}
		w.DisplayWidthPx, w.DisplayHeightPx = ptr(int64(c.GetDisplayWidth())), ptr(int64(c.GetDisplayHeight()))
		w.DisplayNumber = int64Ptr(c.DisplayNumber)
		if !e.same && w.Type == defaultComputerVersion {
			e.needBetas = append(e.needBetas, computerUseBetaFor20250124)
		}
	case *parleyv1.Tool_Bash:
		w.Type = versionOr(k.Bash.GetVersion(), "bash_", defaultBashVersion)
		w.Name = "bash"
		if k.Bash.GetName() != "" {
			w.Name = k.Bash.GetName()
		}
	case *parleyv1.Tool_TextEditor:
		te := k.TextEditor
		w.Type = versionOr(te.GetVersion(), "text_editor_", defaultEditorVersion)
		w.Name = te.GetName()
		if w.Name == "" {
			w.Name = "str_replace_based_edit_tool"
			if w.Type < "text_editor_20250429" {
				w.Name = "str_replace_editor"
			}
		}
		w.MaxCharacters = int64Ptr(te.MaxCharacters)
	case *parleyv1.Tool_WebSearch:
		ws := k.WebSearch
		w.Type = versionOr(ws.GetVersion(), "web_search_2", defaultWebSearchVersion)
		w.Name = nameOr("web_search")
		w.MaxUses = int64Ptr(ws.MaxUses)
		w.AllowedDomains, w.BlockedDomains = ws.GetAllowedDomains(), ws.GetBlockedDomains()
		if ul := ws.GetUserLocation(); ul != nil {
			w.UserLocation = &userLocation{Type: "approximate", City: ul.GetCity(), Region: ul.GetRegion(), Country: ul.GetCountry(), Timezone: ul.GetTimezone(), Unknown: e.takeTool(t, "user_location")}
		}
		if ws.GetDynamicRetrieval() != nil {
			// The dialect searches when the model decides to; a threshold
			// has no equivalent and is dropped.
			e.dropped = append(e.dropped, field+".web_search.dynamic_retrieval")
		}
	case *parleyv1.Tool_CodeExecution:
		w.Type = versionOr(k.CodeExecution.GetVersion(), "code_execution_", defaultCodeExecVersion)
		w.Name = nameOr("code_execution")
	case *parleyv1.Tool_UrlContext:
		w.Type = versionOr(k.UrlContext.GetVersion(), "web_fetch_", defaultWebFetchVersion)
		w.Name = nameOr("web_fetch")
	case *parleyv1.Tool_FileSearch:
		return tool{}, false, translate.Unsupported(thisDialect, field+".file_search", "the messages style has no file search over vector stores")
	case nil:
		// A tool another dialect kept whole, of a kind this one has not.
		e.dropped = append(e.dropped, field)
		return tool{}, false, nil
	}
	return w, true, nil
}

func (e *encoder) takeTool(t *parleyv1.Tool, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(t.GetExtensions(), thisDialect, prefix)
}

// toolResult fills b with a tool_result block, as media does.
func (e *encoder) toolResult(b *Block, p *parleyv1.Part, tr *parleyv1.ToolResult, at partAt) error {
	*b = Block{Type: "tool_result", ToolUseID: wireID(tr.GetCallId())}
	if tr.GetIsError() {
		b.IsError = ptr(true)
	}
	var inner []Block
	var inside string
	for j, c := range tr.GetContent() {
		if inside == "" {
			inside = at.name()
		}
		var err error
		inner, err = e.part(inner, c, partAt{path: translate.PartPath{Index: j}, inside: inside}, false)
		if err != nil {
			return err
		}
	}
	stringForm := len(inner) == 1 && inner[0].Type == "text" && inner[0].CacheControl == nil && len(inner[0].Citations) == 0 && len(inner[0].Unknown) == 0 &&
		(!e.same || markStringContent.In(p.GetExtensions()))
	var raw []byte
	var err error
	switch {
	case stringForm:
		raw, err = jsonx.Marshal(*inner[0].Text)
	case len(inner) == 0 && len(tr.GetContent()) == 0 && e.same:
		return nil
	default:
		if inner == nil {
			inner = []Block{}
		}
		raw, err = jsonx.Marshal(inner)
	}
	if err != nil {
		return err
	}
	b.Content = raw
	return nil
}

// toolInput is a tool call's arguments as the input object the dialect
// requires. Arguments that are not a JSON object (a model's malformed
// output) are passed as a string member, so that the tool sees them and
// can report the problem, instead of the whole reply failing.
func toolInput(args string) jsontext.Value {
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
