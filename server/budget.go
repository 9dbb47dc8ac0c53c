package server

import (
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// bodyBudget bounds the bytes of the request bodies the gateway holds at
// once (limits.max_inflight_body_bytes). A request holds its body's share
// from before its body is read until it ends, since the body's decoded
// form lives as long as the request (retries and fallbacks resend it);
// a request that would take the total past the limit is refused at once,
// as overloaded, rather than letting a burst of large bodies end the
// process. Memory then stays within a multiple of the limit: one request
// peaks at about 4 times its body for media and at most 12 times for the
// worst shape, very many one-word messages, whose canonical form alone is
// 8 times the body (TestPeakHeapPerRequest, BenchmarkPeakHeap).
type bodyBudget struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

// overloadedRetry is the wait a refused client is advised.
const overloadedRetry = time.Second

// take reserves n bytes, or returns the overloaded error.
func (b *bodyBudget) take(n int64) error {
	if n <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && b.used+n > b.limit {
		return &translate.StatusError{Err: &parleyv1.Error{
			Code:    parleyv1.Code_CODE_UNAVAILABLE,
			Reason:  translate.ReasonOverloaded,
			Message: fmt.Sprintf("the gateway is holding as many request bodies as it may (limits.max_inflight_body_bytes); retry in %s", overloadedRetry),
			Retry:   &parleyv1.RetryAdvice{Retryable: true, RetryAfter: durationpb.New(overloadedRetry)},
		}}
	}
	b.used += n
	return nil
}

// give returns n bytes reserved by take.
func (b *bodyBudget) give(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// setLimit applies a (reloaded) limit; what is held stays held.
func (b *bodyBudget) setLimit(n int64) {
	b.mu.Lock()
	b.limit = n
	b.mu.Unlock()
}
