package chatcompletions

import (
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"net/http"

	"github.com/parleyhq/parley/translate"
)

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

// Forward implements translate.Forwarder. A chat-completions client's
// request goes on as it came, with the upstream's model, when every
// opaque value in it is its own, it holds no cache hints (which this
// dialect drops), and, streamed, it asks for usage itself (Parley always
// asks, to count tokens).
func (Upstream) Forward(req *parleyv1.Request, src *translate.Source, t translate.Target) (*translate.Outgoing, bool, error) {
	if src == nil || src.Dialect != thisDialect || req.GetExtensions().GetDialect() != thisDialect ||
		!translate.OwnOpaques(req, thisDialect) || len(translate.CacheHintPaths(req)) > 0 ||
		req.GetStream() && !req.GetStreamUsage() {
		return nil, false, nil
	}
	body, err := translate.SetModel(src.Body, t.Model)
	if err != nil {
		return nil, false, nil
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if t.APIKey != "" {
		h.Set("Authorization", "Bearer "+t.APIKey)
	}
	if req.GetStream() {
		h.Set("Accept", "text/event-stream")
	}
	return &translate.Outgoing{Method: http.MethodPost, Path: Path, Header: h, Body: body, Stream: req.GetStream()}, true, nil
}

var _ translate.Forwarder = Upstream{}
