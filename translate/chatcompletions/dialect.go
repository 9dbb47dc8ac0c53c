package chatcompletions

import (
	"encoding/json"
	"net/http"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Dialect describes the chat-completions dialect to the layers above
// translate. It answers GET /v1/models in OpenAI's shape unless the
// request is another dialect's (see messages.Dialect).
func Dialect() *translate.Dialect {
	return &translate.Dialect{
		Enum:             thisDialect,
		Provider:         "openai",
		Client:           Client{},
		Upstream:         Upstream{},
		RateLimitHeaders: openai.RateLimitHeaders,
		Try:              try,
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

// Forward implements translate.Forwarder. A chat-completions client's
// request goes on as it came, with the upstream's model, when every
// opaque value in it is its own, it holds no cache hints (which this
// dialect drops), and, streamed, it asks for usage itself (Parley always
// asks, to count tokens).
func (Upstream) Forward(req *parleyv1.Request, src *translate.Source, t translate.Target) (*translate.Outgoing, bool, error) {
	if len(translate.CacheHintPaths(req)) > 0 || req.GetStream() && !req.GetStreamUsage() {
		return nil, false, nil
	}
	body, ok := translate.ForwardBody(req, src, thisDialect, t)
	if !ok {
		return nil, false, nil
	}
	return &translate.Outgoing{Method: http.MethodPost, Path: Path, Header: openai.RequestHeader(t.APIKey, req.GetStream()), Body: body, Stream: req.GetStream()}, true, nil
}

var _ translate.Forwarder = Upstream{}

// try is a streamed chat completion, as the service's clients send it.
func try(model, prompt string) translate.TryRequest {
	body, _ := json.Marshal(map[string]any{
		"model": model, "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
	})
	return translate.TryRequest{Method: http.MethodPost, Path: "/v1/chat/completions", Body: body}
}
