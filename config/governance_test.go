package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/config"
)

const governed = `keys:
  - name: team-a
    key: ${TEAM_A_KEY}
    limits:
      requests_per_minute: 600
      tokens_per_minute: 400000
      concurrent_requests: 20
      budget: {usd: 250, per: month}
  - name: team-b
    key: sk-team-b-0123456789
    limits:
      budget: {tokens: 5000000, per: day}
upstreams:
  - {name: echo, dialect: echo}
models:
  - name: sonnet
    upstream: echo
    pricing: {input: 3.00, output: 15.00, cache_read: 0.30, cache_write: 3.75}
redis:
  url: ${PARLEY_REDIS_URL}
admin:
  keys: [${PARLEY_ADMIN_KEY}]
`

// The governance keys of the configuration: limits, pricing, Redis and
// admin keys.
func TestParseGovernance(t *testing.T) {
	c, err := config.Parse("parley.yaml", []byte(governed), env(map[string]string{
		"TEAM_A_KEY": "sk-team-a-0123456789", "PARLEY_REDIS_URL": "redis://:hunter2@127.0.0.1:6379/0",
		"PARLEY_ADMIN_KEY": "admin-0123456789abcdef",
	}), names)
	if err != nil {
		t.Fatal(err)
	}
	l := c.Keys[0].Limits
	if l.RequestsPerMinute != 600 || l.TokensPerMinute != 400000 || l.ConcurrentRequests != 20 || *l.Budget.USD != 250 || l.Budget.Per != config.PerMonth {
		t.Errorf("team-a limits = %+v %+v", l, l.Budget)
	}
	if b := c.Keys[1].Limits.Budget; *b.Tokens != 5000000 || b.Per != config.PerDay || b.USD != nil {
		t.Errorf("team-b budget = %+v", b)
	}
	p := c.Models[0].Pricing
	if p.Input != 3 || p.Output != 15 || *p.CacheRead != 0.3 || *p.CacheWrite != 3.75 {
		t.Errorf("pricing = %+v", p)
	}
	if c.Redis.OnError != config.RedisAllow || c.Redis.Prefix != config.DefaultRedisPrefix || c.Admin.Keys[0] != "admin-0123456789abcdef" {
		t.Errorf("redis/admin = %+v %+v", c.Redis, c.Admin)
	}
}

// Malformed limits, pricing, Redis and admin keys are errors naming the key
// and its line, and never quoting a secret.
func TestGovernanceErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"negative rpm", "keys:\n  - name: a\n    key: sk-a-0123456789\n    limits:\n      requests_per_minute: -1\n",
			"x.yaml:5: keys[0].limits.requests_per_minute: must not be negative"},
		{"rpm not a number", "keys:\n  - name: a\n    key: sk-a-0123456789\n    limits:\n      requests_per_minute: many\n",
			"x.yaml:5: cannot unmarshal"},
		{"unknown limit", "keys:\n  - name: a\n    key: sk-a-0123456789\n    limits:\n      requests_per_hour: 5\n",
			"x.yaml:5: field requests_per_hour not found"},
		{"budget both", "keys:\n  - name: a\n    key: sk-a-0123456789\n    limits:\n      budget: {usd: 1, tokens: 5, per: day}\n",
			"x.yaml:5: keys[0].limits.budget: give usd or tokens, not both"},
		{"budget neither", "keys:\n  - name: a\n    key: sk-a-0123456789\n    limits:\n      budget: {per: day}\n",
			"x.yaml:5: keys[0].limits.budget: give usd or tokens"},
		{"budget period", "keys:\n  - name: a\n    key: sk-a-0123456789\n    limits:\n      budget:\n        usd: 5\n        per: year\n",
			"x.yaml:7: keys[0].limits.budget.per: \"year\" is not day, week or month"},
		{"budget zero", "keys:\n  - name: a\n    key: sk-a-0123456789\n    limits:\n      budget:\n        usd: 0\n        per: day\n",
			"x.yaml:6: keys[0].limits.budget.usd: must be more than zero"},
		{"price negative", "upstreams:\n  - {name: e, dialect: echo}\nmodels:\n  - name: m\n    upstream: e\n    pricing:\n      input: 1\n      output: -2\n",
			"x.yaml:8: models[0].pricing.output: must be a price of zero or more"},
		{"price text", "upstreams:\n  - {name: e, dialect: echo}\nmodels:\n  - name: m\n    upstream: e\n    pricing: {input: cheap}\n",
			"x.yaml:6: cannot unmarshal"},
		{"redis on_error", "redis:\n  url: redis://127.0.0.1:6379\n  on_error: maybe\n",
			"x.yaml:3: redis.on_error: \"maybe\" is not allow or deny"},
		{"redis url", "redis:\n  url: http://:pw-secret@127.0.0.1:6379\n",
			"x.yaml:2: redis.url: is not a redis://host:port"},
		{"admin short", "admin:\n  keys: [short-admin]\n",
			"x.yaml:2: admin.keys[0]: is shorter than 16 characters"},
		{"admin is client", "keys:\n  - name: a\n    key: sk-a-0123456789abcdef\nadmin:\n  keys: [sk-a-0123456789abcdef]\n",
			"admin.keys[0]: is the same key as keys[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("x.yaml", []byte(tc.yaml), env(nil), names)
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
			for _, secret := range []string{"pw-secret", "sk-a-0123456789", "short-admin"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("err quotes a secret: %q", err)
				}
			}
		})
	}
}

// Admin keys mean client requests need a key: the gateway may then listen
// beyond loopback with no client key in the file.
func TestAdminKeysGuardExposure(t *testing.T) {
	_, err := config.Parse("x.yaml", []byte("listen: 0.0.0.0:8080\nadmin:\n  keys: [admin-0123456789abcdef]\n"), env(nil), names)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse("x.yaml", []byte("listen: 0.0.0.0:8080\n"), env(nil), names); err == nil {
		t.Fatal("no keys at all on 0.0.0.0 was accepted")
	}
}

// A variable that is a whole item of a flow sequence reads as the item,
// quoted or not, alone or beside others.
func TestFlowSequenceVariables(t *testing.T) {
	c, err := config.Parse("x.yaml", []byte("admin:\n  keys: [${A}, \"${B}\",${C:-admin-fallback-0123456789}]\n"),
		env(map[string]string{"A": "admin-a-0123456789abc", "B": "admin-b-0123456789abc"}), names)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"admin-a-0123456789abc", "admin-b-0123456789abc", "admin-fallback-0123456789"}
	if strings.Join(c.Admin.Keys, " ") != strings.Join(want, " ") {
		t.Errorf("admin keys = %q, want %q", c.Admin.Keys, want)
	}
}
