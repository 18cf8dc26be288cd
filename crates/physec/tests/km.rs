//! Key management driven by explicit time, together with the channel-level data plane:
//! authentication, hitless rekey under traffic, expiry, replay and keep-alive.

mod common;

use common::{decode, encode, frames};
use physec::channel::{ChannelConfig, ChannelRx, ChannelTx, LOCAL_FAULT};
use physec::keys::KeyId;
use physec::km::{Action, Alarm, KeyAgent, KmConfig, KmError, LinkState, Role};
use physec::time::{Duration, Instant};
use physec::wire::block::Block66;
use physec::wire::segment::ParamRepr;
use std::collections::{BTreeSet, VecDeque};

const SEED_A: [u8; 32] = [1; 32];
const SEED_B: [u8; 32] = [2; 32];

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

fn agents(b_trusts: [u8; 32]) -> (KeyAgent, KeyAgent) {
    let a = KeyAgent::new(
        cfg(),
        Role::Initiator,
        SEED_A,
        KeyAgent::public_identity(SEED_B),
        [10; 32],
    )
    .expect("agent a");
    let b = KeyAgent::new(cfg(), Role::Responder, SEED_B, b_trusts, [20; 32]).expect("agent b");
    (a, b)
}

struct End {
    agent: KeyAgent,
    tx: ChannelTx,
    rx: ChannelRx,
    alarms: Vec<Alarm>,
    plain: VecDeque<Block66>,
    delivered: Vec<Block66>,
}

impl End {
    fn apply(&mut self, actions: Vec<Action>, to_peer: &mut Vec<Vec<u8>>) {
        for a in actions {
            match a {
                Action::Send(m) => to_peer.push(m),
                Action::Install(k) => {
                    self.tx.install_key(&k);
                    self.rx.install_key(&k);
                }
                Action::ActivateTx(id) => assert!(self.tx.activate(id)),
                Action::Retire(id) => {
                    self.tx.retire(id);
                    self.rx.retire(id);
                }
                Action::Alarm(al) => self.alarms.push(al),
            }
        }
    }
}

/// A two-ended link: control messages take `ctl_delay`; data segments take `data_delay_steps`
/// steps of `step` each. `drop_ctl_after` silences the authentication channel.
struct Harness {
    ends: [End; 2],
    k: usize,
    step: Duration,
    ctl_delay: Duration,
    ctl: Vec<(Instant, usize, Vec<u8>)>,
    wire: [VecDeque<Vec<Block66>>; 2],
    data_delay_steps: usize,
    drop_ctl_after: Option<Instant>,
    key_ids_on_line: BTreeSet<u8>,
    line_after: Vec<(Instant, Block66)>,
}

impl Harness {
    fn new(a: KeyAgent, b: KeyAgent, k: usize, traffic: [Vec<Block66>; 2]) -> Harness {
        let cfg = ChannelConfig::new(k).expect("config");
        let [ta, tb] = traffic;
        let end = |agent, plain: Vec<Block66>| End {
            agent,
            tx: ChannelTx::new(cfg),
            rx: ChannelRx::new(cfg),
            alarms: Vec::new(),
            plain: plain.into(),
            delivered: Vec::new(),
        };
        Harness {
            ends: [end(a, ta), end(b, tb)],
            k,
            step: Duration::from_nanos(100),
            ctl_delay: Duration::from_micros(1),
            ctl: Vec::new(),
            wire: [VecDeque::new(), VecDeque::new()],
            data_delay_steps: 3,
            drop_ctl_after: None,
            key_ids_on_line: BTreeSet::new(),
            line_after: Vec::new(),
        }
    }

