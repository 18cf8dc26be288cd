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

mod exchange;
mod message;
pub use message::*;

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
}
