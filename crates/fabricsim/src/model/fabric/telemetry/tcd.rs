//! TCD, ternary congestion detection (Zhang et al., "Congestion Detection in Lossless
//! Networks", SIGCOMM 2021; the ACC paper, NSDI 2024, builds on it; SEEDS.md 004).
//!
//! In a lossless network a long egress queue does not mean the port is congested: PFC may
//! have paused the port, and the queue then only reflects that the port could not send.
//! Marking such queues with ECN, as RED does, throttles victim flows that merely share a
//! paused branch of a congestion tree. TCD gives each egress queue one of three states:
//!
//! - a PAUSE received for the queue's priority (an OFF period) makes it *Undetermined*:
//!   its length says nothing about its own load;
//! - while it is not paused and was not paused recently, q >= q_th makes it *Congested*
//!   (it is the root of a congestion tree) and q < q_th *NonCongested*;
//! - after a resume (an ON period) the queue built during the pause needs time to drain.
//!   It stays Undetermined until it drains below q_th (NonCongested), unless after
//!   T_on_max it is still at or above q_th *and* no shorter than when the ON period began
//!   (it is not draining: its arrivals match or exceed the line rate, so it is a root
//!   itself); then it is Congested. T_on_max is about (XOFF threshold + headroom) / C, the
//!   time to send what a downstream pause can hold back. The drain condition keeps a
//!   lightly loaded port that holds a large backlog from a long pause (its upstream's
//!   buffers refilled it while it was OFF) Undetermined while the backlog drains, however
//!   long that takes.
//!
//! Marking happens at dequeue: a Congested queue sets CE, an Undetermined queue sets UE,
//! and no port overwrites a CE set upstream ([`TcdMark::merge`]). The receiver echoes the
//! mark in its ACK.
//!
//! The thresholds q_th and T_on_max and the exact rules above are a reconstruction from the
//! papers' descriptions (ALGORITHMS.md \[recon\]); both are parameters.
//!
//! What the simulator provides: one [`TcdDetector`] per egress (port, priority); the PFC
//! model calls [`TcdDetector::on_pause`] / [`TcdDetector::on_resume`] (or
//! [`TcdDetector::on_pause_for`] for a timed pause that may expire without a resume
//! frame) when a pause frame for that priority arrives at the port, and the transmit path
//! calls [`TcdDetector::on_dequeue`] with the queue's bytes as a data packet leaves and
//! merges the result into the packet's mark.

use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, SEC};
use serde::Deserialize;

/// The congestion state of an egress queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TcdState {
    /// Short queue, not paused.
    #[default]
    NonCongested,
    /// Paused, or draining what a pause let build up.
    Undetermined,
    /// A long queue the port builds by itself: the root of a congestion tree.
    Congested,
}

/// The ternary mark a packet carries (and its ACK echoes). Ordered by priority:
/// `None < Ue < Ce`, so the mark of a path is the maximum over its ports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TcdMark {
    /// Passed no congested or undetermined port ("NO").
    #[default]
    None,
    /// Passed an undetermined port and no congested one.
    Ue,
    /// Passed a congested port.
    Ce,
}

impl TcdMark {
    /// The packet's mark after a port marks it with `port`: a CE is never overwritten,
    /// UE upgrades to CE, nothing downgrades.
    #[inline]
    pub fn merge(self, port: TcdMark) -> TcdMark {
        self.max(port)
    }

    /// Encoding in a packet's or ACK's mark byte: 0 none, 1 CE (as an ECN echo of 1
    /// means CE elsewhere in fabricsim), 2 UE.
    #[inline]
    pub const fn to_bits(self) -> u8 {
        match self {
            TcdMark::None => 0,
            TcdMark::Ce => 1,
            TcdMark::Ue => 2,
        }
    }

    /// Decodes [`TcdMark::to_bits`]; unknown values read as none.
    #[inline]
    pub const fn from_bits(b: u8) -> TcdMark {
        match b {
            1 => TcdMark::Ce,
            2 => TcdMark::Ue,
            _ => TcdMark::None,
        }
    }
}

/// Thresholds of one egress queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcdParams {
    /// Queue length (bytes) at or above which the queue is long. Default 100 KB per
    /// 100 Gbit/s of port rate \[recon\]: well below the seed's 512 KB XOFF threshold, so a
    /// root is seen before it pauses its upstream, and about one BDP at 8 us.
    pub q_th: u64,
    /// Longest ON period an uncongested queue may stay long after a resume. Default
    /// (XOFF threshold + headroom) / C \[recon\].
    pub t_on_max: Time,
}

