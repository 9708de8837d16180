package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

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
	srv, err := server.New(ctx, cfg, server.Options{Version: version(), Logger: log, Progress: os.Stderr})
	if err != nil {
		return usageError{err}
	}
	defer srv.Close(context.WithoutCancel(ctx))
	if len(srv.Registry().Plugins()) == 0 {
		if len(cfg.Plugins) > 0 || len(cfg.Server.PluginDirs) > 0 {
			log.Warn("no plugins loaded: the plugin directories hold no .wasm file or every plugin failed to load (see the errors above)", "plugin_dirs", cfg.Server.PluginDirs)
		} else {
			log.Warn("no plugins loaded; give --config or --plugins, or run from a directory with a wasmcp.toml")
		}
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
		log.Info("serving MCP on stdio", "plugins", len(srv.Registry().Plugins()), "tools", len(srv.Registry().Tools()))
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
		return srv.ServeStdio(context.WithoutCancel(ctx), pollable(os.Stdin, os.Stdout), os.Stdout)
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
	return srv.ServeHTTP(ctx, ln)
}
