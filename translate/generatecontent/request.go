package generatecontent

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The request walk, in both directions: a client's body to the canonical
// request (Client.DecodeRequest) and the canonical request to an
// upstream's body (Upstream.EncodeRequest), turn by turn. Parts are mapped
// in parts.go; tools, settings, safety and reasoning in their own files.

// thisDialect is this package's dialect.
const thisDialect = parleyv1.Dialect_DIALECT_GENERATE_CONTENT

// Client is the content-generation dialect as clients speak it.
type Client struct{}

var _ translate.Client = Client{}

// Dialect implements translate.Client.
func (Client) Dialect() parleyv1.Dialect { return thisDialect }

// DecodeRequest implements translate.Client. The model and the stream
// flag come from the path (Incoming.Model, Incoming.Stream).
func (Client) DecodeRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if !readRequest(in.Body, &w) {
		// By reflection through nested lists with methods of their own,
		// 6.5 to 7 KB deep: off the request's stack.
		if err := jsonx.UnmarshalOffStack(in.Body, &w); err != nil {
			return nil, decodeError(err)
		}
	}
	req, err := decodeRequest(&w)
	if err != nil {
		return nil, err
	}
	req.Model = strings.TrimPrefix(in.Model, "models/")
	req.Stream = in.Stream
	return req, nil
}

func decodeError(err error) error {
	segs, what := jsonx.Path(err)
	return &translate.InputError{Field: jsonx.BracketPath(segs), Message: what, Err: err}
}

func decodeErrorAt(err error, path string) error {
	segs, what := jsonx.Path(err)
	field := path
	if p := jsonx.BracketPath(segs); p != "" {
		if !strings.HasPrefix(p, "[") {
			field += "."
		}
		field += p
	}
	return &translate.InputError{Field: field, Message: what, Err: err}
}

func decodeRequest(w *Request) (*parleyv1.Request, error) {
	if w.Contents == nil {
		return nil, translate.Invalid("contents", "required field contents is missing")
	}
	req := &parleyv1.Request{Extensions: &parleyv1.Extensions{Dialect: thisDialect, Fields: map[string]string{}}}
	if w.Model != "" {
		// The path names the model; a body that names it too keeps the
		// member for an upstream of this dialect.
		raw, err := jsonx.Marshal(w.Model)
		if err != nil {
			return nil, err
		}
		jsonx.KeepValue(&req.Extensions, thisDialect, "model", raw)
	}
	d := decoder{}
	for i := range *w.Contents {
		m, err := d.content(&(*w.Contents)[i], translate.Index("contents", i))
		if err != nil {
			return nil, err
		}
		req.Messages = append(req.Messages, m)
	}
	d.nameResults(req.Messages)
	if si := w.SystemInstruction; si != nil {
		parts, err := d.parts(si.Parts, "systemInstruction.parts", false)
		if err != nil {
			return nil, err
		}
		req.Instructions = parts
		jsonx.Keep(&req.Extensions, thisDialect, "systemInstruction", si.Unknown)
		if si.Role != "" {
			jsonx.KeepValue(&req.Extensions, thisDialect, "systemInstruction/role", jsonx.Quote(si.Role))
		}
	}
	if len(w.Tools) > 0 || w.ToolConfig != nil || len(w.SafetySettings) > 0 {
		// Schemas converted and built-in tools' settings kept by
		// reflection, as deep as they nest: off the request's stack.
		var err error
		offstack.Run(func() { err = readTools(req, w) })
		if err != nil {
			return nil, err
		}
	}
	if gc := w.GenerationConfig; gc != nil {
		if err := readGenerationConfig(req, gc); err != nil {
			return nil, err
		}
	}
	req.CachedContent = w.CachedContent
	jsonx.Keep(&req.Extensions, thisDialect, "", w.Unknown)
	return req, nil
}

