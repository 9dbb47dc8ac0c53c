// Package server is Parley's HTTP front: it routes each client dialect's
// endpoints to the dispatcher and renders results and errors in the
// caller's own dialect. It names no dialect: each dialect's descriptor
// (translate.Dialect, listed in package dialects and handed in by the
// command) gives its endpoints and the operation each serves, and the
// server serves every operation the same way through the dialect's codecs.
// It never translates fields itself; stored responses are package
// stored's, music tasks package tasks'.
//
// Endpoints (as the dialects declare them today):
//
//	POST /v1/messages, /v1/messages/count_tokens                    messages
//	POST /v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens
//	GET  /v1beta/models, /v1beta/models/{model}                      generate_content
//	POST /v1/responses, /v1/responses/input_tokens                  responses
//	GET, DELETE /v1/responses/{id}; GET /v1/responses/{id}/input_items  stored responses
//	POST /v1/chat/completions                                       chat_completions
//	GET  /v1/models, /v1/models/{model}   messages shape when the request carries
//	                                      anthropic-version or x-api-key, else OpenAI's
//	POST /songgen/submit/music, /songgen/submit/lyrics, /songgen/uploads/audio-url,
//	     /songgen/submit/concat, /songgen/fetch; GET /songgen/fetch/{task_id}  music tasks
//	GET  /healthz, /readyz (503 once draining), /livez, /metrics
//	POST /parley.v1.GenerationService/{Generate,StreamGenerate,CountTokens,ListModels}
//	     /parley.v1.TaskService/{SubmitTask,GetTask,ListTasks}            Connect, gRPC, gRPC-Web
//	     /grpc.reflection.v1.ServerReflection/, /grpc.health.v1.Health/  reflection, health
//
// Every error before the first byte of a reply is the client dialect's
// status and JSON body (with Retry-After when the upstream advised one);
// after it, the dialect's in-stream error event ends the stream. Replies
// carry X-Request-Id, and X-Parley-Dropped lists, by canonical field, what
// the request asked for that the serving upstream's dialect cannot carry.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/govern"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/stored"
	"github.com/parleyhq/parley/tasks"
	"github.com/parleyhq/parley/translate"
)

// Options configure a Server.
type Options struct {
	Config     *config.Config
	Dispatcher *dispatch.Dispatcher
	// Dialects are the dialects clients may speak (dialects.All).
	Dialects translate.Dialects
	// Logger receives one line per request; nil discards.
	Logger *slog.Logger
	// Registry receives the metrics; nil makes a new one.
	Registry *prometheus.Registry
	// Tasks serves the music task interface under /songgen; nil answers
	// it with upstream_unavailable.
	Tasks *tasks.Service
	// Stored keeps the responses of stateful dialects; nil keeps none
	// (every stored id is then unknown), truncating against the
	// dispatcher's context windows all the same.
	Stored *stored.Service
	// Counters count what keys use against their limits; nil counts in
	// the process.
	Counters quota.Counters
	// DenyUncounted refuses requests whose limits cannot be checked (the
	// counters failed) instead of letting them through.
	DenyUncounted bool
	// Keys keeps managed keys and Ledger the usage ledger; nil has
	// neither (the admin API then answers that it needs a store).
	Keys   store.Keys
	Ledger store.Ledger
	// TaskStore lists recent music tasks for the console; nil lists none.
	TaskStore store.Tasks
	// LedgerFlush is how often the ledger's records are written.
	LedgerFlush time.Duration
	// KeyRefresh is how often managed keys are read again;
	// govern.DefaultRefresh unless set.
	KeyRefresh time.Duration
}

