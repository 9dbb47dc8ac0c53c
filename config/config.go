// Package config holds Parley's configuration: its shape, the YAML it is
// read from, the embedded defaults, and the checks that run before the
// gateway starts.
//
// Every string in the file may name environment variables as ${VAR} or
// ${VAR:-fallback}; a variable that is unset and has no fallback stops
// start-up, naming the variable (never a value). Errors name the key and
// the line: "config.yaml:7: upstreams[0].dialect: ...".
package config

import (
	"fmt"
	"path"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the whole configuration.
type Config struct {
	// Listen is the address to serve on.
	Listen string `yaml:"listen"`
	// DataDir holds Parley's own data (tasks, stored responses).
	DataDir string `yaml:"data_dir"`
	// ShutdownGrace is how long requests and streams in flight may run
	// on after SIGTERM or SIGINT before they are ended; default 120s.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// Limits bound what clients may send.
	Limits Limits `yaml:"limits"`
	// Keys are the client keys. With none, Parley serves without
	// authentication, and only on a loopback address.
	Keys      []Key      `yaml:"keys"`
	Upstreams []Upstream `yaml:"upstreams"`
	Models    []Model    `yaml:"models"`
	// Songgen configures the music task interface.
	Songgen Songgen `yaml:"songgen"`
	// Responses configures stored responses of the responses dialect.
	Responses Responses `yaml:"responses"`
	// Store says where tasks and stored responses are kept.
	Store Store `yaml:"store"`
	// Redis holds the limit counters a fleet of replicas shares.
	Redis Redis `yaml:"redis"`
	// Admin configures the admin API (managed keys, usage).
	Admin Admin `yaml:"admin"`
	// Ledger configures the usage ledger.
	Ledger Ledger `yaml:"ledger"`
}

// Redis is the server that keeps the counters of key limits for a fleet.
// Without it each replica counts alone.
type Redis struct {
	// URL is redis://[user:password@]host:port/db or rediss:// for TLS.
	// It is never printed: messages name its host and port only.
	URL string `yaml:"url"`
	// OnError says what happens to a request whose limits cannot be
	// checked because Redis is unreachable: allow (the default) or deny.
	OnError string `yaml:"on_error"`
	// Prefix starts every key Parley writes; default "parley:".
	Prefix string `yaml:"prefix"`
}

// What a request whose limits cannot be checked gets.
const (
	RedisAllow = "allow"
	RedisDeny  = "deny"
)

// Admin configures the admin API under /admin/v1/ and the Connect
// AdminService.
type Admin struct {
	// Keys are the admin keys. Without any, the admin API answers 404.
	// With any, client requests need a key even when the file lists none:
	// managed keys are the operator's to create.
	Keys []string `yaml:"keys"`
}

// Ledger configures the usage ledger, one record per finished request.
type Ledger struct {
	// FlushInterval is how often the records gathered are written;
	// default 1s. They are written at once when a batch fills and when
	// the gateway stops.
	FlushInterval Duration `yaml:"flush_interval"`
	// Disabled keeps no ledger (budgets then count from the process's own
	// start).
	Disabled bool `yaml:"disabled"`
}

// The store drivers.
const (
	// StoreSQLite is the embedded default: one file under data_dir, for
	// one process.
	StoreSQLite = "sqlite"
	// StorePostgres is a PostgreSQL database that a fleet of replicas
	// shares.
	StorePostgres = "postgres"
)

// Store says where Parley keeps what it must not lose.
type Store struct {
	// Driver is sqlite (the default) or postgres.
	Driver string `yaml:"driver"`
	// DSN is the PostgreSQL connection string (driver postgres). It is
	// never printed: messages name its host, port and database only.
	DSN string `yaml:"dsn"`
	// MaxConnections bounds each replica's PostgreSQL connections;
	// default 16.
	MaxConnections int `yaml:"max_connections"`
	// Migrate applies the schema migrations a PostgreSQL database lacks
	// when Parley starts (default true). Off, Parley refuses a database
	// that `parley migrate` has not brought up to date, for replicas
	// whose database role may not change the schema.
	Migrate *bool `yaml:"migrate"`
}

// MigrateAtStart reports whether serve applies missing migrations.
func (s Store) MigrateAtStart() bool { return s.Migrate == nil || *s.Migrate }

// Responses configures the responses kept for GET /v1/responses/{id} and
// previous_response_id.
type Responses struct {
	// Retention is how long a stored response is kept; default 30 days.
	Retention Duration `yaml:"retention"`
	// SweepInterval is how often expired responses are deleted.
	SweepInterval Duration `yaml:"sweep_interval"`
}

// Songgen configures the music task interface under /songgen.
type Songgen struct {
	// Upstream names the songgen upstream that serves music tasks; it may
	// be left out when exactly one upstream has the songgen dialect.
	Upstream string `yaml:"upstream"`
	// PollInterval is how often tasks in progress are refreshed.
	PollInterval Duration `yaml:"poll_interval"`
	// MaxAge fails a task that has not finished this long after submission.
	MaxAge Duration `yaml:"max_age"`
	// LyricsModel, when set, is the chat model that writes lyrics tasks
	// (through the dispatcher) instead of the music upstream.
	LyricsModel string `yaml:"lyrics_model"`
	// NotifySecret, when set, signs notify_hook calls (X-Parley-Signature).
	NotifySecret string `yaml:"notify_secret"`
	// AllowPrivateHooks lets notify_hook reach loopback, private,
	// link-local and metadata addresses.
	AllowPrivateHooks bool `yaml:"allow_private_hooks"`
	// ModelVersions are the accepted mv values of a song request.
	ModelVersions []string `yaml:"model_versions"`
}

// Limits bound client requests.
type Limits struct {
	// MaxBodyBytes bounds a request body; larger bodies get 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxInflightBodyBytes bounds the request bodies held at once;
	// beyond it new requests are refused as overloaded, with
	// Retry-After. Default 256 MiB; at least max_body_bytes.
	MaxInflightBodyBytes int64 `yaml:"max_inflight_body_bytes"`
}

// Key is one client key.
type Key struct {
	Name string `yaml:"name"`
	Key  string `yaml:"key"`
	// Models the key may use, as globs; empty means all.
	Models []string `yaml:"models"`
	// Limits bound what the key may use; nil does not bound.
	Limits *KeyLimits `yaml:"limits"`
}

// KeyLimits bound one key; a limit left out does not bound.
type KeyLimits struct {
	RequestsPerMinute int64 `yaml:"requests_per_minute"`
	// TokensPerMinute counts input and output tokens by the upstream's
	// usage (an estimate is held while a request runs).
	TokensPerMinute int64 `yaml:"tokens_per_minute"`
	// ConcurrentRequests bounds the requests and streams in flight.
	ConcurrentRequests int64   `yaml:"concurrent_requests"`
	Budget             *Budget `yaml:"budget"`
}

// Budget caps what a key spends per calendar period (UTC): US dollars by
// the models' pricing, or tokens.
type Budget struct {
	USD    *float64 `yaml:"usd"`
	Tokens *int64   `yaml:"tokens"`
	// Per is day, week (from Monday) or month.
	Per string `yaml:"per"`
}

// The budget periods.
const (
	PerDay   = "day"
	PerWeek  = "week"
	PerMonth = "month"
)

// The upstream kinds that configuration itself gives a meaning to. Every
// other dialect name comes from the list of dialects Parley speaks (package
// dialects), which Parse is given.
const (
	// DialectSonggen is the music service behind music tasks.
	DialectSonggen = "songgen"
	// DialectEcho is the built-in model that answers with the last message.
	DialectEcho = "echo"
)

// Upstream is one service Parley forwards to.
type Upstream struct {
	Name    string `yaml:"name"`
	Dialect string `yaml:"dialect"`
	// BaseURL is the service root; the dialect's own paths are appended.
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key"`
	// ConnectTimeout bounds the TCP and TLS handshake.
	ConnectTimeout Duration `yaml:"connect_timeout"`
	// HeaderTimeout bounds the wait for the reply's status and headers.
	HeaderTimeout Duration `yaml:"header_timeout"`
	// IdleTimeout bounds the silence between two reads of a reply body.
	// There is no total deadline: long reasoning streams must live.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxRetries is how often a failed attempt (connection error, 429,
	// 5xx) is retried on this upstream before the next route is tried.
	MaxRetries *int `yaml:"max_retries"`
	// Provider, when set, says the dialect is served by a cloud (Amazon
	// Bedrock, Google Vertex AI, Azure OpenAI) under the cloud's own
	// endpoints and authentication; base_url may then be left out where
	// the cloud's region or location gives it.
	Provider *Provider `yaml:"provider"`
}

// The clouds an upstream's provider may name.
const (
	CloudBedrock = "bedrock"
	CloudVertex  = "vertex"
	CloudAzure   = "azure"
)

// Provider is the cloud that serves an upstream's dialect. Credentials
// come from the cloud's standard chain or from variables the file names;
// they are never printed.
type Provider struct {
	// Cloud is bedrock, vertex or azure.
	Cloud string `yaml:"cloud"`

	// Region is the AWS region (bedrock); default the chain's (AWS_REGION,
	// the profile's region).
	Region string `yaml:"region"`
	// Profile is the AWS shared-config profile (bedrock); default the
	// chain's (AWS_PROFILE, "default").
	Profile string `yaml:"profile"`

	// Project and Location are the Google Cloud project and location
	// (vertex): "us-central1", "us-east5", "global".
	Project  string `yaml:"project"`
	Location string `yaml:"location"`
	// CredentialsFile is a Google service-account (or other credential)
	// JSON file (vertex); default Application Default Credentials.
	CredentialsFile string `yaml:"credentials_file"`

	// APIVersion is the Azure OpenAI api-version of the deployments
	// surface (/openai/deployments/{deployment}/...); left out, the v1
	// surface (/openai/v1/...) is called, which takes none.
	APIVersion string `yaml:"api_version"`
	// Entra authenticates to Azure with a Microsoft Entra ID application
	// (client credentials) instead of the api_key.
	Entra *Entra `yaml:"entra"`
}

// Entra is a Microsoft Entra ID application that Parley signs in as.
type Entra struct {
	TenantID     string `yaml:"tenant_id"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// Authority is the sign-in host; default
	// https://login.microsoftonline.com (other clouds have their own).
	Authority string `yaml:"authority"`
}

// Model maps a name clients ask for to one or more routes.
type Model struct {
	// Name is what clients ask for: an exact name or a glob.
	Name string `yaml:"name"`
	// Upstream and UpstreamModel are the short form of one route.
	Upstream      string `yaml:"upstream"`
	UpstreamModel string `yaml:"upstream_model"`
	// Routes are several routes, picked by weight; the others are the
	// fallbacks, in order.
	Routes []Route `yaml:"routes"`
	// ContextWindow is the model's context window in tokens; 0 when
	// unknown. The responses dialect's truncation works against it.
	ContextWindow int64 `yaml:"context_window"`
	// Pricing is what the model costs, for budgets and the ledger; nil
	// costs nothing.
	Pricing *Pricing `yaml:"pricing"`
}

// Pricing is a model's price in US dollars per million tokens. Cached
// input left out costs what input costs.
type Pricing struct {
	Input      float64  `yaml:"input"`
	Output     float64  `yaml:"output"`
	CacheRead  *float64 `yaml:"cache_read"`
	CacheWrite *float64 `yaml:"cache_write"`
}

// Cached returns the prices of input read from and written to a prompt
// cache: as configured, or the input price.
func (p *Pricing) Cached() (read, write float64) {
	read, write = p.Input, p.Input
	if p.CacheRead != nil {
		read = *p.CacheRead
	}
	if p.CacheWrite != nil {
		write = *p.CacheWrite
	}
	return read, write
}

// Route is one upstream that can serve a model.
type Route struct {
	Upstream string `yaml:"upstream"`
	// UpstreamModel is the upstream's name for the model; empty means the
	// name the client asked for.
	UpstreamModel string `yaml:"upstream_model"`
	// Weight is the share of requests this route gets first; default 1.
	Weight int `yaml:"weight"`
}

// Defaults for values the file leaves out.
const (
	DefaultListen        = "127.0.0.1:8080"
	DefaultDataDir       = "parley-data"
	DefaultShutdownGrace = 120 * time.Second
	DefaultMaxBodyBytes  = 32 << 20
	// DefaultMaxInflightBodyBytes bounds the bodies held at once.
	DefaultMaxInflightBodyBytes = 256 << 20
	DefaultConnectTimeout       = 10 * time.Second
	DefaultHeaderTimeout        = 120 * time.Second
	DefaultIdleTimeout          = 300 * time.Second
	DefaultMaxRetries           = 2
	DefaultPollInterval         = 5 * time.Second
	DefaultMaxAge               = 30 * time.Minute
	DefaultRetention            = 30 * 24 * time.Hour
	DefaultSweepInterval        = time.Hour
	DefaultRedisPrefix          = "parley:"
	DefaultLedgerFlush          = time.Second
)

// DefaultModelVersions are the accepted mv values unless configured: the
// spec's two, and chirp-v4, which its example sends.
var DefaultModelVersions = []string{DefaultModelVersion, "chirp-v3-5", "chirp-v4"}

// DefaultModelVersion is the model version of a song that names none.
const DefaultModelVersion = "chirp-v3-0"

// Duration is a time.Duration written as a Go duration ("5s", "2m30s").
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML reads a Go duration; errors name the line.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %q is not a duration such as 30s or 2m", n.Line, n.Value)
	}
	if v < 0 {
		return fmt.Errorf("line %d: %q is negative", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes a Go duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// RoutesOf returns m's routes, the short form included.
func (m *Model) RoutesOf() []Route {
	if len(m.Routes) > 0 {
		return m.Routes
	}
	return []Route{{Upstream: m.Upstream, UpstreamModel: m.UpstreamModel, Weight: 1}}
}

// IsGlob reports whether a model name is a pattern.
func IsGlob(name string) bool {
	for _, c := range name {
		switch c {
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// MatchGlob reports whether name matches the glob pattern (path.Match
// syntax; a bad pattern matches nothing, and Validate rejects it).
func MatchGlob(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// applyDefaults fills what the file left out.
func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = Duration(DefaultShutdownGrace)
	}
	if c.Store.Driver == "" {
		c.Store.Driver = StoreSQLite
	}
	if c.Redis.OnError == "" {
		c.Redis.OnError = RedisAllow
	}
	if c.Redis.Prefix == "" {
		c.Redis.Prefix = DefaultRedisPrefix
	}
	if c.Ledger.FlushInterval == 0 {
		c.Ledger.FlushInterval = Duration(DefaultLedgerFlush)
	}
	if c.Limits.MaxBodyBytes == 0 {
		c.Limits.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Limits.MaxInflightBodyBytes == 0 {
		c.Limits.MaxInflightBodyBytes = max(DefaultMaxInflightBodyBytes, c.Limits.MaxBodyBytes)
	}
	if c.Songgen.PollInterval == 0 {
		c.Songgen.PollInterval = Duration(DefaultPollInterval)
	}
	if c.Songgen.MaxAge == 0 {
		c.Songgen.MaxAge = Duration(DefaultMaxAge)
	}
	if c.Responses.Retention == 0 {
		c.Responses.Retention = Duration(DefaultRetention)
	}
	if c.Responses.SweepInterval == 0 {
		c.Responses.SweepInterval = Duration(DefaultSweepInterval)
	}
	if len(c.Songgen.ModelVersions) == 0 {
		c.Songgen.ModelVersions = slices.Clone(DefaultModelVersions)
	}
	if c.Songgen.Upstream == "" {
		var names []string
		for _, u := range c.Upstreams {
			if u.Dialect == DialectSonggen {
				names = append(names, u.Name)
			}
		}
		if len(names) == 1 {
			c.Songgen.Upstream = names[0]
		}
	}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		if u.ConnectTimeout == 0 {
			u.ConnectTimeout = Duration(DefaultConnectTimeout)
		}
		if u.HeaderTimeout == 0 {
			u.HeaderTimeout = Duration(DefaultHeaderTimeout)
		}
		if u.IdleTimeout == 0 {
			u.IdleTimeout = Duration(DefaultIdleTimeout)
		}
		if u.MaxRetries == nil {
			u.MaxRetries = new(DefaultMaxRetries)
		}
	}
	for i := range c.Models {
		for j := range c.Models[i].Routes {
			if c.Models[i].Routes[j].Weight == 0 {
				c.Models[i].Routes[j].Weight = 1
			}
		}
	}
}
