//! The mutation probe, kept as property tests: mutated channel segments, multi-frames and
//! key-management messages, and arbitrary PCS input, never panic and are never accepted.
//! (`cargo test -p physec` without `--release` runs them with overflow checks on.)

mod common;

use common::{encode, frames, key};
use physec::channel::{ChannelConfig, ChannelRx, ChannelTx};
use physec::keys::KeyId;
use physec::km::{Action, KeyAgent, KmConfig, KmError, Role};
use physec::link::{LinkConfig, LinkRx, LinkTx};
use physec::pcs::PcsDecoder;
use physec::time::{Duration, Instant};
use physec::wire::block::Block66;
use proptest::prelude::*;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
enum Mutation {
    Flip { at: usize, bit: u32 },
    Replace { at: usize, sync: u8, payload: u64 },
    Swap(usize, usize),
    Truncate(usize),
    Insert { at: usize, sync: u8, payload: u64 },
    Delete(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0u32..66).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        2 => (any::<usize>(), 0u8..4, any::<u64>())
            .prop_map(|(at, sync, payload)| Mutation::Replace { at, sync, payload }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), 0u8..4, any::<u64>())
            .prop_map(|(at, sync, payload)| Mutation::Insert { at, sync, payload }),
        1 => any::<usize>().prop_map(Mutation::Delete),
    ]
}

fn apply(blocks: &mut Vec<Block66>, m: &Mutation) {
    let n = blocks.len();
    if n == 0 {
        return;
    }
    match *m {
        Mutation::Flip { at, bit } => {
            let b = &mut blocks[at % n];
            if bit < 2 {
                b.sync ^= 1 << bit;
            } else {
                b.payload ^= 1 << (bit - 2);
            }
        }
        Mutation::Replace { at, sync, payload } => blocks[at % n] = Block66 { sync, payload },
        Mutation::Swap(a, b) => blocks.swap(a % n, b % n),
        Mutation::Truncate(at) => blocks.truncate(at % n),
        Mutation::Insert { at, sync, payload } => {
            blocks.insert(at % (n + 1), Block66 { sync, payload })
        }
        Mutation::Delete(at) => {
            blocks.remove(at % n);
        }
    }
}

fn contains_window(hay: &[Block66], needle: &[Block66]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn mutated_channel_segments_are_never_accepted(
        seed in any::<u64>(),
        muts in proptest::collection::vec(mutation(), 1..5),
    ) {
        let k = 8;
        let cfg = ChannelConfig::new(k).expect("config");
        let mut tx = ChannelTx::new(cfg);
        let mut rx = ChannelRx::new(cfg);
        let key = key(1, u64::MAX);
        tx.install_key(&key).expect("install");
        tx.activate(KeyId(1));
        rx.install_key(&key.for_peer()).expect("install");
        let plain = encode(&frames(seed, 2, &[64, 100]), k);
        let mut seg = Vec::new();
        tx.encrypt_segment(Instant(0), &plain[..k], &mut seg).expect("encrypt");
        let mut bad = seg.clone();
        for m in &muts {
            apply(&mut bad, m);
        }
        prop_assume!(bad != seg);
        let mut out = Vec::new();
        prop_assert!(rx.decrypt_segment(Instant(0), &bad, &mut out).is_err());
        prop_assert!(out.is_empty());
        // Streamed, the mutated blocks deliver nothing but error blocks, Local Fault, or
        // the authentic segment if it survived intact somewhere in them.
        for b in &bad {
            rx.push(Instant(0), *b, &mut out);
        }
        let intact = contains_window(&bad, &seg);
        prop_assert!(rx.stats().segments_ok <= u64::from(intact));
        if rx.stats().segments_ok == 0 {
            prop_assert!(out
                .iter()
                .all(|b| *b == Block66::ERROR || *b == physec::channel::LOCAL_FAULT));
        }
    }

    #[test]
    fn mutated_multiframes_are_never_accepted(
        seed in any::<u64>(),
        muts in proptest::collection::vec(mutation(), 1..5),
    ) {
        let cfg = LinkConfig::new(2, 16, 2).expect("config");
        let mut tx = LinkTx::new(cfg);
        let mut rx = LinkRx::new(cfg);
        let key = key(2, u64::MAX);
        tx.install_key(&key).expect("install");
        tx.activate(KeyId(2));
        rx.install_key(&key.for_peer()).expect("install");
        let mut plain = encode(&frames(seed, 2, &[64]), 1);
        plain.resize(cfg.payload_blocks(), Block66::IDLE);
        let mut mf = Vec::new();
        tx.encrypt_multiframe(Instant(0), &plain, &mut mf).expect("encrypt");
        let mut bad = mf.clone();
        for m in &muts {
            apply(&mut bad, m);
        }
        prop_assume!(bad != mf);
        let mut out = Vec::new();
        prop_assert!(rx.decrypt_multiframe(Instant(0), &bad, &mut out).is_err());
        prop_assert!(out.is_empty());
        prop_assert_eq!(rx.accepted, 0);
    }

    #[test]
    fn arbitrary_pcs_input_never_panics(
        blocks in proptest::collection::vec((0u8..4, any::<u64>()), 0..400),
    ) {
        let blocks: Vec<Block66> = blocks
            .into_iter()
            .map(|(sync, payload)| Block66 { sync, payload })
            .collect();
        let mut dec = PcsDecoder::new();
        let mut ev = Vec::new();
        dec.push_all(&blocks, &mut ev);
        let cfg = ChannelConfig::new(4).expect("config");
        let mut rx = ChannelRx::new(cfg);
        rx.install_key(&key(1, u64::MAX).for_peer()).expect("install");
        let mut out = Vec::new();
        for b in &blocks {
            rx.push(Instant(0), *b, &mut out);
        }
        prop_assert_eq!(rx.stats().segments_ok, 0);
        let mut words = vec![0u64; physec::compress::words_for(blocks.len())];
        physec::compress::compress(&blocks, &mut words);
        let mut back = vec![Block66::default(); blocks.len()];
        prop_assert!(physec::compress::decompress(&words, &mut back));
        let lcfg = LinkConfig::new(1, 8, 1).expect("config");
        let mut lrx = LinkRx::new(lcfg);
        lrx.install_key(&key(1, u64::MAX).for_peer()).expect("install");
        for mf in blocks.chunks(lcfg.multiframe_blocks()) {
            prop_assert!(lrx.decrypt_multiframe(Instant(0), mf, &mut Vec::new()).is_err());
        }
    }
}

