package cloud

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// refreshEarly is how long before a token expires a new one is fetched,
// so that no request goes out with a token about to lapse.
const refreshEarly = 5 * time.Minute

// cachedTokens caches src's tokens and fetches a new one refreshEarly
// before the last expires. Token fetches use client.
func cachedTokens(src oauth2.TokenSource) oauth2.TokenSource {
	return oauth2.ReuseTokenSourceWithExpiry(nil, src, refreshEarly)
}

// tokenContext is the context token sources fetch with: long-lived (a
// source outlives every request) and bound to client.
func tokenContext(client *http.Client) context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, client)
}

// bearer sets a token from ts as the request's bearer token.
func bearer(req *http.Request, ts oauth2.TokenSource) error {
	tok, err := ts.Token()
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return nil
}
