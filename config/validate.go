package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
)

type problem struct{ key, msg string }

// validate checks the meaning of a configuration whose shape is already
// right. dialects are the dialect names an upstream may speak. It never
// quotes a key or an api_key.
func (c *Config) validate(dialects []string) []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key, fmt.Sprintf(format, args...)})
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		add("listen", "%q is not a host:port address", c.Listen)
	} else if err := CheckExposure(c.Listen, len(c.Keys)+len(c.Admin.Keys)); err != nil {
		add("listen", "%s", strings.TrimPrefix(err.Error(), ""))
	}
	if c.Limits.MaxBodyBytes < 0 {
		add("limits.max_body_bytes", "must be positive")
	}
	if c.Limits.MaxInflightBodyBytes < c.Limits.MaxBodyBytes {
		add("limits.max_inflight_body_bytes", "%d is less than limits.max_body_bytes (%d): a body of the largest size could never be served", c.Limits.MaxInflightBodyBytes, c.Limits.MaxBodyBytes)
	}
	switch c.Store.Driver {
	case StoreSQLite:
		if c.Store.DSN != "" {
			add("store.dsn", "is for driver %s; driver %s keeps its file under data_dir", StorePostgres, StoreSQLite)
		}
	case StorePostgres:
		if c.Store.DSN == "" {
			add("store.dsn", "is required for driver %s (postgres://user@host:5432/database?sslmode=disable)", StorePostgres)
		}
	default:
		add("store.driver", "%q is not a store driver: %s (the default) or %s", c.Store.Driver, StoreSQLite, StorePostgres)
	}
	if c.ShutdownGrace < 0 {
		add("shutdown_grace", "must be positive")
	}
	if c.Store.MaxConnections < 0 {
		add("store.max_connections", "must be positive")
	}

	keyNames := map[string]int{}
	keyValues := map[string]int{}
	for i, k := range c.Keys {
		at := fmt.Sprintf("keys[%d]", i)
		if k.Name == "" {
			add(at+".name", "is required")
		} else if j, dup := keyNames[k.Name]; dup {
			add(at+".name", "%q is also the name of keys[%d]", k.Name, j)
		} else {
			keyNames[k.Name] = i
		}
		switch {
		case k.Key == "":
			add(at+".key", "is required (an empty key would let anyone in)")
		case len(k.Key) < 8:
			add(at+".key", "is shorter than 8 characters")
		default:
			if j, dup := keyValues[k.Key]; dup {
				add(at+".key", "is the same key as keys[%d]", j)
			} else {
				keyValues[k.Key] = i
			}
		}
		for j, g := range k.Models {
			if _, err := path.Match(g, ""); err != nil || g == "" {
				add(fmt.Sprintf("%s.models[%d]", at, j), "%q is not a valid glob", g)
			}
		}
		for _, p := range k.Limits.check() {
			add(at+".limits."+p.key, "%s", p.msg)
		}
	}
	for i, a := range c.Admin.Keys {
		at := fmt.Sprintf("admin.keys[%d]", i)
		switch {
		case a == "":
			add(at, "is empty (an empty admin key would let anyone in)")
		case len(a) < 16:
			add(at, "is shorter than 16 characters")
		default:
			if j, dup := keyValues[a]; dup {
				add(at, "is the same key as keys[%d]: admin keys must differ from client keys", j)
			}
		}
	}
	switch c.Redis.OnError {
	case RedisAllow, RedisDeny:
	default:
		add("redis.on_error", "%q is not %s or %s", c.Redis.OnError, RedisAllow, RedisDeny)
	}
	if c.Redis.URL != "" {
		if u, err := url.Parse(c.Redis.URL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
			add("redis.url", "is not a redis://host:port or rediss://host:port URL")
		}
	}
	if c.Ledger.FlushInterval.D() < 10*time.Millisecond {
		add("ledger.flush_interval", "%s is shorter than 10ms", c.Ledger.FlushInterval.D())
	}

	upstreams := map[string]int{}
	for i, u := range c.Upstreams {
		at := fmt.Sprintf("upstreams[%d]", i)
		if u.Name == "" {
			add(at+".name", "is required")
		} else if j, dup := upstreams[u.Name]; dup {
			add(at+".name", "%q is also the name of upstreams[%d]", u.Name, j)
		} else {
			upstreams[u.Name] = i
		}
		if !slices.Contains(dialects, u.Dialect) {
			if u.Dialect == "" {
				add(at+".dialect", "is required: one of %s", strings.Join(dialects, ", "))
			} else {
				add(at+".dialect", "%q is not one of %s", u.Dialect, strings.Join(dialects, ", "))
			}
		}
		cloudURL := u.Provider != nil && u.Provider.Cloud != CloudAzure
		if u.Provider != nil {
			for _, pr := range u.Provider.problems(u.Dialect, u.APIKey != "") {
				add(at+".provider."+pr.key, "%s", pr.msg)
			}
		}
		if u.Dialect != DialectEcho {
			if u.BaseURL == "" && cloudURL {
				// The cloud's region or location gives it.
			} else if u.BaseURL == "" {
				add(at+".base_url", "is required for a %s upstream", u.Dialect)
			} else if pu, err := url.Parse(u.BaseURL); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				add(at+".base_url", "%q is not an http or https URL", u.BaseURL)
			} else if pu.User != nil {
				add(at+".base_url", "must not carry credentials; use api_key")
			}
		}
		if u.MaxRetries != nil && (*u.MaxRetries < 0 || *u.MaxRetries > 10) {
			add(at+".max_retries", "%d is not between 0 and 10", *u.MaxRetries)
		}
	}

	models := map[string]int{}
	for i, m := range c.Models {
		at := fmt.Sprintf("models[%d]", i)
		switch m.Name {
		case "":
			add(at+".name", "is required")
		default:
			if _, err := path.Match(m.Name, ""); err != nil {
				add(at+".name", "%q is not a valid glob", m.Name)
			}
			if j, dup := models[m.Name]; dup {
				add(at+".name", "%q is also the name of models[%d]", m.Name, j)
			}
			models[m.Name] = i
		}
		switch {
		case len(m.Routes) > 0 && (m.Upstream != "" || m.UpstreamModel != ""):
			add(at, "give either upstream (and upstream_model) or routes, not both")
		case len(m.Routes) == 0 && m.Upstream == "":
			add(at+".upstream", "is required (or give routes)")
		}
		routes := m.Routes
		prefix := at + ".routes"
		if len(routes) == 0 {
			routes = []Route{{Upstream: m.Upstream, Weight: 1}}
			prefix = ""
		}
		for j, r := range routes {
			rat := fmt.Sprintf("%s[%d]", prefix, j)
			if prefix == "" {
				rat = at
			}
			if r.Upstream == "" {
				if prefix != "" {
					add(rat+".upstream", "is required")
				}
				continue
			}
			ui, ok := upstreams[r.Upstream]
			switch {
			case !ok:
				add(rat+".upstream", "%q is not the name of any upstream", r.Upstream)
			case c.Upstreams[ui].Dialect == DialectSonggen:
				add(rat+".upstream", "%q is a songgen upstream, which serves music tasks, not chat models", r.Upstream)
			}
			if r.Weight < 0 {
				add(rat+".weight", "must not be negative")
			}
		}
		if m.ContextWindow < 0 {
			add(at+".context_window", "must not be negative")
		}
		if p := m.Pricing; p != nil {
			for _, f := range []struct {
				name string
				v    *float64
			}{{"input", &p.Input}, {"output", &p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
				if name, v := f.name, f.v; v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
					add(at+".pricing."+name, "must be a price of zero or more (US dollars per million tokens)")
				}
			}
		}
	}
	if c.Responses.Retention.D() < time.Minute {
		ps = append(ps, problem{"responses.retention", "must be at least 1m"})
	}
	if c.Responses.SweepInterval.D() < time.Second {
		ps = append(ps, problem{"responses.sweep_interval", "must be at least 1s"})
	}
	ps = append(ps, c.validateSonggen(upstreams)...)
	return ps
}

