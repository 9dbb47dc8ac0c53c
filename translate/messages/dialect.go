package messages

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"net/http"

	"github.com/parleyhq/parley/translate"
)

// Dialect describes the messages dialect to the layers above translate.
//
// It shares GET /v1/models with the chat-completions dialect and answers
// the requests that carry this dialect's version or key header, as its
// clients always send one of them.
func Dialect() *translate.Dialect {
	return &translate.Dialect{
		Enum:     thisDialect,
		Provider: "anthropic",
		Client:   Client{},
		Upstream: Upstream{},
		Routes: []translate.Route{
			{Pattern: "POST /v1/messages", Op: translate.OpGenerate},
			{Pattern: "POST /v1/messages/count_tokens", Op: translate.OpCount},
			{Pattern: "GET /v1/models", Op: translate.OpListModels, Claims: claims},
			{Pattern: "GET /v1/models/{model...}", Op: translate.OpGetModel, Claims: claims},
		},
	}
}

// claims reports whether a request on a shared path is this dialect's.
func claims(h http.Header) bool { return h.Get("anthropic-version") != "" || h.Get("x-api-key") != "" }

var (
	_ translate.StreamEncoder = (*streamEncoder)(nil)
	_ translate.StreamDecoder = (*streamDecoder)(nil)
)

// Forward implements translate.Forwarder. A messages client's request
// goes on as it came, with the upstream's model, when every signature in
// it is its own (none came through another dialect) and it asks for
// nothing this dialect cannot carry: then the encoder, which passes a
// client of this dialect its choices, would build the same request.
func (Upstream) Forward(req *parleyv1.Request, src *translate.Source, t translate.Target) (*translate.Outgoing, bool, error) {
	if len(dropped(req)) > 0 {
		return nil, false, nil
	}
	body, ok := translate.ForwardBody(req, src, thisDialect, t)
	if !ok {
		return nil, false, nil
	}
	e := encoder{req: req, t: t, same: true}
	return &translate.Outgoing{
		Method: http.MethodPost,
		Path:   "/v1/messages",
		Header: e.header(),
		Body:   body,
		Stream: req.GetStream(),
	}, true, nil
}

var _ translate.Forwarder = Upstream{}
