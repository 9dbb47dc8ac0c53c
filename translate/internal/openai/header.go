package openai

import "net/http"

// RequestHeader is the header of a request to a service of this family:
// JSON in, the key as a bearer token, and an event stream asked for when
// the reply is one.
func RequestHeader(apiKey string, stream bool) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	return h
}
