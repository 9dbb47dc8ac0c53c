package translate_test

import (
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

func TestRetry(t *testing.T) {
	wait := durationpb.New(3 * time.Second)
	for _, tc := range []struct {
		name string
		f    translate.RetryFacts
		want bool
	}{
		{"early end", translate.RetryFacts{EarlyEnd: true, Status: 400}, true},
		{"should retry overrides a 400", translate.RetryFacts{Status: 400, ShouldRetry: "true"}, true},
		{"should not retry overrides a 503", translate.RetryFacts{Status: 503, ShouldRetry: "false"}, false},
		{"429", translate.RetryFacts{Status: 429}, true},
		{"408", translate.RetryFacts{Status: 408}, true},
		{"529 overloaded", translate.RetryFacts{Status: 529}, true},
		{"500", translate.RetryFacts{Status: 500}, true},
		{"400", translate.RetryFacts{Status: 400, Code: parleyv1.Code_CODE_INTERNAL}, false},
		{"401", translate.RetryFacts{Status: 401}, false},
		{"advice to wait", translate.RetryFacts{After: wait}, true},
		{"in-stream unavailable", translate.RetryFacts{Code: parleyv1.Code_CODE_UNAVAILABLE}, true},
		{"in-stream resource exhausted", translate.RetryFacts{Code: parleyv1.Code_CODE_RESOURCE_EXHAUSTED}, true},
		{"in-stream internal", translate.RetryFacts{Code: parleyv1.Code_CODE_INTERNAL}, true},
		{"in-stream invalid", translate.RetryFacts{Code: parleyv1.Code_CODE_INVALID_ARGUMENT}, false},
		{"nothing known", translate.RetryFacts{}, false},
	} {
		if got := translate.Retry(tc.f).GetRetryable(); got != tc.want {
			t.Errorf("%s: retryable %v, want %v", tc.name, got, tc.want)
		}
		if any := translate.RetryIfAny(tc.f); (any != nil) != (tc.want || tc.f.After != nil) {
			t.Errorf("%s: RetryIfAny %v", tc.name, any)
		}
	}
}

func TestReplyRetryFacts(t *testing.T) {
	h := http.Header{"Retry-After": {"7"}, "X-Should-Retry": {"false"}}
	f := translate.ReplyRetryFacts(503, h)
	if f.Status != 503 || f.ShouldRetry != "false" || f.After.AsDuration() != 7*time.Second {
		t.Errorf("facts %+v", f)
	}
	if translate.Retry(f).GetRetryable() {
		t.Error("x-should-retry: false did not stop a retry of a 503")
	}
	date := time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)
	if got := translate.ReplyRetryFacts(429, http.Header{"Retry-After": {date}}).After.AsDuration(); got < 58*time.Second || got > time.Minute {
		t.Errorf("Retry-After as a date: %v", got)
	}
	if translate.ReplyRetryFacts(429, http.Header{"Retry-After": {"soon"}}).After != nil {
		t.Error("an unreadable Retry-After gave a wait")
	}
}
