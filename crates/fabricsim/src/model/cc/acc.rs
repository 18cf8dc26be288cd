//! ACC, ACK-driven congestion control for lossless Ethernet (Zhang et al., "Revisiting
//! Congestion Control for Lossless Ethernet", NSDI 2024; digest in SEEDS.md 004).
//!
//! A lossless network conserves packets: everything sent is eventually acknowledged, and
//! what is not yet acknowledged is either on the wire or queued in some switch. So the
//! ACK series alone tells a congested sender the bottleneck's rate (the ACK arrival rate)
//! and how many of its bytes sit in queues (bytes in flight minus what the pipe holds).
//! Switches mark packets with TCD ([`crate::model::fabric::telemetry::tcd`]): CE for a congested port, UE for
//! a port that is only paused; the receiver echoes the mark in the ACK.
//!
//! Once per period T (default the base RTT; 50 us on the paper's testbed) the sender
//! classifies the period's ACKs with priority CE > UE > NO:
//!
//! - *Congested*: at least 90% of the ACKs carry CE. R_ack = bytes acked in the period / T;
//!   pipe = R_ack x base RTT; excess = max(0, inflight - pipe). The source halts for
//!   excess / R_ack, long enough for the bottleneck to drain the excess but not to idle,
//!   then sends at R_ack (the paper's "source halt" and "rate matching").
//!
//! The halt is bounded three ways, because an R_ack measured in a bad period (a burst of
//! PFC pauses) can be tiny and make excess / R_ack huge, and a flow halted with nothing in
//! flight gets no ACK to tell it otherwise:
//! - the ACK stream ends it: the network conserves packets, so once the bytes in flight
//!   fit the pipe (the cumulative ACK passed the halt point minus the pipe) the excess has
//!   drained and staying silent would idle the bottleneck; the NIC resumes the flow at once;
//! - it never lasts more than [`AccParams::max_halt`] (4 base RTTs \[recon\]);
//! - a later congested period refines it (new pipe, new end; the cap counts from its start).
//!
//! The digest says "record the ACK arrival rate; after the halt send at that rate". Which
//! ACKs is not said: after a halt of at least a period the flow sends at the rate its ACKs
//! arrived during the halt, the freshest measure of what the bottleneck gives it; after a
//! shorter one, at R_ack of the period before \[recon\]. R_ack spans the whole stretch since
//! the previous period's end when the flow had bytes in flight but got no ACK for more than
//! a period: the bottleneck gave it nothing then, and a period measured only from the next
//! ACK would overstate its rate \[recon\].
//! - *Victim*: UE seen and no CE. The rate holds; when UE persists for more than Pthresh
//!   consecutive periods the congestion tree is not going away quickly and the rate halves
//!   (then the count starts again).
//! - *Uncongested*: neither. The rate increases; the step is R_AI for the first S
//!   consecutive uncongested periods and s x R_AI after, both scaled by
//!   1 + w (1 - R/C) so that slow flows grow faster (the paper: "smaller rates increase
//!   more; start gradually, then more aggressively"), capped at line rate.
//! - Some CE, but under 90%: hold the rate (neither a stable congestion nor a victim), and
//!   both streaks restart \[recon\].
//!
//! "ACC without halt" ([`AccParams::halt`] = false), which the paper uses to show that the
//! halt matters, skips the halt and only matches the rate.
//!
//! Periods are laid on a grid that starts at the first ACK. A period closes at the first
//! ACK at or after its end (ACK-driven: a flow without ACKs has nothing to decide); if a
//! whole period passed without ACKs the grid restarts at the next ACK, and periods without
//! ACKs make no decision and do not break a streak. The first CE-marked ACK after a period
//! without CE restarts the period at that ACK, discarding the partial period
//! ([`AccParams::onset_restart`], \[recon\]): the decision on a new congestion then comes
//! one full period after its onset, on a period that saw only the congestion, which is
//! how the paper's testbed reaches the right rate "within one period".
//!
//! What the simulator provides: ACKs at a higher priority than data, each carrying the
//! echoed [`TcdMark`]; on each ACK the sender calls [`Acc::on_ack_marked`] with the bytes
//! it newly acknowledges and the bytes still in flight after it; the NIC paces at
//! [`Acc::rate`] and sends nothing before [`Acc::halted_until`].

use super::{AckInfo, AnyCc, BaseRtt, CcEntry, CongestionControl, FlowContext};
use crate::base::param::{Checked, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, SEC};
use crate::model::fabric::telemetry::tcd::TcdMark;
use serde::Deserialize;

