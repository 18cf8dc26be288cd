//! Channel-level PHYSec: known answers, round trips, tamper and replay detection,
//! key expiry, and indistinguishability of traffic patterns.

mod common;

use common::{decode, encode, frames, key};
use physec::channel::{
    ChannelCipher, ChannelConfig, ChannelRx, ChannelTx, RxError, TxError, LOCAL_FAULT,
};
use physec::keys::KeyId;
use physec::mac;
use physec::time::Instant;
use physec::wire::block::Block66;

struct Kat {
    key: &'static str,
    nonce: &'static str,
    pt: &'static str,
    aad: &'static str,
    ct: &'static str,
    tag: &'static str,
}

/// NIST CAVP `gcmEncryptExtIV256.rsp` vectors (96-bit IV, 128-bit tag).
const KATS: &[Kat] = &[
    Kat {
        key: "b52c505a37d78eda5dd34f20c22540ea1b58963cf8e5bf8ffa85f9f2492505b4",
        nonce: "516c33929df5a3284ff463d7",
        pt: "",
        aad: "",
        ct: "",
        tag: "bdc1ac884d332457a1d2664f168c76f0",
    },
    Kat {
        key: "78dc4e0aaf52d935c3c01eea57428f00ca1fd475f5da86a49c8dd73d68c8e223",
        nonce: "d79cf22d504cc793c3fb6c8a",
        pt: "",
        aad: "b96baa8c1c75a671bfb2d08d06be5f36",
        ct: "",
        tag: "3e5d486aa2e30b22e040b85723a06e76",
    },
    Kat {
        key: "31bdadd96698c204aa9ce1448ea94ae1fb4a9a0b3c9d773b51bb1822666b8f22",
        nonce: "0d18e06c7c725ac9e362e1ce",
        pt: "2db5168e932556f8089a0622981d017d",
        aad: "",
        ct: "fa4362189661d163fcd6a56d8bf0405a",
        tag: "d636ac1bbedd5cc3ee727dc2ab4a9489",
    },
    Kat {
        key: "92e11dcdaa866f5ce790fd24501f92509aacf4cb8b1339d50c9c1240935dd08b",
        nonce: "ac93a1a6145299bde902f21a",
        pt: "2d71bcfa914e4ac045b2aa60955fad24",
        aad: "1e0889016f67601c8ebea4943bc23ad6",
        ct: "8995ae2e6df3dbf96fac7b7137bae67f",
        tag: "eca5aa77d51d4a0a14d9c51e1da474ab",
    },
    Kat {
        key: "82c4f12eeec3b2d3d157b0f992d292b237478d2cecc1d5f161389b97f999057a",
        nonce: "7b40b20f5f397177990ef2d1",
        pt: "982a296ee1cd7086afad976945",
        aad: "",
        ct: "ec8e05a0471d6b43a59ca5335f",
        tag: "113ddeafc62373cac2f5951bb9165249",
    },
    Kat {
        key: "dad89d9be9bba138cdcf8752c45b579d7e27c3dbb40f53e771dd8cfd500aa2d5",
        nonce: "cfb2aec82cfa6c7d89ee72ff",
        pt: "b526ba1050177d05b0f72f8d67",
        aad: "6e43784a91851a77667a02198e28dc32",
        ct: "8b29e66e924ecae84f6d8f7d68",
        tag: "1e365805c8f28b2ed8a5cadfd9079158",
    },
    Kat {
        key: "268ed1b5d7c9c7304f9cae5fc437b4cd3aebe2ec65f0d85c3918d3d3b5bba89b",
        nonce: "9ed9d8180564e0e945f5e5d4",
        pt: "fe29a40d8ebf57262bdb87191d01843f4ca4b2de97d88273154a0b7d9e2fdb80",
        aad: "",
        ct: "791a4a026f16f3a5ea06274bf02baab469860abde5e645f3dd473a5acddeecfc",
        tag: "05b2b74db0662550435ef1900e136b15",
    },
    Kat {
        key: "37ccdba1d929d6436c16bba5b5ff34deec88ed7df3d15d0f4ddf80c0c731ee1f",
        nonce: "5c1b21c8998ed6299006d3f9",
        pt: "ad4260e3cdc76bcc10c7b2c06b80b3be948258e5ef20c508a81f51e96a518388",
        aad: "22ed235946235a85a45bc5fad7140bfa",
        ct: "3b335f8b08d33ccdcad228a74700f1007542a4d1e7fc1ebe3f447fe71af29816",
        tag: "1fbf49cc46f458bf6e88f6370975e6d4",
    },
];

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn nist_aes256_gcm_known_answers_through_channel_cipher() {
    for (i, k) in KATS.iter().enumerate() {
        let key: [u8; 32] = hex(k.key).try_into().expect("32-byte key");
        let nonce = hex(k.nonce);
        // The channel nonce is salt (4 octets) followed by the packet number.
        let salt: [u8; 4] = nonce[..4].try_into().expect("salt");
        let pn = u64::from_be_bytes(nonce[4..].try_into().expect("pn"));
        let cipher = ChannelCipher::from_raw(key, salt);
        assert_eq!(cipher.nonce(pn).to_vec(), nonce, "vector {i}");
        let mut buf = hex(k.pt);
        let tag = cipher.seal(pn, &hex(k.aad), &mut buf).expect("seal");
        assert_eq!(buf, hex(k.ct), "ciphertext of vector {i}");
        assert_eq!(tag.to_vec(), hex(k.tag), "tag of vector {i}");
        assert!(cipher.open(pn, &hex(k.aad), &mut buf, &tag));
        assert_eq!(buf, hex(k.pt));
        let mut bad = tag;
        bad[15] ^= 0x80;
        let mut buf2 = hex(k.ct);
        assert!(!cipher.open(pn, &hex(k.aad), &mut buf2, &bad), "vector {i}");
    }
}

