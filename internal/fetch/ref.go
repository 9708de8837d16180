package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// Ref is a parsed plugin URL: an OCI reference or an HTTPS URL.
type Ref struct {
	// URL is the reference as written.
	URL string
	// OCI is true for oci:// references; false for https:// URLs.
	OCI bool
	// Host is the registry's host[:port] (OCI) or the URL's host.
	Host string
	// Repo is the repository path (OCI only).
	Repo string
	// Tag is the tag; empty when the reference names a digest.
	Tag string
	// Digest is "sha256:HEX" when the reference names one.
	Digest string
}

var (
	repoPattern   = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
	tagPattern    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)
	digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// ErrBadRef is wrapped by every [ParseRef] error.
var ErrBadRef = errors.New("bad plugin url")

// ParseRef parses "oci://HOST[:PORT]/REPO:TAG", "oci://HOST/REPO@sha256:HEX"
// or "https://HOST/PATH".
func ParseRef(s string) (Ref, error) {
	bad := func(format string, args ...any) (Ref, error) {
		return Ref{}, fmt.Errorf("%w %q: %s", ErrBadRef, s, fmt.Sprintf(format, args...))
	}
	switch {
	case strings.HasPrefix(s, "https://"):
		u, err := url.Parse(s)
		if err != nil {
			return bad("not a URL")
		}
		if u.Host == "" || u.User != nil || u.Fragment != "" {
			return bad("want https://HOST/PATH without user info or fragment")
		}
		return Ref{URL: s, Host: u.Host}, nil
	case strings.HasPrefix(s, "oci://"):
	default:
		return bad("scheme must be oci:// or https://")
	}
	rest := strings.TrimPrefix(s, "oci://")
	slash := strings.IndexByte(rest, '/')
	if slash <= 0 {
		return bad("want oci://HOST[:PORT]/REPO:TAG or oci://HOST/REPO@sha256:HEX")
	}
	r := Ref{URL: s, OCI: true, Host: rest[:slash]}
	if u, err := url.Parse("//" + r.Host); err != nil || u.Host != r.Host || u.User != nil {
		return bad("host %q is not host[:port]", r.Host)
	}
	path := rest[slash+1:]
	if at := strings.IndexByte(path, '@'); at >= 0 {
		r.Digest = path[at+1:]
		path = path[:at]
		if !digestPattern.MatchString(r.Digest) {
			return bad("digest must be sha256: and 64 lower-case hex digits")
		}
	}
	if colon := strings.LastIndexByte(path, ':'); colon >= 0 {
		r.Tag = path[colon+1:]
		path = path[:colon]
		if !tagPattern.MatchString(r.Tag) {
			return bad("tag %q is not valid", r.Tag)
		}
	}
	if r.Tag == "" && r.Digest == "" {
		return bad("name a tag (:TAG) or a digest (@sha256:HEX)")
	}
	if !repoPattern.MatchString(path) {
		return bad("repository %q is not valid (lower case, digits, ._- separators)", path)
	}
	r.Repo = path
	return r, nil
}

// String returns the reference as written.
func (r Ref) String() string { return r.URL }

// Pinned returns the reference naming digest instead of its tag.
func (r Ref) Pinned(digest string) Ref {
	p := r
	p.Tag, p.Digest = "", digest
	p.URL = "oci://" + r.Host + "/" + r.Repo + "@" + digest
	return p
}

// loopback reports whether host (host[:port]) names the loopback
// interface: localhost, 127.0.0.0/8 or ::1.
func loopback(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
