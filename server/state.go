package server

import (
	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dispatch"
)

// state is what a configuration decides for a request: the keys, the
// models and their routes (the dispatcher), and the limits. A request
// reads it once, when it starts.
type state struct {
	cfg     *config.Config
	d       *dispatch.Dispatcher
	keys    *keyring
	maxBody int64
}

// Reload makes a new configuration, with the dispatcher built from it,
// the one every request from now on starts on; requests in flight end on
// the one they started with. The caller has checked the configuration
// whole (config.Parse) and built the dispatcher without error: a reload
// never leaves the server half-configured.
func (s *Server) Reload(cfg *config.Config, d *dispatch.Dispatcher) {
	s.bodies.setLimit(cfg.Limits.MaxInflightBodyBytes)
	s.cur.Store(&state{cfg: cfg, d: d, keys: newKeyring(cfg.Keys), maxBody: cfg.Limits.MaxBodyBytes})
}

// state is the configuration a request starting now runs on.
func (s *Server) state() *state { return s.cur.Load() }
