package dispatch

import (
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/chatcompletions"
	"github.com/parleyhq/parley/translate/generatecontent"
	"github.com/parleyhq/parley/translate/messages"
	"github.com/parleyhq/parley/translate/responses"
)

// UpstreamDialects are the chat dialects an HTTP upstream may speak.
var UpstreamDialects = map[string]translate.Upstream{
	config.DialectMessages:        messages.Upstream{},
	config.DialectGenerateContent: generatecontent.Upstream{},
	config.DialectResponses:       responses.Upstream{},
	config.DialectChatCompletions: chatcompletions.Upstream{},
}

// BuildOptions adjust FromConfig.
type BuildOptions struct {
	// Transport, when set, carries every upstream request (tests).
	Transport http.RoundTripper
	// Echo configures the built-in echo model.
	Echo Echo
}

// FromConfig builds the dispatcher for a validated configuration.
// Upstreams of the songgen dialect are not chat backends and are skipped.
func FromConfig(c *config.Config, o BuildOptions) (*Dispatcher, error) {
	ups := map[string]Upstream{}
	for _, u := range c.Upstreams {
		var be Backend
		switch u.Dialect {
		case config.DialectEcho:
			be = o.Echo
		case config.DialectSonggen:
			continue
		default:
			d, ok := UpstreamDialects[u.Dialect]
			if !ok {
				return nil, fmt.Errorf("upstream %s: unknown dialect %q", u.Name, u.Dialect)
			}
			hb, err := NewHTTPBackend(u.Name, d, u.BaseURL, HTTPOptions{
				ConnectTimeout: u.ConnectTimeout.D(),
				HeaderTimeout:  u.HeaderTimeout.D(),
				IdleTimeout:    u.IdleTimeout.D(),
				Transport:      o.Transport,
			})
			if err != nil {
				return nil, err
			}
			be = hb
		}
		retries := config.DefaultMaxRetries
		if u.MaxRetries != nil {
			retries = *u.MaxRetries
		}
		ups[u.Name] = Upstream{Name: u.Name, Dialect: DialectOf(u.Dialect), Backend: be, APIKey: u.APIKey, MaxRetries: retries}
	}
	r, err := NewRouter(c.Models, ups)
	if err != nil {
		return nil, err
	}
	return New(r), nil
}
