package translate

import (
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Function groups. The responses dialect groups functions under a
// namespace (the Codex CLI's sub-agent tools are one group), and its calls
// name the group beside the function. No other dialect has groups: toward
// them a grouped function goes by one flat name, its group and its name
// joined by GroupSeparator ("multi_agent_v1__spawn_agent"), which every
// dialect's function names allow, and a call of that name from any
// upstream is given back its group (GroupOf) for a client that has them.
// The canonical model keeps the group apart (FunctionTool.namespace,
// ToolCall.namespace), so nothing is parsed out of a name the client chose
// but a name the request's own tools made.

// GroupSeparator joins a group and a function's name into a flat name.
const GroupSeparator = "__"

// FlatToolName is the name a function of a group goes by in a dialect
// without groups; a function of no group keeps its name.
func FlatToolName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + GroupSeparator + name
}

// GroupOf returns the group and the name of the function that flat names
// among a request's tools, or ("", flat) when no grouped function of the
// request goes by that flat name.
func GroupOf(tools []*parleyv1.Tool, flat string) (namespace, name string) {
	if !strings.Contains(flat, GroupSeparator) {
		return "", flat
	}
	for _, t := range tools {
		if f := t.GetFunction(); f != nil && f.GetNamespace() != "" && FlatToolName(f.GetNamespace(), f.GetName()) == flat {
			return f.GetNamespace(), f.GetName()
		}
	}
	return "", flat
}

// CallName is the name a call goes by in a dialect without groups.
func CallName(c *parleyv1.ToolCall) string {
	return FlatToolName(c.GetNamespace(), c.GetName())
}

// FunctionName is the name a function goes by in a dialect without
// groups.
func FunctionName(f *parleyv1.FunctionTool) string {
	return FlatToolName(f.GetNamespace(), f.GetName())
}
