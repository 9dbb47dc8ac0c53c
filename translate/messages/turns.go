package messages

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Turns and their content blocks, both ways: a client's messages into
// canonical messages and parts, and canonical turns (normalised for a
// client of another dialect) into an upstream's messages. The walk
// dispatches on the block type; what each kind of block maps to is in the
// file of its concern (reasoning.go, tools.go, server_tools.go, media.go,
// citations.go).

func (d *decoder) message(w *message, path string) (*parleyv1.Message, error) {
	m := &parleyv1.Message{}
	switch w.Role {
	case "user":
		m.Role = parleyv1.Role_ROLE_USER
	case "assistant":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
	case "system":
		m.Role = parleyv1.Role_ROLE_SYSTEM
	case "":
		return nil, translate.Invalid(path+".role", "Field required")
	default:
		return nil, translate.Invalid(path+".role", "Input should be 'user', 'assistant' or 'system'")
	}
	parts, err := d.blocks(w.Content, path+".content", m.Role == parleyv1.Role_ROLE_ASSISTANT)
	if err != nil {
		return nil, err
	}
	m.Parts = parts
	if w.Content.String {
		markStringContent.Set(&m.Extensions)
	}
	jsonx.Keep(&m.Extensions, thisDialect, "", w.Unknown)
	return m, nil
}

func (d *decoder) blocks(c Content, path string, assistant bool) ([]*parleyv1.Part, error) {
	if c.String {
		return translate.TextParts(c.Text), nil
	}
	parts := make([]*parleyv1.Part, 0, len(c.Blocks))
	var carried *parleyv1.Opaque
	for i := range c.Blocks {
		p, err := d.block(&c.Blocks[i], path+"."+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		switch op, kind := carrierOf(p); kind {
		case translate.SealCarrierNext:
			carried = op
			continue
		case translate.SealCarrierPrev:
			if n := len(parts); n > 0 {
				parts[n-1].Signature = op
				continue
			}
			carried = op
			continue
		}
		if carried != nil {
			p.Signature = carried
			carried = nil
		}
		parts = append(parts, p)
	}
	if carried != nil {
		// A carrier with nothing to attach to: keep the signature on an
		// empty reasoning part rather than lose it.
		parts = append(parts, &parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{}}, Signature: carried})
	}
	return parts, nil
}

