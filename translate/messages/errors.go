package messages

import (
	"net/http"
	"strconv"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// errorTypes is the dialect's error vocabulary: the type of an error body
// for each HTTP status, and the canonical code of each type.
var errorTypes = []struct {
	status int
	typ    string
	code   parleyv1.Code
}{
	{http.StatusBadRequest, "invalid_request_error", parleyv1.Code_CODE_INVALID_ARGUMENT},
	{http.StatusUnauthorized, "authentication_error", parleyv1.Code_CODE_UNAUTHENTICATED},
	{http.StatusPaymentRequired, "billing_error", parleyv1.Code_CODE_PERMISSION_DENIED},
	{http.StatusForbidden, "permission_error", parleyv1.Code_CODE_PERMISSION_DENIED},
	{http.StatusNotFound, "not_found_error", parleyv1.Code_CODE_NOT_FOUND},
	{http.StatusConflict, "conflict_error", parleyv1.Code_CODE_ABORTED},
	{http.StatusRequestEntityTooLarge, "request_too_large", parleyv1.Code_CODE_INVALID_ARGUMENT},
	{http.StatusTooManyRequests, "rate_limit_error", parleyv1.Code_CODE_RESOURCE_EXHAUSTED},
	{http.StatusInternalServerError, "api_error", parleyv1.Code_CODE_INTERNAL},
	{http.StatusGatewayTimeout, "timeout_error", parleyv1.Code_CODE_DEADLINE_EXCEEDED},
	{529, "overloaded_error", parleyv1.Code_CODE_UNAVAILABLE},
}

// errorType returns the error type and status a client sees for e: the
// upstream's own type when it spoke this dialect, else the type of the
// status (a 503 of another dialect is this dialect's overloaded_error, and
// keeps its status).
func errorType(e *parleyv1.Error) (string, int) {
	status := translate.HTTPStatusOf(e)
	if e.GetOrigin().GetDialect() == thisDialect && e.GetReason() != "" {
		return e.GetReason(), status
	}
	if status == http.StatusServiceUnavailable {
		return "overloaded_error", status
	}
	for _, t := range errorTypes {
		if t.status == status {
			return t.typ, status
		}
	}
	if status >= 500 {
		return "api_error", status
	}
	return "invalid_request_error", status
}

func errorMessage(e *parleyv1.Error) string {
	if m := e.GetMessage(); m != "" {
		return m
	}
	return http.StatusText(translate.HTTPStatusOf(e))
}

// EncodeError implements translate.Client.
func (Client) EncodeError(e *parleyv1.Error) (int, []byte) {
	typ, status := errorType(e)
	body := errorBody{Type: "error", Error: errorDetail{Type: typ, Message: errorMessage(e)}, RequestID: e.GetRequestId()}
	b, err := jsonx.Marshal(body)
	if err != nil {
		return http.StatusInternalServerError, []byte(`{"type":"error","error":{"type":"api_error","message":"internal error"}}`)
	}
	return status, b
}

// DecodeError implements translate.Upstream.
func (Upstream) DecodeError(status int, header http.Header, body []byte) *parleyv1.Error {
	var w errorBody
	var e *parleyv1.Error
	if err := jsonx.Unmarshal(body, &w); err == nil && w.Error.Type != "" {
		e = errorFromDetail(&w.Error, status)
		e.RequestId = w.RequestID
	} else {
		e = &parleyv1.Error{
			Code:    translate.CodeForHTTPStatus(status),
			Message: upstreamText(status, body),
			Origin:  &parleyv1.Origin{Dialect: thisDialect},
		}
	}
	e.HttpStatus = int32(status)
	if e.RequestId == "" {
		e.RequestId = header.Get("request-id")
	}
	e.Retry = translate.Retry(translate.ReplyRetryFacts(status, header))
	e.RefusedReasoning = status == http.StatusBadRequest && refusedThinking(e.GetMessage())
	return e
}

// refusedThinking reports whether an error text is the service refusing
// a thinking block it did not sign ("messages.1.content.0: Invalid
// `signature` in `thinking` block") or redacted thinking it did not make:
// a key or an account changed since the block was made.
func refusedThinking(msg string) bool {
	return strings.Contains(msg, "Invalid `signature`") || strings.Contains(msg, "redacted_thinking") && strings.Contains(msg, "Invalid")
}

// errorFromDetail converts an error object, from a body or a stream event.
func errorFromDetail(d *errorDetail, status int) *parleyv1.Error {
	e := &parleyv1.Error{Message: d.Message, Reason: d.Type, Origin: &parleyv1.Origin{Dialect: thisDialect}}
	for _, t := range errorTypes {
		if t.typ == d.Type {
			e.Code = t.code
			if status == 0 {
				e.HttpStatus = int32(t.status)
			}
			break
		}
	}
	if e.Code == parleyv1.Code_CODE_UNSPECIFIED {
		e.Code = translate.CodeForHTTPStatus(status)
		if status == 0 {
			e.Code = parleyv1.Code_CODE_UNKNOWN
		}
	}
	e.Retry = translate.RetryIfAny(translate.RetryFacts{Status: int(e.HttpStatus), Code: e.Code})
	return e
}

// upstreamText is a short description of a body that is not the dialect's
// error shape (a proxy's HTML page, say).
func upstreamText(status int, body []byte) string {
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" {
		return "upstream answered " + strconv.Itoa(status) + " " + http.StatusText(status)
	}
	return "upstream answered " + strconv.Itoa(status) + ": " + text
}

// decodeError turns a JSON error into this dialect's field-path message.
func decodeError(err error) error {
	segs, what := jsonx.Path(err)
	return &translate.InputError{Field: jsonx.DottedPath(segs), Message: what, Err: err}
}

func decodeErrorAt(err error, path string) error {
	segs, what := jsonx.Path(err)
	field := path
	if len(segs) > 0 {
		field += "." + jsonx.DottedPath(segs)
	}
	return &translate.InputError{Field: field, Message: what, Err: err}
}
