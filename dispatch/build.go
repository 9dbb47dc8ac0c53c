package dispatch

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/parleyhq/parley/cloud"
	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/secrets"
	"github.com/parleyhq/parley/translate"
)

// BuildOptions adjust FromConfig.
type BuildOptions struct {
	// Transport, when set, carries every upstream request (tests).
	Transport http.RoundTripper
	// Echo configures the built-in echo model.
	Echo Echo
}

// FromConfig builds the dispatcher for a validated configuration over the
// dialects Parley speaks (dialects.All, wired in by the command, so that
// this package names none). An upstream whose dialect has no chat codec
// (the music service) is not a chat backend and is skipped.
func FromConfig(c *config.Config, ds translate.Dialects, o BuildOptions) (*Dispatcher, error) {
	ups := map[string]UpstreamSpec{}
	scrub := secrets.FromConfig(c)
	for _, u := range c.Upstreams {
		var be Backend
		dialect, provider := parleyv1.Dialect_DIALECT_CANONICAL, "parley"
		if u.Dialect == config.DialectEcho {
			be = o.Echo
		} else {
			d := ds.Named(u.Dialect)
			if d == nil {
				return nil, fmt.Errorf("upstream %s: unknown dialect %q", u.Name, u.Dialect)
			}
			if d.Upstream == nil {
				continue
			}
			dialect, provider = d.Enum, d.Provider
			base := u.BaseURL
			var adapter cloud.Adapter
			if u.Provider != nil {
				co := cloud.Options{}
				if o.Transport != nil {
					co.HTTPClient = &http.Client{Transport: o.Transport, Timeout: 30 * time.Second}
				}
				a, cloudBase, err := cloud.New(context.Background(), &u, d.Enum, co)
				if err != nil {
					return nil, err
				}
				adapter, provider = a, a.Provider()
				if base == "" {
					base = cloudBase
				}
			}
			hb, err := NewHTTPBackend(u.Name, d.Upstream, base, HTTPOptions{
				ConnectTimeout: u.ConnectTimeout.D(),
				HeaderTimeout:  u.HeaderTimeout.D(),
				IdleTimeout:    u.IdleTimeout.D(),
				Transport:      o.Transport,
				Scrub:          scrub,
				Cloud:          adapter,
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
		ups[u.Name] = UpstreamSpec{Name: u.Name, Dialect: dialect, Kind: u.Dialect, Provider: provider, Backend: be, APIKey: u.APIKey, MaxRetries: retries}
	}
	r, err := NewRouter(c.Models, ups)
	if err != nil {
		return nil, err
	}
	return New(r), nil
}