impl TcdParams {
    /// Defaults for a port of rate `rate` whose upstream pauses it at `xoff_bytes` and
    /// reserves `headroom_bytes` of headroom.
    pub fn new(rate: Rate, xoff_bytes: u64, headroom_bytes: u64) -> TcdParams {
        let c = rate.0.max(1) as f64;
        TcdParams {
            q_th: (100_000.0 * c / 100e9) as u64,
            t_on_max: ((xoff_bytes + headroom_bytes) as f64 * 8.0 * SEC as f64 / c).ceil() as Time,
        }
    }

    /// Parameters from the scenario's settings (unset fields take [`TcdParams::new`]'s).
    pub fn resolve(cfg: &TcdCfg, rate: Rate, xoff_bytes: u64, headroom_bytes: u64) -> TcdParams {
        let b = TcdParams::new(rate, xoff_bytes, headroom_bytes);
        TcdParams {
            q_th: cfg.q_th.unwrap_or(b.q_th),
            t_on_max: cfg.t_on_max.unwrap_or(b.t_on_max),
        }
    }
}

/// TCD settings of a scenario (`[fabric.tcd]`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcdCfg {
    /// Run TCD at every switch egress queue: `true` or `false`; unset, TCD runs when some
    /// flow's congestion control reads its marks (ACC).
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Queue threshold (same for every port; default scales with the port rate).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub q_th: Option<u64>,
    /// Longest uncongested ON period.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub t_on_max: Option<Time>,
}

impl Described for TcdCfg {
    const ABOUT: &'static str =
        "ternary congestion detection at switch egress queues (marks for ACC)";
    fn params() -> Vec<Param> {
        let p = TcdParams::new(Rate::gbps(100), 0, 0);
        vec![
            Param::unset(
                "enabled",
                "unset: on when some flow's congestion control reads TCD marks",
            ),
            Param::bytes(
                "q_th",
                p.q_th,
                "queue threshold at 100Gbps, scaled with the port rate [recon]",
            ),
            Param::unset(
                "t_on_max",
                "unset: (XOFF threshold + headroom) / port rate [recon]",
            ),
        ]
    }
}

impl TcdCfg {
    /// Checks the settings; fields are named relative to `[fabric.tcd]`.
    pub fn validate(&self) -> Checked {
        if self.q_th == Some(0) {
            return Err(ParamError::new("q_th", "must be positive"));
        }
        crate::base::floors::opt_at_least(
            "t_on_max",
            self.t_on_max,
            crate::base::floors::TIMER,
            "the longest ON period of a congested queue",
        )?;
        Ok(())
    }
}

/// TCD state of one egress (port, priority) queue.
#[derive(Clone, Debug)]
pub struct TcdDetector {
    p: TcdParams,
    state: TcdState,
    /// End of the current OFF period: `Time::MAX` until a resume, `None` when ON.
    paused_until: Option<Time>,
    /// Start of the ON period after the last pause.
    on_since: Time,
    /// Queue at the first dequeue of the current ON period (None until then).
    q_on: Option<u64>,
    /// CE marks set.
    pub ce_marks: u64,
    /// UE marks set.
    pub ue_marks: u64,
}

