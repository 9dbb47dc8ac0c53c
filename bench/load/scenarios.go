package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// What is measured: a route (a client's dialect served by an upstream's),
// whole or streamed, at a concurrency; and which target serves it.

// route is a client dialect served through an upstream dialect.
type route struct{ client, upstream dialect }

func (r route) String() string { return string(r.client) + ">" + string(r.upstream) }

// defaultRoutes are the routes a run measures unless told otherwise: the
// same dialect on both sides, and a cross-dialect route each way.
var defaultRoutes = []route{{messages, messages}, {chat, messages}, {messages, chat}}

// moreRoutes are measured with -routes all, or when named.
var moreRoutes = []route{
	{chat, chat}, {responses, responses}, {generate, generate},
	{responses, messages}, {generate, messages}, {messages, generate}, {messages, responses},
}

// parseRoutes reads -routes: "all", or routes such as
// "messages>messages,chat>messages" separated by commas.
func parseRoutes(s string) ([]route, error) {
	known := append(slices.Clone(defaultRoutes), moreRoutes...)
	if s == "all" {
		return known, nil
	}
	var out []route
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(known, func(r route) bool { return r.String() == name })
		if i < 0 {
			return nil, fmt.Errorf("-routes: unknown route %q (known: %s)", name, routeNames(known))
		}
		out = append(out, known[i])
	}
	return out, nil
}

func routeNames(rs []route) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.String()
	}
	return strings.Join(names, ", ")
}

// scenario is one route, whole or streamed, at one concurrency.
type scenario struct {
	route  route
	stream bool
	conc   int
}

func (s scenario) String() string {
	mode := "whole"
	if s.stream {
		mode = "stream"
	}
	return fmt.Sprintf("%s %s c=%d", mode, s.route, s.conc)
}

// heldName names the memory measurement of a route, for -scenarios.
func heldName(r route) string { return "held " + r.String() }

// scenarios lists every scenario of the routes and concurrencies that the
// filter matches, whole before streamed.
func scenarios(routes []route, concs []int, filter *regexp.Regexp) []scenario {
	var out []scenario
	for _, stream := range []bool{false, true} {
		for _, r := range routes {
			for _, c := range concs {
				s := scenario{route: r, stream: stream, conc: c}
				if filter.MatchString(s.String()) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// targetKind is what serves a scenario.
type targetKind string

const (
	direct targetKind = "direct" // the mock itself, no proxy
	proxy  targetKind = "proxy"  // httputil.ReverseProxy, in the upstream's dialect
	parley targetKind = "parley" // Parley, from the client's dialect
)

// callFor builds the request a target gets for a route. The direct target
// and the proxy carry the upstream's own request, since they translate
// nothing; Parley gets the client's, for the model that routes to the
// upstream's mock. Either way the mock sends the same reply.
func callFor(r route, stream, hold bool, kind targetKind, base string, promptKB int) call {
	d, model := r.upstream, r.upstream.upstreamModel(hold)
	if kind == parley {
		d, model = r.client, r.upstream.parleyModel(hold)
	}
	req := clientRequest(d, model, firstTurn(promptKB), stream)
	end := replyEnd
	if stream {
		end = streamEnd(d)
	}
	return call{url: base + req.path, req: req, end: []byte(end)}
}
