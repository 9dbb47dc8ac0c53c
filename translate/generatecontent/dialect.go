package generatecontent

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Dialect describes the content-generation dialect to the layers above
// translate. Its clients name the method in the path
// (models/{model}:generateContent), and a stream is framed as server-sent
// events only when the client asks with ?alt=sse; otherwise the service
// sends one JSON array of the chunks, and so does Parley.
func Dialect() *translate.Dialect {
	return &translate.Dialect{
		Enum:     thisDialect,
		Provider: "gcp.gemini",
		Client:   Client{},
		Upstream: Upstream{},
		Try:      try,
		Routes: []translate.Route{
			{Pattern: "POST /v1beta/models/{call}", Resolve: resolve},
			{Pattern: "GET /v1beta/models", Op: translate.OpListModels},
			{Pattern: "GET /v1beta/models/{model}", Op: translate.OpGetModel},
		},
		Framing: framing,
	}
}

// resolve reads models/{model}:{method} for the methods generateContent,
// streamGenerateContent and countTokens.
func resolve(r *http.Request, in *translate.Incoming) (translate.Op, error) {
	model, method, found := strings.Cut(r.PathValue("call"), ":")
	in.Model = "models/" + model
	switch {
	case !found || model == "":
		return 0, translate.Status(parleyv1.Code_CODE_NOT_FOUND, "no method in %q: expected models/{model}:generateContent", r.URL.Path)
	case method == "generateContent":
		return translate.OpGenerate, nil
	case method == "streamGenerateContent":
		in.Stream = true
		return translate.OpGenerate, nil
	case method == "countTokens":
		return translate.OpCount, nil
	}
	return 0, translate.Status(parleyv1.Code_CODE_NOT_FOUND, "method %q is not served here; Parley serves generateContent, streamGenerateContent and countTokens", method)
}

// framing is SSE when the path did not ask for a stream (the body did) or
// the query says alt=sse, and the service's JSON array otherwise.
func framing(in *translate.Incoming) translate.Framing {
	if !in.Stream || in.Query.Get("alt") == "sse" {
		return translate.FramingSSE
	}
	return translate.FramingJSONArray
}

var (
	_ translate.StreamEncoder = (*streamEncoder)(nil)
	_ translate.StreamDecoder = (*streamDecoder)(nil)
)

// try is a streamed generation, as the service's clients send it: the
// model in the path, events as server-sent events.
func try(model, prompt string) translate.TryRequest {
	body, _ := json.Marshal(map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": prompt}}}}})
	return translate.TryRequest{Method: http.MethodPost, Path: "/v1beta/models/" + url.PathEscape(model) + ":streamGenerateContent?alt=sse", Body: body}
}
