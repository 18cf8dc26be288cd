//! Addresses: deterministic MAC and IPv4 addresses derived from ids.
//!
//! fabricsim's hosts and ports have ids, not addresses; a capture needs addresses, and
//! the same run must give the same bytes, so they are functions of the ids:
//!
//! - host `h`: MAC `02:00:hh:hh:hh:hh` (the 32-bit host id, big-endian; `02` is a
//!   locally administered unicast address) and IPv4 `10.a.b.c` with `a.b.c` = h + 1
//!   in base 256 (host 0 is 10.0.0.1, host 255 is 10.0.1.0: no host gets 10.0.0.0);
//! - switch port `p` (its global port id, the row of `ports.csv`): MAC `06:00:pp:pp:pp:pp`
//!   (locally administered, unicast), the source of the PFC and GSE frames it sends.
//!
//! RoCEv2 frames carry their end hosts' MACs on every hop (as on one L2 segment); the
//! simulator has no routers' MAC rewriting to show.

/// Hosts beyond this id get no IPv4 address of their own in 10.0.0.0/8 (the address
/// wraps): 2^24 - 1 hosts, far beyond any fabric the simulator builds.
pub const MAX_IPV4_HOSTS: u32 = (1 << 24) - 1;

/// MAC address of host `h`'s NIC.
pub fn host_mac(h: u32) -> [u8; 6] {
    let b = h.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// IPv4 address of host `h` (10.0.0.0/8, host 0 is 10.0.0.1).
pub fn host_ipv4(h: u32) -> [u8; 4] {
    let b = (h.wrapping_add(1) & 0x00ff_ffff).to_be_bytes();
    [10, b[1], b[2], b[3]]
}

/// MAC address of switch port `p` (its global port id).
pub fn port_mac(p: u32) -> [u8; 6] {
    let b = p.to_be_bytes();
    [0x06, 0x00, b[0], b[1], b[2], b[3]]
}

/// The host a [`host_mac`] names, if it is one.
pub fn host_of_mac(mac: [u8; 6]) -> Option<u32> {
    (mac[0] == 0x02 && mac[1] == 0x00).then(|| u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_locally_administered_unicast_and_distinct() {
        for m in [host_mac(0), host_mac(u32::MAX), port_mac(7)] {
            assert_eq!(m[0] & 0b11, 0b10, "{m:?}: local bit set, group bit clear");
        }
        assert_ne!(host_mac(5), port_mac(5));
        assert_eq!(host_ipv4(0), [10, 0, 0, 1]);
        assert_eq!(host_ipv4(255), [10, 0, 1, 0]);
        assert_eq!(host_ipv4(MAX_IPV4_HOSTS - 1), [10, 255, 255, 255]);
        assert_eq!(host_of_mac(host_mac(70000)), Some(70000));
        assert_eq!(host_of_mac(port_mac(3)), None);
    }
}
