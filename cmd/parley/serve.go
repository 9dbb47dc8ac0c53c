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
	"sync"
	"syscall"
	"time"

	"github.com/parleyhq/parley/config"
	"github.com/parleyhq/parley/dialects"
	"github.com/parleyhq/parley/dispatch"
	"github.com/parleyhq/parley/server"
	"github.com/parleyhq/parley/stored"
	"github.com/parleyhq/parley/tasks"
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
	if err := config.CheckExposure(cfg.Listen, len(cfg.Keys)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	ds := dialects.All()
	d, err := dispatch.FromConfig(cfg, ds, dispatch.BuildOptions{})
	if err != nil {
		return err
	}
	if _, err := checkStore(cfg); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, where, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	ts := tasks.FromConfig(cfg, ds, st, d, nil, tasks.Options{Logger: log})
	sv := stored.New(stored.Options{
		Store: st, Retention: cfg.Responses.Retention.D(), SweepInterval: cfg.Responses.SweepInterval.D(),
		Window: d.Router().ContextWindow, Logger: log,
	})
	handler := server.New(server.Options{Config: cfg, Dispatcher: d, Dialects: ds, Logger: log, Tasks: ts, Stored: sv})
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	var workers sync.WaitGroup
	workers.Go(func() { ts.Run(work) })
	workers.Go(func() { sv.Sweep(work) })
	defer func() { stopWork(); workers.Wait() }()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// No write timeout: streams last as long as the upstream talks.
		IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx },
		// HTTP/1.1 and cleartext HTTP/2 on the one port: gRPC clients
		// reach the Connect services without TLS.
		Protocols: server.Protocols(),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("parley listening", "addr", ln.Addr().String(), "models", len(cfg.Models), "upstreams", len(cfg.Upstreams), "keys", len(cfg.Keys), "store", where)
	if e.ready != nil {
		e.ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
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
