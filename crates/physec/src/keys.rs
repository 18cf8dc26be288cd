//! Traffic keys as the data plane sees them, and the two-slot key ring.
//!
//! Key management ([`crate::km`]) hands the data plane a [`TrafficKey`]: a key id, a
//! 256-bit secret and an expiry time. Each encryption level derives its own working keys
//! from the secret with HKDF-SHA256 (RFC 5869) under a distinct label, so the channel-level
//! AES-GCM key, the link-level AES-CTR key and the link-level GMAC key are independent.
//!
//! As in MACsec's association numbers (IEEE 802.1AE clause 10.7.14), two keys can be live
//! at once, so a receiver accepts the new key before the transmitter switches to it and a
//! rekey is hitless. A [`KeyRing`] holds at most two, each with its own packet-number
//! replay state; installing a third evicts the older one.

use crate::time::Instant;
use hkdf::Hkdf;
use sha2::Sha256;

/// Key identifier carried in every segment's parameter block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(pub u8);

/// A traffic key installed by key management.
#[derive(Clone, PartialEq, Eq)]
pub struct TrafficKey {
    /// Identifier carried on the wire.
    pub id: KeyId,
    /// Master secret for this key id.
    pub secret: [u8; 32],
    /// After this instant the key must not protect or accept traffic.
    pub expires: Instant,
}

impl core::fmt::Debug for TrafficKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Never print the secret.
        f.debug_struct("TrafficKey")
            .field("id", &self.id)
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

impl TrafficKey {
    /// Derive `N` bytes for `label` from the secret (HKDF-SHA256 expand, key id bound in).
    pub fn derive<const N: usize>(&self, label: &[u8]) -> [u8; N] {
        let hk = Hkdf::<Sha256>::new(Some(b"PHYSec v1"), &self.secret);
        let mut info = Vec::with_capacity(label.len() + 1);
        info.extend_from_slice(label);
        info.push(self.id.0);
        let mut out = [0u8; N];
        // N is at most a few dozen bytes, far below the 255 * 32 HKDF limit.
        if hk.expand(&info, &mut out).is_err() {
            out = [0u8; N];
        }
        out
    }
}

/// One live key with the state a level keeps for it.
#[derive(Clone, Debug)]
pub struct KeySlot<C> {
    /// Identifier.
    pub id: KeyId,
    /// The level's working cipher state derived from the key.
    pub cipher: C,
    /// Expiry.
    pub expires: Instant,
    /// Next packet number to send under this key (transmit side).
    pub next_pn: u64,
    /// Highest packet number accepted under this key (receive side), for replay checks.
    pub highest_rx_pn: Option<u64>,
}

/// At most two live keys.
#[derive(Clone, Debug)]
pub struct KeyRing<C> {
    slots: [Option<KeySlot<C>>; 2],
    /// Install order, to evict the older slot.
    age: [u64; 2],
    installs: u64,
}

impl<C> Default for KeyRing<C> {
    fn default() -> Self {
        KeyRing {
            slots: [None, None],
            age: [0; 2],
            installs: 0,
        }
    }
}

impl<C> KeyRing<C> {
    /// Install (or replace) the key `id`; evicts the older key if both slots are used.
    pub fn install(&mut self, id: KeyId, cipher: C, expires: Instant) {
        let idx = self
            .slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.id == id))
            .or_else(|| self.slots.iter().position(Option::is_none))
            .unwrap_or(if self.age[0] <= self.age[1] { 0 } else { 1 });
        self.installs += 1;
        self.age[idx] = self.installs;
        self.slots[idx] = Some(KeySlot {
            id,
            cipher,
            expires,
            next_pn: 1,
            highest_rx_pn: None,
        });
    }

    /// Remove key `id`.
    pub fn retire(&mut self, id: KeyId) {
        for s in self.slots.iter_mut() {
            if s.as_ref().is_some_and(|s| s.id == id) {
                *s = None;
            }
        }
    }

    /// The slot for `id`.
    pub fn get_mut(&mut self, id: KeyId) -> Option<&mut KeySlot<C>> {
        self.slots.iter_mut().flatten().find(|s| s.id == id)
    }

    /// The slot for `id`.
    pub fn get(&self, id: KeyId) -> Option<&KeySlot<C>> {
        self.slots.iter().flatten().find(|s| s.id == id)
    }

    /// Ids of the live keys.
    pub fn ids(&self) -> Vec<KeyId> {
        self.slots.iter().flatten().map(|s| s.id).collect()
    }
}

/// Largest packet number: 48 bits are carried on the wire.
pub const MAX_PN: u64 = (1 << 48) - 1;

/// Accept packet number `pn` under `slot` if it is strictly above every number accepted
/// before. PHYSec runs over one point-to-point link that never reorders, so no window is
/// needed: anything not newer is a replay.
pub fn check_and_update_replay<C>(slot: &mut KeySlot<C>, pn: u64) -> bool {
    if slot.highest_rx_pn.is_some_and(|h| pn <= h) {
        return false;
    }
    slot.highest_rx_pn = Some(pn);
    true
}
