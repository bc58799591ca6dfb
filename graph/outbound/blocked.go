package outbound

import "net/netip"

// The address rule, after IANA's special-purpose address registries
// (https://www.iana.org/assignments/iana-ipv4-special-registry,
// https://www.iana.org/assignments/iana-ipv6-special-registry).
//
// Loopback and private networks are refused unless the configuration allows
// them (tests, and servers whose git or spec sources live on the same
// network). Everything else that is not a public unicast destination is
// refused whatever the configuration: link-local (cloud metadata services),
// multicast and broadcast, "this network", documentation, benchmarking and
// reserved ranges, IPv6 outside global unicast. Addresses that embed an IPv4
// address a translator or tunnel would reach (IPv4-mapped, NAT64's
// well-known prefix, 6to4) are judged by that IPv4 address; tunnels whose
// far end cannot be judged (Teredo) are refused.

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

var (
	// private4 and private6 are loopback and private networks: refused
	// unless allowLoopback.
	private4 = mustPrefixes(
		"127.0.0.0/8",    // loopback
		"10.0.0.0/8",     // private (RFC 1918)
		"172.16.0.0/12",  // private
		"192.168.0.0/16", // private
		"100.64.0.0/10",  // shared address space (carrier-grade NAT): private in effect
	)
	private6 = mustPrefixes(
		"::1/128",        // loopback
		"fc00::/7",       // unique local
		"fec0::/10",      // site-local (deprecated): private in effect
		"64:ff9b:1::/48", // local-use NAT64 (RFC 8215): a private translator
	)

	// special4 are IPv4 ranges refused whatever the configuration.
	special4 = mustPrefixes(
		"0.0.0.0/8",       // "this network"; Linux routes 0.0.0.0 to the local host
		"169.254.0.0/16",  // link-local: cloud metadata services
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved, and 255.255.255.255 (limited broadcast)
	)

	// globalUnicast6 is the only IPv6 space allocated for public unicast:
	// anything outside it (::, IPv4-compatible ::/96, discard 100::/64,
	// link-local fe80::/10, multicast ff00::/8, SRv6 5f00::/16, unallocated
	// space) is refused, but for the prefixes judged above or below.
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	// special6 are ranges of 2000::/3 refused whatever the configuration.
	special6 = mustPrefixes(
		"2001::/23",     // IETF protocol assignments: Teredo 2001::/32, ORCHID, benchmarking 2001:2::/48...
		"2001:db8::/32", // documentation
		"3fff::/20",     // documentation (RFC 9637)
	)

	nat64  = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 prefix (RFC 6052)
	sixTo4 = netip.MustParsePrefix("2002::/16")    // 6to4 (RFC 3056)
)

func containedIn(prefixes []netip.Prefix, ip netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Blocked reports whether connecting to ip is refused. allowLoopback lets
// loopback and private addresses through.
func Blocked(ip netip.Addr, allowLoopback bool) bool {
	// SECURITY: zones would make every prefix test false; an IPv4-mapped
	// address reaches its IPv4 address.
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return true
	}
	if ip.Is4() {
		switch {
		case containedIn(special4, ip):
			return true
		case containedIn(private4, ip):
			return !allowLoopback
		}
		return false
	}
	switch {
	case containedIn(private6, ip):
		return !allowLoopback
	case nat64.Contains(ip):
		// SECURITY: the translator connects to the IPv4 address in the
		// last 32 bits; 64:ff9b::a9fe:a9fe is the metadata service.
		b := ip.As16()
		return Blocked(netip.AddrFrom4([4]byte(b[12:16])), allowLoopback)
	case sixTo4.Contains(ip):
		// SECURITY: 2002:AABB:CCDD::/48 is the 6to4 site of AA.BB.CC.DD.
		b := ip.As16()
		return Blocked(netip.AddrFrom4([4]byte(b[2:6])), allowLoopback)
	case !globalUnicast6.Contains(ip), containedIn(special6, ip):
		return true
	}
	return false
}
