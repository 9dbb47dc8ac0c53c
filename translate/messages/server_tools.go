package messages

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Server tools, both ways: server_tool_use blocks and the *_tool_result
// blocks of the tools the service runs itself, as canonical hosted tool
// calls and results.

var serverToolKinds = map[string]parleyv1.ToolKind{
	"web_search":                 parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH,
	"web_fetch":                  parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT,
	"code_execution":             parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION,
	"bash_code_execution":        parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION,
	"text_editor_code_execution": parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION,
}

func serverToolKind(name string) parleyv1.ToolKind {
	return serverToolKinds[name]
}

var resultTypes = map[string]parleyv1.ToolKind{
	"web_search_tool_result":                 parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH,
	"web_fetch_tool_result":                  parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT,
	"code_execution_tool_result":             parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION,
	"bash_code_execution_tool_result":        parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION,
	"text_editor_code_execution_tool_result": parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION,
	"tool_search_tool_result":                parleyv1.ToolKind_TOOL_KIND_UNSPECIFIED,
}

func serverResultKind(typ string) (parleyv1.ToolKind, bool) {
	k, ok := resultTypes[typ]
	return k, ok
}

func defaultResultType(k parleyv1.ToolKind) string {
	switch k {
	case parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:
		return "web_search_tool_result"
	case parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT:
		return "web_fetch_tool_result"
	case parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION:
		return "code_execution_tool_result"
	}
	return ""
}

// isErrorContent reports whether a server tool's result content is an
// error object (its type ends in "_error").
func isErrorContent(raw jsontext.Value) bool {
	if raw.Kind() != '{' {
		return false
	}
	var probe struct {
		Type string `json:"type"`
	}
	if jsonx.Unmarshal(raw, &probe) != nil {
		return false
	}
	return strings.HasSuffix(probe.Type, "_error")
}
