package config_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

// names are the dialects upstreams may name.
var names = dialects.All().Names()

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

const full = `listen: 127.0.0.1:9090
data_dir: ./data
keys:
  - name: team-a
    key: ${TEAM_A_KEY}
    models: ["son*", "echo"]
upstreams:
  - name: claude
    dialect: messages
    base_url: https://api.anthropic.com
    api_key: ${ANTHROPIC_API_KEY}
    idle_timeout: 45s
  - name: gemini
    dialect: generate_content
    base_url: ${GEMINI_BASE:-https://generativelanguage.googleapis.com}
    api_key: ${GEMINI_API_KEY}
    max_retries: 0
  - name: echo
    dialect: echo
models:
  - name: sonnet
    upstream: claude
    upstream_model: claude-sonnet-4-5
  - name: mix
    routes:
      - {upstream: claude, upstream_model: claude-haiku-4-5, weight: 3}
      - {upstream: gemini, upstream_model: gemini-2.5-flash}
  - name: "gemini-*"
    upstream: gemini
`

func TestParseFull(t *testing.T) {
	c, err := config.Parse("parley.yaml", []byte(full), env(map[string]string{
		"TEAM_A_KEY": "sk-team-a-0123456789", "ANTHROPIC_API_KEY": "sk-ant-secret", "GEMINI_API_KEY": "g-secret",
	}), names)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9090" || c.DataDir != "./data" {
		t.Errorf("listen/data_dir = %q %q", c.Listen, c.DataDir)
	}
	if c.Keys[0].Key != "sk-team-a-0123456789" || c.Upstreams[0].APIKey != "sk-ant-secret" {
		t.Errorf("variables not expanded: %+v %+v", c.Keys[0], c.Upstreams[0])
	}
	if c.Upstreams[1].BaseURL != "https://generativelanguage.googleapis.com" {
		t.Errorf("fallback not used: %q", c.Upstreams[1].BaseURL)
	}
	if c.Upstreams[0].IdleTimeout.D() != 45*time.Second || c.Upstreams[1].IdleTimeout.D() != config.DefaultIdleTimeout {
		t.Errorf("idle timeouts = %v %v", c.Upstreams[0].IdleTimeout.D(), c.Upstreams[1].IdleTimeout.D())
	}
	if *c.Upstreams[1].MaxRetries != 0 || *c.Upstreams[0].MaxRetries != config.DefaultMaxRetries {
		t.Errorf("max_retries = %d %d", *c.Upstreams[1].MaxRetries, *c.Upstreams[0].MaxRetries)
	}
	r := c.Models[1].RoutesOf()
	if len(r) != 2 || r[0].Weight != 3 || r[1].Weight != 1 {
		t.Errorf("routes = %+v", r)
	}
	if r := c.Models[0].RoutesOf(); len(r) != 1 || r[0].UpstreamModel != "claude-sonnet-4-5" {
		t.Errorf("short form routes = %+v", r)
	}
}

func TestParseEmptyIsDefaults(t *testing.T) {
	c, err := config.Parse("empty.yaml", nil, env(nil), names)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != config.DefaultListen || c.Limits.MaxBodyBytes != config.DefaultMaxBodyBytes {
		t.Errorf("defaults not applied: %+v", c)
	}
}

