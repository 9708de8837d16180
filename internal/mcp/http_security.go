package mcp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// checkOrigin validates the Origin and Host headers against DNS
// rebinding; it returns why a request is refused, or "".
func (h *httpHandler) checkOrigin(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" && !h.originAllowed(o) {
		return "origin " + o + " is not allowed"
	}
	if !h.hostAllowed(r) {
		return "host " + r.Host + " is not allowed"
	}
	return ""
}

func (h *httpHandler) originAllowed(origin string) bool {
	if h.corsOrigin(origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

func (h *httpHandler) hostAllowed(r *http.Request) bool {
	host := r.Host
	name := host
	if hn, _, err := net.SplitHostPort(host); err == nil {
		name = hn
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if isLoopbackHost(name) {
		return true
	}
	for _, a := range h.opts.AllowedHosts {
		if a == "*" || strings.EqualFold(a, host) || strings.EqualFold(a, name) {
			return true
		}
	}
	if len(h.opts.AllowedHosts) > 0 {
		return false
	}
	// No allow-list: refuse non-loopback names only on loopback listeners.
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ta, ok := la.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
			return false
		}
	}
	return true
}

// isLoopbackHost reports whether a host name or address is loopback.
func isLoopbackHost(name string) bool {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}
