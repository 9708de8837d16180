package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"
)

// The health endpoints, served on the --http listener (outside access
// control, never advertised to MCP clients) and on the metrics listener.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// Ready reports whether the server is ready to serve every configured
// plugin: nil when no plugin is still loading and the kv store (its
// directory, or with [cluster] the Redis) is reachable; otherwise an
// error that says why.
func (s *Server) Ready() error {
	if n := len(s.reg.Loading()); n > 0 {
		return fmt.Errorf("%d plugin(s) still loading", n)
	}
	if s.loaded != nil {
		// The first load may not have named its files yet.
		select {
		case <-s.loaded:
		default:
			return errors.New("plugins still loading")
		}
	}
	if s.clu != nil {
		return s.clu.Ready()
	}
	if dir := kvDir(s.cfg.Server.KVDir); dir != "" {
		if fi, err := os.Stat(dir); err != nil {
			return errors.New("kv store unreachable")
		} else if !fi.IsDir() {
			return errors.New("kv store is not a directory")
		}
	}
	return nil
}

// HealthHandler serves /healthz (200 while the process serves) and
// /readyz (200 when Ready, else 503 with the reason); other paths get
// 404.
func (s *Server) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.serveHealth(w, r) {
			http.NotFound(w, r)
		}
	})
}

// withHealth answers the health paths before next (the MCP handler and
// its access control) sees them.
func (s *Server) withHealth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.serveHealth(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// serveHealth answers r if it is for a health path (GET or HEAD) and
// reports whether it did.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) bool {
	var err error
	switch r.URL.Path {
	case healthzPath:
	case readyzPath:
		err = s.Ready()
	default:
		return false
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return true
	}
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: %v\n", err)
		return true
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("ok\n"))
	return true
}

// MetricsHandler serves the metrics listener: /healthz, /readyz and, when
// [telemetry] metrics is set, /metrics.
func (s *Server) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	health := s.HealthHandler()
	mux.Handle(healthzPath, health)
	mux.Handle(readyzPath, health)
	if s.tel != nil {
		mux.Handle("/metrics", s.tel.MetricsHandler())
	}
	return mux
}

// ServeMetrics serves MetricsHandler on ln until ctx is done.
func (s *Server) ServeMetrics(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	stop := context.AfterFunc(ctx, func() { _ = hs.Close() })
	defer stop()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics listener: %w", err)
	}
	return nil
}
