// Package server is Parley's HTTP front: it routes each client dialect's
// endpoints to the dispatcher and renders results and errors in the
// caller's own dialect. It never translates fields itself; the dialect
// packages under translate do.
package server

import (
	"net/http"
)

// Server serves Parley's HTTP endpoints.
type Server struct {
	mux *http.ServeMux
}

// New returns a Server with its routes registered.
func New() *Server {
	s := &Server{mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}
