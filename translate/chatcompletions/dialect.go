package chatcompletions

import "github.com/parleyhq/parley/translate"

// Dialect describes the chat-completions dialect to the layers above
// translate. It answers GET /v1/models in OpenAI's shape unless the
// request is another dialect's (see messages.Dialect).
func Dialect() *translate.Dialect {
	return &translate.Dialect{
		Enum:     thisDialect,
		Client:   Client{},
		Upstream: Upstream{},
		Routes: []translate.Route{
			{Pattern: "POST /v1/chat/completions", Op: translate.OpGenerate},
			{Pattern: "GET /v1/models", Op: translate.OpListModels},
			{Pattern: "GET /v1/models/{model...}", Op: translate.OpGetModel},
		},
	}
}

var (
	_ translate.StreamEncoder = (*streamEncoder)(nil)
	_ translate.StreamDecoder = (*streamDecoder)(nil)
)
