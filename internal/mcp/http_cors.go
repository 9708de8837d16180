package mcp

import (
	"net/http"
	"strings"
)

// corsExposed are the response headers a cross-origin browser client
// needs to read: the session id, the negotiated version, the challenge of
// a 401 and the delay of a 503.
const corsExposed = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After"

// cors wraps next (the handler with its access control) with CORS for the
// origins listed in AllowedOrigins: it answers their preflights itself,
// before access control (a preflight carries no credentials), and lets
// their browsers read the responses. Loopback origins pass the
// DNS-rebinding check without being listed, but get no CORS: a web page
// served on localhost can then not call the server from a browser unless
// the operator lists its origin. Without AllowedOrigins, next is returned
// as it is.
func (h *httpHandler) cors(next http.Handler) http.Handler {
	if len(h.opts.AllowedOrigins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !h.corsOrigin(origin) || !h.hostAllowed(r) {
			next.ServeHTTP(w, r)
			return
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				hd.Set("Access-Control-Allow-Headers", req) // the origin is trusted
			}
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		hd.Set("Access-Control-Expose-Headers", corsExposed)
		next.ServeHTTP(w, r)
	})
}

// corsOrigin reports whether origin is listed in AllowedOrigins (or the
// list has "*").
func (h *httpHandler) corsOrigin(origin string) bool {
	for _, a := range h.opts.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}
