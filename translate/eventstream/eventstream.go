// Package eventstream reads replies framed as AWS event-stream messages
// (application/vnd.amazon.eventstream), the binary framing of Amazon
// Bedrock's streams, and reads the errors of AWS services.
//
// Each message is a length-prefixed frame with typed headers, a payload and
// two CRC32 checksums; the framing is decoded by the AWS SDK's own decoder,
// which checks both checksums and bounds headers (128 KiB) and payloads
// (16 MiB). A Reader turns each event message into the same event a
// server-sent-event stream yields (translate.Frames), so a dialect's stream
// decoder is the same whichever framing carried its events:
//
//   - Type is the :event-type header ("messageStart", "contentBlockDelta",
//     ... for the Converse API) and Data the payload, a JSON object;
//   - a "chunk" event whose payload is {"bytes": base64} (the reply of
//     InvokeModelWithResponseStream, which wraps the model's own stream
//     events) yields the wrapped event: Data is the decoded bytes and Type
//     the "type" member of that JSON, so that a messages-dialect stream
//     decoder reads Anthropic models on Bedrock as it reads the service;
//   - an exception message (:message-type "exception", the service's error
//     in the middle of a stream) or an error message (:message-type
//     "error") ends the stream with the canonical error DecodeError gives
//     the same exception as an HTTP reply.
package eventstream

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/go-json-experiment/json"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// ContentType is the media type of an event-stream reply.
const ContentType = "application/vnd.amazon.eventstream"

// Reader reads events from an event-stream body.
type Reader struct {
	d       parleyv1.Dialect
	br      *bufio.Reader
	dec     *eventstream.Decoder
	payload []byte
	max     int
}

var _ translate.Frames = (*Reader)(nil)

// NewReader reads the event-stream body r of a reply from a service of
// dialect d (named in the errors of its exceptions). A message longer than
// maxFrame bytes is refused; 0 takes the framing's own bound (16 MiB).
func NewReader(d parleyv1.Dialect, r io.Reader, maxFrame int) *Reader {
	if maxFrame <= 0 {
		maxFrame = 16 << 20
	}
	return &Reader{d: d, br: bufio.NewReaderSize(r, 16<<10), dec: eventstream.NewDecoder(), max: maxFrame}
}

// ErrFrameTooLarge is returned for a message longer than the reader's bound.
var ErrFrameTooLarge = sse.ErrFrameTooLarge

// Next returns the next event. It returns io.EOF at a clean end (between
// two messages), io.ErrUnexpectedEOF in the middle of one, and the
// canonical error of an exception message as a *translate.UpstreamError.
func (r *Reader) Next() (sse.Event, error) {
	for {
		head, err := r.br.Peek(4)
		switch {
		case err == nil:
			if n := binary.BigEndian.Uint32(head); int(n) > r.max {
				return sse.Event{}, ErrFrameTooLarge
			}
		case len(head) == 0 && errors.Is(err, io.EOF):
			return sse.Event{}, io.EOF
		case errors.Is(err, io.EOF):
			return sse.Event{}, io.ErrUnexpectedEOF
		default:
			return sse.Event{}, err
		}
		m, err := r.dec.Decode(r.br, r.payload[:0])
		if err != nil {
			// A message had begun: any end now is in its middle.
			if errors.Is(err, io.EOF) {
				return sse.Event{}, io.ErrUnexpectedEOF
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return sse.Event{}, err
			}
			return sse.Event{}, translate.UpstreamProtocol(r.d, fmt.Errorf("event-stream framing: %w", err))
		}
		if cap(m.Payload) <= 64<<10 {
			r.payload = m.Payload
		}
		switch header(&m, ":message-type") {
		case "exception":
			var body struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(m.Payload, &body, json.RejectUnknownMembers(false))
			if body.Message == "" {
				body.Message = strings.TrimSpace(string(m.Payload))
			}
			return sse.Event{}, translate.UpstreamFailed(Error(r.d, 0, header(&m, ":exception-type"), body.Message, nil))
		case "error":
			return sse.Event{}, translate.UpstreamFailed(Error(r.d, 0, header(&m, ":error-code"), header(&m, ":error-message"), nil))
		case "event", "":
		default:
			continue
		}
		typ := header(&m, ":event-type")
		if typ == "chunk" {
			return r.chunk(m.Payload)
		}
		return sse.Event{Type: typ, Data: m.Payload}, nil
	}
}