/// Resolved ACC parameters.
///
/// Provenance of the defaults ([`AccParams::new`]): the period (base RTT), the 90% CE
/// threshold, the classification by CE > UE > NO, the halt of excess / R_ack and the
/// halving of victims are the paper's (SEEDS.md 004, \[seed\]); Pthresh 3 and S 5 are
/// ALGORITHMS.md's defaults; R_AI = C/100, s = 4, the rate weight w = 1, the floor
/// C/1000 and the halt cap of 4 base RTTs are reconstructed \[recon\].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccParams {
    /// Decision period T. Default the base RTT \[seed\].
    pub period: Time,
    /// Base RTT for the pipe capacity R_ack x base RTT.
    pub base_rtt: Time,
    /// Fraction of CE-marked ACKs that makes a period congested. Default 0.9 \[seed\].
    pub ce_threshold: f64,
    /// Victim periods tolerated before halving: the rate halves when the streak of UE
    /// periods exceeds this. Default 3 \[ALGORITHMS.md\].
    pub p_thresh: u32,
    /// Additive increase step R_AI, bit/s. Default C/100 \[recon\].
    pub r_ai: f64,
    /// Uncongested periods S with the gentle step. Default 5 \[ALGORITHMS.md\].
    pub fast_after: u32,
    /// Multiplier s of the step after S uncongested periods. Default 4 \[recon\].
    pub fast_factor: f64,
    /// Weight w of the rate-dependent step factor 1 + w (1 - R/C). Default 1 \[recon\];
    /// 0 gives plain additive steps.
    pub rate_weight: f64,
    /// Lowest rate, bit/s. Default C/1000 \[recon\].
    pub min_rate: f64,
    /// Source halt on congestion (false: "ACC without halt").
    pub halt: bool,
    /// Longest source halt. Default 4 base RTTs \[recon\]: the paper halts "until the
    /// queued excess drains" and ends the halt from the ACK stream; the cap bounds a halt
    /// whose R_ack was measured low (a burst of PFC pauses) so that a congested flow is
    /// never idle for more than a few RTTs.
    pub max_halt: Time,
    /// Restart the period at the first CE-marked ACK after a period without CE, so that
    /// the first decision on a new congestion comes one full period after its onset.
    /// Default true \[recon\]: with a fixed grid the onset falls inside a period whose
    /// CE fraction stays under the threshold, and the decision slips by up to a period,
    /// against the paper's "the right rate within one period".
    pub onset_restart: bool,
}

impl AccParams {
    /// Defaults for a NIC of rate `line` on a fabric with base RTT `base_rtt`.
    pub fn new(line: Rate, base_rtt: Time) -> AccParams {
        let c = line.0 as f64;
        AccParams {
            period: base_rtt,
            base_rtt,
            ce_threshold: 0.9,
            p_thresh: 3,
            r_ai: c / 100.0,
            fast_after: 5,
            fast_factor: 4.0,
            rate_weight: 1.0,
            min_rate: c / 1000.0,
            halt: true,
            max_halt: 4 * base_rtt,
            onset_restart: true,
        }
    }

    /// Parameters from the scenario's settings (unset fields take [`AccParams::new`]'s;
    /// the period defaults to the base RTT in use).
    pub fn resolve(cfg: &AccCfg, line: Rate, base_rtt: Time) -> AccParams {
        let rtt = cfg.base_rtt.unwrap_or(base_rtt);
        let b = AccParams::new(line, rtt);
        AccParams {
            period: cfg.period.unwrap_or(rtt),
            base_rtt: rtt,
            ce_threshold: cfg.ce_threshold.unwrap_or(b.ce_threshold),
            p_thresh: cfg.p_thresh.unwrap_or(b.p_thresh),
            r_ai: cfg.r_ai.map(|r| r.0 as f64).unwrap_or(b.r_ai),
            fast_after: cfg.fast_after.unwrap_or(b.fast_after),
            fast_factor: cfg.fast_factor.unwrap_or(b.fast_factor),
            rate_weight: cfg.rate_weight.unwrap_or(b.rate_weight),
            // A floor above the line rate would be meaningless: the line rate caps it.
            min_rate: cfg
                .min_rate
                .map(|r| r.0 as f64)
                .unwrap_or(b.min_rate)
                .min(line.0 as f64),
            halt: cfg.halt.unwrap_or(b.halt),
            max_halt: cfg.max_halt.unwrap_or(b.max_halt),
            onset_restart: cfg.onset_restart.unwrap_or(b.onset_restart),
        }
    }
}

/// ACC settings of a scenario (`[cc.acc]`); unset fields take [`AccParams::resolve`]'s
/// defaults.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AccCfg {
    /// Decision period T (default: the base RTT).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub period: Option<Time>,
    /// Base RTT for the pipe estimate (default: the fabric's, as the integrator computes
    /// it).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub base_rtt: Option<Time>,
    /// CE fraction of a congested period.
    #[serde(default)]
    pub ce_threshold: Option<f64>,
    /// Victim periods before halving (Pthresh).
    #[serde(default)]
    pub p_thresh: Option<u32>,
    /// Additive increase step.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub r_ai: Option<Rate>,
    /// Gentle-increase periods (S).
    #[serde(default)]
    pub fast_after: Option<u32>,
    /// Step multiplier after S periods (s).
    #[serde(default)]
    pub fast_factor: Option<f64>,
    /// Weight of the rate-dependent step factor.
    #[serde(default)]
    pub rate_weight: Option<f64>,
    /// Lowest rate.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub min_rate: Option<Rate>,
    /// Source halt (false: ACC without halt).
    #[serde(default)]
    pub halt: Option<bool>,
    /// Longest source halt (default: 4 base RTTs).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub max_halt: Option<Time>,
    /// Restart the period at the onset of congestion (the first CE after a CE-free
    /// period).
    #[serde(default)]
    pub onset_restart: Option<bool>,
}

