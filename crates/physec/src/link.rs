//! Link-level PHYSec: encryption of the PMA bit stream in the optical module, in units of
//! multi-frames of alignment-marker periods.
//!
//! Source document 000 (section 2.2.3, figure 8): after the host PHY has encoded,
//! scrambled and inserted alignment markers (IEEE 802.3 clause 82.2.7 for 100GBASE-R; the
//! 200G/400G PCS of clause 119 does the same on 257-bit blocks), the module's optical DSP
//! locks on the AMs, groups `N` AM periods into a *multi-frame*, and encrypts it; the far
//! module locks on the AMs again, decrypts, and hands the host PHY the original stream.
//! The AMs must stay in clear, or neither module could find lock.
//!
//! This module models one serial block stream with an AM group of `am_lanes` markers
//! (the clause 82 values for PCS lanes 0..3, Table 82-3, BIP fields fixed) at the start of
//! each period of `am_period` blocks. Everything else, the whole 66-bit blocks *including
//! sync headers*, is encrypted, so idles, frame boundaries, PFC frames and block types all
//! disappear. The layout of a multi-frame:
//!
//! ```text
//! period 0:   AM x am_lanes | P | G0 | G1 | ciphertext ...
//! period 1..: AM x am_lanes | ciphertext ...
//! ```
//!
//! `P` is a parameter block (version, key id, 48-bit multi-frame counter, the same layout
//! as the channel-level D block) and `G0 G1` the 128-bit tag, as data blocks. These three
//! blocks are the security overhead of the multi-frame: the host PCS must leave them free
//! (idle deletion, exactly as it makes room for AMs), or the module must run slightly
//! faster than the host lane rate.
//!
//! **Cipher choice.** Confidentiality is AES-256 in counter mode (NIST SP 800-38A) with the
//! counter block `salt(4) || direction(1) || 0 || multi-frame counter(6) || block
//! index(4)`, so the keystream of every multi-frame is known in advance and encryption is
//! a XOR, which is what lets hardware reach ~100 ns. Integrity is one GMAC tag (NIST SP
//! 800-38D, GCM with empty plaintext) per multi-frame over the parameter block and the
//! whole ciphertext, under an independent key and a nonce of `salt'(4) || direction(1) ||
//! 0 || counter(6)`: encrypt-then-MAC with separate keys. Keys and salts are derived per
//! direction ([`crate::keys`]) and the direction is in both nonces as well, so the two
//! directions never share a keystream and a reflected multi-frame fails its tag. We chose one tag per multi-frame over per-segment tags because the multi-frame is
//! already the unit of encryption and AM lock, and because per-segment tags would cost
//! three blocks each. The price is that a receiver that verifies before delivering must
//! buffer a whole multi-frame (this reference does, so a tampered multi-frame is never
//! delivered); a hardware module that forwards before the tag arrives trades that
//! guarantee for latency, and can only raise an alarm after the fact.

use crate::channel::{ConfigError, RxError, TxError};
use crate::keys::{
    accept_pn, fingerprint, is_replay, Direction, KeyError, KeyId, KeyRing, NonceUse, TrafficKey,
    MAX_PN,
};
use crate::time::Instant;
use crate::wire::block::Block66;
use crate::wire::segment::ParamRepr;
use aes::Aes256;
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes256Gcm, KeyInit, Nonce, Tag};
use core::fmt;
use ctr::cipher::{InnerIvInit, StreamCipher};
use zeroize::ZeroizeOnDrop;

type Aes256Ctr = ctr::Ctr32BE<Aes256>;

/// Clause 82 alignment-marker octets M0, M1, M2 for PCS lanes 0..3 (Table 82-3); M4..M6
/// are their complements.
pub const AM_CODES: [[u8; 3]; 4] = [
    [0xc1, 0x68, 0x21],
    [0x9d, 0x71, 0x8e],
    [0x59, 0x4b, 0xe8],
    [0x4d, 0x95, 0x7b],
];

/// Overhead blocks per multi-frame (parameter block and two tag blocks).
pub const OVERHEAD_BLOCKS: usize = 3;

