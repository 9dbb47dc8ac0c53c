package translate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// InputError reports a client request that is malformed or invalid. Field
// is the path of the offending field in the client's own spelling, such as
// "messages[2].content[0].source.media_type"; empty when the whole body is
// at fault (unparseable JSON).
type InputError struct {
	Field   string
	Message string
	// Code is CODE_INVALID_ARGUMENT unless set.
	Code parleyv1.Code
	// Err is the underlying cause, such as a JSON syntax error.
	Err error
}

// Index is the field path of element i of the list at path, "path[i]".
// Decoders and encoders name every element they visit so that an error can
// say where it is; this is cheaper than fmt.Sprintf on requests of
// thousands of parts.
func Index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// PartPath is where a part of a turn stands, for an encoder to name it in
// an error or X-Parley-Dropped: "messages[Turn].parts[Index]". It is
// named only when used, as most parts (text, tool calls) never are.
type PartPath struct{ Turn, Index int }

// String is the part's field path.
func (p PartPath) String() string { return Index(Index("messages", p.Turn)+".parts", p.Index) }

// Invalid returns an *InputError for field with a formatted message.
func Invalid(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Message: fmt.Sprintf(format, args...)}
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func (e *InputError) Unwrap() error { return e.Err }

// Proto returns the canonical form of the error.
func (e *InputError) Proto() *parleyv1.Error {
	code := e.Code
	if code == parleyv1.Code_CODE_UNSPECIFIED {
		code = parleyv1.Code_CODE_INVALID_ARGUMENT
	}
	pe := &parleyv1.Error{Code: code, Message: e.Error()}
	if e.Field != "" {
		pe.FieldViolations = []*parleyv1.FieldViolation{{Field: e.Field, Description: e.Message}}
	}
	return pe
}

// UnsupportedError reports a valid request that the target dialect cannot
// express (several candidates for a service that returns one, a built-in
// tool it lacks). Field is the canonical field at fault.
type UnsupportedError struct {
	Dialect parleyv1.Dialect
	Field   string
	Message string
}

// Unsupported returns an *UnsupportedError with a formatted message.
func Unsupported(d parleyv1.Dialect, field, format string, args ...any) *UnsupportedError {
	return &UnsupportedError{Dialect: d, Field: field, Message: fmt.Sprintf(format, args...)}
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: %s (not supported by the %s upstream)", e.Field, e.Message, DialectName(e.Dialect))
}

// Proto returns the canonical form of the error.
func (e *UnsupportedError) Proto() *parleyv1.Error {
	return &parleyv1.Error{
		Code:            parleyv1.Code_CODE_INVALID_ARGUMENT,
		Message:         e.Error(),
		FieldViolations: []*parleyv1.FieldViolation{{Field: e.Field, Description: e.Message}},
	}
}

// UpstreamError reports an upstream that answered with an error, or broke
// its dialect's protocol. Err is the canonical error, upstream status kept.
type UpstreamError struct {
	Err   *parleyv1.Error
	Cause error
}

// UpstreamFailed wraps a canonical error decoded from an upstream reply.
func UpstreamFailed(e *parleyv1.Error) *UpstreamError { return &UpstreamError{Err: e} }

// UpstreamProtocol reports an upstream reply that does not follow its
// dialect: it becomes a 502 for the client.
func UpstreamProtocol(d parleyv1.Dialect, cause error) *UpstreamError {
	return &UpstreamError{
		Err: &parleyv1.Error{
			Code:       parleyv1.Code_CODE_UNKNOWN,
			Message:    fmt.Sprintf("the %s upstream sent a malformed reply: %v", DialectName(d), cause),
			HttpStatus: http.StatusBadGateway,
			Origin:     &parleyv1.Origin{Dialect: d},
		},
		Cause: cause,
	}
}

func (e *UpstreamError) Error() string {
	return "upstream: " + e.Err.GetMessage()
}

func (e *UpstreamError) Unwrap() error { return e.Cause }

// Proto returns the canonical form of the error.
func (e *UpstreamError) Proto() *parleyv1.Error { return e.Err }

// StatusError is an error Parley raises itself (authentication, routing,
// limits), already in canonical form.
type StatusError struct {
	Err *parleyv1.Error
}

