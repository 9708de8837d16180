package hostapi

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// rule is one parsed Grants.HTTP entry.
type rule struct {
	scheme string
	host   string     // lower-case, no trailing dot, no brackets
	ip     netip.Addr // valid if host is an IP literal
	port   string
	prefix string // path prefix, starts with "/"
}

// parseRule parses scheme://host[:port][/path-prefix]. Only http and https,
// no user info, query or fragment, no wildcards.
func parseRule(s string) (rule, error) {
	u, err := url.Parse(s)
	if err != nil {
		return rule{}, fmt.Errorf("http rule %q: %w", s, err)
	}
	r := rule{scheme: strings.ToLower(u.Scheme)}
	switch {
	case r.scheme != "http" && r.scheme != "https":
		return rule{}, fmt.Errorf("http rule %q: scheme must be http or https", s)
	case u.User != nil:
		return rule{}, fmt.Errorf("http rule %q: user info is not allowed", s)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return rule{}, fmt.Errorf("http rule %q: query and fragment are not allowed", s)
	case u.Opaque != "":
		return rule{}, fmt.Errorf("http rule %q: not a URL with a host", s)
	}
	r.host = normHost(u.Hostname())
	if r.host == "" || strings.ContainsAny(r.host, "*%") {
		return rule{}, fmt.Errorf("http rule %q: host must be a name or an IP address", s)
	}
	if ip, err := netip.ParseAddr(r.host); err == nil {
		r.ip = ip.Unmap()
	}
	r.port = u.Port()
	if r.port == "" {
		r.port = defaultPort(r.scheme)
	}
	r.prefix = u.EscapedPath()
	if r.prefix == "" {
		r.prefix = "/"
	}
	if hasDotSegment(r.prefix) {
		return rule{}, fmt.Errorf("http rule %q: path must not contain . or .. segments", s)
	}
	return r, nil
}

func normHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// matches reports whether u is inside r: same scheme, host and port, and
// a path under the prefix (at a segment boundary unless the prefix ends in
// "/"). A path with dot segments or encoded slashes or dots never matches a
// non-root prefix, since the server could resolve it outside.
func (r *rule) matches(u *url.URL) bool {
	if strings.ToLower(u.Scheme) != r.scheme || normHost(u.Hostname()) != r.host {
		return false
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(r.scheme)
	}
	if port != r.port {
		return false
	}
	if r.prefix == "/" {
		return true
	}
	p := u.EscapedPath()
	if hasDotSegment(p) || strings.Contains(strings.ToLower(p), "%2f") || strings.Contains(strings.ToLower(p), "%2e") {
		return false
	}
	if strings.HasSuffix(r.prefix, "/") {
		return strings.HasPrefix(p, r.prefix)
	}
	return p == r.prefix || strings.HasPrefix(p, r.prefix+"/")
}

func hasDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// privateSuffixes are names that by definition point into a private
// network: a rule naming such a host explicitly allows its private
// addresses.
var privateSuffixes = []string{".internal", ".local", ".lan", ".home.arpa", ".intranet", ".corp", ".private"}

// allows reports whether the rule that matched a URL permits connecting to
// addr. Public addresses always; otherwise only addresses the rule names
// explicitly: its own IP literal; loopback for localhost; private, loopback
// and link-local (never cloud metadata) for a name under a private suffix.
func (r *rule) allows(addr netip.Addr) bool {
	addr = addr.Unmap()
	if r.ip.IsValid() {
		return r.ip == addr || public(addr)
	}
	if public(addr) {
		return true
	}
	if r.host == "localhost" || strings.HasSuffix(r.host, ".localhost") {
		return addr.IsLoopback()
	}
	for _, s := range privateSuffixes {
		if strings.HasSuffix(r.host, s) {
			return !metadata(addr) && (addr.IsPrivate() || addr.IsLoopback() || addr.IsLinkLocalUnicast() || cgnat.Contains(addr))
		}
	}
	return false
}

var (
	cgnat    = netip.MustParsePrefix("100.64.0.0/10")
	blocked4 = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		cgnat,
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("240.0.0.0/4"),
	}
	blocked6 = []netip.Prefix{
		netip.MustParsePrefix("64:ff9b::/96"), // NAT64: could reach any IPv4
		netip.MustParsePrefix("64:ff9b:1::/48"),
		netip.MustParsePrefix("100::/64"),      // discard
		netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments (Teredo, ...)
		netip.MustParsePrefix("2001:db8::/32"), // documentation
		netip.MustParsePrefix("2002::/16"),     // 6to4: embeds an IPv4
	}
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack
		netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6
		netip.MustParseAddr("100.100.100.200"), // Alibaba
		netip.MustParseAddr("168.63.129.16"),   // Azure wire server
	}
)

func metadata(addr netip.Addr) bool {
	for _, m := range metadataAddrs {
		if m == addr {
			return true
		}
	}
	return false
}

// public reports whether addr is a global unicast address outside every
// private, loopback, link-local, CGNAT, metadata and special-purpose range.
func public(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsGlobalUnicast() || addr.IsPrivate() || addr.IsLoopback() || addr.IsLinkLocalUnicast() || metadata(addr) {
		return false
	}
	list := blocked6
	if addr.Is4() {
		list = blocked4
	}
	for _, p := range list {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}