/// The alignment marker of PCS lane `lane` (0..4): control sync header, octets
/// `M0 M1 M2 BIP3 M4 M5 M6 BIP7` with BIP3 = 0x00 and BIP7 = 0xff in this model.
pub fn alignment_marker(lane: usize) -> Block66 {
    let m = AM_CODES[lane % 4];
    let o = [m[0], m[1], m[2], 0x00, !m[0], !m[1], !m[2], 0xff];
    Block66::control(u64::from_le_bytes(o))
}

/// Link-level geometry, validated once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkConfig {
    am_lanes: usize,
    am_period: usize,
    periods: usize,
}

impl LinkConfig {
    /// `am_lanes` markers (1..=4) open each period of `am_period` blocks; a multi-frame is
    /// `periods` periods. 100GBASE-R uses 20 lanes and 16384-block periods per lane; here
    /// the stream is serial, so choose e.g. 4 lanes and 16384 blocks.
    pub fn new(
        am_lanes: usize,
        am_period: usize,
        periods: usize,
    ) -> Result<LinkConfig, ConfigError> {
        if !(1..=4).contains(&am_lanes) {
            return Err(ConfigError("am_lanes must be in 1..=4"));
        }
        if am_period < am_lanes + OVERHEAD_BLOCKS + 1 || am_period > 1 << 20 {
            return Err(ConfigError("am_period too small or too large"));
        }
        if periods == 0 || periods > 64 {
            return Err(ConfigError("periods must be in 1..=64"));
        }
        Ok(LinkConfig {
            am_lanes,
            am_period,
            periods,
        })
    }

    /// Blocks in one multi-frame on the line.
    pub fn multiframe_blocks(&self) -> usize {
        self.am_period * self.periods
    }

    /// Payload blocks carried per multi-frame.
    pub fn payload_blocks(&self) -> usize {
        self.periods * (self.am_period - self.am_lanes) - OVERHEAD_BLOCKS
    }

    fn is_payload_slot(&self, i: usize) -> bool {
        let in_period = i % self.am_period;
        in_period >= self.am_lanes
            && !(i < self.am_period && in_period < self.am_lanes + OVERHEAD_BLOCKS)
    }
}

/// Working keys of one traffic key in one direction at link level. Not `Clone`; the key
/// schedules and the GHASH key are wiped on drop.
pub struct LinkCipher {
    enc: Aes256,
    enc_salt: [u8; 4],
    mac: Aes256Gcm,
    mac_salt: [u8; 4],
    dir: u8,
    enc_fingerprint: [u8; 16],
}

impl ZeroizeOnDrop for LinkCipher {}

impl fmt::Debug for LinkCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LinkCipher")
    }
}

impl LinkCipher {
    /// Derive the CTR key, the GMAC key and their salts of direction `dir` from a
    /// traffic key.
    pub fn from_traffic_key(k: &TrafficKey, dir: Direction) -> LinkCipher {
        let mac = k.derive::<32>(b"physec link gmac key", dir);
        let enc = k.derive::<32>(b"physec link aes-256-ctr key", dir);
        LinkCipher {
            enc: Aes256::new((&*enc).into()),
            enc_salt: *k.derive::<4>(b"physec link ctr salt", dir),
            mac: Aes256Gcm::new((&*mac).into()),
            mac_salt: *k.derive::<4>(b"physec link gmac salt", dir),
            dir: dir.octet(),
            enc_fingerprint: fingerprint(&enc[..]),
        }
    }

    /// The initial counter block of multi-frame `counter` (at most 48 bits).
    fn ctr_iv(&self, counter: u64) -> [u8; 16] {
        let mut iv = [0u8; 16];
        iv[..4].copy_from_slice(&self.enc_salt);
        iv[4..12].copy_from_slice(&(counter & MAX_PN).to_be_bytes());
        iv[4] = self.dir;
        iv
    }

    fn keystream_xor(&self, counter: u64, buf: &mut [u8]) {
        let iv = self.ctr_iv(counter);
        let core = ctr::CtrCore::<Aes256, ctr::flavors::Ctr32BE>::inner_iv_init(
            self.enc.clone(),
            &iv.into(),
        );
        let mut c = Aes256Ctr::from_core(core);
        c.apply_keystream(buf);
    }

