package responses

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Path is where requests of this dialect go, below the upstream's base URL.
const Path = "/v1/responses"

// Upstream is the responses dialect as services speak it.
type Upstream struct{}

var (
	_ translate.Upstream      = Upstream{}
	_ translate.CountUpstream = Upstream{}
)

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return D }

type encoder struct {
	req     *parleyv1.Request
	t       translate.Target
	same    bool
	dropped []string
}

// EncodeRequest implements translate.Upstream.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := &encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == D}
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	if req.GetStream() {
		w.Stream = new(true)
	}
	return e.outgoing(w, Path, req.GetStream())
}

func (e *encoder) outgoing(w *Request, path string, stream bool) (*translate.Outgoing, error) {
	body, err := jsonx.Marshal(w)
	if err != nil {
		return nil, err
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if e.t.APIKey != "" {
		h.Set("Authorization", "Bearer "+e.t.APIKey)
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	dropped := append(translate.CacheHintPaths(e.req), e.dropped...)
	return &translate.Outgoing{Method: http.MethodPost, Path: path, Header: h, Body: body, Stream: stream, Dropped: dropped}, nil
}

func (e *encoder) take(ext *parleyv1.Extensions, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(ext, D, prefix)
}

func (e *encoder) has(ext *parleyv1.Extensions, name string) bool {
	return e.same && jsonx.Has(ext, D, name)
}

func (e *encoder) request() (*Request, error) {
	req := e.req
	w := &Request{Model: e.t.Model, Unknown: e.take(req.GetExtensions(), "")}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	if len(req.GetInstructions()) > 0 {
		s := joinText(req.GetInstructions(), "\n\n")
		w.Instructions = &s
	}
	items, err := e.items()
	if err != nil {
		return nil, err
	}
	switch {
	case e.has(req.GetExtensions(), extInputString) && len(req.GetMessages()) == 1:
		w.Input = &Input{String: true, Text: joinText(req.GetMessages()[0].GetParts(), "")}
	case len(items) > 0 || req.GetPreviousResponseId() == "":
		w.Input = &Input{Items: items}
	}
	if err := e.tools(w); err != nil {
		return nil, err
	}
	if err := e.settings(w); err != nil {
		return nil, err
	}
	return w, nil
}

func joinText(parts []*parleyv1.Part, sep string) string {
	var b strings.Builder
	for _, p := range parts {
		if t := p.GetText(); t != nil {
			if b.Len() > 0 {
				b.WriteString(sep)
			}
			b.WriteString(t.GetText())
		}
	}
	return b.String()
}

var roleWords = map[parleyv1.Role]string{
	parleyv1.Role_ROLE_USER:      "user",
	parleyv1.Role_ROLE_ASSISTANT: "assistant",
	parleyv1.Role_ROLE_SYSTEM:    "system",
	parleyv1.Role_ROLE_DEVELOPER: "developer",
}

// items renders the conversation as input items.
func (e *encoder) items() ([]Item, error) {
	var out []Item
	for i, m := range e.req.GetMessages() {
		field := "messages[" + strconv.Itoa(i) + "]"
		its, err := e.turn(m, field)
		if err != nil {
			return nil, err
		}
		out = append(out, its...)
	}
	return out, nil
}

// turn renders one canonical turn as items: message parts of the same item
// join one message item; every call, result and reasoning part is an item
// of its own.
func (e *encoder) turn(m *parleyv1.Message, field string) ([]Item, error) {
	role := roleWords[m.GetRole()]
	if m.GetRole() == parleyv1.Role_ROLE_TOOL {
		role = "user"
	}
	var out []Item
	var msg *Item
	flush := func() {
		if msg != nil {
			out = append(out, *msg)
			msg = nil
		}
	}
	newMessage := func(p *parleyv1.Part) *Item {
		it := &Item{Role: role, Content: &Content{}, Unknown: e.take(m.GetExtensions(), "")}
		if e.has(m.GetExtensions(), extTyped) || (m.GetRole() == parleyv1.Role_ROLE_ASSISTANT && p != nil && p.GetItemId() != "") {
			it.Type = "message"
		}
		if p != nil && m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
			it.ID, it.Status = p.GetItemId(), statusWord(p.GetStatus())
		}
		e.idStatus(it, m)
		return it
	}
	for j, p := range m.GetParts() {
		pf := field + ".parts[" + strconv.Itoa(j) + "]"
		cp, isContent, err := e.content(p, m.GetRole(), pf)
		if err != nil {
			return nil, err
		}
		if isContent {
			if msg == nil || (p.GetItemId() != "" && p.GetItemId() != msg.ID) {
				flush()
				msg = newMessage(p)
			}
			if cp != nil {
				msg.Content.Parts = append(msg.Content.Parts, *cp)
			}
			continue
		}
		flush()
		if r := p.GetHostedToolResult(); r != nil && e.same && len(out) > 0 && out[len(out)-1].Type == "file_search_call" && out[len(out)-1].ID == r.GetCallId() {
			out[len(out)-1].Results = jsontext.Value(r.GetOutput())
			continue
		}
		it, err := e.item(m, p, pf)
		if err != nil {
			return nil, err
		}
		out = append(out, it...)
	}
	flush()
	if len(m.GetParts()) == 0 && e.same && jsonx.Has(m.GetExtensions(), D, extID) {
		out = append(out, *newMessage(nil))
	}
	// A turn of one text part that came as a string goes back as one.
	if e.has(m.GetExtensions(), extString) && len(out) == 1 && out[0].Content != nil && len(out[0].Content.Parts) == 1 && out[0].Content.Parts[0].Type != "refusal" {
		c := out[0].Content.Parts[0]
		if c.Text != nil && len(c.Unknown) == 0 {
			out[0].Content = &Content{String: true, Text: *c.Text}
		}
	}
	if !e.same {
		for i := range out {
			simplify(&out[i])
		}
	}
	return out, nil
}

// simplify writes a foreign client's text-only message as a string, the
// form every service of this dialect takes for any role.
func simplify(it *Item) {
	if it.Type != "" || it.Content == nil || it.Content.String {
		return
	}
	var b strings.Builder
	for _, c := range it.Content.Parts {
		if (c.Type != "input_text" && c.Type != "output_text") || c.Text == nil {
			return
		}
		b.WriteString(*c.Text)
	}
	it.Content = &Content{String: true, Text: b.String()}
}

func (e *encoder) idStatus(it *Item, m *parleyv1.Message) {
	if v, ok := jsonx.Value(m.GetExtensions(), D, extID); ok && e.same {
		_ = jsonx.Unmarshal(v, &it.ID)
	}
	if v, ok := jsonx.Value(m.GetExtensions(), D, extStatus); ok && e.same {
		_ = jsonx.Unmarshal(v, &it.Status)
	}
}

// content renders a part that belongs in a message item; isContent is
// false for a part that is an item of its own.
func (e *encoder) content(p *parleyv1.Part, role parleyv1.Role, field string) (*ContentPart, bool, error) {
	unknown := e.take(p.GetExtensions(), "")
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		typ := "input_text"
		if role == parleyv1.Role_ROLE_ASSISTANT {
			typ = "output_text"
		}
		if v, ok := jsonx.Value(p.GetExtensions(), D, "@type"); ok && e.same {
			_ = jsonx.Unmarshal(v, &typ)
		}
		cp := &ContentPart{Type: typ, Text: &k.Text.Text, Unknown: unknown}
		if typ == "output_text" {
			cp.Annotations = annotations(k.Text.GetAnnotations(), p, e.same)
			delete(cp.Unknown, "annotations")
		}
		return cp, true, nil
	case *parleyv1.Part_Refusal:
		return &ContentPart{Type: "refusal", Refusal: &k.Refusal.Text, Unknown: unknown}, true, nil
	case *parleyv1.Part_Media:
		cp, err := e.media(k.Media, field)
		if err != nil {
			return nil, true, err
		}
		cp.Unknown = unknown
		return cp, true, nil
	case *parleyv1.Part_ExecutableCode:
		s := "```python\n" + k.ExecutableCode.GetCode() + "\n```"
		return &ContentPart{Type: "output_text", Text: &s, Annotations: []Annotation{}}, true, nil
	case *parleyv1.Part_CodeExecutionResult:
		s := "```\n" + k.CodeExecutionResult.GetOutput() + "\n```"
		return &ContentPart{Type: "output_text", Text: &s, Annotations: []Annotation{}}, true, nil
	case nil:
		if v, ok := jsonx.Value(p.GetExtensions(), D, "@part"); ok && e.same {
			var cp ContentPart
			if err := jsonx.Unmarshal(v, &cp); err == nil {
				return &cp, true, nil
			}
		}
	}
	return nil, false, nil
}