fn pair(k: usize) -> (ChannelTx, ChannelRx) {
    let cfg = ChannelConfig::new(k).expect("config");
    let mut tx = ChannelTx::new(cfg);
    let mut rx = ChannelRx::new(cfg);
    // The transmitter is the initiator's, the receiver the responder's.
    let key = key(1, u64::MAX);
    tx.install_key(&key).expect("install");
    assert!(tx.activate(KeyId(1)));
    rx.install_key(&key.for_peer()).expect("install");
    (tx, rx)
}

/// Push a plaintext stream through a transmitter and receiver, with `gap` idle blocks
/// inserted between segments on the line (rate adaptation).
fn through(
    tx: &mut ChannelTx,
    rx: &mut ChannelRx,
    plain: &[Block66],
    gap: usize,
) -> (Vec<Block66>, Vec<Block66>) {
    let mut line = Vec::new();
    let mut segs = 0;
    for b in plain {
        tx.push(Instant(0), *b, &mut line).expect("tx");
        if tx.stats().segments > segs {
            segs = tx.stats().segments;
            line.extend(std::iter::repeat_n(Block66::IDLE, gap));
        }
    }
    let mut out = Vec::new();
    for b in &line {
        assert_eq!(rx.push(Instant(0), *b, &mut out), None);
    }
    (line, out)
}

#[test]
fn round_trip_frames_of_all_sizes() {
    for k in [1usize, 7, 64, 200, 1024] {
        let (mut tx, mut rx) = pair(k);
        let fr = frames(k as u64, 60, &[64, 65, 71, 128, 1500, 4096, 9216]);
        let plain = encode(&fr, k);
        let (line, out) = through(&mut tx, &mut rx, &plain, 3);
        assert_eq!(out, plain, "K = {k}");
        let segs = plain.len() / k;
        assert_eq!(line.len(), segs * (tx.config().line_blocks() + 3));
        let (got, dec) = decode(&out);
        assert_eq!(got, fr);
        assert_eq!(dec.stats().frames_dropped, 0);
        assert_eq!(rx.stats().segments_ok, segs as u64);
    }
}

#[test]
fn every_single_bit_flip_is_detected_and_never_delivered() {
    let k = 8;
    let (mut tx, mut rx) = pair(k);
    let plain = encode(&frames(3, 2, &[64]), k);
    let mut seg = Vec::new();
    tx.encrypt_segment(Instant(0), &plain[..k], &mut seg)
        .expect("encrypt");
    let mut failed = 0;
    for i in 0..seg.len() {
        for bit in 0..66 {
            let mut bad = seg.clone();
            if bit < 2 {
                bad[i].sync ^= 1 << bit;
            } else {
                bad[i].payload ^= 1 << (bit - 2);
            }
            let mut out = Vec::new();
            assert!(
                rx.decrypt_segment(Instant(0), &bad, &mut out).is_err(),
                "block {i} bit {bit}"
            );
            assert!(out.is_empty(), "nothing may be delivered");
            failed += 1;
        }
    }
    assert_eq!(rx.stats().failed(), failed);
    assert_eq!(rx.stats().segments_ok, 0);
    // Failures did not poison the replay state: the authentic segment still decrypts.
    let mut out = Vec::new();
    rx.decrypt_segment(Instant(0), &seg, &mut out)
        .expect("authentic");
    assert_eq!(out, &plain[..k]);
}

