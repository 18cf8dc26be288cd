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
//!   its peer's public key; a weak (small-order) peer key is refused
//!   ([`KmError::BadPeerKey`]). Every message is signed and verified strictly
//!   (`verify_strict`: canonical encodings, no small-order keys or commitments); a message
//!   that does not verify raises [`Alarm::PeerAuthFailed`] and is dropped.
//! * **Binding**: every signed message carries the link id (so a message recorded on one
//!   link is refused on another, [`KmError::WrongLink`]), the sender's session id and the
//!   session id it is addressed to. A session id is drawn at random when an agent starts,
//!   so an end that restarts (and forgets its sequence numbers and epochs) is a new
//!   session. An end binds to a peer session only after a challenge: it answers a message
//!   from an unknown session with a fresh random challenge, and binds when a message from
//!   that session, addressed to its own session, echoes the challenge. A recorded message
//!   cannot echo a challenge drawn after it was sent, so replaying an old session's
//!   messages never rebinds an end; a genuinely restarted peer rejoins within a round
//!   trip. Binding to a new session retires the keys of the old association (the peer
//!   that restarted no longer holds them) and starts a fresh exchange.
//! * **Key agreement**: each rekey runs an ephemeral X25519 exchange (RFC 7748): the
//!   initiator's `Offer` carries its ephemeral public key, the responder's `Answer` its own
//!   and an echo of the initiator's. Fresh ephemerals give forward secrecy per key; a
//!   non-contributory (small-order) ephemeral is refused ([`KmError::BadPeerKey`]).
//! * **Key derivation**: HKDF-SHA256 (RFC 5869), salted with both ephemeral public keys,
//!   both session ids, the link id, the epoch and the key id, turns the shared secret into
//!   the 256-bit traffic secret from which each encryption level derives a key per
//!   direction ([`crate::keys`]).
//! * **Hitless rekey with two live key ids**: the responder installs the new key (receive
//!   side usable at once) before it answers, and keeps transmitting under the old one; the
//!   initiator, having the answer, installs the key, switches its transmitter and sends
//!   `Confirm`; the responder switches on `Confirm` and says so in its next message (every
//!   message carries the sender's transmit epoch). Until `Confirm` arrives the responder
//!   resends its `Answer` every `retransmit`, and the initiator answers a duplicate
//!   `Answer` with another `Confirm`, so a lost `Confirm` costs one retransmit interval.
//!   A replaced key is retired `retire_delay` after its last user switched away from it:
//!   at the responder after `Confirm`, at the initiator after it has seen the responder's
//!   switch. The key a transmitter is using is never retired while valid (only expiry or
//!   the loss of the association retire it). The initiator starts no new exchange until
//!   the responder reports transmitting under the current key and the replaced key is
//!   retired, and counts the rekey interval from the start of each exchange (the
//!   responder's copy of a key ages from the moment the offer reaches it).
//! * **Keep-alive**: signed `KeepAlive` messages every `keepalive_interval`; silence for
//!   `dead_interval` raises [`Alarm::PeerLost`].
//! * **Expiry**: each key is valid for `key_lifetime` after installation. If no rekey
//!   replaces it in time, the agent raises [`Alarm::KeyExpired`] and retires it: the data
//!   plane then has no key and stops carrying traffic (it never falls back to clear text).
//!   The data plane also enforces the expiry time carried in [`TrafficKey`] on its own.
//! * **Replay protection**: every message carries a per-session sequence number that must
//!   strictly increase; a message with an old number is rejected before it has any effect.
//! * **Randomness**: [`KeyAgent::new`] draws ephemeral keys, session ids and challenges
//!   from the operating system ([`rand_core::OsRng`]). [`KeyAgent::new_deterministic`]
//!   uses a seeded ChaCha20 generator instead, for tests and for the simulator's
//!   deterministic mode only: anyone who knows the seed knows every key.
//!
//! Time is always a parameter: [`KeyAgent::poll`] runs timers at `now`, [`KeyAgent::handle`]
//! takes a received message at `now`, and both return [`Action`]s for the caller to carry
//! out (send a message on the authentication channel, program the encryption engines).

