package mcp

import (
	"net/netip"
	"testing"
)

// TestClientAddr: the client of a request from a trusted proxy is the
// last X-Forwarded-For hop, read from the end, that is not a trusted
// proxy; an untrusted peer's header is not read.
func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("127.0.0.1/32")}
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"untrusted peer", "192.0.2.1", []string{"203.0.113.7"}, "192.0.2.1"},
		{"no header", "10.0.0.1", nil, "10.0.0.1"},
		{"one hop", "10.0.0.1", []string{"203.0.113.7"}, "203.0.113.7"},
		{"spoofed start", "10.0.0.1", []string{"1.1.1.1, 203.0.113.7"}, "203.0.113.7"},
		{"trusted hops skipped", "10.0.0.1", []string{"203.0.113.7, 10.9.9.9", "10.2.2.2"}, "203.0.113.7"},
		{"all trusted", "10.0.0.1", []string{"10.3.3.3, 10.2.2.2"}, "10.3.3.3"},
		{"bad hop stops", "10.0.0.1", []string{"203.0.113.7, junk, 10.2.2.2"}, "10.2.2.2"},
		{"empty hop stops", "10.0.0.1", []string{"203.0.113.7,,"}, "10.0.0.1"},
		{"IPv6 peer", "::1", []string{"2001:db8::5"}, "2001:db8::5"},
		{"IPv4-mapped hop", "127.0.0.1", []string{"::ffff:10.0.0.5, ::ffff:203.0.113.9"}, "203.0.113.9"},
		{"peer not an IP", "pipe", []string{"203.0.113.7"}, "pipe"},
	} {
		if got := clientAddr(tc.peer, tc.xff, trusted); got != tc.want {
			t.Errorf("%s: clientAddr(%s, %q) = %s, want %s", tc.name, tc.peer, tc.xff, got, tc.want)
		}
	}
}

// FuzzClientAddr: any header gives an address that is the peer or
// parses, without panicking.
func FuzzClientAddr(f *testing.F) {
	f.Add("203.0.113.7, 10.0.0.2")
	f.Add(", ,::ffff:1.2.3.4")
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	f.Fuzz(func(t *testing.T, xff string) {
		got := clientAddr("10.0.0.1", []string{xff}, trusted)
		if _, err := netip.ParseAddr(got); err != nil {
			t.Fatalf("clientAddr gave %q, not an address", got)
		}
	})
}
