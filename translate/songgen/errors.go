package songgen

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Envelope codes. CodeSuccess is the spec's; the others are Parley's and
// travel in the canonical error's reason, so that a client can tell the
// failures apart without parsing messages.
const (
	CodeSuccess             = "success"
	CodeInvalidJSON         = "invalid_json"                      // 400: the body is not a JSON object
	CodeMissingField        = "missing_field"                     // 400: a required field is absent or empty
	CodeInvalidField        = translate.ReasonInvalidField        // 400: a field has the wrong type or value
	CodeInvalidMode         = "invalid_mode"                      // 400: a song body fits no mode, or mixes modes
	CodeHookRefused         = translate.ReasonHookRefused         // 400: notify_hook points at a private address
	CodeTooLarge            = "request_too_large"                 // 413
	CodeUnauthorized        = "unauthorized"                      // 401: no key, or an unknown key
	CodeForbidden           = "forbidden"                         // 403
	CodeTaskNotFound        = "task_not_found"                    // 404: unknown id, or another key's task
	CodeRateLimited         = "rate_limited"                      // 429: the music service asks to slow down
	CodeUpstreamRejected    = "upstream_rejected"                 // the music service refused the request (its 4xx status)
	CodeUpstreamError       = translate.ReasonUpstreamError       // 502: the music service failed or answered nonsense
	CodeUpstreamUnavailable = translate.ReasonUpstreamUnavailable // 503: no music service configured, or it cannot be reached
	CodeUpstreamTimeout     = translate.ReasonUpstreamTimeout     // 504
	CodeNotImplemented      = "not_implemented"                   // 501
	CodeInternal            = "internal_error"                    // 500
)

// codes names the envelope code of a canonical code when the error names
// no reason of its own; the HTTP status comes from translate.HTTPStatusOf,
// the one table every dialect shares.
var codes = map[parleyv1.Code]string{
	parleyv1.Code_CODE_INVALID_ARGUMENT:    CodeInvalidField,
	parleyv1.Code_CODE_FAILED_PRECONDITION: CodeInvalidField,
	parleyv1.Code_CODE_OUT_OF_RANGE:        CodeInvalidField,
	parleyv1.Code_CODE_UNAUTHENTICATED:     CodeUnauthorized,
	parleyv1.Code_CODE_PERMISSION_DENIED:   CodeForbidden,
	parleyv1.Code_CODE_NOT_FOUND:           CodeTaskNotFound,
	parleyv1.Code_CODE_RESOURCE_EXHAUSTED:  CodeRateLimited,
	parleyv1.Code_CODE_UNAVAILABLE:         CodeUpstreamUnavailable,
	parleyv1.Code_CODE_DEADLINE_EXCEEDED:   CodeUpstreamTimeout,
	parleyv1.Code_CODE_UNIMPLEMENTED:       CodeNotImplemented,
	parleyv1.Code_CODE_UNKNOWN:             CodeUpstreamError,
}

// EncodeError renders a canonical error as this interface's envelope: the
// reason is the envelope code when it is one of ours, else the table
// decides; the status is the error's own when it carries one.
func EncodeError(e *parleyv1.Error) (status int, body []byte) {
	status = translate.HTTPStatusOf(e)
	code, ok := codes[e.GetCode()]
	switch {
	case status == http.StatusRequestEntityTooLarge:
		code = CodeTooLarge
	case e.GetReason() != "":
		code = e.GetReason()
	case !ok:
		code = CodeInternal
	}
	msg := e.GetMessage()
	if msg == "" {
		msg = http.StatusText(status)
	}
	body, _ = jsonx.Marshal(Envelope{Code: code, Message: msg, Data: null})
	return status, body
}

var null = []byte("null")

// fieldError is a bad-input error with its envelope code.
func fieldError(reason, field, format string, args ...any) *translate.StatusError {
	msg := fmt.Sprintf(format, args...)
	e := &parleyv1.Error{Code: parleyv1.Code_CODE_INVALID_ARGUMENT, Message: msg, Reason: reason}
	if field != "" {
		e.Message = field + ": " + msg
		e.FieldViolations = []*parleyv1.FieldViolation{{Field: field, Description: msg}}
	}
	return &translate.StatusError{Err: e}
}

// Missing is the error for a required field that is absent or empty.
func Missing(field string) error {
	return fieldError(CodeMissingField, field, "is required")
}

// InvalidField is the error for a field with a wrong value.
func InvalidField(field, format string, args ...any) error {
	return fieldError(CodeInvalidField, field, format, args...)
}

// decodeError turns a JSON decode error into an envelope error: a body
// that is not a JSON object is invalid_json, a member of the wrong type is
// invalid_field naming it.
func decodeError(body []byte, err error) error {
	if len(body) == 0 {
		return fieldError(CodeInvalidJSON, "", "the request body is empty; a JSON object is expected")
	}
	segs, what := jsonx.Path(err)
	var sem *json.SemanticError
	if len(segs) == 0 || !errors.As(err, &sem) {
		return fieldError(CodeInvalidJSON, "", "the request body is not a JSON object: %s", what)
	}
	return fieldError(CodeInvalidField, jsonx.DottedPath(segs), "%s", what)
}
