package cloudtest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/converse"
)

// anthropicModel reports whether a model id (a model, an inference
// profile or an ARN) is one of Anthropic's, whose request fields and
// rules (thinking, counting) the fake knows.
func anthropicModel(id string) bool {
	m := strings.ToLower(id)
	return strings.Contains(m, "anthropic.") || strings.Contains(m, "claude")
}

// invalid is a ValidationException's message.
func invalid(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// thinkingField is the thinking setting of an Anthropic model, as its
// model request field.
type thinkingField struct {
	Type         string `json:"type"`
	BudgetTokens *int64 `json:"budget_tokens,omitzero"`
}

// thinking reads the thinking setting from the model request fields.
func (in *converseInput) thinking() (*thinkingField, error) {
	if len(in.fields) == 0 {
		return nil, nil
	}
	var f map[string]jsontext.Value
	if err := json.Unmarshal(in.fields, &f); err != nil {
		return nil, invalid("additionalModelRequestFields must be a JSON object")
	}
	raw, ok := f["thinking"]
	if !ok {
		return nil, nil
	}
	var th thinkingField
	if err := json.Unmarshal(raw, &th, json.RejectUnknownMembers(true)); err != nil {
		return nil, invalid("The model returned the following errors: thinking: %v", err)
	}
	return &th, nil
}

// on reports whether the setting turns thinking on.
func (th *thinkingField) on() bool {
	return th != nil && (th.Type == "enabled" || th.Type == "adaptive")
}

// check checks what the service (and the Anthropic models behind it)
// check before answering, with their messages where they are known.
func (in *converseInput) check(id string) error {
	if err := in.checkFields(id); err != nil {
		return err
	}
	th, _ := in.thinking()
	for i, s := range in.system {
		switch {
		case (s.Text == nil) == (s.CachePoint == nil):
			return invalid("system.%d: a system content block holds exactly one of text and cachePoint", i)
		case s.Text != nil && strings.TrimSpace(*s.Text) == "":
			return invalid("The text field in the SystemContentBlock object at system.%d is blank. Add text to the text field, and try again.", i)
		case s.CachePoint != nil && s.CachePoint.Type != "default":
			return invalid("system.%d.cachePoint.type must be default", i)
		}
	}
	tools, err := in.checkTools(th)
	if err != nil {
		return err
	}
	msgs := in.messages
	if len(msgs) == 0 || msgs[0].Role != "user" {
		return invalid("A conversation must start with a user message. Try again with a conversation that starts with a user message.")
	}
	var usesTools bool
	var calls []string // the tool-use ids of the previous assistant turn
	for i, m := range msgs {
		switch {
		case m.Role != "user" && m.Role != "assistant":
			return invalid("1 validation error detected: Value '%s' at 'messages.%d.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]", m.Role, i+1)
		case i > 0 && m.Role == msgs[i-1].Role:
			return invalid("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.")
		case len(m.Content) == 0:
			return invalid("The content field in the Message object at messages.%d is empty. Add a ContentBlock object to the content field and try again.", i)
		}
		var answered, called []string
		for j, b := range m.Content {
			at := fmt.Sprintf("messages.%d.content.%d", i, j)
			if n := blockMembers(&b); n != 1 {
				return invalid("%s: a content block holds exactly one member, not %d", at, n)
			}
			switch {
			case b.Text != nil:
				if strings.TrimSpace(*b.Text) == "" {
					return invalid("The text field in the ContentBlock object at %s is blank. Add text to the text field, and try again.", at)
				}
			case b.ToolUse != nil:
				usesTools = true
				tu := b.ToolUse
				switch {
				case m.Role != "assistant":
					return invalid("%s: a toolUse block is only valid in an assistant turn", at)
				case !idPattern.MatchString(tu.ToolUseID):
					return invalid("1 validation error detected: Value '%s' at '%s.member.toolUse.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ and have length between 1 and 64", tu.ToolUseID, at)
				case !idPattern.MatchString(tu.Name):
					return invalid("%s.toolUse.name %q is not a valid tool name", at, tu.Name)
				case !tu.Input.IsValid() || tu.Input.Kind() != '{':
					return invalid("%s.toolUse.input must be a JSON object", at)
				case slices.Contains(called, tu.ToolUseID):
					return invalid("%s: toolUse ids must be unique, %q is repeated", at, tu.ToolUseID)
				}
				called = append(called, tu.ToolUseID)
			case b.ToolResult != nil:
				usesTools = true
				tr := b.ToolResult
				switch {
				case m.Role != "user":
					return invalid("%s: a toolResult block is only valid in a user turn", at)
				case !idPattern.MatchString(tr.ToolUseID):
					return invalid("1 validation error detected: Value '%s' at '%s.member.toolResult.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ and have length between 1 and 64", tr.ToolUseID, at)
				case !slices.Contains(calls, tr.ToolUseID):
					return invalid("The model returned the following errors: %s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", at, tr.ToolUseID)
				case tr.Status != "" && tr.Status != "success" && tr.Status != "error":
					return invalid("%s.toolResult.status must be success or error", at)
				}
				answered = append(answered, tr.ToolUseID)
			case b.ReasoningContent != nil:
				if err := checkReasoning(id, m.Role, at, b.ReasoningContent); err != nil {
					return err
				}
			case b.CachePoint != nil:
				if b.CachePoint.Type != "default" {
					return invalid("%s.cachePoint.type must be default", at)
				}
			case b.Image != nil:
				if err := checkMedia(at+".image", b.Image.Source, b.Image.Format, "png", "jpeg", "gif", "webp"); err != nil {
					return err
				}
			case b.Document != nil:
				if b.Document.Name == "" {
					return invalid("%s.document.name is required", at)
				}
				if err := checkMedia(at+".document", b.Document.Source, b.Document.Format, "pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"); err != nil {
					return err
				}
			case b.Video != nil:
				if err := checkMedia(at+".video", b.Video.Source, b.Video.Format, "mkv", "mov", "mp4", "webm", "flv", "mpeg", "mpg", "wmv", "three_gp"); err != nil {
					return err
				}
			}
		}
		// The models behind the service want every call of a turn
		// answered at the front of the next one.
		if m.Role == "user" && i > 0 {
			for _, c := range calls {
				if !slices.Contains(answered, c) {
					return invalid("The model returned the following errors: messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, c)
				}
			}
		}
		calls = called
	}
	if usesTools && len(tools) == 0 {
		return invalid("The toolConfig field must be defined when using toolUse and toolResult content blocks.")
	}
	// An Anthropic model that thinks wants the turn that made the calls
	// being answered to begin with the reasoning it signed.
	if th.on() && len(msgs) >= 2 {
		last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
		if last.Role == "user" && slices.ContainsFunc(last.Content, func(b converse.ContentBlock) bool { return b.ToolResult != nil }) &&
			prev.Content[0].ReasoningContent == nil {
			return invalid("The model returned the following errors: messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceding the lastmost set of `tool_use` and `tool_result` blocks).", len(msgs)-2, blockType(&prev.Content[0]))
		}
	}
	return nil
}

// checkFields checks the model request fields and the sampling settings
// that go with them.
func (in *converseInput) checkFields(id string) error {
	if len(in.fields) > 0 && !anthropicModel(id) {
		// The fields Parley knows are Anthropic's; other models refuse
		// them as keys they do not have.
		var f map[string]jsontext.Value
		if err := json.Unmarshal(in.fields, &f); err != nil {
			return invalid("additionalModelRequestFields must be a JSON object")
		}
		for _, k := range []string{"thinking", "top_k"} {
			if _, has := f[k]; has {
				return invalid("Malformed input request: extraneous key [%s] is not permitted, please reformat your input and try again.", k)
			}
		}
	}
	th, err := in.thinking()
	if err != nil {
		return err
	}
	if th == nil {
		return nil
	}
	switch th.Type {
	case "enabled":
		if th.BudgetTokens == nil || *th.BudgetTokens < 1024 {
			return invalid("The model returned the following errors: thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		}
		if c := in.config; c != nil && c.MaxTokens != nil && int64(*c.MaxTokens) <= *th.BudgetTokens {
			return invalid("The model returned the following errors: `max_tokens` must be greater than `thinking.budget_tokens`.")
		}
	case "adaptive", "disabled":
		if th.BudgetTokens != nil {
			return invalid("The model returned the following errors: thinking.%s.budget_tokens: Extra inputs are not permitted", th.Type)
		}
	default:
		return invalid("The model returned the following errors: thinking.type: Input tag '%s' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'", th.Type)
	}
	if !th.on() {
		return nil
	}
	if c := in.config; c != nil {
		if c.Temperature != nil && *c.Temperature != 1 {
			return invalid("The model returned the following errors: `temperature` may only be set to 1 when thinking is enabled.")
		}
		if c.TopP != nil && *c.TopP < 0.95 {
			return invalid("The model returned the following errors: `top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.")
		}
	}
	var f map[string]jsontext.Value
	_ = json.Unmarshal(in.fields, &f)
	if _, has := f["top_k"]; has {
		return invalid("The model returned the following errors: `top_k` must be unset when thinking is enabled.")
	}
	return nil
}

// checkTools checks the tool configuration and returns the names of the
// tools it declares.
func (in *converseInput) checkTools(th *thinkingField) ([]string, error) {
	tc := in.tools
	if tc == nil {
		return nil, nil
	}
	if len(tc.Tools) == 0 {
		return nil, invalid("1 validation error detected: Value '[]' at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	var names []string
	for i, t := range tc.Tools {
		at := fmt.Sprintf("toolConfig.tools.%d", i)
		switch s := t.ToolSpec; {
		case (s == nil) == (t.CachePoint == nil):
			return nil, invalid("%s: a tool holds exactly one of toolSpec and cachePoint", at)
		case s == nil:
			continue
		case !idPattern.MatchString(s.Name):
			return nil, invalid("1 validation error detected: Value '%s' at '%s.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ and have length between 1 and 64", s.Name, at)
		case slices.Contains(names, s.Name):
			return nil, invalid("The model returned the following errors: tools: Tool names must be unique.")
		case !s.InputSchema.JSON.IsValid() || s.InputSchema.JSON.Kind() != '{':
			return nil, invalid("%s.toolSpec.inputSchema.json must be a JSON object", at)
		}
		names = append(names, t.ToolSpec.Name)
	}
	if c := tc.ToolChoice; c != nil {
		n := 0
		for _, set := range []bool{c.Auto != nil, c.Any != nil, c.Tool != nil} {
			if set {
				n++
			}
		}
		switch {
		case n != 1:
			return nil, invalid("toolConfig.toolChoice holds exactly one of auto, any and tool")
		case c.Tool != nil && !slices.Contains(names, c.Tool.Name):
			return nil, invalid("toolConfig.toolChoice.tool.name %q names no tool of toolConfig.tools", c.Tool.Name)
		case th.on() && c.Auto == nil:
			return nil, invalid("The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use.")
		}
	}
	return names, nil
}

// checkReasoning checks a reasoning block: only an assistant turn holds
// one, and only with the signature the fake's model made, as the service
// refuses a signature it did not make. The fake never makes redacted
// reasoning, so redacted content is never its own either.
func checkReasoning(id, role, at string, rc *converse.ReasoningContent) error {
	switch {
	case role != "assistant":
		return invalid("%s: a reasoningContent block is only valid in an assistant turn", at)
	case (rc.ReasoningText == nil) == (len(rc.RedactedContent) == 0):
		return invalid("%s.reasoningContent holds exactly one of reasoningText and redactedContent", at)
	case rc.ReasoningText == nil:
		return invalid("The model returned the following errors: %s: Invalid `data` in `redacted_thinking` block", at)
	case rc.ReasoningText.Signature != Signature("bedrock", id):
		return invalid("The model returned the following errors: %s: Invalid `signature` in `thinking` block", at)
	}
	return nil
}

// checkMedia checks a media block's format and that its source is either
// bytes or an S3 object.
func checkMedia(at string, src *converse.MediaSource, format string, formats ...string) error {
	switch {
	case format != "" && !slices.Contains(formats, format):
		return invalid("1 validation error detected: Value '%s' at '%s.format' failed to satisfy constraint: Member must satisfy enum value set: %v", format, at, formats)
	case src == nil || (len(src.Bytes) == 0) == (src.S3Location == nil):
		return invalid("%s.source holds exactly one of bytes and s3Location", at)
	case src.S3Location != nil && !strings.HasPrefix(src.S3Location.URI, "s3://"):
		return invalid("%s.source.s3Location.uri must be an s3:// URI", at)
	}
	return nil
}

// blockMembers counts the members a content block sets: a union holds one.
func blockMembers(b *converse.ContentBlock) int {
	n := 0
	for _, set := range []bool{b.Text != nil, b.Image != nil, b.Document != nil, b.Video != nil, b.ToolUse != nil,
		b.ToolResult != nil, b.CachePoint != nil, b.ReasoningContent != nil, b.CitationsContent != nil} {
		if set {
			n++
		}
	}
	return n
}

// blockType names a content block as the models' errors do.
func blockType(b *converse.ContentBlock) string {
	switch {
	case b.ToolUse != nil:
		return "tool_use"
	case b.ToolResult != nil:
		return "tool_result"
	case b.Text != nil:
		return "text"
	}
	return "other"
}
