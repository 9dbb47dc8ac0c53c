package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/internal/textlog"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/server"
	"github.com/parleyhq/parley/stored"
	"github.com/parleyhq/parley/tasks"
	"github.com/parleyhq/parley/telemetry"
	"github.com/parleyhq/parley/translate"
)

func serve(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	file := fs.String("config", "", "configuration file (YAML); without it, the embedded defaults")
	listen := fs.String("listen", "", "address to listen on, overriding the configuration")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig(*file, e)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if err := config.CheckExposure(cfg.Listen, len(cfg.Keys)+len(cfg.Admin.Keys)); err != nil {
		return err
	}
	// The log is written behind the requests (logWriter); everything in
	// it is out by the time serve returns.
	lw := newLogWriter(e.stderr)
	defer func() { _ = lw.Close() }()
	log := slog.New(textlog.New(lw, nil))
	stopTracing, tracing, err := telemetry.Setup(ctx, buildVersion())
	if err != nil {
		return fmt.Errorf("tracing (OTEL_TRACES_EXPORTER): %w", err)
	}
	defer func() { _ = stopTracing(context.WithoutCancel(ctx)) }()
	ds := dialects.All()
	d, err := dispatch.FromConfig(cfg, ds, dispatch.BuildOptions{})
	if err != nil {
		return err
	}
	if _, err := checkStore(cfg); err != nil {
		return err
	}

	// The first SIGTERM or SIGINT drains; a second ends everything at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// SIGHUP re-reads the configuration file.
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP)
	defer signal.Stop(hups)
	var current atomic.Pointer[dispatch.Dispatcher]
	current.Store(d)
	st, where, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	ts := tasks.FromConfig(cfg, ds, st, d, nil, tasks.Options{Logger: log})
	sv := stored.New(stored.Options{
		Store: st, Retention: cfg.Responses.Retention.D(), SweepInterval: cfg.Responses.SweepInterval.D(),
		Window: func(model string) int64 { return current.Load().Router().ContextWindow(model) }, Logger: log,
	})
	counters, err := openCounters(ctx, cfg, log)
	if err != nil {
		return err
	}
	opts := server.Options{Config: cfg, Dispatcher: d, Dialects: ds, Logger: log, Tasks: ts, Stored: sv,
		Counters: counters, DenyUncounted: cfg.Redis.OnError == config.RedisDeny, Keys: st, TaskStore: st, LedgerFlush: cfg.Ledger.FlushInterval.D()}
	if !cfg.Ledger.Disabled {
		opts.Ledger = st
	}
	handler := server.New(opts)
	defer func() {
		// After the drain: the ledger's last records are written before
		// the store closes.
		closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := handler.Close(closing); err != nil {
			log.Error("the usage ledger's last records could not be written", "error", err)
		}
	}()
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	var workers sync.WaitGroup
	workers.Go(func() { ts.Run(work) })
	workers.Go(func() { sv.Sweep(work) })
	defer func() { stopWork(); workers.Wait() }()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	// Requests live on a context of their own, which a shutdown ends only
	// when its grace has run out, with a cause their replies name.
	requests, endRequests := context.WithCancelCause(context.WithoutCancel(ctx))
	defer endRequests(nil)
	conns := &connStates{}
	srv := &http.Server{
		ConnState:         conns.track,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// No write timeout: streams last as long as the upstream talks.
		IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return requests },
		// HTTP/1.1 and cleartext HTTP/2 on the one port: gRPC clients
		// reach the Connect services without TLS.
		Protocols: server.Protocols(),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("parley listening", "addr", ln.Addr().String(), "models", len(cfg.Models), "upstreams", len(cfg.Upstreams), "keys", len(cfg.Keys), "store", where, "tracing", tracing)
	if e.ready != nil {
		e.ready(ln.Addr().String())
	}
	rl := reloader{file: *file, listen: *listen, e: e, log: log, ds: ds, handler: handler, tasks: ts, current: &current, cfg: cfg}
wait:
	for {
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
			log.Info("draining", "reason", "stopped", "grace", rl.cfg.ShutdownGrace.D())
			break wait
		case sig := <-sigs:
			log.Info("draining", "signal", sig.String(), "grace", rl.cfg.ShutdownGrace.D())
			break wait
		case <-hups:
			rl.reload()
		}
	}
	cfg = rl.cfg
	return drain(log, handler, srv, ln, conns, stopWork, &workers, sigs, endRequests, cfg.ShutdownGrace.D())
}

