//! PHYSec key management: the authentication channel and key-management layers of source
//! document 000 (section 2.2.3, figure 6), as a sans-I/O state machine driven by explicit
//! time.
//!
//! The document names the duties: prove the identity of the devices (and optical modules)
//! at each end, keep the association alive, derive keys, rekey periodically and distribute
//! the keys to the encryption engines, and handle expiry. It does not give a protocol; this
//! module supplies a small one built from standard parts, in the spirit of MKA (IEEE
//! 802.1X-2020 clause 11) but point to point and much smaller:
//!
//! * **Identity**: each end holds an Ed25519 key pair (RFC 8032) and is provisioned with
//!   its peer's public key. Every key-management message is signed; a message that does
//!   not verify raises [`Alarm::PeerAuthFailed`] and is dropped.
//! * **Key agreement**: each rekey runs an ephemeral X25519 exchange (RFC 7748): the
//!   initiator's `Offer` carries its ephemeral public key, the responder's `Answer` its own
//!   and an echo of the initiator's. Fresh ephemerals give forward secrecy per key.
//! * **Key derivation**: HKDF-SHA256 (RFC 5869), salted with both ephemeral public keys,
//!   the epoch and the key id, turns the shared secret into the 256-bit traffic secret from
//!   which each encryption level derives its own keys ([`crate::keys`]).
//! * **Hitless rekey with two live key ids**: the responder installs the new key for
//!   receive before it answers; the initiator, having the answer, installs it and switches
//!   its transmitter, then sends `Confirm`; the responder switches on `Confirm`. The old key
//!   stays installed for `retire_delay` so segments already on the wire still decrypt.
//! * **Keep-alive**: signed `KeepAlive` messages every `keepalive_interval`; silence for
//!   `dead_interval` raises [`Alarm::PeerLost`].
//! * **Expiry**: each key is valid for `key_lifetime` after installation. If no rekey
//!   replaces it in time, the agent raises [`Alarm::KeyExpired`] and retires it: the data
//!   plane then has no key and stops carrying traffic (it never falls back to clear text).
//!   The data plane also enforces the expiry time carried in [`TrafficKey`] on its own.
//! * **Replay protection**: every message carries a per-sender sequence number that must
//!   strictly increase; a message with an old number is rejected before it has any effect.
//!
//! Time is always a parameter: [`KeyAgent::poll`] runs timers at `now`, [`KeyAgent::handle`]
//! takes a received message at `now`, and both return [`Action`]s for the caller to carry
//! out (send a message on the authentication channel, program the encryption engines).

use crate::keys::{KeyId, TrafficKey};
use crate::time::{Duration, Instant};
use core::fmt;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use hkdf::Hkdf;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::Sha256;
use x25519_dalek::{PublicKey, StaticSecret};

/// Length of every key-management message on the wire.
pub const MESSAGE_LEN: usize = SIGNED_LEN + 64;
const SIGNED_LEN: usize = 1 + 1 + 8 + 4 + 1 + 32 + 32;
const MAGIC: u8 = 0x5c;

/// Which end starts key exchanges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends `Offer`s and drives the rekey schedule.
    Initiator,
    /// Answers.
    Responder,
}

/// Key-management message kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// Initiator's ephemeral key for a new epoch.
    Offer = 1,
    /// Responder's ephemeral key, echoing the initiator's.
    Answer = 2,
    /// Initiator has switched its transmitter to the new key.
    Confirm = 3,
    /// Liveness.
    KeepAlive = 4,
}

/// A key-management message, with `parse`/`emit` to its fixed-length signed wire form:
///
/// ```text
/// magic(1) kind(1) seq(8) epoch(4) key_id(1) ephemeral(32) peer_ephemeral(32) sig(64)
/// ```
///
/// Fields a kind does not use are zero. The Ed25519 signature covers everything before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageRepr {
    /// Kind.
    pub kind: MessageKind,
    /// Sender's sequence number, strictly increasing.
    pub seq: u64,
    /// Key epoch the message belongs to.
    pub epoch: u32,
    /// Key id of that epoch.
    pub key_id: KeyId,
    /// Sender's X25519 ephemeral public key (Offer, Answer).
    pub ephemeral: [u8; 32],
    /// Echo of the peer's ephemeral public key (Answer).
    pub peer_ephemeral: [u8; 32],
}

