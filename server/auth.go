package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"time"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/govern"
	"github.com/parleyhq/parley/translate"
)

// keyring checks client keys: the configuration's, compared as SHA-256
// digests in constant time against every one of them, so that neither the
// length nor the position of a match shows in the timing; then the managed
// keys, looked up by the digest of the key presented.
type keyring struct {
	keys []clientKey
	// open serves without a key: no key is configured and no admin key
	// either (with admin keys, managed keys are the way in).
	open    bool
	managed *govern.Managed
}

type clientKey struct {
	digest [sha256.Size]byte
	key    *govern.Key
}

// principal is who made a request: a key, or anyone when none is needed.
type principal struct {
	name   string
	models []string
	// key is the key's limits and expiry; nil for anyone.
	key *govern.Key
}

func newKeyring(cfg *config.Config, managed *govern.Managed) *keyring {
	k := &keyring{open: len(cfg.Keys) == 0 && len(cfg.Admin.Keys) == 0, managed: managed}
	for _, c := range cfg.Keys {
		gk := &govern.Key{Name: c.Name, Models: c.Models, Limits: govern.CounterLimits(govern.LimitsFromConfig(c.Limits))}
		k.keys = append(k.keys, clientKey{digest: sha256.Sum256([]byte(c.Key)), key: gk})
	}
	return k
}

// named reports whether a key of the configuration has this name.
func (k *keyring) named(name string) bool {
	for i := range k.keys {
		if k.keys[i].key.Name == name {
			return true
		}
	}
	return false
}

// authenticate finds the key presented.
func (k *keyring) authenticate(presented string) (*principal, error) {
	if k.open {
		// Anyone may call; a managed key, when one is presented, still
		// names the caller and brings its limits.
		if presented != "" {
			if mk, ok := k.managed.Lookup(sha256.Sum256([]byte(presented))); ok && (mk.Expires.IsZero() || time.Now().Before(mk.Expires)) {
				return &principal{name: mk.Name, models: mk.Models, key: mk}, nil
			}
		}
		return &principal{name: "anonymous"}, nil
	}
	if presented == "" {
		return nil, translate.Status(parleyv1.Code_CODE_UNAUTHENTICATED, "no API key was given")
	}
	d := sha256.Sum256([]byte(presented))
	found := -1
	for i := range k.keys {
		if subtle.ConstantTimeCompare(d[:], k.keys[i].digest[:]) == 1 {
			found = i
		}
	}
	var key *govern.Key
	if found >= 0 {
		key = k.keys[found].key
	} else if mk, ok := k.managed.Lookup(d); ok {
		key = mk
	} else {
		return nil, translate.Status(parleyv1.Code_CODE_UNAUTHENTICATED, "invalid API key")
	}
	if !key.Expires.IsZero() && !time.Now().Before(key.Expires) {
		return nil, translate.Status(parleyv1.Code_CODE_UNAUTHENTICATED, "this API key expired at %s", key.Expires.UTC().Format(time.RFC3339))
	}
	return &principal{name: key.Name, models: key.Models, key: key}, nil
}

// allows reports whether the principal may use a model.
func (p *principal) allows(model string) bool {
	if len(p.models) == 0 {
		return true
	}
	for _, g := range p.models {
		if config.MatchGlob(g, model) {
			return true
		}
	}
	return false
}

// mayUse is the error for a model the principal may not use.
func (p *principal) mayUse(model, field string) error {
	if p.allows(model) {
		return nil
	}
	return &translate.StatusError{Err: &parleyv1.Error{
		Code:            parleyv1.Code_CODE_PERMISSION_DENIED,
		Message:         "this API key may not use the model " + quote(model),
		FieldViolations: []*parleyv1.FieldViolation{{Field: field, Description: "not allowed for this key"}},
	}}
}

func quote(s string) string { return "\"" + s + "\"" }
