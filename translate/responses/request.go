package responses

import (
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/internal/offstack"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// The request walk, in both directions: a client's body to the canonical
// request (Client.DecodeRequest) and the canonical request to an
// upstream's body (Upstream.EncodeRequest): the conversation turn by turn,
// then tools and settings. Items are mapped in items.go, their content in
// messages.go.

// thisDialect is this package's dialect.
const thisDialect = parleyv1.Dialect_DIALECT_RESPONSES

// Client is the responses dialect as clients speak it.
type Client struct{}

var (
	_ translate.Client      = Client{}
	_ translate.CountClient = Client{}
)

// Dialect implements translate.Client.
func (Client) Dialect() parleyv1.Dialect { return thisDialect }

// APIKey implements translate.Client: clients send Authorization: Bearer.
func (Client) APIKey(in *translate.Incoming) string { return translate.BearerToken(in.Header) }

// DecodeRequest implements translate.Client.
func (Client) DecodeRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	var w Request
	if err := unmarshalRequest(in.Body, &w); err != nil {
		return nil, err
	}
	return decodeRequest(&w)
}

// unmarshalRequest reads a request body, the quick way when it can
// (readRequest), else by reflection through its nested lists, off the
// request's stack.
func unmarshalRequest(body []byte, w *Request) error {
	if readRequest(body, w) {
		return nil
	}
	if err := jsonx.UnmarshalOffStack(body, w); err != nil {
		return openai.InputError(err)
	}
	return nil
}

func decodeRequest(w *Request) (*parleyv1.Request, error) {
	if w.Model == "" {
		return nil, translate.Invalid("model", "is required")
	}
	if w.Input == nil && (w.PreviousResponseID == nil || *w.PreviousResponseID == "") {
		return nil, translate.Invalid("input", "is required")
	}
	req := &parleyv1.Request{Model: w.Model, Stream: w.Stream != nil && *w.Stream, Metadata: w.Metadata, Store: w.Store}
	jsonx.Keep(&req.Extensions, thisDialect, "", w.Unknown)
	if req.Extensions == nil {
		req.Extensions = &parleyv1.Extensions{Dialect: thisDialect}
	}
	if w.Instructions != nil {
		req.Instructions = []*parleyv1.Part{translate.TextPart(*w.Instructions)}
	}
	if w.PreviousResponseID != nil {
		req.PreviousResponseId = *w.PreviousResponseID
	}
	if in := w.Input; in != nil {
		if in.String {
			markInputString.Keep(&req.Extensions, jsontext.Value("true"))
			req.Messages = []*parleyv1.Message{translate.NewMessage(parleyv1.Role_ROLE_USER, translate.TextPart(in.Text))}
		}
		items := in.Items
		if n := len(items); n > 0 && items[n-1].Type == "compaction_trigger" {
			// It asks for a compaction of everything before it, in place
			// of an answer (compaction.go).
			items = items[:n-1]
			markCompact.Keep(&req.Extensions, jsontext.Value("true"))
			markRewritten.Keep(&req.Extensions, jsontext.Value("true"))
		}
		d := &itemDecoder{client: true, names: map[string]string{}}
		for i := range items {
			m, err := d.item(&items[i], "input.["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			if m != nil {
				req.Messages = append(req.Messages, m)
			}
		}
		if d.expanded {
			markRewritten.Keep(&req.Extensions, jsontext.Value("true"))
		}
	}
	if in := w.Input; in != nil {
		if err := decodeInputTools(req, in.Items); err != nil {
			return nil, err
		}
	}
	if err := decodeTools(req, w); err != nil {
		return nil, err
	}
	if err := decodeSettings(req, w); err != nil {
		return nil, err
	}
	return req, nil
}

// Path is where requests of this dialect go, below the upstream's base URL.
const Path = "/v1/responses"

// Upstream is the responses dialect as services speak it.
type Upstream struct{}

var (
	_ translate.Upstream      = Upstream{}
	_ translate.CountUpstream = Upstream{}
)

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return thisDialect }

type encoder struct {
	req     *parleyv1.Request
	t       translate.Target
	same    bool
	dropped []string
	// groups are the namespaces already rendered (namespace.go).
	groups map[string]bool
}

// EncodeRequest implements translate.Upstream. Another dialect's request
// is written on the caller's stack (a stream handler's): its writer is
// shallow, and what it leaves to reflection goes off the stack by itself
// (outgoing). A request of this dialect, written again (for one of
// several upstreams of this dialect, or where it could not be forwarded),
// takes back its items, tools and namespaces as they came, by reflection
// through whatever they nest: it is written off the stack whole.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := &encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == thisDialect}
	if e.same {
		return e.encodeRequestOffStack()
	}
	return e.encodeRequest()
}

// encodeRequestOffStack is encodeRequest off the stack, a function of its
// own so that what its closure takes is allocated only when it runs.
func (e *encoder) encodeRequestOffStack() (out *translate.Outgoing, err error) {
	offstack.Run(func() { out, err = e.encodeRequest() })
	return out, err
}

func (e *encoder) encodeRequest() (*translate.Outgoing, error) {
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	if e.req.GetStream() {
		w.Stream = new(true)
	}
	return e.outgoing(w, Path, e.req.GetStream())
}

func (e *encoder) outgoing(w *Request, path string, stream bool) (*translate.Outgoing, error) {
	// Written without reflection where it can be
	// (TestQuickRequestIsTheMarshalledRequest), else off the stack.
	body, err := jsonx.EncodeOffStack(w, appendRequest)
	if err != nil {
		return nil, err
	}
	h := openai.RequestHeader(e.t.APIKey, stream)
	dropped := append(translate.CacheHintPaths(e.req), e.dropped...)
	return &translate.Outgoing{Method: http.MethodPost, Path: path, Header: h, Body: body, Stream: stream, Dropped: dropped}, nil
}

func (e *encoder) take(ext *parleyv1.Extensions, prefix string) jsonx.Unknown {
	if !e.same {
		return nil
	}
	return jsonx.Take(ext, thisDialect, prefix)
}

func (e *encoder) has(ext *parleyv1.Extensions, m jsonx.Mark) bool {
	return e.same && m.In(ext)
}

func (e *encoder) request() (*Request, error) {
	req := e.req
	w := &Request{Model: e.t.Model, Unknown: e.take(req.GetExtensions(), "")}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	if len(req.GetInstructions()) > 0 {
		s := translate.JoinText(req.GetInstructions(), "\n\n")
		w.Instructions = &s
	}
	items, err := e.items()
	if err != nil {
		return nil, err
	}
	switch {
	case e.has(req.GetExtensions(), markInputString) && len(req.GetMessages()) == 1:
		w.Input = &Input{String: true, Text: translate.JoinText(req.GetMessages()[0].GetParts(), "")}
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

// items renders the conversation as input items.
func (e *encoder) items() ([]Item, error) {
	// Most turns are one item: the conversation's are made in one array,
	// each turn appending its own.
	msgs := e.req.GetMessages()
	out := make([]Item, 0, len(msgs))
	for i, m := range msgs {
		var err error
		if out, err = e.turn(out, m, "messages["+strconv.Itoa(i)+"]"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