func (c *Config) validateSonggen(upstreams map[string]int) []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{"songgen." + key, fmt.Sprintf(format, args...)})
	}
	sg := c.Songgen
	var songgens []string
	for _, u := range c.Upstreams {
		if u.Dialect == DialectSonggen {
			songgens = append(songgens, u.Name)
		}
	}
	if sg.Upstream == "" && len(songgens) > 1 {
		add("upstream", "is required when several upstreams speak songgen (%s): name the one that serves music tasks", strings.Join(songgens, ", "))
	}
	if sg.Upstream != "" {
		if i, ok := upstreams[sg.Upstream]; !ok {
			add("upstream", "%q is not the name of any upstream", sg.Upstream)
		} else if d := c.Upstreams[i].Dialect; d != DialectSonggen {
			add("upstream", "%q speaks %s, not songgen", sg.Upstream, d)
		}
	}
	if sg.PollInterval.D() < 100*time.Millisecond {
		add("poll_interval", "%s is shorter than 100ms", sg.PollInterval.D())
	}
	if sg.MaxAge.D() < sg.PollInterval.D() {
		add("max_age", "%s is shorter than poll_interval (%s)", sg.MaxAge.D(), sg.PollInterval.D())
	}
	if sg.LyricsModel != "" && !c.knowsModel(sg.LyricsModel) {
		add("lyrics_model", "%q is not a configured model", sg.LyricsModel)
	}
	for i, v := range sg.ModelVersions {
		if strings.TrimSpace(v) == "" {
			add(fmt.Sprintf("model_versions[%d]", i), "is empty")
		}
	}
	return ps
}

// knowsModel reports whether a model name is served by some model entry,
// exactly or through a glob.
func (c *Config) knowsModel(name string) bool {
	for _, m := range c.Models {
		if m.Name == name || (IsGlob(m.Name) && MatchGlob(m.Name, name)) {
			return true
		}
	}
	return false
}

