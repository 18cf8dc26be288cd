//! Seeding: every component's random stream comes from (run seed, component name).
//!
//! The hash is specified so that results do not depend on Rust's `Hash` (which may change
//! between releases): FNV-1a 64 over the UTF-8 name, XOR the run seed, then the SplitMix64
//! finalizer; the result seeds a ChaCha8 generator. Adding a component therefore never
//! changes the random choices of the others.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// FNV-1a, 64-bit.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64 finalizer.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 64-bit seed of a component.
pub fn component_seed(seed: u64, name: &str) -> u64 {
    splitmix64(fnv1a64(name.as_bytes()) ^ seed)
}

/// A component's generator.
pub fn component_rng(seed: u64, name: &str) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(component_seed(seed, name))
}

/// The seed of replicate `replicate` (0-based) of a run seeded `seed` (`seeds` > 1 in a
/// scenario): the first replicate keeps `seed`, so it reproduces the unreplicated run;
/// the others are hashed from (seed, replicate) like a component's stream, so they are
/// far apart and a replicate of seed 1 is not the unreplicated run of seed 2.
pub fn replicate_seed(seed: u64, replicate: u32) -> u64 {
    if replicate == 0 {
        seed
    } else {
        // 63 bits: `scenario.resolved.toml` records the seed as a TOML (signed 64-bit)
        // integer, so a rerun of any replicate's folder reproduces it.
        component_seed(seed, &format!("replicate{replicate}")) & i64::MAX as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // FNV-1a reference: "a" -> 0xaf63dc4c8601ec8c.
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(component_seed(1, "leaf0"), component_seed(2, "leaf0"));
        assert_ne!(component_seed(1, "leaf0"), component_seed(1, "leaf1"));
        assert_eq!(component_seed(7, "x"), component_seed(7, "x"));
    }

    #[test]
    fn replicate_seeds_are_distinct_and_the_first_is_the_seed() {
        assert_eq!(replicate_seed(42, 0), 42);
        let mut seen = std::collections::BTreeSet::new();
        for base in [1u64, 2, 3] {
            for r in 0..100 {
                assert!(
                    seen.insert(replicate_seed(base, r)),
                    "base {base} replicate {r}"
                );
            }
        }
        assert_eq!(replicate_seed(5, 3), replicate_seed(5, 3));
        assert!((0..1000).all(|r| replicate_seed(u64::MAX >> 1, r) <= i64::MAX as u64));
    }
}
