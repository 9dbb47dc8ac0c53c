package server

import (
	"crypto/sha256"
	"crypto/subtle"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// keyring checks client keys. Keys are compared as SHA-256 digests in
// constant time, against every configured key, so that neither the
// length nor the position of a match shows in the timing.
type keyring struct {
	keys []clientKey
}

type clientKey struct {
	name   string
	digest [sha256.Size]byte
	models []string
}

// principal is who made a request: a configured key, or anyone when no
// keys are configured.
type principal struct {
	name   string
	models []string
}

func newKeyring(keys []config.Key) *keyring {
	k := &keyring{}
	for _, c := range keys {
		k.keys = append(k.keys, clientKey{name: c.Name, digest: sha256.Sum256([]byte(c.Key)), models: c.Models})
	}
	return k
}

// authenticate finds the key presented.
func (k *keyring) authenticate(presented string) (*principal, error) {
	if len(k.keys) == 0 {
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
	if found < 0 {
		return nil, translate.Status(parleyv1.Code_CODE_UNAUTHENTICATED, "invalid API key")
	}
	return &principal{name: k.keys[found].name, models: k.keys[found].models}, nil
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
