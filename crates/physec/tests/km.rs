//! Key management driven by explicit time, together with the channel-level data plane:
//! authentication, session binding and restart, hitless rekey under traffic and under a
//! lossy control channel, expiry, replay and keep-alive.

mod common;

use common::{decode, encode, frames};
use physec::channel::{ChannelConfig, ChannelRx, ChannelTx, LOCAL_FAULT};
use physec::keys::{KeyId, NonceUse};
use physec::km::{
    Action, Alarm, KeyAgent, KmConfig, KmError, LinkState, MessageKind, MessageRepr, Role,
};
use physec::link::{LinkConfig, LinkRx, LinkTx};
use physec::time::{Duration, Instant};
use physec::wire::block::Block66;
use physec::wire::segment::{start_block, ParamRepr};
use proptest::prelude::*;
use std::collections::{BTreeSet, HashSet, VecDeque};

const SEED_A: [u8; 32] = [1; 32];
const SEED_B: [u8; 32] = [2; 32];
const LINK: u64 = 0x1111;

fn cfg() -> KmConfig {
    KmConfig::new(
        Duration::from_micros(20),
        Duration::from_micros(50),
        Duration::from_micros(5),
        Duration::from_micros(5),
        Duration::from_micros(20),
        Duration::from_micros(10),
    )
    .expect("valid timers")
}

fn agent(cfg: KmConfig, role: Role, link: u64, rng: u8) -> KeyAgent {
    let (own, peer) = match role {
        Role::Initiator => (SEED_A, SEED_B),
        Role::Responder => (SEED_B, SEED_A),
    };
    KeyAgent::new_deterministic(
        cfg,
        role,
        link,
        own,
        KeyAgent::public_identity(peer),
        [rng; 32],
    )
    .expect("agent")
}

fn agents() -> (KeyAgent, KeyAgent) {
    (
        agent(cfg(), Role::Initiator, LINK, 10),
        agent(cfg(), Role::Responder, LINK, 20),
    )
}