pub use crate::keys::Role;
use crate::keys::{KeyId, TrafficKey};
use crate::time::{Duration, Instant};
use core::fmt;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use hkdf::Hkdf;
use rand_chacha::ChaCha20Rng;
use rand_core::{OsRng, RngCore, SeedableRng};
use sha2::Sha256;
use x25519_dalek::{EphemeralSecret, PublicKey};
use zeroize::Zeroizing;

/// Length of every key-management message on the wire.
pub const MESSAGE_LEN: usize = SIGNED_LEN + 64;
const SIGNED_LEN: usize = 1 + 1 + 1 + 8 + 8 + 8 + 8 + 4 + 1 + 4 + 32 + 32;
const MAGIC: u8 = 0x5c;
const VERSION: u8 = 2;

/// Key-management message kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// Initiator's ephemeral key for a new epoch.
    Offer = 1,
    /// Responder's ephemeral key, echoing the initiator's.
    Answer = 2,
    /// Initiator has switched its transmitter to the new key.
    Confirm = 3,
    /// Liveness, session challenges and their echoes.
    KeepAlive = 4,
}

/// A key-management message, with `parse`/`emit` to its fixed-length signed wire form:
///
/// ```text
/// magic(1) version(1) kind(1) link(8) session(8) peer_session(8) seq(8) epoch(4)
/// key_id(1) tx_epoch(4) ephemeral(32) peer_ephemeral(32) sig(64)
/// ```
///
/// Integers are big-endian. Fields a kind does not use are zero. In a `KeepAlive`,
/// `ephemeral` carries the sender's session challenge (or zero) and `peer_ephemeral` the
/// echo of the last challenge it received. The Ed25519 signature covers everything
/// before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageRepr {
    /// Kind.
    pub kind: MessageKind,
    /// Link the message belongs to.
    pub link: u64,
    /// Sender's session id.
    pub session: u64,
    /// The receiver's session id as the sender knows it (0: not known).
    pub peer_session: u64,
    /// Sender's sequence number, strictly increasing within its session.
    pub seq: u64,
    /// Key epoch of the exchange the message belongs to.
    pub epoch: u32,
    /// Key id of that epoch.
    pub key_id: KeyId,
    /// Epoch of the key the sender transmits under (0: none).
    pub tx_epoch: u32,
    /// Sender's X25519 ephemeral public key (Offer, Answer) or challenge (KeepAlive).
    pub ephemeral: [u8; 32],
    /// Echo of the peer's ephemeral public key (Answer) or challenge (KeepAlive).
    pub peer_ephemeral: [u8; 32],
}

/// Why a message or configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KmError {
    /// Wrong length, magic, version or kind.
    Malformed,
    /// The signature did not verify (strictly) against the provisioned peer key.
    BadSignature,
    /// The message belongs to another link.
    WrongLink,
    /// The sequence number is not newer than one already accepted.
    Replay,
    /// The message comes from a peer session this end is not bound to; it had no effect
    /// but a challenge in reply.
    Unbound,
    /// The message is not addressed to this end's session (or is this end's own).
    Stale,
    /// The message does not fit the current exchange (stale epoch, wrong role).
    Unexpected,
    /// A peer public key (Ed25519 identity or X25519 ephemeral) is invalid or weak.
    BadPeerKey,
}

impl fmt::Display for KmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            KmError::Malformed => "malformed message",
            KmError::BadSignature => "signature does not verify",
            KmError::WrongLink => "message for another link",
            KmError::Replay => "replayed message",
            KmError::Unbound => "message from an unbound peer session",
            KmError::Stale => "message not addressed to this session",
            KmError::Unexpected => "message does not fit the exchange",
            KmError::BadPeerKey => "invalid or weak peer public key",
        };
        f.write_str(s)
    }
}

impl std::error::Error for KmError {}

fn be<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut o = [0u8; N];
    o.copy_from_slice(&b[..N]);
    o
}

