//! Channel-level PHYSec: encryption of the 64B/66B block stream inside the PHY chip.
//!
//! Source document 000, section 2.2.3 and figure 9: after the PCS encoder (IEEE 802.3
//! clause 49.2.4 / 82.2.3) and before the scrambler, the transmitter takes `K` blocks of
//! the 64B/66B stream, *all* of them, idles and ordered sets included, compresses them to
//! 65-bit units ([`crate::compress`]), encrypts the result and sends it as an encryption
//! segment ([`crate::wire::segment`]): an S block, one D block of parameters (key id and
//! packet number), the ciphertext in the 64-bit payloads of D blocks, the tag, a T block.
//! The receiver authenticates the whole segment, decrypts, and restores the 65B and then
//! the 64B/66B stream.
//!
//! The cipher is AES-256-GCM (NIST SP 800-38D) from RustCrypto's `aes-gcm`. Key and salt
//! are derived per [`Direction`] ([`crate::keys`]), so the two directions of a link have
//! separate key and nonce spaces. The 96-bit nonce is the 32-bit salt followed by the
//! 64-bit packet number, as in MACsec's extended packet numbering (IEEE 802.1AEbw); the
//! additional authenticated data is the parameter block followed by the direction octet,
//! which binds key id, packet number and direction to the segment, so an end that
//! receives its own segment reflected back rejects it. Packet numbers start at 1 for each
//! key in each direction and must strictly increase: a segment whose number is not above
//! every number accepted so far under its key is a replay.
//!
//! Loss is visible. An authentic segment whose packet number skips numbers shows that
//! segments were deleted or lost their framing; blocks other than idles and Local Fault
//! outside a segment show a segment whose S block was damaged. Either way the streaming
//! receiver inserts `K` error blocks before what it delivers next, as a 64B/66B receiver
//! does for a run of bad blocks, so a frame spliced across the gap is discarded by the
//! reconciliation sublayer instead of reaching the MAC with a bad FCS, and counts the
//! loss. (Segments lost just before a key switch leave no gap in the new key's numbers;
//! the MAC's FCS check is the remaining guard there.)
//!
//! Because every block is encrypted and a segment always has the same size, the line
//! carries an identical pattern of segments whether the MAC sends 64-octet frames, jumbo
//! frames, PFC frames or nothing: frame lengths, frame boundaries and timing are hidden.
//! A segment that fails any check is never decrypted into the stream: the streaming
//! receiver substitutes `K` error blocks so the frame in progress is discarded by the
//! reconciliation sublayer, and counts the failure.
//!
//! When the transmitter has no valid key (none installed, or expired because a rekey did
//! not arrive) it does not fall back to clear text: the streaming transmitter sends the
//! clause 46 Local Fault ordered set instead, and counts the blocked segment. The
//! receiver passes Local Fault found outside segments on to its reconciliation sublayer,
//! which then signals Remote Fault back, so both reconciliation sublayers stop sending
//! frames (clause 46.3.4). Local Fault is an unauthenticated hint, as it is in plain
//! Ethernet: an attacker on the fibre can stop traffic anyway by cutting it.

use crate::compress::{compress, decompress, words_for};
use crate::keys::{
    accept_pn, fingerprint, is_replay, Direction, KeyError, KeyId, KeyRing, NonceUse, TrafficKey,
    MAX_PN,
};
use crate::time::Instant;
use crate::wire::block::{Block66, BlockRepr};
use crate::wire::segment::{segment_len, start_block, terminate_block, ParamRepr, Segment};
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes256Gcm, KeyInit, Nonce, Tag};
use core::fmt;
use zeroize::ZeroizeOnDrop;

/// Largest segment length accepted by [`ChannelConfig::new`].
pub const MAX_SEGMENT_BLOCKS: usize = 1 << 16;

/// The Local Fault sequence ordered set (clause 46.3.4), sent while traffic is blocked.
pub const LOCAL_FAULT: Block66 = Block66::control(0x0000_0000_0100_004b);

/// Channel-level parameters, validated once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelConfig {
    segment_blocks: usize,
}

