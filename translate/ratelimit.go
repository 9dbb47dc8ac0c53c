package translate

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// RateLimits is where a key stands against its per-minute limits when a
// reply leaves, for the rate-limit headers a dialect's own service sends,
// by which SDKs and agents pace themselves.
type RateLimits struct {
	Requests RateWindow
	Tokens   RateWindow
}

// RateWindow is one per-minute limit. Limit is 0 when the key has none.
type RateWindow struct {
	Limit     int64
	Remaining int64
	// Reset is how long until the window is whole again.
	Reset time.Duration
}

// LimitExceeded is the error for a request that one of its key's limits
// refused before anything was sent upstream: RESOURCE_EXHAUSTED (429),
// naming the limit, with the wait after which it may pass. quota says the
// limit is a spent budget, which no prompt retry mends: the OpenAI
// dialects call it insufficient_quota, and every client is told not to
// retry at once.
func LimitExceeded(limit, key string, retryAfter time.Duration, quota bool, detail string) *StatusError {
	msg := fmt.Sprintf("the key %q is over its %s limit", key, limit)
	if detail != "" {
		msg += ": " + detail
	}
	if retryAfter > 0 {
		msg += fmt.Sprintf("; try again in %ds", int64(math.Ceil(retryAfter.Seconds())))
	}
	return &StatusError{Err: &parleyv1.Error{
		Code:       parleyv1.Code_CODE_RESOURCE_EXHAUSTED,
		Message:    msg,
		HttpStatus: http.StatusTooManyRequests,
		Retry:      &parleyv1.RetryAdvice{Retryable: !quota, RetryAfter: durationpb.New(retryAfter.Round(time.Second))},
		Limit:      &parleyv1.LimitViolation{Limit: limit, Key: key, Quota: quota},
	}}
}