impl MessageRepr {
    fn signed_bytes(&self) -> [u8; SIGNED_LEN] {
        let mut b = [0u8; SIGNED_LEN];
        b[0] = MAGIC;
        b[1] = VERSION;
        b[2] = self.kind as u8;
        b[3..11].copy_from_slice(&self.link.to_be_bytes());
        b[11..19].copy_from_slice(&self.session.to_be_bytes());
        b[19..27].copy_from_slice(&self.peer_session.to_be_bytes());
        b[27..35].copy_from_slice(&self.seq.to_be_bytes());
        b[35..39].copy_from_slice(&self.epoch.to_be_bytes());
        b[39] = self.key_id.0;
        b[40..44].copy_from_slice(&self.tx_epoch.to_be_bytes());
        b[44..76].copy_from_slice(&self.ephemeral);
        b[76..108].copy_from_slice(&self.peer_ephemeral);
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

    /// Parse and verify (strictly) against the peer's public key.
    pub fn parse(buf: &[u8], peer: &VerifyingKey) -> Result<MessageRepr, KmError> {
        if buf.len() != MESSAGE_LEN || buf[0] != MAGIC || buf[1] != VERSION {
            return Err(KmError::Malformed);
        }
        let kind = match buf[2] {
            1 => MessageKind::Offer,
            2 => MessageKind::Answer,
            3 => MessageKind::Confirm,
            4 => MessageKind::KeepAlive,
            _ => return Err(KmError::Malformed),
        };
        let sig = Signature::from_bytes(&be::<64>(&buf[SIGNED_LEN..]));
        peer.verify_strict(&buf[..SIGNED_LEN], &sig)
            .map_err(|_| KmError::BadSignature)?;
        Ok(MessageRepr {
            kind,
            link: u64::from_be_bytes(be(&buf[3..])),
            session: u64::from_be_bytes(be(&buf[11..])),
            peer_session: u64::from_be_bytes(be(&buf[19..])),
            seq: u64::from_be_bytes(be(&buf[27..])),
            epoch: u32::from_be_bytes(be(&buf[35..])),
            key_id: KeyId(buf[39]),
            tx_epoch: u32::from_be_bytes(be(&buf[40..])),
            ephemeral: be(&buf[44..]),
            peer_ephemeral: be(&buf[76..]),
        })
    }
}

/// Timer settings, validated by [`KmConfig::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KmConfig {
    /// Time between rekeys (initiator schedule).
    pub rekey_interval: Duration,
    /// How long a key stays valid after installation; must exceed `rekey_interval`. The
    /// difference is the longest authentication-channel outage the link rides through
    /// before its key expires and traffic stops.
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
    /// The peer restarted (a new, authenticated session): the old association's keys are
    /// retired and a new exchange starts.
    PeerRestarted,
}

/// What the caller must do after a call into the agent.
#[derive(Debug)]
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
    /// No key agreed yet (or the peer restarted and a new one is being agreed).
    Establishing,
    /// A valid key protects the link.
    Secured,
    /// The last key expired: traffic stopped until a new exchange succeeds.
    Expired,
}

/// An exchange in progress.
struct Pending {
    epoch: u32,
    key_id: KeyId,
    /// The initiator's ephemeral secret, consumed by the answer.
    secret: Option<EphemeralSecret>,
    public: [u8; 32],
    /// For the responder: the offer's ephemeral, to resend the same answer.
    peer_public: [u8; 32],
    /// When the exchange started (the rekey schedule counts from here).
    started: Instant,
    last_sent: Instant,
}

/// The initiator's last completed exchange, to recognise a duplicate `Answer`.
struct Done {
    epoch: u32,
    public: [u8; 32],
    peer_public: [u8; 32],
}

/// A key installed in the engines.
#[derive(Clone, Copy, Debug)]
struct Live {
    id: KeyId,
    epoch: u32,
    expires: Instant,
}

/// A replaced key and when it retires (`None`: when the peer has switched away from it).
#[derive(Clone, Copy, Debug)]
struct Old {
    key: Live,
    at: Option<Instant>,
}

/// A challenge this end has sent, to bind a peer session that echoes it.
struct Challenge {
    /// The session challenged; `None` before this end has bound any (anyone may answer).
    to: Option<u64>,
    nonce: [u8; 32],
}

enum AgentRng {
    Os,
    Seeded(Box<ChaCha20Rng>),
}