/// Why a configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError(pub &'static str);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid configuration: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

impl ChannelConfig {
    /// Segments of `segment_blocks` plaintext 64B/66B blocks (1..=[`MAX_SEGMENT_BLOCKS`]).
    pub fn new(segment_blocks: usize) -> Result<ChannelConfig, ConfigError> {
        if segment_blocks == 0 || segment_blocks > MAX_SEGMENT_BLOCKS {
            return Err(ConfigError("segment_blocks must be in 1..=65536"));
        }
        Ok(ChannelConfig { segment_blocks })
    }

    /// Plaintext blocks per segment (`K`).
    pub fn segment_blocks(&self) -> usize {
        self.segment_blocks
    }

    /// Ciphertext words per segment (`W = ceil(65 K / 64)`).
    pub fn payload_words(&self) -> usize {
        words_for(self.segment_blocks)
    }

    /// Blocks on the line per segment (`W + 5`).
    pub fn line_blocks(&self) -> usize {
        segment_len(self.payload_words())
    }
}

/// Why the transmitter could not produce a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxError {
    /// The input was not exactly one segment of blocks.
    Length,
    /// No transmit key is active.
    NoKey,
    /// The active key has expired.
    KeyExpired(KeyId),
    /// The packet-number space of the active key is used up.
    PnExhausted(KeyId),
}

impl fmt::Display for TxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxError::Length => write!(f, "input is not one segment long"),
            TxError::NoKey => write!(f, "no transmit key"),
            TxError::KeyExpired(k) => write!(f, "key {} expired", k.0),
            TxError::PnExhausted(k) => write!(f, "packet numbers of key {} exhausted", k.0),
        }
    }
}

impl std::error::Error for TxError {}

/// Why a received segment was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxError {
    /// Framing, parameter block or padding is wrong.
    Malformed,
    /// The key id is not live at the receiver.
    UnknownKey(KeyId),
    /// The key has expired.
    KeyExpired(KeyId),
    /// The packet number is not newer than one already accepted.
    Replay {
        /// Key id.
        key: KeyId,
        /// Packet number.
        pn: u64,
    },
    /// The GCM tag did not verify: the segment was altered or forged, or it was sent in
    /// the other direction (reflected).
    AuthFailed,
    /// Blocks other than idles and Local Fault arrived outside a segment: a segment's
    /// framing was damaged and its contents dropped (streaming receiver only).
    Unframed,
    /// An authentic segment skipped packet numbers: `skipped` earlier segments under `key`
    /// never arrived intact. The segment itself was delivered, after error blocks
    /// (streaming receiver only).
    Lost {
        /// Key id.
        key: KeyId,
        /// Packet numbers skipped.
        skipped: u64,
    },
}

impl fmt::Display for RxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RxError::Malformed => write!(f, "malformed segment"),
            RxError::UnknownKey(k) => write!(f, "unknown key {}", k.0),
            RxError::KeyExpired(k) => write!(f, "key {} expired", k.0),
            RxError::Replay { key, pn } => write!(f, "replayed pn {pn} under key {}", key.0),
            RxError::AuthFailed => write!(f, "authentication failed"),
            RxError::Unframed => write!(f, "blocks outside a segment"),
            RxError::Lost { key, skipped } => {
                write!(f, "{skipped} segment(s) under key {} lost", key.0)
            }
        }
    }
}

impl std::error::Error for RxError {}

/// The AES-GCM state for one key in one direction. Not `Clone`; the AES key schedule and
/// the GHASH key are wiped on drop (the `zeroize` features of `aes` and `polyval`).
pub struct ChannelCipher {
    aead: Aes256Gcm,
    salt: [u8; 4],
    dir: u8,
    fingerprint: [u8; 16],
}

impl ZeroizeOnDrop for ChannelCipher {}

impl fmt::Debug for ChannelCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChannelCipher")
    }
}

