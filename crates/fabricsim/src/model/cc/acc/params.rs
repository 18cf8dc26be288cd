//! ACC's parameters: their defaults and provenance, the scenario settings, their
//! checks, and the registry entries of `acc` and `acc_no_halt`.

use super::Acc;
use crate::base::param::{Checked, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time};
use crate::model::cc::{AnyCc, BaseRtt, CcEntry, FlowContext};
use serde::Deserialize;

/// Resolved ACC parameters.
///
/// Provenance of the defaults ([`AccParams::new`]): the period (base RTT), the 90% CE
/// threshold, the classification by CE > UE > NO, the halt of excess / R_ack and the
/// halving of victims are the paper's (SEEDS.md 004, \[seed\]); Pthresh 3 and S 5 are
/// ALGORITHMS.md's defaults; R_AI = C/100, s = 4, the rate weight w = 1, the floor
/// C/1000 are reconstructed \[recon\]; the halt has no cap unless one is set.
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
    /// Longest source halt, if any. Default none \[seed\]: the paper halts until the queued
    /// excess drains (the ACK stream or the planned end excess / R_ack ends it, see the
    /// module docs) and calls a long halt of the congested flows the first means against
    /// head-of-line blocking; a cap would end it with the excess still queued.
    pub max_halt: Option<Time>,
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
            max_halt: None,
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
            max_halt: cfg.max_halt.or(b.max_halt),
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
    /// Longest source halt (default: none).
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
        match p.max_halt {
            Some(t) => Param::time("max_halt", t, "longest source halt"),
            None => Param::unset(
                "max_halt",
                "longest source halt; unset: none, it ends when the excess drains [seed]",
            ),
        },
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
        if crate::model::cc::not_unit_fraction(self.ce_threshold) {
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