    fn gmac_nonce(&self, counter: u64) -> [u8; 12] {
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&self.mac_salt);
        n[4..].copy_from_slice(&(counter & MAX_PN).to_be_bytes());
        n[4] = self.dir;
        n
    }

    /// GMAC over `data`; `None` only beyond GCM's 2^61-octet AAD limit.
    fn tag(&self, counter: u64, data: &[u8]) -> Option<[u8; 16]> {
        let n = self.gmac_nonce(counter);
        self.mac
            .encrypt_in_place_detached(Nonce::from_slice(&n), data, &mut [])
            .ok()
            .map(Into::into)
    }

    fn verify(&self, counter: u64, data: &[u8], tag: &[u8; 16]) -> bool {
        let n = self.gmac_nonce(counter);
        self.mac
            .decrypt_in_place_detached(Nonce::from_slice(&n), data, &mut [], Tag::from_slice(tag))
            .is_ok()
    }
}

/// Pack 66-bit blocks back to back (sync header first, LSB first) into octets, as a
/// gearbox puts them on the serial lane; `out` gets `ceil(66 n / 8)` octets.
pub fn pack66(blocks: &[Block66], out: &mut Vec<u8>) {
    let mut acc: u128 = 0;
    let mut n = 0u32;
    for b in blocks {
        acc |= u128::from(b.sync & 0b11) << n;
        acc |= u128::from(b.payload) << (n + 2);
        n += 66;
        while n >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            n -= 8;
        }
    }
    if n > 0 {
        out.push(acc as u8);
    }
}

/// Inverse of [`pack66`]: fill `out` from `bytes`. Returns false if `bytes` is too short.
pub fn unpack66(bytes: &[u8], out: &mut [Block66]) -> bool {
    if bytes.len() * 8 < out.len() * 66 {
        return false;
    }
    let mut acc: u128 = 0;
    let mut n = 0u32;
    let mut it = bytes.iter();
    for b in out.iter_mut() {
        while n < 66 {
            acc |= u128::from(*it.next().unwrap_or(&0)) << n;
            n += 8;
        }
        b.sync = (acc & 0b11) as u8;
        b.payload = (acc >> 2) as u64;
        acc >>= 66;
        n -= 66;
    }
    true
}

/// Link-level transmitter (the encrypting half of an optical module).
#[derive(Debug)]
pub struct LinkTx {
    cfg: LinkConfig,
    keys: KeyRing<LinkCipher>,
    active: Option<KeyId>,
    buf: Vec<u8>,
    last_nonce: Option<NonceUse>,
}

/// Link-level receiver (the decrypting half).
#[derive(Debug)]
pub struct LinkRx {
    cfg: LinkConfig,
    keys: KeyRing<LinkCipher>,
    buf: Vec<u8>,
    payload: Vec<Block66>,
    /// Multi-frames accepted.
    pub accepted: u64,
    /// Multi-frames rejected (any reason).
    pub rejected: u64,
    /// Multi-frame counters skipped by accepted multi-frames (sent, never accepted).
    pub lost: u64,
}

impl LinkTx {
    /// A transmitter with no key.
    pub fn new(cfg: LinkConfig) -> LinkTx {
        LinkTx {
            cfg,
            keys: KeyRing::default(),
            active: None,
            buf: Vec::new(),
            last_nonce: None,
        }
    }

    /// Install a key for this end's transmit direction; a live key id is refused.
    pub fn install_key(&mut self, k: &TrafficKey) -> Result<(), KeyError> {
        let dir = k.role().tx_direction();
        self.keys
            .install(k.id(), LinkCipher::from_traffic_key(k, dir), k.expires())
    }

    /// The (CTR key, initial counter block) pair of the last multi-frame, for audits.
    pub fn last_nonce(&self) -> Option<NonceUse> {
        self.last_nonce
    }