// connStates counts the connections that are not idle: a request is being
// read or served on them, or none has been read yet.
type connStates struct {
	mu    sync.Mutex
	state map[net.Conn]http.ConnState
}

func (c *connStates) track(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == nil {
		c.state = map[net.Conn]http.ConnState{}
	}
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(c.state, conn)
	default:
		c.state[conn] = st
	}
}

func (c *connStates) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.state {
		if st != http.StateIdle {
			return true
		}
	}
	return false
}

// drainNotice is how long, at most, the connections already open go on
// taking requests after the listener has closed, while readiness answers
// 503: a load balancer's health checker on one of them sees the drain,
// and requests its pooled connections send meanwhile are served rather
// than dropped. It is skipped when nothing is in flight.
const drainNotice = time.Second

// drain shuts the gateway down without cutting what is in flight:
// readiness answers 503 at once, the listener stops accepting, the task
// service stops claiming work (giving up the claims it holds), and
// requests and streams run to their end (WebSocket connections close
// after their current response); when grace runs out first, those
// left are ended with the shutdown error, each in its dialect. A second
// signal ends everything at once.
func drain(log *slog.Logger, handler *server.Server, srv *http.Server, ln net.Listener, conns *connStates, stopWork func(),
	workers *sync.WaitGroup, sigs <-chan os.Signal, endRequests context.CancelCauseFunc, grace time.Duration) error {
	handler.Drain()
	_ = ln.Close()
	stopWork()
	graceCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		if conns.busy() {
			select {
			case <-time.After(min(drainNotice, grace)):
			case <-graceCtx.Done():
			}
		}
		err := srv.Shutdown(graceCtx)
		if errors.Is(err, net.ErrClosed) {
			err = nil // the listener, closed above
		}
		if err == nil {
			// WebSocket connections, which the HTTP server no longer
			// tracks, finish their responses and close themselves.
			err = handler.WaitSockets(graceCtx)
		}
		done <- err
	}()
	select {
	case err := <-done:
		workers.Wait()
		if err == nil {
			log.Info("drained: every request in flight finished")
			return nil
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	case sig := <-sigs:
		log.Warn("a second signal: ending every request at once", "signal", sig.String())
		endRequests(translate.ErrShuttingDown)
		_ = srv.Close()
		return errors.New("stopped by a second signal before the requests in flight finished")
	}
	// The grace ran out: the requests left end with the shutdown error,
	// and get a moment to write it.
	log.Warn("shutdown_grace ran out: ending the requests still in flight", "grace", grace)
	endRequests(translate.ErrShuttingDown)
	last, cancelLast := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelLast()
	if err := srv.Shutdown(last); err != nil {
		_ = srv.Close()
	}
	_ = handler.WaitSockets(last)
	return nil
}

// loadConfig reads a file, or returns the embedded defaults.
func loadConfig(file string, e env) (*config.Config, error) {
	if file == "" {
		return config.Default(e.lookup), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return config.Parse(file, data, e.lookup, dialects.All().Names())
}

func configCmd(args []string, e env) error {
	if len(args) != 2 || args[0] != "check" {
		return errors.New("usage: parley config check FILE")
	}
	cfg, err := loadConfig(args[1], e)
	if err != nil {
		return err
	}
	where, err := checkStore(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d keys, %d upstreams, %d models; store %s)\n", args[1], len(cfg.Keys), len(cfg.Upstreams), len(cfg.Models), where)
	return nil
}

// buildVersion is the module version Parley was built as, for traces.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}

// openCounters connects to the Redis server that keeps the limit counters
// of a fleet; nil (counters in the process) without one. A Redis server
// that does not answer at start is logged, not fatal: requests are then
// let through or refused as redis.on_error says, until it answers.
func openCounters(ctx context.Context, cfg *config.Config, log *slog.Logger) (quota.Counters, error) {
	if cfg.Redis.URL == "" {
		return nil, nil
	}
	opts, err := redis.ParseURL(cfg.Redis.URL)
	if err != nil {
		return nil, errors.New("redis.url is not a redis:// or rediss:// URL")
	}
	client := redis.NewClient(opts)
	ping, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := client.Ping(ping).Err(); err != nil {
		log.Warn("Redis does not answer; limits are checked once it does", "redis", opts.Addr, "on_error", cfg.Redis.OnError)
	}
	return quota.NewRedis(client, quota.RedisOptions{Prefix: cfg.Redis.Prefix}), nil
}