// annotations renders a text part's annotations; a client of this dialect
// gets back the ones Parley does not model as they came.
func annotations(list []*parleyv1.Annotation, p *parleyv1.Part, same bool) []Annotation {
	if v, ok := jsonx.Value(p.GetExtensions(), D, "annotations"); ok && same {
		var raw []Annotation
		if jsonx.Unmarshal(v, &raw) == nil {
			return raw
		}
	}
	if same && jsonx.Has(p.GetExtensions(), D, extNoAnn) && len(list) == 0 {
		return nil
	}
	out := []Annotation{}
	for _, a := range list {
		if w, ok := wireAnnotation(a); ok {
			out = append(out, w)
		}
	}
	return out
}

func (e *encoder) media(m *parleyv1.Media, field string) (*ContentPart, error) {
	kind := m.GetKind()
	if kind == parleyv1.MediaKind_MEDIA_KIND_UNSPECIFIED {
		kind = openai.KindOfMIME(m.GetMimeType())
	}
	switch kind {
	case parleyv1.MediaKind_MEDIA_KIND_IMAGE:
		cp := &ContentPart{Type: "input_image", Detail: openai.DetailWord(m.GetDetail())}
		if id, ok := m.GetSource().(*parleyv1.Media_FileId); ok {
			cp.FileID = &id.FileId
		} else {
			u := openai.MediaURL(m)
			cp.ImageURL = &u
		}
		if cp.Detail == "" && !e.same {
			cp.Detail = "auto"
		}
		return cp, nil
	case parleyv1.MediaKind_MEDIA_KIND_AUDIO, parleyv1.MediaKind_MEDIA_KIND_VIDEO:
		return nil, translate.Unsupported(D, field+".media", "the responses style takes no %s input", strings.ToLower(strings.TrimPrefix(kind.String(), "MEDIA_KIND_")))
	}
	cp := &ContentPart{Type: "input_file"}
	if m.GetFilename() != "" {
		cp.Filename = new(m.GetFilename())
	}
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_FileId:
		cp.FileID = &s.FileId
	case *parleyv1.Media_Data:
		cp.FileData = new(openai.DataURL(m.GetMimeType(), s.Data))
		if cp.Filename == nil {
			cp.Filename = new("document" + extension(m.GetMimeType()))
		}
	case *parleyv1.Media_Uri:
		cp.FileURL = &s.Uri
	}
	return cp, nil
}

