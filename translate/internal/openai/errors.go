// Package openai holds what the two OpenAI-family dialects (responses and
// chat completions) share on the wire: the error body, its vocabulary, and
// the keys of their requests. The dialect packages stay independent of each
// other; this package knows no request or response shape.
package openai

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// ErrorBody is {"error": {...}}, the error reply of both dialects.
type ErrorBody struct {
	Error *ErrorDetail `json:"error"`
}

// ErrorDetail is the error object. code is a string on the real service;
// some compatible servers send a number, so it stays raw.
type ErrorDetail struct {
	Message string         `json:"message"`
	Type    string         `json:"type"`
	Param   *string        `json:"param"`
	Code    jsontext.Value `json:"code"`
	Unknown jsonx.Unknown  `json:",embed" jsonschema:"-"`
}

// errorTypes is the vocabulary of the real service: the type and code of
// an error body for each HTTP status. The service reports a bad key as an
// invalid_request_error with code invalid_api_key, and rate limits with
// the type "requests" and code rate_limit_exceeded.
var errorTypes = []struct {
	status int
	typ    string
	code   string
}{
	{http.StatusBadRequest, "invalid_request_error", ""},
	{http.StatusUnauthorized, "invalid_request_error", "invalid_api_key"},
	{http.StatusForbidden, "invalid_request_error", "permission_denied"},
	{http.StatusNotFound, "invalid_request_error", "not_found"},
	{http.StatusConflict, "invalid_request_error", "conflict"},
	{http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large"},
	{http.StatusTooManyRequests, "requests", "rate_limit_exceeded"},
	{http.StatusInternalServerError, "server_error", ""},
	{http.StatusServiceUnavailable, "server_error", "service_unavailable"},
	{http.StatusGatewayTimeout, "server_error", "timeout"},
}

// codeReasons are error codes of the service whose canonical code the
// status alone does not tell.
var codeReasons = map[string]parleyv1.Code{
	"context_length_exceeded": parleyv1.Code_CODE_INVALID_ARGUMENT,
	"insufficient_quota":      parleyv1.Code_CODE_RESOURCE_EXHAUSTED,
	"invalid_api_key":         parleyv1.Code_CODE_UNAUTHENTICATED,
	"model_not_found":         parleyv1.Code_CODE_NOT_FOUND,
	"rate_limit_exceeded":     parleyv1.Code_CODE_RESOURCE_EXHAUSTED,
	"server_error":            parleyv1.Code_CODE_INTERNAL,
}

// Extension keys of a canonical error that came from this family.
const (
	extCode  = "code"
	extParam = "param"
)

// family reports whether d is one of the two OpenAI-family dialects.
func family(d parleyv1.Dialect) bool {
	return d == parleyv1.Dialect_DIALECT_RESPONSES || d == parleyv1.Dialect_DIALECT_CHAT_COMPLETIONS
}

// ErrorObject renders e as this family's error object: the upstream's own type,
// code and param when it spoke this family, else those of its status; a
// field violation names the param.
func ErrorObject(e *parleyv1.Error) (int, *ErrorDetail) {
	status := translate.HTTPStatusOf(e)
	d := &ErrorDetail{Message: e.GetMessage(), Code: jsontext.Value("null")}
	if d.Message == "" {
		d.Message = http.StatusText(status)
	}
	same := family(e.GetOrigin().GetDialect())
	if same && e.GetReason() != "" {
		d.Type = e.GetReason()
	}
	if v, ok := jsonx.Value(e.GetExtensions(), e.GetExtensions().GetDialect(), extCode); ok && same {
		d.Code = v
	}
	if v, ok := jsonx.Value(e.GetExtensions(), e.GetExtensions().GetDialect(), extParam); ok && same {
		var p *string
		if err := jsonx.Unmarshal(v, &p); err == nil {
			d.Param = p
		}
	}
	if l := e.GetLimit(); l != nil && d.Type == "" {
		// Parley's own limits, named as the service names its own: the
		// kind of rate limit as the type, or a spent quota.
		switch {
		case l.GetQuota():
			d.Type, d.Code = "insufficient_quota", jsontext.Value(`"insufficient_quota"`)
		case l.GetLimit() == "tokens_per_minute":
			d.Type, d.Code = "tokens", jsontext.Value(`"rate_limit_exceeded"`)
		default:
			d.Type, d.Code = "requests", jsontext.Value(`"rate_limit_exceeded"`)
		}
	}
	if d.Type == "" {
		d.Type = "invalid_request_error"
		if status >= 500 {
			d.Type = "server_error"
		}
		for _, t := range errorTypes {
			if t.status == status {
				d.Type = t.typ
				if t.code != "" && string(d.Code) == "null" {
					d.Code = jsontext.Value(strconv.Quote(t.code))
				}
				break
			}
		}
	}
	if d.Param == nil && len(e.GetFieldViolations()) > 0 {
		p := e.GetFieldViolations()[0].GetField()
		d.Param = &p
	}
	if same {
		if u := jsonx.Take(e.GetExtensions(), e.GetExtensions().GetDialect(), "error"); len(u) > 0 {
			d.Unknown = u
		}
	}
	return status, d
}

// EncodeError renders e as a reply: its status and {"error": {...}}.
func EncodeError(e *parleyv1.Error) (int, []byte) {
	status, d := ErrorObject(e)
	b, err := jsonx.Marshal(ErrorBody{Error: d})
	if err != nil {
		return http.StatusInternalServerError, []byte(`{"error":{"message":"internal error","type":"server_error","param":null,"code":null}}`)
	}
	return status, b
}

// DecodeError turns a non-2xx reply of dialect dl into a canonical error,
// keeping the status, the type as the reason, and code and param for a
// client of the same family.
func DecodeError(dl parleyv1.Dialect, status int, header http.Header, body []byte) *parleyv1.Error {
	var w ErrorBody
	var e *parleyv1.Error
	if err := jsonx.Unmarshal(body, &w); err == nil && w.Error != nil && (w.Error.Message != "" || w.Error.Type != "") {
		e = FromDetail(dl, w.Error, status)
	} else {
		e = &parleyv1.Error{
			Code:    translate.CodeForHTTPStatus(status),
			Message: upstreamText(status, body),
			Origin:  &parleyv1.Origin{Dialect: dl},
		}
	}
	e.HttpStatus = int32(status)
	e.RequestId = header.Get("x-request-id")
	e.Retry = translate.Retry(translate.ReplyRetryFacts(status, header))
	// The responses service cannot open a reasoning item's encrypted
	// content made under another key or organisation.
	e.RefusedReasoning = w.Error != nil && string(w.Error.Code) == `"invalid_encrypted_content"`
	return e
}

// FromDetail converts an error object, from a reply body or a stream.
// status is 0 in a stream.
func FromDetail(dl parleyv1.Dialect, d *ErrorDetail, status int) *parleyv1.Error {
	e := &parleyv1.Error{Message: d.Message, Reason: d.Type, Origin: &parleyv1.Origin{Dialect: dl}}
	if len(d.Code) > 0 && string(d.Code) != "null" {
		jsonx.KeepValue(&e.Extensions, dl, extCode, d.Code)
	}
	if d.Param != nil {
		raw, _ := jsonx.Marshal(*d.Param)
		jsonx.KeepValue(&e.Extensions, dl, extParam, raw)
		e.FieldViolations = []*parleyv1.FieldViolation{{Field: *d.Param, Description: d.Message}}
	}
	jsonx.Keep(&e.Extensions, dl, "error", d.Unknown)
	code := ""
	_ = jsonx.Unmarshal(d.Code, &code)
	switch c, ok := codeReasons[code]; {
	case ok:
		e.Code = c
	case status != 0:
		e.Code = translate.CodeForHTTPStatus(status)
	case d.Type == "server_error":
		e.Code = parleyv1.Code_CODE_INTERNAL
	case d.Type == "invalid_request_error":
		e.Code = parleyv1.Code_CODE_INVALID_ARGUMENT
	default:
		e.Code = parleyv1.Code_CODE_UNKNOWN
	}
	if status == 0 {
		e.Retry = translate.RetryIfAny(translate.RetryFacts{Code: e.Code})
	}
	return e
}

// upstreamText is a short description of a body that is not the error
// shape (a proxy's HTML page, say).
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

// Path spells a field path as this family's param does:
// messages.[2].content, with array indices in brackets.
func Path(segments ...string) string {
	var b strings.Builder
	for i, s := range segments {
		if i > 0 {
			b.WriteByte('.')
		}
		if _, err := strconv.Atoi(s); err == nil {
			b.WriteString("[" + s + "]")
			continue
		}
		b.WriteString(s)
	}
	return b.String()
}

// InputError turns a JSON decode error into an input error naming the
// field as this family spells it.
func InputError(err error) error {
	segs, what := jsonx.Path(err)
	return &translate.InputError{Field: Path(segs...), Message: what, Err: err}
}

// Metadata checks the metadata limits both dialects share: at most 16
// pairs, keys up to 64 characters, values up to 512.
func Metadata(field string, m map[string]string) error {
	if len(m) > 16 {
		return translate.Invalid(field, "holds %d pairs; at most 16 are allowed", len(m))
	}
	for k, v := range m {
		if n := len([]rune(k)); n > 64 {
			return translate.Invalid(field, "key %q is %d characters long; at most 64 are allowed", k, n)
		}
		if n := len([]rune(v)); n > 512 {
			return translate.Invalid(field+"."+k, "is %d characters long; at most 512 are allowed", n)
		}
	}
	return nil
}