    /// Send under `id` from the next multi-frame on.
    pub fn activate(&mut self, id: KeyId) -> bool {
        let ok = self.keys.get(id).is_some();
        if ok {
            self.active = Some(id);
        }
        ok
    }

    /// Remove a key.
    pub fn retire(&mut self, id: KeyId) {
        self.keys.retire(id);
        if self.active == Some(id) {
            self.active = None;
        }
    }

    /// Encrypt one multi-frame's payload (exactly [`LinkConfig::payload_blocks`] blocks),
    /// appending the multi-frame with its clear AMs to `out`.
    pub fn encrypt_multiframe(
        &mut self,
        now: Instant,
        payload: &[Block66],
        out: &mut Vec<Block66>,
    ) -> Result<ParamRepr, TxError> {
        if payload.len() != self.cfg.payload_blocks() {
            return Err(TxError::Length);
        }
        let id = self.active.ok_or(TxError::NoKey)?;
        let slot = self.keys.get_mut(id).ok_or(TxError::NoKey)?;
        if now >= slot.expires {
            return Err(TxError::KeyExpired(id));
        }
        if slot.next_pn > MAX_PN {
            return Err(TxError::PnExhausted(id));
        }
        let param = ParamRepr {
            key_id: id,
            pn: slot.next_pn,
        };
        slot.next_pn += 1;
        let pblock = param.emit();
        self.buf.clear();
        self.buf.extend_from_slice(&pblock.payload.to_le_bytes());
        pack66(payload, &mut self.buf);
        slot.cipher.keystream_xor(param.pn, &mut self.buf[8..]);
        // The tail bits after the last block are not transmitted: clear them so the tag
        // covers exactly what the receiver re-packs.
        let tail = (66 * payload.len()) % 8;
        if tail != 0 {
            if let Some(last) = self.buf.last_mut() {
                *last &= (1u8 << tail) - 1;
            }
        }
        let tag = slot
            .cipher
            .tag(param.pn, &self.buf)
            .ok_or(TxError::Length)?;
        self.last_nonce = Some(NonceUse {
            key: slot.cipher.enc_fingerprint,
            nonce: slot.cipher.ctr_iv(param.pn),
        });
        let mut ct = vec![Block66::default(); payload.len()];
        unpack66(&self.buf[8..], &mut ct);
        let mut ct = ct.into_iter();
        let base = out.len();
        for i in 0..self.cfg.multiframe_blocks() {
            let in_period = i % self.cfg.am_period;
            let b = if in_period < self.cfg.am_lanes {
                alignment_marker(in_period)
            } else if i < self.cfg.am_period && in_period < self.cfg.am_lanes + OVERHEAD_BLOCKS {
                match in_period - self.cfg.am_lanes {
                    0 => pblock,
                    1 => Block66::data(u64::from_le_bytes(tag[..8].try_into().unwrap_or_default())),
                    _ => Block66::data(u64::from_le_bytes(tag[8..].try_into().unwrap_or_default())),
                }
            } else {
                ct.next().unwrap_or_default()
            };
            out.push(b);
        }
        debug_assert_eq!(out.len() - base, self.cfg.multiframe_blocks());
        Ok(param)
    }
}

impl LinkRx {
    /// A receiver with no key.
    pub fn new(cfg: LinkConfig) -> LinkRx {
        LinkRx {
            cfg,
            keys: KeyRing::default(),
            buf: Vec::new(),
            payload: Vec::new(),
            accepted: 0,
            rejected: 0,
            lost: 0,
        }
    }

    /// Install a key for this end's receive direction; a live key id is refused.
    pub fn install_key(&mut self, k: &TrafficKey) -> Result<(), KeyError> {
        let dir = k.role().rx_direction();
        self.keys
            .install(k.id(), LinkCipher::from_traffic_key(k, dir), k.expires())
    }

    /// Remove a key.
    pub fn retire(&mut self, id: KeyId) {
        self.keys.retire(id);
    }

