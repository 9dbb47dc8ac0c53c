package messages

import (
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// DefaultVersion is the version header sent when the client gave none.
const DefaultVersion = "2023-06-01"

// DefaultMaxTokens is max_tokens when the client's dialect let it be unset;
// every model of this dialect can produce at least this many tokens.
const DefaultMaxTokens = 8192

// minThinkingBudget is the smallest thinking budget the dialect accepts.
const minThinkingBudget = 1024

// Upstream is the messages dialect as upstream services speak it.
type Upstream struct{}

var _ translate.Upstream = Upstream{}

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return D }

// EncodeRequest implements translate.Upstream.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == D}
	w, err := e.request(false)
	if err != nil {
		return nil, err
	}
	body, err := jsonx.Marshal(w)
	if err != nil {
		return nil, err
	}
	return &translate.Outgoing{
		Method:  http.MethodPost,
		Path:    "/v1/messages",
		Header:  e.header(),
		Body:    body,
		Stream:  req.GetStream(),
		Dropped: dropped(req),
	}, nil
}

// dropped lists the settings of a request that this dialect has no field
// for; they are not sent.
func dropped(req *parleyv1.Request) []string {
	var out []string
	add := func(set bool, path string) {
		if set {
			out = append(out, path)
		}
	}
	g := req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	add(g.Seed != nil, "generation.seed")
	add(g.PresencePenalty != nil, "generation.presence_penalty")
	add(g.FrequencyPenalty != nil, "generation.frequency_penalty")
	add(g.GetLogprobs() || g.TopLogprobs != nil, "generation.logprobs")
	add(len(g.GetLogitBias()) > 0, "generation.logit_bias")
	add(g.GetMediaResolution() != parleyv1.MediaResolution_MEDIA_RESOLUTION_UNSPECIFIED, "generation.media_resolution")
	add(g.GetSpeech() != nil, "generation.speech")
	add(g.EnhancedCivicAnswers != nil, "generation.enhanced_civic_answers")
	add(g.GetVerbosity() != parleyv1.Verbosity_VERBOSITY_UNSPECIFIED, "generation.verbosity")
	add(len(req.GetSafetySettings()) > 0, "safety_settings")
	add(req.GetCachedContent() != "", "cached_content")
	switch req.GetResponseFormat().GetKind() {
	case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT, parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_ENUM:
		// Only a JSON schema has a form here (output_config.format).
		out = append(out, "response_format")
	}
	return out
}

// EncodeCountRequest implements translate.CountUpstream: the request of
// /v1/messages/count_tokens.
func (Upstream) EncodeCountRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == D}
	w, err := e.request(true)
	if err != nil {
		return nil, err
	}
	body, err := jsonx.Marshal(w)
	if err != nil {
		return nil, err
	}
	return &translate.Outgoing{Method: http.MethodPost, Path: "/v1/messages/count_tokens", Header: e.header(), Body: body}, nil
}

type encoder struct {
	req  *parleyv1.Request
	t    translate.Target
	same bool // the client spoke this dialect: pass its choices through
	// betas needed by what the request uses
	needBetas []string
}

