package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/server"
	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

func TestHealthz(t *testing.T) {
	cfg := config.Default(func(string) (string, bool) { return "", false })
	d, err := dispatch.FromConfig(cfg, dialects.All(), dispatch.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(server.New(server.Options{Config: cfg, Dispatcher: d, Dialects: dialects.All()}))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Fatalf("healthz = %d %q", resp.StatusCode, body)
	}
}