// chunk unwraps an InvokeModelWithResponseStream chunk.
func (r *Reader) chunk(payload []byte) (sse.Event, error) {
	var c struct {
		Bytes []byte `json:"bytes"`
	}
	if err := json.Unmarshal(payload, &c, json.RejectUnknownMembers(false)); err != nil {
		return sse.Event{}, translate.UpstreamProtocol(r.d, fmt.Errorf("event-stream chunk: %w", err))
	}
	var inner struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(c.Bytes, &inner, json.RejectUnknownMembers(false)); err != nil {
		return sse.Event{}, translate.UpstreamProtocol(r.d, fmt.Errorf("event-stream chunk payload: %w", err))
	}
	return sse.Event{Type: inner.Type, Data: c.Bytes}, nil
}

// Ready reports whether a whole message is already buffered, so that Next
// would not wait on the upstream.
func (r *Reader) Ready() bool {
	n := r.br.Buffered()
	if n < 4 {
		return false
	}
	head, err := r.br.Peek(4)
	if err != nil {
		return false
	}
	return int(binary.BigEndian.Uint32(head)) <= n
}

func header(m *eventstream.Message, name string) string {
	v := m.Headers.Get(name)
	if v == nil {
		return ""
	}
	if s, ok := v.Get().(string); ok {
		return s
	}
	return v.String()
}

// Encode frames one event message, as a service sends it: the
// :event-type, :content-type and :message-type headers and the payload.
// Tests and fakes of the services use it.
func Encode(w io.Writer, eventType string, payload []byte) error {
	m := eventstream.Message{Payload: payload}
	m.Headers.Set(":event-type", eventstream.StringValue(eventType))
	m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	m.Headers.Set(":message-type", eventstream.StringValue("event"))
	return eventstream.NewEncoder().Encode(w, m)
}

// EncodeChunk frames one model event as InvokeModelWithResponseStream
// sends it: a "chunk" event whose payload holds the event base64-encoded.
func EncodeChunk(w io.Writer, event []byte) error {
	payload := fmt.Appendf(nil, `{"bytes":%q}`, base64.StdEncoding.EncodeToString(event))
	return Encode(w, "chunk", payload)
}

// EncodeException frames an exception message, as a service sends an
// error in the middle of a stream.
func EncodeException(w io.Writer, exceptionType, message string) error {
	body, err := json.Marshal(struct {
		Message string `json:"message"`
	}{message})
	if err != nil {
		return err
	}
	m := eventstream.Message{Payload: body}
	m.Headers.Set(":exception-type", eventstream.StringValue(exceptionType))
	m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	m.Headers.Set(":message-type", eventstream.StringValue("exception"))
	return eventstream.NewEncoder().Encode(w, m)
}

