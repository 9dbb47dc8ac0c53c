package responses

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Items are this dialect's unit of conversation, in requests (input) and
// replies (output) alike. Each item becomes one canonical turn, so that
// the order of items is kept exactly: a function_call or reasoning item is
// an assistant turn of one part, a function_call_output a tool turn. The
// encoders of other dialects merge consecutive turns of the same role.
// Parts of an output item carry its id and status.

// itemDecoder turns items into canonical turns. From a client, opaque
// values are opened (they may be sealed by Parley for another origin);
// from an upstream, they are stamped with the upstream's origin.
type itemDecoder struct {
	client bool
	t      translate.Target
	// names of function calls seen so far, by call id
	names map[string]string
	// a signature waiting for the part after its carrier
	pending *parleyv1.Opaque
	// the last part decoded, for a carrier of the part before
	last *parleyv1.Part
	// expanded is true once a compaction item Parley made became a turn:
	// the request no longer goes on as it came.
	expanded bool
}

var roles = map[string]parleyv1.Role{
	"user":      parleyv1.Role_ROLE_USER,
	"assistant": parleyv1.Role_ROLE_ASSISTANT,
	"system":    parleyv1.Role_ROLE_SYSTEM,
	"developer": parleyv1.Role_ROLE_DEVELOPER,
}

// mark sets the item id and status on a part of an output item.
func mark(p *parleyv1.Part, it *Item) *parleyv1.Part {
	p.ItemId, p.Status = it.ID, itemStatus(it.Status)
	return p
}