// Status returns a *StatusError with a formatted message.
func Status(code parleyv1.Code, format string, args ...any) *StatusError {
	return &StatusError{Err: &parleyv1.Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func (e *StatusError) Error() string { return e.Err.GetMessage() }

// Proto returns the canonical form of the error.
func (e *StatusError) Proto() *parleyv1.Error { return e.Err }

// ErrShuttingDown is the cause with which a gateway that is shutting down
// ends the requests its grace period did not let finish. Clients see it as
// UNAVAILABLE and retryable (each dialect's overloaded or unavailable
// kind, which SDKs retry), never as a fault of theirs.
var ErrShuttingDown = errors.New("the gateway is shutting down; retry the request")

// ToProto returns the canonical form of any error. Errors of this package
// keep their details; context errors become CANCELED or DEADLINE_EXCEEDED;
// any other error becomes INTERNAL with a generic message, so that no
// internal detail reaches a client.
func ToProto(err error) *parleyv1.Error {
	var (
		in  *InputError
		uns *UnsupportedError
		up  *UpstreamError
		st  *StatusError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &in):
		return in.Proto()
	case errors.As(err, &uns):
		return uns.Proto()
	case errors.As(err, &up):
		return up.Proto()
	case errors.As(err, &st):
		return st.Proto()
	case errors.Is(err, ErrShuttingDown):
		return &parleyv1.Error{Code: parleyv1.Code_CODE_UNAVAILABLE, Message: ErrShuttingDown.Error(), Reason: ReasonShuttingDown,
			Retry: &parleyv1.RetryAdvice{Retryable: true}}
	case errors.Is(err, context.Canceled):
		return &parleyv1.Error{Code: parleyv1.Code_CODE_CANCELED, Message: "the request was cancelled"}
	case errors.Is(err, context.DeadlineExceeded):
		return &parleyv1.Error{Code: parleyv1.Code_CODE_DEADLINE_EXCEEDED, Message: "the request timed out"}
	default:
		return &parleyv1.Error{Code: parleyv1.Code_CODE_INTERNAL, Message: "internal error"}
	}
}

// HTTPStatusOf returns the status a client should see for e: the upstream's
// own status when it had one, else the status of e's code.
func HTTPStatusOf(e *parleyv1.Error) int {
	if s := e.GetHttpStatus(); s >= 400 && s <= 599 {
		return int(s)
	}
	return HTTPStatus(e.GetCode())
}

// HTTPStatus maps a canonical code to its HTTP status.
func HTTPStatus(c parleyv1.Code) int {
	switch c {
	case parleyv1.Code_CODE_CANCELED:
		return 499
	case parleyv1.Code_CODE_INVALID_ARGUMENT, parleyv1.Code_CODE_FAILED_PRECONDITION, parleyv1.Code_CODE_OUT_OF_RANGE:
		return http.StatusBadRequest
	case parleyv1.Code_CODE_DEADLINE_EXCEEDED:
		return http.StatusGatewayTimeout
	case parleyv1.Code_CODE_NOT_FOUND:
		return http.StatusNotFound
	case parleyv1.Code_CODE_ALREADY_EXISTS, parleyv1.Code_CODE_ABORTED:
		return http.StatusConflict
	case parleyv1.Code_CODE_PERMISSION_DENIED:
		return http.StatusForbidden
	case parleyv1.Code_CODE_UNAUTHENTICATED:
		return http.StatusUnauthorized
	case parleyv1.Code_CODE_RESOURCE_EXHAUSTED:
		return http.StatusTooManyRequests
	case parleyv1.Code_CODE_UNIMPLEMENTED:
		return http.StatusNotImplemented
	case parleyv1.Code_CODE_UNAVAILABLE:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// CodeForHTTPStatus maps an upstream's HTTP status to a canonical code.
func CodeForHTTPStatus(status int) parleyv1.Code {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity,
		http.StatusRequestURITooLong, http.StatusUnsupportedMediaType:
		return parleyv1.Code_CODE_INVALID_ARGUMENT
	case http.StatusUnauthorized:
		return parleyv1.Code_CODE_UNAUTHENTICATED
	case http.StatusForbidden:
		return parleyv1.Code_CODE_PERMISSION_DENIED
	case http.StatusNotFound:
		return parleyv1.Code_CODE_NOT_FOUND
	case http.StatusConflict:
		return parleyv1.Code_CODE_ABORTED
	case http.StatusTooManyRequests:
		return parleyv1.Code_CODE_RESOURCE_EXHAUSTED
	case 499:
		return parleyv1.Code_CODE_CANCELED
	case http.StatusNotImplemented:
		return parleyv1.Code_CODE_UNIMPLEMENTED
	case http.StatusBadGateway, http.StatusServiceUnavailable, 529:
		return parleyv1.Code_CODE_UNAVAILABLE
	case http.StatusGatewayTimeout, http.StatusRequestTimeout:
		return parleyv1.Code_CODE_DEADLINE_EXCEEDED
	}
	switch {
	case status >= 500:
		return parleyv1.Code_CODE_INTERNAL
	case status >= 400:
		return parleyv1.Code_CODE_FAILED_PRECONDITION
	}
	return parleyv1.Code_CODE_UNKNOWN
}

// DialectName is a dialect's name as configuration spells it: its
// canonical enum name in lower case, so that no list of names is kept
// beside the proto's.
func DialectName(d parleyv1.Dialect) string {
	if d == parleyv1.Dialect_DIALECT_UNSPECIFIED {
		return "unknown"
	}
	name, ok := parleyv1.Dialect_name[int32(d)]
	if !ok {
		return "unknown"
	}
	return strings.ToLower(strings.TrimPrefix(name, "DIALECT_"))
}
