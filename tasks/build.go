package tasks

import (
	"net/http"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/secrets"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// FromConfig builds the Service of a validated configuration over the
// dialects Parley speaks (the first task dialect's client renders
// callbacks; the music upstream speaks its configured dialect). o carries
// what the configuration does not (logger, test transports and clock);
// upstreamTransport, when not nil, carries requests to the music upstream.
func FromConfig(c *config.Config, ds translate.Dialects, st store.Tasks, d *dispatch.Dispatcher, upstreamTransport http.RoundTripper, o Options) *Service {
	sg := c.Songgen
	o.Store = st
	o.Dispatcher = d
	o.LyricsModel = sg.LyricsModel
	o.PollInterval = sg.PollInterval.D()
	o.MaxAge = sg.MaxAge.D()
	o.ModelVersions = sg.ModelVersions
	o.NotifySecret = sg.NotifySecret
	o.AllowPrivateHooks = sg.AllowPrivateHooks
	if ts := ds.Tasks(); len(ts) > 0 {
		o.Client = ts[0].TaskClient
	}
	for _, u := range c.Upstreams {
		if d := ds.Named(u.Dialect); u.Name == sg.Upstream && d != nil && d.TaskUpstream != nil {
			o.Upstream = NewMusicService(u, d.TaskUpstream, upstreamTransport)
			o.Upstream.scrub.Store(secrets.FromConfig(c))
		}
	}
	return New(o)
}