impl AgentRng {
    fn fill(&mut self, b: &mut [u8]) {
        match self {
            AgentRng::Os => OsRng.fill_bytes(b),
            AgentRng::Seeded(r) => r.fill_bytes(b),
        }
    }

    fn ephemeral(&mut self) -> EphemeralSecret {
        match self {
            AgentRng::Os => EphemeralSecret::random_from_rng(OsRng),
            AgentRng::Seeded(r) => EphemeralSecret::random_from_rng(&mut **r),
        }
    }

    fn nonzero_u64(&mut self) -> u64 {
        loop {
            let mut b = [0u8; 8];
            self.fill(&mut b);
            let v = u64::from_be_bytes(b);
            if v != 0 {
                return v;
            }
        }
    }

    fn nonce(&mut self) -> [u8; 32] {
        let mut n = [0u8; 32];
        while n == [0u8; 32] {
            self.fill(&mut n);
        }
        n
    }
}

/// One end's key-management agent.
pub struct KeyAgent {
    cfg: KmConfig,
    role: Role,
    link: u64,
    identity: SigningKey,
    peer: VerifyingKey,
    rng: AgentRng,
    session: u64,
    seq: u64,
    peer_session: Option<u64>,
    peer_seq: u64,
    challenge: Option<Challenge>,
    /// The last challenge received from an unbound session, to echo.
    echo: [u8; 32],
    echo_to: u64,
    epoch: u32,
    pending: Option<Pending>,
    done: Option<Done>,
    current: Option<Live>,
    next: Option<Live>,
    old: Option<Old>,
    /// Initiator: the responder has reported transmitting under the current key.
    peer_on_current: bool,
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
            .field("link", &self.link)
            .field("session", &self.session)
            .field("peer_session", &self.peer_session)
            .field("epoch", &self.epoch)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

fn key_id_for(epoch: u32) -> KeyId {
    KeyId((epoch % 4) as u8)
}

impl KeyAgent {
    /// An agent for link `link` with its own Ed25519 secret key `identity_seed` and the
    /// peer's public key, drawing its randomness from the operating system.
    pub fn new(
        cfg: KmConfig,
        role: Role,
        link: u64,
        identity_seed: [u8; 32],
        peer_public: [u8; 32],
    ) -> Result<KeyAgent, KmError> {
        KeyAgent::build(cfg, role, link, identity_seed, peer_public, AgentRng::Os)
    }

    /// As [`KeyAgent::new`], but with a ChaCha20 generator seeded with `rng_seed`, so runs
    /// are reproducible. Only for tests and the simulator's deterministic mode: the seed
    /// determines every ephemeral key, hence every traffic key.
    pub fn new_deterministic(
        cfg: KmConfig,
        role: Role,
        link: u64,
        identity_seed: [u8; 32],
        peer_public: [u8; 32],
        rng_seed: [u8; 32],
    ) -> Result<KeyAgent, KmError> {
        let rng = AgentRng::Seeded(Box::new(ChaCha20Rng::from_seed(rng_seed)));
        KeyAgent::build(cfg, role, link, identity_seed, peer_public, rng)
    }