// IsLoopback reports whether a listen address only accepts connections
// from this machine.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckExposure refuses to serve without client keys on anything but a
// loopback address: with no keys, anyone who can reach the port could
// spend the upstream keys.
func CheckExposure(listen string, keys int) error {
	if keys > 0 || IsLoopback(listen) {
		return nil
	}
	return fmt.Errorf("no client keys are configured, so Parley only listens on a loopback address (such as 127.0.0.1:8080), not %q: add keys to the configuration, or listen on loopback", listen)
}

// check finds what is wrong with a key's limits, by key under "limits".
func (l *KeyLimits) check() []problem {
	if l == nil {
		return nil
	}
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key, fmt.Sprintf(format, args...)})
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"requests_per_minute", l.RequestsPerMinute}, {"tokens_per_minute", l.TokensPerMinute}, {"concurrent_requests", l.ConcurrentRequests}} {
		if f.v < 0 {
			add(f.name, "must not be negative (leave it out for no limit)")
		}
	}
	if b := l.Budget; b != nil {
		switch {
		case b.USD == nil && b.Tokens == nil:
			add("budget", "give usd or tokens, with per: day, week or month")
		case b.USD != nil && b.Tokens != nil:
			add("budget", "give usd or tokens, not both")
		case b.USD != nil && (*b.USD <= 0 || math.IsNaN(*b.USD) || math.IsInf(*b.USD, 0)):
			add("budget.usd", "must be more than zero")
		case b.Tokens != nil && *b.Tokens <= 0:
			add("budget.tokens", "must be more than zero")
		}
		switch b.Per {
		case PerDay, PerWeek, PerMonth:
		case "":
			add("budget.per", "is required: day, week or month")
		default:
			add("budget.per", "%q is not day, week or month", b.Per)
		}
	}
	return ps
}

// cloudDialects are the dialects each cloud serves.
var cloudDialects = map[string][]string{
	CloudBedrock: {"messages", "converse"},
	CloudVertex:  {"generate_content", "messages"},
	CloudAzure:   {"chat_completions", "responses"},
}

// providerProblem is one fault of a provider block: the key under it and
// what is wrong.
type providerProblem struct{ key, msg string }

// problems checks a provider block against the upstream's dialect.
func (p *Provider) problems(dialect string, apiKey bool) []providerProblem {
	var out []providerProblem
	add := func(key, format string, args ...any) {
		out = append(out, providerProblem{key, fmt.Sprintf(format, args...)})
	}
	served, known := cloudDialects[p.Cloud]
	switch {
	case p.Cloud == "":
		add("cloud", "is required: one of %s, %s, %s", CloudBedrock, CloudVertex, CloudAzure)
		return out
	case !known:
		add("cloud", "%q is not one of %s, %s, %s", p.Cloud, CloudBedrock, CloudVertex, CloudAzure)
		return out
	case !slices.Contains(served, dialect):
		add("cloud", "%s does not serve the %s dialect (it serves %s)", p.Cloud, dialect, strings.Join(served, " and "))
	}
	other := func(key, val, only string) {
		if val != "" {
			add(key, "applies to %s only", only)
		}
	}
	if p.Cloud != CloudBedrock {
		other("region", p.Region, CloudBedrock)
		other("profile", p.Profile, CloudBedrock)
	}
	if p.Cloud != CloudVertex {
		other("project", p.Project, CloudVertex)
		other("location", p.Location, CloudVertex)
		other("credentials_file", p.CredentialsFile, CloudVertex)
	}
	if p.Cloud != CloudAzure {
		other("api_version", p.APIVersion, CloudAzure)
		if p.Entra != nil {
			add("entra", "applies to %s only", CloudAzure)
		}
	}
	switch p.Cloud {
	case CloudVertex:
		if p.Location == "" {
			add("location", "is required for vertex (us-central1, us-east5, global, ...)")
		} else if !validHostLabel(p.Location) {
			add("location", "%q is not a Google Cloud location", p.Location)
		}
		if p.Project == "" && !apiKey {
			add("project", "is required for vertex unless an api_key (express mode) is given")
		} else if p.Project == "" && dialect == "messages" {
			add("project", "is required for Anthropic models on vertex")
		}
	case CloudBedrock:
		if p.Region != "" && !validHostLabel(p.Region) {
			add("region", "%q is not an AWS region", p.Region)
		}
	case CloudAzure:
		if e := p.Entra; e != nil {
			if apiKey {
				add("entra", "and api_key are both set; give one")
			}
			if e.TenantID == "" || e.ClientID == "" || e.ClientSecret == "" {
				add("entra", "needs tenant_id, client_id and client_secret")
			}
			if e.Authority != "" {
				if u, err := url.Parse(e.Authority); err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
					add("entra.authority", "is not an https URL")
				}
			}
		} else if !apiKey {
			add("cloud", "azure needs an api_key or an entra block")
		}
	}
	return out
}

// validHostLabel reports whether s can stand in a host name, as a region
// or location does.
func validHostLabel(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
		default:
			return false
		}
	}
	return s != "" && s[0] != '-'
}