func (d *decoder) block(b *Block, path string) (*parleyv1.Part, error) {
	var p *parleyv1.Part
	if b.Type == "text" {
		// Most blocks: the part, its kind and its text in one allocation.
		p = translate.TextPart("")
	} else {
		p = &parleyv1.Part{}
	}
	if b.CacheControl != nil {
		cc, err := readCacheControl(b.CacheControl, path+".cache_control")
		if err != nil {
			return nil, err
		}
		p.CacheControl = cc
	}
	switch b.Type {
	case "text":
		if b.Text == nil {
			return nil, translate.Invalid(path+".text", "Field required")
		}
		t := p.GetText()
		t.Text = *b.Text
		if len(b.Citations) > 0 {
			anns, err := citations(b.Citations, path+".citations", &p.Extensions)
			if err != nil {
				return nil, err
			}
			t.Annotations = anns
		}
	case "image", "document":
		m, err := media(b, path)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return rawBlock(b)
		}
		p.Kind = &parleyv1.Part_Media{Media: m}
		if len(b.Citations) > 0 {
			jsonx.KeepValue(&p.Extensions, thisDialect, "citations", b.Citations)
		}
	case "tool_use":
		if b.ID == "" {
			return nil, translate.Invalid(path+".id", "Field required")
		}
		if b.Name == "" {
			return nil, translate.Invalid(path+".name", "Field required")
		}
		args := string(b.Input)
		if args == "" {
			args = "{}"
		}
		id := canonicalID(b.ID)
		p.Kind = &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: id, Name: b.Name, Arguments: args}}
		if d.callNames == nil {
			d.callNames = map[string]string{}
		}
		d.callNames[id] = b.Name
	case "tool_result":
		if b.ToolUseID == "" {
			return nil, translate.Invalid(path+".tool_use_id", "Field required")
		}
		id := canonicalID(b.ToolUseID)
		tr := &parleyv1.ToolResult{CallId: id, Name: d.callNames[id]}
		if b.IsError != nil {
			tr.IsError = *b.IsError
			if !tr.IsError {
				// An explicit false has no canonical spelling; keep it for
				// this dialect.
				jsonx.KeepValue(&p.Extensions, thisDialect, "is_error", jsontext.Value("false"))
			}
		}
		if len(b.Content) > 0 {
			var c Content
			if err := jsonx.Unmarshal(b.Content, &c); err != nil {
				return nil, decodeErrorAt(err, path+".content")
			}
			content, err := d.blocks(c, path+".content", false)
			if err != nil {
				return nil, err
			}
			tr.Content = content
			if c.String {
				markStringContent.Keep(&p.Extensions, jsontext.Value("true"))
			}
		}
		p.Kind = &parleyv1.Part_ToolResult{ToolResult: tr}
	case "thinking":
		r := &parleyv1.Reasoning{}
		if b.Thinking != nil {
			r.Text = *b.Thinking
		}
		p.Kind = &parleyv1.Part_Reasoning{Reasoning: r}
		if b.Signature != nil {
			o := translate.OpenOpaque(*b.Signature, thisDialect)
			switch o.Kind {
			case translate.SealEncrypted:
				r.EncryptedContent, p.ItemId = o.Opaque, o.ItemID
			case translate.SealCarrierNext:
				p.Signature = o.Opaque
				markCarrier.Keep(&p.Extensions, jsontext.Value(`"next"`))
			case translate.SealCarrierPrev:
				p.Signature = o.Opaque
				markCarrier.Keep(&p.Extensions, jsontext.Value(`"prev"`))
			case translate.SealUnsigned:
				// Reasoning its upstream did not sign: it has no signature.
			default:
				p.Signature = o.Opaque
			}
		}
	case "redacted_thinking":
		o := translate.OpenOpaque(b.Data, thisDialect)
		p.Kind = &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Redacted: true, EncryptedContent: o.Opaque}}
	case "server_tool_use":
		input := string(b.Input)
		if input == "" {
			input = "{}"
		}
		p.Kind = &parleyv1.Part_HostedToolCall{HostedToolCall: &parleyv1.HostedToolCall{Id: b.ID, Name: b.Name, Kind: serverToolKind(b.Name), Input: input}}
	default:
		if kind, ok := serverResultKind(b.Type); ok {
			hr := &parleyv1.HostedToolResult{CallId: b.ToolUseID, Kind: kind, Output: string(b.Content), IsError: isErrorContent(b.Content)}
			p.Kind = &parleyv1.Part_HostedToolResult{HostedToolResult: hr}
			if b.Type != defaultResultType(kind) {
				markType.KeepString(&p.Extensions, b.Type)
			}
			break
		}
		if b.Type == "" {
			return nil, translate.Invalid(path+".type", "Field required")
		}
		return rawBlock(b)
	}
	jsonx.Keep(&p.Extensions, thisDialect, "", b.Unknown)
	return p, nil
}

// rawBlock keeps a block with no canonical home whole.
func rawBlock(b *Block) (*parleyv1.Part, error) {
	raw, err := jsonx.Marshal(b)
	if err != nil {
		return nil, err
	}
	p := &parleyv1.Part{}
	markBlock.Keep(&p.Extensions, raw)
	return p, nil
}

// messages builds the turns. For a client of another dialect they are
// first normalised (translate.NormaliseTurns): empty text dropped, tool
// results right after their calls, tool turns as user turns, system turns
// in the middle kept in place as reminders, same-role turns merged.
func (e *encoder) messages() ([]message, error) {
	src := e.req.GetMessages()
	if !e.same {
		_, rest := translate.SplitLeadingSystem(src)
		src = translate.NormaliseTurns(rest)
	}
	out := make([]message, 0, len(src))
	for i, m := range src {
		role := "user"
		switch m.GetRole() {
		case parleyv1.Role_ROLE_ASSISTANT:
			role = "assistant"
		case parleyv1.Role_ROLE_SYSTEM, parleyv1.Role_ROLE_DEVELOPER:
			role = "system" // only a client of this dialect gets here
		}
		blocks, err := e.blocks(m, i)
		if err != nil {
			return nil, err
		}
		if !e.same {
			if len(blocks) == 0 {
				continue // e.g. a turn that held only another service's reasoning
			}
			if n := len(out); n > 0 && out[n-1].Role == role {
				out[n-1].Content.Blocks = append(out[n-1].Content.Blocks, blocks...)
				continue
			}
			out = append(out, message{Role: role, Content: Content{Blocks: blocks}})
			continue
		}
		wm := message{Role: role, Content: Content{Blocks: blocks}, Unknown: jsonx.Take(m.GetExtensions(), thisDialect, "")}
		if markStringContent.In(m.GetExtensions()) && len(blocks) == 1 && blocks[0].Type == "text" &&
			blocks[0].CacheControl == nil && len(blocks[0].Citations) == 0 && len(blocks[0].Unknown) == 0 {
			wm.Content = Content{String: true, Text: *blocks[0].Text}
		}
		out = append(out, wm)
	}
	return out, nil
}