impl ChannelCipher {
    /// Derive the channel-level key and salt of direction `dir` from a traffic key.
    pub fn from_traffic_key(key: &TrafficKey, dir: Direction) -> ChannelCipher {
        let k = key.derive::<32>(b"physec channel aes-256-gcm key", dir);
        ChannelCipher {
            aead: Aes256Gcm::new((&*k).into()),
            salt: *key.derive::<4>(b"physec channel salt", dir),
            dir: dir.octet(),
            fingerprint: fingerprint(&k[..]),
        }
    }

    /// A cipher from a raw AES-256 key and salt (for known-answer tests and tools).
    pub fn from_raw(key: [u8; 32], salt: [u8; 4]) -> ChannelCipher {
        let key = zeroize::Zeroizing::new(key);
        ChannelCipher {
            aead: Aes256Gcm::new((&*key).into()),
            salt,
            dir: 0,
            fingerprint: fingerprint(&key[..]),
        }
    }

    /// The additional authenticated data of a segment: its parameter block, then the
    /// direction octet (not sent: each end knows which direction it receives).
    fn aad(&self, param: &Block66) -> [u8; 9] {
        let mut a = [0u8; 9];
        a[..8].copy_from_slice(&param.payload.to_le_bytes());
        a[8] = self.dir;
        a
    }

    /// The 96-bit GCM nonce for packet number `pn`: salt, then `pn` big-endian.
    pub fn nonce(&self, pn: u64) -> [u8; 12] {
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&self.salt);
        n[4..].copy_from_slice(&pn.to_be_bytes());
        n
    }

    /// Encrypt `buf` in place under packet number `pn` with additional data `aad`;
    /// returns the tag. `None` only for inputs beyond GCM's 2^36-octet limit.
    pub fn seal(&self, pn: u64, aad: &[u8], buf: &mut [u8]) -> Option<[u8; 16]> {
        let nonce = self.nonce(pn);
        self.aead
            .encrypt_in_place_detached(Nonce::from_slice(&nonce), aad, buf)
            .ok()
            .map(Into::into)
    }

    /// Verify `tag` and decrypt `buf` in place. On failure `buf` must be discarded.
    pub fn open(&self, pn: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
        let nonce = self.nonce(pn);
        self.aead
            .decrypt_in_place_detached(Nonce::from_slice(&nonce), aad, buf, Tag::from_slice(tag))
            .is_ok()
    }
}

/// Transmit counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxStats {
    /// Segments encrypted and sent.
    pub segments: u64,
    /// Segment slots in which traffic was blocked for lack of a valid key.
    pub blocked: u64,
}

fn nonce_use(c: &ChannelCipher, pn: u64) -> NonceUse {
    let mut nonce = [0u8; 16];
    nonce[..12].copy_from_slice(&c.nonce(pn));
    NonceUse {
        key: c.fingerprint,
        nonce,
    }
}

/// Channel-level transmitter.
#[derive(Debug)]
pub struct ChannelTx {
    cfg: ChannelConfig,
    keys: KeyRing<ChannelCipher>,
    active: Option<KeyId>,
    words: Vec<u64>,
    bytes: Vec<u8>,
    pending: Vec<Block66>,
    stats: TxStats,
    last_nonce: Option<NonceUse>,
}

fn words_to_bytes(words: &[u64], bytes: &mut Vec<u8>) {
    bytes.clear();
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
}

fn word_at(bytes: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[8 * i..8 * i + 8]);
    u64::from_le_bytes(w)
}

