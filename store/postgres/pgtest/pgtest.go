// Package pgtest gives a test a PostgreSQL schema of its own.
//
// The tests read the server from PARLEY_TEST_POSTGRES, a connection string
// such as postgres://postgres@127.0.0.1:5432/test?sslmode=disable. Without
// it they skip, saying how to run them; where CI is set (as .ci/run sets
// it) a missing database fails the test instead, so that CI never passes
// by skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the variable that holds the test server's connection string.
const Env = "PARLEY_TEST_POSTGRES"

// DSN creates an empty schema for the test, dropped when it ends, and
// returns a connection string whose search_path is that schema.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: CI runs the PostgreSQL tests against a real server", Env)
		}
		t.Skipf("set %s=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run the PostgreSQL tests (README: Tests)", Env)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "parley_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping %s: %v", schema, err)
			return
		}
		defer func() { _ = conn.Close(context.Background()) }()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping %s: %v", schema, err)
		}
	})
	return WithSchema(t, base, schema)
}

// WithSchema returns dsn with its search_path set to schema.
func WithSchema(t testing.TB, dsn, schema string) string {
	t.Helper()
	if !strings.Contains(dsn, "://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: not a URL", Env)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
