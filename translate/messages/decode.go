package messages

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// D is this package's dialect.
const D = parleyv1.Dialect_DIALECT_MESSAGES

// Extension keys that are not wire members: they record how the client
// spelled something, so that the same spelling goes back out.
const (
	extStringContent = "@string"         // the content was a string, not blocks
	extBlock         = "@block"          // a block with no canonical home, raw
	extType          = "@type"           // a block type the canonical kind does not imply
	extVersion       = "@header:version" // the anthropic-version header
	extBeta          = "@header:beta"    // the anthropic-beta features, a JSON array
	extRole          = "@role"           // a role spelling the canonical role does not imply
	extCarrier       = "@carrier"        // a reasoning block that only carried a signature
)

// Client is the messages dialect as clients speak it.
type Client struct{}

var _ translate.Client = Client{}

// Dialect implements translate.Client.
func (Client) Dialect() parleyv1.Dialect { return D }

// DecodeRequest implements translate.Client.
func (Client) DecodeRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if err := jsonx.Unmarshal(in.Body, &w); err != nil {
		return nil, decodeError(err)
	}
	d := decoder{}
	req, err := d.request(&w, false)
	if err != nil {
		return nil, err
	}
	headers(req, in.Header)
	return req, nil
}

// DecodeCountRequest implements translate.CountClient: the body of
// /v1/messages/count_tokens is a request without max_tokens.
func (Client) DecodeCountRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if err := jsonx.Unmarshal(in.Body, &w); err != nil {
		return nil, decodeError(err)
	}
	d := decoder{}
	req, err := d.request(&w, true)
	if err != nil {
		return nil, err
	}
	headers(req, in.Header)
	return req, nil
}

// decodeError turns a JSON error into this dialect's field-path message.
func decodeError(err error) error {
	segs, what := jsonx.Path(err)
	return &translate.InputError{Field: jsonx.DottedPath(segs), Message: what, Err: err}
}

// headers keeps the version and beta headers, in either spelling; both may
// repeat and hold comma-separated lists.
func headers(req *parleyv1.Request, h http.Header) {
	version := firstHeader(h, "anthropic-version", "provider-version")
	if version != "" {
		jsonx.KeepValue(&req.Extensions, D, extVersion, jsontext.Value(quote(version)))
	}
	var betas []string
	seen := map[string]bool{}
	for _, name := range []string{"anthropic-beta", "provider-beta"} {
		for _, v := range h.Values(name) {
			for _, b := range strings.Split(v, ",") {
				if b = strings.TrimSpace(b); b != "" && !seen[b] {
					seen[b] = true
					betas = append(betas, b)
				}
			}
		}
	}
	if len(betas) > 0 {
		raw, _ := jsonx.Marshal(betas)
		jsonx.KeepValue(&req.Extensions, D, extBeta, raw)
	}
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(h.Get(n)); v != "" {
			return v
		}
	}
	return ""
}

func quote(s string) string {
	b, _ := jsonx.Marshal(s)
	return string(b)
}

type decoder struct {
	// names of tool calls seen so far, by id, to name tool results
	callNames map[string]string
}

