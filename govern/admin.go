package govern

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/translate"
)

// Admin is what the admin API does, whichever way it is called (JSON under
// /admin/v1/ or the Connect AdminService): the operations on managed keys
// and the usage ledger, with their checks.
type Admin struct {
	Keys    store.Keys
	Ledger  store.Ledger
	Managed *Managed
	// Configured reports whether a key of the configuration file has a
	// name, which a managed key may not take.
	Configured func(name string) bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// SecretPrefix starts every managed key's secret, so that a leaked one is
// recognised by secret scanners and by eye.
const SecretPrefix = "prly_"

// hintLength is how much of a secret its hint shows: the prefix and six
// characters, enough to tell keys apart, far too few to guess the rest.
const hintLength = len(SecretPrefix) + 6

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func (a *Admin) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// CreateKey checks and stores a new key and returns it with its secret.
// field prefixes the names of bad fields ("" for a JSON body, "key." for
// the Connect request).
func (a *Admin) CreateKey(ctx context.Context, in *parleyv1.ManagedKey, field string) (*parleyv1.ManagedKey, error) {
	if a.Keys == nil {
		return nil, noStore()
	}
	if err := checkKey(in, field, true); err != nil {
		return nil, err
	}
	if a.Configured != nil && a.Configured(in.GetName()) {
		return nil, translate.Status(parleyv1.Code_CODE_ALREADY_EXISTS, "a key of the configuration file is named %q", in.GetName())
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	secret := SecretPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	digest := sha256.Sum256([]byte(secret))
	now := timestamppb.New(a.now())
	k := &parleyv1.ManagedKey{
		Name: in.GetName(), Models: in.GetModels(), Limits: in.GetLimits(), ExpireTime: in.GetExpireTime(),
		Metadata: in.GetMetadata(), CreateTime: now, UpdateTime: now, Hint: secret[:hintLength],
	}
	if err := a.Keys.CreateKey(ctx, k, digest[:]); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, translate.Status(parleyv1.Code_CODE_ALREADY_EXISTS, "a key named %q exists (revoked keys keep their names)", in.GetName())
		}
		return nil, err
	}
	a.refresh(ctx)
	out := proto.CloneOf(k)
	out.Key = secret
	return out, nil
}

// ListKeys lists every managed key.
func (a *Admin) ListKeys(ctx context.Context) ([]*parleyv1.ManagedKey, error) {
	if a.Keys == nil {
		return nil, noStore()
	}
	ks, err := a.Keys.ManagedKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*parleyv1.ManagedKey, len(ks))
	for i, k := range ks {
		out[i] = k.Key
	}
	return out, nil
}

// GetKey returns one key.
func (a *Admin) GetKey(ctx context.Context, name string) (*parleyv1.ManagedKey, error) {
	if a.Keys == nil {
		return nil, noStore()
	}
	k, err := a.Keys.ManagedKey(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, unknownKey(name)
	}
	if err != nil {
		return nil, err
	}
	return k.Key, nil
}

// The fields of a key an update may change.
const (
	FieldModels     = "models"
	FieldLimits     = "limits"
	FieldExpireTime = "expire_time"
	FieldMetadata   = "metadata"
)

// updateTries is how many times UpdateKey reads, changes and writes a key
// that other writers keep changing before it gives up.
const updateTries = 3

// UpdateKey changes the fields of a live key that paths name to their
// values in in. The write holds only if the key has not changed since it
// was read; when it has (another admin or replica wrote it meanwhile),
// the key is read again and the change applied to what is now stored, so
// that concurrent changes of different fields all hold. After updateTries
// such conflicts it gives up with CODE_ABORTED.
func (a *Admin) UpdateKey(ctx context.Context, name string, in *parleyv1.ManagedKey, paths []string, field string) (*parleyv1.ManagedKey, error) {
	if a.Keys == nil {
		return nil, noStore()
	}
	if len(paths) == 0 {
		return nil, translate.Invalid(field+"update_mask", "names no field to change (models, limits, expire_time, metadata)")
	}
	for _, p := range paths {
		if !slices.Contains([]string{FieldModels, FieldLimits, FieldExpireTime, FieldMetadata}, p) {
			return nil, translate.Invalid(field+"update_mask", "%q cannot be changed: only models, limits, expire_time and metadata can", p)
		}
	}
	if err := checkKey(in, field, false); err != nil {
		return nil, err
	}
	for range updateTries {
		cur, err := a.Keys.ManagedKey(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, unknownKey(name)
		}
		if err != nil {
			return nil, err
		}
		if cur.Key.GetRevokeTime() != nil {
			return nil, translate.Status(parleyv1.Code_CODE_FAILED_PRECONDITION, "the key %q is revoked and cannot be changed", name)
		}
		k := proto.CloneOf(cur.Key)
		for _, p := range paths {
			switch p {
			case FieldModels:
				k.Models = in.GetModels()
			case FieldLimits:
				k.Limits = in.GetLimits()
			case FieldExpireTime:
				k.ExpireTime = in.GetExpireTime()
			case FieldMetadata:
				k.Metadata = in.GetMetadata()
			}
		}
		// The new update time must differ from the one read, or a writer
		// that read the same record would not see the change: a clock
		// that has not moved (or went back) still moves it by 1ns.
		read := cur.Key.GetUpdateTime().AsTime()
		now := a.now()
		if !now.After(read) {
			now = read.Add(time.Nanosecond)
		}
		k.UpdateTime = timestamppb.New(now)
		err = a.Keys.UpdateKey(ctx, k, read)
		switch {
		case err == nil:
			a.refresh(ctx)
			return k, nil
		case errors.Is(err, store.ErrNotFound):
			return nil, unknownKey(name)
		case !errors.Is(err, store.ErrConflict):
			return nil, err
		}
	}
	return nil, translate.Status(parleyv1.Code_CODE_ABORTED, "the key %q changed meanwhile; try again", name)
}