#[test]
fn flipped_bit_in_stream_drops_only_the_frames_it_touches() {
    let k = 64;
    let (mut tx, mut rx) = pair(k);
    let fr = frames(9, 40, &[64, 300, 1500]);
    let plain = encode(&fr, k);
    let mut line = Vec::new();
    for b in &plain {
        tx.push(Instant(0), *b, &mut line).expect("tx");
    }
    // Flip one ciphertext bit in the third segment.
    let seg_len = tx.config().line_blocks();
    line[2 * seg_len + 10].payload ^= 1 << 17;
    let mut out = Vec::new();
    let errs: Vec<RxError> = line
        .iter()
        .filter_map(|b| rx.push(Instant(0), *b, &mut out))
        .collect();
    assert_eq!(errs, vec![RxError::AuthFailed]);
    assert_eq!(rx.stats().auth_failed, 1);
    assert_eq!(out.len(), plain.len(), "timing preserved with error blocks");
    let (got, dec) = decode(&out);
    assert!(dec.stats().frames_dropped >= 1);
    // Every delivered frame is one that was sent, in order, and intact.
    let mut it = fr.iter();
    for g in &got {
        assert!(it.any(|f| f == g), "delivered frame was not sent");
    }
    assert_eq!(
        got.len() as u64 + dec.stats().frames_dropped,
        fr.len() as u64
    );
}

#[test]
fn replayed_segments_are_rejected() {
    let k = 16;
    let (mut tx, mut rx) = pair(k);
    let plain = encode(&frames(4, 10, &[64, 200]), k);
    let mut segs = Vec::new();
    for chunk in plain.chunks(k).take(3) {
        let mut s = Vec::new();
        tx.encrypt_segment(Instant(0), chunk, &mut s)
            .expect("encrypt");
        segs.push(s);
    }
    let mut out = Vec::new();
    rx.decrypt_segment(Instant(0), &segs[0], &mut out)
        .expect("first");
    rx.decrypt_segment(Instant(0), &segs[1], &mut out)
        .expect("second");
    assert_eq!(
        rx.decrypt_segment(Instant(0), &segs[0], &mut out),
        Err(RxError::Replay {
            key: KeyId(1),
            pn: 1
        })
    );
    assert_eq!(
        rx.decrypt_segment(Instant(0), &segs[1], &mut out),
        Err(RxError::Replay {
            key: KeyId(1),
            pn: 2
        })
    );
    // Skipping ahead is fine (a lost segment), going back is not.
    rx.decrypt_segment(Instant(0), &segs[2], &mut out)
        .expect("third");
    assert_eq!(rx.stats().replayed, 2);
    assert_eq!(out.len(), 3 * k);
}