/// Every message of a binding handshake, the first exchange and a rekey, as received.
fn km_messages() -> (KeyAgent, KeyAgent, Vec<(usize, Vec<u8>)>) {
    let cfg = KmConfig::new(
        Duration::from_micros(20),
        Duration::from_micros(50),
        Duration::from_micros(5),
        Duration::from_micros(5),
        Duration::from_micros(20),
        Duration::from_micros(10),
    )
    .expect("timers");
    let mut agents = [
        KeyAgent::new_deterministic(
            cfg,
            Role::Initiator,
            9,
            [1; 32],
            KeyAgent::public_identity([2; 32]),
            [3; 32],
        )
        .expect("a"),
        KeyAgent::new_deterministic(
            cfg,
            Role::Responder,
            9,
            [2; 32],
            KeyAgent::public_identity([1; 32]),
            [4; 32],
        )
        .expect("b"),
    ];
    let mut log = Vec::new();
    let mut queue: VecDeque<(u64, usize, Vec<u8>)> = VecDeque::new();
    for t in (0..30_000).step_by(100) {
        for (i, agent) in agents.iter_mut().enumerate() {
            let mut acts = Vec::new();
            agent.poll(Instant(t), &mut acts);
            for a in acts {
                if let Action::Send(m) = a {
                    queue.push_back((t + 500, 1 - i, m));
                }
            }
        }
        while queue.front().is_some_and(|(at, _, _)| *at <= t) {
            let (_, to, m) = queue.pop_front().expect("due");
            log.push((to, m.clone()));
            let mut acts = Vec::new();
            let _ = agents[to].handle(Instant(t), &m, &mut acts);
            for a in acts {
                if let Action::Send(m) = a {
                    queue.push_back((t + 500, 1 - to, m));
                }
            }
        }
    }
    let [a, b] = agents;
    (a, b, log)
}

#[derive(Clone, Debug)]
enum ByteMutation {
    Flip { at: usize, bit: u8 },
    Set { at: usize, value: u8 },
    Truncate(usize),
    Extend(u8),
}

fn byte_mutation() -> impl Strategy<Value = ByteMutation> {
    prop_oneof![
        4 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| ByteMutation::Flip { at, bit }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, value)| ByteMutation::Set { at, value }),
        1 => any::<usize>().prop_map(ByteMutation::Truncate),
        1 => any::<u8>().prop_map(ByteMutation::Extend),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn mutated_key_management_messages_are_never_accepted(
        pick in any::<usize>(),
        muts in proptest::collection::vec(byte_mutation(), 1..4),
    ) {
        let (a, b, log) = km_messages();
        prop_assert!(log.len() > 20);
        let mut agents = [a, b];
        let (to, msg) = &log[pick % log.len()];
        let mut bad = msg.clone();
        for m in &muts {
            let n = bad.len().max(1);
            match *m {
                ByteMutation::Flip { at, bit } => {
                    if let Some(x) = bad.get_mut(at % n) {
                        *x ^= 1 << bit;
                    }
                }
                ByteMutation::Set { at, value } => {
                    if let Some(x) = bad.get_mut(at % n) {
                        *x = value;
                    }
                }
                ByteMutation::Truncate(at) => bad.truncate(at % n),
                ByteMutation::Extend(v) => bad.push(v),
            }
        }
        prop_assume!(&bad != msg);
        let mut out = Vec::new();
        let r = agents[*to].handle(Instant(40_000), &bad, &mut out);
        prop_assert!(
            matches!(r, Err(KmError::Malformed | KmError::BadSignature)),
            "{:?}", r
        );
        prop_assert!(out
            .iter()
            .all(|x| matches!(x, Action::Alarm(_))), "{:?}", out);
    }
}
