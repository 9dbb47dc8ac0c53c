package converse

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Tools, both ways: tool specifications and the tool choice toward the
// service, tool calls and tool results in turns, and tool calls in its
// replies.

// emptySchema is the input schema of a function declared without one.
var emptySchema = jsontext.Value(`{"type":"object","properties":{}}`)

func (e *encoder) toolUse(c *parleyv1.ToolCall, at translate.PartPath) (*ToolUseBlock, error) {
	args := strings.TrimSpace(c.GetArguments())
	if args == "" {
		args = "{}"
	}
	if !jsonx.IsObject(args) {
		return nil, translate.Unsupported(thisDialect, at.String()+".tool_call.arguments", "the arguments of tool call %q are not a JSON object", c.GetId())
	}
	e.called(translate.CallName(c))
	return &ToolUseBlock{ToolUseID: wireID(c.GetId()), Name: translate.CallName(c), Input: jsontext.Value(args)}, nil
}

// called records a tool the conversation calls.
func (e *encoder) called(name string) {
	e.hasTools = true
	if name != "" && !slices.Contains(e.callNames, name) {
		e.callNames = append(e.callNames, name)
	}
}

// toolResult is a tool result block: its text, images and documents (the
// kinds a tool result holds here), status error for a failed call. An
// empty result is sent with no content blocks.
func (e *encoder) toolResult(tr *parleyv1.ToolResult, at translate.PartPath) (*toolResultBlock, error) {
	e.called(tr.GetName())
	b := &toolResultBlock{ToolUseID: wireID(tr.GetCallId()), Content: []toolResultContent{}}
	if tr.GetIsError() {
		b.Status = "error"
	}
	for j, p := range tr.GetContent() {
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Text:
			if k.Text.GetText() == "" {
				continue
			}
			b.Content = append(b.Content, toolResultContent{Text: ptr(k.Text.GetText())})
		case *parleyv1.Part_Media:
			m, err := e.media(k.Media, translate.Index(at.String()+".tool_result.content", j)+".media")
			if err != nil {
				return nil, err
			}
			b.Content = append(b.Content, toolResultContent{Image: m.Image, Document: m.Document, Video: m.Video})
		default:
			// Anything else a result may hold (reasoning, calls) says
			// nothing to the model here.
		}
	}
	return b, nil
}

// tools builds the tool configuration. Only functions have a form here;
// the built-in tools of other services are an UnsupportedError. Tool
// choice none has no form: the tools are left out, unless the
// conversation already holds tool calls or results, which the service
// refuses without a tool configuration; then they are offered and the
// choice is listed in Outgoing.Dropped. A conversation with calls but no
// tools declared gets a specification with an empty schema for each
// tool it calls, for the same reason.
func (e *encoder) tools(w *Request) error {
	tc := e.req.GetToolChoice()
	allowed := map[string]bool{}
	for _, n := range tc.GetAllowedNames() {
		allowed[n] = true
	}
	var specs []tool
	for i, t := range e.req.GetTools() {
		field := translate.Index("tools", i)
		f := t.GetFunction()
		if t.GetKind() == nil {
			// A tool another dialect kept whole (a kind Parley does not
			// model): nothing this service can offer, and nothing the
			// request's own turns can have called.
			e.drop(field)
			continue
		}
		if f == nil {
			if hosted(t) {
				// A tool another service runs for its model (search,
				// code, files): this one has none, and the model simply
				// goes without, as it would here.
				e.drop(field)
				continue
			}
			return translate.Unsupported(thisDialect, field, "the Converse API takes functions only, not the built-in tool %s", toolKindName(t))
		}
		if len(allowed) > 0 && !allowed[f.GetName()] {
			continue // no allow-list here: offer only the allowed functions
		}
		schema := emptySchema
		if s := strings.TrimSpace(f.GetParameters()); s != "" {
			if !jsonx.IsObject(s) {
				return translate.Invalid(field+".function.parameters", "not a JSON object")
			}
			schema = jsontext.Value(s)
		}
		spec := &toolSpec{Name: translate.FunctionName(f), Description: f.GetDescription(), InputSchema: inputSchema{JSON: schema}}
		if f.GetStrict() {
			spec.Strict = ptr(true)
		}
		specs = append(specs, tool{ToolSpec: spec})
		if cp := newCachePoint(t.GetCacheControl()); cp != nil {
			specs = append(specs, tool{CachePoint: cp})
		}
	}
	var choice *toolChoice
	switch tc.GetMode() {
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
		choice = &toolChoice{Auto: &struct{}{}}
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		choice = &toolChoice{Any: &struct{}{}}
		if len(tc.GetAllowedNames()) == 1 {
			choice = &toolChoice{Tool: &specificTool{Name: tc.GetAllowedNames()[0]}}
		}
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
		if tc.GetName() == "" {
			return translate.Unsupported(thisDialect, "tool_choice.kind", "the Converse API cannot force the built-in tool %s", tc.GetKind())
		}
		choice = &toolChoice{Tool: &specificTool{Name: tc.GetName()}}
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		if len(specs) > 0 {
			if !e.hasTools {
				return nil // no tools: the model cannot call one
			}
			e.drop("tool_choice")
		}
	}
	if tc != nil && tc.ParallelCalls != nil && !tc.GetParallelCalls() {
		e.drop("tool_choice.parallel_calls")
	}
	if !hasSpec(specs) {
		if !e.hasTools {
			return nil
		}
		for _, name := range e.callNames {
			specs = append(specs, tool{ToolSpec: &toolSpec{Name: name, InputSchema: inputSchema{JSON: emptySchema}}})
		}
		if len(specs) == 0 {
			return nil
		}
		choice = nil
	}
	w.ToolConfig = &ToolConfig{Tools: specs, ToolChoice: choice}
	return nil
}

func hasSpec(ts []tool) bool {
	for _, t := range ts {
		if t.ToolSpec != nil {
			return true
		}
	}
	return false
}

// hosted reports whether a built-in tool is one the service runs itself;
// the others (computer use, bash, a text editor) the client runs, and
// their calls are the client's to answer.
func hosted(t *parleyv1.Tool) bool {
	switch t.GetKind().(type) {
	case *parleyv1.Tool_CodeExecution, *parleyv1.Tool_WebSearch, *parleyv1.Tool_FileSearch, *parleyv1.Tool_UrlContext:
		return true
	}
	return false
}

func toolKindName(t *parleyv1.Tool) string {
	switch t.GetKind().(type) {
	case *parleyv1.Tool_CodeExecution:
		return "code_execution"
	case *parleyv1.Tool_WebSearch:
		return "web_search"
	case *parleyv1.Tool_FileSearch:
		return "file_search"
	case *parleyv1.Tool_ComputerUse:
		return "computer_use"
	case *parleyv1.Tool_Bash:
		return "bash"
	case *parleyv1.Tool_TextEditor:
		return "text_editor"
	case *parleyv1.Tool_UrlContext:
		return "url_context"
	}
	return "of unknown kind"
}

// Tool-use ids: the service takes 1 to 64 letters, digits, "_" and "-".
// Another service's id that breaks the rule ("functions.Bash:0", a
// 100-character call id) goes out as idPrefix and 32 hex digits of its
// SHA-256, the same for the call and its result, so that they still
// match. The canonical id stays the original: nothing needs to map it
// back, since ids this service makes are valid and go out as they came.
const idPrefix = "tooluse_prly_"

func wireID(id string) string {
	if validID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return idPrefix + hex.EncodeToString(sum[:16])
}

func validID(id string) bool {
	return id != "" && len(id) <= 64 && translate.IDChars(id)
}
