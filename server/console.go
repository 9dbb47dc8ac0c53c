package server

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/config"
)

// The console: a web page served at /console that shows the gateway and
// runs it through the admin API. It holds no power of its own: every
// action is an admin API call with the admin key the operator signed in
// with (kept in the page's session storage only). Its files are plain
// HTML, CSS and JavaScript, committed and embedded: building Parley needs
// no Node toolchain.

//go:embed console
var consoleFiles embed.FS

// consoleRoutes serves the console's files at /console/.
func (s *Server) consoleRoutes() {
	sub, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic(err)
	}
	// Each file's ETag is its content's digest, worked out once: a
	// browser revalidates (no-cache) and gets 304 for what it has.
	tags := map[string]string{}
	_ = fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := fs.ReadFile(sub, name); err == nil {
				sum := sha256.Sum256(b)
				tags["/console/"+name] = `"` + hex.EncodeToString(sum[:12]) + `"`
			}
		}
		return nil
	})
	tags["/console/"] = tags["/console/index.html"]
	files := http.StripPrefix("/console/", http.FileServerFS(sub))
	s.mux.Handle("GET /console", http.RedirectHandler("/console/", http.StatusMovedPermanently))
	s.mux.Handle("GET /console/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// The page talks to its own origin only, and no other site may
		// frame it.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if tag, ok := tags[r.URL.Path]; ok {
			h.Set("ETag", tag)
		}
		files.ServeHTTP(w, r)
	}))
}

// infoReply tells the console how the admin API stands.
type infoReply struct {
	// Open says no sign-in is needed: no key of any kind is configured.
	Open        bool      `json:"open"`
	Version     string    `json:"version"`
	Ledger      bool      `json:"ledger"`
	ManagedKeys bool      `json:"managed_keys"`
	Time        time.Time `json:"time"`
}

func (s *Server) adminInfo(*http.Request) (int, any, error) {
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	return http.StatusOK, infoReply{
		Open: s.state().keys.open, Version: version, Ledger: s.admin.Ledger != nil, ManagedKeys: s.admin.Keys != nil,
		Time: time.Now().UTC(),
	}, nil
}

// modelReply is a model with its routes, as the console shows them.
type modelReply struct {
	Name          string        `json:"name"`
	Glob          bool          `json:"glob"`
	ContextWindow *int64        `json:"context_window"`
	Pricing       *pricingReply `json:"pricing"`
	Routes        []routeReply  `json:"routes"`
}

type pricingReply struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

type routeReply struct {
	Upstream      string `json:"upstream"`
	Dialect       string `json:"dialect"`
	UpstreamModel string `json:"upstream_model"`
	Weight        int    `json:"weight"`
}

type upstreamReply struct {
	Name    string `json:"name"`
	Dialect string `json:"dialect"`
	// BaseURL is the service root, without any query.
	BaseURL string `json:"base_url"`
}

type modelsReply struct {
	Data      []modelReply    `json:"data"`
	Upstreams []upstreamReply `json:"upstreams"`
}

// adminModels lists the configured models and upstreams (never a key).
func (s *Server) adminModels(*http.Request) (int, any, error) {
	cfg := s.state().cfg
	dialects := map[string]string{}
	out := modelsReply{Data: []modelReply{}, Upstreams: []upstreamReply{}}
	for _, u := range cfg.Upstreams {
		dialects[u.Name] = u.Dialect
		base, _, _ := strings.Cut(u.BaseURL, "?")
		out.Upstreams = append(out.Upstreams, upstreamReply{Name: u.Name, Dialect: u.Dialect, BaseURL: base})
	}
	for _, m := range cfg.Models {
		mr := modelReply{Name: m.Name, Glob: config.IsGlob(m.Name), Routes: []routeReply{}}
		if m.ContextWindow > 0 {
			mr.ContextWindow = &m.ContextWindow
		}
		if p := m.Pricing; p != nil {
			read, write := p.Cached()
			mr.Pricing = &pricingReply{Input: p.Input, Output: p.Output, CacheRead: read, CacheWrite: write}
		}
		for _, r := range m.RoutesOf() {
			um := r.UpstreamModel
			if um == "" {
				um = m.Name
			}
			mr.Routes = append(mr.Routes, routeReply{Upstream: r.Upstream, Dialect: dialects[r.Upstream], UpstreamModel: um, Weight: r.Weight})
		}
		out.Data = append(out.Data, mr)
	}
	slices.SortStableFunc(out.Data, func(a, b modelReply) int { return strings.Compare(a.Name, b.Name) })
	return http.StatusOK, out, nil
}
