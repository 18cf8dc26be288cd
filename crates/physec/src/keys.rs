//! Traffic keys as the data plane sees them, the two directions of a link, and the
//! two-slot key ring.
//!
//! Key management ([`crate::km`]) hands each end's data plane a [`TrafficKey`]: a key id,
//! a 256-bit secret shared by both ends, an expiry time and the [`Role`] of the end that
//! holds it. Each encryption level derives its working keys from the secret with
//! HKDF-SHA256 (RFC 5869) under a distinct label, the key id and the [`Direction`], so the
//! channel-level AES-GCM key, the link-level AES-CTR key and the link-level GMAC key are
//! independent, and the two directions of a link never share a key, a salt or a nonce
//! space. Without the direction both ends would encrypt their first segment under the
//! same key and packet number: the XOR of the two ciphertexts would be the XOR of the two
//! plaintexts, a repeated GCM nonce would expose the GHASH key, and an end would accept
//! its own segment reflected back to it.
//!
//! As in MACsec's association numbers (IEEE 802.1AE clause 10.7.14), two keys can be live
//! at once, so a receiver accepts the new key before the transmitter switches to it and a
//! rekey is hitless. Each engine keeps at most two keys, each with its own packet-number
//! state; a key id that is live is never installed again (that would restart its packet
//! numbers and repeat nonces), and a third key is refused until one is retired.
//!
//! Secrets are not `Clone`, not public, and are wiped when dropped ([`zeroize`]).

use crate::time::Instant;
use core::fmt;
use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

/// Key identifier carried in every segment's parameter block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(pub u8);

/// Which end of the link: the one that starts key exchanges, or the one that answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Sends `Offer`s and drives the rekey schedule.
    Initiator,
    /// Answers.
    Responder,
}

impl Role {
    /// The other end's role.
    pub const fn peer(self) -> Role {
        match self {
            Role::Initiator => Role::Responder,
            Role::Responder => Role::Initiator,
        }
    }

    /// The direction this end transmits in.
    pub const fn tx_direction(self) -> Direction {
        match self {
            Role::Initiator => Direction::InitiatorToResponder,
            Role::Responder => Direction::ResponderToInitiator,
        }
    }

    /// The direction this end receives in.
    pub const fn rx_direction(self) -> Direction {
        self.peer().tx_direction()
    }
}

/// One direction of a link. Every working key, salt and nonce belongs to one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the initiator to the responder.
    InitiatorToResponder,
    /// From the responder to the initiator.
    ResponderToInitiator,
}

impl Direction {
    /// The octet that stands for the direction in key derivation, nonces and AAD.
    pub const fn octet(self) -> u8 {
        match self {
            Direction::InitiatorToResponder => 0x01,
            Direction::ResponderToInitiator => 0x02,
        }
    }
}

/// A traffic key installed by key management. Not `Clone`; the secret is wiped on drop.
pub struct TrafficKey {
    id: KeyId,
    secret: [u8; 32],
    expires: Instant,
    role: Role,
}

impl fmt::Debug for TrafficKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret.
        f.debug_struct("TrafficKey")
            .field("id", &self.id)
            .field("expires", &self.expires)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Drop for TrafficKey {
    fn drop(&mut self) {
        self.secret.zeroize();
    }
}

impl ZeroizeOnDrop for TrafficKey {}

impl TrafficKey {
    /// The key `id` with master `secret`, valid until `expires`, for the end that plays
    /// `role` (both ends of a link hold the same secret with opposite roles).
    pub fn new(id: KeyId, secret: [u8; 32], expires: Instant, role: Role) -> TrafficKey {
        TrafficKey {
            id,
            secret,
            expires,
            role,
        }
    }

    /// The same secret for the other end of the link (tests and tools build both ends).
    pub fn for_peer(&self) -> TrafficKey {
        TrafficKey {
            id: self.id,
            secret: self.secret,
            expires: self.expires,
            role: self.role.peer(),
        }
    }

    /// Identifier carried on the wire.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// After this instant the key must not protect or accept traffic.
    pub fn expires(&self) -> Instant {
        self.expires
    }

    /// The role of the end that holds this key.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Derive `N` bytes for `label` and direction `dir` (HKDF-SHA256 expand; the key id
    /// and the direction are bound into the info).
    pub(crate) fn derive<const N: usize>(
        &self,
        label: &[u8],
        dir: Direction,
    ) -> Zeroizing<[u8; N]> {
        // HKDF-SHA256 yields at most 255 * 32 octets; larger N does not compile.
        const { assert!(N <= 255 * 32) };
        let hk = Hkdf::<Sha256>::new(Some(b"PHYSec v2"), &self.secret);
        let mut out = Zeroizing::new([0u8; N]);
        hk.expand_multi_info(&[label, &[self.id.0, dir.octet()]], &mut out[..])
            .expect("N is within the HKDF-SHA256 output limit (checked at compile time)");
        out
    }
}

/// Why a key could not be installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// A key with this id is live: installing it again would restart its packet numbers.
    Live(KeyId),
    /// Two keys are live already; retire one first.
    Full,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::Live(k) => write!(f, "key {} is live and cannot be reinstalled", k.0),
            KeyError::Full => write!(f, "two keys are live already"),
        }
    }
}

impl std::error::Error for KeyError {}