#[test]
fn expired_key_stops_traffic_without_clear_text() {
    let k = 32;
    let cfg = ChannelConfig::new(k).expect("config");
    let mut tx = ChannelTx::new(cfg);
    let mut rx = ChannelRx::new(cfg);
    let key = key(2, 1_000);
    tx.install_key(&key).expect("install");
    tx.activate(KeyId(2));
    rx.install_key(&key.for_peer()).expect("install");
    let fr = frames(5, 20, &[64, 1500]);
    let plain = encode(&fr, k);
    let mut line = Vec::new();
    let mut errors = Vec::new();
    for (i, b) in plain.iter().enumerate() {
        // The first segment is sent before expiry, everything after it at t = 1000 ns.
        let now = if i < k { Instant(0) } else { Instant(1_000) };
        if let Err(e) = tx.push(now, *b, &mut line) {
            errors.push(e);
        }
    }
    let segs = plain.len() / k;
    assert_eq!(errors.len(), segs - 1);
    assert!(errors.iter().all(|e| *e == TxError::KeyExpired(KeyId(2))));
    assert_eq!(tx.stats().blocked, segs as u64 - 1);
    // After the first segment the line carries only Local Fault: no data block at all.
    let seg_len = cfg.line_blocks();
    assert!(line[seg_len..].iter().all(|b| *b == LOCAL_FAULT));
    let mut out = Vec::new();
    for (i, b) in line.iter().enumerate() {
        let now = if i < seg_len {
            Instant(0)
        } else {
            Instant(1_000)
        };
        rx.push(now, *b, &mut out);
    }
    // The first segment's plaintext, then the Local Fault hint passed on as it is.
    assert_eq!(&out[..k], &plain[..k]);
    assert!(out[k..].iter().all(|b| *b == LOCAL_FAULT));
    assert_eq!(rx.stats().fault_hints, (line.len() - seg_len) as u64);
    assert_eq!(out.len() - k, line.len() - seg_len);
    assert_eq!(rx.stats().stray_blocks, 0);
    // A segment arriving after expiry is refused by the receiver too.
    let mut late = Vec::new();
    let mut tx2 = ChannelTx::new(cfg);
    tx2.install_key(&common::key(2, u64::MAX)).expect("install");
    tx2.activate(KeyId(2));
    tx2.encrypt_segment(Instant(0), &plain[k..2 * k], &mut late)
        .expect("encrypt");
    assert_eq!(
        rx.decrypt_segment(Instant(2_000), &late, &mut Vec::new()),
        Err(RxError::KeyExpired(KeyId(2)))
    );
    // No key at all: blocked too.
    let mut tx3 = ChannelTx::new(cfg);
    assert_eq!(
        tx3.encrypt_segment(Instant(0), &plain[..k], &mut Vec::new()),
        Err(TxError::NoKey)
    );
}

fn shape(line: &[Block66]) -> Vec<(u8, Option<u8>)> {
    line.iter().map(|b| (b.sync, b.block_type())).collect()
}

#[test]
fn traffic_patterns_are_indistinguishable_on_the_line() {
    let k = 128;
    let window = 40 * k;
    // Pattern A: back-to-back minimum-size frames. Pattern B: a few jumbo frames and a
    // long silence. Pattern C: PFC frames only. Same time window of plaintext blocks.
    let a = {
        let mut b = encode(&frames(1, 10_000, &[64]), 1);
        b.truncate(window);
        b
    };
    let b = {
        let mut b = encode(&frames(2, 2, &[9216]), 1);
        b.resize(window, Block66::IDLE);
        b
    };
    let c = {
        let pfc: Vec<Vec<u8>> = (0..50)
            .map(|i| mac::pfc_frame([2, 0, 0, 0, 0, 1], 1 << (i % 8), [0xffff; 8]))
            .collect();
        let mut b = encode(&pfc, 1);
        b.resize(window, Block66::IDLE);
        b
    };
    let mut lines = Vec::new();
    for plain in [&a, &b, &c] {
        assert_eq!(plain.len(), window);
        let (mut tx, mut rx) = pair(k);
        let (line, out) = through(&mut tx, &mut rx, plain, 0);
        assert_eq!(&out, plain);
        lines.push(line);
    }
    assert_eq!(lines[0].len(), lines[1].len());
    assert_eq!(lines[0].len(), lines[2].len());
    // Same sync headers and block types at every position: only payload bits differ.
    assert_eq!(shape(&lines[0]), shape(&lines[1]));
    assert_eq!(shape(&lines[0]), shape(&lines[2]));
    // And the PFC frames are not visible: the only control blocks are S and T.
    let controls = lines[2].iter().filter(|b| b.is_control()).count();
    assert_eq!(controls, 2 * window / k);
}

/// Both ends of a link, holding the same traffic key with opposite roles.
fn two_ends(k: usize) -> ((ChannelTx, ChannelRx), (ChannelTx, ChannelRx)) {
    let cfg = ChannelConfig::new(k).expect("config");
    let a_key = key(1, u64::MAX);
    let b_key = a_key.for_peer();
    let mut ends = Vec::new();
    for k in [&a_key, &b_key] {
        let mut tx = ChannelTx::new(cfg);
        let mut rx = ChannelRx::new(cfg);
        tx.install_key(k).expect("install");
        assert!(tx.activate(KeyId(1)));
        rx.install_key(k).expect("install");
        ends.push((tx, rx));
    }
    let b = ends.pop().expect("b");
    let a = ends.pop().expect("a");
    (a, b)
}

