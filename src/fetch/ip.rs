//! Which IP addresses a source download may connect to.
//!
//! The rule is "globally reachable unicast only". IPv4 uses a deny-list of the special
//! ranges; IPv6 is stricter: only global unicast (`2000::/3`) can be public at all, which
//! rules out unique-local, link-local, site-local, multicast and everything not yet
//! allocated in one stroke. IPv6 forms that embed an IPv4 address (mapped, compatible,
//! NAT64, 6to4, Teredo) are judged by the IPv4 address they lead to, because that is
//! where the packets end up.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv4 ranges that are not publicly routable destinations.
const BLOCKED_V4: &[(Ipv4Addr, u8)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8),     // "this network", includes 0.0.0.0
    (Ipv4Addr::new(10, 0, 0, 0), 8),    // private
    (Ipv4Addr::new(100, 64, 0, 0), 10), // carrier-grade NAT
    (Ipv4Addr::new(127, 0, 0, 0), 8),   // loopback
    (Ipv4Addr::new(169, 254, 0, 0), 16), // link-local, includes cloud metadata 169.254.169.254
    (Ipv4Addr::new(172, 16, 0, 0), 12), // private
    (Ipv4Addr::new(192, 0, 0, 0), 24),  // IETF protocol assignments
    (Ipv4Addr::new(192, 0, 2, 0), 24),  // documentation TEST-NET-1
    (Ipv4Addr::new(192, 88, 99, 0), 24), // deprecated 6to4 relay anycast
    (Ipv4Addr::new(192, 168, 0, 0), 16), // private
    (Ipv4Addr::new(198, 18, 0, 0), 15), // benchmarking
    (Ipv4Addr::new(198, 51, 100, 0), 24), // documentation TEST-NET-2
    (Ipv4Addr::new(203, 0, 113, 0), 24), // documentation TEST-NET-3
    (Ipv4Addr::new(224, 0, 0, 0), 4),   // multicast
    (Ipv4Addr::new(240, 0, 0, 0), 4),   // reserved, includes broadcast 255.255.255.255
];

/// Special-purpose ranges inside IPv6 global unicast (`2000::/3`).
const BLOCKED_V6_GLOBAL: &[(Ipv6Addr, u8)] = &[
    // IETF protocol assignments (benchmarking 2001:2::/48, ORCHID, ...). Teredo
    // (2001::/32) lies inside too but is handled before this list is consulted.
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32), // documentation
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20),     // documentation (RFC 9637)
];

/// `true` when `ip` is a globally reachable unicast address a source may be fetched from;
/// `false` for loopback, private, link-local, unspecified, multicast, broadcast, CGNAT,
/// documentation, benchmarking and reserved ranges, IPv6 unique-local and site-local, and
/// IPv6 addresses that embed (mapped, compatible, NAT64, 6to4, Teredo) such an IPv4 address.
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let bits = ip.to_bits();
    !BLOCKED_V4
        .iter()
        .any(|&(net, len)| in_prefix_v4(bits, net.to_bits(), len))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let bits = ip.to_bits();
    let low32 = Ipv4Addr::from_bits(bits as u32);

    // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, which also covers :: and ::1
    // as 0.0.0.0 and 0.0.0.1) reach the embedded IPv4 address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    if in_prefix_v6(bits, 0, 96) {
        return is_public_v4(low32);
    }
    // NAT64 well-known prefix: a translator forwards to the embedded IPv4 address.
    if in_prefix_v6(bits, v6(0x64, 0xff9b), 96) {
        return is_public_v4(low32);
    }
    // 6to4: 2002:AABB:CCDD::/48 tunnels to AA.BB.CC.DD.
    if in_prefix_v6(bits, v6(0x2002, 0), 16) {
        return is_public_v4(Ipv4Addr::from_bits((bits >> 80) as u32));
    }
    // Teredo: 2001:0:SERVER:SERVER:flags:port:~CLIENT:~CLIENT.
    if in_prefix_v6(bits, v6(0x2001, 0), 32) {
        let server = Ipv4Addr::from_bits((bits >> 64) as u32);
        let client = Ipv4Addr::from_bits(!(bits as u32));
        return is_public_v4(server) && is_public_v4(client);
    }
    in_prefix_v6(bits, v6(0x2000, 0), 3)
        && !BLOCKED_V6_GLOBAL
            .iter()
            .any(|&(net, len)| in_prefix_v6(bits, net.to_bits(), len))
}