/// One live key with the state a level keeps for it in one direction.
#[derive(Debug)]
pub(crate) struct KeySlot<C> {
    pub(crate) id: KeyId,
    /// The level's working cipher state derived from the key.
    pub(crate) cipher: C,
    pub(crate) expires: Instant,
    /// Next packet number to send under this key (transmit side).
    pub(crate) next_pn: u64,
    /// Highest packet number accepted under this key (receive side), for replay checks.
    pub(crate) highest_rx_pn: Option<u64>,
}

/// At most two live keys.
#[derive(Debug)]
pub(crate) struct KeyRing<C> {
    slots: [Option<KeySlot<C>>; 2],
}

impl<C> Default for KeyRing<C> {
    fn default() -> Self {
        KeyRing {
            slots: [None, None],
        }
    }
}

impl<C> KeyRing<C> {
    /// Install the key `id`. A live id is refused (its packet numbers would restart), and
    /// so is a third key.
    pub(crate) fn install(
        &mut self,
        id: KeyId,
        cipher: C,
        expires: Instant,
    ) -> Result<(), KeyError> {
        if self.get(id).is_some() {
            return Err(KeyError::Live(id));
        }
        let free = self
            .slots
            .iter_mut()
            .find(|s| s.is_none())
            .ok_or(KeyError::Full)?;
        *free = Some(KeySlot {
            id,
            cipher,
            expires,
            next_pn: 1,
            highest_rx_pn: None,
        });
        Ok(())
    }

    /// Remove key `id`.
    pub(crate) fn retire(&mut self, id: KeyId) {
        for s in self.slots.iter_mut() {
            if s.as_ref().is_some_and(|s| s.id == id) {
                *s = None;
            }
        }
    }

    /// The slot for `id`.
    pub(crate) fn get_mut(&mut self, id: KeyId) -> Option<&mut KeySlot<C>> {
        self.slots.iter_mut().flatten().find(|s| s.id == id)
    }

    /// The slot for `id`.
    pub(crate) fn get(&self, id: KeyId) -> Option<&KeySlot<C>> {
        self.slots.iter().flatten().find(|s| s.id == id)
    }

    /// Ids of the live keys.
    pub(crate) fn ids(&self) -> Vec<KeyId> {
        self.slots.iter().flatten().map(|s| s.id).collect()
    }
}

/// Largest packet number: 48 bits are carried on the wire.
pub const MAX_PN: u64 = (1 << 48) - 1;

/// Is `pn` a replay under `slot`? PHYSec runs over one point-to-point link that never
/// reorders, so no window is needed: anything not above every number accepted so far is.
pub(crate) fn is_replay<C>(slot: &KeySlot<C>, pn: u64) -> bool {
    slot.highest_rx_pn.is_some_and(|h| pn <= h)
}

/// Record that an authentic `pn` was accepted under `slot`, and return how many packet
/// numbers it skipped: segments (or multi-frames) that were sent and never accepted,
/// because they were deleted, rejected or lost their framing. Numbers start at 1.
pub(crate) fn accept_pn<C>(slot: &mut KeySlot<C>, pn: u64) -> u64 {
    let skipped = pn
        .saturating_sub(slot.highest_rx_pn.unwrap_or(0))
        .saturating_sub(1);
    slot.highest_rx_pn = Some(pn);
    skipped
}

/// A public fingerprint of a working key (SHA-256 of the key, truncated), so tests and
/// tools can log which key a nonce was used with without holding the key.
pub(crate) fn fingerprint(key: &[u8]) -> [u8; 16] {
    use sha2::Digest;
    let d = Sha256::new_with_prefix(b"physec key fingerprint")
        .chain_update(key)
        .finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}

/// A (key, nonce) pair as used by a transmitter: the fingerprint of the working key and
/// the full nonce (or counter block) it was used with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NonceUse {
    /// Fingerprint of the working key: the first 16 octets of SHA-256 over a label and
    /// the key.
    pub key: [u8; 16],
    /// The nonce (GCM) or initial counter block (CTR), zero-padded to 16 octets.
    pub nonce: [u8; 16],
}

// Compile-time checks: every type that holds a secret wipes it on drop, and none is
// `Clone` (a clone would be a copy that outlives the key's retirement).
const _: () = {
    fn zeroizes_on_drop<T: ZeroizeOnDrop>() {}
    #[allow(dead_code)]
    fn all() {
        zeroizes_on_drop::<TrafficKey>();
        zeroizes_on_drop::<crate::channel::ChannelCipher>();
        zeroizes_on_drop::<crate::link::LinkCipher>();
        zeroizes_on_drop::<aes::Aes256>();
        zeroizes_on_drop::<ed25519_dalek::SigningKey>();
    }
    // x25519-dalek wipes these on drop when (and only when) its `zeroize` feature, which
    // also provides the `Zeroize` impl, is on.
    fn zeroizes<T: Zeroize>() {}
    #[allow(dead_code)]
    fn dalek() {
        zeroizes::<x25519_dalek::EphemeralSecret>();
        zeroizes::<x25519_dalek::SharedSecret>();
    }
};

/// Fails to compile (ambiguous impl) if `T` is `Clone`.
#[allow(dead_code)]
trait NotClone<A> {
    fn check() {}
}
impl<T: ?Sized> NotClone<()> for T {}
#[allow(dead_code)]
struct IsClone;
impl<T: Clone> NotClone<IsClone> for T {}
const _: fn() = || {
    let _ = <TrafficKey as NotClone<_>>::check;
    let _ = <crate::channel::ChannelCipher as NotClone<_>>::check;
    let _ = <crate::link::LinkCipher as NotClone<_>>::check;
};
