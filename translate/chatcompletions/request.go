package chatcompletions

import (
	"bytes"
	"net/http"
	"sync/atomic"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// The request walk, both ways: a client's request into a canonical request
// (DecodeRequest), and a canonical request into an upstream's request
// (EncodeRequest). Messages are in turns.go; tools, media and settings
// each have their own file.

// thisDialect is this package's dialect.
const thisDialect = parleyv1.Dialect_DIALECT_CHAT_COMPLETIONS

// Client is the chat-completions dialect as clients speak it.
type Client struct{}

var _ translate.Client = Client{}

// Dialect implements translate.Client.
func (Client) Dialect() parleyv1.Dialect { return thisDialect }

// APIKey implements translate.Client: clients send Authorization: Bearer.
func (Client) APIKey(in *translate.Incoming) string { return translate.BearerToken(in.Header) }

// Path is where requests of this dialect go, below the upstream's base URL.
const Path = "/v1/chat/completions"

// Upstream is the chat-completions dialect as services speak it.
type Upstream struct{}

var _ translate.Upstream = Upstream{}

// Dialect implements translate.Upstream.
func (Upstream) Dialect() parleyv1.Dialect { return thisDialect }

// DecodeRequest implements translate.Client.
func (Client) DecodeRequest(in *translate.Incoming) (*parleyv1.Request, error) {
	req := &parleyv1.Request{}
	names := map[string]string{}
	w := requestIn{Messages: jsonx.Each[message]{
		Reset: func() {
			// Room for every message at once, rather than growing the
			// list step by step: each message has a role, so the count
			// of that name bounds them; none is shorter than {"role":""}.
			req.Messages = make([]*parleyv1.Message, 0, min(bytes.Count(in.Body, roleName), len(in.Body)/len(`{"role":""}`)))
			clear(names)
		},
		Fn: func(i int, wm *message) error {
			m, err := decodeMessage(wm, i, names)
			if err == nil {
				req.Messages = append(req.Messages, m)
			}
			return err
		},
	}}
	if generalOnly.Load() || !readRequest(in.Body, &w) {
		if err := jsonx.Unmarshal(in.Body, &w); err != nil {
			return nil, openai.InputError(err)
		}
	}
	return decodeRequest(req, &w)
}

var roleName = []byte(`"role"`)

// generalOnly keeps DecodeRequest from reading a request without
// reflection (readRequest), for the tests that hold the two ways to the
// same result.
var generalOnly atomic.Bool

// requestIn is Request as it is decoded: each message becomes a canonical
// one as soon as it is read, so that a body of very many messages is not
// held twice over, once in its wire form and once in the canonical one.
type requestIn struct {
	Request
	Messages jsonx.Each[message] `json:"messages"`
}

func decodeRequest(req *parleyv1.Request, w *requestIn) (*parleyv1.Request, error) {
	if w.Model == "" {
		return nil, translate.Invalid("model", "is required")
	}
	if w.Messages.N == 0 {
		return nil, translate.Invalid("messages", "must hold at least one message")
	}
	if w.Messages.Err != nil {
		return nil, w.Messages.Err
	}
	req.Model, req.Stream, req.Metadata = w.Model, w.Stream != nil && *w.Stream, w.Metadata
	jsonx.Keep(&req.Extensions, thisDialect, "", w.Unknown)
	if req.Extensions == nil {
		req.Extensions = &parleyv1.Extensions{Dialect: thisDialect}
	}
	if err := decodeTools(req, &w.Request); err != nil {
		return nil, err
	}
	if err := decodeSettings(req, &w.Request); err != nil {
		return nil, err
	}
	return req, nil
}

type encoder struct {
	req  *parleyv1.Request
	t    translate.Target
	same bool // the client spoke this dialect
	// dropped lists canonical fields the request asked for that this
	// dialect cannot carry.
	dropped []string
}

// EncodeRequest implements translate.Upstream.
func (Upstream) EncodeRequest(req *parleyv1.Request, t translate.Target) (*translate.Outgoing, error) {
	e := &encoder{req: req, t: t, same: req.GetExtensions().GetDialect() == thisDialect}
	w, err := e.request()
	if err != nil {
		return nil, err
	}
	body, err := jsonx.EncodeOffStack(w, appendRequest)
	if err != nil {
		return nil, err
	}
	h := openai.RequestHeader(t.APIKey, req.GetStream())
	dropped := append(translate.CacheHintPaths(req), e.dropped...)
	return &translate.Outgoing{Method: http.MethodPost, Path: Path, Header: h, Body: body, Stream: req.GetStream(), Dropped: dropped}, nil
}

func (e *encoder) request() (*Request, error) {
	req := e.req
	w := &Request{Model: e.t.Model, Unknown: e.take(req.GetExtensions(), "")}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	msgs := req.GetMessages()
	if !e.same {
		msgs = joinAssistantRuns(dropEmptyText(msgs))
	}
	// A turn is one message, usually: the list is made once at its size.
	w.Messages = make([]message, 0, len(msgs)+1)
	if len(req.GetInstructions()) > 0 {
		w.Messages = append(w.Messages, message{Role: "system", Content: &Content{String: true, Text: translate.JoinText(req.GetInstructions(), "\n\n")}})
	}
	for i, m := range msgs {
		var err error
		w.Messages, err = e.message(w.Messages, m, i)
		if err != nil {
			return nil, err
		}
	}
	if err := e.tools(w); err != nil {
		return nil, err
	}
	e.settings(w)
	return w, nil
}

func int32p(v int64) *int32 {
	if v > 1<<31-1 {
		v = 1<<31 - 1
	}
	x := int32(v)
	return &x
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
