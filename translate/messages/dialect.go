package messages

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Dialect describes the messages dialect to the layers above translate.
//
// It shares GET /v1/models with the chat-completions dialect and answers
// the requests that carry this dialect's version or key header, as its
// clients always send one of them.
func Dialect() *translate.Dialect {
	return &translate.Dialect{
		Enum:             thisDialect,
		Provider:         "anthropic",
		Client:           Client{},
		Upstream:         Upstream{},
		RateLimitHeaders: rateLimitHeaders,
		Try:              try,
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

// The rate-limit headers, in canonical form: limit, remaining, reset.
var (
	requestLimitHeaders = [3]string{"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"}
	tokenLimitHeaders   = [3]string{"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"}
)

// rateLimitHeaders sets the service's anthropic-ratelimit-* headers: each
// limit, what remains, and when the window is whole again (RFC 3339).
func rateLimitHeaders(h http.Header, rl *translate.RateLimits, now time.Time) {
	// One backing array for every value: a header's []string is a window
	// of it.
	vals := make([]string, 0, 6)
	put := func(name, v string) {
		vals = append(vals, v)
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	set := func(names *[3]string, w translate.RateWindow) {
		if w.Limit <= 0 {
			return
		}
		put(names[0], strconv.FormatInt(w.Limit, 10))
		put(names[1], strconv.FormatInt(max(w.Remaining, 0), 10))
		// Rounded up: a client that waits until then finds the window whole.
		put(names[2], now.Add(w.Reset+time.Second-1).UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	set(&requestLimitHeaders, rl.Requests)
	set(&tokenLimitHeaders, rl.Tokens)
}

// try is a streamed message to a model, as the service's clients send it.
func try(model, prompt string) translate.TryRequest {
	body, _ := json.Marshal(map[string]any{
		"model": model, "max_tokens": 1024, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
	})
	return translate.TryRequest{Method: http.MethodPost, Path: "/v1/messages", Body: body}
}