#[test]
fn directions_have_separate_key_and_nonce_spaces() {
    let k = 16;
    let ((mut tx_a, mut rx_a), (mut tx_b, mut rx_b)) = two_ends(k);
    let pa = encode(&frames(41, 4, &[200]), k);
    let pb = encode(&frames(42, 4, &[300]), k);
    let (mut sa, mut sb) = (Vec::new(), Vec::new());
    // The first segment each way: same key id, same packet number.
    let p1 = tx_a
        .encrypt_segment(Instant(0), &pa[..k], &mut sa)
        .expect("a");
    let p2 = tx_b
        .encrypt_segment(Instant(0), &pb[..k], &mut sb)
        .expect("b");
    assert_eq!(p1, p2);
    let na = tx_a.last_nonce().expect("a nonce");
    let nb = tx_b.last_nonce().expect("b nonce");
    assert_ne!(na.key, nb.key, "each direction has its own key");
    // With a shared key and nonce, ct_a ^ ct_b would equal pt_a ^ pt_b.
    let w = ChannelConfig::new(k).expect("config").payload_words();
    let (mut wa, mut wb) = (vec![0u64; w], vec![0u64; w]);
    physec::compress::compress(&pa[..k], &mut wa);
    physec::compress::compress(&pb[..k], &mut wb);
    let ct_xor: Vec<u64> = (0..w)
        .map(|i| sa[2 + i].payload ^ sb[2 + i].payload)
        .collect();
    let pt_xor: Vec<u64> = (0..w).map(|i| wa[i] ^ wb[i]).collect();
    let same = ct_xor.iter().zip(&pt_xor).filter(|(x, y)| x == y).count();
    assert!(same <= 1, "{same} of {w} words leak the plaintext XOR");
    // Each end decrypts what the other sent.
    let mut out = Vec::new();
    rx_b.decrypt_segment(Instant(0), &sa, &mut out)
        .expect("a to b");
    assert_eq!(out, &pa[..k]);
    out.clear();
    rx_a.decrypt_segment(Instant(0), &sb, &mut out)
        .expect("b to a");
    assert_eq!(out, &pb[..k]);
}

#[test]
fn reflected_segment_is_rejected() {
    let k = 16;
    let ((mut tx_a, mut rx_a), _) = two_ends(k);
    let pa = encode(&frames(43, 4, &[200]), k);
    let mut line = Vec::new();
    for b in &pa[..2 * k] {
        tx_a.push(Instant(0), *b, &mut line).expect("tx");
    }
    // The line is looped back to the sender's own receiver.
    let mut out = Vec::new();
    let errs: Vec<_> = line
        .iter()
        .filter_map(|b| rx_a.push(Instant(0), *b, &mut out))
        .collect();
    assert_eq!(errs, vec![RxError::AuthFailed, RxError::AuthFailed]);
    assert_eq!(rx_a.stats().segments_ok, 0);
    assert!(out.iter().all(|b| *b == Block66::ERROR));
}

#[test]
fn live_key_is_never_reinstalled() {
    let k = 8;
    let (mut tx, mut rx) = pair(k);
    let plain = encode(&frames(44, 2, &[64]), k);
    let mut seg = Vec::new();
    tx.encrypt_segment(Instant(0), &plain[..k], &mut seg)
        .expect("pn 1");
    // Installing the live key again is refused, so its packet numbers do not restart.
    assert_eq!(
        tx.install_key(&key(1, u64::MAX)),
        Err(physec::keys::KeyError::Live(KeyId(1)))
    );
    assert_eq!(
        rx.install_key(&key(1, u64::MAX).for_peer()),
        Err(physec::keys::KeyError::Live(KeyId(1)))
    );
    let p = tx
        .encrypt_segment(Instant(0), &plain[..k], &mut seg)
        .expect("pn 2");
    assert_eq!(p.pn, 2);
    // A third live key is refused rather than silently evicting one in use.
    tx.install_key(&key(2, u64::MAX)).expect("second key");
    assert_eq!(
        tx.install_key(&key(3, u64::MAX)),
        Err(physec::keys::KeyError::Full)
    );
    assert_eq!(tx.active_key(), Some(KeyId(1)));
}