func (e *encoder) blocks(m *parleyv1.Message, mi int) ([]Block, error) {
	parts := m.GetParts()
	out := make([]Block, 0, len(parts))
	for j, p := range parts {
		var err error
		out, err = e.part(out, p, partAt{path: translate.PartPath{Turn: mi, Index: j}}, m.GetRole() == parleyv1.Role_ROLE_ASSISTANT)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// partAt is where a part stands, for errors and X-Parley-Dropped: the
// index of its turn and its own, or (inside) the name of the tool result
// whose content it is. Its name is made only when used, as most parts
// (text, tool calls) need none.
type partAt struct {
	path   translate.PartPath
	inside string
}

func (a partAt) name() string {
	if a.inside != "" {
		return translate.Index(a.inside+".tool_result.content", a.path.Index)
	}
	return a.path.String()
}

// part appends the blocks for one part to dst: none when the part cannot
// go to this upstream (reasoning another service signed), one usually. The
// block is built in one variable whatever the part's kind: a Block
// literal in each case made this frame over 3 KB, deep enough in a
// request's encoding to double every streaming handler's stack.
func (e *encoder) part(dst []Block, p *parleyv1.Part, at partAt, assistant bool) ([]Block, error) {
	var b Block
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		if k.Text.GetText() == "" && !e.same {
			return dst, nil
		}
		b.Type, b.Text, b.Citations = "text", ptr(k.Text.GetText()), e.wireCitations(p)
	case *parleyv1.Part_Media:
		if err := e.media(&b, k.Media, at.name()); err != nil {
			return nil, err
		}
		if e.same {
			if v, ok := jsonx.Value(p.GetExtensions(), thisDialect, "citations"); ok {
				b.Citations = v
			}
		}
	case *parleyv1.Part_ToolCall:
		args := strings.TrimSpace(k.ToolCall.GetArguments())
		if args == "" {
			args = "{}"
		}
		if !jsonx.IsObject(args) {
			return nil, translate.Unsupported(thisDialect, at.name()+".tool_call.arguments", "the arguments of tool call %q are not a JSON object", k.ToolCall.GetId())
		}
		b.Type, b.ID, b.Name, b.Input = "tool_use", wireID(k.ToolCall.GetId()), translate.CallName(k.ToolCall), jsontext.Value(args)
	case *parleyv1.Part_ToolResult:
		if err := e.toolResult(&b, p, k.ToolResult, at); err != nil {
			return nil, err
		}
	case *parleyv1.Part_Reasoning:
		return append(dst, e.reasoningPart(p, k.Reasoning, e.partUnknown(p))...), nil
	case *parleyv1.Part_Refusal:
		b.Type, b.Text = "text", ptr(k.Refusal.GetText())
	case *parleyv1.Part_ExecutableCode:
		// Code another service ran for the model: kept as text so that the
		// model still sees what happened.
		text := "```" + strings.ToLower(strings.TrimPrefix(k.ExecutableCode.GetLanguage().String(), "CODE_LANGUAGE_")) + "\n" + k.ExecutableCode.GetCode() + "\n```"
		b.Type, b.Text = "text", ptr(text)
	case *parleyv1.Part_CodeExecutionResult:
		b.Type, b.Text = "text", ptr("Code execution output:\n"+k.CodeExecutionResult.GetOutput())
	case *parleyv1.Part_HostedToolCall:
		if !e.same {
			return dst, nil // another service's server tool: nothing to send
		}
		input := k.HostedToolCall.GetInput()
		if input == "" {
			input = "{}"
		}
		b.Type, b.ID, b.Name, b.Input = "server_tool_use", k.HostedToolCall.GetId(), k.HostedToolCall.GetName(), jsontext.Value(input)
	case *parleyv1.Part_HostedToolResult:
		if !e.same {
			return dst, nil
		}
		b.Type = defaultResultType(k.HostedToolResult.GetKind())
		if s, ok := markType.String(p.GetExtensions()); ok {
			b.Type = s
		}
		b.ToolUseID, b.Content = k.HostedToolResult.GetCallId(), jsontext.Value(k.HostedToolResult.GetOutput())
	case *parleyv1.Part_ItemReference:
		return nil, translate.Unsupported(thisDialect, at.name()+".item_reference", "an item reference needs the stored response it points to")
	case nil:
		if v, ok := markBlock.Value(p.GetExtensions()); ok {
			if err := jsonx.Unmarshal(v, &b); err != nil {
				return nil, err
			}
			return append(dst, b), nil
		}
		// Another dialect's item kept whole for that dialect alone.
		e.dropped = append(e.dropped, at.name())
		return dst, nil
	default:
		return dst, nil
	}
	b.CacheControl = wireCacheControl(p.GetCacheControl())
	b.Unknown = e.partUnknown(p)
	return append(dst, b), nil
}
