//! Helpers shared by the integration tests.
#![allow(dead_code)]

use physec::keys::{KeyId, Role, TrafficKey};
use physec::pcs::{PcsDecoder, PcsEncoder, RxEvent, TxItem};
use physec::time::Instant;
use physec::wire::block::Block66;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// A key as the initiator holds it; `.for_peer()` gives the responder's copy.
pub fn key(id: u8, expires_ns: u64) -> TrafficKey {
    let mut secret = [0u8; 32];
    secret[0] = id;
    secret[31] = 0xa5;
    TrafficKey::new(KeyId(id), secret, Instant(expires_ns), Role::Initiator)
}

/// Deterministic frames with lengths drawn from `lens`.
pub fn frames(seed: u64, count: usize, lens: &[usize]) -> Vec<Vec<u8>> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = lens[(rng.next_u32() as usize) % lens.len()];
            let mut f = vec![0u8; n];
            rng.fill_bytes(&mut f);
            f
        })
        .collect()
}

/// Encode frames into an unscrambled block stream, padded with idles to a multiple of
/// `multiple` blocks.
pub fn encode(frames: &[Vec<u8>], multiple: usize) -> Vec<Block66> {
    let items: Vec<TxItem<'_>> = frames.iter().map(|f| TxItem::Frame(f)).collect();
    let mut blocks = PcsEncoder::default().encode_all(&items);
    while blocks.len() % multiple != 0 {
        blocks.push(Block66::IDLE);
    }
    blocks
}

pub fn decode(blocks: &[Block66]) -> (Vec<Vec<u8>>, PcsDecoder) {
    let mut dec = PcsDecoder::new();
    let mut ev = Vec::new();
    dec.push_all(blocks, &mut ev);
    let frames = ev
        .into_iter()
        .filter_map(|e| match e {
            RxEvent::Frame(f) => Some(f),
            RxEvent::OrderedSet(_) => None,
        })
        .collect();
    (frames, dec)
}
