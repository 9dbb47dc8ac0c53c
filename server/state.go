package server

import (
	"crypto/sha256"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/govern"
)

// state is what a configuration decides for a request: the keys, the
// models and their routes (the dispatcher), and the limits. A request
// reads it once, when it starts.
type state struct {
	cfg     *config.Config
	d       *dispatch.Dispatcher
	keys    *keyring
	maxBody int64
	// prices are the models' pricing, for budgets and the ledger.
	prices *govern.Prices
	// admins are the digests of the admin keys.
	admins [][sha256.Size]byte
}

// Reload makes a new configuration, with the dispatcher built from it,
// the one every request from now on starts on; requests in flight end on
// the one they started with. The caller has checked the configuration
// whole (config.Parse) and built the dispatcher without error: a reload
// never leaves the server half-configured.
func (s *Server) Reload(cfg *config.Config, d *dispatch.Dispatcher) {
	s.bodies.setLimit(cfg.Limits.MaxInflightBodyBytes)
	st := &state{cfg: cfg, d: d, keys: newKeyring(cfg, s.managed), maxBody: cfg.Limits.MaxBodyBytes, prices: govern.NewPrices(cfg.Models)}
	for _, k := range cfg.Admin.Keys {
		st.admins = append(st.admins, sha256.Sum256([]byte(k)))
	}
	if old := s.cur.Swap(st); old != nil && old.d != nil && old.d != d {
		old.d.CloseIdleConnections()
	}
	for _, k := range cfg.Keys {
		if s.managed.Taken(k.Name) {
			s.log.Warn("a key of the configuration has the name of a managed key: they share limits, budgets, ledger lines and what they own; rename one", "key", k.Name)
		}
	}
}

// state is the configuration a request starting now runs on.
func (s *Server) state() *state { return s.cur.Load() }
