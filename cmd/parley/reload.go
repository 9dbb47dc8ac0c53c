package main

import (
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/server"
	"github.com/parleyhq/parley/tasks"
	"github.com/parleyhq/parley/translate"
)

// reloader re-reads the configuration file on SIGHUP and swaps what can
// change while serving: keys, models, routes, upstreams and limits.
type reloader struct {
	file, listen string
	e            env
	log          *slog.Logger
	ds           translate.Dialects
	handler      *server.Server
	tasks        *tasks.Service
	current      *atomic.Pointer[dispatch.Dispatcher]
	cfg          *config.Config // the configuration being served
}

// reload checks the file whole and builds everything it needs before it
// swaps anything: a file that does not check, or whose upstreams cannot
// be built, changes nothing and is logged with the message `parley config
// check` prints. Requests in flight end on the configuration they started
// with. What only a restart can change (the listen address, the store,
// the music task settings) is named when it changed.
func (r *reloader) reload() {
	if r.file == "" {
		r.log.Warn("reload: serving the embedded defaults, there is no configuration file to read again")
		return
	}
	next, err := loadConfig(r.file, r.e)
	if err != nil {
		r.log.Error("reload refused: still serving the previous configuration", "error", err.Error())
		return
	}
	if r.listen != "" {
		next.Listen = r.listen
	}
	if err := config.CheckExposure(next.Listen, len(next.Keys)+len(next.Admin.Keys)); err != nil {
		r.log.Error("reload refused: still serving the previous configuration", "error", err.Error())
		return
	}
	d, err := dispatch.FromConfig(next, r.ds, dispatch.BuildOptions{})
	if err != nil {
		r.log.Error("reload refused: still serving the previous configuration", "error", err.Error())
		return
	}
	var restart []string
	for _, c := range []struct {
		key       string
		was, want any
	}{
		{"listen", r.cfg.Listen, next.Listen},
		{"data_dir", r.cfg.DataDir, next.DataDir},
		{"store", r.cfg.Store, next.Store},
		{"songgen", r.cfg.Songgen, next.Songgen},
		{"responses", r.cfg.Responses, next.Responses},
	} {
		if !reflect.DeepEqual(c.was, c.want) {
			restart = append(restart, c.key)
		}
	}
	if music := r.cfg.Songgen.Upstream; music != "" && !reflect.DeepEqual(upstreamNamed(r.cfg, music), upstreamNamed(next, music)) {
		restart = append(restart, "upstreams["+music+"] (music tasks)")
	}
	// Those settings keep their running values until a restart.
	next.Listen, next.DataDir, next.Store, next.Songgen, next.Responses = r.cfg.Listen, r.cfg.DataDir, r.cfg.Store, r.cfg.Songgen, r.cfg.Responses
	r.handler.Reload(next, d)
	r.current.Store(d)
	if r.tasks != nil {
		r.tasks.UseDispatcher(d)
		r.tasks.UseKeys(next)
	}
	r.cfg = next
	r.log.Info("configuration reloaded", "models", len(next.Models), "upstreams", len(next.Upstreams), "keys", len(next.Keys))
	if len(restart) > 0 {
		r.log.Warn("reload: these settings changed but take effect only after a restart", "settings", strings.Join(restart, ", "))
	}
}

func upstreamNamed(c *config.Config, name string) *config.Upstream {
	for i := range c.Upstreams {
		if c.Upstreams[i].Name == name {
			return &c.Upstreams[i]
		}
	}
	return nil
}