// RevokeKey revokes a live key.
func (a *Admin) RevokeKey(ctx context.Context, name string) (*parleyv1.ManagedKey, error) {
	if a.Keys == nil {
		return nil, noStore()
	}
	k, err := a.Keys.RevokeKey(ctx, name, a.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, unknownKey(name)
	}
	if err != nil {
		return nil, err
	}
	a.refresh(ctx)
	return k, nil
}

// Usage sums the ledger.
func (a *Admin) Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error) {
	if a.Ledger == nil {
		return nil, translate.Status(parleyv1.Code_CODE_FAILED_PRECONDITION, "the usage ledger is disabled (ledger.disabled)")
	}
	for _, g := range q.GroupBy {
		if !slices.Contains(store.GroupDimensions, g) {
			return nil, translate.Invalid("group_by", "%q is not one of %v", g, store.GroupDimensions)
		}
	}
	if !q.To.After(q.From) {
		return nil, translate.Invalid("to", "must be after from")
	}
	return a.Ledger.Usage(ctx, q)
}

// refresh makes a change hold on this replica at once; the others read it
// within their refresh interval.
func (a *Admin) refresh(ctx context.Context) {
	if a.Managed != nil {
		_ = a.Managed.Refresh(ctx)
	}
}

func unknownKey(name string) error {
	return translate.Status(parleyv1.Code_CODE_NOT_FOUND, "there is no managed key named %q", name)
}

func noStore() error {
	return translate.Status(parleyv1.Code_CODE_FAILED_PRECONDITION, "managed keys need a store")
}

// checkKey checks the fields of a key a client gave; create says the name
// is the client's to give.
func checkKey(k *parleyv1.ManagedKey, field string, create bool) error {
	if create {
		switch {
		case k.GetName() == "":
			return translate.Invalid(field+"name", "is required")
		case !nameRE.MatchString(k.GetName()):
			return translate.Invalid(field+"name", "%q is not a key name: letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit", k.GetName())
		}
	}
	if k.GetKey() != "" {
		return translate.Invalid(field+"key", "is Parley's to make: leave it out")
	}
	for i, g := range k.GetModels() {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return translate.Invalid(fmt.Sprintf("%smodels[%d]", field, i), "%q is not a valid glob", g)
		}
	}
	if l := k.GetLimits(); l != nil {
		at := field + "limits."
		for _, f := range []struct {
			name string
			v    *int64
		}{{"requests_per_minute", l.RequestsPerMinute}, {"tokens_per_minute", l.TokensPerMinute}, {"concurrent_requests", l.ConcurrentRequests}} {
			if f.v != nil && *f.v <= 0 {
				return translate.Invalid(at+f.name, "must be more than zero (leave it out for no limit)")
			}
		}
		if b := l.GetBudget(); b != nil {
			switch {
			case b.Usd == nil && b.Tokens == nil:
				return translate.Invalid(at+"budget", "give usd or tokens, with per: day, week or month")
			case b.Usd != nil && b.Tokens != nil:
				return translate.Invalid(at+"budget", "give usd or tokens, not both")
			case b.Usd != nil && (b.GetUsd() <= 0 || math.IsNaN(b.GetUsd()) || math.IsInf(b.GetUsd(), 0)):
				return translate.Invalid(at+"budget.usd", "must be more than zero")
			case b.Tokens != nil && b.GetTokens() <= 0:
				return translate.Invalid(at+"budget.tokens", "must be more than zero")
			case b.GetPer() == parleyv1.BudgetPeriod_BUDGET_PERIOD_UNSPECIFIED:
				return translate.Invalid(at+"budget.per", "is required: day, week or month")
			}
		}
	}
	for name, v := range k.GetMetadata() {
		if name == "" || len(name) > 64 || len(v) > 256 {
			return translate.Invalid(field+"metadata", "names are 1 to 64 characters and values at most 256")
		}
	}
	return nil
}