/// Why a message or configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KmError {
    /// Wrong length, magic or kind.
    Malformed,
    /// The signature did not verify against the provisioned peer key.
    BadSignature,
    /// The sequence number is not newer than one already accepted.
    Replay,
    /// The message does not fit the current exchange (stale epoch, wrong role).
    Unexpected,
    /// The provisioned peer public key is not a valid Ed25519 point.
    BadPeerKey,
    /// The key agreement produced an all-zero (non-contributory) secret.
    WeakKey,
}

impl fmt::Display for KmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            KmError::Malformed => "malformed message",
            KmError::BadSignature => "signature does not verify",
            KmError::Replay => "replayed message",
            KmError::Unexpected => "message does not fit the exchange",
            KmError::BadPeerKey => "invalid peer public key",
            KmError::WeakKey => "non-contributory key agreement",
        };
        f.write_str(s)
    }
}

impl std::error::Error for KmError {}

impl MessageRepr {
    fn signed_bytes(&self) -> [u8; SIGNED_LEN] {
        let mut b = [0u8; SIGNED_LEN];
        b[0] = MAGIC;
        b[1] = self.kind as u8;
        b[2..10].copy_from_slice(&self.seq.to_be_bytes());
        b[10..14].copy_from_slice(&self.epoch.to_be_bytes());
        b[14] = self.key_id.0;
        b[15..47].copy_from_slice(&self.ephemeral);
        b[47..79].copy_from_slice(&self.peer_ephemeral);
        b
    }

    /// Emit, signed with `key`.
    pub fn emit(&self, key: &SigningKey) -> Vec<u8> {
        let body = self.signed_bytes();
        let sig = key.sign(&body);
        let mut out = Vec::with_capacity(MESSAGE_LEN);
        out.extend_from_slice(&body);
        out.extend_from_slice(&sig.to_bytes());
        out
    }

    /// Parse and verify against the peer's public key.
    pub fn parse(buf: &[u8], peer: &VerifyingKey) -> Result<MessageRepr, KmError> {
        if buf.len() != MESSAGE_LEN || buf[0] != MAGIC {
            return Err(KmError::Malformed);
        }
        let kind = match buf[1] {
            1 => MessageKind::Offer,
            2 => MessageKind::Answer,
            3 => MessageKind::Confirm,
            4 => MessageKind::KeepAlive,
            _ => return Err(KmError::Malformed),
        };
        let mut sig = [0u8; 64];
        sig.copy_from_slice(&buf[SIGNED_LEN..]);
        peer.verify(&buf[..SIGNED_LEN], &Signature::from_bytes(&sig))
            .map_err(|_| KmError::BadSignature)?;
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&buf[2..10]);
        let mut epoch = [0u8; 4];
        epoch.copy_from_slice(&buf[10..14]);
        let mut ephemeral = [0u8; 32];
        ephemeral.copy_from_slice(&buf[15..47]);
        let mut peer_ephemeral = [0u8; 32];
        peer_ephemeral.copy_from_slice(&buf[47..79]);
        Ok(MessageRepr {
            kind,
            seq: u64::from_be_bytes(seq),
            epoch: u32::from_be_bytes(epoch),
            key_id: KeyId(buf[14]),
            ephemeral,
            peer_ephemeral,
        })
    }
}

/// Timer settings, validated by [`KmConfig::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KmConfig {
    /// Time between rekeys (initiator schedule).
    pub rekey_interval: Duration,
    /// How long a key stays valid after installation; must exceed `rekey_interval`.
    pub key_lifetime: Duration,
    /// How long a replaced key stays installed for segments in flight.
    pub retire_delay: Duration,
    /// Keep-alive period.
    pub keepalive_interval: Duration,
    /// Silence after which the peer is declared lost.
    pub dead_interval: Duration,
    /// Retransmission period for an unanswered `Offer` or unconfirmed `Answer`.
    pub retransmit: Duration,
}

