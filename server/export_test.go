package server

// SharedHeaderValues are the header values replies share, by the value
// each must keep: a test that has served replies checks that none was
// changed in place.
func SharedHeaderValues() map[string][]string {
	return map[string][]string{"application/json": jsonType, "text/event-stream": eventStreamType, "no-cache": noCache, "no": noBuffering}
}
