//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
//! SIGCOMM 2015): rate control from the gradient of the round-trip time.
//!
//! Queues that grow make RTTs rise before they are long, so the slope of the RTT tells the
//! sender about congestion a round earlier than the RTT's value does. On each RTT sample:
//!
//! - d = rtt - prev_rtt; rtt_diff = (1 - a) rtt_diff + a d; gradient = rtt_diff / minRTT
//!   (the paper normalises by the minimum RTT so that the gradient is dimensionless);
//! - rtt < Tlow: R += delta (the queue is short whatever its slope: additive increase);
//! - rtt > Thigh: R *= 1 - beta (1 - Thigh / rtt) (a long queue: cut in proportion to the
//!   excess, not the slope, which can be flat on a long standing queue);
//! - gradient <= 0: R += N delta, where N = 5 (hyper-active increase, HAI) once the
//!   previous five updates all saw a non-positive gradient, else N = 1;
//! - otherwise R *= 1 - beta gradient.
//!
//! The rate stays within [min rate, line rate]. The first sample only records the RTT.
//! As in the HPCC ns-3 module's TIMELY, the update runs once per round trip by default
//! ([`TimelyParams::per_rtt`]): an ACK updates the rate only if it acknowledges data sent
//! after the last update (its sequence passes the sender's next sequence at that update),
//! so each update sees RTTs of packets sent at the rate the previous update chose;
//! samples in between are ignored. With `per_rtt = false` every ACK is a completion
//! event.
//!
//! What the simulator provides: an RTT sample per ACK ([`AckInfo::rtt`]); the sender
//! paces at [`Timely::rate`].

use super::{AckInfo, AnyCc, BaseRtt, CcEntry, CongestionControl};
use crate::base::param::{Checked, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, US};
use serde::Deserialize;

/// Resolved TIMELY parameters.
///
/// Provenance of the defaults ([`TimelyParams::new`]): `alpha`, `beta`, `t_low`,
/// `t_high`, `min_rtt`, `delta` and the HAI rule (5 updates, 5 delta) are the TIMELY
/// paper's values as the HPCC ns-3 module uses them (ALGORITHMS.md \[code\]); `min_rate`
/// and `per_rtt` follow the ns-3 module's behaviour with `min_rate` reconstructed as C/1000
/// (the paper names no floor).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyParams {
    /// EWMA gain `a` of the RTT difference. Default 0.875 \[code\]; the authors' own code
    /// used 0.02.
    pub alpha: f64,
    /// Multiplicative decrease factor `beta`. Default 0.8 \[paper, code\].
    pub beta: f64,
    /// Below this RTT the rate always increases. Default 50 us \[paper, code\].
    pub t_low: Time,
    /// Above this RTT the rate always decreases. Default 500 us \[paper, code\].
    pub t_high: Time,
    /// Normaliser of the gradient. Default 20 us \[paper, code\].
    pub min_rtt: Time,
    /// Additive increase step `delta` in bit/s. Default C/1000 (10 Mbps at 10G, the
    /// paper's value, scaled with the line rate) \[paper, code\].
    pub delta: f64,
    /// Hyper-active increase step in bit/s. Default 5 delta \[paper, code\].
    pub hai: f64,
    /// Consecutive non-positive-gradient updates after which the increase is `hai`.
    /// Default 5 \[paper, code\].
    pub hai_after: u32,
    /// Lowest rate in bit/s. Default C/1000 \[recon\].
    pub min_rate: f64,
    /// Update once per RTT (true, default, as the ns-3 module) or on every sample.
    pub per_rtt: bool,
}

impl TimelyParams {
    /// Defaults for a NIC of rate `line` (see the type's documentation).
    pub fn new(line: Rate) -> TimelyParams {
        let c = line.0 as f64;
        TimelyParams {
            alpha: 0.875,
            beta: 0.8,
            t_low: 50 * US,
            t_high: 500 * US,
            min_rtt: 20 * US,
            delta: c / 1000.0,
            hai: 5.0 * c / 1000.0,
            hai_after: 5,
            min_rate: c / 1000.0,
            per_rtt: true,
        }
    }