// readTools reads the request's tools, tool config and safety settings.
func readTools(req *parleyv1.Request, w *Request) error {
	for i := range w.Tools {
		tools, err := tool(&w.Tools[i], translate.Index("tools", i))
		if err != nil {
			return err
		}
		req.Tools = append(req.Tools, tools...)
	}
	if tc := w.ToolConfig; tc != nil {
		if err := readToolConfig(req, tc); err != nil {
			return err
		}
	}
	return safetySettings(req, w.SafetySettings)
}

type decoder struct {
	turn int // index of the turn being decoded, for synthesised call ids
}

func (d *decoder) content(c *Content, path string) (*parleyv1.Message, error) {
	m := &parleyv1.Message{}
	switch c.Role {
	case "user", "":
		m.Role = parleyv1.Role_ROLE_USER
		if c.Role == "" {
			markRole.Keep(&m.Extensions, jsontext.Value(`""`))
		}
	case "model":
		m.Role = parleyv1.Role_ROLE_ASSISTANT
	case "function", "tool":
		m.Role = parleyv1.Role_ROLE_TOOL
		markRole.KeepString(&m.Extensions, c.Role)
	default:
		return nil, translate.Invalid(path+".role", "role must be one of user, model, function, tool, not %q", c.Role)
	}
	if c.Parts == nil {
		return nil, translate.Invalid(path+".parts", "required field parts is missing")
	}
	parts, err := d.parts(c.Parts, path+".parts", c.Role == "model")
	if err != nil {
		return nil, err
	}
	m.Parts = mergeThoughts(parts)
	d.turn++
	jsonx.Keep(&m.Extensions, thisDialect, "", c.Unknown)
	return m, nil
}

// parts decodes the parts of a turn. An empty part in a model turn ({},
// or {"thought": true} alone) is passed over: the service ends streams
// with an empty text part, which the SDKs keep in the history they send
// back without its empty text, carrying nothing.
func (d *decoder) parts(ps PartList, path string, model bool) ([]*parleyv1.Part, error) {
	out := make([]*parleyv1.Part, 0, len(ps))
	for i := range ps {
		if model && emptyPart(&ps[i]) {
			continue
		}
		p, err := d.part(&ps[i], translate.Index(path, i), i)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// onlySigned reports whether a part holds no data of any kind, whatever
// its signature and thought flag.
func onlySigned(w *Part) bool {
	return w.InlineData == nil && w.FileData == nil && w.FunctionCall == nil && w.FunctionResponse == nil &&
		w.ExecutableCode == nil && w.CodeExecutionResult == nil && len(w.Unknown) == 0
}

// emptyPart reports whether a part holds nothing at all.
func emptyPart(w *Part) bool {
	return w.Text == nil && w.ThoughtSignature == "" && onlySigned(w)
}

// Upstream is the content-generation dialect as upstream services speak it.
type Upstream struct{}

var _ translate.Upstream = Upstream{}

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return thisDialect }

// EncodeRequest implements translate.Upstream. Streams use ?alt=sse; the key
// goes in x-goog-api-key, never in the URL.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	if req.GetExtensions().GetDialect() == thisDialect || len(req.GetTools()) > 0 || req.GetResponseFormat().GetSchema() != "" {
		// Tools and an answer's schema are converted to the Schema form,
		// and a request of this dialect takes back what it kept as it
		// came (parts, settings, schemas), by reflection as deep as they
		// nest: such a request is written off the request's stack. One
		// without is written on it.
		return encodeRequestOffStack(req, t)
	}
	return encodeRequest(req, t)
}

func encodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == thisDialect}
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	body, err := jsonx.EncodeOffStack(w, appendRequest)
	if err != nil {
		return nil, err
	}
	out := outgoing(req, t, body)
	// This dialect caches by cachedContent, not by per-block hints.
	out.Dropped = append(translate.CacheHintPaths(req), e.dropped...)
	return out, nil
}