func (e *encoder) header() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if e.t.APIKey != "" {
		h.Set("x-api-key", e.t.APIKey)
	}
	version := DefaultVersion
	var betas []string
	if e.same {
		if v, ok := jsonx.Value(e.req.GetExtensions(), D, extVersion); ok {
			var s string
			if jsonx.Unmarshal(v, &s) == nil && s != "" {
				version = s
			}
		}
		if v, ok := jsonx.Value(e.req.GetExtensions(), D, extBeta); ok {
			_ = jsonx.Unmarshal(v, &betas)
		}
	}
	for _, b := range e.needBetas {
		if !contains(betas, b) {
			betas = append(betas, b)
		}
	}
	h.Set("anthropic-version", version)
	if len(betas) > 0 {
		h.Set("anthropic-beta", strings.Join(betas, ","))
	}
	return h
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (e *encoder) request(countOnly bool) (*Request, error) {
	req := e.req
	w := &Request{Model: e.t.Model}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	gen := req.GetGeneration()
	if gen == nil {
		gen = &parleyv1.GenerationConfig{}
	}
	if n := gen.GetCandidateCount(); n > 1 {
		return nil, translate.Unsupported(D, "generation.candidate_count", "the messages style returns one candidate, not %d", n)
	}
	if !countOnly {
		maxTokens := int64(DefaultMaxTokens)
		if gen.MaxOutputTokens != nil {
			maxTokens = int64(gen.GetMaxOutputTokens())
		}
		w.MaxTokens = &maxTokens
		if req.GetStream() {
			w.Stream = ptr(true)
		}
	}
	w.StopSequences = gen.GetStopSequences()
	w.TopK = int64Ptr(gen.TopK)
	w.TopP = gen.TopP
	if gen.Temperature != nil {
		// The dialect's range is [0, 1]; others go to 2. Clamp rather than
		// fail: the upper half of the wider range means "more random",
		// which 1 is here.
		w.Temperature = ptr(math.Min(math.Max(gen.GetTemperature(), 0), 1))
	}

	if err := e.system(w); err != nil {
		return nil, err
	}
	msgs, err := e.messages()
	if err != nil {
		return nil, err
	}
	w.Messages = msgs

	if err := e.reasoning(w, countOnly); err != nil {
		return nil, err
	}
	if rf := req.GetResponseFormat(); rf.GetKind() == parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA {
		if w.OutputConfig == nil {
			w.OutputConfig = &OutputConfig{}
		}
		schema := jsontext.Value(rf.GetSchema())
		if !e.same {
			var err error
			if schema, err = foreignSchema(rf.GetSchema(), true); err != nil {
				return nil, translate.Invalid("response_format.schema", "%v", err)
			}
		}
		w.OutputConfig.Format = &OutputFormat{Type: "json_schema", Schema: schema, Unknown: e.take("output_config/format")}
	}
	if w.OutputConfig != nil {
		w.OutputConfig.Unknown = e.take("output_config")
	}
	if err := e.tools(w); err != nil {
		return nil, err
	}
	if req.GetEndUserId() != "" || len(e.take("metadata")) > 0 {
		w.Metadata = &Metadata{Unknown: e.take("metadata")}
		if req.GetEndUserId() != "" {
			w.Metadata.UserID = ptr(req.GetEndUserId())
		}
	}
	switch req.GetServiceTier() {
	case parleyv1.ServiceTier_SERVICE_TIER_AUTO:
		w.ServiceTier = "auto"
	case parleyv1.ServiceTier_SERVICE_TIER_STANDARD_ONLY:
		w.ServiceTier = "standard_only"
	}
	w.Unknown = e.take("")
	return w, nil
}

// take returns the client's unknown members under prefix, when the client
// spoke this dialect.
func (e *encoder) take(prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(e.req.GetExtensions(), D, prefix)
}

func int64Ptr(p *int32) *int64 {
	if p == nil {
		return nil
	}
	return ptr(int64(*p))
}

// system builds the system prompt: the request's instructions, then any
// system or developer turns that open the conversation, when the client
// did not speak this dialect (a client that did keeps its system turns
// where it put them).
func (e *encoder) system(w *Request) error {
	var blocks []Block
	for i, p := range e.req.GetInstructions() {
		b, ok, err := e.systemBlock(p, fmt.Sprintf("instructions[%d]", i))
		if err != nil {
			return err
		}
		if ok {
			blocks = append(blocks, b)
		}
	}
	if !e.same {
		leading, _ := translate.SplitLeadingSystem(e.req.GetMessages())
		for i, m := range leading {
			for j, p := range m.GetParts() {
				b, ok, err := e.systemBlock(p, fmt.Sprintf("messages[%d].parts[%d]", i, j))
				if err != nil {
					return err
				}
				if ok {
					blocks = append(blocks, b)
				}
			}
		}
	}
	if len(blocks) == 0 {
		return nil
	}
	c := &Content{Blocks: blocks}
	if len(blocks) == 1 && blocks[0].CacheControl == nil && len(blocks[0].Citations) == 0 && len(blocks[0].Unknown) == 0 &&
		(!e.same || jsonx.Has(e.req.GetExtensions(), D, "@string:system")) {
		c = &Content{String: true, Text: *blocks[0].Text}
	}
	w.System = c
	return nil
}