    fn run(&mut self, until: Instant) {
        let mut now = Instant::ZERO;
        while now < until {
            // Control plane.
            for i in 0..2 {
                let mut acts = Vec::new();
                self.ends[i].agent.poll(now, &mut acts);
                let mut msgs = Vec::new();
                self.ends[i].apply(acts, &mut msgs);
                for m in msgs {
                    if self.drop_ctl_after.is_none_or(|t| now < t) {
                        self.ctl.push((now + self.ctl_delay, 1 - i, m));
                    }
                }
            }
            let due: Vec<_> = self
                .ctl
                .iter()
                .filter(|(t, _, _)| *t <= now)
                .cloned()
                .collect();
            self.ctl.retain(|(t, _, _)| *t > now);
            for (_, to, m) in due {
                let mut acts = Vec::new();
                let _ = self.ends[to].agent.handle(now, &m, &mut acts);
                let mut msgs = Vec::new();
                self.ends[to].apply(acts, &mut msgs);
                for m in msgs {
                    self.ctl.push((now + self.ctl_delay, 1 - to, m));
                }
            }
            // Data plane: one segment per direction per step. Traffic starts once the
            // transmitter has a key (before that the generator sends idles).
            for i in 0..2 {
                let e = &mut self.ends[i];
                let mut line = Vec::new();
                for _ in 0..self.k {
                    let b = if e.tx.active_key().is_some() {
                        e.plain.pop_front().unwrap_or(Block66::IDLE)
                    } else {
                        Block66::IDLE
                    };
                    let _ = e.tx.push(now, b, &mut line);
                }
                if let Ok(p) = ParamRepr::parse(&line[1]) {
                    self.key_ids_on_line.insert(p.key_id.0);
                }
                for b in &line {
                    self.line_after.push((now, *b));
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
            now = now + self.step;
        }
    }
}

#[test]
fn handshake_rekeys_under_traffic_without_losing_a_frame() {
    let (a, b) = agents(KeyAgent::public_identity(SEED_A));
    let k = 128;
    let fa = frames(11, 1000, &[64, 256, 1500, 9216]);
    let fb = frames(12, 1500, &[64, 128, 4096]);
    let mut h = Harness::new(a, b, k, [encode(&fa, 1), encode(&fb, 1)]);
    h.run(Instant(Duration::from_micros(300).as_nanos()));
    for (i, sent) in [&fa, &fb].into_iter().enumerate() {
        let e = &h.ends[1 - i];
        assert_eq!(
            e.rx.stats().failed(),
            0,
            "direction {i}: {:?}",
            e.rx.stats()
        );
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
    let (a, b) = agents(KeyAgent::public_identity(SEED_A));
    let k = 64;
    let fa = frames(21, 20_000, &[1500]);
    let mut h = Harness::new(a, b, k, [encode(&fa, 1), Vec::new()]);
    // The authentication channel dies at 30 us: the rekey at ~20 us succeeds, the one at
    // ~40 us never completes, so the key installed at ~20 us expires at ~70 us.
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
    let expired_at = 75_000;
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
    // Segments in flight when the key expired are refused (counted), never forged.
    let st = h.ends[1].rx.stats();
    assert_eq!(
        (st.auth_failed, st.replayed, st.malformed),
        (0, 0, 0),
        "{st:?}"
    );
}

#[test]
fn wrong_identity_raises_alarm_and_installs_nothing() {
    let impostor = KeyAgent::public_identity([9; 32]);
    let (mut a, mut b) = agents(impostor);
    let mut acts = Vec::new();
    a.poll(Instant(0), &mut acts);
    let offers: Vec<Vec<u8>> = acts
        .iter()
        .filter_map(|x| {
            if let Action::Send(m) = x {
                Some(m.clone())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(offers.len(), 2, "keep-alive and offer");
    for m in offers {
        let mut out = Vec::new();
        assert_eq!(
            b.handle(Instant(1_000), &m, &mut out),
            Err(KmError::BadSignature)
        );
        assert_eq!(out, vec![Action::Alarm(Alarm::PeerAuthFailed)]);
    }
    assert_eq!(b.state(), LinkState::Establishing);
}

#[test]
fn replayed_and_tampered_messages_are_rejected() {
    let (mut a, mut b) = agents(KeyAgent::public_identity(SEED_A));
    let mut acts = Vec::new();
    a.poll(Instant(0), &mut acts);
    let Some(Action::Send(offer)) = acts.last().cloned() else {
        panic!("offer expected, got {acts:?}")
    };
    let mut out = Vec::new();
    b.handle(Instant(1_000), &offer, &mut out)
        .expect("first offer");
    assert!(out
        .iter()
        .any(|x| matches!(x, Action::Install(k) if k.id == KeyId(1))));
    let mut out2 = Vec::new();
    assert_eq!(
        b.handle(Instant(2_000), &offer, &mut out2),
        Err(KmError::Replay)
    );
    assert!(out2.is_empty());
    let mut bad = offer.clone();
    bad[20] ^= 1;
    assert_eq!(
        b.handle(Instant(3_000), &bad, &mut Vec::new()),
        Err(KmError::BadSignature)
    );
    assert_eq!(
        b.handle(Instant(3_000), &offer[..100], &mut Vec::new()),
        Err(KmError::Malformed)
    );
}

#[test]
fn timers_are_validated() {
    let us = Duration::from_micros;
    assert!(KmConfig::new(us(20), us(10), us(5), us(5), us(20), us(10)).is_err());
    assert!(KmConfig::new(us(20), us(50), us(5), us(5), us(5), us(10)).is_err());
    assert!(KmConfig::new(us(20), us(50), us(30), us(5), us(20), us(10)).is_err());
}