// TestParseErrors checks that each bad configuration names its key and
// line, and never shows a secret.
func TestParseErrors(t *testing.T) {
	secrets := map[string]string{"TEAM_A_KEY": "sk-team-a-0123456789", "ANTHROPIC_API_KEY": "sk-ant-secret", "GEMINI_API_KEY": "g-secret"}
	cases := []struct {
		name, edit, from, want string
	}{
		{"unknown key", "    idle_timeout: 45s", "    idle_timeot: 45s", "parley.yaml:12: field idle_timeot not found"},
		{"bad dialect", "    dialect: generate_content", "    dialect: gemini", `parley.yaml:14: upstreams[1].dialect: "gemini" is not one of messages, generate_content`},
		{"bad duration", "idle_timeout: 45s", "idle_timeout: soon", `parley.yaml:12: "soon" is not a duration`},
		{"unset variable", "${GEMINI_API_KEY}", "${NOPE_KEY}", "parley.yaml:16: upstreams[1].api_key: environment variable NOPE_KEY is not set"},
		{"unknown upstream", "    upstream: gemini\n", "    upstream: gemeni\n", `parley.yaml:29: models[2].upstream: "gemeni" is not the name of any upstream`},
		{"route upstream", "{upstream: gemini,", "{upstream: nobody,", `parley.yaml:27: models[1].routes[1].upstream: "nobody" is not the name of any upstream`},
		{"bad base url", "base_url: https://api.anthropic.com", "base_url: api.anthropic.com", `parley.yaml:10: upstreams[0].base_url: "api.anthropic.com" is not an http or https URL`},
		{"duplicate key", "  - name: claude\n", "  - name: team-b\n    key: ${TEAM_A_KEY}\n  - name: claude\n", "keys[1]"},
		{"bad listen", "listen: 127.0.0.1:9090", "listen: everywhere", `parley.yaml:1: listen: "everywhere" is not a host:port address`},
		{"bad glob", `models: ["son*", "echo"]`, `models: ["son[", "echo"]`, `parley.yaml:6: keys[0].models[0]: "son[" is not a valid glob`},
		{"both forms", "  - name: mix\n", "  - name: mix\n    upstream: claude\n", "models[1]: give either upstream"},
		{"not yaml", "listen: 127.0.0.1:9090", "listen: [", "parley.yaml:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := full
			if tc.name == "duplicate key" {
				src = strings.Replace(full, "upstreams:\n", "  - name: team-b\n    key: ${TEAM_A_KEY}\nupstreams:\n", 1)
			} else {
				if !strings.Contains(src, tc.edit) {
					t.Fatalf("fixture lacks %q", tc.edit)
				}
				src = strings.Replace(src, tc.edit, tc.from, 1)
			}
			_, err := config.Parse("parley.yaml", []byte(src), env(secrets), names)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tc.want)
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error shows a secret: %q", err)
				}
			}
			var es config.Errors
			if !errors.As(err, &es) {
				t.Errorf("error is %T, want config.Errors", err)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	c := config.Default(env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": ""}))
	if c.Listen != "127.0.0.1:8080" || len(c.Keys) != 0 {
		t.Errorf("listen %q keys %d", c.Listen, len(c.Keys))
	}
	var names []string
	for _, u := range c.Upstreams {
		names = append(names, u.Name+"="+u.Dialect)
	}
	if got := strings.Join(names, ","); got != "echo=echo,anthropic=messages" {
		t.Errorf("upstreams = %s", got)
	}
	if c.Upstreams[1].APIKey != "sk-ant" || c.Models[1].Name != "claude-*" {
		t.Errorf("anthropic upstream = %+v, model %+v", c.Upstreams[1], c.Models[1])
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:80": true, "localhost:1": true,
		"0.0.0.0:8080": false, ":8080": false, "10.0.0.1:80": false, "[::]:80": false,
	} {
		if got := config.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

const music = `upstreams:
  - name: echo
    dialect: echo
  - name: songs
    dialect: songgen
    base_url: https://music.example
    api_key: ${MUSIC_KEY:-m-secret}
models:
  - name: echo
    upstream: echo
songgen:
  poll_interval: 2s
  max_age: 10m
  lyrics_model: echo
  notify_secret: ${NOTIFY_SECRET:-hook-secret}
  allow_private_hooks: true
  model_versions: [chirp-v4, chirp-v3-5]
`

func TestParseSonggen(t *testing.T) {
	c, err := config.Parse("music.yaml", []byte(music), env(nil), names)
	if err != nil {
		t.Fatal(err)
	}
	sg := c.Songgen
	if sg.Upstream != "songs" || sg.PollInterval.D() != 2*time.Second || sg.MaxAge.D() != 10*time.Minute ||
		sg.LyricsModel != "echo" || sg.NotifySecret != "hook-secret" || !sg.AllowPrivateHooks ||
		strings.Join(sg.ModelVersions, ",") != "chirp-v4,chirp-v3-5" {
		t.Errorf("songgen = %+v", sg)
	}
	d, err := config.Parse("empty.yaml", nil, env(nil), names)
	if err != nil {
		t.Fatal(err)
	}
	if d.Songgen.PollInterval.D() != config.DefaultPollInterval || d.Songgen.MaxAge.D() != config.DefaultMaxAge ||
		strings.Join(d.Songgen.ModelVersions, ",") != "chirp-v3-0,chirp-v3-5,chirp-v4" || d.Songgen.Upstream != "" {
		t.Errorf("songgen defaults = %+v", d.Songgen)
	}
	if def := config.Default(env(nil)); def.Songgen.LyricsModel != "echo" {
		t.Errorf("the embedded defaults do not answer lyrics with echo: %+v", def.Songgen)
	}

	for _, tc := range []struct{ name, edit, to, want string }{
		{"unknown key", "  max_age: 10m", "  max_agee: 10m", "music.yaml:13: field max_agee not found"},
		{"short poll", "poll_interval: 2s", "poll_interval: 10ms", "music.yaml:12: songgen.poll_interval: 10ms is shorter than 100ms"},
		{"max age under poll", "max_age: 10m", "max_age: 1s", "music.yaml:13: songgen.max_age: 1s is shorter than poll_interval"},
		{"unknown lyrics model", "lyrics_model: echo", "lyrics_model: bard", `music.yaml:14: songgen.lyrics_model: "bard" is not a configured model`},
		{"unset secret", "${NOTIFY_SECRET:-hook-secret}", "${NOTIFY_SECRET}", "songgen.notify_secret: environment variable NOTIFY_SECRET is not set"},
		{"upstream not songgen", "songgen:\n", "songgen:\n  upstream: echo\n", `songgen.upstream: "echo" speaks echo, not songgen`},
		{"two songgen upstreams", "models:\n", "  - name: more\n    dialect: songgen\n    base_url: https://b.example\nmodels:\n", "songgen.upstream: is required when several upstreams speak songgen (songs, more)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(music, tc.edit) {
				t.Fatalf("fixture lacks %q", tc.edit)
			}
			_, err := config.Parse("music.yaml", []byte(strings.Replace(music, tc.edit, tc.to, 1)), env(nil), names)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseStore(t *testing.T) {
	lookup := env(map[string]string{"PARLEY_DATABASE_URL": "postgres://parley:pw-secret@127.0.0.1:5432/parley?sslmode=disable"})
	cfg, err := config.Parse("parley.yaml", []byte("store:\n  driver: postgres\n  dsn: ${PARLEY_DATABASE_URL}\n  max_connections: 8\n"), lookup, names)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.Driver != config.StorePostgres || cfg.Store.MaxConnections != 8 || !cfg.Store.MigrateAtStart() ||
		cfg.Store.DSN != "postgres://parley:pw-secret@127.0.0.1:5432/parley?sslmode=disable" {
		t.Fatalf("store: %+v", cfg.Store)
	}
	if cfg, err := config.Parse("parley.yaml", nil, lookup, names); err != nil || cfg.Store.Driver != config.StoreSQLite {
		t.Fatalf("default driver: %+v %v", cfg, err)
	}
	for src, want := range map[string]string{
		"store:\n  driver: mysql\n":                                     `parley.yaml:2: store.driver: "mysql" is not a store driver: sqlite (the default) or postgres`,
		"store:\n  driver: postgres\n":                                  "parley.yaml:1: store.dsn: is required for driver postgres",
		"store:\n  dsn: ${PARLEY_DATABASE_URL}\n":                       "parley.yaml:2: store.dsn: is for driver postgres",
		"store:\n  driver: postgres\n  dsn: x\n  max_connections: -1\n": "store.max_connections: must be positive",
	} {
		_, err := config.Parse("parley.yaml", []byte(src), lookup, names)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}