impl KmConfig {
    /// Check the relations between the timers.
    pub fn new(
        rekey_interval: Duration,
        key_lifetime: Duration,
        retire_delay: Duration,
        keepalive_interval: Duration,
        dead_interval: Duration,
        retransmit: Duration,
    ) -> Result<KmConfig, &'static str> {
        if rekey_interval.0 == 0 || keepalive_interval.0 == 0 || retransmit.0 == 0 {
            return Err("intervals must be positive");
        }
        if key_lifetime <= rekey_interval {
            return Err("key_lifetime must exceed rekey_interval");
        }
        if dead_interval <= keepalive_interval {
            return Err("dead_interval must exceed keepalive_interval");
        }
        if retire_delay >= rekey_interval {
            return Err("retire_delay must be shorter than rekey_interval");
        }
        Ok(KmConfig {
            rekey_interval,
            key_lifetime,
            retire_delay,
            keepalive_interval,
            dead_interval,
            retransmit,
        })
    }
}

/// Conditions reported to the operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alarm {
    /// A message failed signature verification.
    PeerAuthFailed,
    /// No valid message from the peer for `dead_interval`.
    PeerLost,
    /// The key expired before a rekey replaced it; traffic is stopped.
    KeyExpired(KeyId),
}

/// What the caller must do after a call into the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send these bytes to the peer on the authentication channel.
    Send(Vec<u8>),
    /// Install this key in both the transmit and receive engines (receive may use it at
    /// once; transmit only after [`Action::ActivateTx`]).
    Install(TrafficKey),
    /// Switch the transmitter to this key.
    ActivateTx(KeyId),
    /// Remove this key from both engines.
    Retire(KeyId),
    /// Raise an alarm.
    Alarm(Alarm),
}

/// State of the protected link as key management sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// No key agreed yet.
    Establishing,
    /// A valid key protects the link.
    Secured,
    /// The last key expired: traffic stopped until a new exchange succeeds.
    Expired,
}

#[derive(Clone)]
struct Pending {
    epoch: u32,
    key_id: KeyId,
    secret: StaticSecret,
    public: [u8; 32],
    /// For the responder: the answer to resend if the offer is retransmitted.
    peer_public: [u8; 32],
    last_sent: Instant,
}

/// One end's key-management agent.
pub struct KeyAgent {
    cfg: KmConfig,
    role: Role,
    identity: SigningKey,
    peer: VerifyingKey,
    rng: ChaCha20Rng,
    seq: u64,
    peer_seq: Option<u64>,
    epoch: u32,
    pending: Option<Pending>,
    current: Option<TrafficKey>,
    retiring: Option<(KeyId, Instant)>,
    next_rekey: Instant,
    last_keepalive: Option<Instant>,
    last_heard: Instant,
    peer_lost: bool,
    state: LinkState,
    started: bool,
}

impl fmt::Debug for KeyAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyAgent")
            .field("role", &self.role)
            .field("epoch", &self.epoch)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

fn key_id_for(epoch: u32) -> KeyId {
    KeyId((epoch % 4) as u8)
}

impl KeyAgent {
    /// An agent with its own Ed25519 secret key `identity_seed`, the peer's public key,
    /// and a seed for its ephemeral-key generator (explicit, so runs are reproducible).
    pub fn new(
        cfg: KmConfig,
        role: Role,
        identity_seed: [u8; 32],
        peer_public: [u8; 32],
        rng_seed: [u8; 32],
    ) -> Result<KeyAgent, KmError> {
        let peer = VerifyingKey::from_bytes(&peer_public).map_err(|_| KmError::BadPeerKey)?;
        Ok(KeyAgent {
            cfg,
            role,
            identity: SigningKey::from_bytes(&identity_seed),
            peer,
            rng: ChaCha20Rng::from_seed(rng_seed),
            seq: 0,
            peer_seq: None,
            epoch: 0,
            pending: None,
            current: None,
            retiring: None,
            next_rekey: Instant::ZERO,
            last_keepalive: None,
            last_heard: Instant::ZERO,
            peer_lost: false,
            state: LinkState::Establishing,
            started: false,
        })
    }

    /// The Ed25519 public key that corresponds to `identity_seed`, for provisioning.
    pub fn public_identity(identity_seed: [u8; 32]) -> [u8; 32] {
        SigningKey::from_bytes(&identity_seed)
            .verifying_key()
            .to_bytes()
    }

    /// Link state.
    pub fn state(&self) -> LinkState {
        self.state
    }

    /// The key currently protecting the link, if any.
    pub fn current_key(&self) -> Option<KeyId> {
        self.current.as_ref().map(|k| k.id)
    }

