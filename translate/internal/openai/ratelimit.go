package openai

import (
	"net/http"
	"strconv"
	"time"

	"github.com/parleyhq/parley/translate"
)

// The rate-limit headers, in canonical form: limit, remaining, reset.
var (
	requestLimitHeaders = [3]string{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"}
	tokenLimitHeaders   = [3]string{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"}
)

// RateLimitHeaders sets the service's x-ratelimit-* headers: limit,
// remaining and the time until the window is whole again ("1s", "6m0s"),
// for requests and for tokens.
func RateLimitHeaders(h http.Header, rl *translate.RateLimits, _ time.Time) {
	// One backing array for every value: a header's []string is a window
	// of it.
	vals := make([]string, 0, 6)
	put := func(name, v string) {
		vals = append(vals, v)
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	set := func(names *[3]string, w translate.RateWindow) {
		if w.Limit <= 0 {
			return
		}
		put(names[0], strconv.FormatInt(w.Limit, 10))
		put(names[1], strconv.FormatInt(max(w.Remaining, 0), 10))
		put(names[2], resetText(w.Reset))
	}
	set(&requestLimitHeaders, rl.Requests)
	set(&tokenLimitHeaders, rl.Tokens)
}

// resetText writes a wait as the service does: "20ms", "1s", "6m0s".
func resetText(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