// Server serves Parley's HTTP endpoints.
type Server struct {
	mux *http.ServeMux
	// cur is the configuration requests start on; a reload swaps it, and
	// a request keeps the one it started with to its end.
	cur     atomic.Pointer[state]
	log     *slog.Logger
	metrics *metrics
	tasks   *tasks.Service
	stored  *stored.Service
	// stateful is the first stateful client dialect, whose errors the
	// Connect Response service uses; nil when there is none.
	stateful *clientDialect
	// draining is set when the gateway has begun shutting down; drained
	// is closed then, for the WebSocket connections to close themselves.
	draining  atomic.Bool
	drainOnce sync.Once
	drained   chan struct{}
	// sockets counts the WebSocket connections open: the HTTP server
	// forgets a connection once it is upgraded, so the shutdown waits for
	// them here (WaitSockets).
	sockets sync.WaitGroup
	// bodies bounds the request bodies held at once.
	bodies bodyBudget
	// Governance: managed keys, limits and the ledger, and the admin API.
	managed *govern.Managed
	gov     *govern.Governor
	admin   *govern.Admin
	// stop ends the background work of New (the managed keys' refresh).
	stop context.CancelFunc
	// now is what the console's live view shows.
	now       live
	taskStore store.Tasks
	// tryable are the client dialects the console's try-it view speaks.
	tryable []*translate.Dialect
}

// New returns a Server with its routes registered.
func New(o Options) *Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := o.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	st := o.Stored
	if st == nil {
		st = stored.New(stored.Options{Window: o.Dispatcher.Router().ContextWindow, Logger: log})
	}
	s := &Server{
		mux:       http.NewServeMux(),
		drained:   make(chan struct{}),
		log:       log,
		metrics:   newMetrics(reg),
		tasks:     o.Tasks,
		taskStore: o.TaskStore,
		stored:    st,
		managed:   govern.NewManaged(o.Keys, log),
		gov: govern.New(govern.Options{
			Counters: o.Counters, Ledger: o.Ledger, FlushInterval: o.LedgerFlush,
			Deny: o.DenyUncounted, Registry: reg, Logger: log,
		}),
	}
	s.admin = &govern.Admin{Keys: o.Keys, Ledger: o.Ledger, Managed: s.managed,
		Configured: func(name string) bool { return s.state().keys.named(name) }}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	if o.Keys != nil {
		if err := s.managed.Refresh(ctx); err != nil {
			log.Warn("managed keys could not be read; they are read again shortly", "error", err)
		}
		refresh := o.KeyRefresh
		if refresh <= 0 {
			refresh = govern.DefaultRefresh
		}
		go s.managed.Run(ctx, refresh)
	}
	s.Reload(o.Config, o.Dispatcher)
	s.mux.HandleFunc("GET /healthz", s.ready)
	s.mux.HandleFunc("GET /readyz", s.ready)
	s.mux.HandleFunc("GET /livez", s.live)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s.dialectRoutes(o.Dialects)
	for _, d := range o.Dialects.Clients() {
		if d.Try != nil {
			s.tryable = append(s.tryable, d)
		}
	}
	s.taskRoutes(o.Dialects)
	s.connectRoutes()
	s.adminRoutes()
	s.consoleRoutes()
	return s
}

// Close ends the server's background work and writes the usage records
// it still holds: call it once the requests have ended.
func (s *Server) Close(ctx context.Context) error {
	s.stop()
	return s.gov.Close(ctx)
}

// Protocols are the HTTP versions a Parley listener serves: HTTP/1.1 and
// cleartext HTTP/2, which gRPC clients need without TLS (and HTTP/2 on a
// TLS listener).
func Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// Drain marks the gateway as shutting down: from now on readiness
// answers 503, so that load balancers send new requests elsewhere, while
// the requests in flight go on.
//
// Every WebSocket connection finishes the response it is serving and
// then closes with 1001 (going away), so that its client reconnects to
// another replica; an idle one closes at once.
func (s *Server) Drain() {
	s.draining.Store(true)
	s.drainOnce.Do(func() { close(s.drained) })
}

// WaitSockets waits until every WebSocket connection has closed, or ctx
// ends. The HTTP server's shutdown does not wait for them.
func (s *Server) WaitSockets(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.sockets.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ready answers /readyz and /healthz: 200 while the gateway takes new
// requests, 503 once it drains.
func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("draining\n"))
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// live answers /livez: 200 while the process runs, draining or not.
func (s *Server) live(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}