fn sends(acts: &[Action]) -> Vec<Vec<u8>> {
    acts.iter()
        .filter_map(|x| match x {
            Action::Send(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

fn installs(acts: &[Action]) -> usize {
    acts.iter()
        .filter(|x| matches!(x, Action::Install(_)))
        .count()
}

fn kind_of(m: &[u8]) -> u8 {
    m[2]
}

struct End {
    agent: KeyAgent,
    tx: ChannelTx,
    rx: ChannelRx,
    /// The link-level engines, driven by the same key management.
    ltx: LinkTx,
    lrx: LinkRx,
    alarms: Vec<Alarm>,
    plain: VecDeque<Block66>,
    delivered: Vec<Block66>,
}

/// What the control channel does to one message during the fault window.
#[derive(Clone, Copy, Debug)]
struct Fate {
    drop: bool,
    duplicate: bool,
    /// Extra delay of the (first) copy, in nanoseconds.
    delay: u64,
}

/// A two-ended link: control messages take `ctl_delay` (plus faults); data segments take
/// `data_delay_steps` steps of `step` each.
struct Harness {
    ends: [End; 2],
    cfg: ChannelConfig,
    k: usize,
    step: Duration,
    ctl_delay: Duration,
    ctl: Vec<(Instant, usize, Vec<u8>)>,
    wire: [VecDeque<Vec<Block66>>; 2],
    data_delay_steps: usize,
    drop_ctl_after: Option<Instant>,
    /// Faults applied to control messages sent in `[from, until)`, cycled.
    faults: Option<(Instant, Instant, Vec<Fate>)>,
    fault_idx: usize,
    /// Restart end `i` at instant `t` with a fresh generator seed.
    restarts: Vec<(Instant, usize, u8)>,
    /// Fail the run if key management retires the key a transmitter uses.
    forbid_retiring_active: bool,
    key_ids_on_line: BTreeSet<u8>,
    line_after: Vec<(Instant, Block66)>,
    nonces: HashSet<NonceUse>,
    segments_sent: u64,
    /// Per direction: the last instant a transmitter was blocked.
    last_blocked: [Option<Instant>; 2],
    now: Instant,
    /// Also send one small link-level multi-frame per direction per step.
    link_level: bool,
    link_nonces: HashSet<NonceUse>,
    multiframes_sent: u64,
}

fn link_cfg() -> LinkConfig {
    LinkConfig::new(1, 8, 1).expect("link config")
}

impl Harness {
    fn new(a: KeyAgent, b: KeyAgent, k: usize, traffic: [Vec<Block66>; 2]) -> Harness {
        let cfg = ChannelConfig::new(k).expect("config");
        let [ta, tb] = traffic;
        let end = |agent, plain: Vec<Block66>| End {
            agent,
            tx: ChannelTx::new(cfg),
            rx: ChannelRx::new(cfg),
            ltx: LinkTx::new(link_cfg()),
            lrx: LinkRx::new(link_cfg()),
            alarms: Vec::new(),
            plain: plain.into(),
            delivered: Vec::new(),
        };
        Harness {
            ends: [end(a, ta), end(b, tb)],
            cfg,
            k,
            step: Duration::from_nanos(100),
            ctl_delay: Duration::from_micros(1),
            ctl: Vec::new(),
            wire: [VecDeque::new(), VecDeque::new()],
            data_delay_steps: 3,
            drop_ctl_after: None,
            faults: None,
            fault_idx: 0,
            restarts: Vec::new(),
            forbid_retiring_active: false,
            key_ids_on_line: BTreeSet::new(),
            line_after: Vec::new(),
            nonces: HashSet::new(),
            segments_sent: 0,
            last_blocked: [None, None],
            now: Instant::ZERO,
            link_level: false,
            link_nonces: HashSet::new(),
            multiframes_sent: 0,
        }
    }

    fn apply(&mut self, i: usize, actions: Vec<Action>) {
        let now = self.now;
        for a in actions {
            match a {
                Action::Send(m) => self.enqueue(now, i, m),
                Action::Install(k) => {
                    let e = &mut self.ends[i];
                    e.tx.install_key(&k)
                        .expect("a live key is never reinstalled");
                    e.rx.install_key(&k)
                        .expect("a live key is never reinstalled");
                    e.ltx.install_key(&k).expect("live key");
                    e.lrx.install_key(&k).expect("live key");
                }
                Action::ActivateTx(id) => {
                    assert!(self.ends[i].tx.activate(id));
                    assert!(self.ends[i].ltx.activate(id));
                }
                Action::Retire(id) => {
                    let e = &mut self.ends[i];
                    if self.forbid_retiring_active {
                        assert_ne!(
                            e.tx.active_key(),
                            Some(id),
                            "end {i} retired its active key at {now}"
                        );
                    }
                    e.tx.retire(id);
                    e.rx.retire(id);
                    e.ltx.retire(id);
                    e.lrx.retire(id);
                }
                Action::Alarm(al) => self.ends[i].alarms.push(al),
            }
        }
    }

    fn enqueue(&mut self, now: Instant, from: usize, m: Vec<u8>) {
        if self.drop_ctl_after.is_some_and(|t| now >= t) {
            return;
        }
        let at = now + self.ctl_delay;
        if let Some((lo, hi, plan)) = &self.faults {
            if now >= *lo && now < *hi && !plan.is_empty() {
                let f = plan[self.fault_idx % plan.len()];
                self.fault_idx += 1;
                if f.drop {
                    return;
                }
                if f.duplicate {
                    self.ctl.push((at, 1 - from, m.clone()));
                }
                self.ctl.push((at + Duration(f.delay), 1 - from, m));
                return;
            }
        }
        self.ctl.push((at, 1 - from, m));
    }

    fn restart(&mut self, i: usize, seed: u8) {
        let role = if i == 0 {
            Role::Initiator
        } else {
            Role::Responder
        };
        let e = &mut self.ends[i];
        e.agent = agent(cfg(), role, LINK, seed);
        e.tx = ChannelTx::new(self.cfg);
        e.rx = ChannelRx::new(self.cfg);
        e.ltx = LinkTx::new(link_cfg());
        e.lrx = LinkRx::new(link_cfg());
    }

    fn run(&mut self, until: Instant) {
        while self.now < until {
            let now = self.now;
            let due: Vec<_> = self
                .restarts
                .iter()
                .filter(|(t, _, _)| *t == now)
                .copied()
                .collect();
            for (_, i, seed) in due {
                self.restart(i, seed);
            }
            // Control plane.
            for i in 0..2 {
                let mut acts = Vec::new();
                self.ends[i].agent.poll(now, &mut acts);
                self.apply(i, acts);
            }
            let mut due = Vec::new();
            self.ctl.retain(|x| {
                if x.0 <= now {
                    due.push(x.clone());
                    false
                } else {
                    true
                }
            });
            for (_, to, m) in due {
                let mut acts = Vec::new();
                let _ = self.ends[to].agent.handle(now, &m, &mut acts);
                self.apply(to, acts);
            }
            // Data plane: one segment per direction per step. Traffic starts once the
            // transmitter has a key (before that the generator sends idles).
            for i in 0..2 {
                let e = &mut self.ends[i];
                let mut line = Vec::new();
                let sent = e.tx.stats().segments;
                let blocked = e.tx.stats().blocked;
                for _ in 0..self.k {
                    let b = if e.tx.active_key().is_some() {
                        e.plain.pop_front().unwrap_or(Block66::IDLE)
                    } else {
                        Block66::IDLE
                    };
                    let _ = e.tx.push(now, b, &mut line);
                }
                if e.tx.stats().segments > sent {
                    let n = e.tx.last_nonce().expect("a segment was sealed");
                    assert!(
                        self.nonces.insert(n),
                        "(key, nonce) repeated: {n:?} at {now}"
                    );
                    self.segments_sent += 1;
                }
                if e.tx.stats().blocked > blocked {
                    self.last_blocked[i] = Some(now);
                }
                if line[0] == start_block() {
                    if let Ok(p) = ParamRepr::parse(&line[1]) {
                        self.key_ids_on_line.insert(p.key_id.0);
                    }
                }
                for b in &line {
                    self.line_after.push((now, *b));
                }
                if self.link_level {
                    let payload = vec![Block66::IDLE; link_cfg().payload_blocks()];
                    let mut mf = Vec::new();
                    if e.ltx.encrypt_multiframe(now, &payload, &mut mf).is_ok() {
                        let n = e.ltx.last_nonce().expect("a multi-frame was sealed");
                        assert!(self.link_nonces.insert(n), "link (key, nonce) repeated");
                        self.multiframes_sent += 1;
                        let peer = &mut self.ends[1 - i];
                        let _ = peer.lrx.decrypt_multiframe(now, &mf, &mut Vec::new());
                    }
                }
                self.wire[i].push_back(line);
                if self.wire[i].len() > self.data_delay_steps {
                    let seg = self.wire[i].pop_front().expect("queued");
                    let peer = &mut self.ends[1 - i];
                    for b in seg {
                        peer.rx.push(now, b, &mut peer.delivered);
                    }
                }
            }
            self.now = now + self.step;
        }
    }
}

#[test]
fn handshake_rekeys_under_traffic_without_losing_a_frame() {
    let (a, b) = agents();
    let k = 128;
    let fa = frames(11, 1000, &[64, 256, 1500, 9216]);
    let fb = frames(12, 1500, &[64, 128, 4096]);
    let mut h = Harness::new(a, b, k, [encode(&fa, 1), encode(&fb, 1)]);
    h.forbid_retiring_active = true;
    h.run(Instant(Duration::from_micros(300).as_nanos()));
    for (i, sent) in [&fa, &fb].into_iter().enumerate() {
        let e = &h.ends[1 - i];
        assert_eq!(
            e.rx.stats().failed(),
            0,
            "direction {i}: {:?}",
            e.rx.stats()
        );
        assert_eq!(e.rx.stats().lost_segments, 0);
        let (got, dec) = decode(&e.delivered);
        assert_eq!(dec.stats().frames_dropped, 0);
        // Everything sent was delivered (the run is long enough to drain both queues).
        assert!(h.ends[i].plain.is_empty(), "direction {i} did not drain");
        assert_eq!(&got, sent, "direction {i}");
    }
    assert!(h.ends.iter().all(|e| e.alarms.is_empty()), "no alarms");
    assert!(
        h.ends[0].agent.epoch() >= 10,
        "epoch {}",
        h.ends[0].agent.epoch()
    );
    assert_eq!(
        h.key_ids_on_line,
        BTreeSet::from([0, 1, 2, 3]),
        "all key ids used"
    );
    assert_eq!(h.ends[1].agent.state(), LinkState::Secured);
}

#[test]
fn missing_rekey_expires_the_key_and_stops_traffic() {
    let (a, b) = agents();
    let k = 64;
    let fa = frames(21, 20_000, &[1500]);
    let mut h = Harness::new(a, b, k, [encode(&fa, 1), Vec::new()]);
    // The authentication channel dies at 30 us: the rekey at ~25 us (binding and the first
    // exchange take ~5 us) succeeds, the one at ~45 us never completes, so the key
    // installed at ~25 us expires at ~75 us.
    h.drop_ctl_after = Some(Instant(30_000));
    h.run(Instant(120_000));
    for e in &h.ends {
        assert!(
            e.alarms.iter().any(|a| matches!(a, Alarm::KeyExpired(_))),
            "{:?}",
            e.alarms
        );
        assert!(e.alarms.contains(&Alarm::PeerLost));
        assert_eq!(e.agent.state(), LinkState::Expired);
    }
    assert!(h.ends[0].tx.stats().blocked > 0);
    // After expiry (+ the last in-flight segments) the line carries no data block at all.
    let expired_at = 80_000;
    let after: Vec<_> = h
        .line_after
        .iter()
        .filter(|(t, _)| t.0 > expired_at)
        .collect();
    assert!(!after.is_empty());
    assert!(after
        .iter()
        .all(|(_, b)| *b == LOCAL_FAULT || *b == Block66::IDLE));
    // The receiver delivered only what was sent under a valid key, as intact frames.
    let (got, _) = decode(&h.ends[1].delivered);
    assert!(!got.is_empty() && got.len() < fa.len());
    assert_eq!(&got[..], &fa[..got.len()]);
    // Segments in flight when the key expired are refused (counted), never forged, and
    // the Local Fault that follows reaches the far end as a hint.
    let st = h.ends[1].rx.stats();
    assert_eq!(
        (st.auth_failed, st.replayed, st.malformed),
        (0, 0, 0),
        "{st:?}"
    );
    assert!(st.fault_hints > 0);
}

/// Run the binding handshake between two agents by hand; returns every message sent.
fn bind(a: &mut KeyAgent, b: &mut KeyAgent, t: &mut u64) -> Vec<(usize, Vec<u8>)> {
    let mut log = Vec::new();
    let mut queue: VecDeque<(usize, Vec<u8>)> = VecDeque::new();
    let mut acts = Vec::new();
    a.poll(Instant(*t), &mut acts);
    queue.extend(sends(&acts).into_iter().map(|m| (1, m)));
    let mut acts = Vec::new();
    b.poll(Instant(*t), &mut acts);
    queue.extend(sends(&acts).into_iter().map(|m| (0, m)));
    // Deliver until the initiator has sent its first Offer (and it was handled).
    while let Some((to, m)) = queue.pop_front() {
        *t += 100;
        log.push((to, m.clone()));
        let mut acts = Vec::new();
        let agent = if to == 0 { &mut *a } else { &mut *b };
        let _ = agent.handle(Instant(*t), &m, &mut acts);
        queue.extend(sends(&acts).into_iter().map(|m| (1 - to, m)));
        if log.len() > 40 {
            break;
        }
    }
    log
}

#[test]
fn binding_and_first_exchange_complete_in_a_few_messages() {
    let (mut a, mut b) = agents();
    let mut t = 0;
    let log = bind(&mut a, &mut b, &mut t);
    assert_eq!(a.peer_session(), Some(b.session()));
    assert_eq!(b.peer_session(), Some(a.session()));
    assert_eq!(a.state(), LinkState::Secured);
    assert_eq!(b.state(), LinkState::Secured);
    assert_eq!(a.current_key(), Some(KeyId(1)));
    assert_eq!(b.current_key(), Some(KeyId(1)));
    assert!(log.len() < 16, "{} messages", log.len());
}

#[test]
fn wrong_identity_raises_alarm_and_installs_nothing() {
    let a = agent(cfg(), Role::Initiator, LINK, 10);
    let mut b = KeyAgent::new_deterministic(
        cfg(),
        Role::Responder,
        LINK,
        SEED_B,
        KeyAgent::public_identity([9; 32]),
        [20; 32],
    )
    .expect("agent");
    let mut a = a;
    let mut acts = Vec::new();
    a.poll(Instant(0), &mut acts);
    let msgs = sends(&acts);
    assert_eq!(msgs.len(), 1, "a keep-alive with a challenge");
    for m in msgs {
        let mut out = Vec::new();
        assert_eq!(
            b.handle(Instant(1_000), &m, &mut out),
            Err(KmError::BadSignature)
        );
        assert!(matches!(out[..], [Action::Alarm(Alarm::PeerAuthFailed)]));
    }
    assert_eq!(b.state(), LinkState::Establishing);
    assert_eq!(b.peer_session(), None);
}

#[test]
fn replayed_and_tampered_messages_are_rejected() {
    let (mut a, mut b) = agents();
    let mut t = 0;
    let log = bind(&mut a, &mut b, &mut t);
    let (_, offer) = log
        .iter()
        .find(|(to, m)| *to == 1 && kind_of(m) == MessageKind::Offer as u8)
        .expect("an offer")
        .clone();
    let mut out = Vec::new();
    assert_eq!(
        b.handle(Instant(t + 1_000), &offer, &mut out),
        Err(KmError::Replay)
    );
    assert!(out.is_empty());
    let mut bad = offer.clone();
    bad[40] ^= 1;
    assert_eq!(
        b.handle(Instant(t + 2_000), &bad, &mut Vec::new()),
        Err(KmError::BadSignature)
    );
    assert_eq!(
        b.handle(Instant(t + 3_000), &offer[..100], &mut Vec::new()),
        Err(KmError::Malformed)
    );
}

#[test]
fn message_from_another_link_is_rejected() {
    // Two links between the same two identities: an Offer recorded on link 1 and
    // injected on link 2 must have no effect there.
    let (mut a1, mut b1) = agents();
    let mut t = 0;
    let log = bind(&mut a1, &mut b1, &mut t);
    let mut a2 = agent(cfg(), Role::Initiator, LINK + 1, 30);
    let mut b2 = agent(cfg(), Role::Responder, LINK + 1, 40);
    let mut t2 = 0;
    bind(&mut a2, &mut b2, &mut t2);
    let before = (b2.epoch(), b2.current_key(), b2.peer_session());
    for (to, m) in &log {
        let target = if *to == 1 { &mut b2 } else { &mut a2 };
        let mut out = Vec::new();
        assert_eq!(
            target.handle(Instant(t2 + 1_000), m, &mut out),
            Err(KmError::WrongLink)
        );
        assert!(out.is_empty(), "no reply, no install");
    }
    assert_eq!(before, (b2.epoch(), b2.current_key(), b2.peer_session()));
    assert_eq!(b2.state(), LinkState::Secured);
}

#[test]
fn weak_peer_keys_are_refused() {
    // The identity point (y = 1) and a small-order point are not identities anyone holds.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    for weak in [identity, [0u8; 32]] {
        let r = KeyAgent::new(cfg(), Role::Responder, LINK, SEED_B, weak);
        assert_eq!(r.err(), Some(KmError::BadPeerKey));
    }
    // A small-order X25519 ephemeral in an otherwise authentic Offer is refused.
    let (mut a, mut b) = agents();
    let mut t = 0;
    bind(&mut a, &mut b, &mut t);
    let forged = MessageRepr {
        kind: MessageKind::Offer,
        link: LINK,
        session: a.session(),
        peer_session: b.session(),
        seq: 1 << 40,
        epoch: 2,
        key_id: KeyId(2),
        tx_epoch: 1,
        ephemeral: [0; 32],
        peer_ephemeral: [0; 32],
    };
    let bytes = forged.emit(&ed25519_dalek::SigningKey::from_bytes(&SEED_A));
    let mut out = Vec::new();
    assert_eq!(
        b.handle(Instant(t + 100), &bytes, &mut out),
        Err(KmError::BadPeerKey)
    );
    assert_eq!(installs(&out), 0);
}

#[test]
fn forged_signature_under_the_identity_point_is_rejected() {
    // With the identity point as public key, R = B and s = 1 satisfy the cofactorless
    // equation [s]B = R + [k]A for every message: only strict verification refuses it.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let vk = ed25519_dalek::VerifyingKey::from_bytes(&identity).expect("a curve point");
    let m = MessageRepr {
        kind: MessageKind::Offer,
        link: LINK,
        session: 7,
        peer_session: 8,
        seq: 1,
        epoch: 1,
        key_id: KeyId(1),
        tx_epoch: 0,
        ephemeral: [9; 32],
        peer_ephemeral: [0; 32],
    };
    let mut bytes = m.emit(&ed25519_dalek::SigningKey::from_bytes(&[3; 32]));
    let n = bytes.len();
    let mut basepoint = [0x66u8; 32];
    basepoint[0] = 0x58;
    bytes[n - 64..n - 32].copy_from_slice(&basepoint);
    let mut s = [0u8; 32];
    s[0] = 1;
    bytes[n - 32..].copy_from_slice(&s);
    let sig = ed25519_dalek::Signature::from_bytes(bytes[n - 64..].try_into().expect("64"));
    assert!(
        vk.verify_strict(&bytes[..n - 64], &sig).is_err()
            && ed25519_dalek::Verifier::verify(&vk, &bytes[..n - 64], &sig).is_ok(),
        "the forgery works against non-strict verification only"
    );
    assert_eq!(MessageRepr::parse(&bytes, &vk), Err(KmError::BadSignature));
}

#[test]
fn os_rng_is_the_default() {
    // Two agents built the same way draw different session ids (and ephemerals).
    let a = KeyAgent::new(
        cfg(),
        Role::Initiator,
        LINK,
        SEED_A,
        KeyAgent::public_identity(SEED_B),
    )
    .expect("agent");
    let b = KeyAgent::new(
        cfg(),
        Role::Initiator,
        LINK,
        SEED_A,
        KeyAgent::public_identity(SEED_B),
    )
    .expect("agent");
    assert_ne!(a.session(), b.session());
    let c = agent(cfg(), Role::Initiator, LINK, 10);
    let d = agent(cfg(), Role::Initiator, LINK, 10);
    assert_eq!(
        c.session(),
        d.session(),
        "deterministic mode is reproducible"
    );
}

#[test]
fn lost_confirm_is_resent_on_a_duplicate_answer() {
    let (mut a, mut b) = agents();
    let mut t = 0;
    bind(&mut a, &mut b, &mut t);
    // The next rekey, with its Confirm lost.
    t = 25_000;
    let mut acts = Vec::new();
    a.poll(Instant(t), &mut acts);
    let offer = sends(&acts)
        .into_iter()
        .find(|m| kind_of(m) == MessageKind::Offer as u8)
        .expect("a rekey offer");
    let mut acts = Vec::new();
    b.handle(Instant(t + 100), &offer, &mut acts)
        .expect("offer");
    assert_eq!(installs(&acts), 1);
    let answer = sends(&acts).pop().expect("answer");
    let mut acts = Vec::new();
    a.handle(Instant(t + 200), &answer, &mut acts)
        .expect("answer");
    assert!(acts
        .iter()
        .any(|x| matches!(x, Action::ActivateTx(KeyId(2)))));
    // (the Confirm in `acts` is lost)
    assert_eq!(
        b.current_key(),
        Some(KeyId(1)),
        "responder still on the old key"
    );
    // The responder retransmits its Answer; the initiator answers with a Confirm.
    let mut acts = Vec::new();
    b.poll(Instant(t + 100 + 10_000), &mut acts);
    let again = sends(&acts)
        .into_iter()
        .find(|m| kind_of(m) == MessageKind::Answer as u8)
        .expect("answer retransmitted");
    let mut acts = Vec::new();
    a.handle(Instant(t + 10_200), &again, &mut acts)
        .expect("duplicate");
    let confirm = sends(&acts)
        .into_iter()
        .find(|m| kind_of(m) == MessageKind::Confirm as u8)
        .expect("confirm resent");
    let mut acts = Vec::new();
    b.handle(Instant(t + 10_300), &confirm, &mut acts)
        .expect("confirm");
    assert!(acts
        .iter()
        .any(|x| matches!(x, Action::ActivateTx(KeyId(2)))));
    assert_eq!(b.current_key(), Some(KeyId(2)));
    // Nothing retired the key either transmitter was using.
    assert!(!acts.iter().any(|x| matches!(x, Action::Retire(KeyId(2)))));
}

#[test]
fn restarted_end_rejoins_after_authentication() {
    for restarting in [0usize, 1] {
        let (a, b) = agents();
        let k = 64;
        let mut h = Harness::new(a, b, k, [Vec::new(), Vec::new()]);
        let restart_at = Instant(40_100);
        h.restarts.push((restart_at, restarting, 77));
        h.run(Instant(40_000));
        let before = h.ends.each_ref().map(|e| e.rx.stats().segments_ok);
        let [s0, s1] = h.ends.each_ref().map(|e| e.agent.session());
        h.run(Instant(80_000));
        let survivor = 1 - restarting;
        assert_ne!(h.ends[restarting].agent.session(), [s0, s1][restarting]);
        assert!(
            h.ends[survivor].alarms.contains(&Alarm::PeerRestarted),
            "{:?}",
            h.ends[survivor].alarms
        );
        assert_eq!(
            h.ends[survivor].agent.peer_session(),
            Some(h.ends[restarting].agent.session())
        );
        for e in &h.ends {
            assert_eq!(e.agent.state(), LinkState::Secured);
        }
        // Both directions carry traffic again soon after the restart: within one
        // retransmit interval plus a few control-message delays.
        let rejoined = restart_at + Duration::from_micros(10 + 5);
        for i in 0..2 {
            assert!(
                h.last_blocked[i].is_none_or(|t| t < rejoined),
                "direction {i} blocked at {:?}",
                h.last_blocked[i]
            );
        }
        let after = h.ends.each_ref().map(|e| e.rx.stats().segments_ok);
        for i in 0..2 {
            // The restarted end's receiver is new: it counts from zero.
            let base = if i == restarting { 0 } else { before[i] };
            assert!(after[i] > base + 200, "end {i}: {before:?} -> {after:?}");
        }
    }
}

#[test]
fn old_session_messages_never_rebind() {
    let (mut a, mut b) = agents();
    let mut t = 0;
    let old_log = bind(&mut a, &mut b, &mut t);
    // The initiator restarts and rejoins.
    let mut a2 = agent(cfg(), Role::Initiator, LINK, 55);
    t += 1_000;
    let new_log = bind(&mut a2, &mut b, &mut t);
    assert_eq!(b.peer_session(), Some(a2.session()));
    assert!(new_log.len() < 20);
    let key = b.current_key();
    // Replay everything the old initiator ever sent: no install, no retire, no rebind.
    for (to, m) in old_log.iter().filter(|(to, _)| *to == 1) {
        let _ = to;
        let mut out = Vec::new();
        let r = b.handle(Instant(t + 100), m, &mut out);
        assert!(r.is_err(), "{r:?}");
        assert!(out.iter().all(|x| matches!(x, Action::Send(_))), "{out:?}");
        t += 100;
    }
    assert_eq!(b.peer_session(), Some(a2.session()));
    assert_eq!(b.current_key(), key);
    assert_eq!(b.state(), LinkState::Secured);
}

#[test]
fn no_key_nonce_pair_repeats_over_a_long_run_with_rekeys_and_restarts() {
    let (a, b) = agents();
    let k = 32;
    let fa = frames(31, 3_000, &[64, 1500]);
    let fb = frames(32, 3_000, &[64, 9216]);
    let mut h = Harness::new(a, b, k, [encode(&fa, 1), encode(&fb, 1)]);
    h.restarts = vec![
        (Instant(150_000), 0, 101),
        (Instant(330_000), 1, 102),
        (Instant(520_000), 0, 103),
        (Instant(700_000), 1, 104),
    ];
    h.link_level = true;
    h.run(Instant(900_000));
    // Two directions, one segment each per 100 ns, minus the few blocked after restarts.
    assert!(h.segments_sent > 17_000, "{}", h.segments_sent);
    assert_eq!(h.nonces.len() as u64, h.segments_sent);
    // The link level, keyed by the same agents, likewise.
    assert!(h.multiframes_sent > 17_000, "{}", h.multiframes_sent);
    assert_eq!(h.link_nonces.len() as u64, h.multiframes_sent);
    // (Receivers count from their end's last restart; only the few multi-frames sent
    // under the old association's keys before the survivor rebinds are refused.)
    for e in &h.ends {
        assert!(
            e.lrx.accepted > 1_500 && e.lrx.rejected < 100,
            "{e:?}",
            e = (e.lrx.accepted, e.lrx.rejected)
        );
    }
    assert!(h.ends[0].agent.epoch() >= 5);
    assert_eq!(h.key_ids_on_line, BTreeSet::from([0, 1, 2, 3]));
    for e in &h.ends {
        assert_eq!(e.agent.state(), LinkState::Secured);
    }
}

fn fate() -> impl Strategy<Value = Fate> {
    (0u8..100, 0u8..100, 0u64..8_000).prop_map(|(d, u, delay)| Fate {
        drop: d < 40,
        duplicate: u < 30,
        delay,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every control message sent during a 40 us window may be dropped, duplicated or
    /// delayed (hence reordered). No key a transmitter uses is ever retired, no segment is
    /// lost or refused, neither direction ever stops (so both are running well within one
    /// retransmit interval of the window's end), and rekeys resume after the window.
    #[test]
    fn lossy_control_channel_recovers_without_retiring_an_active_key(
        plan in proptest::collection::vec(fate(), 1..64),
    ) {
        let cfg = KmConfig::new(
            Duration::from_micros(20),
            Duration::from_micros(100),
            Duration::from_micros(5),
            Duration::from_micros(5),
            Duration::from_micros(20),
            Duration::from_micros(10),
        )
        .expect("valid timers");
        let a = agent(cfg, Role::Initiator, LINK, 10);
        let b = agent(cfg, Role::Responder, LINK, 20);
        let k = 64;
        let mut h = Harness::new(a, b, k, [Vec::new(), Vec::new()]);
        h.forbid_retiring_active = true;
        let (lo, hi) = (Instant(20_000), Instant(60_000));
        h.faults = Some((lo, hi, plan));
        h.run(hi);
        let epoch_at_end_of_faults = h.ends[0].agent.epoch();
        let ok_at_end = h.ends.each_ref().map(|e| e.rx.stats().segments_ok);
        h.run(Instant(110_000));
        for (i, e) in h.ends.iter().enumerate() {
            let st = e.rx.stats();
            prop_assert_eq!(st.failed(), 0, "end {} {:?}", i, st);
            prop_assert_eq!(st.lost_segments, 0);
            prop_assert!(st.segments_ok > ok_at_end[i] + 400);
            prop_assert_eq!(e.agent.state(), LinkState::Secured);
            // Traffic never stopped once the first key was in place (~5 us).
            prop_assert!(h.last_blocked[i].is_none_or(|t| t < Instant(8_000)));
        }
        // Rekeys resumed after the window.
        prop_assert!(h.ends[0].agent.epoch() > epoch_at_end_of_faults);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The same faults from the first message on, during binding and the first exchange,
    /// and then a restart of either end during a second fault window: both ends bind,
    /// key, and carry traffic both ways soon after each window.
    #[test]
    fn lossy_control_channel_during_binding_and_restart(
        plan in proptest::collection::vec(fate(), 1..64),
        restarting in 0usize..2,
    ) {
        let (a, b) = agents();
        let k = 64;
        let mut h = Harness::new(a, b, k, [Vec::new(), Vec::new()]);
        h.faults = Some((Instant(0), Instant(30_000), plan.clone()));
        h.run(Instant(60_000));
        for e in &h.ends {
            prop_assert_eq!(e.agent.state(), LinkState::Secured);
        }
        // Bound and keyed within a keep-alive and a retransmit interval (plus delays) of
        // the window's end.
        for i in 0..2 {
            prop_assert!(h.last_blocked[i].is_some_and(|t| t < Instant(30_000 + 25_000)));
        }
        h.restarts.push((Instant(80_000), restarting, 99));
        h.faults = Some((Instant(80_000), Instant(110_000), plan));
        h.fault_idx = 0;
        h.run(Instant(160_000));
        for e in &h.ends {
            prop_assert_eq!(e.agent.state(), LinkState::Secured);
            prop_assert_eq!(e.agent.peer_session().is_some(), true);
        }
        prop_assert_eq!(
            h.ends[0].agent.peer_session(),
            Some(h.ends[1].agent.session())
        );
        prop_assert_eq!(
            h.ends[1].agent.peer_session(),
            Some(h.ends[0].agent.session())
        );
        for i in 0..2 {
            prop_assert!(h.last_blocked[i].is_some_and(|t| t < Instant(110_000 + 25_000)));
        }
    }
}

#[test]
fn timers_are_validated() {
    let us = Duration::from_micros;
    assert!(KmConfig::new(us(20), us(10), us(5), us(5), us(20), us(10)).is_err());
    assert!(KmConfig::new(us(20), us(50), us(5), us(5), us(5), us(10)).is_err());
    assert!(KmConfig::new(us(20), us(50), us(30), us(5), us(20), us(10)).is_err());
}
