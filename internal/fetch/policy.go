package fetch

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// netClass is a kind of network address; a set of them (the bits) is
// what a plugin source may reach.
type netClass uint8

const (
	netPublic    netClass = 1 << iota
	netPrivate            // RFC 1918, fc00::/7, 100.64.0.0/10
	netLinkLocal          // 169.254.0.0/16 (cloud metadata), fe80::/10
	netLoopback           // 127.0.0.0/8, ::1, and 0.0.0.0/8 and :: (which reach this host)
	netReserved           // multicast and the rest that is not global unicast
	netAll       = netPublic | netPrivate | netLinkLocal | netLoopback | netReserved
)

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
)

func (c netClass) String() string {
	var s []string
	for _, n := range []struct {
		c    netClass
		name string
	}{{netPublic, "public"}, {netPrivate, "private"}, {netLinkLocal, "link-local"}, {netLoopback, "loopback"}, {netReserved, "reserved"}} {
		if c&n.c != 0 {
			s = append(s, n.name)
		}
	}
	return strings.Join(s, "+")
}

// classOf returns the kind of address a is.
func classOf(a netip.Addr) netClass {
	a = a.Unmap()
	switch {
	case a.IsLoopback(), a.IsUnspecified(), thisNetwork.Contains(a):
		return netLoopback
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return netLinkLocal
	case a.IsPrivate(), sharedSpace.Contains(a):
		return netPrivate
	case !a.IsGlobalUnicast():
		return netReserved
	}
	return netPublic
}

// addrClass is classOf, but an address tests list in f.public is public.
func (f *Fetcher) addrClass(ap netip.AddrPort) netClass {
	if f.public[ap] {
		return netPublic
	}
	return classOf(ap.Addr())
}

// classesOf returns the kinds of address host (host[:port]) is or
// resolves to; 0 when it does not resolve.
func (f *Fetcher) classesOf(ctx context.Context, host string) netClass {
	h, port := host, uint16(443)
	if hh, p, err := net.SplitHostPort(host); err == nil {
		h = hh
		if n, err := strconv.ParseUint(p, 10, 16); err == nil {
			port = uint16(n)
		}
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return netLoopback
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return f.addrClass(netip.AddrPortFrom(a, port))
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return 0
	}
	var c netClass
	for _, a := range addrs {
		c |= f.addrClass(netip.AddrPortFrom(a, port))
	}
	return c
}

// reach returns what a source at host (host[:port], as the reference
// names it) may connect to: public addresses, and the kinds of private
// address host itself is; everything when host is loopback by address
// or as localhost (a registry on the operator's own machine). A host
// named by DNS never opens loopback: a name that resolves there is not
// dialled at all.
func (f *Fetcher) reach(ctx context.Context, host string) netClass {
	c := f.classesOf(ctx, host)
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	literal := strings.EqualFold(h, "localhost") || net.ParseIP(h) != nil
	if literal && c&netLoopback != 0 {
		return netAll
	}
	if !literal {
		c &^= netLoopback | netReserved
	}
	return c | netPublic
}

// baseFor returns the transport for requests on behalf of a source at
// host: every connection it makes, to the registry, its token realm, a
// redirect's target or a blob store, is checked when dialled against
// reach(host), so that no request can reach an address the source may
// not.
func (f *Fetcher) baseFor(ctx context.Context, host string) http.RoundTripper {
	r := f.reach(ctx, host)
	f.mu.Lock()
	defer f.mu.Unlock()
	if rt, ok := f.bases[r]; ok {
		return rt
	}
	rt := guard{f.newTransport(r)}
	f.bases[r] = rt
	return rt
}

// newTransport returns an HTTP transport whose connections go only to
// addresses of the classes in reach. Through a proxy (HTTPS_PROXY and
// friends), the dial goes to the proxy, and the destination is checked by
// name before it is handed to it.
func (f *Fetcher) newTransport(reach netClass) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: f.opts.RootCAs, MinVersion: tls.VersionTLS12}
	t.TLSHandshakeTimeout = 10 * time.Second
	t.ResponseHeaderTimeout = 30 * time.Second
	plain := &net.Dialer{Timeout: 10 * time.Second}
	t.Proxy = http.ProxyFromEnvironment
	t.DialContext = plain.DialContext
	if reach == netAll {
		return t
	}
	checked := &net.Dialer{Timeout: 10 * time.Second, ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
		return f.allowDial(reach, address)
	}}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		f.mu.Lock()
		proxy := f.proxies[addr]
		f.mu.Unlock()
		if proxy {
			return plain.DialContext(ctx, network, addr)
		}
		return checked.DialContext(ctx, network, addr)
	}
	t.Proxy = func(req *http.Request) (*url.URL, error) {
		u, err := http.ProxyFromEnvironment(req)
		if u == nil || err != nil {
			return u, err
		}
		if c := f.classesOf(req.Context(), req.URL.Host); c&^reach != 0 {
			return nil, fmt.Errorf("%w: %s is a %s address, which this plugin source may not reach", ErrInsecure, req.URL.Hostname(), c&^reach)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
		}
		f.mu.Lock()
		f.proxies[net.JoinHostPort(u.Hostname(), port)] = true
		f.mu.Unlock()
		return u, nil
	}
	return t
}

// allowDial refuses a connection to address (ip:port, as dialled) that
// is not of a class in reach.
func (f *Fetcher) allowDial(reach netClass, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: dial %q", ErrInsecure, address)
	}
	if c := f.addrClass(ap); c&reach == 0 {
		return fmt.Errorf("%w: %s is a %s address, which this plugin source may not reach", ErrInsecure, ap.Addr(), c)
	}
	return nil
}
