package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/wasmcp/wasmcp/internal/auth"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// ServeHTTP serves MCP over Streamable HTTP on ln until ctx is done, with
// the [http] limits and the [auth] access control of the configuration.
// When ctx ends it stops accepting, lets the requests in flight finish for
// [server] shutdown_grace, then cancels the rest and returns nil.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener) error {
	return s.mcp.RunHTTP(ctx, ln, s.httpOptions())
}

// Shutdown stops the server gracefully on every transport: no new
// requests, the ones in flight answered until ctx ends, then cancelled.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.mcp.Shutdown(ctx)
}

// HTTPHandler returns the Streamable HTTP handler with the configuration's
// limits and access control (for tests and embedding; ServeHTTP also sets
// up the listener limits and graceful shutdown).
func (s *Server) HTTPHandler() http.Handler {
	return s.mcp.HTTPHandler(s.httpOptions())
}

func (s *Server) httpOptions() *mcp.HTTPOptions {
	h := s.cfg.HTTP
	o := &mcp.HTTPOptions{
		Path:               h.Path,
		SSEPath:            h.SSEPath,
		MessagesPath:       h.MessagesPath,
		DisableSSE:         !h.SSE,
		AllowedOrigins:     h.AllowedOrigins,
		AllowedHosts:       h.AllowedHosts,
		MaxBodyBytes:       int64(h.MaxBody),
		MaxSessions:        h.MaxSessions,
		SessionIdleTimeout: time.Duration(h.SessionIdleTimeout),
		ReplayBytes:        int(h.ReplayBuffer),
		ReadTimeout:        time.Duration(h.ReadTimeout),
		WriteTimeout:       time.Duration(h.WriteTimeout),
		ReadHeaderTimeout:  time.Duration(h.ReadHeaderTimeout),
		IdleTimeout:        time.Duration(h.IdleTimeout),
		MaxHeaderBytes:     int(h.MaxHeaderBytes),
		MaxConns:           h.MaxConns,
		ShutdownGrace:      time.Duration(s.cfg.Server.ShutdownGrace),
		Logger:             s.log,
	}
	// Validated with the configuration: it parses.
	o.TrustedProxies, _ = config.ParsePrefixes(h.TrustedProxies)
	if s.auth != nil {
		path := h.Path
		if path == "" {
			path = "/mcp"
		}
		// A request access control refuses is observed too.
		o.Middleware = s.tel.WrapAccessControl(path, s.auth.Middleware(path, bindIdentity))
	}
	// The health endpoints come before access control.
	inner := o.Middleware
	o.Middleware = func(next http.Handler) http.Handler {
		if inner != nil {
			next = inner(next)
		}
		return s.withHealth(next)
	}
	return o
}

// bindIdentity hands the authenticated caller to the engine.
func bindIdentity(r *http.Request, id auth.Identity) *http.Request {
	return r.WithContext(mcp.ContextWithIdentity(r.Context(), mcp.Identity{Principal: id.Subject, Scopes: id.Scopes, Claims: id.Claims}))
}

// newAuthenticator builds the access control of [auth], or nil when it is
// off.
func newAuthenticator(cfg *config.Config, log *slog.Logger) (*auth.Authenticator, error) {
	a := &cfg.Auth
	if !a.Enabled() {
		return nil, nil
	}
	c := &auth.Config{
		Mode:                 a.Mode,
		RequiredScopes:       a.RequiredScopes,
		Resource:             a.Resource,
		Audience:             a.Audience,
		Issuer:               a.Issuer,
		JWKSFile:             a.JWKSFile,
		JWKSURL:              a.JWKSURL,
		AuthorizationServers: a.AuthorizationServers,
		ScopesSupported:      a.ScopesSupported,
		Leeway:               time.Duration(a.Leeway),
		JWKSWait:             time.Duration(a.JWKSWait),
		Logger:               log,
		Claims:               cfg.Authz.Enabled(), // the policies read them
	}
	if a.Leeway == 0 {
		c.Leeway = -1 // "0s" in the file means no leeway
	}
	for _, t := range a.Tokens {
		c.Tokens = append(c.Tokens, auth.Token{Secret: string(t)})
	}
	for _, t := range a.Token {
		c.Tokens = append(c.Tokens, auth.Token{Name: t.Name, Secret: string(t.Token), Scopes: t.Scopes})
	}
	if len(c.ScopesSupported) == 0 {
		// The scopes that mean something here: the required ones and
		// every plugin's.
		scopes := slices.Clone(a.RequiredScopes)
		for i := range cfg.Plugins {
			scopes = append(scopes, cfg.Plugins[i].Scopes...)
		}
		slices.Sort(scopes)
		c.ScopesSupported = slices.Compact(scopes)
	}
	au, err := auth.New(c)
	if err != nil {
		return nil, fmt.Errorf("[auth]: %w", err)
	}
	return au, nil
}