    /// The number of the last epoch this agent took part in.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The earliest instant at which [`KeyAgent::poll`] has something to do.
    pub fn next_wakeup(&self) -> Instant {
        let mut t = self
            .last_keepalive
            .map_or(Instant::ZERO, |k| k + self.cfg.keepalive_interval);
        let mut consider = |x: Instant| t = t.min(x);
        if self.role == Role::Initiator && self.pending.is_none() {
            consider(self.next_rekey);
        }
        if let Some(p) = &self.pending {
            consider(p.last_sent + self.cfg.retransmit);
        }
        if let Some(k) = &self.current {
            consider(k.expires);
        }
        if let Some((_, at)) = self.retiring {
            consider(at);
        }
        if !self.peer_lost {
            consider(self.last_heard + self.cfg.dead_interval);
        }
        t
    }

    fn send(&mut self, mut m: MessageRepr, out: &mut Vec<Action>) {
        self.seq += 1;
        m.seq = self.seq;
        out.push(Action::Send(m.emit(&self.identity)));
    }

    fn message(
        &self,
        kind: MessageKind,
        epoch: u32,
        ephemeral: [u8; 32],
        peer: [u8; 32],
    ) -> MessageRepr {
        MessageRepr {
            kind,
            seq: 0,
            epoch,
            key_id: key_id_for(epoch),
            ephemeral,
            peer_ephemeral: peer,
        }
    }

    fn fresh_ephemeral(&mut self) -> (StaticSecret, [u8; 32]) {
        let mut s = [0u8; 32];
        self.rng.fill_bytes(&mut s);
        let secret = StaticSecret::from(s);
        let public = PublicKey::from(&secret).to_bytes();
        (secret, public)
    }

    fn derive(
        &self,
        now: Instant,
        epoch: u32,
        secret: &StaticSecret,
        peer_public: [u8; 32],
        initiator_public: [u8; 32],
        responder_public: [u8; 32],
    ) -> Result<TrafficKey, KmError> {
        let shared = secret.diffie_hellman(&PublicKey::from(peer_public));
        if !shared.was_contributory() {
            return Err(KmError::WeakKey);
        }
        let mut salt = Vec::with_capacity(64 + 5);
        salt.extend_from_slice(&initiator_public);
        salt.extend_from_slice(&responder_public);
        salt.extend_from_slice(&epoch.to_be_bytes());
        salt.push(key_id_for(epoch).0);
        let hk = Hkdf::<Sha256>::new(Some(&salt), shared.as_bytes());
        let mut out = [0u8; 32];
        hk.expand(b"PHYSec traffic secret", &mut out)
            .map_err(|_| KmError::WeakKey)?;
        Ok(TrafficKey {
            id: key_id_for(epoch),
            secret: out,
            expires: now + self.cfg.key_lifetime,
        })
    }

    /// Put a new key in service as the current one; the previous one retires later.
    fn adopt(&mut self, now: Instant, key: TrafficKey) {
        if let Some(old) = self.current.take() {
            if old.id != key.id {
                self.retiring = Some((old.id, now + self.cfg.retire_delay));
            }
        }
        self.current = Some(key);
        self.state = LinkState::Secured;
    }

    /// Run the timers at `now`.
    pub fn poll(&mut self, now: Instant, out: &mut Vec<Action>) {
        if !self.started {
            self.started = true;
            self.last_heard = now;
        }
        if let Some((id, at)) = self.retiring {
            if now >= at {
                self.retiring = None;
                out.push(Action::Retire(id));
            }
        }
        if let Some(k) = &self.current {
            if now >= k.expires {
                let id = k.id;
                self.current = None;
                self.state = LinkState::Expired;
                out.push(Action::Alarm(Alarm::KeyExpired(id)));
                out.push(Action::Retire(id));
            }
        }
        if !self.peer_lost && now.saturating_since(self.last_heard) >= self.cfg.dead_interval {
            self.peer_lost = true;
            out.push(Action::Alarm(Alarm::PeerLost));
        }
        if self
            .last_keepalive
            .is_none_or(|t| now >= t + self.cfg.keepalive_interval)
        {
            self.last_keepalive = Some(now);
            let m = self.message(MessageKind::KeepAlive, self.epoch, [0; 32], [0; 32]);
            self.send(m, out);
        }
        match (self.role, &mut self.pending) {
            (Role::Initiator, None) if now >= self.next_rekey => {
                self.epoch += 1;
                let (secret, public) = self.fresh_ephemeral();
                self.pending = Some(Pending {
                    epoch: self.epoch,
                    key_id: key_id_for(self.epoch),
                    secret,
                    public,
                    peer_public: [0; 32],
                    last_sent: now,
                });
                let m = self.message(MessageKind::Offer, self.epoch, public, [0; 32]);
                self.send(m, out);
            }
            (_, Some(p)) if now >= p.last_sent + self.cfg.retransmit => {
                p.last_sent = now;
                let (kind, epoch, eph, peer) = match self.role {
                    Role::Initiator => (MessageKind::Offer, p.epoch, p.public, [0; 32]),
                    Role::Responder => (MessageKind::Answer, p.epoch, p.public, p.peer_public),
                };
                let m = self.message(kind, epoch, eph, peer);
                self.send(m, out);
            }
            _ => {}
        }
    }