func extension(mime string) string {
	switch mime {
	case "application/pdf":
		return ".pdf"
	case "text/plain":
		return ".txt"
	}
	return ""
}

// item renders a part that is an item of its own.
func (e *encoder) item(m *parleyv1.Message, p *parleyv1.Part, field string) ([]Item, error) {
	unknown := e.take(m.GetExtensions(), "")
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_ToolCall:
		c := k.ToolCall
		if c.GetKind() == parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE {
			action := c.GetArguments()
			if action == "" {
				action = "{}"
			}
			return []Item{{Type: "computer_call", ID: p.GetItemId(), CallID: c.GetId(), Action: jsontext.Value(action), Status: statusWord(p.GetStatus()), Unknown: unknown}}, nil
		}
		args := c.GetArguments()
		it := Item{Type: "function_call", CallID: c.GetId(), Name: c.GetName(), Arguments: &args, Unknown: unknown}
		if e.same || strings.HasPrefix(p.GetItemId(), "fc_") {
			it.ID, it.Status = p.GetItemId(), statusWord(p.GetStatus())
		}
		return []Item{it}, nil
	case *parleyv1.Part_ToolResult:
		r := k.ToolResult
		if r.GetKind() == parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE {
			out, ok := jsonx.Value(m.GetExtensions(), D, "output")
			if !ok || !e.same {
				raw, err := e.screenshot(r, field)
				if err != nil {
					return nil, err
				}
				out = raw
			}
			it := Item{Type: "computer_call_output", CallID: r.GetCallId(), Output: out, Unknown: unknown}
			delete(it.Unknown, "output")
			e.idStatus(&it, m)
			return []Item{it}, nil
		}
		it := Item{Type: "function_call_output", CallID: r.GetCallId(), Unknown: unknown}
		e.idStatus(&it, m)
		out, err := e.resultOutput(r, field)
		if err != nil {
			return nil, err
		}
		it.Output = out
		return []Item{it}, nil
	case *parleyv1.Part_Reasoning:
		return e.reasoning(m, p, k.Reasoning), nil
	case *parleyv1.Part_HostedToolCall:
		if !e.same {
			return nil, nil
		}
		hc := k.HostedToolCall
		it := Item{ID: hc.GetId(), Status: statusWord(p.GetStatus()), Unknown: unknown}
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
			return nil, nil
		}
		return []Item{it}, nil
	case *parleyv1.Part_HostedToolResult:
		return nil, nil // joined to its call by the caller
	case *parleyv1.Part_ItemReference:
		return []Item{{Type: "item_reference", ID: k.ItemReference.GetId()}}, nil
	case nil:
		if v, ok := jsonx.Value(p.GetExtensions(), D, extItem); ok && e.same {
			var it Item
			if err := jsonx.Unmarshal(v, &it); err != nil {
				return nil, err
			}
			return []Item{it}, nil
		}
	}
	return nil, nil
}