// item decodes one item into a turn; nil when the item leaves nothing (a
// signature carrier).
func (d *itemDecoder) item(it *Item, field string) (*parleyv1.Message, error) {
	m := &parleyv1.Message{}
	jsonx.Keep(&m.Extensions, thisDialect, "", it.Unknown)
	add := func(p *parleyv1.Part) {
		if d.pending != nil && p.Signature == nil {
			p.Signature, d.pending = d.pending, nil
		}
		m.Parts = append(m.Parts, p)
		d.last = p
	}
	switch it.Type {
	case "", "message":
		role, ok := roles[it.Role]
		if !ok {
			return nil, translate.Invalid(field+".role", "must be one of user, assistant, system, developer; got %q", it.Role)
		}
		m.Role = role
		if it.Type == "message" {
			markTyped.Set(&m.Extensions)
		}
		if it.Content == nil {
			return nil, translate.Invalid(field+".content", "is required in a message")
		}
		if role != parleyv1.Role_ROLE_ASSISTANT {
			keepIDStatus(m, it)
		}
		if it.Content.String {
			markString.Set(&m.Extensions)
			p := translate.TextPart(it.Content.Text)
			if role == parleyv1.Role_ROLE_ASSISTANT {
				mark(p, it)
			}
			add(p)
			return m, nil
		}
		for j := range it.Content.Parts {
			p, err := d.contentPart(&it.Content.Parts[j], field+".content.["+strconv.Itoa(j)+"]")
			if err != nil {
				return nil, err
			}
			if role == parleyv1.Role_ROLE_ASSISTANT {
				mark(p, it)
			}
			add(p)
		}
		if len(it.Content.Parts) == 0 && role == parleyv1.Role_ROLE_ASSISTANT {
			// An empty output message keeps its id and status.
			keepIDStatus(m, it)
		}
		return m, nil
	case "function_call":
		if it.CallID == "" || it.Name == "" {
			return nil, translate.Invalid(field, "a function_call needs call_id and name")
		}
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		p := mark(translate.CallPart(it.CallID, it.Name, deref(it.Arguments)), it)
		p.GetToolCall().Namespace = it.Namespace
		d.names[it.CallID] = translate.FlatToolName(it.Namespace, it.Name)
		add(p)
		return m, nil
	case "custom_tool_call", "custom_tool_call_output":
		return d.customItem(m, it, field, add)
	case "function_call_output":
		if it.CallID == "" {
			return nil, translate.Invalid(field+".call_id", "is required in a function_call_output")
		}
		m.Role = parleyv1.Role_ROLE_TOOL
		keepIDStatus(m, it)
		content, err := d.output(it.Output, field+".output")
		if err != nil {
			return nil, err
		}
		add(&parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: &parleyv1.ToolResult{CallId: it.CallID, Name: d.names[it.CallID], Content: content}}})
		return m, nil
	case "reasoning":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		r := &parleyv1.Reasoning{}
		for _, s := range it.Summary {
			r.Summary = append(r.Summary, s.Text)
		}
		if len(it.Summary) > 0 && summaryUnusual(it.Summary) {
			raw, _ := jsonx.Marshal(it.Summary)
			markSummary.Keep(&m.Extensions, raw)
		}
		if it.Content != nil {
			for _, c := range it.Content.Parts {
				r.Text += deref(c.Text)
			}
		}
		p := mark(&parleyv1.Part{Kind: &parleyv1.Part_Reasoning{Reasoning: r}}, it)
		if it.EncryptedContent != nil {
			o := d.opaque(*it.EncryptedContent)
			switch o.Kind {
			case translate.SealCarrierNext:
				d.pending = o.Opaque
				return nil, nil
			case translate.SealCarrierPrev:
				if d.last != nil {
					d.last.Signature = o.Opaque
				}
				return nil, nil
			case translate.SealSignature:
				// Reasoning of another service, shown as summaries:
				// its text is the summaries' text, its signature the
				// sealed value.
				r.Text, r.Summary = strings.Join(r.Summary, "\n\n"), nil
				p.Signature = o.Opaque
			default:
				r.EncryptedContent = o.Opaque
				if len(r.Summary) == 0 && r.Text == "" && o.GetOrigin().GetDialect() != thisDialect {
					r.Redacted = true
				}
			}
		}
		add(p)
		return m, nil
	case "item_reference":
		if it.ID == "" {
			return nil, translate.Invalid(field+".id", "is required in an item_reference")
		}
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		add(&parleyv1.Part{Kind: &parleyv1.Part_ItemReference{ItemReference: &parleyv1.ItemReference{Id: it.ID}}})
		return m, nil
	case "computer_call":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		p := mark(&parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: it.CallID, Name: "computer", Arguments: string(it.Action), Kind: parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE}}}, it)
		add(p)
		return m, nil
	case "computer_call_output":
		m.Role = parleyv1.Role_ROLE_TOOL
		keepIDStatus(m, it)
		r := &parleyv1.ToolResult{CallId: it.CallID, Kind: parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE}
		var shot struct {
			Type     string `json:"type"`
			ImageURL string `json:"image_url"`
			FileID   string `json:"file_id"`
		}
		if err := jsonx.Unmarshal(it.Output, &shot); err != nil {
			return nil, translate.Invalid(field+".output", "must be a computer_screenshot object")
		}
		media := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE}
		if mime, data, ok := openai.ParseDataURL(shot.ImageURL); ok {
			media.MimeType, media.Source = mime, &parleyv1.Media_Data{Data: data}
		} else if shot.ImageURL != "" {
			media.Source = &parleyv1.Media_Uri{Uri: shot.ImageURL}
		} else {
			media.Source = &parleyv1.Media_FileId{FileId: shot.FileID}
		}
		r.Content = []*parleyv1.Part{{Kind: &parleyv1.Part_Media{Media: media}}}
		jsonx.KeepValue(&m.Extensions, thisDialect, "output", it.Output)
		add(&parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: r}})
		return m, nil
	case "web_search_call":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		hc := &parleyv1.HostedToolCall{Id: it.ID, Kind: parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH, Name: "web_search", Input: string(it.Action)}
		add(mark(&parleyv1.Part{Kind: &parleyv1.Part_HostedToolCall{HostedToolCall: hc}}, it))
		return m, nil
	case "file_search_call":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
		hc := &parleyv1.HostedToolCall{Id: it.ID, Kind: parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH, Name: "file_search", Queries: it.Queries}
		add(mark(&parleyv1.Part{Kind: &parleyv1.Part_HostedToolCall{HostedToolCall: hc}}, it))
		if len(it.Results) > 0 {
			hr := &parleyv1.HostedToolResult{CallId: it.ID, Kind: parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH, Output: string(it.Results)}
			add(mark(&parleyv1.Part{Kind: &parleyv1.Part_HostedToolResult{HostedToolResult: hr}}, it))
		}
		return m, nil
	}
	if it.Type == "compaction" || it.Type == "compaction_summary" {
		// Opened and read back off the request's stack: the turns a
		// compaction seals nest their parts as a conversation does.
		var m *parleyv1.Message
		offstack.Run(func() { m = compactionItem(it) })
		if m != nil {
			d.expanded = true
			return m, nil
		}
	}
	// An item type this package does not map: kept whole, for this
	// dialect, marshalled off the request's stack (the members it keeps
	// as they came are reformatted as deep as they nest).
	raw, err := jsonx.MarshalOffStack(it)
	if err != nil {
		return nil, translate.Invalid(field, "%v", err)
	}
	m.Role = parleyv1.Role_ROLE_ASSISTANT
	if it.Type == "additional_tools" {
		// The client's own declaration (decodeInputTools), among its
		// instructions: it must not end the instructions that open the
		// conversation for a dialect that lifts them to a system prompt.
		m.Role = parleyv1.Role_ROLE_DEVELOPER
	}
	m.Extensions = nil
	p := &parleyv1.Part{ItemId: it.ID, Status: itemStatus(it.Status)}
	markItem.Keep(&p.Extensions, raw)
	add(p)
	return m, nil
}