func (d *decoder) request(w *Request, countOnly bool) (*parleyv1.Request, error) {
	if w.Model == "" {
		return nil, translate.Invalid("model", "Field required")
	}
	if len(w.Model) > 256 {
		return nil, translate.Invalid("model", "String should have at most 256 characters")
	}
	if w.Messages == nil {
		return nil, translate.Invalid("messages", "Field required")
	}
	req := &parleyv1.Request{
		Model:      w.Model,
		Extensions: &parleyv1.Extensions{Dialect: D, Fields: map[string]string{}},
	}
	gen := &parleyv1.GenerationConfig{}
	if !countOnly {
		if w.MaxTokens == nil {
			return nil, translate.Invalid("max_tokens", "Field required")
		}
		if *w.MaxTokens < 1 {
			return nil, translate.Invalid("max_tokens", "Input should be greater than or equal to 1")
		}
	}
	if w.MaxTokens != nil {
		gen.MaxOutputTokens = ptr(clampInt32(*w.MaxTokens))
	}
	gen.StopSequences = w.StopSequences
	gen.Temperature = w.Temperature
	gen.TopP = w.TopP
	if w.TopK != nil {
		gen.TopK = ptr(clampInt32(*w.TopK))
	}
	if w.Stream != nil {
		req.Stream = *w.Stream
	}
	if w.System != nil {
		parts, err := d.blocks(*w.System, "system", false)
		if err != nil {
			return nil, err
		}
		req.Instructions = parts
		if w.System.String {
			jsonx.KeepValue(&req.Extensions, D, "@string:system", jsontext.Value("true"))
		}
	}
	for i := range w.Messages {
		m, err := d.message(&w.Messages[i], fmt.Sprintf("messages.%d", i))
		if err != nil {
			return nil, err
		}
		req.Messages = append(req.Messages, m)
	}
	if w.Metadata != nil {
		if w.Metadata.UserID != nil {
			req.EndUserId = *w.Metadata.UserID
		}
		jsonx.Keep(&req.Extensions, D, "metadata", w.Metadata.Unknown)
	}
	if w.Thinking != nil {
		rc, err := thinking(w.Thinking)
		if err != nil {
			return nil, err
		}
		req.Reasoning = rc
		jsonx.Keep(&req.Extensions, D, "thinking", w.Thinking.Unknown)
	}
	if w.OutputConfig != nil {
		if err := d.outputConfig(req, w.OutputConfig); err != nil {
			return nil, err
		}
	}
	if w.ToolChoice != nil {
		tc, err := toolChoice(w.ToolChoice)
		if err != nil {
			return nil, err
		}
		req.ToolChoice = tc
		jsonx.Keep(&req.Extensions, D, "tool_choice", w.ToolChoice.Unknown)
	}
	for i := range w.Tools {
		t, err := tool(&w.Tools[i], fmt.Sprintf("tools.%d", i))
		if err != nil {
			return nil, err
		}
		req.Tools = append(req.Tools, t)
	}
	switch w.ServiceTier {
	case "":
	case "auto":
		req.ServiceTier = parleyv1.ServiceTier_SERVICE_TIER_AUTO
	case "standard_only":
		req.ServiceTier = parleyv1.ServiceTier_SERVICE_TIER_STANDARD_ONLY
	default:
		return nil, translate.Invalid("service_tier", "Input should be 'auto' or 'standard_only'")
	}
	if !isEmptyGeneration(gen) {
		req.Generation = gen
	}
	jsonx.Keep(&req.Extensions, D, "", w.Unknown)
	return req, nil
}

func isEmptyGeneration(g *parleyv1.GenerationConfig) bool {
	return g.MaxOutputTokens == nil && g.Temperature == nil && g.TopP == nil && g.TopK == nil && len(g.StopSequences) == 0
}

func (d *decoder) outputConfig(req *parleyv1.Request, oc *OutputConfig) error {
	if oc.Effort != "" {
		e, ok := effortFromWire[oc.Effort]
		if !ok {
			return translate.Invalid("output_config.effort", "Input should be 'low', 'medium', 'high' or 'max'")
		}
		if req.Reasoning == nil {
			req.Reasoning = &parleyv1.ReasoningConfig{}
		}
		req.Reasoning.Effort = e
	}
	if f := oc.Format; f != nil {
		if f.Type != "json_schema" {
			return translate.Invalid("output_config.format.type", "Input should be 'json_schema'")
		}
		req.ResponseFormat = &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Schema: string(f.Schema)}
		jsonx.Keep(&req.Extensions, D, "output_config/format", f.Unknown)
	}
	jsonx.Keep(&req.Extensions, D, "output_config", oc.Unknown)
	return nil
}

var effortFromWire = map[string]parleyv1.ReasoningEffort{
	"low":    parleyv1.ReasoningEffort_REASONING_EFFORT_LOW,
	"medium": parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
	"high":   parleyv1.ReasoningEffort_REASONING_EFFORT_HIGH,
	"max":    parleyv1.ReasoningEffort_REASONING_EFFORT_XHIGH,
}

func thinking(t *Thinking) (*parleyv1.ReasoningConfig, error) {
	switch t.Type {
	case "enabled":
		if t.BudgetTokens == nil {
			return nil, translate.Invalid("thinking.enabled.budget_tokens", "Field required")
		}
		return &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ENABLED, BudgetTokens: ptr(clampInt32(*t.BudgetTokens))}, nil
	case "disabled":
		return &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_DISABLED}, nil
	case "adaptive":
		return &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE}, nil
	}
	return nil, translate.Invalid("thinking.type", "Input should be 'enabled', 'disabled' or 'adaptive'")
}