// DecodeError turns an AWS service's error reply into a canonical error
// of dialect d: the exception's name from the X-Amzn-ErrorType header (or
// the body's __type or code), its text from the body's message (or
// Message).
func DecodeError(d parleyv1.Dialect, status int, h http.Header, body []byte) *parleyv1.Error {
	var b struct {
		Message  string `json:"message"`
		Message2 string `json:"Message"`
		Type     string `json:"__type"`
		Code     string `json:"code"`
	}
	_ = json.Unmarshal(body, &b, json.RejectUnknownMembers(false), json.MatchCaseInsensitiveNames(false))
	typ := h.Get("X-Amzn-ErrorType")
	if typ == "" {
		typ = b.Type
	}
	if typ == "" {
		typ = b.Code
	}
	msg := b.Message
	if msg == "" {
		msg = b.Message2
	}
	if msg == "" && len(body) > 0 && len(body) < 512 && !strings.HasPrefix(strings.TrimSpace(string(body)), "{") {
		msg = strings.TrimSpace(string(body))
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := Error(d, status, typ, msg, h)
	if id := h.Get("X-Amzn-RequestId"); id != "" {
		e.RequestId = id
	}
	// Bedrock relays Anthropic models' refusal of a thinking block another
	// account signed ("Invalid `signature` in `thinking` block").
	e.RefusedReasoning = status == http.StatusBadRequest && strings.Contains(msg, "Invalid `signature`")
	return e
}

// Error is the canonical error of an AWS exception. typ may carry the
// namespace forms AWS adds ("ThrottlingException:http://...",
// "aws.protocols#ThrottlingException") and any letter case (streams name
// exceptions in lower camel case). status is the reply's HTTP status, 0
// for an exception inside a stream; h, when not nil, gives Retry-After.
//
// Throttling and quota exceptions (ThrottlingException,
// ServiceQuotaExceededException, ModelNotReadyException,
// TooManyRequestsException) are 429 and retryable; a model that timed out
// or a stream the model broke is retryable; the service unavailable or
// failing is retryable; validation, missing models and every
// authentication or permission exception are not.
func Error(d parleyv1.Dialect, status int, typ, msg string, h http.Header) *parleyv1.Error {
	name := typ
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, '#'); i >= 0 {
		name = name[i+1:]
	}
	code, st := classify(strings.ToLower(name), status)
	facts := translate.RetryFacts{Status: st, Code: code}
	if h != nil {
		facts.After = translate.ReplyRetryFacts(st, h).After
	}
	if code == parleyv1.Code_CODE_UNAVAILABLE && st < 500 {
		// A broken model stream or an unready model: try again.
		facts.Status = http.StatusServiceUnavailable
	}
	return &parleyv1.Error{
		Code:       code,
		Message:    msg,
		HttpStatus: int32(st),
		Reason:     name,
		Origin:     &parleyv1.Origin{Dialect: d},
		Retry:      translate.Retry(facts),
	}
}

// classify maps an exception name (lower case, no namespace) and the
// reply's status to a canonical code and the status the client sees.
func classify(name string, status int) (parleyv1.Code, int) {
	switch name {
	case "throttlingexception", "servicequotaexceededexception", "toomanyrequestsexception", "limitexceededexception":
		return parleyv1.Code_CODE_RESOURCE_EXHAUSTED, http.StatusTooManyRequests
	case "modelnotreadyexception":
		return parleyv1.Code_CODE_UNAVAILABLE, http.StatusTooManyRequests
	case "modeltimeoutexception":
		return parleyv1.Code_CODE_DEADLINE_EXCEEDED, http.StatusRequestTimeout
	case "modelstreamerrorexception", "internalstreamfailure":
		return parleyv1.Code_CODE_UNAVAILABLE, orStatus(status, http.StatusBadGateway)
	case "serviceunavailableexception", "serviceunavailable":
		return parleyv1.Code_CODE_UNAVAILABLE, http.StatusServiceUnavailable
	case "internalserverexception", "internalfailure":
		return parleyv1.Code_CODE_INTERNAL, orStatus(status, http.StatusInternalServerError)
	case "validationexception", "serializationexception", "invalidparameterexception":
		return parleyv1.Code_CODE_INVALID_ARGUMENT, http.StatusBadRequest
	case "resourcenotfoundexception":
		return parleyv1.Code_CODE_NOT_FOUND, http.StatusNotFound
	case "accessdeniedexception":
		return parleyv1.Code_CODE_PERMISSION_DENIED, http.StatusForbidden
	case "unrecognizedclientexception", "invalidsignatureexception", "incompletesignature",
		"missingauthenticationtokenexception", "missingauthenticationtoken", "expiredtokenexception", "signaturedoesnotmatch":
		return parleyv1.Code_CODE_UNAUTHENTICATED, orStatus(status, http.StatusForbidden)
	case "modelerrorexception":
		return parleyv1.Code_CODE_FAILED_PRECONDITION, orStatus(status, http.StatusFailedDependency)
	}
	if status == 0 {
		return parleyv1.Code_CODE_INTERNAL, http.StatusInternalServerError
	}
	return translate.CodeForHTTPStatus(status), status
}

func orStatus(status, fallback int) int {
	if status != 0 {
		return status
	}
	return fallback
}