/// `acc`.
pub static ENTRY: CcEntry = CcEntry {
    name: "acc",
    about: "ACC (NSDI 2024, document 004): ACK-driven, TCD marks, source halt, rate matching",
    section: Some("acc"),
    reads_cnp: false,
    reads_int: false,
    reads_tcd: true,
    base_rtt: BaseRtt::PerFlow,
    params: |cc, ctx| params(&resolve(&cc.acc, ctx, true)),
    build: |cc, ctx| AnyCc::Acc(Acc::new(resolve(&cc.acc, ctx, true), ctx.line)),
    validate: |cc| cc.acc.validate(),
    #[cfg(test)]
    check_fields,
};

/// `acc_no_halt`: ACC that only matches the rate (the paper's ablation).
pub static NO_HALT_ENTRY: CcEntry = CcEntry {
    name: "acc_no_halt",
    about: "ACC without the source halt (rate matching only); reads [cc.acc]",
    params: |cc, ctx| params(&resolve(&cc.acc, ctx, false)),
    build: |cc, ctx| AnyCc::Acc(Acc::new(resolve(&cc.acc, ctx, false), ctx.line)),
    ..ENTRY
};

/// The parameters of a flow in `ctx`; `halt` false forces the halt off.
fn resolve(cfg: &AccCfg, ctx: &FlowContext, halt: bool) -> AccParams {
    let mut p = AccParams::resolve(cfg, ctx.line, ctx.base_rtt);
    p.halt &= halt;
    p
}

#[cfg(test)]
fn check_fields() {
    let p = AccParams::new(Rate::gbps(100), 10 * crate::base::units::US);
    crate::base::param::assert_lists_fields::<AccCfg>(&params(&p));
}

/// The rows of `fabricsim list` for resolved parameters `p`.
fn params(p: &AccParams) -> Vec<Param> {
    vec![
        Param::time(
            "period",
            p.period,
            "decision period T (at least 1ns); unset: the base RTT [seed]",
        ),
        Param::time(
            "base_rtt",
            p.base_rtt,
            "for the pipe R_ack x base RTT; unset: the flow's",
        ),
        Param::plain(
            "ce_threshold",
            p.ce_threshold,
            "CE fraction of a congested period [seed]",
        ),
        Param::plain(
            "p_thresh",
            p.p_thresh,
            "victim periods before halving [ALGORITHMS.md]",
        ),
        Param::rate("r_ai", p.r_ai, "additive step, C/100 [recon]"),
        Param::plain(
            "fast_after",
            p.fast_after,
            "gentle-increase periods S [ALGORITHMS.md]",
        ),
        Param::plain(
            "fast_factor",
            p.fast_factor,
            "step multiplier after S [recon]",
        ),
        Param::plain(
            "rate_weight",
            p.rate_weight,
            "w in the step factor 1 + w (1 - R/C) [recon]",
        ),
        Param::rate("min_rate", p.min_rate, "lowest rate, C/1000 [recon]"),
        Param::plain("halt", p.halt, "source halt (acc_no_halt: false)"),
        Param::time(
            "max_halt",
            p.max_halt,
            "longest source halt, 4 base RTTs [recon]",
        ),
        Param::plain(
            "onset_restart",
            p.onset_restart,
            "restart the period at the onset of congestion [recon]",
        ),
    ]
}

impl AccCfg {
    /// Checks the settings; fields are named relative to `[cc.acc]`.
    pub fn validate(&self) -> Checked {
        let e = |field: &str, m: &str| Err(ParamError::new(field, m));
        for (field, t, why) in [
            (
                "period",
                self.period,
                "the decision period: no round trip is shorter",
            ),
            ("base_rtt", self.base_rtt, "no round trip is shorter"),
            (
                "max_halt",
                self.max_halt,
                "a positive duration; to disable the halt use acc_no_halt or halt = false",
            ),
        ] {
            crate::base::floors::opt_at_least(field, t, crate::base::floors::TIMER, why)?;
        }
        if super::not_unit_fraction(self.ce_threshold) {
            return e("ce_threshold", "a fraction of ACKs in (0, 1]");
        }
        if self
            .fast_factor
            .is_some_and(|f| !(f >= 1.0 && f.is_finite()))
        {
            return e("fast_factor", "a step multiplier of at least 1");
        }
        if self
            .rate_weight
            .is_some_and(|w| !(w >= 0.0 && w.is_finite()))
        {
            return e(
                "rate_weight",
                "a non-negative weight (0: plain additive steps)",
            );
        }
        for (field, r) in [("r_ai", self.r_ai), ("min_rate", self.min_rate)] {
            if r == Some(Rate(0)) {
                return e(field, "must be positive");
            }
        }
        Ok(())
    }
}

/// How ACC classified a period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccVerdict {
    /// No CE, no UE: increase.
    Uncongested,
    /// UE and no CE: hold, halve after Pthresh.
    Victim,
    /// CE on at least the threshold fraction: halt and match the ACK rate.
    Congested,
    /// Some CE below the threshold: hold.
    Mixed,
}

