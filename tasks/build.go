package tasks

import (
	"net/http"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/store"
)

// FromConfig builds the Service of a validated configuration. o carries
// what the configuration does not (logger, test transports and clock);
// upstreamTransport, when not nil, carries requests to the music upstream.
func FromConfig(c *config.Config, st store.Tasks, d *dispatch.Dispatcher, upstreamTransport http.RoundTripper, o Options) *Service {
	sg := c.Songgen
	o.Store = st
	o.Dispatcher = d
	o.LyricsModel = sg.LyricsModel
	o.PollInterval = sg.PollInterval.D()
	o.MaxAge = sg.MaxAge.D()
	o.ModelVersions = sg.ModelVersions
	o.NotifySecret = sg.NotifySecret
	o.AllowPrivateHooks = sg.AllowPrivateHooks
	for _, u := range c.Upstreams {
		if u.Name == sg.Upstream && u.Dialect == config.DialectSonggen {
			o.Upstream = NewUpstream(u, upstreamTransport)
		}
	}
	return New(o)
}
