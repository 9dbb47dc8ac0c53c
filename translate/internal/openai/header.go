package openai

import "net/http"

// RequestHeader is the header of a request to a service of this family:
// JSON in, the key as a bearer token, and an event stream asked for when
// the reply is one.
func RequestHeader(apiKey string, stream bool) http.Header {
	// Keys in their canonical form, set directly: Set would canonicalise
	// each on every request. Every value is a window of one array.
	h := make(http.Header, 3)
	vals := make([]string, 0, 3)
	put := func(name, v string) {
		vals = append(vals, v)
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	put("Content-Type", "application/json")
	if apiKey != "" {
		put("Authorization", "Bearer "+apiKey)
	}
	if stream {
		put("Accept", "text/event-stream")
	}
	return h
}
