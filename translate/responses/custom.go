package responses

import (
	"maps"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Custom tools, both ways. A custom tool takes free text rather than JSON
// arguments (the Codex CLI's apply_patch is one, with a grammar for its
// input); no other dialect has such a tool. Toward every upstream it is a
// function with one string parameter, input, whose description carries
// the tool's format, so that a model of any service can call it; the tool
// itself stays whole in the extension bag, for a service of this dialect.
// A call of it from any upstream comes back to the client as a
// custom_tool_call whose input is that parameter, and the client's
// custom_tool_call and custom_tool_call_output items go upstream as a
// function call and its result (kept whole, too, for this dialect).

// customInputSchema is the parameters of the function a custom tool
// becomes; %s is the description of its input.
const customInputSchema = `{"type":"object","properties":{"input":{"type":"string","description":%s}},"required":["input"],"additionalProperties":false}`

// customFunction is the function a custom tool becomes.
func customFunction(wt *tool) *parleyv1.FunctionTool {
	what := "The tool's whole input, as free text."
	if f, ok := wt.Unknown["format"]; ok {
		var format struct {
			Type       string `json:"type"`
			Syntax     string `json:"syntax"`
			Definition string `json:"definition"`
		}
		if jsonx.Unmarshal(f, &format) == nil && format.Type == "grammar" && format.Definition != "" {
			what = "The tool's whole input, as free text that follows this " + format.Syntax + " grammar:\n" + format.Definition
		}
	}
	return &parleyv1.FunctionTool{
		Name:        wt.Name,
		Description: deref(wt.Description),
		Parameters:  customParameters(what),
	}
}

// customParameters writes customInputSchema with what as its input's
// description, quoted as JSON: a grammar may hold any character.
func customParameters(what string) string {
	before, after, _ := strings.Cut(customInputSchema, "%s")
	b := make([]byte, 0, len(customInputSchema)+len(what)+16)
	b = append(b, before...)
	b, ok := jsonx.AppendQuote(b, what)
	if !ok {
		// Text read from JSON is valid UTF-8; anything else is written
		// as jsontext writes it, invalid bytes replaced.
		b = append(b[:len(before)], jsonx.Quote(what)...)
	}
	return string(append(b, after...))
}

// callNames is what rendering a call for a client needs of the request's
// tools: which are custom, and which are grouped.
type callNames struct {
	// customs holds the flat names of the custom tools.
	customs map[string]bool
	tools   []*parleyv1.Tool
}

func callNamesOf(req *parleyv1.Request) *callNames {
	return &callNames{customs: customTools(req), tools: req.GetTools()}
}

// of returns the group and the name a call is rendered with, and whether
// it calls a custom tool. A call of a grouped function from a service
// without groups names it by its flat name.
func (n *callNames) of(c *parleyv1.ToolCall) (namespace, name string, custom bool) {
	namespace, name = c.GetNamespace(), c.GetName()
	if namespace == "" {
		namespace, name = translate.GroupOf(n.tools, name)
	}
	return namespace, name, n.customs[translate.FlatToolName(namespace, name)]
}

// customTools names (flat) the tools of req that its client declared
// custom.
func customTools(req *parleyv1.Request) map[string]bool {
	var out map[string]bool
	for _, t := range req.GetTools() {
		f := t.GetFunction()
		if f == nil {
			continue
		}
		v, ok := markTool.Value(t.GetExtensions())
		if !ok {
			continue
		}
		var wt struct {
			Type string `json:"type"`
		}
		if jsonx.Unmarshal(v, &wt) == nil && wt.Type == "custom" {
			if out == nil {
				out = map[string]bool{}
			}
			out[translate.FunctionName(f)] = true
		}
	}
	return out
}

// customArguments are the function arguments of a custom tool's input.
func customArguments(input string) string {
	b, _ := jsonx.Marshal(map[string]string{"input": input})
	return string(b)
}

// customInput is the input a custom tool's call carries in its arguments:
// the input parameter, else the arguments as they are.
func customInput(args string) string {
	var a struct {
		Input *string `json:"input"`
	}
	if jsonx.Unmarshal([]byte(args), &a) == nil && a.Input != nil {
		return *a.Input
	}
	return args
}

// customCallOut renders the call of a custom tool.
func customCallOut(it Item, args string) Item {
	it.Type, it.Arguments = "custom_tool_call", nil
	if strings.HasPrefix(it.ID, "fc_") {
		it.ID = "ctc_" + strings.TrimPrefix(it.ID, "fc_")
	}
	it.Unknown = maps.Clone(it.Unknown)
	if it.Unknown == nil {
		it.Unknown = jsonx.Unknown{}
	}
	it.Unknown["input"] = jsontext.Value(strconv.Quote(customInput(args)))
	return it
}

// customItem decodes a client's custom_tool_call or
// custom_tool_call_output item: a function call and its result, the item
// kept whole for this dialect.
func (d *itemDecoder) customItem(m *parleyv1.Message, it *Item, field string, add func(*parleyv1.Part)) (*parleyv1.Message, error) {
	raw, err := jsonx.Marshal(it)
	if err != nil {
		return nil, translate.Invalid(field, "%v", err)
	}
	m.Extensions = nil
	if it.CallID == "" {
		return nil, translate.Invalid(field+".call_id", "is required in a %s", it.Type)
	}
	var p *parleyv1.Part
	if it.Type == "custom_tool_call" {
		if it.Name == "" {
			return nil, translate.Invalid(field+".name", "is required in a custom_tool_call")
		}
		var input string
		if v, ok := it.Unknown["input"]; ok {
			if err := jsonx.Unmarshal(v, &input); err != nil {
				return nil, translate.Invalid(field+".input", "must be a string")
			}
		}
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		p = mark(translate.CallPart(it.CallID, it.Name, customArguments(input)), it)
		p.GetToolCall().Namespace = it.Namespace
		d.names[it.CallID] = translate.FlatToolName(it.Namespace, it.Name)
	} else {
		content, err := d.output(it.Output, field+".output")
		if err != nil {
			return nil, err
		}
		m.Role = parleyv1.Role_ROLE_TOOL
		p = &parleyv1.Part{ItemId: it.ID, Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: it.CallID, Name: d.names[it.CallID], Content: content}}}
	}
	markItem.Keep(&p.Extensions, raw)
	add(p)
	return m, nil
}