/// Frames with a real FCS, long enough to span several 8-block segments.
fn fcs_frames() -> Vec<Vec<u8>> {
    (0..12u32)
        .map(|i| {
            let payload: Vec<u8> = (0..(100 + 131 * i)).map(|j| (i * 7 + j) as u8).collect();
            mac::build_frame([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], 0x88b5, &payload)
        })
        .collect()
}

/// Encrypt `fr` in segments of `k`, let `damage` alter the line, receive and decode;
/// returns the delivered frames, the receiver's errors and the receiver.
fn through_damage(
    k: usize,
    fr: &[Vec<u8>],
    damage: impl FnOnce(&mut Vec<Block66>, usize),
) -> (Vec<Vec<u8>>, Vec<RxError>, ChannelRx, u64) {
    let (mut tx, mut rx) = pair(k);
    let plain = encode(fr, k);
    let mut line = Vec::new();
    for b in &plain {
        tx.push(Instant(0), *b, &mut line).expect("tx");
    }
    damage(&mut line, tx.config().line_blocks());
    let mut out = Vec::new();
    let errs = line
        .iter()
        .filter_map(|b| rx.push(Instant(0), *b, &mut out))
        .collect();
    let (got, dec) = decode(&out);
    (got, errs, rx, dec.stats().frames_dropped)
}

#[test]
fn deleted_segment_is_caught_and_no_bad_fcs_frame_is_delivered() {
    let k = 8;
    let fr = fcs_frames();
    // Delete the 20th segment: it lies inside a frame, so without loss detection the
    // receiver would splice that frame's two ends into one with a bad FCS.
    let (got, errs, rx, dropped) = through_damage(k, &fr, |line, n| {
        line.drain(19 * n..20 * n);
    });
    assert_eq!(
        errs,
        vec![RxError::Lost {
            key: KeyId(1),
            skipped: 1
        }]
    );
    assert_eq!(rx.stats().lost_segments, 1);
    assert_eq!(dropped, 1);
    assert_eq!(got.len(), fr.len() - 1);
    for g in &got {
        assert!(mac::fcs_ok(g) && fr.contains(g));
    }
}

#[test]
fn unframed_segment_is_caught_and_no_bad_fcs_frame_is_delivered() {
    let k = 8;
    let fr = fcs_frames();
    for (what, bit) in [("S payload", 20u32), ("S sync header", 0)] {
        // One flipped bit in the S block of a segment inside a frame.
        let (got, errs, rx, dropped) = through_damage(k, &fr, |line, n| {
            let s = &mut line[19 * n];
            if bit < 2 {
                s.sync ^= 1 << bit;
            } else {
                s.payload ^= 1 << (bit - 2);
            }
        });
        assert_eq!(errs, vec![RxError::Unframed], "{what}");
        let st = rx.stats();
        assert_eq!((st.unframed_runs, st.lost_segments), (1, 1), "{what}");
        let n = ChannelConfig::new(k).expect("config").line_blocks() as u64;
        assert_eq!(st.stray_blocks, n, "{what}: the whole segment, T included");
        assert_eq!(dropped, 1, "{what}");
        assert_eq!(got.len(), fr.len() - 1, "{what}");
        for g in &got {
            assert!(mac::fcs_ok(g) && fr.contains(g), "{what}");
        }
    }
}

#[test]
fn local_fault_reaches_the_far_end_reconciliation_sublayer() {
    let k = 8;
    let cfg = ChannelConfig::new(k).expect("config");
    let mut tx = ChannelTx::new(cfg);
    let mut rx = ChannelRx::new(cfg);
    let plain = encode(&frames(45, 3, &[64]), k);
    let mut line = Vec::new();
    // No key: every segment slot is filled with Local Fault.
    for b in &plain {
        let _ = tx.push(Instant(0), *b, &mut line);
    }
    assert_eq!(tx.stats().blocked, (plain.len() / k) as u64);
    assert!(!line.is_empty() && line.iter().all(|b| *b == LOCAL_FAULT));
    let mut out = Vec::new();
    for b in &line {
        assert_eq!(rx.push(Instant(0), *b, &mut out), None);
    }
    assert_eq!(rx.stats().fault_hints, line.len() as u64);
    let mut dec = physec::pcs::PcsDecoder::new();
    let mut ev = Vec::new();
    dec.push_all(&out, &mut ev);
    assert!(!ev.is_empty());
    assert!(ev
        .iter()
        .all(|e| *e == physec::pcs::RxEvent::OrderedSet([0, 0, 1])));
}