func toolChoice(tc *ToolChoice) (*parleyv1.ToolChoice, error) {
	out := &parleyv1.ToolChoice{}
	switch tc.Type {
	case "auto":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO
	case "any":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED
	case "none":
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE
	case "tool":
		if tc.Name == "" {
			return nil, translate.Invalid("tool_choice.tool.name", "Field required")
		}
		out.Mode = parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL
		out.Name = tc.Name
	default:
		return nil, translate.Invalid("tool_choice.type", "Input should be 'auto', 'any', 'tool' or 'none'")
	}
	if tc.DisableParallelToolUse != nil {
		out.ParallelCalls = ptr(!*tc.DisableParallelToolUse)
	}
	return out, nil
}

// builtinPrefixes maps the type prefix of a built-in tool to its kind.
var builtinPrefixes = []struct {
	prefix string
	kind   parleyv1.ToolKind
}{
	{"computer_", parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE},
	{"bash_", parleyv1.ToolKind_TOOL_KIND_BASH},
	{"text_editor_", parleyv1.ToolKind_TOOL_KIND_TEXT_EDITOR},
	{"web_search_", parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH},
	{"code_execution_", parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION},
	{"web_fetch_", parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT},
}

func builtinKind(typ string) parleyv1.ToolKind {
	for _, b := range builtinPrefixes {
		if strings.HasPrefix(typ, b.prefix) {
			return b.kind
		}
	}
	return parleyv1.ToolKind_TOOL_KIND_UNSPECIFIED
}

func tool(w *Tool, path string) (*parleyv1.Tool, error) {
	t := &parleyv1.Tool{}
	if w.CacheControl != nil {
		cc, err := cacheControl(w.CacheControl, path+".cache_control")
		if err != nil {
			return nil, err
		}
		t.CacheControl = cc
	}
	keepName := func(def string) string {
		if w.Name == def {
			return ""
		}
		return w.Name
	}
	switch kind := builtinKind(w.Type); {
	case w.Type == "" || w.Type == "custom":
		if w.Name == "" {
			return nil, translate.Invalid(path+".name", "Field required")
		}
		if len(w.InputSchema) == 0 {
			return nil, translate.Invalid(path+".input_schema", "Field required")
		}
		ft := &parleyv1.FunctionTool{Name: w.Name, Parameters: string(w.InputSchema), Strict: w.Strict}
		if w.Description != nil {
			ft.Description = *w.Description
		}
		t.Kind = &parleyv1.Tool_Function{Function: ft}
		if w.Type == "custom" {
			jsonx.KeepValue(&t.Extensions, D, "type", jsontext.Value(`"custom"`))
		}
	case kind == parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE:
		ct := &parleyv1.ComputerUseTool{Version: w.Type, Name: keepName("computer")}
		if w.DisplayWidthPx == nil || w.DisplayHeightPx == nil {
			return nil, translate.Invalid(path+".display_width_px", "Field required")
		}
		ct.DisplayWidth, ct.DisplayHeight = int32(*w.DisplayWidthPx), int32(*w.DisplayHeightPx)
		if w.DisplayNumber != nil {
			ct.DisplayNumber = ptr(int32(*w.DisplayNumber))
		}
		t.Kind = &parleyv1.Tool_ComputerUse{ComputerUse: ct}
	case kind == parleyv1.ToolKind_TOOL_KIND_BASH:
		t.Kind = &parleyv1.Tool_Bash{Bash: &parleyv1.BashTool{Version: w.Type, Name: keepName("bash")}}
	case kind == parleyv1.ToolKind_TOOL_KIND_TEXT_EDITOR:
		te := &parleyv1.TextEditorTool{Version: w.Type, Name: w.Name}
		if w.MaxCharacters != nil {
			te.MaxCharacters = ptr(clampInt32(*w.MaxCharacters))
		}
		t.Kind = &parleyv1.Tool_TextEditor{TextEditor: te}
	case kind == parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:
		ws := &parleyv1.WebSearchTool{Version: w.Type, AllowedDomains: w.AllowedDomains, BlockedDomains: w.BlockedDomains}
		if w.MaxUses != nil {
			ws.MaxUses = ptr(clampInt32(*w.MaxUses))
		}
		if ul := w.UserLocation; ul != nil {
			ws.UserLocation = &parleyv1.UserLocation{City: ul.City, Region: ul.Region, Country: ul.Country, Timezone: ul.Timezone}
			jsonx.Keep(&t.Extensions, D, "user_location", ul.Unknown)
		}
		t.Kind = &parleyv1.Tool_WebSearch{WebSearch: ws}
		if w.Name != "web_search" {
			jsonx.KeepValue(&t.Extensions, D, "name", jsontext.Value(quote(w.Name)))
		}
	case kind == parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION:
		t.Kind = &parleyv1.Tool_CodeExecution{CodeExecution: &parleyv1.CodeExecutionTool{Version: w.Type}}
		if w.Name != "code_execution" {
			jsonx.KeepValue(&t.Extensions, D, "name", jsontext.Value(quote(w.Name)))
		}
	case kind == parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT:
		t.Kind = &parleyv1.Tool_UrlContext{UrlContext: &parleyv1.UrlContextTool{Version: w.Type}}
		if w.Name != "web_fetch" {
			jsonx.KeepValue(&t.Extensions, D, "name", jsontext.Value(quote(w.Name)))
		}
	default:
		// A tool type Parley does not model (memory, tool search, MCP
		// toolsets ...): kept whole for an upstream of this dialect.
		raw, err := jsonx.Marshal(w)
		if err != nil {
			return nil, err
		}
		jsonx.KeepValue(&t.Extensions, D, extBlock, raw)
		return t, nil
	}
	if t.GetFunction() == nil {
		if w.Description != nil {
			jsonx.KeepValue(&t.Extensions, D, "description", jsontext.Value(quote(*w.Description)))
		}
		if len(w.InputSchema) > 0 {
			jsonx.KeepValue(&t.Extensions, D, "input_schema", w.InputSchema)
		}
		if w.Strict != nil {
			jsonx.KeepValue(&t.Extensions, D, "strict", jsontext.Value(fmt.Sprint(*w.Strict)))
		}
	}
	jsonx.Keep(&t.Extensions, D, "", w.Unknown)
	return t, nil
}

