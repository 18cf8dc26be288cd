//! Link-level PHYSec: multi-frame round trips, AMs in clear, tamper, replay, expiry and
//! traffic-pattern hiding.

mod common;

use common::{encode, frames, key};
use physec::channel::{RxError, TxError};
use physec::keys::KeyId;
use physec::link::{alignment_marker, LinkConfig, LinkRx, LinkTx};
use physec::pcs::Scrambler;
use physec::time::Instant;
use physec::wire::block::Block66;

fn setup(cfg: LinkConfig, expires: u64) -> (LinkTx, LinkRx) {
    let mut tx = LinkTx::new(cfg);
    let mut rx = LinkRx::new(cfg);
    let k = key(3, expires);
    tx.install_key(&k).expect("install");
    assert!(tx.activate(KeyId(3)));
    rx.install_key(&k.for_peer()).expect("install");
    (tx, rx)
}

fn scrambled(seed: u64, n: usize, lens: &[usize]) -> Vec<Block66> {
    let mut b = encode(&frames(seed, 400, lens), 1);
    b.resize(n, Block66::IDLE);
    Scrambler::new(seed).scramble_blocks(&mut b);
    b
}

#[test]
fn multiframes_round_trip_with_clear_alignment_markers() {
    let cfg = LinkConfig::new(4, 512, 4).expect("config");
    let (mut tx, mut rx) = setup(cfg, u64::MAX);
    let n = cfg.payload_blocks();
    let plain = scrambled(1, 3 * n, &[64, 1500, 9216]);
    let mut line = Vec::new();
    for chunk in plain.chunks(n) {
        tx.encrypt_multiframe(Instant(0), chunk, &mut line)
            .expect("encrypt");
    }
    assert_eq!(line.len(), 3 * cfg.multiframe_blocks());
    for (i, b) in line.iter().enumerate() {
        let in_period = i % 512;
        if in_period < 4 {
            assert_eq!(*b, alignment_marker(in_period), "AM at {i}");
        }
    }
    let mut out = Vec::new();
    for mf in line.chunks(cfg.multiframe_blocks()) {
        rx.decrypt_multiframe(Instant(0), mf, &mut out)
            .expect("decrypt");
    }
    assert_eq!(out, plain);
}

#[test]
fn any_flipped_bit_outside_the_markers_is_detected() {
    let cfg = LinkConfig::new(2, 64, 2).expect("config");
    let (mut tx, mut rx) = setup(cfg, u64::MAX);
    let plain = scrambled(2, cfg.payload_blocks(), &[64]);
    let mut mf = Vec::new();
    tx.encrypt_multiframe(Instant(0), &plain, &mut mf)
        .expect("encrypt");
    let mut rejected = 0;
    for i in 0..mf.len() {
        // Every block, a spread of bit positions (sync header bits included).
        for bit in [0usize, 1, 2, 9, 33, 50, 65] {
            let mut bad = mf.clone();
            if bit < 2 {
                bad[i].sync ^= 1 << bit;
            } else {
                bad[i].payload ^= 1 << (bit - 2);
            }
            let mut out = Vec::new();
            let r = rx.decrypt_multiframe(Instant(0), &bad, &mut out);
            assert!(r.is_err(), "block {i} bit {bit}");
            assert!(out.is_empty());
            rejected += 1;
        }
    }
    assert_eq!(rx.rejected, rejected);
    let mut out = Vec::new();
    rx.decrypt_multiframe(Instant(0), &mf, &mut out)
        .expect("authentic");
    assert_eq!(out, plain);
    assert_eq!(
        rx.decrypt_multiframe(Instant(0), &mf, &mut Vec::new()),
        Err(RxError::Replay {
            key: KeyId(3),
            pn: 1
        })
    );
}

#[test]
fn expired_key_stops_link_traffic() {
    let cfg = LinkConfig::new(1, 32, 1).expect("config");
    let (mut tx, mut rx) = setup(cfg, 500);
    let plain = scrambled(3, cfg.payload_blocks(), &[64]);
    let mut line = Vec::new();
    assert_eq!(
        tx.encrypt_multiframe(Instant(500), &plain, &mut line),
        Err(TxError::KeyExpired(KeyId(3)))
    );
    assert!(line.is_empty());
    tx.encrypt_multiframe(Instant(499), &plain, &mut line)
        .expect("before expiry");
    assert_eq!(
        rx.decrypt_multiframe(Instant(501), &line, &mut Vec::new()),
        Err(RxError::KeyExpired(KeyId(3)))
    );
}

#[test]
fn traffic_patterns_are_indistinguishable_at_link_level() {
    let cfg = LinkConfig::new(4, 256, 2).expect("config");
    let n = cfg.payload_blocks();
    let a = scrambled(4, n, &[64]);
    let mut b = vec![Block66::IDLE; n];
    Scrambler::new(0).scramble_blocks(&mut b);
    let mut lines = Vec::new();
    for p in [&a, &b] {
        let (mut tx, _) = setup(cfg, u64::MAX);
        let mut line = Vec::new();
        tx.encrypt_multiframe(Instant(0), p, &mut line)
            .expect("encrypt");
        lines.push(line);
    }
    assert_eq!(lines[0].len(), lines[1].len());
    // Clear parts are identical (AMs, and the parameter block which carries only key id
    // and counter); everything else differs in content only, never in position.
    for (i, (x, y)) in lines[0].iter().zip(&lines[1]).enumerate() {
        if i % 256 < 4 || i == 4 {
            assert_eq!(x, y, "clear block {i}");
        }
    }
    // The all-idle stream does not show up as a repeating pattern in the ciphertext.
    let distinct: std::collections::BTreeSet<u64> = lines[1].iter().map(|b| b.payload).collect();
    assert!(distinct.len() > n * 9 / 10);
}

