// Package fetch retrieves web pages for web_fetch without becoming a server-side request
// forgery tool: only http and https; hosts written as numbers in non-standard spellings are
// refused; every address actually dialed (after DNS, on every redirect) is checked against the
// loopback, private, link-local, CGNAT, multicast, reserved and unspecified ranges, so a name
// that resolves (or re-resolves) to an internal address gets nowhere; an allow-list lets the
// user open specific internal hosts. HTML is converted to Markdown or text. It imports nothing
// from MCP.
package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// blockedPrefixes are refused unless allow-listed, beyond what netip's predicates cover.
var blockedPrefixes = []struct {
	p      netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4) or broadcast"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible IPv6 (::/96)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 (64:ff9b::/96), which can reach internal IPv4 addresses"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64 (64:ff9b:1::/48)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (100::/64)"},
	{netip.MustParsePrefix("2001::/32"), "Teredo (2001::/32), which embeds IPv4 addresses"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (2001:db8::/32)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (2002::/16), which embeds IPv4 addresses"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (fec0::/10)"},
}

// BlockedReason says why ip may not be fetched, or "" when it may.
func BlockedReason(ip netip.Addr) string {
	if ip.Zone() != "" {
		return "an IPv6 address with a zone"
	}
	if ip.Is4In6() {
		return "an IPv4-mapped IPv6 address (::ffff:a.b.c.d)"
	}
	switch {
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "a private network address"
	case ip.IsLinkLocalUnicast():
		return "link-local (cloud metadata services live here)"
	case ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast(), ip.IsMulticast():
		return "multicast"
	}
	for _, b := range blockedPrefixes {
		if b.p.Contains(ip) {
			return b.reason
		}
	}
	return ""
}

// numericHost reports a host that is not a standard dotted-quad or IPv6 literal but that some
// resolvers (glibc inet_aton, browsers) read as an IPv4 address: 2130706433, 0x7f000001,
// 0177.0.0.1, 127.1.
func numericHost(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return false
	}
	labels := strings.Split(h, ".")
	last := labels[len(labels)-1]
	// WHATWG URL: a host whose last label is numeric is an IPv4 address.
	if isNumberLabel(last) {
		return true
	}
	return false
}

func isNumberLabel(s string) bool {
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		_, err := strconv.ParseUint(s[2:]+"0", 16, 64) // "0x" alone counts as 0
		return err == nil
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Allow is a parsed allow-list.
type Allow struct {
	hosts    map[string]bool // "host" (any port) and "host:port", lower case
	prefixes []netip.Prefix
	addrs    map[netip.AddrPort]bool
}

// ParseAllow reads entries "host", "host:port", "IP", "IP:port", "[IPv6]:port" or a CIDR.
func ParseAllow(entries []string) (*Allow, error) {
	a := &Allow{hosts: map[string]bool{}, addrs: map[netip.AddrPort]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			a.prefixes = append(a.prefixes, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		if ap, err := netip.ParseAddrPort(e); err == nil {
			a.addrs[ap] = true
			continue
		}
		host, port, hasPort := strings.Cut(e, ":")
		if strings.ContainsAny(host, "/ []@") || host == "" {
			return nil, fmt.Errorf("allow entry %q: write host, host:port, an IP address or a CIDR (10.0.0.0/8)", e)
		}
		if hasPort {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("allow entry %q: port %q is not a number 1-65535", e, port)
			}
		}
		a.hosts[strings.ToLower(strings.TrimSuffix(e, "."))] = true
	}
	return a, nil
}

// Host says whether host (as written in the URL) with port is allow-listed by name.
func (a *Allow) Host(host, port string) bool {
	if a == nil {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return a.hosts[h] || a.hosts[h+":"+port]
}

// Addr says whether an address is allow-listed.
func (a *Allow) Addr(ap netip.AddrPort) bool {
	if a == nil {
		return false
	}
	ip := ap.Addr().Unmap()
	if a.addrs[netip.AddrPortFrom(ip, ap.Port())] {
		return true
	}
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Empty reports whether nothing is allow-listed.
func (a *Allow) Empty() bool {
	return a == nil || (len(a.hosts) == 0 && len(a.prefixes) == 0 && len(a.addrs) == 0)
}

// GuardedDial is a DialContext that applies the SSRF rules to the address actually dialed:
// Control runs after DNS resolution, on the exact address the socket connects to, for every
// address tried, so a name that resolves (or re-resolves) to an internal address is refused
// whatever the URL said. allow returns the list in force (hosts and addresses the user
// trusts); refuse builds the error for a blocked address (nil: *RefusedError). Every client
// the hub points at an address on someone else's word (web_fetch, OAuth metadata, client
// metadata documents) dials through it.
func GuardedDial(dialer *net.Dialer, allow func() *Allow, refuse func(host, address, reason string) error) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if refuse == nil {
		refuse = func(_, address, reason string) error { return &RefusedError{address, reason} }
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		list := allow()
		byName := list.Host(host, port)
		d := *dialer
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &RefusedError{address, "not an IP address"}
			}
			if byName || list.Addr(ap) {
				return nil
			}
			if reason := BlockedReason(ap.Addr()); reason != "" {
				return refuse(host, address, reason)
			}
			return nil
		}
		return d.DialContext(ctx, network, addr)
	}
}