func (d *decoder) message(w *Message, path string) (*parleyv1.Message, error) {
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
		jsonx.KeepValue(&m.Extensions, D, extStringContent, jsontext.Value("true"))
	}
	jsonx.Keep(&m.Extensions, D, "", w.Unknown)
	return m, nil
}

func (d *decoder) blocks(c Content, path string, assistant bool) ([]*parleyv1.Part, error) {
	if c.String {
		return []*parleyv1.Part{{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: c.Text}}}}, nil
	}
	parts := make([]*parleyv1.Part, 0, len(c.Blocks))
	var carried *parleyv1.Opaque
	for i := range c.Blocks {
		p, err := d.block(&c.Blocks[i], fmt.Sprintf("%s.%d", path, i))
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

// carrierOf reports whether p is a reasoning block that only carried the
// signature of a neighbouring part, and of which one.
func carrierOf(p *parleyv1.Part) (*parleyv1.Opaque, translate.SealKind) {
	v, ok := jsonx.Value(p.GetExtensions(), D, extCarrier)
	if !ok {
		return nil, translate.SealAsIs
	}
	if string(v) == `"prev"` {
		return p.GetSignature(), translate.SealCarrierPrev
	}
	return p.GetSignature(), translate.SealCarrierNext
}

func (d *decoder) block(b *Block, path string) (*parleyv1.Part, error) {
	p := &parleyv1.Part{}
	if b.CacheControl != nil {
		cc, err := cacheControl(b.CacheControl, path+".cache_control")
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
		t := &parleyv1.Text{Text: *b.Text}
		anns, err := citations(b.Citations, path+".citations", &p.Extensions)
		if err != nil {
			return nil, err
		}
		t.Annotations = anns
		p.Kind = &parleyv1.Part_Text{Text: t}
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
			jsonx.KeepValue(&p.Extensions, D, "citations", b.Citations)
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
		p.Kind = &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{Id: b.ID, Name: b.Name, Arguments: args}}
		if d.callNames == nil {
			d.callNames = map[string]string{}
		}
		d.callNames[b.ID] = b.Name
	case "tool_result":
		if b.ToolUseID == "" {
			return nil, translate.Invalid(path+".tool_use_id", "Field required")
		}
		tr := &parleyv1.ToolResult{CallId: b.ToolUseID, Name: d.callNames[b.ToolUseID]}
		if b.IsError != nil {
			tr.IsError = *b.IsError
			if !tr.IsError {
				// An explicit false has no canonical spelling; keep it for
				// this dialect.
				jsonx.KeepValue(&p.Extensions, D, "is_error", jsontext.Value("false"))
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
				jsonx.KeepValue(&p.Extensions, D, extStringContent, jsontext.Value("true"))
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
			o := translate.OpenOpaque(*b.Signature, D)
			switch o.Kind {
			case translate.SealEncrypted:
				r.EncryptedContent = o.Opaque
			case translate.SealCarrierNext:
				p.Signature = o.Opaque
				jsonx.KeepValue(&p.Extensions, D, extCarrier, jsontext.Value(`"next"`))
			case translate.SealCarrierPrev:
				p.Signature = o.Opaque
				jsonx.KeepValue(&p.Extensions, D, extCarrier, jsontext.Value(`"prev"`))
			default:
				p.Signature = o.Opaque
			}
		}
	case "redacted_thinking":
		o := translate.OpenOpaque(b.Data, D)
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
				jsonx.KeepValue(&p.Extensions, D, extType, jsontext.Value(quote(b.Type)))
			}
			break
		}
		if b.Type == "" {
			return nil, translate.Invalid(path+".type", "Field required")
		}
		return rawBlock(b)
	}
	jsonx.Keep(&p.Extensions, D, "", b.Unknown)
	return p, nil
}

