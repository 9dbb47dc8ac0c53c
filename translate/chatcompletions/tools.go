package chatcompletions

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Tools, both ways: function tools, web_search_options, tool_choice and
// parallel_tool_calls, and tool results as tool messages toward an
// upstream. Tool calls ride in assistant messages (turns.go).

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
			jsonx.Keep(&t.Extensions, thisDialect, "function", f.Unknown)
			if f.Description != nil && *f.Description == "" {
				jsonx.KeepValue(&t.Extensions, thisDialect, "function/description", jsontext.Value(`""`))
			}
			jsonx.Keep(&t.Extensions, thisDialect, "", wt.Unknown)
		default:
			raw, err := jsonx.Marshal(wt)
			if err != nil {
				return translate.Invalid(field, "%v", err)
			}
			markTool.Keep(&t.Extensions, raw)
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
				jsonx.Keep(&tool.Extensions, thisDialect, "user_location/approximate", a.Unknown)
			}
			jsonx.Keep(&tool.Extensions, thisDialect, "user_location", loc.Unknown)
		}
		jsonx.Keep(&tool.Extensions, thisDialect, "", ws.Unknown)
		markWebSearch.Keep(&tool.Extensions, jsontext.Value("true"))
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
			markAllowedMode.Keep(&req.Extensions, jsontext.Value("true"))
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

func (e *encoder) tools(w *Request) error {
	for i, t := range e.req.GetTools() {
		field := "tools[" + strconv.Itoa(i) + "]"
		switch k := t.GetKind().(type) {
		case *parleyv1.Tool_Function:
			f := k.Function
			fd := &functionDef{Name: translate.FunctionName(f), Strict: f.Strict, Unknown: e.take(t.GetExtensions(), "function")}
			if f.GetDescription() != "" || e.same && jsonx.Has(t.GetExtensions(), thisDialect, "function/description") {
				d := f.GetDescription()
				fd.Description = &d
			}
			delete(fd.Unknown, "description")
			if f.GetParameters() != "" {
				fd.Parameters = jsontext.Value(f.GetParameters())
			} else if !e.same {
				fd.Parameters = jsontext.Value(`{"type":"object","properties":{}}`)
			}
			w.Tools = append(w.Tools, tool{Type: "function", Function: fd, Unknown: e.take(t.GetExtensions(), "")})
		case *parleyv1.Tool_WebSearch:
			ws := &webSearchOptions{Unknown: e.take(t.GetExtensions(), "")}
			switch k.WebSearch.GetContextSize() {
			case parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_LOW:
				ws.SearchContextSize = "low"
			case parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_MEDIUM:
				ws.SearchContextSize = "medium"
			case parleyv1.SearchContextSize_SEARCH_CONTEXT_SIZE_HIGH:
				ws.SearchContextSize = "high"
			default:
				if !e.same {
					// The service's default, named: an empty options
					// object asks for the same, but the official SDKs'
					// types cannot hold one.
					ws.SearchContextSize = "medium"
				}
			}
			if l := k.WebSearch.GetUserLocation(); l != nil {
				ws.UserLocation = &webSearchLocation{Type: "approximate", Unknown: e.take(t.GetExtensions(), "user_location"),
					Approximate: &approximate{City: l.GetCity(), Country: l.GetCountry(), Region: l.GetRegion(), Timezone: l.GetTimezone(), Unknown: e.take(t.GetExtensions(), "user_location/approximate")}}
			}
			if len(k.WebSearch.GetAllowedDomains()) > 0 || len(k.WebSearch.GetBlockedDomains()) > 0 {
				e.dropped = append(e.dropped, field+".web_search.allowed_domains")
			}
			w.WebSearchOptions = ws
		case nil:
			v, ok := markTool.Value(t.GetExtensions())
			if !ok {
				// A tool another dialect kept whole, of a kind this one
				// has not.
				e.dropped = append(e.dropped, field)
				continue
			}
			var raw tool
			if err := jsonx.Unmarshal(v, &raw); err != nil {
				return err
			}
			w.Tools = append(w.Tools, raw)
		default:
			return translate.Unsupported(thisDialect, field, "the chat-completions style has functions and web search only")
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
			return translate.Unsupported(thisDialect, "tool_choice.kind", "the chat-completions style can force a function only")
		}
		w.ToolChoice = &ToolChoice{Type: "function", Function: &namedFunc{Name: tc.GetName()}}
		return nil
	default:
		return nil
	}
	switch names := tc.GetAllowedNames(); {
	case len(names) == 1 && mode == "required" && !e.has(e.req.GetExtensions(), markAllowedMode):
		w.ToolChoice = &ToolChoice{Type: "function", Function: &namedFunc{Name: names[0]}}
	case len(names) > 0:
		at := &allowedTools{Mode: mode}
		if mode == "none" {
			at.Mode = "auto"
		}
		for _, n := range names {
			at.Tools = append(at.Tools, tool{Type: "function", Function: &functionDef{Name: n}})
		}
		w.ToolChoice = &ToolChoice{Type: "allowed_tools", AllowedTools: at}
	default:
		w.ToolChoice = &ToolChoice{Mode: mode}
	}
	return nil
}

// toolResult renders a tool result as a tool message. For a client of
// this dialect the content is a string when it is one plain text part,
// unless asParts says the client sent it as an array. The service takes a
// tool message's content as a string or a non-empty array of text parts,
// not null: a result with no content (sent as null, [] or not at all)
// goes as "", as it does for a client of another dialect.
//
// Tool messages hold text alone, so the result's images, audio and files
// are moved: the tool message says where they went, and they come back
// in moved, for a user message after the tool messages. What this dialect
// cannot carry even there (video, an image by file id) is described in
// the tool message instead.
// toolResultMedia is the text that stands in a tool message for media
// of its result, which moves to the user message after it (moved), or is
// left out when this upstream cannot take it.
func (e *encoder) toolResultMedia(r *parleyv1.ToolResult, p *parleyv1.Part, m *parleyv1.Media, field string, j int, moved *[]ContentPart) ContentPart {
	noun := mediaNoun(m)
	cp, err := e.media(m, p, field+".tool_result.content["+strconv.Itoa(j)+"]")
	if err != nil {
		text := "[" + noun + " omitted: " + err.Error() + "]"
		return ContentPart{Type: "text", Text: &text}
	}
	label := "[" + noun + " from the result of tool call " + r.GetCallId() + "]"
	*moved = append(*moved, ContentPart{Type: "text", Text: &label}, cp)
	text := "[" + noun + " attached in the next user message]"
	return ContentPart{Type: "text", Text: &text}
}

func (e *encoder) toolResult(r *parleyv1.ToolResult, field string, asParts bool, moved *[]ContentPart) (message, error) {
	tm := message{Role: "tool", ToolCallID: r.GetCallId()}
	var parts []ContentPart
	for j, p := range r.GetContent() {
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Text:
			parts = append(parts, ContentPart{Type: "text", Text: &k.Text.Text, Unknown: e.take(p.GetExtensions(), "")})
		case *parleyv1.Part_Media:
			parts = append(parts, e.toolResultMedia(r, p, k.Media, field, j, moved))
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
	if e.same && len(parts) > 0 {
		tm.Content = &Content{Parts: parts}
		if !asParts && len(parts) == 1 && parts[0].Type == "text" && len(parts[0].Unknown) == 0 {
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
