package store

import (
	"context"
	"errors"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Keys stores the managed client keys: keys an operator creates, changes
// and revokes through the admin API, beside the keys of the configuration
// file. The secret itself is never stored, only its SHA-256 digest; every
// replica reads the whole set again every few seconds, so a change made
// through one replica holds on all of them soon after.
type Keys interface {
	// CreateKey stores a new key with the digest of its secret. A name
	// already taken, by a live or a revoked key, is ErrExists, and so is
	// a digest already stored.
	CreateKey(ctx context.Context, k *parleyv1.ManagedKey, digest []byte) error
	// ManagedKeys returns every key, revoked ones included, ordered by
	// name.
	ManagedKeys(ctx context.Context) ([]StoredKey, error)
	// ManagedKey returns one key by name, or ErrNotFound.
	ManagedKey(ctx context.Context, name string) (StoredKey, error)
	// UpdateKey replaces the key of that name (everything but its name,
	// digest, create time and hint) only if its stored update_time is
	// still read, the update_time of the record the change was made
	// from; otherwise it returns ErrConflict and changes nothing. The
	// comparison and the write are one atomic step, so that of writers
	// that read the same record one wins and the others learn of it
	// (optimistic concurrency): a caller re-reads and re-applies its
	// change. k's update_time must differ from read, or a writer that read
	// the same record would not notice the change. An unknown key is
	// ErrNotFound, and so is a revoked one, which cannot be changed.
	UpdateKey(ctx context.Context, k *parleyv1.ManagedKey, read time.Time) error
	// RevokeKey marks the key revoked at the given time (its record keeps
	// revoke_time) and returns it; ErrNotFound when there is no live key
	// of that name.
	RevokeKey(ctx context.Context, name string, at time.Time) (*parleyv1.ManagedKey, error)
}

// ErrConflict is returned by a conditional write whose record changed
// since it was read: the caller reads it again and retries.
var ErrConflict = errors.New("store: changed meanwhile")

// StoredKey is a managed key with the digest of its secret.
type StoredKey struct {
	Key *parleyv1.ManagedKey
	// Digest is the SHA-256 of the secret.
	Digest []byte
}

// Ledger keeps one record per finished request: who used what, on which
// model, at what cost. Records arrive in batches from a writer off the
// request path; a record whose request id is already kept is skipped, so
// that a batch written again after a failure counts once.
type Ledger interface {
	// RecordUsage stores records in one transaction. It keeps nothing of
	// rs once it returns: the caller fills the slice again.
	RecordUsage(ctx context.Context, rs []UsageRecord) error
	// Usage sums the records of [q.From, q.To) that match the query's
	// filters, grouped by q.GroupBy, in the order of the groups' values.
	Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error)
	// Spent sums what a key used since a time: its cost in nano-USD and
	// its tokens (input and output), to start a budget's count.
	Spent(ctx context.Context, key string, since time.Time) (costNanos, tokens int64, err error)
}

// UsageRecord is one finished request, or one music task operation.
type UsageRecord struct {
	Time      time.Time
	RequestID string
	// Key is the name of the client key ("anonymous" without keys).
	Key      string
	Model    string
	Upstream string
	// Dialect is the client's dialect (or "connect").
	Dialect string
	// Operation is what was done: chat, count_tokens, or a music task
	// operation (submit_music, submit_lyrics, ...).
	Operation string
	Status    int
	// Tokens as the upstream reported them.
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	ReasoningTokens  int64
	// CostNanos is the cost in billionths of a US dollar, by the model's
	// configured pricing; 0 when it has none.
	CostNanos int64
	Duration  time.Duration
	// TTFT is the time to the first token of a stream; 0 otherwise.
	TTFT time.Duration
}

// The dimensions usage can be grouped by.
const (
	GroupKey       = "key"
	GroupModel     = "model"
	GroupUpstream  = "upstream"
	GroupDialect   = "dialect"
	GroupOperation = "operation"
	GroupStatus    = "status"
	// GroupDay groups by the UTC day of the record's time (2006-01-02).
	GroupDay = "day"
	// GroupHour groups by the UTC hour of the record's time.
	GroupHour = "hour"
)

// GroupDimensions lists every dimension usage can be grouped by.
var GroupDimensions = []string{GroupKey, GroupModel, GroupUpstream, GroupDialect, GroupOperation, GroupStatus, GroupDay, GroupHour}

// UsageQuery asks for sums of usage.
type UsageQuery struct {
	From, To time.Time
	// GroupBy are dimensions from GroupDimensions; none sums everything
	// into one row.
	GroupBy []string
	// Filters: an empty value matches every record.
	Key, Model, Upstream, Dialect, Operation string
	// Status, when not 0, matches that HTTP status only.
	Status int
}

// UsageRow is the sum of the records of one group. The dimensions not
// grouped by are empty (0 for Status).
type UsageRow struct {
	Key, Model, Upstream, Dialect, Operation, Day string
	Status                                        int
	Requests                                      int64
	InputTokens                                   int64
	OutputTokens                                  int64
	CacheReadTokens                               int64
	CacheWriteTokens                              int64
	ReasoningTokens                               int64
	CostNanos                                     int64
	// DurationNanos is the sum of the records' durations.
	DurationNanos int64
	// Hour is the start of the UTC hour, in Unix seconds (0 when not
	// grouped by hour).
	Hour int64
}

// UsageColumns maps each dimension to its column, or expression, in the
// usage_records table every SQL backend keeps. Only these, never a
// caller's text, go into a query. The hour is the start of the record's
// UTC hour in Unix seconds: whole division of nanoseconds, the same in
// SQLite and PostgreSQL.
var UsageColumns = map[string]string{
	GroupKey:       "key",
	GroupModel:     "model",
	GroupUpstream:  "upstream",
	GroupDialect:   "dialect",
	GroupOperation: "operation",
	GroupStatus:    "status",
	GroupDay:       "day",
	GroupHour:      "(time / 3600000000000) * 3600",
}

// UsageField is where a row keeps the value of a dimension, to scan into.
func UsageField(r *UsageRow, dim string) any {
	switch dim {
	case GroupKey:
		return &r.Key
	case GroupModel:
		return &r.Model
	case GroupUpstream:
		return &r.Upstream
	case GroupDialect:
		return &r.Dialect
	case GroupOperation:
		return &r.Operation
	case GroupStatus:
		return &r.Status
	case GroupHour:
		return &r.Hour
	default:
		return &r.Day
	}
}

// UsageSums are where a row keeps its sums, to scan into, in this order:
// requests, input, output, cache read, cache write and reasoning tokens,
// cost, duration.
func UsageSums(r *UsageRow) []any {
	return []any{&r.Requests, &r.InputTokens, &r.OutputTokens, &r.CacheReadTokens, &r.CacheWriteTokens, &r.ReasoningTokens, &r.CostNanos, &r.DurationNanos}
}
