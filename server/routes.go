package server

import (
	"net/http"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// clientDialect is a dialect as the server serves it, with what every
// request would otherwise look up worked out once at start.
type clientDialect struct {
	translate.Client
	d *translate.Dialect
	// label names the dialect in metrics and logs.
	label string
	// The optional sides, nil where the dialect lacks them.
	count   translate.CountClient
	models  translate.ModelClient
	stored  translate.StoredClient
	compact translate.CompactClient
}

func newClientDialect(d *translate.Dialect) *clientDialect {
	c := &clientDialect{Client: d.Client, d: d, label: d.Name()}
	c.count, _ = d.Client.(translate.CountClient)
	c.models, _ = d.Client.(translate.ModelClient)
	c.stored, _ = d.Client.(translate.StoredClient)
	c.compact, _ = d.Client.(translate.CompactClient)
	return c
}

// framing is how a stream answering in is put on the wire.
func (c *clientDialect) framing(in *translate.Incoming) translate.Framing {
	if c.d.Framing == nil {
		return translate.FramingSSE
	}
	return c.d.Framing(in)
}

// dialectRoutes registers every client endpoint of every dialect. A
// pattern that several dialects share goes to the first whose Claims
// accepts the request, else to the one without Claims.
func (s *Server) dialectRoutes(ds translate.Dialects) {
	type claim struct {
		claims func(http.Header) bool
		h      http.Handler
	}
	shared := map[string][]claim{}
	var patterns []string
	for _, d := range ds.Clients() {
		c := newClientDialect(d)
		if s.stateful == nil && c.stored != nil {
			s.stateful = c
		}
		if d.Socket != nil {
			s.mux.Handle(d.Socket.Pattern, s.socket(c))
		}
		for _, rt := range d.Routes {
			if _, seen := shared[rt.Pattern]; !seen {
				patterns = append(patterns, rt.Pattern)
			}
			shared[rt.Pattern] = append(shared[rt.Pattern], claim{rt.Claims, s.endpoint(c, rt)})
		}
	}
	for _, p := range patterns {
		cs := shared[p]
		if len(cs) == 1 {
			s.mux.Handle(p, cs[0].h)
			continue
		}
		s.mux.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rest := http.NotFoundHandler()
			for _, c := range cs {
				switch {
				case c.claims == nil:
					rest = c.h
				case c.claims(r.Header):
					c.h.ServeHTTP(w, r)
					return
				}
			}
			rest.ServeHTTP(w, r)
		}))
	}
}

// endpoint serves one route of a dialect.
func (s *Server) endpoint(c *clientDialect, rt translate.Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := s.newClientRequest(w, r, c)
		defer x.release()
		in := &translate.Incoming{}
		op := rt.Op
		if rt.Resolve != nil {
			var err error
			if op, err = rt.Resolve(r, in); err != nil {
				x.fail(err)
				return
			}
		}
		switch {
		case op == translate.OpGenerate:
			x.serve(in)
		case op == translate.OpCount && c.count != nil:
			x.serveCount(in)
		case op == translate.OpCompact && c.compact != nil:
			x.serveCompact(in)
		case op == translate.OpListModels && c.models != nil:
			x.answer(x.listModels)
		case op == translate.OpGetModel && c.models != nil:
			x.answer(x.getModel)
		case op == translate.OpGetStored && c.stored != nil:
			x.answer(x.getStored)
		case op == translate.OpDeleteStored && c.stored != nil:
			x.answer(x.deleteStored)
		case op == translate.OpListStoredInput && c.stored != nil:
			x.answer(x.listStoredInput)
		default:
			x.fail(translate.Status(parleyv1.Code_CODE_NOT_FOUND, "%s %s is not served here", r.Method, r.URL.Path))
		}
	})
}

// answer serves an operation without a body (a listing, a stored
// response): the key first, then the operation's reply or its error.
func (x *clientRequest) answer(op func(p *principal) ([]byte, error)) {
	p, err := x.st.keys.authenticate(x.c.APIKey(&translate.Incoming{Header: x.r.Header, Query: x.r.URL.Query()}))
	if err == nil {
		var body []byte
		if body, err = op(p); err == nil {
			x.ok(body)
			return
		}
	}
	x.fail(err)
}

// listModels lists the models the caller's key may use.
func (x *clientRequest) listModels(p *principal) ([]byte, error) {
	return x.c.models.EncodeModels(x.st.d.Router().Models(p.allows), x.r.URL.Query())
}

// getModel describes one model.
func (x *clientRequest) getModel(p *principal) ([]byte, error) {
	name := strings.TrimPrefix(x.r.PathValue("model"), "models/")
	m := x.st.d.Router().Model(name, p.allows)
	if m == nil {
		return nil, translate.Status(parleyv1.Code_CODE_NOT_FOUND, "model %q is not served here", name)
	}
	return x.c.models.EncodeModel(m)
}

// getStored returns a stored response as it was returned, with the
// settings of its request.
func (x *clientRequest) getStored(p *principal) ([]byte, error) {
	rec, err := x.s.stored.Get(x.r.Context(), x.c.stored, p.name, x.r.PathValue("id"), "")
	if err != nil {
		return nil, err
	}
	x.call.Model = rec.GetRequest().GetModel()
	return x.c.EncodeResponse(rec.GetRequest(), rec.GetResponse())
}

// deleteStored deletes a stored response.
func (x *clientRequest) deleteStored(p *principal) ([]byte, error) {
	id := x.r.PathValue("id")
	if err := x.s.stored.Delete(x.r.Context(), x.c.stored, p.name, id, ""); err != nil {
		return nil, err
	}
	return x.c.stored.EncodeDeleted(id)
}

// listStoredInput pages through the whole input of a stored response,
// with the dialect's paging parameters.
func (x *clientRequest) listStoredInput(p *principal) ([]byte, error) {
	rec, err := x.s.stored.Get(x.r.Context(), x.c.stored, p.name, x.r.PathValue("id"), "")
	if err != nil {
		return nil, err
	}
	return x.c.stored.EncodeInputItems(rec.GetInput(), rec.GetId(), x.r.URL.Query())
}

func (x *clientRequest) ok(body []byte) {
	x.w.Header()["Content-Type"] = jsonType
	x.w.WriteHeader(http.StatusOK)
	_, _ = x.w.Write(body)
	x.status = http.StatusOK
	x.done(nil)
}
