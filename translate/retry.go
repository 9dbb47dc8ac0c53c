package translate

import (
	"net/http"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// RetryFacts are what a failure tells about trying again, as a dialect
// decodes them from an upstream's reply or event stream. Dialects only
// report facts; Retry alone decides (the policy is described in the
// dispatch package's doc, which acts on it).
type RetryFacts struct {
	// Status is the HTTP status of the reply, or, for an error inside a
	// stream or a 200 reply, the status the error names (by number or by
	// its type); 0 when neither is known.
	Status int
	// Code is the canonical code, which decides when no status is known.
	Code parleyv1.Code
	// ShouldRetry is the upstream's own word (its x-should-retry header:
	// "true" or "false"), which overrides every other fact; "" when unsaid.
	ShouldRetry string
	// After is the wait the upstream advised (a Retry-After header, a
	// RetryInfo detail); nil when none.
	After *durationpb.Duration
	// EarlyEnd says the stream ended before the dialect's end marker.
	EarlyEnd bool
}

// Retry decides whether a failed request may be tried again, and after
// how long, from the facts of its failure:
//
//  1. a stream that ended early may: nothing was lost but time;
//  2. the upstream's x-should-retry, when it sent one, decides;
//  3. else a known status: 408, 429 and 5xx (529, overloaded, included)
//     may, other statuses may not;
//  4. else advice to wait means it may, after that wait;
//  5. else the canonical code: internal, unavailable and resource
//     exhausted may, others may not.
func Retry(f RetryFacts) *parleyv1.RetryAdvice {
	ra := &parleyv1.RetryAdvice{RetryAfter: f.After}
	switch {
	case f.EarlyEnd:
		ra.Retryable = true
	case f.ShouldRetry != "":
		ra.Retryable = f.ShouldRetry == "true"
	case f.Status != 0:
		ra.Retryable = f.Status == http.StatusTooManyRequests || f.Status == http.StatusRequestTimeout || f.Status >= 500
	case f.After != nil:
		ra.Retryable = true
	default:
		switch f.Code {
		case parleyv1.Code_CODE_INTERNAL, parleyv1.Code_CODE_UNAVAILABLE, parleyv1.Code_CODE_RESOURCE_EXHAUSTED:
			ra.Retryable = true
		}
	}
	return ra
}

// RetryIfAny is Retry's advice when it allows a retry or advises a wait,
// else nil: errors inside a stream carry advice only when there is some.
func RetryIfAny(f RetryFacts) *parleyv1.RetryAdvice {
	if ra := Retry(f); ra.GetRetryable() || ra.GetRetryAfter() != nil {
		return ra
	}
	return nil
}

// ReplyRetryFacts are the facts of a non-2xx reply's status and headers:
// its status, x-should-retry, and a Retry-After in seconds or as an HTTP
// date.
func ReplyRetryFacts(status int, h http.Header) RetryFacts {
	f := RetryFacts{Status: status, ShouldRetry: h.Get("x-should-retry")}
	if v := h.Get("Retry-After"); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 && secs < 1e6 {
			f.After = durationpb.New(time.Duration(secs * float64(time.Second)))
		} else if t, err := http.ParseTime(v); err == nil {
			f.After = durationpb.New(max(time.Until(t), 0))
		}
	}
	return f
}

// EndedEarly is the error of an upstream stream that ended before its
// dialect's end marker (or in the middle of an event): the upstream is
// unavailable for now, and the request may be tried again.
func EndedEarly(d parleyv1.Dialect, message string, cause error) error {
	return &UpstreamError{Err: &parleyv1.Error{
		Code:    parleyv1.Code_CODE_UNAVAILABLE,
		Message: message,
		Origin:  &parleyv1.Origin{Dialect: d},
		Retry:   Retry(RetryFacts{EarlyEnd: true}),
	}, Cause: cause}
}
