package responses

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Namespaces, both ways. A namespace tool groups functions and custom
// tools under one name ({"type":"namespace","name":"multi_agent_v1",
// "description":...,"tools":[...]}: the Codex CLI's sub-agent tools), and
// the model's calls of them name the group (function_call.namespace).
// Each member becomes a canonical function of that group
// (FunctionTool.namespace), so that every other dialect offers it, by its
// flat name (translate.FlatToolName), and a call of it from any upstream
// comes back to the client with its group and its own name
// (translate.GroupOf). The namespace tool itself rides whole on its first
// member, for a service of this dialect, which gets it as it came; a
// namespace a client of another dialect's request holds (over Connect) is
// rebuilt from its members, with an empty description. A namespace's
// description has no place in a dialect without groups.

// namespaceTools decodes a namespace tool into its members; ok is false
// for a namespace that holds none, which is kept whole like any tool
// without a canonical home.
func namespaceTools(wt *tool, raw jsontext.Value, field string) (out []*parleyv1.Tool, ok bool, err error) {
	if wt.Name == "" {
		return nil, false, translate.Invalid(field+".name", "is required")
	}
	var members []tool
	if v, has := wt.Unknown["tools"]; has {
		if err := jsonx.Unmarshal(v, &members); err != nil {
			return nil, false, translate.Invalid(field+".tools", "%v", err)
		}
	}
	for j := range members {
		m := &members[j]
		mfield := field + ".tools[" + strconv.Itoa(j) + "]"
		if m.Name == "" {
			return nil, false, translate.Invalid(mfield+".name", "is required")
		}
		t := &parleyv1.Tool{}
		switch m.Type {
		case "function":
			t.Kind = &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: m.Name, Description: deref(m.Description), Parameters: string(m.Parameters), Strict: m.Strict}}
		case "custom":
			t.Kind = &parleyv1.Tool_Function{Function: customFunction(m)}
			mraw, err := jsonx.Marshal(m)
			if err != nil {
				return nil, false, translate.Invalid(mfield, "%v", err)
			}
			markTool.Keep(&t.Extensions, mraw)
		default:
			return nil, false, translate.Invalid(mfield+".type", "a namespace holds function and custom tools; got %q", m.Type)
		}
		t.GetFunction().Namespace = wt.Name
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, false, nil
	}
	markNamespace.Keep(&out[0].Extensions, raw)
	return out, true, nil
}

// namespaceTool renders the member of a group: the whole namespace tool
// at its first member, nothing at the others.
func (e *encoder) namespaceTool(t *parleyv1.Tool, f *parleyv1.FunctionTool, field string) (tool, bool, error) {
	if e.same {
		v, first := markNamespace.Value(t.GetExtensions())
		if !first {
			return tool{}, false, nil
		}
		var wt tool
		if err := jsonx.Unmarshal(v, &wt); err != nil {
			return tool{}, false, err
		}
		return wt, true, nil
	}
	if e.groups[f.GetNamespace()] {
		return tool{}, false, nil
	}
	if e.groups == nil {
		e.groups = map[string]bool{}
	}
	e.groups[f.GetNamespace()] = true
	var members []tool
	for _, other := range e.req.GetTools() {
		of := other.GetFunction()
		if of == nil || of.GetNamespace() != f.GetNamespace() {
			continue
		}
		m := &parleyv1.Tool{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{Name: of.GetName(), Description: of.GetDescription(), Parameters: of.GetParameters(), Strict: of.Strict}}}
		wt, ok, err := e.tool(m, field)
		if err != nil {
			return tool{}, false, err
		}
		if ok {
			members = append(members, wt)
		}
	}
	list, err := jsonx.Marshal(members)
	if err != nil {
		return tool{}, false, err
	}
	return tool{Type: "namespace", Name: f.GetNamespace(), Unknown: jsonx.Unknown{"description": jsontext.Value(`""`), "tools": list}}, true, nil
}

// Tools declared in the input. An additional_tools input item declares
// tools as the request's tools member does, at its place in the
// conversation (the Codex CLI declares its tools that way for some
// models: {"type":"additional_tools","role":"developer","tools":[...]}).
// Its tools are the request's tools for every other dialect, namespaces
// included, and the item itself goes whole to a service of this dialect,
// which therefore does not get its tools a second time in tools.

// decodeInputTools adds the tools of the input's additional_tools items,
// read by reflection off the request's stack (their tools nest as deep as
// their schemas).
func decodeInputTools(req *parleyv1.Request, items []Item) error {
	for i := range items {
		if items[i].Type != "additional_tools" {
			continue
		}
		var err error
		offstack.Run(func() { err = decodeAdditionalTools(req, &items[i], "input.["+strconv.Itoa(i)+"].tools") })
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeAdditionalTools adds the tools of an additional_tools item.
func decodeAdditionalTools(req *parleyv1.Request, it *Item, field string) error {
	var list []tool
	if v, ok := it.Unknown["tools"]; ok {
		if err := jsonx.Unmarshal(v, &list); err != nil {
			return translate.Invalid(field, "%v", err)
		}
	}
	n := len(req.Tools)
	if err := decodeToolList(req, list, field, inPlace); err != nil {
		return err
	}
	for _, t := range req.Tools[n:] {
		markInInput.Keep(&t.Extensions, jsontext.Value("true"))
	}
	return nil
}
