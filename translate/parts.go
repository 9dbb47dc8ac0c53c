package translate

import (
	"fmt"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// TextPart is a part holding plain text.
func TextPart(s string) *parleyv1.Part {
	return &parleyv1.Part{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: s}}}
}

// CallPart is a tool call with its arguments as JSON text.
func CallPart(id, name, args string) *parleyv1.Part {
	return &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: id, Name: name, Arguments: args}}}
}

// ResultPart is the result of the call with the given id, as text.
func ResultPart(callID, text string, isError bool) *parleyv1.Part {
	return &parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: callID, IsError: isError, Content: []*parleyv1.Part{TextPart(text)}}}}
}

// NewMessage is a turn of role holding parts.
func NewMessage(role parleyv1.Role, parts ...*parleyv1.Part) *parleyv1.Message {
	return &parleyv1.Message{Role: role, Parts: parts}
}

// CacheHintPaths lists, by canonical field path, every cache hint in a
// request: for dialects with no per-block cache control to report as
// dropped.
func CacheHintPaths(req *parleyv1.Request) []string {
	var out []string
	for i, p := range req.GetInstructions() {
		if p.GetCacheControl() != nil {
			out = append(out, fmt.Sprintf("instructions[%d].cache_control", i))
		}
	}
	for i, m := range req.GetMessages() {
		for j, p := range m.GetParts() {
			if p.GetCacheControl() != nil {
				out = append(out, fmt.Sprintf("messages[%d].parts[%d].cache_control", i, j))
			}
		}
	}
	for i, t := range req.GetTools() {
		if t.GetCacheControl() != nil {
			out = append(out, fmt.Sprintf("tools[%d].cache_control", i))
		}
	}
	return out
}
