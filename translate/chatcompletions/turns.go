package chatcompletions

import (
	"slices"
	"strconv"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Messages, both ways: roles, the form of the content (null, a string or
// parts), the tool calls of assistant messages and tool messages,
// reasoning_content and refusals. Content parts are in media.go; tool
// results toward an upstream in tools.go.

var roles = map[string]parleyv1.Role{
	"system":    parleyv1.Role_ROLE_SYSTEM,
	"developer": parleyv1.Role_ROLE_DEVELOPER,
	"user":      parleyv1.Role_ROLE_USER,
	"assistant": parleyv1.Role_ROLE_ASSISTANT,
	"tool":      parleyv1.Role_ROLE_TOOL,
}

// place names a field of messages[msg], or of its content part part when
// part is not negative. The name is spelled only when an error needs it:
// a request of very many messages would otherwise build one for each.
type place struct{ msg, part int }

func (p place) at(sub string) string {
	s := "messages.[" + strconv.Itoa(p.msg) + "]"
	if p.part >= 0 {
		s += ".content.[" + strconv.Itoa(p.part) + "]"
	}
	return s + sub
}

func decodeMessage(wm *message, i int, names map[string]string) (*parleyv1.Message, error) {
	field := place{msg: i, part: -1}
	role, ok := roles[wm.Role]
	if !ok {
		if wm.Role == "function" {
			return nil, translate.Invalid(field.at(".role"), "the function role is deprecated; send tool results with role tool and tool_call_id")
		}
		return nil, translate.Invalid(field.at(".role"), "must be one of system, developer, user, assistant, tool; got %q", wm.Role)
	}
	m := &parleyv1.Message{Role: role, Name: wm.Name}
	jsonx.Keep(&m.Extensions, thisDialect, "", wm.Unknown)
	switch role {
	case parleyv1.Role_ROLE_TOOL:
		if wm.ToolCallID == "" {
			return nil, translate.Invalid(field.at(".tool_call_id"), "is required in a tool message")
		}
		content, err := decodeContent(m, wm.Content, field, false)
		if err != nil {
			return nil, err
		}
		m.Parts = []*parleyv1.Part{{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{
			CallId: wm.ToolCallID, Name: names[wm.ToolCallID], Content: content,
		}}}}
		return m, nil
	case parleyv1.Role_ROLE_ASSISTANT:
		if wm.ReasoningContent != nil {
			m.Parts = append(m.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: *wm.ReasoningContent}}})
		}
		content, err := decodeContent(m, wm.Content, field, true)
		if err != nil {
			return nil, err
		}
		m.Parts = append(m.Parts, content...)
		if wm.Refusal != nil {
			m.Parts = append(m.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Refusal{Refusal: &parleyv1.Refusal{Text: *wm.Refusal}}})
		}
		for j := range wm.ToolCalls {
			tc := &wm.ToolCalls[j]
			if tc.Function.Name == "" {
				return nil, translate.Invalid(field.at(".tool_calls.["+strconv.Itoa(j)+"].function.name"), "is required")
			}
			p := translate.CallPart(tc.ID, tc.Function.Name, tc.Function.Arguments)
			if tc.Type != "" && tc.Type != "function" {
				markCallType.KeepString(&p.Extensions, tc.Type)
			}
			jsonx.Keep(&p.Extensions, thisDialect, "", tc.Unknown)
			jsonx.Keep(&p.Extensions, thisDialect, "function", tc.Function.Unknown)
			names[tc.ID] = tc.Function.Name
			m.Parts = append(m.Parts, p)
		}
		return m, nil
	}
	if wm.Content == nil {
		return nil, translate.Invalid(field.at(".content"), "is required")
	}
	content, err := decodeContent(m, wm.Content, field, false)
	if err != nil {
		return nil, err
	}
	m.Parts = content
	return m, nil
}