    /// Parameters from the scenario's settings: unset fields take [`TimelyParams::new`]'s
    /// defaults. TIMELY's thresholds are absolute times, so the base RTT is not used; it is
    /// taken for symmetry with the other algorithms' `resolve`.
    pub fn resolve(cfg: &TimelyCfg, line: Rate, _base_rtt: Time) -> TimelyParams {
        let b = TimelyParams::new(line);
        let delta = cfg.delta.map(|r| r.0 as f64).unwrap_or(b.delta);
        TimelyParams {
            alpha: cfg.alpha.unwrap_or(b.alpha),
            beta: cfg.beta.unwrap_or(b.beta),
            t_low: cfg.t_low.unwrap_or(b.t_low),
            t_high: cfg.t_high.unwrap_or(b.t_high),
            min_rtt: cfg.min_rtt.unwrap_or(b.min_rtt),
            delta,
            hai: cfg.hai.map(|r| r.0 as f64).unwrap_or(5.0 * delta),
            hai_after: cfg.hai_after.unwrap_or(b.hai_after),
            // A floor above the line rate would be meaningless: the line rate caps it.
            min_rate: cfg
                .min_rate
                .map(|r| r.0 as f64)
                .unwrap_or(b.min_rate)
                .min(line.0 as f64),
            per_rtt: cfg.per_rtt.unwrap_or(b.per_rtt),
        }
    }
}

/// TIMELY settings of a scenario (`[cc.timely]`); unset fields take the defaults of
/// [`TimelyParams::new`].
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TimelyCfg {
    /// EWMA gain of the RTT difference.
    #[serde(default)]
    pub alpha: Option<f64>,
    /// Multiplicative decrease factor.
    #[serde(default)]
    pub beta: Option<f64>,
    /// Low RTT threshold.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub t_low: Option<Time>,
    /// High RTT threshold.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub t_high: Option<Time>,
    /// Gradient normaliser.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub min_rtt: Option<Time>,
    /// Additive increase step.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub delta: Option<Rate>,
    /// Hyper-active increase step (default 5 delta).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub hai: Option<Rate>,
    /// Consecutive non-positive gradients before hyper-active increase.
    #[serde(default)]
    pub hai_after: Option<u32>,
    /// Lowest rate.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub min_rate: Option<Rate>,
    /// Update once per RTT instead of on every ACK.
    #[serde(default)]
    pub per_rtt: Option<bool>,
}

/// `timely`.
pub static ENTRY: CcEntry = CcEntry {
    name: "timely",
    about: "TIMELY (Mittal et al., SIGCOMM 2015): rate from the RTT gradient",
    section: Some("timely"),
    reads_cnp: false,
    reads_int: false,
    reads_tcd: false,
    base_rtt: BaseRtt::PerFlow,
    params: |cc, ctx| params(&TimelyParams::resolve(&cc.timely, ctx.line, ctx.base_rtt)),
    build: |cc, ctx| {
        AnyCc::Timely(Timely::new(
            TimelyParams::resolve(&cc.timely, ctx.line, ctx.base_rtt),
            ctx.line,
        ))
    },
    validate: |cc| cc.timely.validate(),
    #[cfg(test)]
    check_fields: || {
        crate::base::param::assert_lists_fields::<TimelyCfg>(&params(&TimelyParams::new(
            Rate::gbps(100),
        )))
    },
};

/// The rows of `fabricsim list` for resolved parameters `p`.
fn params(p: &TimelyParams) -> Vec<Param> {
    vec![
        Param::plain("alpha", p.alpha, "EWMA gain of the RTT difference [code]"),
        Param::plain("beta", p.beta, "multiplicative decrease [paper, code]"),
        Param::time("t_low", p.t_low, "below: always increase [paper, code]"),
        Param::time("t_high", p.t_high, "above: always decrease [paper, code]"),
        Param::time(
            "min_rtt",
            p.min_rtt,
            "gradient normaliser (at least 1ns) [paper, code]",
        ),
        Param::rate("delta", p.delta, "additive step, C/1000 [paper, code]"),
        Param::rate("hai", p.hai, "hyper-active step, 5 delta [paper, code]"),
        Param::plain(
            "hai_after",
            p.hai_after,
            "non-positive gradients before hyper-active increase [paper, code]",
        ),
        Param::rate("min_rate", p.min_rate, "lowest rate, C/1000 [recon]"),
        Param::plain(
            "per_rtt",
            p.per_rtt,
            "update once per RTT: on an ACK of data sent after the last update",
        ),
    ]
}

