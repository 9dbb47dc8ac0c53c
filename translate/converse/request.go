package converse

import (
	"net/http"
	"net/url"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The request walk: a canonical request into a Converse request, with the
// system prompt and the turns. Content blocks are in content.go;
// reasoning, tools and settings each have their own file.

// EncodeRequest implements translate.Upstream. The request carries no
// credentials: the transport signs it (SigV4) or adds a bearer key, as
// the upstream's configuration says.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := newEncoder(req, t)
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	body, err := jsonx.Marshal(w)
	if err != nil {
		return nil, err
	}
	op := "/converse"
	if req.GetStream() {
		op = "/converse-stream"
	}
	return &translate.Outgoing{
		Method:  http.MethodPost,
		Path:    modelPath(e.model()) + op,
		Header:  header(),
		Body:    body,
		Stream:  req.GetStream(),
		Dropped: e.dropped,
	}, nil
}

// EncodeCountRequest implements translate.CountUpstream: the request's
// input (messages, system prompt, tools and model fields) as count-tokens
// takes a Converse request. Settings that do not change the input are
// not part of it.
func (Upstream) EncodeCountRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := newEncoder(req, t)
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	c := CountRequest{Input: countInput{Converse: &CountConverse{
		Messages:                     w.Messages,
		System:                       w.System,
		ToolConfig:                   w.ToolConfig,
		AdditionalModelRequestFields: w.AdditionalModelRequestFields,
	}}}
	body, err := jsonx.Marshal(c)
	if err != nil {
		return nil, err
	}
	return &translate.Outgoing{Method: http.MethodPost, Path: modelPath(e.model()) + "/count-tokens", Header: header(), Body: body}, nil
}

// modelPath is the path of a model: a model id, an inference profile or an
// ARN, which holds ":" and "/" and is escaped as one path segment, ":"
// included, as the AWS SDKs escape it (the request is signed as sent).
func modelPath(model string) string {
	return "/model/" + strings.ReplaceAll(url.PathEscape(model), ":", "%3A")
}

func header() http.Header {
	return http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
}

type encoder struct {
	req *parleyv1.Request
	t   translate.Target
	// settings the request asked for that this encoding leaves out, by
	// canonical field path (Outgoing.Dropped)
	dropped []string
	// docNames are the document names given so far: the service wants
	// them unique within a request.
	docNames map[string]bool
	// callNames are the tools the conversation calls, in order of first
	// call, for a conversation with calls but no tools.
	callNames []string
	hasTools  bool // the conversation holds tool calls or results
}

func newEncoder(req *parleyv1.Request, t translate.Target) *encoder {
	return &encoder{req: req, t: t, docNames: map[string]bool{}}
}

func (e *encoder) model() string {
	if e.t.Model != "" {
		return e.t.Model
	}
	return e.req.GetModel()
}

func (e *encoder) drop(path string) { e.dropped = append(e.dropped, path) }

func (e *encoder) request() (*Request, error) {
	req := e.req
	if n := req.GetGeneration().GetCandidateCount(); n > 1 {
		return nil, translate.Unsupported(thisDialect, "generation.candidate_count", "the Converse API returns one candidate, not %d", n)
	}
	w := &Request{}
	system, err := e.system()
	if err != nil {
		return nil, err
	}
	w.System = system
	msgs, err := e.messages()
	if err != nil {
		return nil, err
	}
	w.Messages = msgs
	if err := e.settings(w); err != nil {
		return nil, err
	}
	if err := e.tools(w); err != nil {
		return nil, err
	}
	return w, nil
}

// system builds the system prompt: the request's instructions, then the
// system and developer turns that open the conversation. A cache
// breakpoint on a part becomes a cache point after its block.
func (e *encoder) system() ([]SystemBlock, error) {
	var out []SystemBlock
	add := func(p *parleyv1.Part, field string) error {
		t := p.GetText()
		if t == nil {
			return translate.Unsupported(thisDialect, field, "the system prompt of the Converse API holds text only")
		}
		if t.GetText() != "" {
			// The service refuses an empty system text block.
			out = append(out, SystemBlock{Text: ptr(t.GetText())})
		}
		if cp := newCachePoint(p.GetCacheControl()); cp != nil && len(out) > 0 {
			out = append(out, SystemBlock{CachePoint: cp})
		}
		return nil
	}
	for i, p := range e.req.GetInstructions() {
		if err := add(p, translate.Index("instructions", i)); err != nil {
			return nil, err
		}
	}
	leading, _ := translate.SplitLeadingSystem(e.req.GetMessages())
	for i, m := range leading {
		for j, p := range m.GetParts() {
			if err := add(p, translate.Index(translate.Index("messages", i)+".parts", j)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// messages builds the turns: normalised first (translate.NormaliseTurns:
// empty text dropped, tool results in the user turn after their calls,
// tool turns as user turns, system turns in the middle kept in place as
// reminders, same-role turns merged), then merged again where a turn
// lost all its blocks (another service's reasoning, say), since the
// service requires user and assistant turns to alternate.
func (e *encoder) messages() ([]Message, error) {
	_, rest := translate.SplitLeadingSystem(e.req.GetMessages())
	src := translate.NormaliseTurns(rest)
	out := make([]Message, 0, len(src))
	for i, m := range src {
		role := "user"
		if m.GetRole() == parleyv1.Role_ROLE_ASSISTANT {
			role = "assistant"
		}
		var blocks []ContentBlock
		for j, p := range m.GetParts() {
			bs, err := e.part(p, translate.PartPath{Turn: i, Index: j})
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, bs...)
		}
		if len(blocks) == 0 || onlyCachePoints(blocks) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, Message{Role: role, Content: blocks})
	}
	return out, nil
}

func onlyCachePoints(bs []ContentBlock) bool {
	for _, b := range bs {
		if b.CachePoint == nil {
			return false
		}
	}
	return true
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
