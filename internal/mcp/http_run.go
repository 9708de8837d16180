package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// NewHTTPServer returns an http.Server for h with limits suited to MCP:
// a 10 s ReadHeaderTimeout, a 2 min IdleTimeout and 64 KiB of headers. It
// sets no ReadTimeout or WriteTimeout, which would cut long-lived SSE
// streams; the handler bounds body reads itself. logger may be nil.
func NewHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// RunHTTP serves the Streamable HTTP handler (see HTTPHandler) on ln until
// ctx ends. It then ends the handler's sessions and streams, waits up to
// 10 seconds for requests in flight, and returns nil (or the error that
// stopped serving).
func (s *Server) RunHTTP(ctx context.Context, ln net.Listener, opts *HTTPOptions) error {
	h := s.newHTTPHandler(opts)
	hs := NewHTTPServer(h, h.log)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		h.close()
		return fmt.Errorf("mcp: http: %w", err)
	case <-ctx.Done():
	}
	h.close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		_ = hs.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("mcp: http: %w", serr)
	}
	if err != nil {
		return fmt.Errorf("mcp: http shutdown: %w", err)
	}
	return nil
}