func (e *encoder) screenshot(r *parleyv1.ToolResult, field string) (jsontext.Value, error) {
	for _, c := range r.GetContent() {
		if m := c.GetMedia(); m != nil && m.GetKind() == parleyv1.MediaKind_MEDIA_KIND_IMAGE {
			shot := map[string]string{"type": "computer_screenshot"}
			if id, ok := m.GetSource().(*parleyv1.Media_FileId); ok {
				shot["file_id"] = id.FileId
			} else {
				shot["image_url"] = openai.MediaURL(m)
			}
			return jsonx.MarshalSorted(shot)
		}
	}
	return nil, translate.Unsupported(D, field+".tool_result", "a computer call's output must be a screenshot")
}

// resultOutput renders a tool result's content: its text when it is text
// alone, else an array of input parts.
func (e *encoder) resultOutput(r *parleyv1.ToolResult, field string) (jsontext.Value, error) {
	textOnly := true
	for _, c := range r.GetContent() {
		if c.GetText() == nil {
			textOnly = false
		}
	}
	if textOnly {
		s := joinText(r.GetContent(), "\n")
		if r.GetIsError() && !e.same {
			s = "Error: " + s
		}
		return jsonx.Marshal(s)
	}
	var parts []ContentPart
	for j, c := range r.GetContent() {
		switch k := c.GetKind().(type) {
		case *parleyv1.Part_Text:
			parts = append(parts, ContentPart{Type: "input_text", Text: &k.Text.Text})
		case *parleyv1.Part_Media:
			cp, err := e.media(k.Media, field+".content["+strconv.Itoa(j)+"]")
			if err != nil {
				return nil, err
			}
			parts = append(parts, *cp)
		}
	}
	return jsonx.Marshal(parts)
}