    fn build(
        cfg: KmConfig,
        role: Role,
        link: u64,
        identity_seed: [u8; 32],
        peer_public: [u8; 32],
        mut rng: AgentRng,
    ) -> Result<KeyAgent, KmError> {
        let peer = VerifyingKey::from_bytes(&peer_public).map_err(|_| KmError::BadPeerKey)?;
        if peer.is_weak() {
            return Err(KmError::BadPeerKey);
        }
        let seed = Zeroizing::new(identity_seed);
        let session = rng.nonzero_u64();
        let challenge = Some(Challenge {
            to: None,
            nonce: rng.nonce(),
        });
        Ok(KeyAgent {
            cfg,
            role,
            link,
            identity: SigningKey::from_bytes(&seed),
            peer,
            rng,
            session,
            seq: 0,
            peer_session: None,
            peer_seq: 0,
            challenge,
            echo: [0; 32],
            echo_to: 0,
            epoch: 0,
            pending: None,
            done: None,
            current: None,
            next: None,
            old: None,
            peer_on_current: false,
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
        let seed = Zeroizing::new(identity_seed);
        SigningKey::from_bytes(&seed).verifying_key().to_bytes()
    }

    /// Link state.
    pub fn state(&self) -> LinkState {
        self.state
    }

    /// The key the transmitter uses (or will use once activated), if any.
    pub fn current_key(&self) -> Option<KeyId> {
        self.current.map(|k| k.id)
    }

    /// The number of the last epoch this agent took part in.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// This agent's session id (random, drawn at start).
    pub fn session(&self) -> u64 {
        self.session
    }

    /// The peer session this agent is bound to, if any.
    pub fn peer_session(&self) -> Option<u64> {
        self.peer_session
    }

    /// The earliest instant at which [`KeyAgent::poll`] has something to do.
    pub fn next_wakeup(&self) -> Instant {
        let mut t = self
            .last_keepalive
            .map_or(Instant::ZERO, |k| k + self.cfg.keepalive_interval);
        let mut consider = |x: Instant| t = t.min(x);
        if self.may_rekey() {
            consider(self.next_rekey);
        }
        if let Some(p) = &self.pending {
            consider(p.last_sent + self.cfg.retransmit);
        }
        for k in [self.current, self.next].into_iter().flatten() {
            consider(k.expires);
        }
        if let Some(o) = self.old {
            consider(o.key.expires);
            if let Some(at) = o.at {
                consider(at);
            }
        }
        if !self.peer_lost {
            consider(self.last_heard + self.cfg.dead_interval);
        }
        t
    }

    fn tx_epoch(&self) -> u32 {
        self.current.map_or(0, |k| k.epoch)
    }

    fn send(
        &mut self,
        kind: MessageKind,
        epoch: u32,
        ephemeral: [u8; 32],
        peer_ephemeral: [u8; 32],
        out: &mut Vec<Action>,
    ) {
        self.seq += 1;
        let m = MessageRepr {
            kind,
            link: self.link,
            session: self.session,
            peer_session: self.peer_session.unwrap_or(0),
            seq: self.seq,
            epoch,
            key_id: key_id_for(epoch),
            tx_epoch: self.tx_epoch(),
            ephemeral,
            peer_ephemeral,
        };
        out.push(Action::Send(m.emit(&self.identity)));
    }

    /// A keep-alive to session `to` (default: the bound peer, or while unbound the last
    /// session heard from). It carries this end's challenge if one is out for that session,
    /// and the echo of that session's own challenge.
    fn keepalive(&mut self, to: Option<u64>, out: &mut Vec<Action>) {
        self.seq += 1;
        let peer_session = to.or(self.peer_session).unwrap_or(self.echo_to);
        let challenge = match &self.challenge {
            Some(c) if c.to.is_none_or(|t| t == peer_session) => c.nonce,
            _ => [0; 32],
        };
        let echo = self.echo_for(peer_session);
        let m = MessageRepr {
            kind: MessageKind::KeepAlive,
            link: self.link,
            session: self.session,
            peer_session,
            seq: self.seq,
            epoch: self.epoch,
            key_id: key_id_for(self.epoch),
            tx_epoch: self.tx_epoch(),
            ephemeral: challenge,
            peer_ephemeral: echo,
        };
        out.push(Action::Send(m.emit(&self.identity)));
    }

    fn echo_for(&self, s: u64) -> [u8; 32] {
        if self.echo_to == s && s != 0 {
            self.echo
        } else {
            [0; 32]
        }
    }

    /// The traffic secret of `epoch`, from the DH output and everything that names the
    /// association.
    fn derive(
        &self,
        now: Instant,
        epoch: u32,
        shared: &x25519_dalek::SharedSecret,
        initiator: ([u8; 32], u64),
        responder: ([u8; 32], u64),
    ) -> Result<TrafficKey, KmError> {
        if !shared.was_contributory() {
            return Err(KmError::BadPeerKey);
        }
        let mut salt = Vec::with_capacity(64 + 8 * 3 + 5);
        salt.extend_from_slice(&initiator.0);
        salt.extend_from_slice(&responder.0);
        salt.extend_from_slice(&initiator.1.to_be_bytes());
        salt.extend_from_slice(&responder.1.to_be_bytes());
        salt.extend_from_slice(&self.link.to_be_bytes());
        salt.extend_from_slice(&epoch.to_be_bytes());
        salt.push(key_id_for(epoch).0);
        let hk = Hkdf::<Sha256>::new(Some(&salt), shared.as_bytes());
        let mut out = Zeroizing::new([0u8; 32]);
        // 32 octets are always within HKDF-SHA256's output limit; no fallback key exists.
        hk.expand(b"PHYSec traffic secret", &mut out[..])
            .map_err(|_| KmError::BadPeerKey)?;
        Ok(TrafficKey::new(
            key_id_for(epoch),
            *out,
            now + self.cfg.key_lifetime,
            self.role,
        ))
    }

    /// The initiator starts a new exchange only when the previous one is finished at both
    /// ends: the responder transmits under the current key (so no key it or the initiator
    /// uses is disturbed) and the key before it is retired (so the new one has a slot).
    fn may_rekey(&self) -> bool {
        self.role == Role::Initiator
            && self.peer_session.is_some()
            && self.pending.is_none()
            && self.old.is_none()
            && (self.current.is_none() || self.peer_on_current)
    }

    fn start_exchange(&mut self, now: Instant, out: &mut Vec<Action>) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
        let secret = self.rng.ephemeral();
        let public = PublicKey::from(&secret).to_bytes();
        self.pending = Some(Pending {
            epoch: self.epoch,
            key_id: key_id_for(self.epoch),
            secret: Some(secret),
            public,
            peer_public: [0; 32],
            started: now,
            last_sent: now,
        });
        self.send(MessageKind::Offer, self.epoch, public, [0; 32], out);
    }

    fn retire_old(&mut self, out: &mut Vec<Action>) {
        if let Some(o) = self.old.take() {
            out.push(Action::Retire(o.key.id));
        }
    }

    /// Run the timers at `now`.
    pub fn poll(&mut self, now: Instant, out: &mut Vec<Action>) {
        if !self.started {
            self.started = true;
            self.last_heard = now;
        }
        if let Some(o) = self.old {
            if o.at.is_some_and(|at| now >= at) || now >= o.key.expires {
                self.retire_old(out);
            }
        }
        if let Some(k) = self.next {
            if now >= k.expires {
                // The Confirm never came: give the exchange up.
                self.next = None;
                self.pending = None;
                out.push(Action::Retire(k.id));
            }
        }
        if let Some(k) = self.current {
            if now >= k.expires {
                self.current = None;
                self.state = LinkState::Expired;
                out.push(Action::Alarm(Alarm::KeyExpired(k.id)));
                out.push(Action::Retire(k.id));
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
            self.keepalive(None, out);
        }
        if self.peer_session.is_none() {
            return;
        }
        if self.may_rekey() && now >= self.next_rekey {
            self.start_exchange(now, out);
            return;
        }
        match (self.role, &mut self.pending) {
            (_, Some(p)) if now >= p.last_sent + self.cfg.retransmit => {
                p.last_sent = now;
                let (kind, epoch, eph, peer) = match self.role {
                    Role::Initiator => (MessageKind::Offer, p.epoch, p.public, [0; 32]),
                    Role::Responder => (MessageKind::Answer, p.epoch, p.public, p.peer_public),
                };
                self.send(kind, epoch, eph, peer, out);
            }
            _ => {}
        }
    }

    /// Handle a message from the peer at `now`. An error means the message changed no
    /// state (a bad signature also raises [`Alarm::PeerAuthFailed`]; a message from an
    /// unbound session is answered with a challenge).
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
        if m.link != self.link {
            return Err(KmError::WrongLink);
        }
        if m.session == self.session || m.session == 0 {
            return Err(KmError::Stale);
        }
        if self.peer_session != Some(m.session) {
            return self.on_unbound(now, &m, out);
        }
        if m.peer_session != self.session {
            return Err(KmError::Stale);
        }
        if m.seq <= self.peer_seq {
            return Err(KmError::Replay);
        }
        self.peer_seq = m.seq;
        self.heard(now);
        self.peer_switched(now, m.tx_epoch);
        match (self.role, m.kind) {
            (_, MessageKind::KeepAlive) => {
                if m.ephemeral != [0; 32] {
                    // The peer has not bound this session yet (its copy of the binding
                    // message was lost): echo its challenge.
                    self.echo = m.ephemeral;
                    self.echo_to = m.session;
                    self.keepalive(Some(m.session), out);
                }
                Ok(())
            }
            (Role::Responder, MessageKind::Offer) => self.on_offer(now, &m, out),
            (Role::Initiator, MessageKind::Answer) => self.on_answer(now, &m, out),
            (Role::Responder, MessageKind::Confirm) => self.on_confirm(now, &m, out),
            _ => Err(KmError::Unexpected),
        }
    }

    fn heard(&mut self, now: Instant) {
        self.last_heard = now;
        self.peer_lost = false;
    }

    /// A message from a session this end is not bound to: bind if it echoes a challenge
    /// drawn for it, otherwise challenge it.
    fn on_unbound(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let echoed = self
            .challenge
            .as_ref()
            .is_some_and(|c| c.to.is_none_or(|t| t == m.session) && c.nonce == m.peer_ephemeral);
        if m.kind == MessageKind::KeepAlive && echoed && m.peer_session == self.session {
            self.bind(now, m, out);
            return Ok(());
        }
        if self.peer_session.is_some()
            && self
                .challenge
                .as_ref()
                .is_none_or(|c| c.to != Some(m.session))
        {
            // Bound to another session: a fresh challenge, drawn now, for this one.
            self.challenge = Some(Challenge {
                to: Some(m.session),
                nonce: self.rng.nonce(),
            });
        }
        if m.kind == MessageKind::KeepAlive {
            self.echo = m.ephemeral;
            self.echo_to = m.session;
        }
        self.keepalive(Some(m.session), out);
        Err(KmError::Unbound)
    }

    fn bind(&mut self, now: Instant, m: &MessageRepr, out: &mut Vec<Action>) {
        if self.peer_session.is_some() {
            // The peer restarted: the old association's keys are useless to it.
            out.push(Action::Alarm(Alarm::PeerRestarted));
            for k in [self.current.take(), self.next.take()]
                .into_iter()
                .flatten()
            {
                out.push(Action::Retire(k.id));
            }
            self.retire_old(out);
            self.pending = None;
            self.done = None;
            self.peer_on_current = false;
            self.epoch = 0;
            self.state = LinkState::Establishing;
        }
        self.peer_session = Some(m.session);
        self.peer_seq = m.seq;
        self.challenge = None;
        self.echo = m.ephemeral;
        self.echo_to = m.session;
        self.heard(now);
        // Tell the peer its challenge was seen (it binds on this), then start keying.
        self.keepalive(Some(m.session), out);
        if self.may_rekey() {
            self.start_exchange(now, out);
        }
    }

    /// The initiator learns that the responder transmits under `tx_epoch`.
    fn peer_switched(&mut self, now: Instant, tx_epoch: u32) {
        if self.role != Role::Initiator {
            return;
        }
        let Some(c) = self.current else {
            return;
        };
        if tx_epoch != c.epoch {
            return;
        }
        self.peer_on_current = true;
        if let Some(o) = &mut self.old {
            if o.at.is_none() {
                o.at = Some(now + self.cfg.retire_delay);
            }
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
        if let Some(p) = &self.pending {
            if m.epoch == p.epoch {
                // The initiator retransmitted: resend the same answer.
                if p.peer_public != m.ephemeral {
                    return Err(KmError::Unexpected);
                }
                let (e, a, b) = (p.epoch, p.public, p.peer_public);
                self.send(MessageKind::Answer, e, a, b, out);
                return Ok(());
            }
        }
        if m.epoch <= self.epoch {
            return Err(KmError::Unexpected);
        }
        if self.current.is_some_and(|c| c.id == m.key_id) {
            return Err(KmError::Unexpected);
        }
        let secret = self.rng.ephemeral();
        let public = PublicKey::from(&secret).to_bytes();
        let shared = secret.diffie_hellman(&PublicKey::from(m.ephemeral));
        let peer_session = self.peer_session.unwrap_or(0);
        let key = self.derive(
            now,
            m.epoch,
            &shared,
            (m.ephemeral, peer_session),
            (public, self.session),
        )?;
        // Keys of an unconfirmed earlier exchange and a replaced key still in its retire
        // delay go first: a new offer means the initiator is past both.
        if let Some(n) = self.next.take() {
            out.push(Action::Retire(n.id));
        }
        self.retire_old(out);
        self.epoch = m.epoch;
        self.pending = Some(Pending {
            epoch: m.epoch,
            key_id: key.id(),
            secret: None,
            public,
            peer_public: m.ephemeral,
            started: now,
            last_sent: now,
        });
        self.next = Some(Live {
            id: key.id(),
            epoch: m.epoch,
            expires: key.expires(),
        });
        // Receive side first: the initiator may switch as soon as it sees the answer.
        out.push(Action::Install(key));
        self.send(MessageKind::Answer, m.epoch, public, m.ephemeral, out);
        Ok(())
    }

    fn on_confirm(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let fits = self.pending.as_ref().is_some_and(|p| p.epoch == m.epoch)
            && self.next.is_some_and(|n| n.id == m.key_id);
        if !fits {
            return Err(KmError::Unexpected);
        }
        let Some(next) = self.next.take() else {
            return Err(KmError::Unexpected);
        };
        self.pending = None;
        out.push(Action::ActivateTx(next.id));
        self.retire_old(out);
        // The initiator switched before it confirmed: the old key carries only segments
        // already in flight.
        self.old = self.current.replace(next).map(|key| Old {
            key,
            at: Some(now + self.cfg.retire_delay),
        });
        self.state = LinkState::Secured;
        // Say at once that this end switched, so the initiator can retire the old key.
        self.keepalive(None, out);
        Ok(())
    }

    fn on_answer(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let fits = self.pending.as_ref().is_some_and(|p| {
            m.epoch == p.epoch && m.key_id == p.key_id && m.peer_ephemeral == p.public
        });
        if !fits {
            let duplicate = self.done.as_ref().is_some_and(|d| {
                d.epoch == m.epoch && d.public == m.peer_ephemeral && d.peer_public == m.ephemeral
            });
            if duplicate {
                // The responder has not seen the Confirm: send it again.
                self.send(MessageKind::Confirm, m.epoch, [0; 32], [0; 32], out);
                return Ok(());
            }
            return Err(KmError::Unexpected);
        }
        let Some(mut p) = self.pending.take() else {
            return Err(KmError::Unexpected);
        };
        let Some(secret) = p.secret.take() else {
            return Err(KmError::Unexpected);
        };
        let shared = secret.diffie_hellman(&PublicKey::from(m.ephemeral));
        let peer_session = self.peer_session.unwrap_or(0);
        let key = match self.derive(
            now,
            p.epoch,
            &shared,
            (p.public, self.session),
            (m.ephemeral, peer_session),
        ) {
            Ok(k) => k,
            Err(e) => {
                // The ephemeral is spent; the next poll offers a fresh epoch.
                self.next_rekey = now;
                return Err(e);
            }
        };
        let id = key.id();
        let live = Live {
            id,
            epoch: p.epoch,
            expires: key.expires(),
        };
        out.push(Action::Install(key));
        out.push(Action::ActivateTx(id));
        self.retire_old(out);
        // The responder still sends under the old key until it sees the Confirm.
        self.old = self.current.replace(live).map(|key| Old { key, at: None });
        self.peer_on_current = false;
        self.state = LinkState::Secured;
        // Counted from the start of the exchange: the responder's copy of the key has been
        // ageing since the offer reached it, however long the exchange took.
        self.next_rekey = p.started + self.cfg.rekey_interval;
        self.done = Some(Done {
            epoch: p.epoch,
            public: p.public,
            peer_public: m.ephemeral,
        });
        self.send(MessageKind::Confirm, p.epoch, [0; 32], [0; 32], out);
        Ok(())
    }
}
