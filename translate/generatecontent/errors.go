package generatecontent

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// statusNames is the dialect's error vocabulary: the status name of each
// canonical code, with the HTTP status the spec's table gives it.
var statusNames = map[parleyv1.Code]string{
	parleyv1.Code_CODE_INVALID_ARGUMENT:    "INVALID_ARGUMENT",
	parleyv1.Code_CODE_FAILED_PRECONDITION: "FAILED_PRECONDITION",
	parleyv1.Code_CODE_OUT_OF_RANGE:        "OUT_OF_RANGE",
	parleyv1.Code_CODE_UNAUTHENTICATED:     "UNAUTHENTICATED",
	parleyv1.Code_CODE_PERMISSION_DENIED:   "PERMISSION_DENIED",
	parleyv1.Code_CODE_NOT_FOUND:           "NOT_FOUND",
	parleyv1.Code_CODE_ALREADY_EXISTS:      "ALREADY_EXISTS",
	parleyv1.Code_CODE_ABORTED:             "ABORTED",
	parleyv1.Code_CODE_RESOURCE_EXHAUSTED:  "RESOURCE_EXHAUSTED",
	parleyv1.Code_CODE_CANCELED:            "CANCELLED",
	parleyv1.Code_CODE_INTERNAL:            "INTERNAL",
	parleyv1.Code_CODE_UNKNOWN:             "UNKNOWN",
	parleyv1.Code_CODE_DATA_LOSS:           "DATA_LOSS",
	parleyv1.Code_CODE_UNIMPLEMENTED:       "UNIMPLEMENTED",
	parleyv1.Code_CODE_UNAVAILABLE:         "UNAVAILABLE",
	parleyv1.Code_CODE_DEADLINE_EXCEEDED:   "DEADLINE_EXCEEDED",
}

// payloadTooLarge is the status name the spec gives a 413.
const payloadTooLarge = "PAYLOAD_TOO_LARGE"

const (
	badRequestType = "type.googleapis.com/google.rpc.BadRequest"
	retryInfoType  = "type.googleapis.com/google.rpc.RetryInfo"
	// quotaFailureType names the limit a refusal was for.
	quotaFailureType = "type.googleapis.com/google.rpc.QuotaFailure"
)

type quotaFailure struct {
	Type       string           `json:"@type"`
	Violations []quotaViolation `json:"violations"`
}

type quotaViolation struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
	QuotaID     string `json:"quotaId,omitempty"`
}

type badRequest struct {
	Type            string           `json:"@type"`
	FieldViolations []fieldViolation `json:"fieldViolations"`
}

type fieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

type retryInfo struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
}

// statusName returns the status name a client sees: the upstream's own when
// it spoke this dialect, PAYLOAD_TOO_LARGE for a 413, else the code's.
func statusName(e *parleyv1.Error, status int) string {
	if e.GetOrigin().GetDialect() == thisDialect && e.GetReason() != "" {
		return e.GetReason()
	}
	if status == http.StatusRequestEntityTooLarge {
		return payloadTooLarge
	}
	code := e.GetCode()
	if code == parleyv1.Code_CODE_UNSPECIFIED {
		code = translate.CodeForHTTPStatus(status)
	}
	if n, ok := statusNames[code]; ok {
		return n
	}
	return "UNKNOWN"
}

// serviceStatuses are the HTTP statuses this dialect's service answers
// with (the spec's table).
var serviceStatuses = map[int]bool{400: true, 401: true, 403: true, 404: true, 413: true, 429: true, 500: true, 503: true, 504: true}

// errorDetail renders a canonical error as this dialect's error object.
func newErrorDetail(e *parleyv1.Error) (int, errorDetail) {
	status := translate.HTTPStatusOf(e)
	if e.GetOrigin().GetDialect() != thisDialect && !serviceStatuses[status] {
		// A status this dialect's service never sends (529 from a
		// messages upstream, say) becomes the one its code has here.
		status = translate.HTTPStatus(e.GetCode())
	}
	d := errorDetail{Code: status, Message: e.GetMessage(), Status: statusName(e, status)}
	if d.Message == "" {
		d.Message = http.StatusText(status)
	}
	if v, ok := jsonx.Value(e.GetExtensions(), thisDialect, "details"); ok {
		_ = jsonx.Unmarshal(v, &d.Details)
		d.Unknown = jsonx.Take(e.GetExtensions(), thisDialect, "")
		delete(d.Unknown, "details")
		return status, d
	}
	if fv := e.GetFieldViolations(); len(fv) > 0 {
		br := badRequest{Type: badRequestType}
		for _, v := range fv {
			br.FieldViolations = append(br.FieldViolations, fieldViolation{Field: v.GetField(), Description: v.GetDescription()})
		}
		raw, _ := jsonx.Marshal(br)
		d.Details = append(d.Details, raw)
	}
	if l := e.GetLimit(); l != nil {
		raw, _ := jsonx.Marshal(quotaFailure{Type: quotaFailureType, Violations: []quotaViolation{{
			Subject: "key:" + l.GetKey(), Description: e.GetMessage(), QuotaID: l.GetLimit(),
		}}})
		d.Details = append(d.Details, raw)
	}
	if ra := e.GetRetry().GetRetryAfter(); ra != nil {
		raw, _ := jsonx.Marshal(retryInfo{Type: retryInfoType, RetryDelay: strconv.FormatFloat(ra.AsDuration().Seconds(), 'f', -1, 64) + "s"})
		d.Details = append(d.Details, raw)
	}
	return status, d
}

