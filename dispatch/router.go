package dispatch

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"github.com/parleyhq/parley/config"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// route is one way to serve a model.
type route struct {
	upstream   string
	dialect    parleyv1.Dialect
	kind       string
	provider   string
	backend    Backend
	model      string // upstream model; "" = the client's name
	apiKey     string
	weight     int
	maxRetries int
	// shared: other configured upstreams speak this route's dialect
	// (translate.Target.Shared).
	shared bool
}

func (r *route) target(asked string) translate.Target {
	m := r.model
	if m == "" {
		m = asked
	}
	return translate.Target{Upstream: r.upstream, Model: m, APIKey: r.apiKey, Shared: r.shared}
}

// modelEntry is one configured model name.
type modelEntry struct {
	name   string
	glob   bool
	routes []*route
	window int64
}

// Router resolves model names to routes.
type Router struct {
	models []modelEntry
}

// UpstreamSpec is what the router needs to know of one configured upstream.
type UpstreamSpec struct {
	Name    string
	Dialect parleyv1.Dialect
	// Kind is what the configuration calls the upstream's dialect (echo
	// for the built-in model, which speaks the canonical model itself),
	// for traces.
	Kind       string
	Provider   string // gen_ai.provider.name, for traces
	Backend    Backend
	APIKey     string
	MaxRetries int
}

// NewRouter builds a router from the configured models over the given
// upstreams (by name). The configuration has been validated, so every
// route names a known upstream.
func NewRouter(models []config.Model, upstreams map[string]UpstreamSpec) (*Router, error) {
	r := &Router{}
	speakers := map[parleyv1.Dialect]int{}
	for _, u := range upstreams {
		if u.Dialect != parleyv1.Dialect_DIALECT_CANONICAL {
			speakers[u.Dialect]++
		}
	}
	for _, m := range models {
		e := modelEntry{name: m.Name, glob: config.IsGlob(m.Name), window: m.ContextWindow}
		for _, cr := range m.RoutesOf() {
			u, ok := upstreams[cr.Upstream]
			if !ok {
				return nil, fmt.Errorf("model %s: unknown upstream %q", m.Name, cr.Upstream)
			}
			e.routes = append(e.routes, &route{
				upstream: u.Name, dialect: u.Dialect, kind: u.Kind, provider: u.Provider, backend: u.Backend, model: cr.UpstreamModel,
				apiKey: u.APIKey, weight: max(cr.Weight, 0), maxRetries: u.MaxRetries, shared: speakers[u.Dialect] > 1,
			})
		}
		r.models = append(r.models, e)
	}
	return r, nil
}

// Resolve returns the routes of a model name: those of the first exact
// name, else of the first matching glob.
func (r *Router) Resolve(model string) ([]*route, error) {
	if e := r.find(model); e != nil {
		return e.routes, nil
	}
	return nil, NotServed(model, "model")
}

// NotServed is the error for a model name no route serves; field names it
// in the caller's spelling.
func NotServed(model, field string) error {
	return &translate.StatusError{Err: &parleyv1.Error{
		Code:            parleyv1.Code_CODE_NOT_FOUND,
		Message:         fmt.Sprintf("model %q is not served here", model),
		FieldViolations: []*parleyv1.FieldViolation{{Field: field, Description: "unknown model"}},
	}}
}

func (r *Router) find(model string) *modelEntry {
	if model == "" {
		return nil
	}
	for i := range r.models {
		if !r.models[i].glob && r.models[i].name == model {
			return &r.models[i]
		}
	}
	for i := range r.models {
		if r.models[i].glob && config.MatchGlob(r.models[i].name, model) {
			return &r.models[i]
		}
	}
	return nil
}

// Known reports whether a model name resolves.
func (r *Router) Known(model string) bool { return r.find(model) != nil }

// ContextWindow is the configured context window of a model in tokens; 0
// when unknown.
func (r *Router) ContextWindow(model string) int64 {
	if e := r.find(model); e != nil {
		return e.window
	}
	return 0
}

// Models lists the models that have an exact name, in configuration
// order, keeping those allow accepts. Glob entries cannot be listed: the
// names they match are the upstream's to know.
func (r *Router) Models(allow func(string) bool) []*parleyv1.Model {
	var out []*parleyv1.Model
	for _, e := range r.models {
		if e.glob || (allow != nil && !allow(e.name)) {
			continue
		}
		owner := "parley"
		if len(e.routes) == 1 {
			owner = e.routes[0].upstream
		}
		out = append(out, &parleyv1.Model{Id: e.name, DisplayName: e.name, OwnedBy: owner, InputTokenLimit: e.window})
	}
	return out
}

// Model returns one listed model by name, or nil.
func (r *Router) Model(name string, allow func(string) bool) *parleyv1.Model {
	models := r.Models(allow)
	i := slices.IndexFunc(models, func(m *parleyv1.Model) bool { return m.GetId() == name })
	if i < 0 {
		return nil
	}
	return models[i]
}

// ordered puts one route drawn by weight first and the others after it
// in configuration order.
func ordered(routes []*route, pick func(int) int) []*route {
	if len(routes) < 2 {
		return routes
	}
	total := 0
	for _, r := range routes {
		total += r.weight
	}
	first := 0
	if total > 0 {
		n := pick(total)
		for i, r := range routes {
			if n < r.weight {
				first = i
				break
			}
			n -= r.weight
		}
	}
	out := make([]*route, 0, len(routes))
	out = append(out, routes[first])
	for i, r := range routes {
		if i != first {
			out = append(out, r)
		}
	}
	return out
}

// byKey orders routes for a conversation key: first the route the key
// draws, by weighted rendezvous hashing (each route scores the key, the
// best score wins, and over many keys each route wins in proportion to
// its weight), then the others in configuration order. The same key
// draws the same route on every replica and after every reload, and
// changing one route's weight moves only the keys that route wins or
// loses.
func byKey(routes []*route, key string) []*route {
	first, best := -1, math.Inf(1)
	for i, r := range routes {
		if r.weight <= 0 {
			continue
		}
		h := fnv.New64a()
		_, _ = h.Write([]byte(key))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(r.upstream))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(r.model))
		x := h.Sum64() // FNV's high bits mix poorly: finish as splitmix64 does
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		x ^= x >> 31
		u := (float64(x>>11) + 0.5) / (1 << 53) // in (0, 1)
		if score := -math.Log(u) / float64(r.weight); score < best {
			first, best = i, score
		}
	}
	if first <= 0 {
		return routes
	}
	out := make([]*route, 0, len(routes))
	out = append(out, routes[first])
	out = append(out, routes[:first]...)
	return append(out, routes[first+1:]...)
}