impl ChannelTx {
    /// A transmitter with no key (it blocks traffic until one is installed and activated).
    pub fn new(cfg: ChannelConfig) -> ChannelTx {
        ChannelTx {
            cfg,
            keys: KeyRing::default(),
            active: None,
            words: vec![0; cfg.payload_words()],
            bytes: Vec::with_capacity(8 * cfg.payload_words()),
            pending: Vec::with_capacity(cfg.segment_blocks()),
            stats: TxStats::default(),
            last_nonce: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> ChannelConfig {
        self.cfg
    }

    /// Install a key for this end's transmit direction (it is not used until
    /// [`ChannelTx::activate`]). A live key id is refused: reinstalling it would restart
    /// its packet numbers and repeat nonces.
    pub fn install_key(&mut self, key: &TrafficKey) -> Result<(), KeyError> {
        let dir = key.role().tx_direction();
        self.keys.install(
            key.id(),
            ChannelCipher::from_traffic_key(key, dir),
            key.expires(),
        )
    }

    /// Send under key `id` from the next segment on. Returns false if it is not installed.
    pub fn activate(&mut self, id: KeyId) -> bool {
        if self.keys.get(id).is_some() {
            self.active = Some(id);
            true
        } else {
            false
        }
    }

    /// Remove key `id`; if it was active, traffic blocks until another is activated.
    pub fn retire(&mut self, id: KeyId) {
        self.keys.retire(id);
        if self.active == Some(id) {
            self.active = None;
        }
    }

    /// The active key id.
    pub fn active_key(&self) -> Option<KeyId> {
        self.active
    }

    /// Counters so far.
    pub fn stats(&self) -> TxStats {
        self.stats
    }

    /// The (key, nonce) pair of the last segment encrypted, for audits and tests.
    pub fn last_nonce(&self) -> Option<NonceUse> {
        self.last_nonce
    }

    /// Encrypt exactly one segment of plaintext blocks, appending the segment's line
    /// blocks to `out`. On error nothing is appended.
    pub fn encrypt_segment(
        &mut self,
        now: Instant,
        plain: &[Block66],
        out: &mut Vec<Block66>,
    ) -> Result<ParamRepr, TxError> {
        if plain.len() != self.cfg.segment_blocks {
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
        compress(plain, &mut self.words);
        words_to_bytes(&self.words, &mut self.bytes);
        let pblock = param.emit();
        let aad = slot.cipher.aad(&pblock);
        let tag = slot
            .cipher
            .seal(param.pn, &aad, &mut self.bytes)
            // GCM only refuses inputs beyond 2^36 bytes; a segment is at most ~0.5 MB.
            .ok_or(TxError::Length)?;
        out.reserve(self.cfg.line_blocks());
        out.push(start_block());
        out.push(pblock);
        for i in 0..self.words.len() {
            out.push(Block66::data(word_at(&self.bytes, i)));
        }
        out.push(Block66::data(word_at(&tag, 0)));
        out.push(Block66::data(word_at(&tag, 1)));
        out.push(terminate_block());
        self.stats.segments += 1;
        self.last_nonce = Some(nonce_use(&slot.cipher, param.pn));
        Ok(param)
    }

    /// Streaming transmit: buffer one plaintext block; when a segment is complete, append
    /// it to `out`. If it cannot be encrypted, the slot is filled with Local Fault
    /// ordered sets instead (never clear text) and the error is returned.
    pub fn push(
        &mut self,
        now: Instant,
        block: Block66,
        out: &mut Vec<Block66>,
    ) -> Result<(), TxError> {
        self.pending.push(block);
        if self.pending.len() < self.cfg.segment_blocks {
            return Ok(());
        }
        let plain = core::mem::take(&mut self.pending);
        let r = self.encrypt_segment(now, &plain, out);
        self.pending = plain;
        self.pending.clear();
        if r.is_err() {
            self.stats.blocked += 1;
            out.extend(std::iter::repeat_n(LOCAL_FAULT, self.cfg.line_blocks()));
        }
        r.map(|_| ())
    }
}

/// Receive counters. Every rejected segment is counted under exactly one reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxStats {
    /// Segments authenticated and delivered.
    pub segments_ok: u64,
    /// Segments whose framing, parameters or padding were wrong.
    pub malformed: u64,
    /// Segments under a key id that is not live.
    pub unknown_key: u64,
    /// Segments under an expired key.
    pub expired: u64,
    /// Replayed segments.
    pub replayed: u64,
    /// Segments whose tag did not verify.
    pub auth_failed: u64,
    /// Blocks outside segments other than idles and Local Fault.
    pub stray_blocks: u64,
    /// Runs of such blocks (each is a segment whose framing was damaged).
    pub unframed_runs: u64,
    /// Packet numbers skipped by accepted segments: segments sent and never accepted,
    /// whether deleted, rejected or unframed.
    pub lost_segments: u64,
    /// Local Fault ordered sets received outside segments and passed on.
    pub fault_hints: u64,
}

impl RxStats {
    /// All rejected segments.
    pub fn failed(&self) -> u64 {
        self.malformed + self.unknown_key + self.expired + self.replayed + self.auth_failed
    }
}

/// Channel-level receiver.
#[derive(Debug)]
pub struct ChannelRx {
    cfg: ChannelConfig,
    keys: KeyRing<ChannelCipher>,
    bytes: Vec<u8>,
    words: Vec<u64>,
    seg: Vec<Block66>,
    in_segment: bool,
    /// Inside a run of blocks outside any segment.
    unframed: bool,
    /// Error blocks were emitted since the last accepted segment.
    marked: bool,
    last_skipped: u64,
    stats: RxStats,
}

impl ChannelRx {
    /// A receiver with no key.
    pub fn new(cfg: ChannelConfig) -> ChannelRx {
        ChannelRx {
            cfg,
            keys: KeyRing::default(),
            bytes: Vec::with_capacity(8 * cfg.payload_words()),
            words: vec![0; cfg.payload_words()],
            seg: Vec::with_capacity(cfg.line_blocks()),
            in_segment: false,
            unframed: false,
            marked: false,
            last_skipped: 0,
            stats: RxStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> ChannelConfig {
        self.cfg
    }

    /// Accept segments under this key, in this end's receive direction, from now on (up
    /// to two keys are live; a live key id is refused).
    pub fn install_key(&mut self, key: &TrafficKey) -> Result<(), KeyError> {
        let dir = key.role().rx_direction();
        self.keys.install(
            key.id(),
            ChannelCipher::from_traffic_key(key, dir),
            key.expires(),
        )
    }

    /// Stop accepting key `id`.
    pub fn retire(&mut self, id: KeyId) {
        self.keys.retire(id);
    }

    /// Live key ids.
    pub fn live_keys(&self) -> Vec<KeyId> {
        self.keys.ids()
    }

    /// Counters so far.
    pub fn stats(&self) -> RxStats {
        self.stats
    }

    /// Authenticate and decrypt one segment, appending the `K` restored 64B/66B blocks to
    /// `out`. On error nothing is appended and replay state is unchanged. Packet numbers
    /// the segment skips are counted in [`RxStats::lost_segments`].
    pub fn decrypt_segment(
        &mut self,
        now: Instant,
        seg: &[Block66],
        out: &mut Vec<Block66>,
    ) -> Result<ParamRepr, RxError> {
        let r = self.decrypt_inner(now, seg, out);
        self.last_skipped = 0;
        match r {
            Ok((_, skipped)) => {
                self.stats.segments_ok += 1;
                self.stats.lost_segments = self.stats.lost_segments.saturating_add(skipped);
                self.last_skipped = skipped;
            }
            Err(RxError::Malformed) => self.stats.malformed += 1,
            Err(RxError::UnknownKey(_)) => self.stats.unknown_key += 1,
            Err(RxError::KeyExpired(_)) => self.stats.expired += 1,
            Err(RxError::Replay { .. }) => self.stats.replayed += 1,
            Err(RxError::AuthFailed) => self.stats.auth_failed += 1,
            // Not produced by decryption.
            Err(RxError::Unframed | RxError::Lost { .. }) => {}
        }
        r.map(|(p, _)| p)
    }

    fn decrypt_inner(
        &mut self,
        now: Instant,
        seg: &[Block66],
        out: &mut Vec<Block66>,
    ) -> Result<(ParamRepr, u64), RxError> {
        let view =
            Segment::new_checked(seg, self.cfg.payload_words()).map_err(|_| RxError::Malformed)?;
        let param = ParamRepr::parse(view.param_block()).map_err(|_| RxError::Malformed)?;
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
        self.bytes.clear();
        for b in view.payload() {
            self.bytes.extend_from_slice(&b.payload.to_le_bytes());
        }
        let aad = slot.cipher.aad(view.param_block());
        if !slot
            .cipher
            .open(param.pn, &aad, &mut self.bytes, &view.tag())
        {
            return Err(RxError::AuthFailed);
        }
        for (i, w) in self.words.iter_mut().enumerate() {
            *w = word_at(&self.bytes, i);
        }
        let start = out.len();
        out.resize(start + self.cfg.segment_blocks, Block66::IDLE);
        if !decompress(&self.words, &mut out[start..]) {
            out.truncate(start);
            return Err(RxError::Malformed);
        }
        // Only an authentic segment may advance the replay window.
        let skipped = accept_pn(slot, param.pn);
        Ok((param, skipped))
    }

    /// Emit `K` error blocks unless some were emitted since the last accepted segment.
    fn mark_loss(&mut self, out: &mut Vec<Block66>, at: usize) {
        if !self.marked {
            self.marked = true;
            out.splice(
                at..at,
                std::iter::repeat_n(Block66::ERROR, self.cfg.segment_blocks),
            );
        }
    }

    fn finish_segment(&mut self, now: Instant, out: &mut Vec<Block66>) -> Option<RxError> {
        let seg = core::mem::take(&mut self.seg);
        let start = out.len();
        let r = self.decrypt_segment(now, &seg, out);
        self.seg = seg;
        self.seg.clear();
        self.in_segment = false;
        match r {
            Ok(p) => {
                let skipped = self.last_skipped;
                // A loss already shown (a rejected or unframed segment) is not reported
                // twice; it is counted all the same.
                let e = if skipped > 0 && !self.marked {
                    self.mark_loss(out, start);
                    Some(RxError::Lost {
                        key: p.key_id,
                        skipped,
                    })
                } else {
                    None
                };
                self.marked = false;
                e
            }
            Err(e) => {
                // A rejected segment always shows as a bad block run in its own slot.
                self.marked = false;
                let at = out.len();
                self.mark_loss(out, at);
                Some(e)
            }
        }
    }

    /// Streaming receive: take one line block (after descrambling). Between segments,
    /// idle blocks are skipped (the PHY may insert or delete them for rate adaptation) and
    /// Local Fault is passed on as it is. A completed segment appends its `K` plaintext
    /// blocks to `out`; a rejected one appends `K` error blocks, so the frame in progress
    /// is discarded downstream, and returns the reason. A loss (skipped packet numbers,
    /// or other blocks outside a segment) also inserts `K` error blocks, once per loss.
    pub fn push(
        &mut self,
        now: Instant,
        block: Block66,
        out: &mut Vec<Block66>,
    ) -> Option<RxError> {
        if block == start_block() {
            let mut err = None;
            if self.in_segment {
                // A new start before the old segment ended: the old one was truncated.
                self.seg.clear();
                self.stats.malformed += 1;
                self.marked = false;
                let at = out.len();
                self.mark_loss(out, at);
                err = Some(RxError::Malformed);
            }
            self.in_segment = true;
            self.unframed = false;
            self.seg.push(block);
            return err;
        }
        if !self.in_segment {
            if block == Block66::IDLE {
                return None;
            }
            if block == LOCAL_FAULT {
                self.stats.fault_hints += 1;
                out.push(block);
                return None;
            }
            self.stats.stray_blocks += 1;
            if self.unframed {
                return None;
            }
            self.unframed = true;
            self.stats.unframed_runs += 1;
            let at = out.len();
            self.mark_loss(out, at);
            return Some(RxError::Unframed);
        }
        self.seg.push(block);
        if self.seg.len() == self.cfg.line_blocks() {
            return self.finish_segment(now, out);
        }
        None
    }
}

/// Is `b` an ordered set (used by tests and tools to recognise Local Fault)?
pub fn is_ordered_set(b: &Block66) -> bool {
    matches!(BlockRepr::parse(b), Ok(BlockRepr::OrderedSet { .. }))
}