    /// Handle a message from the peer at `now`. An error means the message had no effect
    /// (a bad signature also raises [`Alarm::PeerAuthFailed`]).
    pub fn handle(
        &mut self,
        now: Instant,
        buf: &[u8],
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let m = match MessageRepr::parse(buf, &self.peer) {
            Ok(m) => m,
            Err(KmError::BadSignature) => {
                out.push(Action::Alarm(Alarm::PeerAuthFailed));
                return Err(KmError::BadSignature);
            }
            Err(e) => return Err(e),
        };
        if self.peer_seq.is_some_and(|s| m.seq <= s) {
            return Err(KmError::Replay);
        }
        self.peer_seq = Some(m.seq);
        self.last_heard = now;
        self.peer_lost = false;
        match (self.role, m.kind) {
            (_, MessageKind::KeepAlive) => Ok(()),
            (Role::Responder, MessageKind::Offer) => self.on_offer(now, &m, out),
            (Role::Initiator, MessageKind::Answer) => self.on_answer(now, &m, out),
            (Role::Responder, MessageKind::Confirm) => match &self.current {
                Some(k) if m.epoch == self.epoch && k.id == m.key_id && self.pending.is_some() => {
                    self.pending = None;
                    out.push(Action::ActivateTx(m.key_id));
                    Ok(())
                }
                _ => Err(KmError::Unexpected),
            },
            _ => Err(KmError::Unexpected),
        }
    }

    fn on_offer(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        if m.key_id != key_id_for(m.epoch) {
            return Err(KmError::Unexpected);
        }
        if m.epoch == self.epoch {
            // The initiator retransmitted: resend the same answer.
            let Some(p) = &self.pending else {
                return Err(KmError::Unexpected);
            };
            if p.peer_public != m.ephemeral {
                return Err(KmError::Unexpected);
            }
            let a = self.message(MessageKind::Answer, p.epoch, p.public, p.peer_public);
            self.send(a, out);
            return Ok(());
        }
        if m.epoch < self.epoch {
            return Err(KmError::Unexpected);
        }
        let (secret, public) = self.fresh_ephemeral();
        let key = self.derive(now, m.epoch, &secret, m.ephemeral, m.ephemeral, public)?;
        self.epoch = m.epoch;
        self.pending = Some(Pending {
            epoch: m.epoch,
            key_id: key.id,
            secret,
            public,
            peer_public: m.ephemeral,
            last_sent: now,
        });
        // Receive side first: the initiator may switch as soon as it sees the answer.
        out.push(Action::Install(key.clone()));
        self.adopt(now, key);
        let a = self.message(MessageKind::Answer, m.epoch, public, m.ephemeral);
        self.send(a, out);
        Ok(())
    }

    fn on_answer(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let Some(p) = self.pending.take() else {
            return Err(KmError::Unexpected);
        };
        if m.epoch != p.epoch || m.key_id != p.key_id || m.peer_ephemeral != p.public {
            self.pending = Some(p);
            return Err(KmError::Unexpected);
        }
        let key = match self.derive(now, p.epoch, &p.secret, m.ephemeral, p.public, m.ephemeral) {
            Ok(k) => k,
            Err(e) => {
                self.pending = Some(p);
                return Err(e);
            }
        };
        out.push(Action::Install(key.clone()));
        out.push(Action::ActivateTx(key.id));
        self.adopt(now, key);
        self.next_rekey = now + self.cfg.rekey_interval;
        let c = self.message(MessageKind::Confirm, p.epoch, [0; 32], [0; 32]);
        self.send(c, out);
        Ok(())
    }
}