func (e *encoder) systemBlock(p *parleyv1.Part, field string) (Block, bool, error) {
	t := p.GetText()
	if t == nil {
		return Block{}, false, translate.Unsupported(D, field, "the system prompt of the messages style holds text only")
	}
	if t.GetText() == "" && !e.same {
		return Block{}, false, nil
	}
	b := Block{Type: "text", Text: ptr(t.GetText()), CacheControl: wireCacheControl(p.GetCacheControl())}
	b.Citations = e.wireCitations(p)
	b.Unknown = e.partUnknown(p)
	return b, true, nil
}

func (e *encoder) partUnknown(p *parleyv1.Part) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(p.GetExtensions(), D, "")
}

func wireCacheControl(cc *parleyv1.CacheControl) *CacheControl {
	if cc == nil {
		return nil
	}
	out := &CacheControl{Type: "ephemeral"}
	if ttl := cc.GetTtl(); ttl != nil {
		d := ttl.AsDuration()
		if d > 5*time.Minute {
			out.TTL = "1h"
		} else {
			out.TTL = "5m"
		}
	}
	return out
}

// messages builds the turns. For a client of another dialect they are
// first normalised (translate.NormaliseTurns): empty text dropped, tool
// results right after their calls, tool turns as user turns, system turns
// in the middle kept in place as reminders, same-role turns merged.
func (e *encoder) messages() ([]Message, error) {
	src := e.req.GetMessages()
	if !e.same {
		_, rest := translate.SplitLeadingSystem(src)
		src = translate.NormaliseTurns(rest)
	}
	out := make([]Message, 0, len(src))
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
			out = append(out, Message{Role: role, Content: Content{Blocks: blocks}})
			continue
		}
		wm := Message{Role: role, Content: Content{Blocks: blocks}, Unknown: jsonx.Take(m.GetExtensions(), D, "")}
		if jsonx.Has(m.GetExtensions(), D, extStringContent) && len(blocks) == 1 && blocks[0].Type == "text" &&
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
		field := fmt.Sprintf("messages[%d].parts[%d]", mi, j)
		bs, err := e.part(p, field, m.GetRole() == parleyv1.Role_ROLE_ASSISTANT)
		if err != nil {
			return nil, err
		}
		out = append(out, bs...)
	}
	return out, nil
}