// outgoing is the upstream request of a body: the model and the method in
// the path, a stream asked for as server-sent events.
func outgoing(req *parleyv1.Request, t translate.Target, body []byte) *translate.Outgoing {
	model := t.Model
	if model == "" {
		model = req.GetModel()
	}
	model = strings.TrimPrefix(model, "models/")
	out := &translate.Outgoing{
		Method: http.MethodPost,
		Path:   "/v1beta/models/" + url.PathEscape(model) + ":generateContent",
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   body,
		Stream: req.GetStream(),
	}
	if req.GetStream() {
		out.Path = "/v1beta/models/" + url.PathEscape(model) + ":streamGenerateContent"
		out.Query = url.Values{"alt": {"sse"}}
	}
	if t.APIKey != "" {
		// In canonical form, set directly: Set would canonicalise it.
		out.Header["X-Goog-Api-Key"] = []string{t.APIKey}
	}
	return out
}

// Forward implements translate.Forwarder. A content-generation client's
// request goes on as it came, the model in the path being the upstream's,
// when every signature in it is its own, it carries no cache hint (which
// only another dialect's client gives, and this dialect drops) and it is
// in the form the encoder writes (written). What the encoder would write
// for such a request is then, member for member, what the client sent
// (the golden tests and FuzzForward hold the two together); what it would
// drop comes only from other dialects.
func (Upstream) Forward(req *parleyv1.Request, src *translate.Source, t translate.Target) (*translate.Outgoing, bool, error) {
	if !translate.Forwardable(req, src, thisDialect) || len(translate.CacheHintPaths(req)) > 0 || !resultsNameTheirCalls(req) {
		return nil, false, nil
	}
	// Deciding walks the whole body, the Schema form included, as deep
	// as the tools' and the answer's schemas nest: a request with either
	// is walked off its stack; one without, five levels deep to its
	// parts, on it.
	ok := false
	if len(req.GetTools()) == 0 && req.GetResponseFormat() == nil {
		ok = written(src.Body)
	} else {
		ok = writtenOffStack(src.Body)
	}
	if !ok {
		return nil, false, nil
	}
	return outgoing(req, t, src.Body), true, nil
}

// encodeRequestOffStack and writtenOffStack are encodeRequest and
// written off the stack, functions of their own so that what their
// closures take is allocated only when they run, not on every request.
func encodeRequestOffStack(req *parleyv1.Request, t translate.Target) (out *translate.Outgoing, err error) {
	offstack.Run(func() { out, err = encodeRequest(req, t) })
	return out, err
}

func writtenOffStack(body []byte) (ok bool) {
	offstack.Run(func() { ok = written(body) })
	return ok
}

var _ translate.Forwarder = Upstream{}

// resultsNameTheirCalls reports whether every function's response names
// the call it answers as the encoder would write it (functionResponse
// takes the name of the call with the response's id, wherever that call
// stands): a response paired with a call of another name (by its place,
// the decoder's repair of a history whose names do not match) is written
// with the call's name. One pass gathers the calls, one checks the
// responses, where the encoder looks each call up anew.
func resultsNameTheirCalls(req *parleyv1.Request) bool {
	var names map[string]string
	for _, m := range req.GetMessages() {
		for _, p := range m.GetParts() {
			if tc := p.GetToolCall(); tc != nil {
				if names == nil {
					names = map[string]string{}
				}
				if _, seen := names[tc.GetId()]; !seen {
					names[tc.GetId()] = translate.CallName(tc)
				}
			}
		}
	}
	if names == nil {
		return true
	}
	for _, m := range req.GetMessages() {
		for _, p := range m.GetParts() {
			if tr := p.GetToolResult(); tr != nil {
				if name, ok := names[tr.GetCallId()]; ok && name != tr.GetName() {
					return false
				}
			}
		}
	}
	return true
}

type encoder struct {
	req  *parleyv1.Request
	t    translate.Target
	same bool
	// dropped are canonical paths of what the request could not carry.
	dropped []string
}

// dropSchema lists what a schema at field lost on its way (formOf).
func (e *encoder) dropSchema(field string, paths []string) {
	for _, p := range paths {
		e.dropped = append(e.dropped, field+"."+p)
	}
}

