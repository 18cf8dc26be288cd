//! Source routing (document 003: the Sunway router "supports source routing and
//! distributed table lookup; each packet carries a flag choosing which"): the sender
//! chooses the path and the packet carries it, so the switches make no choice of their
//! own. Here the route a flow's source picks is named by its hash: at every switch the
//! packet takes the same entry index of the table entry's primary ports (`hash mod n`,
//! with no per-switch salt). In a two-tier plane that is the choice of spine; a path
//! chosen at the source is blind to the fabric's state, so a failed link on it drops the
//! packets until software rewrites the routes (the transport recovers them).

use super::{LbAlgorithm, LbEntry, LbState, LoadBalancer};

/// `source`.
pub static ENTRY: LbEntry = LbEntry {
    name: "source",
    about: "source routing: the path the sender names (the flow's hash picks the same entry at every switch)",
    algorithm: LbAlgorithm::Source,
};

/// Source routing.
pub struct Source;

impl LoadBalancer for Source {
    #[inline]
    fn pick(&self, hash: u32, n: usize, _sw: LbState<'_>) -> usize {
        hash as usize % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_switch_takes_the_entry_the_source_named() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut rr = 0;
        for (salt, hash) in [(1u32, 7u32), (99, 7), (12345, 7)] {
            let st = LbState {
                salt,
                rng: &mut rng,
                rr: &mut rr,
            };
            assert_eq!(Source.pick(hash, 3, st), 1, "salt {salt} changes nothing");
        }
    }
}
