package openai

import "net/http"

// RequestHeader is the header of a request to a service of this family:
// JSON in, the key as a bearer token, and an event stream asked for when
// the reply is one.
func RequestHeader(apiKey string, stream bool) http.Header {
	// Keys in their canonical form, set directly: Set would canonicalise
	// each on every request.
	h := make(http.Header, 3)
	h["Content-Type"] = []string{"application/json"}
	if apiKey != "" {
		h["Authorization"] = []string{"Bearer " + apiKey}
	}
	if stream {
		h["Accept"] = []string{"text/event-stream"}
	}
	return h
}