// part returns the blocks for one part: none when the part cannot go to
// this upstream (reasoning another service signed), one usually.
func (e *encoder) part(p *parleyv1.Part, field string, assistant bool) ([]Block, error) {
	cc := wireCacheControl(p.GetCacheControl())
	unknown := e.partUnknown(p)
	one := func(b Block) []Block {
		b.CacheControl = cc
		b.Unknown = unknown
		return []Block{b}
	}
	switch k := p.GetKind().(type) {
	case *parleyv1.Part_Text:
		if k.Text.GetText() == "" && !e.same {
			return nil, nil
		}
		b := Block{Type: "text", Text: ptr(k.Text.GetText()), Citations: e.wireCitations(p)}
		return one(b), nil
	case *parleyv1.Part_Media:
		b, err := e.media(k.Media, field)
		if err != nil {
			return nil, err
		}
		if e.same {
			if v, ok := jsonx.Value(p.GetExtensions(), D, "citations"); ok {
				b.Citations = v
				delete(unknown, "citations")
			}
		}
		return one(b), nil
	case *parleyv1.Part_ToolCall:
		args := strings.TrimSpace(k.ToolCall.GetArguments())
		if args == "" {
			args = "{}"
		}
		if !jsontext.Value(args).IsValid() || jsontext.Value(args).Kind() != '{' {
			return nil, translate.Unsupported(D, field+".tool_call.arguments", "the arguments of tool call %q are not a JSON object", k.ToolCall.GetId())
		}
		return one(Block{Type: "tool_use", ID: k.ToolCall.GetId(), Name: k.ToolCall.GetName(), Input: jsontext.Value(args)}), nil
	case *parleyv1.Part_ToolResult:
		b, err := e.toolResult(p, k.ToolResult, field)
		if err != nil {
			return nil, err
		}
		return one(b), nil
	case *parleyv1.Part_Reasoning:
		return e.reasoningPart(p, k.Reasoning, unknown), nil
	case *parleyv1.Part_Refusal:
		return one(Block{Type: "text", Text: ptr(k.Refusal.GetText())}), nil
	case *parleyv1.Part_ExecutableCode:
		// Code another service ran for the model: kept as text so that the
		// model still sees what happened.
		text := "```" + strings.ToLower(strings.TrimPrefix(k.ExecutableCode.GetLanguage().String(), "CODE_LANGUAGE_")) + "\n" + k.ExecutableCode.GetCode() + "\n```"
		return one(Block{Type: "text", Text: ptr(text)}), nil
	case *parleyv1.Part_CodeExecutionResult:
		text := "Code execution output:\n" + k.CodeExecutionResult.GetOutput()
		return one(Block{Type: "text", Text: ptr(text)}), nil
	case *parleyv1.Part_HostedToolCall:
		if !e.same {
			return nil, nil // another service's server tool: nothing to send
		}
		input := k.HostedToolCall.GetInput()
		if input == "" {
			input = "{}"
		}
		return one(Block{Type: "server_tool_use", ID: k.HostedToolCall.GetId(), Name: k.HostedToolCall.GetName(), Input: jsontext.Value(input)}), nil
	case *parleyv1.Part_HostedToolResult:
		if !e.same {
			return nil, nil
		}
		typ := defaultResultType(k.HostedToolResult.GetKind())
		if v, ok := jsonx.Value(p.GetExtensions(), D, extType); ok {
			_ = jsonx.Unmarshal(v, &typ)
		}
		return one(Block{Type: typ, ToolUseID: k.HostedToolResult.GetCallId(), Content: jsontext.Value(k.HostedToolResult.GetOutput())}), nil
	case *parleyv1.Part_ItemReference:
		return nil, translate.Unsupported(D, field+".item_reference", "an item reference needs the stored response it points to")
	case nil:
		if v, ok := jsonx.Value(p.GetExtensions(), D, extBlock); ok {
			var b Block
			if err := jsonx.Unmarshal(v, &b); err != nil {
				return nil, err
			}
			return []Block{b}, nil
		}
		return nil, nil
	}
	return nil, nil
}

func (e *encoder) reasoningPart(p *parleyv1.Part, r *parleyv1.Reasoning, unknown jsonx.Unknown) []Block {
	if r.GetRedacted() {
		if !translate.SendableTo(r.GetEncryptedContent(), D, e.t.Upstream) {
			return nil
		}
		return []Block{{Type: "redacted_thinking", Data: r.GetEncryptedContent().GetValue(), Unknown: unknown}}
	}
	if !translate.SendableTo(p.GetSignature(), D, e.t.Upstream) {
		return nil
	}
	return []Block{{Type: "thinking", Thinking: ptr(r.GetText()), Signature: ptr(p.GetSignature().GetValue()), Unknown: unknown}}
}

func (e *encoder) toolResult(p *parleyv1.Part, tr *parleyv1.ToolResult, field string) (Block, error) {
	b := Block{Type: "tool_result", ToolUseID: tr.GetCallId()}
	if tr.GetIsError() {
		b.IsError = ptr(true)
	}
	var inner []Block
	for j, c := range tr.GetContent() {
		bs, err := e.part(c, fmt.Sprintf("%s.tool_result.content[%d]", field, j), false)
		if err != nil {
			return Block{}, err
		}
		inner = append(inner, bs...)
	}
	stringForm := len(inner) == 1 && inner[0].Type == "text" && inner[0].CacheControl == nil && len(inner[0].Citations) == 0 && len(inner[0].Unknown) == 0 &&
		(!e.same || jsonx.Has(p.GetExtensions(), D, extStringContent))
	var raw []byte
	var err error
	switch {
	case stringForm:
		raw, err = jsonx.Marshal(*inner[0].Text)
	case len(inner) == 0 && len(tr.GetContent()) == 0 && e.same:
		return b, nil
	default:
		if inner == nil {
			inner = []Block{}
		}
		raw, err = jsonx.Marshal(inner)
	}
	if err != nil {
		return Block{}, err
	}
	b.Content = raw
	return b, nil
}