// decodeContent reads a message's content; the form (string, parts or
// null) is noted on the message.
func decodeContent(m *parleyv1.Message, c *Content, field place, assistant bool) ([]*parleyv1.Part, error) {
	switch {
	case c == nil:
		return nil, nil
	case c.Null:
		markNull.Set(&m.Extensions)
		return nil, nil
	case c.String:
		markString.Set(&m.Extensions)
		return []*parleyv1.Part{translate.TextPart(c.Text)}, nil
	}
	parts := make([]*parleyv1.Part, 0, len(c.Parts))
	for j := range c.Parts {
		p, err := decodePart(&c.Parts[j], place{msg: field.msg, part: j}, assistant)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// dropEmptyText leaves out empty text parts, and turns left empty, of a
// client of another dialect.
func dropEmptyText(msgs []*parleyv1.Message) []*parleyv1.Message {
	if !slices.ContainsFunc(msgs, hasEmptyText) {
		return msgs
	}
	out := make([]*parleyv1.Message, 0, len(msgs))
	for _, m := range msgs {
		keep := m.GetParts()[:0:0]
		for _, p := range m.GetParts() {
			if t := p.GetText(); t != nil && t.GetText() == "" {
				continue
			}
			keep = append(keep, p)
		}
		if len(keep) == 0 {
			continue
		}
		if len(keep) != len(m.GetParts()) {
			m = &parleyv1.Message{Role: m.GetRole(), Parts: keep, Name: m.GetName(), Extensions: m.GetExtensions()}
		}
		out = append(out, m)
	}
	return out
}

// hasEmptyText says whether dropEmptyText changes the turn: it has no
// parts, or an empty text part.
func hasEmptyText(m *parleyv1.Message) bool {
	return len(m.GetParts()) == 0 || slices.ContainsFunc(m.GetParts(), func(p *parleyv1.Part) bool {
		t := p.GetText()
		return t != nil && t.GetText() == ""
	})
}

// hasAssistantRun says whether joinAssistantRuns changes the turns: two
// assistant turns of one name follow each other.
func hasAssistantRun(msgs []*parleyv1.Message) bool {
	for i := 1; i < len(msgs); i++ {
		if msgs[i].GetRole() == parleyv1.Role_ROLE_ASSISTANT && msgs[i-1].GetRole() == parleyv1.Role_ROLE_ASSISTANT && msgs[i].GetName() == msgs[i-1].GetName() {
			return true
		}
	}
	return false
}

// joinAssistantRuns makes one turn of consecutive assistant turns of a
// client of another dialect: the responses dialect, say, gives a
// reasoning item, a message and a function call as items of their own,
// while a service of this dialect reads one assistant message per turn,
// with the turn's reasoning beside its tool calls.
func joinAssistantRuns(msgs []*parleyv1.Message) []*parleyv1.Message {
	if !hasAssistantRun(msgs) {
		return msgs
	}
	out := msgs[:0:0]
	for _, m := range msgs {
		if n := len(out); n > 0 && m.GetRole() == parleyv1.Role_ROLE_ASSISTANT && out[n-1].GetRole() == parleyv1.Role_ROLE_ASSISTANT && m.GetName() == out[n-1].GetName() {
			prev := out[n-1]
			out[n-1] = &parleyv1.Message{Role: prev.GetRole(), Name: prev.GetName(), Extensions: prev.GetExtensions(), Parts: append(prev.GetParts()[:len(prev.GetParts()):len(prev.GetParts())], m.GetParts()...)}
			continue
		}
		out = append(out, m)
	}
	return out
}

var roleWords = map[parleyv1.Role]string{
	parleyv1.Role_ROLE_SYSTEM:    "system",
	parleyv1.Role_ROLE_DEVELOPER: "developer",
	parleyv1.Role_ROLE_USER:      "user",
	parleyv1.Role_ROLE_ASSISTANT: "assistant",
	parleyv1.Role_ROLE_TOOL:      "tool",
}

// message renders one canonical turn as one or more chat messages: tool
// results become tool messages (placed first, right after the assistant
// turn that called), the rest of the turn one message. i is the turn's
// index, for the names of its parts in errors and in X-Parley-Dropped.
// partField names part j of message i. It is not inlined: each copy the
// compiler inlined into message held its own buffers, and message runs
// under a stream's frames.
//
//go:noinline
func partField(i, j int) string {
	return "messages[" + strconv.Itoa(i) + "].parts[" + strconv.Itoa(j) + "]"
}

func (e *encoder) message(dst []message, m *parleyv1.Message, i int) ([]message, error) {
	// The name of a part (partField) is made only where it is used: text
	// parts and tool calls, most of a conversation, need none.
	role, ok := roleWords[m.GetRole()]
	if !ok {
		role = "user"
	}
	out, start := dst, len(dst)
	main := message{Role: role, Name: m.GetName(), Unknown: e.take(m.GetExtensions(), "")}
	var parts, moved []ContentPart
	var reasoning, replay, refusal strings.Builder
	hasReasoning, hasReplay, hasRefusal := false, false, false
	for j, p := range m.GetParts() {
		switch k := p.GetKind().(type) {
		case *parleyv1.Part_Text:
			parts = append(parts, ContentPart{Type: "text", Text: &k.Text.Text, Unknown: e.take(p.GetExtensions(), "")})
		case *parleyv1.Part_Media:
			cp, err := e.media(k.Media, p, partField(i, j))
			if err != nil {
				return nil, err
			}
			parts = append(parts, cp)
		case *parleyv1.Part_ToolCall:
			main.ToolCalls = e.appendToolCall(main.ToolCalls, p, k.ToolCall)
		case *parleyv1.Part_ToolResult:
			// A tool message of a client of this dialect keeps the form
			// its content came in: a string, or an array even of one
			// text part.
			own := m.GetRole() == parleyv1.Role_ROLE_TOOL && e.same
			tm, err := e.toolResult(k.ToolResult, partField(i, j), own && !markString.In(m.GetExtensions()), &moved)
			if err != nil {
				return nil, err
			}
			if own {
				tm.Unknown = main.Unknown
			}
			out = append(out, tm)
		case *parleyv1.Part_Reasoning:
			// Reasoning text goes back to a service of this dialect from
			// a client of this dialect (the client put it there), or
			// from another client when this very upstream wrote it
			// (reasoning.go). Services that never sent it reject it.
			switch {
			case e.same:
				hasReasoning = true
				reasoning.WriteString(k.Reasoning.GetText())
			case madeBy(p, e.t):
				hasReplay = true
				replay.WriteString(k.Reasoning.GetText())
			}
		case *parleyv1.Part_Refusal:
			if e.has(p.GetExtensions(), markRefusalPart) {
				parts = append(parts, ContentPart{Type: "refusal", Refusal: &k.Refusal.Text})
				continue
			}
			hasRefusal = true
			refusal.WriteString(k.Refusal.GetText())
		case *parleyv1.Part_ExecutableCode:
			text := "```python\n" + k.ExecutableCode.GetCode() + "\n```"
			parts = append(parts, ContentPart{Type: "text", Text: &text})
		case *parleyv1.Part_CodeExecutionResult:
			text := k.CodeExecutionResult.GetOutput()
			parts = append(parts, ContentPart{Type: "text", Text: &text})
		case *parleyv1.Part_HostedToolCall, *parleyv1.Part_HostedToolResult:
			// Provider-run tool steps only the provider that ran them can
			// read again.
		case *parleyv1.Part_ItemReference:
			return nil, translate.Unsupported(thisDialect, partField(i, j)+".item_reference", "an item reference needs the stored response it points to")
		case nil:
			// Another dialect's item kept whole for that dialect alone.
			e.dropped = append(e.dropped, partField(i, j))
		}
	}
	if m.GetRole() == parleyv1.Role_ROLE_TOOL {
		if len(moved) > 0 {
			out = append(out, message{Role: "user", Content: &Content{Parts: moved}})
		}
		return out, nil
	}
	// Media the tool results held come first in the rest of the turn,
	// which follows the tool messages.
	if len(moved) > 0 {
		parts = append(moved, parts...)
	}
	if hasReasoning {
		s := reasoning.String()
		main.ReasoningContent = &s
	} else if hasReplay && len(main.ToolCalls) > 0 {
		// Thinking services want their reasoning back within a tool
		// loop, and refuse the turn without it; elsewhere they ignore
		// it, or refuse it.
		s := replay.String()
		main.ReasoningContent = &s
	}
	if hasRefusal {
		s := refusal.String()
		main.Refusal = &s
	}
	main.Content = e.content(m, parts, role)
	if main.Content == nil && len(main.ToolCalls) == 0 && main.Refusal == nil && main.ReasoningContent == nil {
		if len(out) > start {
			return out, nil
		}
		main.Content = &Content{String: true}
	}
	return append(out, main), nil
}

// appendToolCall appends the tool call of part p to calls.
func (e *encoder) appendToolCall(calls []toolCall, p *parleyv1.Part, c *parleyv1.ToolCall) []toolCall {
	tc := toolCall{ID: c.GetId(), Type: "function", Function: function{Name: translate.CallName(c), Arguments: c.GetArguments()},
		Unknown: e.take(p.GetExtensions(), "")}
	tc.Function.Unknown = e.take(p.GetExtensions(), "function")
	if s, ok := markCallType.String(p.GetExtensions()); ok && e.same {
		tc.Type = s
	}
	if tc.Function.Arguments == "" {
		tc.Function.Arguments = "{}"
	}
	return append(calls, tc)
}

// content picks the content's form: as the client of this dialect sent
// it; else a string when the turn is text alone (the form every
// compatible server takes), else parts.
func (e *encoder) content(m *parleyv1.Message, parts []ContentPart, role string) *Content {
	ext := m.GetExtensions()
	if e.has(ext, markNull) {
		return &Content{Null: true}
	}
	if len(parts) == 0 {
		return nil
	}
	allText := true
	for _, p := range parts {
		if p.Type != "text" || len(p.Unknown) > 0 {
			allText = false
		}
	}
	switch {
	case e.same && e.has(ext, markString) && len(parts) == 1 && allText:
		return &Content{String: true, Text: *parts[0].Text}
	case e.same:
		return &Content{Parts: parts}
	case allText && len(parts) == 1:
		// One text (a turn of an agent's conversation, often long) is the
		// string as it is, not a copy.
		return &Content{String: true, Text: *parts[0].Text}
	case allText && role != "user":
		var b strings.Builder
		n := 2 * (len(parts) - 1)
		for _, p := range parts {
			n += len(*p.Text)
		}
		b.Grow(n)
		for i, p := range parts {
			if i > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(*p.Text)
		}
		return &Content{String: true, Text: b.String()}
	}
	return &Content{Parts: parts}
}
