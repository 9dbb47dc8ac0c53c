package messages

import (
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
