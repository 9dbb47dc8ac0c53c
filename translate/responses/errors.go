package responses

import (
	"net/http"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// Errors: a failed response's error object, in both directions; error
// bodies are shared with the chat-completions dialect
// (translate/internal/openai).

// failure converts the error object of a failed response.
func failure(e *responseError) *parleyv1.Error {
	out := &parleyv1.Error{Code: parleyv1.Code_CODE_INTERNAL, Message: e.Message, Reason: e.Code, Origin: &parleyv1.Origin{Dialect: thisDialect}}
	switch e.Code {
	case "rate_limit_exceeded":
		out.Code = parleyv1.Code_CODE_RESOURCE_EXHAUSTED
	case "invalid_prompt", "invalid_image", "invalid_base64_image", "invalid_image_url", "image_too_large", "image_too_small",
		"empty_image_file", "invalid_image_format", "image_content_policy_violation", "vector_store_timeout":
		out.Code = parleyv1.Code_CODE_INVALID_ARGUMENT
	}
	jsonx.Keep(&out.Extensions, thisDialect, "error", e.Unknown)
	out.Retry = translate.RetryIfAny(translate.RetryFacts{Code: out.Code})
	return out
}

// failureObject renders an error as a failed response's error.
func failureObject(e *parleyv1.Error) *responseError {
	code := e.GetReason()
	if e.GetOrigin().GetDialect() != thisDialect || code == "" {
		switch e.GetCode() {
		case parleyv1.Code_CODE_RESOURCE_EXHAUSTED:
			code = "rate_limit_exceeded"
		case parleyv1.Code_CODE_INVALID_ARGUMENT:
			code = "invalid_prompt"
		default:
			code = "server_error"
		}
	}
	msg := e.GetMessage()
	if msg == "" {
		msg = http.StatusText(translate.HTTPStatusOf(e))
	}
	out := &responseError{Code: code, Message: msg}
	if e.GetOrigin().GetDialect() == thisDialect {
		out.Unknown = jsonx.Take(e.GetExtensions(), thisDialect, "error")
	}
	return out
}

// EncodeError implements translate.Client.
func (Client) EncodeError(e *parleyv1.Error) (int, []byte) { return openai.EncodeError(e) }

// DecodeError implements translate.Upstream.
func (Upstream) DecodeError(status int, header http.Header, body []byte) *parleyv1.Error {
	return openai.DecodeError(thisDialect, status, header, body)
}
