package auth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// wellKnown is the RFC 9728 well-known path prefix.
const wellKnown = "/.well-known/oauth-protected-resource"

// protectedResourceMetadata is the RFC 9728 document.
type protectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// buildMetadata prepares the metadata document and its URL (JWT mode).
func (a *Authenticator) buildMetadata() error {
	u, err := url.Parse(a.cfg.Resource)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return errors.New("resource must be an absolute URL")
	}
	path := strings.TrimSuffix(u.Path, "/")
	a.prmURL = u.Scheme + "://" + u.Host + wellKnown + path
	a.prmPaths = []string{wellKnown}
	if path != "" {
		a.prmPaths = append(a.prmPaths, wellKnown+path)
	}
	servers := a.cfg.AuthorizationServers
	if len(servers) == 0 {
		servers = []string{a.cfg.Issuer}
	}
	scopes := a.cfg.ScopesSupported
	if len(scopes) == 0 {
		scopes = a.cfg.RequiredScopes
	}
	a.prm, err = json.Marshal(protectedResourceMetadata{
		Resource:               a.cfg.Resource,
		AuthorizationServers:   servers,
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
	})
	return err
}

// MetadataURL returns the absolute URL of the protected resource
// metadata, or "" in bearer mode (which publishes none).
func (a *Authenticator) MetadataURL() string { return a.prmURL }

// Middleware returns a wrapper of the MCP handler that serves the
// protected resource metadata (JWT mode) at the well-known paths, for
// mcpPath too, and authenticates every other request: refused requests
// get their 401 or 403 challenge, accepted ones go to the wrapped handler
// as bind(r, identity) (bind puts the identity where the handler finds
// it; nil passes r unchanged).
func (a *Authenticator) Middleware(mcpPath string, bind func(*http.Request, Identity) *http.Request) func(http.Handler) http.Handler {
	paths := map[string]bool{}
	if a.prm != nil {
		for _, p := range a.prmPaths {
			paths[p] = true
		}
		if mcpPath != "" && mcpPath != "/" {
			paths[wellKnown+strings.TrimSuffix(mcpPath, "/")] = true
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if paths[r.URL.Path] {
				a.serveMetadata(w, r)
				return
			}
			id, err := a.Authenticate(r.Context(), r)
			if err != nil {
				a.refuse(w, r, err)
				return
			}
			if bind != nil {
				r = bind(r, id)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func (a *Authenticator) serveMetadata(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		h.Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "max-age=3600")
	h.Set("Content-Length", strconv.Itoa(len(a.prm)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(a.prm)
	}
}

// Challenge returns the WWW-Authenticate value for a refusal.
func (a *Authenticator) Challenge(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		e = invalidToken("refused")
	}
	var params []string
	if e.Code != "" {
		params = append(params, `error="`+e.Code+`"`, `error_description="`+quoteSafe(e.Description)+`"`)
	}
	if len(a.cfg.RequiredScopes) > 0 && (e.Code == "" || e.Code == "insufficient_scope") {
		params = append(params, `scope="`+quoteSafe(strings.Join(a.cfg.RequiredScopes, " "))+`"`)
	}
	if a.prmURL != "" {
		params = append(params, `resource_metadata="`+a.prmURL+`"`)
	} else if len(params) == 0 {
		params = append(params, `realm="mcp"`)
	}
	return "Bearer " + strings.Join(params, ", ")
}

// refuse writes the challenge and a JSON-RPC error body.
func (a *Authenticator) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = invalidToken("refused")
	}
	a.log.Debug("request refused", "status", e.Status, "reason", e.Description, "remote", r.RemoteAddr)
	h := w.Header()
	h.Set("WWW-Authenticate", a.Challenge(e))
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	msg := "unauthorized: " + e.Description
	if e.Status == http.StatusForbidden {
		msg = "forbidden: " + e.Description
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": -32600, "message": msg},
	})
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// quoteSafe drops the characters a quoted-string cannot carry as is.
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < ' ' || r > '~' {
			return -1
		}
		return r
	}, s)
}