func (e *encoder) take(prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(e.req.GetExtensions(), thisDialect, prefix)
}

func (e *encoder) request() (*Request, error) {
	w := &Request{CachedContent: e.req.GetCachedContent(), Unknown: e.take("")}
	msgs := e.req.GetMessages()
	var system []*parleyv1.Part
	system = append(system, e.req.GetInstructions()...)
	if !e.same {
		lead, rest := translate.SplitLeadingSystem(msgs)
		for _, m := range lead {
			system = append(system, m.GetParts()...)
		}
		msgs = translate.NormaliseTurns(rest)
	}
	if len(system) > 0 {
		parts, err := e.parts(system, "instructions", false)
		if err != nil {
			return nil, err
		}
		w.SystemInstruction = &Content{Parts: parts, Unknown: e.take("systemInstruction")}
		if s, ok := jsonx.String(e.req.GetExtensions(), thisDialect, "systemInstruction/role"); ok && e.same {
			w.SystemInstruction.Role = s
			// The role is kept under the systemInstruction prefix, so
			// take returned it too: written from both, it would be
			// sent twice.
			delete(w.SystemInstruction.Unknown, "role")
		}
	}
	contents := ContentList{}
	current := currentTurnStart(msgs)
	for i, m := range msgs {
		c, err := e.content(m, i, i >= current)
		if err != nil {
			return nil, err
		}
		if len(c.Parts) == 0 && !e.same {
			continue
		}
		contents = append(contents, c)
	}
	w.Contents = &contents
	tools, err := e.tools()
	if err != nil {
		return nil, err
	}
	w.Tools = tools
	w.ToolConfig = e.toolConfig()
	w.SafetySettings = e.safety()
	gc, err := e.generationConfig()
	if err != nil {
		return nil, err
	}
	w.GenerationConfig = gc
	return w, nil
}

func (e *encoder) content(m *parleyv1.Message, i int, current bool) (Content, error) {
	c := Content{Role: "user"}
	if m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
		c.Role = "model"
	}
	if e.same {
		if s, ok := markRole.String(m.GetExtensions()); ok {
			c.Role = s
		}
		c.Unknown = jsonx.Take(m.GetExtensions(), thisDialect, "")
	}
	parts, err := e.parts(m.GetParts(), translate.Index("messages", i), current && m.GetRole() == parleyv1.Role_ROLE_ASSISTANT)
	if err != nil {
		return Content{}, err
	}
	c.Parts = parts
	return c, nil
}

func (e *encoder) parts(ps []*parleyv1.Part, field string, currentModelTurn bool) (PartList, error) {
	out := make(PartList, 0, len(ps))
	var moved PartList // media of tool results, after the function responses
	firstCall := true
	for j, p := range ps {
		if tr := p.GetToolResult(); tr != nil && !e.same {
			moved = append(moved, e.resultMedia(tr, translate.Index(field+".parts", j))...)
		}
		wp, ok, err := e.part(p, translate.Index(field+".parts", j))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if wp.FunctionCall != nil && currentModelTurn && firstCall && wp.ThoughtSignature == "" && !e.same {
			// The first call of a step needs a signature on thinking models;
			// for another service's call Parley sends the documented
			// placeholder.
			wp.ThoughtSignature = skipSignature
		}
		if wp.FunctionCall != nil {
			firstCall = false
		}
		out = append(out, wp)
	}
	return append(out, moved...), nil
}

func (e *encoder) partUnknown(p *parleyv1.Part, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(p.GetExtensions(), thisDialect, prefix)
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

// APIKey implements translate.Client: x-goog-api-key, as the SDKs send
// it, else the key query parameter, else an Authorization: Bearer token.
func (Client) APIKey(in *translate.Incoming) string {
	if k := strings.TrimSpace(in.Header.Get("X-Goog-Api-Key")); k != "" {
		return k
	}
	if k := strings.TrimSpace(in.Query.Get("key")); k != "" {
		return k
	}
	return translate.BearerToken(in.Header)
}