func keepIDStatus(m *parleyv1.Message, it *Item) {
	if it.ID != "" {
		markID.KeepString(&m.Extensions, it.ID)
	}
	if it.Status != "" {
		markStatus.KeepString(&m.Extensions, it.Status)
	}
}

// outputItem decodes an output item into parts; the members of the item
// with no canonical home ride on its parts.
func (d *itemDecoder) outputItem(it *Item) ([]*parleyv1.Part, error) {
	m, err := d.item(it, "output")
	if err != nil || m == nil {
		return nil, err
	}
	ext := m.GetExtensions()
	for _, p := range m.Parts {
		for k, v := range ext.GetFields() {
			if jsonx.IsMark(k) {
				if k == markSummary.Key() {
					markSummary.Keep(&p.Extensions, jsontext.Value(v))
				}
				continue
			}
			jsonx.KeepValue(&p.Extensions, thisDialect, "item/"+k, jsontext.Value(v))
		}
	}
	return m.Parts, nil
}

var roleWords = map[parleyv1.Role]string{
	parleyv1.Role_ROLE_USER:      "user",
	parleyv1.Role_ROLE_ASSISTANT: "assistant",
	parleyv1.Role_ROLE_SYSTEM:    "system",
	parleyv1.Role_ROLE_DEVELOPER: "developer",
}

// turn renders one canonical turn as items: message parts of the same item
// join one message item; every call, result and reasoning part is an item
// of its own.
func (e *encoder) turn(out []Item, m *parleyv1.Message, field string) ([]Item, error) {
	role := roleWords[m.GetRole()]
	if m.GetRole() == parleyv1.Role_ROLE_TOOL {
		role = "user"
	}
	// A message is added to out when its first content part comes, and
	// filled in place while open: an item is large, and a copy of it on
	// the stack would take room on the handler's
	// (TestStreamsRunOnSmallStacks). The turn's items are appended to
	// the conversation's own: out[base:] are this turn's.
	base := len(out)
	open := false
	newMessage := func(p *parleyv1.Part) {
		out = append(out, Item{})
		it := &out[len(out)-1]
		it.Role, it.Content, it.Unknown = role, &Content{}, e.take(m.GetExtensions(), "")
		if e.has(m.GetExtensions(), markTyped) || (m.GetRole() == parleyv1.Role_ROLE_ASSISTANT && p != nil && p.GetItemId() != "") {
			it.Type = "message"
		}
		if p != nil && m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
			it.ID, it.Status = p.GetItemId(), statusWord(p.GetStatus())
		}
		e.idStatus(it, m)
	}
	for j, p := range m.GetParts() {
		pf := field + ".parts[" + strconv.Itoa(j) + "]"
		cp, isContent, err := e.content(p, m.GetRole(), pf)
		if err != nil {
			return nil, err
		}
		if isContent {
			if !open || (p.GetItemId() != "" && p.GetItemId() != out[len(out)-1].ID) {
				newMessage(p)
				open = true
			}
			if cp != nil {
				c := out[len(out)-1].Content
				c.Parts = append(c.Parts, *cp)
			}
			continue
		}
		open = false
		if r := p.GetHostedToolResult(); r != nil && e.same && len(out) > base && out[len(out)-1].Type == "file_search_call" && out[len(out)-1].ID == r.GetCallId() {
			out[len(out)-1].Results = jsontext.Value(r.GetOutput())
			continue
		}
		it, err := e.item(m, p, pf)
		if err != nil {
			return nil, err
		}
		out = append(out, it...)
	}
	if len(m.GetParts()) == 0 && e.same && markID.In(m.GetExtensions()) {
		newMessage(nil)
	}
	// A turn of one text part that came as a string goes back as one.
	if e.has(m.GetExtensions(), markString) && len(out)-base == 1 && out[base].Content != nil && len(out[base].Content.Parts) == 1 && out[base].Content.Parts[0].Type != "refusal" {
		c := out[base].Content.Parts[0]
		if c.Text != nil && len(c.Unknown) == 0 {
			out[base].Content = &Content{String: true, Text: *c.Text}
		}
	}
	if !e.same {
		for i := range out[base:] {
			simplify(&out[base+i])
		}
	}
	return out, nil
}

func (e *encoder) idStatus(it *Item, m *parleyv1.Message) {
	if s, ok := markID.String(m.GetExtensions()); ok && e.same {
		it.ID = s
	}
	if s, ok := markStatus.String(m.GetExtensions()); ok && e.same {
		it.Status = s
	}
}