func (e *encoder) media(m *parleyv1.Media, field string) (Block, error) {
	b := Block{Type: "image"}
	doc := m.GetKind() == parleyv1.MediaKind_MEDIA_KIND_DOCUMENT || m.GetMimeType() == "application/pdf" || strings.HasPrefix(m.GetMimeType(), "text/")
	switch {
	case doc:
		b.Type = "document"
		if m.GetTitle() != "" {
			b.Title = ptr(m.GetTitle())
		}
		if m.GetContext() != "" {
			b.Context = ptr(m.GetContext())
		}
	case m.GetKind() == parleyv1.MediaKind_MEDIA_KIND_IMAGE || strings.HasPrefix(m.GetMimeType(), "image/"):
	default:
		return Block{}, translate.Unsupported(D, field+".media", "the messages style takes images and documents, not %s", describeMedia(m))
	}
	var src Source
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_Data:
		switch {
		case b.Type == "document" && strings.HasPrefix(m.GetMimeType(), "text/"):
			src = Source{Type: "text", MediaType: "text/plain", Data: string(s.Data)}
		case b.Type == "document" && m.GetMimeType() != "application/pdf":
			return Block{}, translate.Unsupported(D, field+".media.mime_type", "the messages style takes PDF and plain-text documents, not %s", m.GetMimeType())
		case b.Type == "image" && !imageTypes[m.GetMimeType()]:
			return Block{}, translate.Unsupported(D, field+".media.mime_type", "the messages style takes JPEG, PNG, GIF and WebP images, not %s", m.GetMimeType())
		default:
			src = Source{Type: "base64", MediaType: m.GetMimeType(), Data: base64.StdEncoding.EncodeToString(s.Data)}
		}
	case *parleyv1.Media_Uri:
		if !strings.HasPrefix(s.Uri, "https://") && !strings.HasPrefix(s.Uri, "http://") {
			return Block{}, translate.Unsupported(D, field+".media.uri", "the messages style fetches http(s) URLs only, not %q", s.Uri)
		}
		src = Source{Type: "url", URL: s.Uri}
	case *parleyv1.Media_FileId:
		src = Source{Type: "file", FileID: s.FileId}
	default:
		return Block{}, translate.Invalid(field+".media", "media without data, URI or file id")
	}
	raw, err := jsonx.Marshal(src)
	if err != nil {
		return Block{}, err
	}
	b.Source = raw
	return b, nil
}

func describeMedia(m *parleyv1.Media) string {
	if m.GetMimeType() != "" {
		return m.GetMimeType()
	}
	return strings.ToLower(strings.TrimPrefix(m.GetKind().String(), "MEDIA_KIND_"))
}