impl TimelyCfg {
    /// Checks the settings; fields are named relative to `[cc.timely]`.
    pub fn validate(&self) -> Checked {
        let e = |field: &str, m: &str| Err(ParamError::new(field, m));
        if super::not_unit_fraction(self.alpha) {
            return e("alpha", "an EWMA gain in (0, 1]");
        }
        if super::not_unit_fraction(self.beta) {
            return e("beta", "a decrease factor in (0, 1]");
        }
        for (field, t) in [
            ("min_rtt", self.min_rtt),
            ("t_low", self.t_low),
            ("t_high", self.t_high),
        ] {
            crate::base::floors::opt_at_least(
                field,
                t,
                crate::base::floors::TIMER,
                "an RTT threshold or normaliser: no round trip is shorter",
            )?;
        }
        let d = TimelyParams::new(Rate(1));
        if self.t_low.unwrap_or(d.t_low) >= self.t_high.unwrap_or(d.t_high) {
            return e("t_low", "must be below t_high (defaults 50us and 500us)");
        }
        for (field, r) in [
            ("delta", self.delta),
            ("hai", self.hai),
            ("min_rate", self.min_rate),
        ] {
            if r == Some(Rate(0)) {
                return e(field, "must be positive");
            }
        }
        Ok(())
    }
}

/// TIMELY sender state of one flow.
#[derive(Clone, Debug)]
pub struct Timely {
    p: TimelyParams,
    line: f64,
    /// Current sending rate in bit/s.
    pub rate: f64,
    /// Smoothed RTT difference in picoseconds.
    pub rtt_diff: f64,
    prev_rtt: Option<Time>,
    /// Consecutive updates with a non-positive gradient and no decrease.
    nonpos_streak: u32,
    /// The sender's next sequence at the last update (per-RTT gate).
    last_update_seq: Option<u64>,
    /// Rate updates applied.
    pub updates: u64,
}