    /// Check AM lock, authenticate and decrypt one multi-frame, appending its payload
    /// blocks to `out`, after a run of error blocks when multi-frames before it were
    /// lost or rejected (a gap in the counters). Nothing is appended on error: the next
    /// accepted multi-frame shows the gap.
    pub fn decrypt_multiframe(
        &mut self,
        now: Instant,
        mf: &[Block66],
        out: &mut Vec<Block66>,
    ) -> Result<ParamRepr, RxError> {
        let r = self.decrypt_inner(now, mf, out);
        if r.is_ok() {
            self.accepted += 1;
        } else {
            self.rejected += 1;
        }
        r
    }

    fn decrypt_inner(
        &mut self,
        now: Instant,
        mf: &[Block66],
        out: &mut Vec<Block66>,
    ) -> Result<ParamRepr, RxError> {
        let cfg = self.cfg;
        if mf.len() != cfg.multiframe_blocks() {
            return Err(RxError::Malformed);
        }
        for p in 0..cfg.periods {
            for lane in 0..cfg.am_lanes {
                if mf[p * cfg.am_period + lane] != alignment_marker(lane) {
                    return Err(RxError::Malformed);
                }
            }
        }
        let pblock = mf[cfg.am_lanes];
        let param = ParamRepr::parse(&pblock).map_err(|_| RxError::Malformed)?;
        let (g0, g1) = (mf[cfg.am_lanes + 1], mf[cfg.am_lanes + 2]);
        if !g0.is_data() || !g1.is_data() {
            return Err(RxError::Malformed);
        }
        let mut tag = [0u8; 16];
        tag[..8].copy_from_slice(&g0.payload.to_le_bytes());
        tag[8..].copy_from_slice(&g1.payload.to_le_bytes());
        let slot = self
            .keys
            .get_mut(param.key_id)
            .ok_or(RxError::UnknownKey(param.key_id))?;
        if now >= slot.expires {
            return Err(RxError::KeyExpired(param.key_id));
        }
        if is_replay(slot, param.pn) {
            return Err(RxError::Replay {
                key: param.key_id,
                pn: param.pn,
            });
        }
        self.payload.clear();
        self.payload.extend(
            mf.iter()
                .enumerate()
                .filter(|(i, _)| cfg.is_payload_slot(*i))
                .map(|(_, b)| *b),
        );
        self.buf.clear();
        self.buf.extend_from_slice(&pblock.payload.to_le_bytes());
        pack66(&self.payload, &mut self.buf);
        if !slot.cipher.verify(param.pn, &self.buf, &tag) {
            return Err(RxError::AuthFailed);
        }
        slot.cipher.keystream_xor(param.pn, &mut self.buf[8..]);
        // Only an authentic multi-frame may advance the replay window. Multi-frames it
        // skipped were lost or rejected: their payload is missing from the stream, so
        // a run of error blocks as long as one multi-frame's payload goes before this
        // one's, as a 64B/66B receiver substitutes for bad blocks; a frame spliced
        // across the gap is then discarded, not delivered with a bad FCS.
        let skipped = accept_pn(slot, param.pn);
        if skipped > 0 {
            self.lost = self.lost.saturating_add(skipped);
            out.extend(std::iter::repeat_n(Block66::ERROR, self.payload.len()));
        }
        let start = out.len();
        out.resize(start + self.payload.len(), Block66::default());
        unpack66(&self.buf[8..], &mut out[start..]);
        Ok(param)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn am_lane0_literal() {
        let am = alignment_marker(0);
        assert!(am.is_control());
        assert_eq!(
            am.payload.to_le_bytes(),
            [0xc1, 0x68, 0x21, 0x00, 0x3e, 0x97, 0xde, 0xff]
        );
    }

    #[test]
    fn pack_unpack_round_trip() {
        let blocks: Vec<Block66> = (0..13u64)
            .map(|i| Block66 {
                sync: (i % 4) as u8,
                payload: i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            })
            .collect();
        let mut bytes = Vec::new();
        pack66(&blocks, &mut bytes);
        assert_eq!(bytes.len(), (13 * 66usize).div_ceil(8));
        let mut back = vec![Block66::default(); 13];
        assert!(unpack66(&bytes, &mut back));
        assert_eq!(back, blocks);
        assert!(!unpack66(&bytes[1..], &mut back));
    }
}