#[test]
fn geometry_is_validated() {
    assert!(LinkConfig::new(0, 64, 1).is_err());
    assert!(LinkConfig::new(5, 64, 1).is_err());
    assert!(LinkConfig::new(4, 7, 1).is_err());
    assert!(LinkConfig::new(4, 64, 0).is_err());
    let cfg = LinkConfig::new(4, 16384, 4).expect("config");
    assert_eq!(cfg.payload_blocks(), 4 * (16384 - 4) - 3);
}

#[test]
fn directions_are_separate_and_reflection_is_rejected() {
    let cfg = LinkConfig::new(2, 64, 2).expect("config");
    let a_key = key(3, u64::MAX);
    let b_key = a_key.for_peer();
    let (mut tx_a, mut rx_a) = (LinkTx::new(cfg), LinkRx::new(cfg));
    let (mut tx_b, mut rx_b) = (LinkTx::new(cfg), LinkRx::new(cfg));
    for (tx, rx, k) in [
        (&mut tx_a, &mut rx_a, &a_key),
        (&mut tx_b, &mut rx_b, &b_key),
    ] {
        tx.install_key(k).expect("install");
        assert!(tx.activate(KeyId(3)));
        rx.install_key(k).expect("install");
    }
    let pa = scrambled(5, cfg.payload_blocks(), &[64]);
    let pb = scrambled(6, cfg.payload_blocks(), &[1500]);
    let (mut ma, mut mb) = (Vec::new(), Vec::new());
    tx_a.encrypt_multiframe(Instant(0), &pa, &mut ma)
        .expect("a");
    tx_b.encrypt_multiframe(Instant(0), &pb, &mut mb)
        .expect("b");
    assert_ne!(tx_a.last_nonce(), tx_b.last_nonce());
    // Same counter both ways; with a shared keystream ct_a ^ ct_b = pt_a ^ pt_b.
    let ct: Vec<(u64, u64)> = ma
        .iter()
        .zip(&mb)
        .enumerate()
        .filter(|(i, _)| i % 64 >= 2 + if *i < 64 { 3 } else { 0 })
        .map(|(_, (x, y))| (x.payload, y.payload))
        .collect();
    let same = ct
        .iter()
        .zip(pa.iter().zip(&pb))
        .filter(|((x, y), (p, q))| x ^ y == p.payload ^ q.payload)
        .count();
    assert!(same <= 1, "{same} blocks leak the plaintext XOR");
    // Reflected back to its sender: refused. Sent to the peer: accepted.
    assert_eq!(
        rx_a.decrypt_multiframe(Instant(0), &ma, &mut Vec::new()),
        Err(RxError::AuthFailed)
    );
    let mut out = Vec::new();
    rx_b.decrypt_multiframe(Instant(0), &ma, &mut out)
        .expect("a to b");
    assert_eq!(out, pa);
}

#[test]
fn lost_multiframes_are_counted() {
    let cfg = LinkConfig::new(1, 32, 1).expect("config");
    let (mut tx, mut rx) = setup(cfg, u64::MAX);
    let plain = scrambled(7, cfg.payload_blocks(), &[64]);
    let mfs: Vec<Vec<Block66>> = (0..4)
        .map(|_| {
            let mut m = Vec::new();
            tx.encrypt_multiframe(Instant(0), &plain, &mut m)
                .expect("encrypt");
            m
        })
        .collect();
    let mut outs = Vec::new();
    for i in [0, 3] {
        let mut out = Vec::new();
        rx.decrypt_multiframe(Instant(0), &mfs[i], &mut out)
            .expect("decrypt");
        outs.push(out);
    }
    assert_eq!((rx.accepted, rx.lost), (2, 2));
    // The first arrives whole; the one after the gap is preceded by a payload's length
    // of error blocks, then its own payload intact.
    let n = cfg.payload_blocks();
    assert_eq!(outs[0], plain);
    assert_eq!(outs[1].len(), 2 * n);
    assert!(outs[1][..n].iter().all(|b| *b == Block66::ERROR));
    assert_eq!(&outs[1][n..], &plain[..]);
}

#[test]
fn a_rejected_multiframe_shows_as_error_blocks_before_the_next() {
    let cfg = LinkConfig::new(1, 32, 1).expect("config");
    let (mut tx, mut rx) = setup(cfg, u64::MAX);
    let plain = scrambled(11, cfg.payload_blocks(), &[64]);
    let mut mfs = Vec::new();
    for _ in 0..3 {
        let mut m = Vec::new();
        tx.encrypt_multiframe(Instant(0), &plain, &mut m)
            .expect("encrypt");
        mfs.push(m);
    }
    // Flip one payload bit of the middle multi-frame: it fails authentication.
    let last = mfs[1].len() - 1;
    mfs[1][last].payload ^= 1;
    let mut out = Vec::new();
    rx.decrypt_multiframe(Instant(0), &mfs[0], &mut out)
        .expect("first");
    assert!(rx
        .decrypt_multiframe(Instant(0), &mfs[1], &mut out)
        .is_err());
    assert_eq!(out.len(), cfg.payload_blocks(), "nothing appended on error");
    rx.decrypt_multiframe(Instant(0), &mfs[2], &mut out)
        .expect("third");
    let n = cfg.payload_blocks();
    assert!(out[n..2 * n].iter().all(|b| *b == Block66::ERROR));
    assert_eq!(&out[2 * n..], &plain[..]);
    assert_eq!((rx.accepted, rx.rejected, rx.lost), (2, 1, 1));
}