// item renders a part that is an item of its own.
func (e *encoder) item(m *parleyv1.Message, p *parleyv1.Part, field string) ([]Item, error) {
	// Each kind is written by a function of its own: their items, built
	// on the stack, would otherwise all take room in this frame, on the
	// handler's stack (TestStreamsRunOnSmallStacks).
	if _, ok := markItem.Value(p.GetExtensions()); ok && e.same {
		return keptItem(p)
	}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_ToolCall:
		return e.callItem(m, p, k.ToolCall), nil
	case *parleyv1.Part_ToolResult:
		return e.resultItem(m, k.ToolResult, field)
	case *parleyv1.Part_Reasoning:
		return e.reasoning(m, p, k.Reasoning), nil
	case *parleyv1.Part_HostedToolCall:
		if !e.same {
			return nil, nil
		}
		return e.hostedItem(m, p, k.HostedToolCall), nil
	case *parleyv1.Part_HostedToolResult:
		return nil, nil // joined to its call by the caller
	case *parleyv1.Part_ItemReference:
		return []Item{{Type: "item_reference", ID: k.ItemReference.GetId()}}, nil
	case nil:
		// Another dialect's item kept whole for that dialect alone.
		e.dropped = append(e.dropped, field)
	}
	return nil, nil
}

// keptItem is an item kept whole (a custom tool's call or output too,
// which other dialects get as a function's), going back as it came.
//
//go:noinline
func keptItem(p *parleyv1.Part) ([]Item, error) {
	v, _ := markItem.Value(p.GetExtensions())
	out := make([]Item, 1)
	if err := jsonx.Unmarshal(v, &out[0]); err != nil {
		return nil, err
	}
	return out, nil
}

// callItem is a tool call's item.
//
//go:noinline
func (e *encoder) callItem(m *parleyv1.Message, p *parleyv1.Part, c *parleyv1.ToolCall) []Item {
	unknown := e.take(m.GetExtensions(), "")
	if c.GetKind() == parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE {
		action := c.GetArguments()
		if action == "" {
			action = "{}"
		}
		return []Item{{Type: "computer_call", ID: p.GetItemId(), CallID: wireCallID(c.GetId()), Action: jsontext.Value(action), Status: statusWord(p.GetStatus()), Unknown: unknown}}
	}
	args := c.GetArguments()
	out := []Item{{Type: "function_call", CallID: wireCallID(c.GetId()), Name: c.GetName(), Namespace: c.GetNamespace(), Arguments: &args, Unknown: unknown}}
	if e.same || strings.HasPrefix(p.GetItemId(), "fc_") {
		out[0].ID, out[0].Status = p.GetItemId(), statusWord(p.GetStatus())
	}
	return out
}

// resultItem is a tool result's item.
//
//go:noinline
func (e *encoder) resultItem(m *parleyv1.Message, r *parleyv1.ToolResult, field string) ([]Item, error) {
	unknown := e.take(m.GetExtensions(), "")
	if r.GetKind() == parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE {
		out, ok := jsonx.Value(m.GetExtensions(), thisDialect, "output")
		if !ok || !e.same {
			raw, err := e.screenshot(r, field)
			if err != nil {
				return nil, err
			}
			out = raw
		}
		items := []Item{{Type: "computer_call_output", CallID: wireCallID(r.GetCallId()), Output: out, Unknown: unknown}}
		delete(items[0].Unknown, "output")
		e.idStatus(&items[0], m)
		return items, nil
	}
	items := []Item{{Type: "function_call_output", CallID: wireCallID(r.GetCallId()), Unknown: unknown}}
	e.idStatus(&items[0], m)
	out, err := e.resultOutput(r, field)
	if err != nil {
		return nil, err
	}
	items[0].Output = out
	return items, nil
}

// hostedItem is a hosted tool call's item, for an upstream of this
// dialect.
//
//go:noinline
func (e *encoder) hostedItem(m *parleyv1.Message, p *parleyv1.Part, hc *parleyv1.HostedToolCall) []Item {
	items := []Item{{ID: hc.GetId(), Status: statusWord(p.GetStatus()), Unknown: e.take(m.GetExtensions(), "")}}
	it := &items[0]
	switch hc.GetKind() {
	case parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:
		it.Type = "web_search_call"
		if hc.GetInput() != "" {
			it.Action = jsontext.Value(hc.GetInput())
		}
	case parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH:
		it.Type, it.Queries = "file_search_call", hc.GetQueries()
		if it.Queries == nil {
			it.Queries = []string{}
		}
	default:
		return nil
	}
	return items
}

// sameOrigin reports whether p came from a service of this dialect.
func sameOrigin(p *parleyv1.Part) bool {
	return p.GetExtensions().GetDialect() == thisDialect || p.GetReasoning().GetEncryptedContent().GetOrigin().GetDialect() == thisDialect
}

// itemUnknown returns the members of the output item p came from.
func itemUnknown(p *parleyv1.Part) jsonx.Unknown {
	return jsonx.Take(p.GetExtensions(), thisDialect, "item")
}
