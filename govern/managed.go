package govern

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync/atomic"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
)

// DefaultRefresh is how often a replica reads the managed keys again: a
// key created, changed or revoked through any replica holds on all of them
// within it (and the time a read takes).
const DefaultRefresh = 2 * time.Second

// Key is a client key as a request meets it: its name, the models it may
// use, and its limits.
type Key struct {
	Name   string
	Models []string
	// Limits are nil when the key is not bounded.
	Limits *quota.Limits
	// Expires is when the key stops working; zero never.
	Expires time.Time
}

// Managed is the set of managed keys, as last read from the store. Every
// replica reads the whole set every Refresh: keys number in the hundreds
// or thousands, and one read of them is cheaper than a cache to keep
// coherent across a fleet.
type Managed struct {
	st  store.Keys
	log *slog.Logger
	cur atomic.Pointer[map[[sha256.Size]byte]*Key]
	// names are the names of every managed key, revoked ones included,
	// which the configuration's keys may not take.
	names atomic.Pointer[map[string]bool]
}

// NewManaged returns the managed keys of st; Refresh reads them.
func NewManaged(st store.Keys, log *slog.Logger) *Managed {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Managed{st: st, log: log}
	empty := map[[sha256.Size]byte]*Key{}
	m.cur.Store(&empty)
	names := map[string]bool{}
	m.names.Store(&names)
	return m
}

// Refresh reads the managed keys again. Revoked keys are left out of the
// lookup, so a revocation holds from the next read.
func (m *Managed) Refresh(ctx context.Context) error {
	if m == nil || m.st == nil {
		return nil
	}
	keys, err := m.st.ManagedKeys(ctx)
	if err != nil {
		return err
	}
	next := make(map[[sha256.Size]byte]*Key, len(keys))
	names := make(map[string]bool, len(keys))
	for _, k := range keys {
		names[k.Key.GetName()] = true
		if k.Key.GetRevokeTime() != nil || len(k.Digest) != sha256.Size {
			continue
		}
		next[[sha256.Size]byte(k.Digest)] = keyOf(k.Key)
	}
	m.cur.Store(&next)
	m.names.Store(&names)
	return nil
}

func keyOf(k *parleyv1.ManagedKey) *Key {
	out := &Key{Name: k.GetName(), Models: k.GetModels(), Limits: CounterLimits(k.GetLimits())}
	if t := k.GetExpireTime(); t != nil {
		out.Expires = t.AsTime()
	}
	return out
}

// Run refreshes the set every interval until ctx ends. A failed read
// keeps the last set (a database that is briefly away must not lock every
// managed key out) and is logged.
func (m *Managed) Run(ctx context.Context, interval time.Duration) {
	if m == nil || m.st == nil {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := m.Refresh(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			m.log.Warn("managed keys could not be read; the last set read stays in force", "error", err)
			failing = true
		case err == nil && failing:
			m.log.Info("managed keys are read again")
			failing = false
		}
	}
}

// Lookup finds the managed key whose secret has this SHA-256 digest. A map
// lookup by digest tells a timing observer nothing of any stored secret.
func (m *Managed) Lookup(digest [sha256.Size]byte) (*Key, bool) {
	if m == nil {
		return nil, false
	}
	k, ok := (*m.cur.Load())[digest]
	return k, ok
}

// Taken reports whether a managed key, live or revoked, has this name.
func (m *Managed) Taken(name string) bool {
	if m == nil {
		return false
	}
	return (*m.names.Load())[name]
}