// EncodeError implements translate.Client.
func (Client) EncodeError(e *parleyv1.Error) (int, []byte) {
	status, d := newErrorDetail(e)
	b, err := jsonx.Marshal(errorBody{Error: d})
	if err != nil {
		return http.StatusInternalServerError, []byte(`{"error":{"code":500,"message":"internal error","status":"INTERNAL"}}`)
	}
	return status, b
}

// DecodeError implements translate.Upstream.
func (Upstream) DecodeError(status int, header http.Header, body []byte) *parleyv1.Error {
	var w errorBody
	var e *parleyv1.Error
	// Some front ends answer with an array holding the error object.
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		var list []errorBody
		if jsonx.Unmarshal([]byte(trimmed), &list) == nil && len(list) == 1 {
			w = list[0]
		}
	} else {
		_ = jsonx.Unmarshal(body, &w)
	}
	if w.Error.Message != "" || w.Error.Status != "" {
		e = errorFromDetail(&w.Error)
	} else {
		text := strings.TrimSpace(string(body))
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		e = &parleyv1.Error{Code: translate.CodeForHTTPStatus(status), Message: "upstream answered " + strconv.Itoa(status) + ": " + text, Origin: &parleyv1.Origin{Dialect: thisDialect}}
	}
	e.HttpStatus = int32(status)
	f := translate.ReplyRetryFacts(status, header)
	if f.After == nil {
		f.After = e.GetRetry().GetRetryAfter()
	}
	e.Retry = translate.Retry(f)
	// "Corrupted thought signature.", "Thought signature is not valid.":
	// the service refuses a thought signature another key or project made.
	e.RefusedReasoning = status == http.StatusBadRequest && strings.Contains(strings.ToLower(e.GetMessage()), "thought signature")
	return e
}

// errorFromDetail converts an error object, from a body or a stream chunk.
func errorFromDetail(d *errorDetail) *parleyv1.Error {
	e := &parleyv1.Error{Message: d.Message, Reason: d.Status, Origin: &parleyv1.Origin{Dialect: thisDialect}, HttpStatus: int32(d.Code)}
	e.Code = parleyv1.Code_CODE_UNKNOWN
	for code, name := range statusNames {
		if name == d.Status {
			e.Code = code
		}
	}
	if d.Status == payloadTooLarge {
		e.Code = parleyv1.Code_CODE_INVALID_ARGUMENT
	}
	if e.Code == parleyv1.Code_CODE_UNKNOWN && d.Code != 0 {
		e.Code = translate.CodeForHTTPStatus(d.Code)
	}
	var after *durationpb.Duration
	for _, raw := range d.Details {
		var probe struct {
			Type            string           `json:"@type"`
			FieldViolations []fieldViolation `json:"fieldViolations"`
			RetryDelay      string           `json:"retryDelay"`
		}
		if jsonx.Unmarshal(raw, &probe) != nil {
			continue
		}
		switch probe.Type {
		case badRequestType:
			for _, v := range probe.FieldViolations {
				e.FieldViolations = append(e.FieldViolations, &parleyv1.FieldViolation{Field: v.Field, Description: v.Description})
			}
		case retryInfoType:
			if dur, err := time.ParseDuration(probe.RetryDelay); err == nil {
				after = durationpb.New(dur)
			}
		}
	}
	// An error inside a 200 reply or a stream says by its code whether
	// trying again may help.
	e.Retry = translate.RetryIfAny(translate.RetryFacts{Status: d.Code, Code: e.Code, After: after})
	if len(d.Details) > 0 {
		raw, _ := jsonx.Marshal(d.Details)
		jsonx.KeepValue(&e.Extensions, thisDialect, "details", raw)
	}
	jsonx.Keep(&e.Extensions, thisDialect, "", d.Unknown)
	return e
}
