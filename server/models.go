package server

import (
	"net/http"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// modelClient is a dialect that lists models.
type modelClient interface {
	translate.Client
	translate.ModelClient
}

// openAIOrMessages picks the shape of /v1/models: the messages style when
// the request carries that style's version or key header, else OpenAI's.
func (s *Server) openAIOrMessages(openai, messages http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != "" {
			messages.ServeHTTP(w, r)
			return
		}
		openai.ServeHTTP(w, r)
	})
}

// listModels lists the models the caller's key may use.
func (s *Server) listModels(c modelClient) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x, p := s.keyedExchange(w, r, c)
		if p == nil {
			return
		}
		body, err := c.EncodeModels(s.d.Router().Models(p.allows), r.URL.Query())
		if err != nil {
			x.fail(err)
			return
		}
		x.ok(body)
	})
}

// getModel describes one model.
func (s *Server) getModel(c modelClient) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x, p := s.keyedExchange(w, r, c)
		if p == nil {
			return
		}
		name := strings.TrimPrefix(r.PathValue("model"), "models/")
		m := s.d.Router().Model(name, p.allows)
		if m == nil {
			x.fail(translate.Status(parleyv1.Code_CODE_NOT_FOUND, "model %q is not served here", name))
			return
		}
		body, err := c.EncodeModel(m)
		if err != nil {
			x.fail(err)
			return
		}
		x.ok(body)
	})
}

// keyedExchange starts a request without a body (a listing, a stored
// response) and authenticates it; on failure it has answered, and the
// principal is nil.
func (s *Server) keyedExchange(w http.ResponseWriter, r *http.Request, c translate.Client) (*exchange, *principal) {
	x := s.newExchange(w, r, c)
	p, err := s.keys.authenticate(c.APIKey(&translate.Incoming{Header: r.Header, Query: r.URL.Query()}))
	if err != nil {
		x.fail(err)
		return x, nil
	}
	return x, p
}

func (x *exchange) ok(body []byte) {
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	_, _ = x.w.Write(body)
	x.status = http.StatusOK
	x.done(nil)
}