func decodeErrorAt(err error, path string) error {
	segs, what := jsonx.Path(err)
	field := path
	if len(segs) > 0 {
		field += "." + jsonx.DottedPath(segs)
	}
	return &translate.InputError{Field: field, Message: what, Err: err}
}

// rawBlock keeps a block with no canonical home whole.
func rawBlock(b *Block) (*parleyv1.Part, error) {
	raw, err := jsonx.Marshal(b)
	if err != nil {
		return nil, err
	}
	p := &parleyv1.Part{}
	jsonx.KeepValue(&p.Extensions, D, extBlock, raw)
	return p, nil
}

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

func media(b *Block, path string) (*parleyv1.Media, error) {
	var src Source
	if len(b.Source) == 0 {
		return nil, translate.Invalid(path+".source", "Field required")
	}
	if err := jsonx.Unmarshal(b.Source, &src); err != nil {
		return nil, decodeErrorAt(err, path+".source")
	}
	m := &parleyv1.Media{Kind: parleyv1.MediaKind_MEDIA_KIND_IMAGE}
	if b.Type == "document" {
		m.Kind = parleyv1.MediaKind_MEDIA_KIND_DOCUMENT
		if b.Title != nil {
			m.Title = *b.Title
		}
		if b.Context != nil {
			m.Context = *b.Context
		}
	}
	spath := path + ".source"
	switch src.Type {
	case "base64":
		if src.MediaType == "" {
			return nil, translate.Invalid(spath+".media_type", "Field required")
		}
		if b.Type == "image" && !imageTypes[src.MediaType] {
			return nil, translate.Invalid(spath+".media_type", "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'")
		}
		data, err := base64.StdEncoding.DecodeString(src.Data)
		if err != nil {
			return nil, translate.Invalid(spath+".data", "invalid base64 data")
		}
		m.MimeType = src.MediaType
		m.Source = &parleyv1.Media_Data{Data: data}
	case "text":
		if b.Type != "document" {
			return nil, translate.Invalid(spath+".type", "Input should be 'base64', 'url' or 'file'")
		}
		m.MimeType = "text/plain"
		if src.MediaType != "" {
			m.MimeType = src.MediaType
		}
		m.Source = &parleyv1.Media_Data{Data: []byte(src.Data)}
	case "url":
		if src.URL == "" {
			return nil, translate.Invalid(spath+".url", "Field required")
		}
		m.Source = &parleyv1.Media_Uri{Uri: src.URL}
		if b.Type == "document" {
			m.MimeType = "application/pdf"
		}
	case "file":
		if src.FileID == "" {
			return nil, translate.Invalid(spath+".file_id", "Field required")
		}
		m.Source = &parleyv1.Media_FileId{FileId: src.FileID}
	case "content":
		return nil, nil // a document made of blocks: kept raw
	default:
		return nil, translate.Invalid(spath+".type", "Input should be 'base64', 'url', 'text', 'content' or 'file'")
	}
	if len(src.Unknown) > 0 {
		return nil, nil
	}
	return m, nil
}