impl TcdDetector {
    /// A queue that is empty and not paused.
    pub fn new(p: TcdParams) -> TcdDetector {
        TcdDetector {
            p,
            state: TcdState::NonCongested,
            paused_until: None,
            on_since: 0,
            q_on: None,
            ce_marks: 0,
            ue_marks: 0,
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &TcdParams {
        &self.p
    }

    /// The state as of the last event.
    pub fn state(&self) -> TcdState {
        self.state
    }

    /// Whether the queue is paused at `now`.
    pub fn is_paused(&self, now: Time) -> bool {
        self.paused_until.is_some_and(|u| now < u)
    }

    /// A PAUSE (XOFF) for this queue's priority arrived at `now`, in force until a resume.
    pub fn on_pause(&mut self, now: Time) {
        self.on_pause_for(now, Time::MAX);
    }

    /// A PAUSE arrived at `now` that expires at `until` unless renewed or resumed.
    pub fn on_pause_for(&mut self, _now: Time, until: Time) {
        self.paused_until = Some(until);
        self.q_on = None;
        self.state = TcdState::Undetermined;
    }

    /// A resume (XON, pause time 0) arrived at `now`: an ON period starts.
    pub fn on_resume(&mut self, now: Time) {
        if self.paused_until.take().is_some() {
            self.on_since = now;
        }
    }

    /// Applies a timed pause that ran out at or before `now`.
    fn expire(&mut self, now: Time) {
        if let Some(u) = self.paused_until {
            if u <= now {
                self.paused_until = None;
                self.on_since = u;
            }
        }
    }

    /// A data packet leaves at `now` with `qlen` bytes queued: updates the state and
    /// returns the port's mark, to [`TcdMark::merge`] into the packet's.
    pub fn on_dequeue(&mut self, now: Time, qlen: u64) -> TcdMark {
        self.expire(now);
        let long = qlen >= self.p.q_th;
        self.state = if self.paused_until.is_some() {
            TcdState::Undetermined
        } else {
            match self.state {
                TcdState::Undetermined if !long => TcdState::NonCongested,
                TcdState::Undetermined => {
                    let q_on = *self.q_on.get_or_insert(qlen);
                    if now.saturating_sub(self.on_since) > self.p.t_on_max && qlen >= q_on {
                        TcdState::Congested
                    } else {
                        TcdState::Undetermined
                    }
                }
                _ if long => TcdState::Congested,
                _ => TcdState::NonCongested,
            }
        };
        match self.state {
            TcdState::Congested => {
                self.ce_marks += 1;
                TcdMark::Ce
            }
            TcdState::Undetermined => {
                self.ue_marks += 1;
                TcdMark::Ue
            }
            TcdState::NonCongested => TcdMark::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::US;

    /// q_th 100 KB, T_on_max 50 us.
    fn det() -> TcdDetector {
        TcdDetector::new(TcdParams {
            q_th: 100_000,
            t_on_max: 50 * US,
        })
    }

    const HIGH: u64 = 300_000;
    const LOW: u64 = 10_000;

    #[test]
    fn defaults_scale_with_rate() {
        // 512 KB XOFF + 37.5 KB headroom at 100G: 549.5 KB * 8 / 100e9 = 43.96 us.
        let p = TcdParams::new(Rate::gbps(100), 512_000, 37_500);
        assert_eq!(p.q_th, 100_000);
        assert_eq!(p.t_on_max, 43_960_000);
        assert_eq!(TcdParams::new(Rate::gbps(25), 0, 0).q_th, 25_000);
        let cfg: TcdCfg = toml::from_str("q_th = \"50KB\"\nt_on_max = \"10us\"").unwrap();
        let r = TcdParams::resolve(&cfg, Rate::gbps(100), 512_000, 37_500);
        assert_eq!((r.q_th, r.t_on_max), (50_000, 10 * US));
        assert!(toml::from_str::<TcdCfg>("qth = 1").is_err());
    }

    #[test]
    fn not_paused_queue_follows_the_threshold() {
        let mut d = det();
        assert_eq!(d.on_dequeue(0, LOW), TcdMark::None);
        assert_eq!(d.state(), TcdState::NonCongested);
        assert_eq!(d.on_dequeue(US, 100_000), TcdMark::Ce, "q = q_th is long");
        assert_eq!(d.state(), TcdState::Congested);
        assert_eq!(d.on_dequeue(2 * US, HIGH), TcdMark::Ce);
        assert_eq!(d.on_dequeue(3 * US, 99_999), TcdMark::None);
        assert_eq!(d.state(), TcdState::NonCongested);
        assert_eq!((d.ce_marks, d.ue_marks), (2, 0));
    }

    #[test]
    fn paused_queue_is_undetermined_whatever_its_length() {
        let mut d = det();
        assert_eq!(d.on_dequeue(0, HIGH), TcdMark::Ce);
        d.on_pause(US);
        assert_eq!(d.state(), TcdState::Undetermined);
        assert!(d.is_paused(2 * US));
        // A packet already on its way out while paused: UE for a long or short queue.
        assert_eq!(d.on_dequeue(2 * US, HIGH), TcdMark::Ue);
        assert_eq!(d.on_dequeue(3 * US, LOW), TcdMark::Ue);
    }

    #[test]
    fn after_resume_a_draining_queue_stays_undetermined_then_clears() {
        let mut d = det();
        d.on_pause(0);
        d.on_resume(10 * US);
        assert!(!d.is_paused(10 * US));
        // Draining the pause's backlog within T_on_max: UE, not CE.
        assert_eq!(d.on_dequeue(20 * US, HIGH), TcdMark::Ue);
        assert_eq!(d.on_dequeue(59 * US, HIGH), TcdMark::Ue);
        // Drained below q_th: non-congested, and from then on the plain threshold rule.
        assert_eq!(d.on_dequeue(60 * US, LOW), TcdMark::None);
        assert_eq!(d.state(), TcdState::NonCongested);
        assert_eq!(d.on_dequeue(70 * US, HIGH), TcdMark::Ce);
    }

    #[test]
    fn undetermined_queue_long_beyond_t_on_max_becomes_congested() {
        let mut d = det();
        d.on_pause(0);
        d.on_resume(10 * US);
        assert_eq!(d.on_dequeue(40 * US, HIGH), TcdMark::Ue);
        assert_eq!(
            d.on_dequeue(60 * US, HIGH),
            TcdMark::Ue,
            "exactly T_on_max: not yet"
        );
        assert_eq!(d.on_dequeue(61 * US, HIGH), TcdMark::Ce);
        assert_eq!(d.state(), TcdState::Congested);
        // A new pause makes it undetermined again, and the ON clock restarts.
        d.on_pause(70 * US);
        assert_eq!(d.on_dequeue(71 * US, HIGH), TcdMark::Ue);
        d.on_resume(80 * US);
        assert_eq!(d.on_dequeue(120 * US, HIGH), TcdMark::Ue);
        assert_eq!(d.on_dequeue(131 * US, HIGH), TcdMark::Ce);
    }

    #[test]
    fn a_draining_backlog_stays_undetermined_past_t_on_max() {
        let mut d = det();
        d.on_pause(0);
        d.on_resume(10 * US);
        // 500 KB at the start of ON, draining slowly (a lightly loaded port with a big
        // backlog): still UE long after T_on_max.
        assert_eq!(d.on_dequeue(11 * US, 500_000), TcdMark::Ue);
        assert_eq!(d.on_dequeue(70 * US, 400_000), TcdMark::Ue);
        assert_eq!(d.on_dequeue(100 * US, 200_000), TcdMark::Ue);
        // It stops draining (back at 500 KB, arrivals at line rate): congested.
        assert_eq!(d.on_dequeue(110 * US, 500_000), TcdMark::Ce);
        assert_eq!(d.state(), TcdState::Congested);
    }

    #[test]
    fn timed_pause_expires_without_a_resume() {
        let mut d = det();
        d.on_pause_for(0, 20 * US);
        assert_eq!(d.on_dequeue(10 * US, HIGH), TcdMark::Ue);
        // ON since 20 us (the expiry), so T_on_max runs out after 70 us.
        assert_eq!(d.on_dequeue(70 * US, HIGH), TcdMark::Ue);
        assert_eq!(d.on_dequeue(71 * US, HIGH), TcdMark::Ce);
        // A refreshed pause replaces the expiry.
        d.on_pause_for(80 * US, 90 * US);
        d.on_pause_for(85 * US, 200 * US);
        assert!(d.is_paused(150 * US));
        assert_eq!(d.on_dequeue(150 * US, LOW), TcdMark::Ue);
    }

    #[test]
    fn marks_merge_without_overwriting_ce() {
        use TcdMark::*;
        assert_eq!(Ce.merge(Ue), Ce);
        assert_eq!(Ce.merge(None), Ce);
        assert_eq!(Ue.merge(Ce), Ce);
        assert_eq!(Ue.merge(None), Ue);
        assert_eq!(None.merge(Ue), Ue);
        for m in [None, Ue, Ce] {
            assert_eq!(TcdMark::from_bits(m.to_bits()), m);
        }
        assert_eq!(TcdMark::from_bits(1), Ce);
        // A path: victim branch port (UE) then the root (CE) then an idle port.
        let mut root = det();
        let mut branch = det();
        let mut idle = det();
        branch.on_pause(0);
        let m = TcdMark::None
            .merge(branch.on_dequeue(US, HIGH))
            .merge(root.on_dequeue(2 * US, HIGH))
            .merge(idle.on_dequeue(3 * US, LOW));
        assert_eq!(m, Ce);
    }
}