impl Timely {
    /// A flow starting at line rate.
    pub fn new(p: TimelyParams, line: Rate) -> Timely {
        let c = line.0 as f64;
        Timely {
            p,
            line: c,
            rate: c,
            rtt_diff: 0.0,
            prev_rtt: None,
            nonpos_streak: 0,
            last_update_seq: None,
            updates: 0,
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &TimelyParams {
        &self.p
    }

    /// Current gradient (smoothed RTT difference over minRTT).
    pub fn gradient(&self) -> f64 {
        self.rtt_diff / self.p.min_rtt as f64
    }

    /// An ACK for sequence `ack_seq` with RTT sample `rtt` arrived while the sender's next
    /// sequence was `snd_nxt`: a completion event unless the per-RTT gate holds it back.
    pub fn on_sample(&mut self, now: Time, rtt: Time, ack_seq: u64, snd_nxt: u64) {
        if self.p.per_rtt {
            if self.last_update_seq.is_some_and(|s| ack_seq <= s) {
                return;
            }
            self.last_update_seq = Some(snd_nxt);
        }
        self.on_rtt(now, rtt);
    }

    /// One RTT sample at `now`, used as a completion event (no gate).
    pub fn on_rtt(&mut self, _now: Time, rtt: Time) {
        let Some(prev) = self.prev_rtt.replace(rtt) else {
            return;
        };
        let a = self.p.alpha;
        let d = rtt as f64 - prev as f64;
        self.rtt_diff = (1.0 - a) * self.rtt_diff + a * d;
        let gradient = self.gradient();
        let nonpos = gradient <= 0.0;
        if rtt < self.p.t_low {
            self.rate += self.p.delta;
            self.nonpos_streak = if nonpos { self.nonpos_streak + 1 } else { 0 };
        } else if rtt > self.p.t_high {
            self.rate *= 1.0 - self.p.beta * (1.0 - self.p.t_high as f64 / rtt as f64);
            self.nonpos_streak = 0;
        } else if nonpos {
            self.rate += if self.nonpos_streak >= self.p.hai_after {
                self.p.hai
            } else {
                self.p.delta
            };
            self.nonpos_streak += 1;
        } else {
            self.rate *= (1.0 - self.p.beta * gradient).max(0.0);
            self.nonpos_streak = 0;
        }
        self.rate = self.rate.clamp(self.p.min_rate, self.line);
        self.updates += 1;
    }
}

impl CongestionControl for Timely {
    fn rate_bps(&self) -> f64 {
        self.rate
    }
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        self.on_sample(now, ack.rtt, ack.ack_seq, ack.snd_nxt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 1e9;
    const M: f64 = 1e6;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    /// Every-sample updates, a = 0.5 for hand-computable numbers, 10G line, delta 10 Mbps.
    fn hand_params() -> TimelyParams {
        TimelyParams {
            alpha: 0.5,
            per_rtt: false,
            ..TimelyParams::new(Rate::gbps(10))
        }
    }

    #[test]
    fn defaults_scale_with_line_rate() {
        let p = TimelyParams::new(Rate::gbps(10));
        assert!(close(p.delta, 10.0 * M));
        assert!(close(p.hai, 50.0 * M));
        assert_eq!((p.t_low, p.t_high, p.min_rtt), (50 * US, 500 * US, 20 * US));
        let r = TimelyParams::resolve(&TimelyCfg::default(), Rate::gbps(10), 8 * US);
        assert_eq!(r, p);
        let cfg: TimelyCfg = toml::from_str("alpha = 0.02\ndelta = \"20Mbps\"").unwrap();
        let r = TimelyParams::resolve(&cfg, Rate::gbps(10), 8 * US);
        assert_eq!(r.alpha, 0.02);
        assert!(close(r.delta, 20.0 * M) && close(r.hai, 100.0 * M));
        assert!(toml::from_str::<TimelyCfg>("alhpa = 1.0").is_err());
    }

    #[test]
    fn rate_rises_below_t_low() {
        let mut t = Timely::new(hand_params(), Rate::gbps(10));
        t.rate = 5.0 * G;
        t.on_rtt(0, 10 * US); // first sample: recorded only
        assert!(close(t.rate, 5.0 * G));
        // Rising RTT (positive gradient) but below Tlow: still additive increase.
        t.on_rtt(US, 20 * US);
        assert!(close(t.rate, 5.0 * G + 10.0 * M), "{}", t.rate);
        t.on_rtt(2 * US, 30 * US);
        assert!(close(t.rate, 5.0 * G + 20.0 * M), "{}", t.rate);
    }

    #[test]
    fn rate_falls_above_t_high() {
        let mut t = Timely::new(hand_params(), Rate::gbps(10));
        t.on_rtt(0, 1000 * US);
        // Flat RTT of 1 ms > Thigh 500 us: R *= 1 - 0.8 (1 - 500/1000) = 0.6, whatever
        // the gradient.
        t.on_rtt(US, 1000 * US);
        assert!(close(t.rate, 6.0 * G), "{}", t.rate);
        t.on_rtt(2 * US, 1000 * US);
        assert!(close(t.rate, 3.6 * G), "{}", t.rate);
    }

    #[test]
    fn gradient_mode_follows_the_equations() {
        let mut t = Timely::new(hand_params(), Rate::gbps(10));
        t.rate = 5.0 * G;
        // All RTTs between Tlow (50 us) and Thigh (500 us); minRTT 20 us, a = 0.5.
        t.on_rtt(0, 100 * US);
        assert!(close(t.rate, 5.0 * G));
        // d = 10; diff = 0.5*0 + 0.5*10 = 5 us; g = 0.25; R = 5G (1 - 0.8*0.25) = 4G.
        t.on_rtt(US, 110 * US);
        assert!(close(t.rtt_diff, 5e6));
        assert!(close(t.rate, 4.0 * G), "{}", t.rate);
        // d = 20; diff = 2.5 + 10 = 12.5 us; g = 0.625; R = 4G (1 - 0.5) = 2G.
        t.on_rtt(2 * US, 130 * US);
        assert!(close(t.rate, 2.0 * G), "{}", t.rate);
        // d = -10; diff = 6.25 - 5 = 1.25 us; g = 0.0625; R = 2G (1 - 0.05) = 1.9G.
        t.on_rtt(3 * US, 120 * US);
        assert!(close(t.rate, 1.9 * G), "{}", t.rate);
        // d = -20; diff = 0.625 - 10 = -9.375 us; g < 0: R += delta = 1.91G.
        t.on_rtt(4 * US, 100 * US);
        assert!(close(t.rtt_diff, -9.375e6));
        assert!(close(t.rate, 1.91 * G), "{}", t.rate);
        // d = 0; diff = -4.6875 us; still negative: 1.92G.
        t.on_rtt(5 * US, 100 * US);
        assert!(close(t.rate, 1.92 * G), "{}", t.rate);
    }

    #[test]
    fn hyper_increase_after_five_non_positive_gradients() {
        let mut t = Timely::new(hand_params(), Rate::gbps(10));
        t.rate = 1.0 * G;
        // RTT falls by 1 us per sample from 200 us: the gradient is always negative.
        t.on_rtt(0, 200 * US);
        let mut expected = 1.0 * G;
        for i in 1..=8u64 {
            t.on_rtt(i * US, (200 - i) * US);
            // Updates 1..5 add delta; from the sixth on the previous five were all
            // non-positive: add 5 delta.
            expected += if i <= 5 { 10.0 * M } else { 50.0 * M };
            assert!(close(t.rate, expected), "update {i}: {}", t.rate);
        }
        // A positive gradient cuts.
        t.on_rtt(9 * US, 260 * US);
        assert!(t.rate < expected);
    }

    #[test]
    fn hai_streak_restarts_after_a_cut() {
        let mut t = Timely::new(hand_params(), Rate::gbps(10));
        t.rate = 1.0 * G;
        t.on_rtt(0, 200 * US);
        for i in 1..=6u64 {
            t.on_rtt(i * US, (200 - i) * US);
        }
        // Above Thigh: a cut, and the streak starts again.
        t.on_rtt(7 * US, 1000 * US);
        let cut = t.rate;
        // A big fall makes the gradient negative at once: the first increase after the
        // cut is delta, not the hyper step.
        t.on_rtt(8 * US, 100 * US);
        assert!(t.gradient() < 0.0);
        assert!(close(t.rate, cut + 10.0 * M), "{} vs {}", t.rate, cut);
    }

    #[test]
    fn rate_stays_within_min_and_line_rate() {
        let p = hand_params();
        let mut t = Timely::new(p, Rate::gbps(10));
        t.on_rtt(0, 10 * US);
        for i in 1..100 {
            t.on_rtt(i * US, 10 * US);
            assert!(t.rate <= 10.0 * G);
        }
        assert!(close(t.rate, 10.0 * G));
        for i in 100..200 {
            t.on_rtt(i * US, 5000 * US);
            assert!(t.rate >= p.min_rate);
        }
        assert!(close(t.rate, p.min_rate), "{}", t.rate);
        // A huge positive gradient would make 1 - beta g negative: the floor holds.
        // d = 340 us; diff = 170 us; g = 8.5; 1 - 0.8 * 8.5 < 0.
        let mut t = Timely::new(p, Rate::gbps(10));
        t.rate = 5.0 * G;
        t.on_rtt(0, 60 * US);
        t.on_rtt(US, 400 * US);
        assert!(close(t.rate, p.min_rate), "{}", t.rate);
    }

    #[test]
    fn per_rtt_gate_ignores_acks_of_data_sent_before_the_last_update() {
        let p = TimelyParams {
            per_rtt: true,
            ..hand_params()
        };
        let mut t = Timely::new(p, Rate::gbps(10));
        t.rate = 5.0 * G;
        let ack = |rtt, ack_seq, snd_nxt| AckInfo {
            newly_acked: 1000,
            ack_seq,
            ecn_echo: 0,
            rtt,
            snd_nxt,
            ..Default::default()
        };
        // First sample: recorded, gate set at snd_nxt = 10_000.
        t.on_ack(0, &ack(1000 * US, 1000, 10_000));
        // ACKs up to 10_000 acknowledge data sent before that: ignored.
        t.on_ack(500 * US, &ack(400 * US, 5000, 20_000));
        t.on_ack(600 * US, &ack(400 * US, 10_000, 20_000));
        assert_eq!(t.updates, 0);
        assert!(close(t.rate, 5.0 * G));
        // The first ACK past 10_000 updates: rtt 1 ms > Thigh 500 us, no gradient change:
        // R *= 1 - 0.8 (1 - 0.5) = 0.6.
        t.on_ack(700 * US, &ack(1000 * US, 11_000, 30_000));
        assert_eq!(t.updates, 1);
        assert!(close(t.rate, 3.0 * G), "{}", t.rate);
        // The gate moved to 30_000.
        t.on_ack(800 * US, &ack(1000 * US, 30_000, 40_000));
        assert_eq!(t.updates, 1);
        t.on_ack(900 * US, &ack(1000 * US, 30_001, 40_000));
        assert_eq!(t.updates, 2);
    }
}