// reasoning renders a reasoning part. Only reasoning this dialect made,
// by this upstream, with its id, goes back: a service rejects encrypted
// content it did not make, and a reasoning item without an id.
func (e *encoder) reasoning(m *parleyv1.Message, p *parleyv1.Part, r *parleyv1.Reasoning) []Item {
	enc := r.GetEncryptedContent()
	clientMade := e.same && enc.GetOrigin().GetUpstream() == "" && enc.GetOrigin().GetDialect() == D
	if !clientMade && !translate.SendableTo(enc, D, e.t.Upstream) {
		if e.same && enc == nil && p.GetItemId() != "" {
			// A client's own reasoning item without encrypted content
			// (a stored response's): it goes back by id.
			return []Item{e.reasoningItem(m, p, r, nil)}
		}
		return nil
	}
	if p.GetItemId() == "" {
		return nil
	}
	return []Item{e.reasoningItem(m, p, r, enc)}
}

func (e *encoder) reasoningItem(m *parleyv1.Message, p *parleyv1.Part, r *parleyv1.Reasoning, enc *parleyv1.Opaque) Item {
	it := Item{Type: "reasoning", ID: p.GetItemId(), Status: statusWord(p.GetStatus()), Summary: []SummaryPart{}, Unknown: e.take(m.GetExtensions(), "")}
	if v, ok := jsonx.Value(m.GetExtensions(), D, extSummary); ok && e.same {
		_ = jsonx.Unmarshal(v, &it.Summary)
	} else {
		for _, s := range r.GetSummary() {
			it.Summary = append(it.Summary, SummaryPart{Type: "summary_text", Text: s})
		}
	}
	if r.GetText() != "" {
		it.Content = &Content{Parts: []ContentPart{{Type: "reasoning_text", Text: new(r.GetText())}}}
	}
	if enc != nil {
		it.EncryptedContent = new(enc.GetValue())
	}
	return it
}

var kindTypes = map[parleyv1.ToolKind]string{
	parleyv1.ToolKind_TOOL_KIND_FILE_SEARCH:  "file_search",
	parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:   "web_search_preview",
	parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE: "computer_use_preview",
}

func (e *encoder) tools(w *Request) error {
	for i, t := range e.req.GetTools() {
		field := "tools[" + strconv.Itoa(i) + "]"
		wt, ok, err := e.tool(t, field)
		if err != nil {
			return err
		}
		if ok {
			w.Tools = append(w.Tools, wt)
		}
	}
	tc := e.req.GetToolChoice()
	if tc == nil {
		return nil
	}
	w.ParallelToolCalls = tc.ParallelCalls
	mode := ""
	switch tc.GetMode() {
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
		mode = "auto"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		mode = "none"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		mode = "required"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
		switch {
		case tc.GetName() != "":
			w.ToolChoice = &ToolChoice{Type: "function", Name: tc.GetName()}
		case kindTypes[tc.GetKind()] != "":
			typ := kindTypes[tc.GetKind()]
			if v, ok := jsonx.Value(e.req.GetExtensions(), D, extToolChoiceType); ok && e.same {
				_ = jsonx.Unmarshal(v, &typ)
			}
			w.ToolChoice = &ToolChoice{Type: typ}
		default:
			return translate.Unsupported(D, "tool_choice.kind", "the responses style cannot force a %s tool", tc.GetKind())
		}
		w.ToolChoice.Unknown = e.take(e.req.GetExtensions(), "tool_choice")
		return nil
	default:
		return nil
	}
	switch names := tc.GetAllowedNames(); {
	case len(names) == 1 && mode == "required" && !e.has(e.req.GetExtensions(), extAllowedTools):
		w.ToolChoice = &ToolChoice{Type: "function", Name: names[0]}
	case len(names) > 0:
		c := &ToolChoice{Type: "allowed_tools", AMode: mode, Unknown: e.take(e.req.GetExtensions(), "tool_choice")}
		if mode == "none" {
			c.AMode = "auto"
		}
		for _, n := range names {
			c.Tools = append(c.Tools, Tool{Type: "function", Name: n})
		}
		w.ToolChoice = c
	default:
		w.ToolChoice = &ToolChoice{Mode: mode}
	}
	return nil
}