/// The address `a:b::` as bits, for prefixes written by their first two groups.
fn v6(a: u16, b: u16) -> u128 {
    Ipv6Addr::new(a, b, 0, 0, 0, 0, 0, 0).to_bits()
}

fn in_prefix_v4(addr: u32, net: u32, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    addr & mask == net & mask
}

fn in_prefix_v6(addr: u128, net: u128, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    addr & mask == net & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        is_public_ip(s.parse().unwrap_or_else(|_| panic!("bad test address {s}")))
    }

    #[test]
    fn ordinary_public_ipv4_addresses_are_public() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.0",
            "192.0.3.0",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "203.0.112.255",
            "223.255.255.255",
        ] {
            assert!(public(ip), "{ip} should be public");
        }
    }

    #[test]
    fn special_ipv4_ranges_are_not_public() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.1",
            "100.127.255.255",
            "127.0.0.1",
            "127.255.255.254",
            "169.254.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.0.1",
            "192.168.255.255",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!public(ip), "{ip} should not be public");
        }
    }

    #[test]
    fn ordinary_public_ipv6_addresses_are_public() {
        for ip in [
            "2001:4860:4860::8888",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "2001:200::1", // just past 2001::/23
            "3ffe::1",
        ] {
            assert!(public(ip), "{ip} should be public");
        }
    }

    #[test]
    fn special_ipv6_ranges_are_not_public() {
        for ip in [
            "::",
            "::1",
            "fc00::1",
            "fd12:3456:789a::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "ff0e::1",
            "100::1",
            "2001:db8::1",
            "2001:2::1",
            "2001:10::1",
            "3fff::1",
            "64:ff9b:1::1",
            "::ffff:0:7f00:1", // IPv4-translated (SIIT), outside 2000::/3
            "4000::1",
            "1::1",
        ] {
            assert!(!public(ip), "{ip} should not be public");
        }
    }

    #[test]
    fn ipv4_mapped_addresses_are_judged_by_their_ipv4_address() {
        assert!(!public("::ffff:127.0.0.1"));
        assert!(!public("::ffff:10.0.0.1"));
        assert!(!public("::ffff:169.254.169.254"));
        assert!(!public("::ffff:0.0.0.0"));
        assert!(public("::ffff:8.8.8.8"));
    }

    #[test]
    fn ipv4_compatible_addresses_are_judged_by_their_ipv4_address() {
        assert!(!public("::127.0.0.1"));
        assert!(!public("::192.168.1.1"));
        assert!(public("::8.8.8.8"));
    }

    #[test]
    fn nat64_addresses_are_judged_by_their_ipv4_address() {
        assert!(!public("64:ff9b::127.0.0.1"));
        assert!(!public("64:ff9b::a9fe:a9fe")); // 169.254.169.254
        assert!(!public("64:ff9b::10.0.0.1"));
        assert!(public("64:ff9b::8.8.8.8"));
    }

    #[test]
    fn six_to_four_addresses_are_judged_by_their_ipv4_address() {
        assert!(!public("2002:7f00:1::1")); // 127.0.0.1
        assert!(!public("2002:c0a8:101::1")); // 192.168.1.1
        assert!(!public("2002:a9fe:a9fe::")); // 169.254.169.254
        assert!(public("2002:808:808::1")); // 8.8.8.8
    }

    #[test]
    fn teredo_addresses_are_judged_by_their_server_and_client() {
        // Server 65.54.227.120, client 192.0.2.45 obfuscated as 3fff:fdd2 (documentation).
        assert!(!public("2001:0:4136:e378:8000:63bf:3fff:fdd2"));
        // Client 127.0.0.1 obfuscated as 80ff:fffe.
        assert!(!public("2001:0:4136:e378:8000:63bf:80ff:fffe"));
        // Server 10.0.0.1, client 8.8.8.8 (f7f7:f7f7).
        assert!(!public("2001:0:a00:1:0:0:f7f7:f7f7"));
        // Server 65.54.227.120, client 8.8.8.8.
        assert!(public("2001:0:4136:e378:8000:63bf:f7f7:f7f7"));
    }
}