var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

func cacheControl(cc *CacheControl, path string) (*parleyv1.CacheControl, error) {
	if cc.Type != "ephemeral" {
		return nil, translate.Invalid(path+".type", "Input should be 'ephemeral'")
	}
	out := &parleyv1.CacheControl{}
	switch cc.TTL {
	case "":
	case "5m":
		out.Ttl = durationpb.New(5 * time.Minute)
	case "1h":
		out.Ttl = durationpb.New(time.Hour)
	default:
		return nil, translate.Invalid(path+".ttl", "Input should be '5m' or '1h'")
	}
	return out, nil
}

func citations(raw jsontext.Value, path string, ext **parleyv1.Extensions) ([]*parleyv1.Annotation, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if raw.Kind() == 'n' {
		jsonx.KeepValue(ext, D, "citations", raw)
		return nil, nil
	}
	var cs []Citation
	if err := jsonx.Unmarshal(raw, &cs); err != nil {
		return nil, decodeErrorAt(err, path)
	}
	out := make([]*parleyv1.Annotation, 0, len(cs))
	for _, c := range cs {
		a, ok := citation(&c)
		if !ok {
			// A citation type Parley does not model: keep all of them raw
			// for this dialect.
			jsonx.KeepValue(ext, D, "citations", raw)
			return nil, nil
		}
		out = append(out, a)
	}
	return out, nil
}

func citation(c *Citation) (*parleyv1.Annotation, bool) {
	if len(c.Unknown) > 0 {
		return nil, false
	}
	a := &parleyv1.Annotation{CitedText: c.CitedText}
	loc := &parleyv1.CitationLocation{}
	if c.DocumentIndex != nil {
		loc.DocumentIndex = *c.DocumentIndex
	}
	if c.DocumentTitle != nil {
		loc.DocumentTitle = *c.DocumentTitle
	}
	if c.FileID != nil {
		a.FileId = *c.FileID
	}
	switch c.Type {
	case "char_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION
		loc.Unit = parleyv1.LocationUnit_LOCATION_UNIT_CHARACTER
		loc.Start, loc.End = deref(c.StartCharIndex), deref(c.EndCharIndex)
	case "page_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION
		loc.Unit = parleyv1.LocationUnit_LOCATION_UNIT_PAGE
		loc.Start, loc.End = deref(c.StartPageNum), deref(c.EndPageNum)
	case "content_block_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION
		loc.Unit = parleyv1.LocationUnit_LOCATION_UNIT_CONTENT_BLOCK
		loc.Start, loc.End = deref(c.StartBlock), deref(c.EndBlock)
	case "web_search_result_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION
		if c.URL != nil {
			a.Url = *c.URL
		}
		if c.Title != nil {
			a.Title = *c.Title
		}
		if c.EncryptedIndex != nil {
			a.EncryptedIndex = *c.EncryptedIndex
		}
		return a, c.URL != nil
	case "search_result_location":
		a.Kind = parleyv1.AnnotationKind_ANNOTATION_KIND_SEARCH_RESULT_CITATION
		loc.Unit = parleyv1.LocationUnit_LOCATION_UNIT_CONTENT_BLOCK
		loc.DocumentIndex = deref(c.SearchIndex)
		loc.Start, loc.End = deref(c.StartBlock), deref(c.EndBlock)
		if c.Source != nil {
			a.Url = *c.Source
		}
		if c.Title != nil {
			a.Title = *c.Title
		}
	default:
		return nil, false
	}
	a.Location = loc
	return a, true
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }

func clampInt32(v int64) int32 {
	switch {
	case v > 1<<31-1:
		return 1<<31 - 1
	case v < -1<<31:
		return -1 << 31
	}
	return int32(v)
}

// APIKey implements translate.Client: x-api-key, as older SDKs and most
// tools send it, else the Authorization: Bearer token newer SDKs send.
// The beta=true query flag some clients add means nothing here.
func (Client) APIKey(in *translate.Incoming) string {
	if k := strings.TrimSpace(in.Header.Get("X-Api-Key")); k != "" {
		return k
	}
	return translate.BearerToken(in.Header)
}
