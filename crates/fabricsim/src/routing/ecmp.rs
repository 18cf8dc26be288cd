//! Equal-cost multipath: a flow's packets all take the candidate picked by a hash of the
//! flow's 5-tuple mixed with a per-switch salt. The salt (seeded from the run seed and the
//! switch name) keeps successive tiers from making correlated choices (hash polarization)
//! and makes a different seed give a different, equally valid, set of paths.

use super::{LbAlgorithm, LbEntry, LbState, LoadBalancer};

/// `ecmp`.
pub static ENTRY: LbEntry = LbEntry {
    name: "ecmp",
    about: "per flow: a hash of the 5-tuple with a per-switch salt",
    algorithm: LbAlgorithm::Ecmp,
};

/// The 32-bit finalizer of MurmurHash3: cheap, and every input bit flips about half of
/// the output bits.
#[inline]
pub fn mix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Hash of a RoCEv2 5-tuple (source and destination address, UDP source port, UDP
/// destination port 4791, protocol 17).
pub fn five_tuple_hash(src: u32, dst: u32, sport: u16) -> u32 {
    let mut h = 0x9747_b28cu32;
    for w in [src, dst, ((sport as u32) << 16) | 4791, 17] {
        h = mix32(h ^ w).wrapping_add(0x6b43_a9b5);
    }
    h
}

/// Picks one of `n` candidates for a flow hash at a switch with `salt`.
#[inline]
pub fn pick(hash: u32, salt: u32, n: usize) -> usize {
    // Multiply-shift maps the 32-bit hash onto 0..n without the bias of a modulo.
    ((mix32(hash ^ salt) as u64 * n as u64) >> 32) as usize
}

/// The ECMP balancer.
pub struct Ecmp;

impl LoadBalancer for Ecmp {
    #[inline(always)]
    fn pick(&self, hash: u32, n: usize, sw: LbState<'_>) -> usize {
        pick(hash, sw.salt, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_flows_evenly() {
        let mut counts = [0u32; 4];
        for f in 0..40_000u32 {
            counts[pick(five_tuple_hash(f, f + 1, (f % 65536) as u16), 12345, 4)] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn salt_changes_choices() {
        let diff = (0..1000u32)
            .filter(|&f| {
                pick(f.wrapping_mul(2654435761), 1, 8) != pick(f.wrapping_mul(2654435761), 2, 8)
            })
            .count();
        assert!(diff > 700, "{diff}");
    }
}
