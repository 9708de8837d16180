package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParsePrefixes parses addresses given as IPs ("10.0.0.1", "::1") or
// CIDR prefixes ("10.0.0.0/8"); an IP is the prefix of that one address.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, s := range list {
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %q is not an IP or a CIDR prefix: %w", i, s, err)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %q is not an IP or a CIDR prefix: %w", i, s, err)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