func (e *encoder) wireCitations(p *parleyv1.Part) jsontext.Value {
	if e.same {
		if v, ok := jsonx.Value(p.GetExtensions(), D, "citations"); ok {
			return v
		}
	}
	anns := p.GetText().GetAnnotations()
	if len(anns) == 0 {
		return nil
	}
	out := make([]Citation, 0, len(anns))
	for _, a := range anns {
		if c, ok := wireCitation(a); ok {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	raw, _ := jsonx.Marshal(out)
	return raw
}

func wireCitation(a *parleyv1.Annotation) (Citation, bool) {
	c := Citation{CitedText: a.GetCitedText()}
	loc := a.GetLocation()
	if a.GetFileId() != "" {
		c.FileID = ptr(a.GetFileId())
	}
	switch a.GetKind() {
	case parleyv1.AnnotationKind_ANNOTATION_KIND_DOCUMENT_CITATION:
		c.DocumentIndex = ptr(loc.GetDocumentIndex())
		if loc.GetDocumentTitle() != "" {
			c.DocumentTitle = ptr(loc.GetDocumentTitle())
		}
		switch loc.GetUnit() {
		case parleyv1.LocationUnit_LOCATION_UNIT_PAGE:
			c.Type, c.StartPageNum, c.EndPageNum = "page_location", ptr(loc.GetStart()), ptr(loc.GetEnd())
		case parleyv1.LocationUnit_LOCATION_UNIT_CONTENT_BLOCK:
			c.Type, c.StartBlock, c.EndBlock = "content_block_location", ptr(loc.GetStart()), ptr(loc.GetEnd())
		default:
			c.Type, c.StartCharIndex, c.EndCharIndex = "char_location", ptr(loc.GetStart()), ptr(loc.GetEnd())
		}
	case parleyv1.AnnotationKind_ANNOTATION_KIND_URL_CITATION:
		if a.GetEncryptedIndex() == "" {
			return Citation{}, false // only this dialect's own search results can be cited back
		}
		c.Type, c.URL, c.EncryptedIndex = "web_search_result_location", ptr(a.GetUrl()), ptr(a.GetEncryptedIndex())
		if a.GetTitle() != "" {
			c.Title = ptr(a.GetTitle())
		}
	case parleyv1.AnnotationKind_ANNOTATION_KIND_SEARCH_RESULT_CITATION:
		c.Type = "search_result_location"
		c.SearchIndex, c.StartBlock, c.EndBlock = ptr(loc.GetDocumentIndex()), ptr(loc.GetStart()), ptr(loc.GetEnd())
		c.Source, c.Title = ptr(a.GetUrl()), ptr(a.GetTitle())
	default:
		return Citation{}, false
	}
	return c, true
}

// reasoning maps the reasoning settings. A client of this dialect gets its
// thinking and effort settings as it sent them. For other clients: an
// effort level alone becomes a thinking budget (see translate.BudgetForEffort);
// the budget is at least 1024 and max_tokens is raised above it, since the
// dialect counts thinking inside max_tokens; and temperature and top_k are
// dropped while thinking, as the dialect rejects them then.
func (e *encoder) reasoning(w *Request, countOnly bool) error {
	rc := e.req.GetReasoning()
	if rc == nil {
		return nil
	}
	if e.same {
		switch rc.GetMode() {
		case parleyv1.ReasoningMode_REASONING_MODE_ENABLED:
			w.Thinking = &Thinking{Type: "enabled", BudgetTokens: int64Ptr(rc.BudgetTokens)}
		case parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
			w.Thinking = &Thinking{Type: "disabled"}
		case parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE:
			w.Thinking = &Thinking{Type: "adaptive"}
		}
		if w.Thinking != nil {
			w.Thinking.Unknown = e.take("thinking")
		}
		if eff := wireEffort(rc.GetEffort()); eff != "" {
			w.OutputConfig = &OutputConfig{Effort: eff}
		}
		return nil
	}
	var budget int32
	switch rc.GetMode() {
	case parleyv1.ReasoningMode_REASONING_MODE_DISABLED:
		w.Thinking = &Thinking{Type: "disabled"}
		return nil
	case parleyv1.ReasoningMode_REASONING_MODE_ADAPTIVE:
		if rc.BudgetTokens == nil && rc.GetEffort() == parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
			w.Thinking = &Thinking{Type: "adaptive"}
			e.dropSamplingForThinking(w)
			return nil
		}
		fallthrough
	case parleyv1.ReasoningMode_REASONING_MODE_ENABLED, parleyv1.ReasoningMode_REASONING_MODE_UNSPECIFIED:
		switch {
		case rc.BudgetTokens != nil:
			budget = rc.GetBudgetTokens()
		case rc.GetEffort() == parleyv1.ReasoningEffort_REASONING_EFFORT_NONE:
			w.Thinking = &Thinking{Type: "disabled"}
			return nil
		case rc.GetEffort() != parleyv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
			budget = translate.BudgetForEffort(rc.GetEffort())
		case rc.GetMode() == parleyv1.ReasoningMode_REASONING_MODE_ENABLED:
			budget = translate.BudgetForEffort(parleyv1.ReasoningEffort_REASONING_EFFORT_MEDIUM)
		default:
			return nil
		}
	}
	if budget <= 0 {
		w.Thinking = &Thinking{Type: "disabled"}
		return nil
	}
	budget = max(budget, minThinkingBudget)
	w.Thinking = &Thinking{Type: "enabled", BudgetTokens: ptr(int64(budget))}
	if !countOnly && w.MaxTokens != nil && *w.MaxTokens <= int64(budget) {
		w.MaxTokens = ptr(*w.MaxTokens + int64(budget))
	}
	e.dropSamplingForThinking(w)
	return nil
}

func (e *encoder) dropSamplingForThinking(w *Request) {
	w.Temperature = nil
	w.TopK = nil
	if w.TopP != nil && *w.TopP < 0.95 {
		w.TopP = nil
	}
}

func wireEffort(e parleyv1.ReasoningEffort) string {
	for k, v := range effortFromWire {
		if v == e {
			return k
		}
	}
	return ""
}

func (e *encoder) tools(w *Request) error {
	tc := e.req.GetToolChoice()
	allowed := map[string]bool{}
	for _, n := range tc.GetAllowedNames() {
		allowed[n] = true
	}
	for i, t := range e.req.GetTools() {
		wt, ok, err := e.tool(t, fmt.Sprintf("tools[%d]", i))
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if len(allowed) > 0 && t.GetFunction() != nil && !allowed[t.GetFunction().GetName()] {
			continue // the dialect has no allow-list: offer only the allowed functions
		}
		w.Tools = append(w.Tools, wt)
	}
	if tc == nil {
		return nil
	}
	c := &ToolChoice{Unknown: e.take("tool_choice")}
	switch tc.GetMode() {
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
		c.Type = "auto"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		c.Type = "none"
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		c.Type = "any"
		if len(tc.GetAllowedNames()) == 1 {
			c.Type, c.Name = "tool", tc.GetAllowedNames()[0]
		}
	case parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
		c.Type, c.Name = "tool", tc.GetName()
		if c.Name == "" {
			c.Name = builtinToolName(tc.GetKind())
		}
		if c.Name == "" {
			return translate.Unsupported(D, "tool_choice.kind", "the messages style cannot force the built-in tool %s", tc.GetKind())
		}
	default:
		if tc.ParallelCalls == nil {
			return nil
		}
		c.Type = "auto"
	}
	if tc.ParallelCalls != nil && c.Type != "none" {
		c.DisableParallelToolUse = ptr(!tc.GetParallelCalls())
	}
	w.ToolChoice = c
	return nil
}

func builtinToolName(k parleyv1.ToolKind) string {
	switch k {
	case parleyv1.ToolKind_TOOL_KIND_WEB_SEARCH:
		return "web_search"
	case parleyv1.ToolKind_TOOL_KIND_CODE_EXECUTION:
		return "code_execution"
	case parleyv1.ToolKind_TOOL_KIND_COMPUTER_USE:
		return "computer"
	case parleyv1.ToolKind_TOOL_KIND_BASH:
		return "bash"
	case parleyv1.ToolKind_TOOL_KIND_URL_CONTEXT:
		return "web_fetch"
	}
	return ""
}

// Built-in tool versions used when the client's dialect named none.
const (
	defaultComputerVersion     = "computer_20250124"
	defaultBashVersion         = "bash_20250124"
	defaultEditorVersion       = "text_editor_20250728"
	defaultWebSearchVersion    = "web_search_20250305"
	defaultCodeExecVersion     = "code_execution_20250825"
	defaultWebFetchVersion     = "web_fetch_20250910"
	computerUseBetaFor20250124 = "computer-use-2025-01-24"
)

func versionOr(v, prefix, def string) string {
	if strings.HasPrefix(v, prefix) {
		return v
	}
	return def
}

func (e *encoder) tool(t *parleyv1.Tool, field string) (Tool, bool, error) {
	var w Tool
	if e.same {
		if v, ok := jsonx.Value(t.GetExtensions(), D, extBlock); ok {
			if err := jsonx.Unmarshal(v, &w); err != nil {
				return Tool{}, false, err
			}
			return w, true, nil
		}
		w.Unknown = jsonx.Take(t.GetExtensions(), D, "")
		if v, ok := w.Unknown["type"]; ok {
			_ = jsonx.Unmarshal(v, &w.Type)
			delete(w.Unknown, "type")
		}
		for _, k := range []string{"name", "description", "input_schema", "strict"} {
			v, ok := w.Unknown[k]
			if !ok {
				continue
			}
			delete(w.Unknown, k)
			switch k {
			case "name":
				_ = jsonx.Unmarshal(v, &w.Name)
			case "description":
				w.Description = new(string)
				_ = jsonx.Unmarshal(v, w.Description)
			case "input_schema":
				w.InputSchema = v
			case "strict":
				w.Strict = new(bool)
				_ = jsonx.Unmarshal(v, w.Strict)
			}
		}
	}
	w.CacheControl = wireCacheControl(t.GetCacheControl())
	nameOr := func(def string) string {
		if w.Name != "" {
			return w.Name
		}
		return def
	}
	switch k := t.GetKind().(type) {
	case *parleyv1.Tool_Function:
		f := k.Function
		w.Name = f.GetName()
		if f.GetDescription() != "" {
			w.Description = ptr(f.GetDescription())
		}
		schema := f.GetParameters()
		if schema == "" {
			schema = `{"type":"object","properties":{}}`
		}
		w.InputSchema = jsontext.Value(schema)
		if !e.same {
			v, err := foreignSchema(schema, f.GetStrict())
			if err != nil {
				return Tool{}, false, translate.Invalid(field+".parameters", "%v", err)
			}
			w.InputSchema = v
		}
		w.Strict = f.Strict
	case *parleyv1.Tool_ComputerUse:
		c := k.ComputerUse
		w.Type = versionOr(c.GetVersion(), "computer_", defaultComputerVersion)
		w.Name = nameOr("computer")
		if c.GetName() != "" {
			w.Name = c.GetName()
		}
		w.DisplayWidthPx, w.DisplayHeightPx = ptr(int64(c.GetDisplayWidth())), ptr(int64(c.GetDisplayHeight()))
		w.DisplayNumber = int64Ptr(c.DisplayNumber)
		if !e.same && w.Type == defaultComputerVersion {
			e.needBetas = append(e.needBetas, computerUseBetaFor20250124)
		}
	case *parleyv1.Tool_Bash:
		w.Type = versionOr(k.Bash.GetVersion(), "bash_", defaultBashVersion)
		w.Name = "bash"
		if k.Bash.GetName() != "" {
			w.Name = k.Bash.GetName()
		}
	case *parleyv1.Tool_TextEditor:
		te := k.TextEditor
		w.Type = versionOr(te.GetVersion(), "text_editor_", defaultEditorVersion)
		w.Name = te.GetName()
		if w.Name == "" {
			w.Name = "str_replace_based_edit_tool"
			if w.Type < "text_editor_20250429" {
				w.Name = "str_replace_editor"
			}
		}
		w.MaxCharacters = int64Ptr(te.MaxCharacters)
	case *parleyv1.Tool_WebSearch:
		ws := k.WebSearch
		w.Type = versionOr(ws.GetVersion(), "web_search_2", defaultWebSearchVersion)
		w.Name = nameOr("web_search")
		w.MaxUses = int64Ptr(ws.MaxUses)
		w.AllowedDomains, w.BlockedDomains = ws.GetAllowedDomains(), ws.GetBlockedDomains()
		if ul := ws.GetUserLocation(); ul != nil {
			w.UserLocation = &UserLocation{Type: "approximate", City: ul.GetCity(), Region: ul.GetRegion(), Country: ul.GetCountry(), Timezone: ul.GetTimezone(), Unknown: e.takeTool(t, "user_location")}
		}
		if ws.GetDynamicRetrieval() != nil && !e.same {
			// The dialect searches when the model decides to; a threshold
			// has no equivalent and is dropped.
			_ = ws
		}
	case *parleyv1.Tool_CodeExecution:
		w.Type = versionOr(k.CodeExecution.GetVersion(), "code_execution_", defaultCodeExecVersion)
		w.Name = nameOr("code_execution")
	case *parleyv1.Tool_UrlContext:
		w.Type = versionOr(k.UrlContext.GetVersion(), "web_fetch_", defaultWebFetchVersion)
		w.Name = nameOr("web_fetch")
	case *parleyv1.Tool_FileSearch:
		return Tool{}, false, translate.Unsupported(D, field+".file_search", "the messages style has no file search over vector stores")
	case nil:
		return Tool{}, false, nil
	}
	return w, true, nil
}

func (e *encoder) takeTool(t *parleyv1.Tool, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(t.GetExtensions(), D, prefix)
}