func (e *encoder) tool(t *parleyv1.Tool, field string) (Tool, bool, error) {
	unknown := e.take(t.GetExtensions(), "")
	switch k := t.GetKind().(type) {
	case *parleyv1.Tool_Function:
		f := k.Function
		wt := Tool{Type: "function", Name: f.GetName(), Strict: f.Strict, Unknown: unknown}
		if f.GetDescription() != "" {
			wt.Description = new(f.GetDescription())
		}
		if f.GetParameters() != "" {
			wt.Parameters = jsontext.Value(f.GetParameters())
		} else if !e.same {
			wt.Parameters = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		if !e.same && wt.Strict == nil {
			// The service takes a function as strict unless told; a
			// schema from another dialect rarely meets strict mode.
			wt.Strict = new(false)
		}
		return wt, true, nil
	case *parleyv1.Tool_FileSearch:
		fs := k.FileSearch
		wt := Tool{Type: "file_search", VectorStoreIDs: fs.GetVectorStoreIds(), Unknown: unknown}
		if fs.MaxNumResults != nil {
			wt.MaxNumResults = new(int64(fs.GetMaxNumResults()))
		}
		if r := fs.GetRanking(); r != nil {
			wt.RankingOptions = &RankingOptions{Ranker: r.GetRanker(), ScoreThreshold: r.ScoreThreshold, Unknown: e.take(t.GetExtensions(), "ranking_options")}
		}
		if fs.GetFilters() != nil {
			raw, err := jsonx.MarshalSorted(wireFilterOf(fs.GetFilters()))
			if err != nil {
				return Tool{}, false, err
			}
			wt.Filters = raw
		}
		return wt, true, nil
	case *parleyv1.Tool_WebSearch:
		ws := k.WebSearch
		typ := ws.GetVersion()
		if !strings.HasPrefix(typ, "web_search") {
			typ = "web_search_preview"
		}
		wt := Tool{Type: typ, Domains: ws.GetAllowedDomains(), Unknown: unknown}
		for w, cs := range contextSizes {
			if cs == ws.GetContextSize() {
				wt.SearchContextSize = w
			}
		}
		if l := ws.GetUserLocation(); l != nil {
			wt.UserLocation = &UserLocation{Type: "approximate", Unknown: e.take(t.GetExtensions(), "user_location")}
			for _, f := range []struct {
				dst **string
				v   string
			}{{&wt.UserLocation.City, l.GetCity()}, {&wt.UserLocation.Region, l.GetRegion()}, {&wt.UserLocation.Country, l.GetCountry()}, {&wt.UserLocation.Timezone, l.GetTimezone()}} {
				if f.v != "" {
					*f.dst = new(f.v)
				}
			}
		}
		if len(ws.GetBlockedDomains()) > 0 {
			e.dropped = append(e.dropped, field+".web_search.blocked_domains")
		}
		if ws.MaxUses != nil {
			e.dropped = append(e.dropped, field+".web_search.max_uses")
		}
		return wt, true, nil
	case *parleyv1.Tool_ComputerUse:
		c := k.ComputerUse
		typ := c.GetVersion()
		if typ != "computer" {
			typ = "computer_use_preview"
		}
		env := c.GetEnvironment()
		if env == "" {
			env = "linux"
		}
		return Tool{Type: typ, DisplayWidth: new(int64(c.GetDisplayWidth())), DisplayHeight: new(int64(c.GetDisplayHeight())), Environment: env, Unknown: unknown}, true, nil
	case nil:
		if v, ok := jsonx.Value(t.GetExtensions(), D, extTool); ok && e.same {
			var wt Tool
			if err := jsonx.Unmarshal(v, &wt); err != nil {
				return Tool{}, false, err
			}
			return wt, true, nil
		}
		return Tool{}, false, nil
	}
	return Tool{}, false, translate.Unsupported(D, field, "the responses style has no %s tool", strings.TrimPrefix(strings.ToLower(kindName(t)), "tool_"))
}

func kindName(t *parleyv1.Tool) string {
	switch t.GetKind().(type) {
	case *parleyv1.Tool_CodeExecution:
		return "code execution"
	case *parleyv1.Tool_Bash:
		return "bash"
	case *parleyv1.Tool_TextEditor:
		return "text editor"
	case *parleyv1.Tool_UrlContext:
		return "URL fetch"
	}
	return "such"
}

func wireFilterOf(f *parleyv1.SearchFilter) map[string]any {
	switch k := f.GetKind().(type) {
	case *parleyv1.SearchFilter_Compound:
		typ := "and"
		if k.Compound.GetOperator() == parleyv1.LogicalOperator_LOGICAL_OPERATOR_OR {
			typ = "or"
		}
		var subs []any
		for _, s := range k.Compound.GetFilters() {
			subs = append(subs, wireFilterOf(s))
		}
		return map[string]any{"type": typ, "filters": subs}
	case *parleyv1.SearchFilter_Comparison:
		typ := ""
		for w, op := range operators {
			if op == k.Comparison.GetOperator() {
				typ = w
			}
		}
		return map[string]any{"type": typ, "key": k.Comparison.GetKey(), "value": k.Comparison.GetValue().AsInterface()}
	}
	return nil
}

func (e *encoder) settings(w *Request) error {
	req, g := e.req, e.req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	ext := req.GetExtensions()
	w.Temperature, w.TopP = g.Temperature, g.TopP
	if g.MaxOutputTokens != nil {
		// The service's lower bound is 16.
		w.MaxOutputTokens = new(max(int64(g.GetMaxOutputTokens()), 16))
	}
	if g.TopLogprobs != nil {
		w.TopLogprobs = new(int64(g.GetTopLogprobs()))
	}
	if g.GetCandidateCount() > 1 {
		return translate.Unsupported(D, "generation.candidate_count", "the responses style returns one answer per request")
	}
	for _, d := range []struct {
		set  bool
		name string
	}{
		{len(g.GetStopSequences()) > 0, "generation.stop_sequences"},
		{g.Seed != nil, "generation.seed"},
		{g.PresencePenalty != nil, "generation.presence_penalty"},
		{g.FrequencyPenalty != nil, "generation.frequency_penalty"},
		{len(g.GetLogitBias()) > 0, "generation.logit_bias"},
		{g.TopK != nil, "generation.top_k"},
		{g.GetSpeech() != nil, "generation.speech"},
		{g.GetMediaResolution() != parleyv1.MediaResolution_MEDIA_RESOLUTION_UNSPECIFIED, "generation.media_resolution"},
		{g.EnhancedCivicAnswers != nil, "generation.enhanced_civic_answers"},
		{len(req.GetSafetySettings()) > 0, "safety_settings"},
		{req.GetCachedContent() != "", "cached_content"},
	} {
		if d.set {
			e.dropped = append(e.dropped, d.name)
		}
	}
	if g.Logprobs != nil && *g.Logprobs && !hasInclusion(req, parleyv1.OutputInclusion_OUTPUT_INCLUSION_OUTPUT_LOGPROBS) {
		w.Include = append(w.Include, "message.output_text.logprobs")
	}
	for _, inc := range req.GetInclude() {
		for s, v := range inclusions {
			if v == inc {
				w.Include = append(w.Include, s)
			}
		}
	}
	text := &TextConfig{Unknown: e.take(ext, "text")}
	if v := openai.VerbosityWord(g.GetVerbosity()); v != "" {
		text.Verbosity = &v
	}
	if rf := req.GetResponseFormat(); rf != nil {
		f := &Format{Unknown: e.take(ext, "text/format")}
		switch rf.GetKind() {
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_TEXT:
			f.Type = "text"
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT:
			f.Type = "json_object"
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA:
			f.Type, f.Name, f.Strict = "json_schema", rf.GetName(), rf.Strict
			if f.Name == "" || !formatName.MatchString(f.Name) {
				f.Name = "response"
			}
			if rf.GetDescription() != "" {
				f.Description = new(rf.GetDescription())
			}
			f.Schema = jsontext.Value(rf.GetSchema())
			if rf.GetSchema() == "" {
				f.Schema = jsontext.Value(`{"type":"object"}`)
			}
		default:
			f = nil
			e.dropped = append(e.dropped, "response_format")
		}
		text.Format = f
	}
	if text.Format != nil || text.Verbosity != nil || len(text.Unknown) > 0 {
		w.Text = text
	}
	if rc := req.GetReasoning(); rc != nil {
		r := &ReasoningConfig{Unknown: e.take(ext, "reasoning")}
		effort := rc.GetEffort()
		switch {
		case effort != parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
		case rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
			effort = parleyv1.ReasoningEffort_REASONING_EFFORT_NONE
		case rc.BudgetTokens != nil:
			effort = translate.EffortForBudget(rc.GetBudgetTokens())
		}
		if s := openai.EffortWord(effort); s != "" {
			r.Effort = &s
		}
		var summary string
		for s, v := range summaries {
			if v == rc.GetSummary() {
				summary = s
			}
		}
		if summary == "" && !e.same && (rc.GetIncludeThoughts() || rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_ENABLED) {
			// A client of another dialect that asked to see reasoning
			// sees the summaries.
			summary = "auto"
		}
		if summary != "" {
			if e.has(ext, extGenerateSummary) {
				r.GenerateSummary = &summary
			} else {
				r.Summary = &summary
			}
		}
		if r.Effort != nil || r.Summary != nil || r.GenerateSummary != nil || len(r.Unknown) > 0 || e.same {
			w.Reasoning = r
		}
		if !e.same && effort != parleyv1.ReasoningEffort_REASONING_EFFORT_NONE && !hasInclusion(req, parleyv1.OutputInclusion_OUTPUT_INCLUSION_REASONING_ENCRYPTED_CONTENT) {
			// Clients of other dialects send their history back whole:
			// the reasoning must come back encrypted to be sent again.
			w.Include = append(w.Include, "reasoning.encrypted_content")
		}
	}
	if len(req.GetMetadata()) > 0 {
		w.Metadata = req.GetMetadata()
	}
	if s := openai.ServiceTierWord(req.GetServiceTier()); s != "" {
		w.ServiceTier = &s
	}
	if req.GetEndUserId() != "" {
		w.User = new(req.GetEndUserId())
	}
	switch req.GetTruncation() {
	case parleyv1.Truncation_TRUNCATION_AUTO:
		w.Truncation = new("auto")
	case parleyv1.Truncation_TRUNCATION_DISABLED:
		w.Truncation = new("disabled")
	}
	if e.same {
		w.Store = req.Store
		if req.GetPreviousResponseId() != "" {
			w.PreviousResponseID = new(req.GetPreviousResponseId())
		}
	} else {
		// A client of another dialect sends its whole history every
		// time: nothing needs keeping upstream.
		w.Store = new(false)
		if req.GetPreviousResponseId() != "" {
			e.dropped = append(e.dropped, "previous_response_id")
		}
	}
	return nil
}

func hasInclusion(req *parleyv1.Request, inc parleyv1.OutputInclusion) bool {
	for _, i := range req.GetInclude() {
		if i == inc {
			return true
		}
	}
	return false
}
