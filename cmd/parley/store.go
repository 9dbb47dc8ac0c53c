package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/postgres"
	"github.com/parleyhq/parley/store/sqlite"
)

// openStore opens the configured store: the SQLite file under data_dir,
// or the PostgreSQL database a fleet shares, migrated at start unless the
// configuration says otherwise.
func openStore(ctx context.Context, cfg *config.Config) (store.Store, string, error) {
	switch cfg.Store.Driver {
	case config.StorePostgres:
		st, err := postgres.Open(ctx, postgres.Options{
			DSN: cfg.Store.DSN, MaxConnections: cfg.Store.MaxConnections, NoMigrate: !cfg.Store.MigrateAtStart(),
		})
		return st, postgres.Describe(cfg.Store.DSN), err
	default:
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, "", fmt.Errorf("data_dir: %w", err)
		}
		path := filepath.Join(cfg.DataDir, "parley.db")
		st, err := sqlite.Open(ctx, path)
		return st, "sqlite " + path, err
	}
}

// checkStore checks what the configuration says of the store without
// connecting.
func checkStore(cfg *config.Config) (string, error) {
	if cfg.Store.Driver != config.StorePostgres {
		return "sqlite " + filepath.Join(cfg.DataDir, "parley.db"), nil
	}
	if _, err := postgres.ParseDSN(cfg.Store.DSN); err != nil {
		return "", err
	}
	return postgres.Describe(cfg.Store.DSN), nil
}

// migrateCmd applies the schema migrations the configured PostgreSQL
// database lacks, without serving: deploy pipelines run it before they
// start the new replicas.
func migrateCmd(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	file := fs.String("config", "", "configuration file (YAML)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig(*file, e)
	if err != nil {
		return err
	}
	if cfg.Store.Driver != config.StorePostgres {
		return errors.New("migrate: the store is sqlite, which migrates itself when it opens; migrate is for store.driver postgres")
	}
	n, err := postgres.Migrate(ctx, postgres.Options{DSN: cfg.Store.DSN})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: %d migrations applied; schema at version %d\n", postgres.Describe(cfg.Store.DSN), n, postgres.Version())
	return nil
}
