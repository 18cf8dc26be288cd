//! Per-packet spraying: every packet independently takes a random candidate, or the
//! next one in round-robin order. Spraying balances load perfectly in expectation but
//! reorders packets; with go-back-N transport every reordering costs a retransmission,
//! which is the weakness document 000 names.

use super::{LbAlgorithm, LbEntry, LbState, LoadBalancer};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// `spray_random`.
pub static RANDOM_ENTRY: LbEntry = LbEntry {
    name: "spray_random",
    about: "per packet: a uniformly random next hop",
    algorithm: LbAlgorithm::SprayRandom,
};

/// `spray_rr`.
pub static RR_ENTRY: LbEntry = LbEntry {
    name: "spray_rr",
    about: "per packet: the next hop in round-robin order",
    algorithm: LbAlgorithm::SprayRr,
};

/// Random spraying.
pub struct SprayRandom;

impl LoadBalancer for SprayRandom {
    #[inline(always)]
    fn pick(&self, _hash: u32, n: usize, sw: LbState<'_>) -> usize {
        pick_random(sw.rng, n)
    }
}

/// Round-robin spraying.
pub struct SprayRr;

impl LoadBalancer for SprayRr {
    #[inline(always)]
    fn pick(&self, _hash: u32, n: usize, sw: LbState<'_>) -> usize {
        pick_rr(sw.rr, n)
    }
}

/// Uniformly random candidate.
#[inline]
pub fn pick_random(rng: &mut ChaCha8Rng, n: usize) -> usize {
    rng.gen_range(0..n)
}

/// Next candidate in round-robin order.
#[inline]
pub fn pick_rr(cursor: &mut u32, n: usize) -> usize {
    *cursor = cursor.wrapping_add(1);
    *cursor as usize % n
}
