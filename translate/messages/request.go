package messages

import (
	"math"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The request walk, both ways: a client's request into a canonical request
// (DecodeRequest), and a canonical request into an upstream's request
// (EncodeRequest), with the system prompt. Turns and their blocks are in
// turns.go; reasoning, tools, media, citations, settings and headers each
// have their own file.

// thisDialect is this package's dialect.
const thisDialect = parleyv1.Dialect_DIALECT_MESSAGES

// Client is the messages dialect as clients speak it.
type Client struct{}

var _ translate.Client = Client{}

// Dialect implements translate.Client.
func (Client) Dialect() parleyv1.Dialect { return thisDialect }

// Upstream is the messages dialect as upstream services speak it.
type Upstream struct{}

var _ translate.Upstream = Upstream{}

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return thisDialect }

// DecodeRequest implements translate.Client.
func (Client) DecodeRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if !readRequest(in.Body, &w) {
		if err := jsonx.Unmarshal(in.Body, &w); err != nil {
			return nil, decodeError(err)
		}
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
	if !readRequest(in.Body, &w) {
		if err := jsonx.Unmarshal(in.Body, &w); err != nil {
			return nil, decodeError(err)
		}
	}
	d := decoder{}
	req, err := d.request(&w, true)
	if err != nil {
		return nil, err
	}
	headers(req, in.Header)
	return req, nil
}

// EncodeRequest implements translate.Upstream.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == thisDialect}
	w, err := e.request(false)
	if err != nil {
		return nil, err
	}
	body, err := jsonx.EncodeOffStack(w, appendRequest)
	if err != nil {
		return nil, err
	}
	return &translate.Outgoing{
		Method:  http.MethodPost,
		Path:    "/v1/messages",
		Header:  e.header(),
		Body:    body,
		Stream:  req.GetStream(),
		Dropped: append(dropped(req), e.dropped...),
	}, nil
}

// EncodeCountRequest implements translate.CountUpstream: the request of
// /v1/messages/count_tokens.
func (Upstream) EncodeCountRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == thisDialect}
	w, err := e.request(true)
	if err != nil {
		return nil, err
	}
	body, err := jsonx.EncodeOffStack(w, appendRequest)
	if err != nil {
		return nil, err
	}
	return &translate.Outgoing{Method: http.MethodPost, Path: "/v1/messages/count_tokens", Header: e.header(), Body: body}, nil
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
		Extensions: &parleyv1.Extensions{Dialect: thisDialect, Fields: map[string]string{}},
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
			markStringSystem.Keep(&req.Extensions, jsontext.Value("true"))
		}
	}
	for i := range w.Messages {
		m, err := d.message(&w.Messages[i], "messages."+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		req.Messages = append(req.Messages, m)
	}
	if w.Metadata != nil {
		if w.Metadata.UserID != nil {
			req.EndUserId = *w.Metadata.UserID
		}
		jsonx.Keep(&req.Extensions, thisDialect, "metadata", w.Metadata.Unknown)
	}
	if w.Thinking != nil {
		rc, err := readThinking(w.Thinking)
		if err != nil {
			return nil, err
		}
		req.Reasoning = rc
		jsonx.Keep(&req.Extensions, thisDialect, "thinking", w.Thinking.Unknown)
	}
	if w.OutputConfig != nil {
		if err := d.outputConfig(req, w.OutputConfig); err != nil {
			return nil, err
		}
	}
	if w.ToolChoice != nil {
		tc, err := readToolChoice(w.ToolChoice)
		if err != nil {
			return nil, err
		}
		req.ToolChoice = tc
		jsonx.Keep(&req.Extensions, thisDialect, "tool_choice", w.ToolChoice.Unknown)
	}
	for i := range w.Tools {
		t, err := readTool(&w.Tools[i], "tools."+strconv.Itoa(i))
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
	jsonx.Keep(&req.Extensions, thisDialect, "", w.Unknown)
	return req, nil
}

type encoder struct {
	req  *parleyv1.Request
	t    translate.Target
	same bool // the client spoke this dialect: pass its choices through
	// betas needed by what the request uses
	needBetas []string
	// settings the request asked for that this encoding leaves out, by
	// canonical field path (with those of dropped, Outgoing.Dropped)
	dropped []string
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
		return nil, translate.Unsupported(thisDialect, "generation.candidate_count", "the messages style returns one candidate, not %d", n)
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
	e.thinkingOffMidTurn(w)
	if rf := req.GetResponseFormat(); rf.GetKind() == parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA {
		if w.OutputConfig == nil {
			w.OutputConfig = &outputConfig{}
		}
		schema := jsontext.Value(rf.GetSchema())
		if !e.same {
			var err error
			if schema, err = foreignSchema(rf.GetSchema(), true); err != nil {
				return nil, translate.Invalid("response_format.schema", "%v", err)
			}
		}
		w.OutputConfig.Format = &outputFormat{Type: "json_schema", Schema: schema, Unknown: e.take("output_config/format")}
	}
	// Members of output_config Parley does not model go back to a service
	// of this dialect even when nothing else fills the object.
	if u := e.take("output_config"); len(u) > 0 || w.OutputConfig != nil {
		if w.OutputConfig == nil {
			w.OutputConfig = &outputConfig{}
		}
		w.OutputConfig.Unknown = u
	}
	if err := e.tools(w); err != nil {
		return nil, err
	}
	if req.GetEndUserId() != "" || len(e.take("metadata")) > 0 {
		w.Metadata = &metadata{Unknown: e.take("metadata")}
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

// system builds the system prompt: the request's instructions, then any
// system or developer turns that open the conversation, when the client
// did not speak this dialect (a client that did keeps its system turns
// where it put them).
func (e *encoder) system(w *Request) error {
	var blocks []Block
	for i, p := range e.req.GetInstructions() {
		b, ok, err := e.systemBlock(p, translate.Index("instructions", i))
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
				b, ok, err := e.systemBlock(p, translate.Index(translate.Index("messages", i)+".parts", j))
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
		(!e.same || markStringSystem.In(e.req.GetExtensions())) {
		c = &Content{String: true, Text: *blocks[0].Text}
	}
	w.System = c
	return nil
}

func (e *encoder) systemBlock(p *parleyv1.Part, field string) (Block, bool, error) {
	t := p.GetText()
	if t == nil {
		return Block{}, false, translate.Unsupported(thisDialect, field, "the system prompt of the messages style holds text only")
	}
	if t.GetText() == "" && !e.same {
		return Block{}, false, nil
	}
	b := Block{Type: "text", Text: ptr(t.GetText()), CacheControl: wireCacheControl(p.GetCacheControl())}
	b.Citations = e.wireCitations(p)
	b.Unknown = e.partUnknown(p)
	return b, true, nil
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

func int64Ptr(p *int32) *int64 {
	if p == nil {
		return nil
	}
	return ptr(int64(*p))
}