/// ACC sender state of one flow.
#[derive(Clone, Debug)]
pub struct Acc {
    p: AccParams,
    line: f64,
    /// Sending rate after any halt, bit/s.
    pub rate: f64,
    halted_until: Option<Time>,
    /// The running halt: when it began, the pipe (R_ack x base RTT, bytes) whose
    /// crossing by the bytes in flight ends it, and the bytes acked since it began.
    halting: Option<Halt>,
    period_start: Option<Time>,
    /// Start of the span over which the open period's R_ack is measured: the period's
    /// start, or earlier when the period follows a stretch without ACKs in which the flow
    /// had bytes in flight (the bottleneck gave it nothing then).
    measured_from: Time,
    acked: u64,
    acks: u32,
    ce: u32,
    ue: u32,
    inflight: u64,
    ue_streak: u32,
    calm_streak: u32,
    /// The last period's verdict.
    pub last_verdict: Option<AccVerdict>,
    /// Periods decided.
    pub periods: u64,
    /// Source halts entered.
    pub halts: u64,
    /// Total halt time, picoseconds.
    pub halt_time: Time,
    /// Victim halvings.
    pub halvings: u64,
    /// Periods restarted at a congestion onset.
    pub onset_restarts: u64,
}

impl Acc {
    /// A flow starting at line rate.
    pub fn new(p: AccParams, line: Rate) -> Acc {
        let c = line.0 as f64;
        Acc {
            p,
            line: c,
            rate: c,
            halted_until: None,
            halting: None,
            period_start: None,
            measured_from: 0,
            acked: 0,
            acks: 0,
            ce: 0,
            ue: 0,
            inflight: 0,
            ue_streak: 0,
            calm_streak: 0,
            last_verdict: None,
            periods: 0,
            halts: 0,
            halt_time: 0,
            halvings: 0,
            onset_restarts: 0,
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &AccParams {
        &self.p
    }

    /// End of the latest source halt (it may lie in the past): the NIC sends nothing of
    /// this flow before it. `None` if the flow never halted or the last congested period
    /// found no excess.
    pub fn halted_until(&self) -> Option<Time> {
        self.halted_until
    }

    /// Whether the flow is halted at `now`.
    pub fn is_halted(&self, now: Time) -> bool {
        self.halted_until.is_some_and(|t| now < t)
    }

    /// An ACK arrived at `now` acknowledging `newly_acked_bytes` with the echoed TCD
    /// `mark`; `inflight_bytes` are still unacknowledged after it.
    pub fn on_ack_marked(
        &mut self,
        now: Time,
        newly_acked_bytes: u64,
        mark: TcdMark,
        inflight_bytes: u64,
    ) {
        let had_inflight = self.inflight > 0;
        self.inflight = inflight_bytes;
        if let Some(h) = self.halting.as_mut() {
            let end = self.halted_until.unwrap_or(now);
            if now >= end {
                // The planned end passed before this ACK: its bytes belong after the halt.
                self.take_halt_rate(end);
            } else {
                h.acked += newly_acked_bytes;
                let pipe = h.pipe;
                if inflight_bytes <= pipe {
                    // The network conserves packets: once what is in flight fits the pipe,
                    // the queued excess has drained and the bottleneck would idle if the
                    // source stayed silent.
                    self.end_halt(now);
                }
            }
        }
        let t = self.p.period.max(1);
        match self.period_start {
            None => {
                self.period_start = Some(now);
                self.measured_from = now;
            }
            Some(s) if now >= s + t => {
                self.decide(now);
                if now < s + 2 * t {
                    self.period_start = Some(s + t);
                    self.measured_from = s + t;
                } else {
                    // A whole period without ACKs: the grid restarts here. If bytes were
                    // in flight all along, the stretch is part of the next rate estimate.
                    self.period_start = Some(now);
                    self.measured_from = if had_inflight { s + t } else { now };
                }
            }
            Some(_)
                if self.p.onset_restart
                    && mark == TcdMark::Ce
                    && self.ce == 0
                    && !matches!(
                        self.last_verdict,
                        Some(AccVerdict::Congested | AccVerdict::Mixed)
                    ) =>
            {
                // Onset of congestion: the partial period decides nothing and the next
                // decision comes one full period from here.
                self.acks = 0;
                self.ue = 0;
                self.acked = 0;
                self.period_start = Some(now);
                self.measured_from = now;
                self.onset_restarts += 1;
            }
            Some(_) => {}
        }
        self.acked += newly_acked_bytes;
        self.acks += 1;
        match mark {
            TcdMark::Ce => self.ce += 1,
            TcdMark::Ue => self.ue += 1,
            TcdMark::None => {}
        }
    }

    /// Ends the running halt at `now` (before its planned end).
    fn end_halt(&mut self, now: Time) {
        if let Some(t) = self.halted_until.filter(|&t| t > now) {
            self.halt_time -= t - now;
            self.halted_until = Some(now);
        }
        self.take_halt_rate(now);
    }

    /// The halt that began at `h.start` ended at `end`: the flow resumes at the rate its
    /// ACKs arrived during the halt ("record the ACK arrival rate; after the halt send at
    /// that rate", SEEDS.md 004). A halt without ACKs, or shorter than the period T,
    /// keeps the rate set when it began (R_ack over the period before it): like R_ack, the
    /// estimate spans at least a period, because a few ACKs in a short halt say little about
    /// the bottleneck's rate (they come in bursts) \[recon\].
    fn take_halt_rate(&mut self, end: Time) {
        let Some(h) = self.halting.take() else { return };
        let span = end.saturating_sub(h.start);
        if span >= self.p.period.max(1) && h.acked > 0 {
            let r = h.acked as f64 * 8.0 * SEC as f64 / span as f64;
            self.rate = r.clamp(self.p.min_rate, self.line);
        }
    }

    /// Closes the current period at `now`.
    fn decide(&mut self, now: Time) {
        let (acks, ce, ue, acked) = (self.acks, self.ce, self.ue, self.acked);
        // The span closes at the end of the period on the grid (the ACK that closes it
        // may come later and belongs to the next period).
        let t = self.p.period.max(1);
        let end = self.period_start.map_or(now, |s| (s + t).min(now));
        let span = end.saturating_sub(self.measured_from).max(t);
        self.acks = 0;
        self.ce = 0;
        self.ue = 0;
        self.acked = 0;
        if acks == 0 {
            return;
        }
        self.periods += 1;
        let verdict = if ce as f64 >= self.p.ce_threshold * acks as f64 {
            AccVerdict::Congested
        } else if ce > 0 {
            AccVerdict::Mixed
        } else if ue > 0 {
            AccVerdict::Victim
        } else {
            AccVerdict::Uncongested
        };
        self.last_verdict = Some(verdict);
        match verdict {
            AccVerdict::Congested => {
                self.ue_streak = 0;
                self.calm_streak = 0;
                self.congested(now, acked, span);
            }
            AccVerdict::Mixed => {
                self.ue_streak = 0;
                self.calm_streak = 0;
            }
            AccVerdict::Victim => {
                self.calm_streak = 0;
                self.ue_streak += 1;
                if self.ue_streak > self.p.p_thresh {
                    self.rate = (self.rate / 2.0).max(self.p.min_rate);
                    self.halvings += 1;
                    self.ue_streak = 0;
                }
            }
            AccVerdict::Uncongested => {
                self.ue_streak = 0;
                self.calm_streak += 1;
                let mut step =
                    self.p.r_ai * (1.0 + self.p.rate_weight * (1.0 - self.rate / self.line));
                if self.calm_streak > self.p.fast_after {
                    step *= self.p.fast_factor;
                }
                self.rate = (self.rate + step).min(self.line);
            }
        }
    }

    /// A congested period acked `acked` bytes over `span`: match the ACK rate and halt
    /// for the queued excess.
    fn congested(&mut self, now: Time, acked: u64, span: Time) {
        let sec = SEC as f64;
        let r_ack = acked as f64 * 8.0 * sec / span.max(1) as f64;
        self.rate = r_ack.clamp(self.p.min_rate, self.line);
        if !self.p.halt || r_ack <= 0.0 {
            return;
        }
        let pipe = r_ack * self.p.base_rtt as f64 / sec / 8.0;
        let excess = self.inflight as f64 - pipe;
        if excess <= 0.0 {
            // The excess is already gone: a halt still running from an earlier estimate
            // ends now.
            if self.halting.is_some() {
                self.end_halt(now);
            }
            return;
        }
        let want = (excess * 8.0 * sec / r_ack).round() as Time;
        if let Some(h) = self.halting.as_mut() {
            // A newer estimate of the same backlog refines the running halt; the cap
            // counts from its start.
            h.pipe = pipe as u64;
            let end = (now + want).min(h.start + self.p.max_halt).max(now);
            let old = self.halted_until.unwrap_or(now);
            if end >= old {
                self.halt_time += end - old;
            } else {
                self.halt_time -= old - end;
            }
            self.halted_until = Some(end);
            return;
        }
        let halt = want.min(self.p.max_halt);
        self.halts += 1;
        self.halting = Some(Halt {
            start: now,
            pipe: pipe as u64,
            acked: 0,
        });
        self.halted_until = Some(now + halt);
        self.halt_time += halt;
    }
}

/// A running source halt.
#[derive(Clone, Copy, Debug)]
struct Halt {
    /// When it began.
    start: Time,
    /// R_ack x base RTT at the latest estimate, bytes: the halt ends once the bytes in
    /// flight fit it.
    pipe: u64,
    /// Bytes acknowledged since it began.
    acked: u64,
}

impl CongestionControl for Acc {
    fn rate_bps(&self) -> f64 {
        self.rate
    }
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        self.on_ack_marked(now, ack.newly_acked_wire, ack.mark, ack.inflight_wire);
    }
    fn wants_tcd(&self) -> bool {
        true
    }
    fn hold_until(&self) -> Option<Time> {
        self.halted_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::{NS, US};

    const C: u64 = 100_000_000_000;
    const G: f64 = 1e9;
    const T: Time = 10 * US;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn params() -> AccParams {
        AccParams::new(Rate(C), T)
    }

    /// Parameters whose halt cap never binds, to check the halt's own length.
    fn uncapped() -> AccParams {
        AccParams {
            max_halt: 1000 * US,
            ..params()
        }
    }

    /// Feeds one period [start, start + T) of `n` evenly spaced ACKs of `bytes` each with
    /// `mark`; `inflight` reported on each.
    fn period(a: &mut Acc, start: Time, n: u64, bytes: u64, mark: TcdMark, inflight: u64) {
        for i in 0..n {
            a.on_ack_marked(start + i * (T / n), bytes, mark, inflight);
        }
    }

    #[test]
    fn defaults() {
        let p = params();
        assert_eq!(
            (p.period, p.base_rtt, p.p_thresh, p.fast_after),
            (T, T, 3, 5)
        );
        assert!(close(p.r_ai, 1.0 * G) && close(p.ce_threshold, 0.9) && p.halt);
        assert_eq!(p.max_halt, 4 * T);
        assert_eq!(AccParams::resolve(&AccCfg::default(), Rate(C), T), p);
        let cfg: AccCfg = toml::from_str("halt = false\nperiod = \"50us\"").unwrap();
        let r = AccParams::resolve(&cfg, Rate(C), T);
        assert!(!r.halt);
        assert_eq!((r.period, r.base_rtt), (50 * US, T));
        assert!(toml::from_str::<AccCfg>("hlt = false").is_err());
    }

    #[test]
    fn congested_flow_halts_for_excess_then_sends_at_ack_rate() {
        let mut a = Acc::new(uncapped(), Rate(C));
        // The flow sent at 100G into a bottleneck that gives it 25G: ACKs of 1250 B every
        // 400 ns (25 per 10 us period), all CE, 200 KB in flight.
        period(&mut a, 0, 25, 1250, TcdMark::Ce, 200_000);
        assert_eq!(a.periods, 0, "the period closes at the next ACK");
        assert!(close(a.rate, 100.0 * G));
        a.on_ack_marked(T, 1250, TcdMark::Ce, 200_000);
        // R_ack = 31_250 B * 8 / 10 us = 25 Gbit/s; pipe = 25G * 10 us / 8 = 31_250 B;
        // excess = 200_000 - 31_250 = 168_750 B; halt = 168_750 * 8 / 25G = 54 us.
        assert_eq!(a.last_verdict, Some(AccVerdict::Congested));
        assert!(close(a.rate, 25.0 * G), "{}", a.rate);
        assert_eq!(a.halted_until(), Some(T + 54 * US));
        assert!(a.is_halted(T + 54 * US - 1));
        assert!(!a.is_halted(T + 54 * US));
        assert_eq!((a.halts, a.halt_time), (1, 54 * US));
        // While halted the ACKs keep coming (the backlog drains at 25G) and inflight falls
        // by what they ack: the next estimate finds the same end of the halt.
        let mut inflight = 200_000;
        for i in 1..25u64 {
            inflight -= 1250;
            a.on_ack_marked(T + i * 400 * NS, 1250, TcdMark::Ce, inflight);
        }
        inflight -= 1250;
        a.on_ack_marked(2 * T, 1250, TcdMark::Ce, inflight);
        // inflight = 200_000 - 25 * 1250 = 168_750; R_ack again 25G; excess = 137_500 B,
        // 44 us at 25G: from 20 us the halt still ends at 64 us.
        assert_eq!(a.halted_until(), Some(T + 54 * US));
        assert!(close(a.rate, 25.0 * G));
        assert_eq!(a.halts, 1, "a refined estimate is the same halt");
        assert_eq!(a.halt_time, 54 * US);
    }

    #[test]
    fn without_halt_it_never_halts() {
        let p = AccParams {
            halt: false,
            ..params()
        };
        let mut a = Acc::new(p, Rate(C));
        for k in 0..5 {
            period(&mut a, k * T, 25, 1250, TcdMark::Ce, 200_000);
        }
        a.on_ack_marked(5 * T, 1250, TcdMark::Ce, 200_000);
        assert_eq!(a.periods, 5);
        assert_eq!(a.halted_until(), None);
        assert!(!a.is_halted(5 * T));
        assert_eq!(a.halts, 0);
        // It still matches the ACK rate.
        assert!(close(a.rate, 25.0 * G));
    }

    #[test]
    fn no_halt_when_inflight_fits_the_pipe() {
        let mut a = Acc::new(params(), Rate(C));
        period(&mut a, 0, 25, 1250, TcdMark::Ce, 20_000);
        a.on_ack_marked(T, 1250, TcdMark::Ce, 20_000);
        assert_eq!(a.last_verdict, Some(AccVerdict::Congested));
        assert_eq!(a.halted_until(), None);
        assert!(close(a.rate, 25.0 * G));
    }

    #[test]
    fn halt_ends_early_when_the_excess_is_gone() {
        let mut a = Acc::new(uncapped(), Rate(C));
        period(&mut a, 0, 25, 1250, TcdMark::Ce, 200_000);
        a.on_ack_marked(T, 1250, TcdMark::Ce, 200_000);
        assert_eq!(a.halted_until(), Some(T + 54 * US));
        // The next period still looks congested but the flow's bytes in flight already fit
        // the pipe (the bottleneck drained faster): the first ACK that shows it ends the
        // halt. The halt lasted less than a period: the rate stays R_ack of the period
        // before it (1250 B in these 400 ns would claim 25 Gbit/s as well, by chance).
        period(&mut a, T + 400 * NS, 24, 1250, TcdMark::Ce, 20_000);
        assert_eq!(a.halted_until(), Some(T + 400 * NS));
        assert!(!a.is_halted(T + 400 * NS));
        assert_eq!((a.halts, a.halt_time), (1, 400 * NS));
        assert!(close(a.rate, 25.0 * G), "{}", a.rate);
        a.on_ack_marked(2 * T, 1250, TcdMark::Ce, 20_000);
        assert_eq!(
            a.halted_until(),
            Some(T + 400 * NS),
            "no excess: no new halt"
        );
        assert_eq!(a.halts, 1);
    }

    #[test]
    fn the_ack_stream_ends_a_refined_halt_and_sets_the_rate() {
        let mut a = Acc::new(uncapped(), Rate(C));
        period(&mut a, 0, 25, 1250, TcdMark::Ce, 200_000);
        a.on_ack_marked(T, 1250, TcdMark::Ce, 200_000);
        // Halted until 64 us (see above). The bottleneck then drains the flow's backlog
        // faster: ACKs of 16_875 B every 2 us.
        let mut inflight = 200_000;
        for k in 1..=5u64 {
            inflight -= 16_875;
            a.on_ack_marked(T + 2 * k * US, 16_875, TcdMark::Ce, inflight);
        }
        // The period [10 us, 20 us) closed at 20 us: 1250 + 4 x 16_875 = 68_750 B, R_ack
        // 55 Gbit/s, pipe 68_750 B, inflight 115_625 B: 46_875 B of excess, 6.82 us: the
        // refined halt ends at 26.82 us.
        assert_eq!(a.periods, 2);
        assert_eq!(a.halted_until(), Some(20 * US + 6_818_182));
        for k in 6..=8u64 {
            inflight -= 16_875;
            a.on_ack_marked(T + 2 * k * US, 16_875, TcdMark::Ce, inflight);
        }
        // At 26 us inflight is 65_000 B <= the pipe: the halt ends there, before its
        // planned end, and the rate is what the ACKs of the halt delivered: 8 x 16_875 B
        // in 16 us = 67.5 Gbit/s.
        assert_eq!(a.halted_until(), Some(26 * US));
        assert_eq!((a.halts, a.halt_time), (1, 16 * US));
        assert!(close(a.rate, 67.5 * G), "{}", a.rate);
    }

    #[test]
    fn a_halt_is_capped_and_one_without_acks_keeps_its_rate() {
        let mut a = Acc::new(params(), Rate(C));
        period(&mut a, 0, 25, 1250, TcdMark::Ce, 200_000);
        a.on_ack_marked(T, 1250, TcdMark::Ce, 200_000);
        // The excess would take 54 us; the cap is 4 base RTTs.
        assert_eq!(a.halted_until(), Some(T + 40 * US));
        assert_eq!((a.halts, a.halt_time), (1, 40 * US));
        assert!(close(a.rate, 25.0 * G));
        // No ACK during the halt (the network paused the flow's packets); the next comes
        // at 60 us. The halt ended at 50 us without ACKs: the rate it set stays. That
        // ACK closes the period [10 us, 20 us), which saw one ACK: R_ack 1 Gbit/s, a new
        // halt, capped too.
        a.on_ack_marked(60 * US, 1250, TcdMark::Ce, 198_750);
        assert_eq!(a.halts, 2);
        assert_eq!(a.halted_until(), Some(100 * US));
        assert_eq!(a.halt_time, 80 * US);
        assert!(close(a.rate, 1.0 * G), "{}", a.rate);
    }

    #[test]
    fn r_ack_counts_a_silent_stretch_only_with_bytes_in_flight() {
        // Without the halt, to see the rate estimate alone.
        let p = AccParams {
            halt: false,
            ..params()
        };
        for (inflight_before_gap, want) in [(50_000, 40.0), (0, 100.0)] {
            let mut a = Acc::new(p, Rate(C));
            period(&mut a, 0, 25, 1250, TcdMark::Ce, 50_000);
            a.on_ack_marked(T, 1250, TcdMark::Ce, inflight_before_gap);
            assert!(close(a.rate, 25.0 * G));
            // No ACK from 10 us to 35 us. The period [10 us, 20 us) closes at 35 us with one
            // ACK (1 Gbit/s) and the grid restarts at 35 us.
            for k in 0..10u64 {
                a.on_ack_marked(35 * US + k * US, 12_500, TcdMark::Ce, 50_000);
            }
            assert!(close(a.rate, 1.0 * G), "{}", a.rate);
            a.on_ack_marked(45 * US, 12_500, TcdMark::Ce, 50_000);
            // 125_000 B acked: over 25 us (from 20 us) if the flow had bytes in flight in
            // the silence, when the bottleneck gave it nothing; over 10 us if it had none.
            assert!(close(a.rate, want * G), "{inflight_before_gap}: {}", a.rate);
        }
    }

    #[test]
    fn victim_holds_then_halves_after_p_thresh_periods() {
        let mut a = Acc::new(params(), Rate(C));
        a.rate = 40.0 * G;
        // Periods 0..3 are UE. Each is decided at the first ACK of the next period.
        for k in 0..4u64 {
            period(&mut a, k * T, 10, 1000, TcdMark::Ue, 50_000);
            if k >= 1 {
                assert_eq!(a.last_verdict, Some(AccVerdict::Victim));
                assert!(close(a.rate, 40.0 * G), "period {}: {}", k - 1, a.rate);
            }
        }
        // The fourth UE period in a row exceeds Pthresh = 3: halve.
        period(&mut a, 4 * T, 10, 1000, TcdMark::Ue, 50_000);
        assert!(close(a.rate, 20.0 * G), "{}", a.rate);
        assert_eq!(a.halvings, 1);
        // The count starts again: three more UE periods hold, the fourth halves.
        for k in 5..8u64 {
            period(&mut a, k * T, 10, 1000, TcdMark::Ue, 50_000);
            assert!(close(a.rate, 20.0 * G), "{}", a.rate);
        }
        period(&mut a, 8 * T, 10, 1000, TcdMark::Ue, 50_000);
        assert!(close(a.rate, 10.0 * G), "{}", a.rate);
        // An uncongested period in between breaks the streak.
        let mut b = Acc::new(params(), Rate(C));
        b.rate = 40.0 * G;
        for (k, m) in [
            TcdMark::Ue,
            TcdMark::Ue,
            TcdMark::Ue,
            TcdMark::None,
            TcdMark::Ue,
        ]
        .into_iter()
        .enumerate()
        {
            period(&mut b, k as Time * T, 10, 1000, m, 50_000);
        }
        b.on_ack_marked(5 * T, 1000, TcdMark::Ue, 50_000);
        assert_eq!(b.halvings, 0);
        assert!(b.rate > 40.0 * G);
    }

    #[test]
    fn uncongested_increase_is_gentle_then_fast_and_capped() {
        let p = AccParams {
            rate_weight: 0.0,
            ..params()
        };
        let mut a = Acc::new(p, Rate(C));
        a.rate = 50.0 * G;
        period(&mut a, 0, 10, 1000, TcdMark::None, 10_000);
        let mut expected = 50.0 * G;
        // Periods 1..=5: +R_AI (1G); from the sixth: +s R_AI (4G).
        for k in 1..=8u64 {
            period(&mut a, k * T, 10, 1000, TcdMark::None, 10_000);
            expected += if k <= 5 { 1.0 * G } else { 4.0 * G };
            assert_eq!(a.last_verdict, Some(AccVerdict::Uncongested));
            assert!(
                close(a.rate, expected),
                "period {k}: {} vs {expected}",
                a.rate
            );
        }
        for k in 9..30u64 {
            period(&mut a, k * T, 10, 1000, TcdMark::None, 10_000);
        }
        assert!(close(a.rate, 100.0 * G));
    }

    #[test]
    fn smaller_rates_increase_more() {
        let mut slow = Acc::new(params(), Rate(C));
        let mut fast = Acc::new(params(), Rate(C));
        slow.rate = 10.0 * G;
        fast.rate = 90.0 * G;
        for a in [&mut slow, &mut fast] {
            period(a, 0, 10, 1000, TcdMark::None, 10_000);
            a.on_ack_marked(T, 1000, TcdMark::None, 10_000);
        }
        // Step R_AI (1 + (1 - R/C)): 1.9G at 10G, 1.1G at 90G.
        assert!(close(slow.rate, 11.9 * G), "{}", slow.rate);
        assert!(close(fast.rate, 91.1 * G), "{}", fast.rate);
    }

    #[test]
    fn mixed_periods_hold_and_quiet_periods_decide_nothing() {
        let mut a = Acc::new(params(), Rate(C));
        a.rate = 30.0 * G;
        // 5 of 10 ACKs CE: not a stable congestion.
        for i in 0..10u64 {
            let m = if i % 2 == 0 {
                TcdMark::Ce
            } else {
                TcdMark::None
            };
            a.on_ack_marked(i * US, 1000, m, 10_000);
        }
        // After 3 quiet periods the grid restarts at the next ACK.
        a.on_ack_marked(45 * US, 1000, TcdMark::None, 10_000);
        assert_eq!(a.last_verdict, Some(AccVerdict::Mixed));
        assert!(close(a.rate, 30.0 * G));
        assert_eq!(a.periods, 1);
        a.on_ack_marked(54 * US, 1000, TcdMark::None, 10_000);
        assert_eq!(a.periods, 1, "45 us + T not reached");
        a.on_ack_marked(55 * US, 1000, TcdMark::None, 10_000);
        assert_eq!(a.periods, 2);
        assert_eq!(a.last_verdict, Some(AccVerdict::Uncongested));
    }
    #[test]
    fn congestion_onset_restarts_the_period() {
        let mut a = Acc::new(params(), Rate(C));
        // Grid from 0. Four quiet ACKs, then CE from 4 us on: the period restarts at 4 us,
        // so the ACKs of [4 us, 14 us) decide, all CE: congested at 14 us, not at 20 us.
        for i in 0..4u64 {
            a.on_ack_marked(i * US, 1250, TcdMark::None, 20_000);
        }
        for i in 4..14u64 {
            a.on_ack_marked(i * US, 1250, TcdMark::Ce, 20_000);
        }
        assert_eq!((a.periods, a.onset_restarts), (0, 1));
        a.on_ack_marked(14 * US, 1250, TcdMark::Ce, 20_000);
        assert_eq!(a.periods, 1);
        assert_eq!(a.last_verdict, Some(AccVerdict::Congested));
        // R_ack over the restarted period: 10 ACKs of 1250 B in 10 us = 10 Gbit/s.
        assert!(close(a.rate, 10.0 * G), "{}", a.rate);
        // Without the restart the grid period [0, 10 us) holds 4 quiet and 6 CE ACKs: a
        // mixed period at 10 us, the rate holds.
        let p = AccParams {
            onset_restart: false,
            ..params()
        };
        let mut b = Acc::new(p, Rate(C));
        for i in 0..14u64 {
            let m = if i < 4 { TcdMark::None } else { TcdMark::Ce };
            b.on_ack_marked(i * US, 1250, m, 20_000);
        }
        b.on_ack_marked(14 * US, 1250, TcdMark::Ce, 20_000);
        assert_eq!((b.onset_restarts, b.periods), (0, 1));
        assert_eq!(b.last_verdict, Some(AccVerdict::Mixed));
        assert!(close(b.rate, 100.0 * G));
    }
}
