package messages

import (
	"net/http"
	"slices"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Headers, both ways: the version and beta headers a client sends, those
// Parley sends upstream, and the client's API key.

// DefaultVersion is the version header sent when the client gave none.
const DefaultVersion = "2023-06-01"

// The headers read, in their canonical form: net/http stores a request's
// headers so, and Get would canonicalise its name (an allocation) on
// every request.
var (
	versionHeaders = []string{"Anthropic-Version", "Provider-Version"}
	betaHeaders    = []string{"Anthropic-Beta", "Provider-Beta"}
)

// headers keeps the version and beta headers, in either spelling; both may
// repeat and hold comma-separated lists.
func headers(req *parleyv1.Request, h http.Header) {
	version := firstHeader(h, versionHeaders...)
	if version != "" {
		markVersion.KeepString(&req.Extensions, version)
	}
	var betas []string
	for _, name := range betaHeaders {
		for _, v := range h[name] {
			for b := range strings.SplitSeq(v, ",") {
				if b = strings.TrimSpace(b); b != "" && !slices.Contains(betas, b) {
					betas = append(betas, b)
				}
			}
		}
	}
	if len(betas) > 0 {
		// A JSON array, as Marshal writes it.
		raw := []byte{'['}
		for i, b := range betas {
			if i > 0 {
				raw = append(raw, ',')
			}
			raw = append(raw, jsonx.Quote(b)...)
		}
		markBeta.Keep(&req.Extensions, append(raw, ']'))
	}
}

// firstHeader is the first value of the first of the headers, named in
// canonical form, that has one.
func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h[n]; len(v) > 0 {
			if s := strings.TrimSpace(v[0]); s != "" {
				return s
			}
		}
	}
	return ""
}

func (e *encoder) header() http.Header {
	// Keys in their canonical form, set directly: Set would canonicalise
	// each on every request.
	// Every value is a window of one array.
	h := make(http.Header, 5)
	vals := make([]string, 0, 5)
	put := func(name, v string) {
		vals = append(vals, v)
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	put("Content-Type", "application/json")
	put("Accept", "application/json")
	if e.t.APIKey != "" {
		put("X-Api-Key", e.t.APIKey)
	}
	version := DefaultVersion
	var betas []string
	if e.same {
		if s, ok := markVersion.String(e.req.GetExtensions()); ok && s != "" {
			version = s
		}
		if v, ok := markBeta.Value(e.req.GetExtensions()); ok {
			betas, _ = jsonx.Strings(v)
		}
	}
	for _, b := range e.needBetas {
		if !contains(betas, b) {
			betas = append(betas, b)
		}
	}
	put("Anthropic-Version", version)
	if len(betas) > 0 {
		put("Anthropic-Beta", strings.Join(betas, ","))
	}
	return h
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// APIKey implements translate.Client: x-api-key, as older SDKs and most
// tools send it, else the Authorization: Bearer token newer SDKs send.
// The beta=true query flag some clients add means nothing here.
func (Client) APIKey(in *translate.Incoming) string {
	if k := strings.TrimSpace(in.Header.Get("X-Api-Key")); k != "" {
		return k
	}
	return translate.BearerToken(in.Header)
}
