// Package postgres is the store for a fleet: several Parley replicas share
// one PostgreSQL database through a pgx connection pool. It implements the
// contracts of package store, and store/storetest runs the same suite
// against it as against the embedded SQLite store.
//
// What must happen once happens once without a leader: task polls and
// callback deliveries are claimed row by row with FOR UPDATE SKIP LOCKED
// and a lease, so replicas never wait on each other's claims and a replica
// that dies holds nothing past its leases. Retention sweeps take rows the
// same way. Each write is one transaction; PostgreSQL's own group commit
// shares the flushes of writes that arrive together, so the store has no
// batching of its own.
//
// The schema is versioned by embedded migrations (migrations/*.sql), which
// Open applies under an advisory lock, so that replicas starting at once
// migrate exactly once; Migrate applies them without serving.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parleyhq/parley/store"
)

// Postgres is a store in a PostgreSQL database.
type Postgres struct {
	pool *pgxpool.Pool
}

var _ store.Store = (*Postgres)(nil)

// Options configure Open.
type Options struct {
	// DSN is a PostgreSQL URL or key=value connection string.
	DSN string
	// MaxConnections bounds the pool; 0 means DefaultMaxConnections.
	MaxConnections int
	// NoMigrate opens a database that must already be migrated (by
	// `parley migrate`), for replicas whose role may not change the
	// schema.
	NoMigrate bool
}

// DefaultMaxConnections bounds a replica's pool unless configured.
const DefaultMaxConnections = 16

// ParseDSN checks a connection string; its error never holds the string
// itself, which may hold a password.
func ParseDSN(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("store.dsn is not a PostgreSQL connection string (postgres://user@host:5432/database?sslmode=disable, or host=... key=value pairs)")
	}
	return cfg, nil
}

// Describe names the database a connection string reaches, as
// postgres://user@host:port/database, without its password or options.
func Describe(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "an unparsable PostgreSQL connection string"
	}
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + cfg.Database}
	return u.String()
}

// Open connects to the database, checks that it is reachable, and applies
// the migrations it lacks (unless o.NoMigrate). An unreachable database is
// an error naming its host and port; a database migrated by a newer Parley
// is refused.
func Open(ctx context.Context, o Options) (*Postgres, error) {
	cfg, err := ParseDSN(o.DSN)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(DefaultMaxConnections)
	if o.MaxConnections > 0 {
		cfg.MaxConns = int32(min(o.MaxConnections, 1<<15))
	}
	where := net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port)))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: PostgreSQL at %s: %s", where, reason(err))
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: the PostgreSQL database at %s cannot be reached: %s", where, reason(err))
	}
	if _, err := migrate(ctx, pool, !o.NoMigrate); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: PostgreSQL at %s: %w", where, err)
	}
	return &Postgres{pool: pool}, nil
}

// Migrate applies the migrations a database lacks and returns how many it
// applied, without opening a store.
func Migrate(ctx context.Context, o Options) (applied int, err error) {
	cfg, err := ParseDSN(o.DSN)
	if err != nil {
		return 0, err
	}
	cfg.MaxConns = 1
	where := net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port)))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("store: PostgreSQL at %s: %s", where, reason(err))
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return 0, fmt.Errorf("store: the PostgreSQL database at %s cannot be reached: %s", where, reason(err))
	}
	n, err := migrate(ctx, pool, true)
	if err != nil {
		return n, fmt.Errorf("store: PostgreSQL at %s: %w", where, err)
	}
	return n, nil
}

// reason is what went wrong in words that hold no part of the connection
// string: the server's own message, or the innermost network error.
func reason(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")"
	}
	var ne *net.OpError
	if errors.As(err, &ne) {
		return ne.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within 10s"
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	return err.Error()
}

// Close closes the pool.
func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}

// Pool is the underlying pool, for tests and maintenance.
func (p *Postgres) Pool() *pgxpool.Pool { return p.pool }

// SQLSTATE codes the store acts on.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
	deadlockDetected    = "40P01"
	serializationFail   = "40001"
)

func hasCode(err error, codes ...string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	for _, c := range codes {
		if pe.Code == c {
			return true
		}
	}
	return false
}

// inTx runs fn in a transaction, again (up to three times in all) when it
// lost a race that a second try wins: a deadlock with another replica, or
// a row it refers to deleted by another between its check and its write.
func (p *Postgres) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for range 3 {
		err = pgx.BeginFunc(ctx, p.pool, fn)
		if !hasCode(err, deadlockDetected, serializationFail, foreignKeyViolation) {
			return err
		}
	}
	return err
}
