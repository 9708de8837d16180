package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/server"
)

func cmdServe(ctx context.Context, args []string) error {
	fs := newConfigCmd("serve")
	addr := fs.String("http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio")
	metrics := fs.String("metrics", "", "serve /metrics, /healthz and /readyz on this address (e.g. 127.0.0.1:9464); default [telemetry] metrics")
	cfg, _, err := fs.load(args, nil)
	if err != nil {
		return err
	}
	if *metrics != "" {
		cfg.Telemetry.Metrics = *metrics
	}
	setHeapFloor()
	log := newLogger(cfg.Server.LogLevel, cfg.Server.LogFormat)
	// Progress lines are for a person at a terminal; a JSON log is for a
	// machine, and every line of it must be a record.
	var progress io.Writer = os.Stderr
	if cfg.Server.LogFormat == "json" {
		progress = nil
	}
	srv, err := server.New(ctx, cfg, server.Options{Version: version(), Logger: log, Progress: progress, Background: true})
	if err != nil {
		return usageError{err}
	}
	defer srv.Close(context.WithoutCancel(ctx))
	defer reloadOnHangup(srv)()
	// The plugins load while the transport already answers initialize
	// (lists and calls wait for them; see server.Options.Background). A
	// plugin that must load and does not stops the server, as before it
	// started serving: failed is set and the transport is shut down.
	var failed atomic.Pointer[error]
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	go func() {
		err := <-srv.StartErr()
		if err != nil {
			log.Error("a plugin that must load failed to load; stopping", "error", err)
			failed.Store(&err)
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			stopServing()
			return
		}
		warnNoPlugins(cfg, log, srv)
	}()
	result := func(err error) error {
		if f := failed.Load(); f != nil {
			return usageError{*f}
		}
		return err
	}
	if a := cfg.Telemetry.Metrics; a != "" {
		mln, err := net.Listen("tcp", a)
		if err != nil {
			return fmt.Errorf("metrics listen: %w", err)
		}
		fmt.Fprintf(os.Stderr, "wasmcp: serving metrics on http://%s/metrics\n", mln.Addr())
		mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
		defer stopMetrics()
		go func() {
			if err := srv.ServeMetrics(mctx, mln); err != nil {
				log.Error("metrics listener failed", "error", err)
			}
		}()
	}
	grace := time.Duration(cfg.Server.ShutdownGrace)
	if *addr == "" {
		log.Info("serving MCP on stdio")
		// On SIGTERM or SIGINT: refuse new requests, let the ones in
		// flight finish for the grace period, cancel the rest; ServeStdio
		// returns once every answer is written.
		stop := context.AfterFunc(ctx, func() {
			log.Info("shutting down", "grace", grace)
			sctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				log.Warn("shutdown grace period over; requests still running were cancelled", "grace", grace)
			}
		})
		defer stop()
		return result(srv.ServeStdio(context.WithoutCancel(ctx), pollable(os.Stdin, os.Stdout), os.Stdout))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	path := cfg.HTTP.Path
	if path == "" {
		path = "/mcp"
	}
	also := ""
	if cfg.HTTP.SSE {
		also = " (and HTTP+SSE, the 2024-11-05 transport, on " + cfg.HTTP.SSEPath + ")"
	}
	fmt.Fprintf(os.Stderr, "wasmcp: serving MCP on http://%s%s%s\n", ln.Addr(), path, also)
	// On SIGTERM or SIGINT ServeHTTP stops accepting, lets the requests in
	// flight finish for the grace period, cancels the rest and returns.
	stop := context.AfterFunc(ctx, func() { log.Info("shutting down", "grace", grace) })
	defer stop()
	return result(srv.ServeHTTP(serveCtx, ln))
}

// warnNoPlugins warns when the first load left nothing to serve.
func warnNoPlugins(cfg *config.Config, log *slog.Logger, srv *server.Server) {
	n := len(srv.Registry().Plugins())
	if n > 0 {
		log.Info("plugins loaded", "plugins", n, "tools", len(srv.Registry().Tools()))
		return
	}
	if len(cfg.Plugins) > 0 || len(cfg.Server.PluginDirs) > 0 {
		log.Warn("no plugins loaded: the plugin directories hold no .wasm file or every plugin failed to load (see the errors above)", "plugin_dirs", cfg.Server.PluginDirs)
	} else {
		log.Warn("no plugins loaded; give --config or --plugins, or run from a directory with a wasmcp.toml")
	}
}

// reloadOnHangup reloads the [authz] policies and wasmcp.lock's pinned
// definitions on every SIGHUP until the returned function is called (a
// policy or lock that does not load keeps the ones in force; the server
// logs it).
func reloadOnHangup(srv *server.Server) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				_ = srv.ReloadAuthz()
				_ = srv.ReloadPins()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}
