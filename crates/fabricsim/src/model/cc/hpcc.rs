//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): window
//! control from in-band network telemetry (INT).
//!
//! Every switch egress a data packet leaves appends one INT record ([`IntHop`]): the port's
//! line rate B, the dequeue timestamp ts, the port's cumulative transmitted bytes and its
//! queue length. The receiver echoes the records in the ACK. From two successive records
//! of a hop the sender reads that hop's transmit rate over the interval and, with the
//! queue, its normalised load
//!
//!   u = min(qlen, qlen_prev) / (B T) + txRate / B,
//!
//! (the queue term counts the standing queue as load that must drain within one base RTT
//! T; the min ignores a queue that only just appeared). The most loaded hop sets the
//! estimate U, smoothed over time so that one RTT's worth of samples has full weight:
//! with tau = min(dTs, T), U = (1 - tau/T) U + (tau/T) u.
//!
//! The window aims at the target utilisation eta: W = Wc / (U / eta) + W_AI when U >= eta
//! or after `max_stage` additive rounds (multiplicative correction toward eta), else
//! W = Wc + W_AI. Wc, the reference window, moves once per RTT: an ACK whose sequence
//! passes `lastUpdateSeq` (snd_nxt at the previous reference update) commits W to Wc;
//! ACKs in between react (W changes) against the same Wc, so a burst of feedback cannot
//! compound the cut ("fast react" in the paper's section 3.3).
//!
//! Window form ([`HpccForm::Window`]): the window limits bytes in flight and the pacing
//! rate is W / T. Rate form ([`HpccForm::Rate`], the HPCC ns-3 module's default profile):
//! the same law applied to a rate R = W / T with R_AI = W_AI / T, and no window.
//!
//! What the simulator provides ([`crate::model::fabric::telemetry::int`]): each egress stamps an [`IntHop`]
//! on data packets (at most [`MAX_INT_HOPS`], 8 bytes each on the wire), the receiver acks every
//! packet and echoes the records, and the sender calls [`Hpcc::on_ack_int`] with the ACK's
//! sequence and its own snd_nxt.

use super::{AckInfo, AnyCc, BaseRtt, CcEntry, CongestionControl};
use crate::base::param::{Checked, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, SEC};
use crate::model::fabric::telemetry::int::{IntHop, MAX_INT_HOPS};
use serde::Deserialize;

/// Whether HPCC runs as a window (the paper) or as a rate (the ns-3 module's profile).
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HpccForm {
    /// Window W limits bytes in flight; pacing at W / T.
    Window,
    /// Rate R = W / T, no window.
    Rate,
}

/// Resolved HPCC parameters. Windows are in bytes.
///
/// Provenance of the defaults ([`HpccParams::new`]): eta 0.95, max_stage 5,
/// W_init = C T and W_AI = (1 - eta) W_init / N with N = 100 are the paper's; the floor
/// `w_min` (C/1000 times T, the ns-3 module's 100 Mbps minimum rate at 100G) and the
/// rate profile's R_AI = 40 Mbps at 100G ([`HpccParams::ns3_rate`]) are the ns-3
/// module's \[code\].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccParams {
    /// Target utilisation eta. Default 0.95 \[paper\].
    pub eta: f64,
    /// Additive rounds before a multiplicative correction. Default 5 \[paper\].
    pub max_stage: u32,
    /// Base RTT T in picoseconds.
    pub base_rtt: Time,
    /// Initial and largest window, bytes: C T \[paper\].
    pub w_init: f64,
    /// Additive increase per update, bytes: (1 - eta) W_init / 100 \[paper\].
    pub w_ai: f64,
    /// Smallest window, bytes: C/1000 T \[code\].
    pub w_min: f64,
    /// Window or rate form. Default window \[paper\].
    pub form: HpccForm,
    /// React on every ACK against the reference window (true, the paper and ns-3) or only
    /// once per RTT.
    pub fast_react: bool,
}

/// The paper's expected number of concurrent flows per bottleneck in W_AI.
const DEFAULT_EXPECTED_FLOWS: f64 = 100.0;

impl HpccParams {
    /// The paper's defaults for a NIC of rate `line` and base RTT `base_rtt`.
    pub fn new(line: Rate, base_rtt: Time) -> HpccParams {
        let bdp = bdp_bytes(line.0 as f64, base_rtt);
        let eta = 0.95;
        HpccParams {
            eta,
            max_stage: 5,
            base_rtt,
            w_init: bdp,
            w_ai: (1.0 - eta) * bdp / DEFAULT_EXPECTED_FLOWS,
            w_min: bdp / 1000.0,
            form: HpccForm::Window,
            fast_react: true,
        }
    }

    /// The ns-3 module's rate profile: R_AI = 40 Mbps at 100G (C/2500), no window.
    pub fn ns3_rate(line: Rate, base_rtt: Time) -> HpccParams {
        HpccParams {
            w_ai: bdp_bytes(line.0 as f64 / 2500.0, base_rtt),
            form: HpccForm::Rate,
            ..HpccParams::new(line, base_rtt)
        }
    }

    /// Parameters from the scenario's settings. `base_rtt` is the fabric's base RTT
    /// (overridden by `cfg.base_rtt`). W_AI is, in order of precedence: `cfg.w_ai`;
    /// `cfg.r_ai` times T; (1 - eta) C T / `cfg.expected_flows` if set; the form's default.
    pub fn resolve(cfg: &HpccCfg, line: Rate, base_rtt: Time) -> HpccParams {
        let t = cfg.base_rtt.unwrap_or(base_rtt);
        let form = cfg.form.unwrap_or(HpccForm::Window);
        let b = match form {
            HpccForm::Window => HpccParams::new(line, t),
            HpccForm::Rate => HpccParams::ns3_rate(line, t),
        };
        let eta = cfg.eta.unwrap_or(b.eta);
        let w_ai = if let Some(w) = cfg.w_ai {
            w as f64
        } else if let Some(r) = cfg.r_ai {
            bdp_bytes(r.0 as f64, t)
        } else if let Some(n) = cfg.expected_flows {
            (1.0 - eta) * b.w_init / n.max(1) as f64
        } else {
            b.w_ai
        };
        HpccParams {
            eta,
            max_stage: cfg.max_stage.unwrap_or(b.max_stage),
            w_ai,
            // A floor above the line rate would be meaningless: W_init caps it.
            w_min: cfg
                .min_rate
                .map(|r| bdp_bytes(r.0 as f64, t))
                .unwrap_or(b.w_min)
                .min(b.w_init),
            fast_react: cfg.fast_react.unwrap_or(b.fast_react),
            ..b
        }
    }
}

/// Bytes a rate of `bps` carries in `t` picoseconds.
fn bdp_bytes(bps: f64, t: Time) -> f64 {
    bps * t as f64 / SEC as f64 / 8.0
}

/// HPCC settings of a scenario (`[cc.hpcc]`); unset fields take [`HpccParams::resolve`]'s
/// defaults.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HpccCfg {
    /// `window` (paper, default) or `rate` (ns-3 profile).
    #[serde(default)]
    pub form: Option<HpccForm>,
    /// Target utilisation.
    #[serde(default)]
    pub eta: Option<f64>,
    /// Additive rounds before a multiplicative correction.
    #[serde(default)]
    pub max_stage: Option<u32>,
    /// Base RTT T (default: the longest base RTT among the scenario's HPCC flows: one
    /// full-size packet and its ACK on the flow's idle path).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub base_rtt: Option<Time>,
    /// Expected concurrent flows per bottleneck N in W_AI = (1 - eta) C T / N.
    #[serde(default)]
    pub expected_flows: Option<u32>,
    /// Additive increase per update, bytes.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub w_ai: Option<u64>,
    /// Additive increase as a rate (W_AI = R_AI T).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub r_ai: Option<Rate>,
    /// Lowest rate (W_min = min_rate T).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub min_rate: Option<Rate>,
    /// React on every ACK (true) or once per RTT.
    #[serde(default)]
    pub fast_react: Option<bool>,
}

/// `hpcc`.
pub static ENTRY: CcEntry = CcEntry {
    name: "hpcc",
    about: "HPCC (Li et al., SIGCOMM 2019): window from the INT records of every hop",
    section: Some("hpcc"),
    reads_cnp: false,
    reads_int: true,
    reads_tcd: false,
    base_rtt: BaseRtt::Longest,
    params: |cc, ctx| params(&cc.hpcc, ctx.line, ctx.base_rtt),
    build: |cc, ctx| {
        AnyCc::Hpcc(Hpcc::new(HpccParams::resolve(
            &cc.hpcc,
            ctx.line,
            ctx.base_rtt,
        )))
    },
    validate: |cc| cc.hpcc.validate(),
    #[cfg(test)]
    check_fields: || {
        crate::base::param::assert_lists_fields::<HpccCfg>(&params(
            &HpccCfg::default(),
            Rate::gbps(100),
            10 * crate::base::units::US,
        ))
    },
};

/// The rows of `fabricsim list`: what `cfg` resolves to for a NIC of rate `line` in a
/// network of base RTT `base_rtt`.
fn params(cfg: &HpccCfg, line: Rate, base_rtt: Time) -> Vec<Param> {
    let p = HpccParams::resolve(cfg, line, base_rtt);
    let t = p.base_rtt.max(1);
    vec![
        Param::choice(
            "form",
            &p.form,
            "window [paper], or rate (the ns-3 module's: R_AI = C/2500, no window)",
        ),
        Param::plain("eta", p.eta, "target utilisation [paper]"),
        Param::plain(
            "max_stage",
            p.max_stage,
            "additive rounds before a multiplicative correction [paper]",
        ),
        Param::time(
            "base_rtt",
            p.base_rtt,
            "T; unset: the longest base RTT of the HPCC flows",
        ),
        Param::plain(
            "expected_flows",
            DEFAULT_EXPECTED_FLOWS,
            "N in W_AI = (1 - eta) C T / N [paper]",
        ),
        Param::bytes(
            "w_ai",
            p.w_ai.round() as u64,
            "additive increase per update; overrides r_ai and expected_flows",
        ),
        Param::unset("r_ai", "additive increase as a rate: W_AI = r_ai T"),
        Param::rate(
            "min_rate",
            p.w_min * 8.0 * SEC as f64 / t as f64,
            "lowest rate, C/1000 [code]",
        ),
        Param::plain(
            "fast_react",
            p.fast_react,
            "react on every ACK against the reference window [paper, code]",
        ),
    ]
}

impl HpccCfg {
    /// Checks the settings; fields are named relative to `[cc.hpcc]`.
    pub fn validate(&self) -> Checked {
        let e = |field: &str, m: &str| Err(ParamError::new(field, m));
        if super::not_unit_fraction(self.eta) {
            return e("eta", "a target utilisation in (0, 1]");
        }
        crate::base::floors::opt_at_least(
            "base_rtt",
            self.base_rtt,
            crate::base::floors::TIMER,
            "the window's time scale T: no round trip is shorter",
        )?;
        if self.expected_flows == Some(0) {
            return e("expected_flows", "must be at least 1");
        }
        if self.w_ai == Some(0) {
            return e("w_ai", "must be positive");
        }
        for (field, r) in [("r_ai", self.r_ai), ("min_rate", self.min_rate)] {
            if r == Some(Rate(0)) {
                return e(field, "must be positive");
            }
        }
        Ok(())
    }
}

/// HPCC sender state of one flow.
#[derive(Clone, Debug)]
pub struct Hpcc {
    p: HpccParams,
    /// Current window, bytes.
    pub w: f64,
    /// Reference window, bytes (moves once per RTT).
    pub wc: f64,
    /// Smoothed normalised utilisation U of the most loaded hop.
    pub u: f64,
    /// Additive rounds since the last multiplicative correction.
    pub inc_stage: u32,
    /// snd_nxt at the last reference update (None before the first ACK with INT).
    pub last_update_seq: Option<u64>,
    prev: [IntHop; MAX_INT_HOPS],
    n_prev: usize,
    /// Reference (per-RTT) updates applied.
    pub updates: u64,
}

impl Hpcc {
    /// A flow starting with W = W_init (line rate) and U = 1, as the ns-3 module does.
    pub fn new(p: HpccParams) -> Hpcc {
        Hpcc {
            p,
            w: p.w_init,
            wc: p.w_init,
            u: 1.0,
            inc_stage: 0,
            last_update_seq: None,
            prev: [IntHop::default(); MAX_INT_HOPS],
            n_prev: 0,
            updates: 0,
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &HpccParams {
        &self.p
    }

    fn store(&mut self, hops: &[IntHop]) {
        self.prev[..hops.len()].copy_from_slice(hops);
        self.n_prev = hops.len();
    }

    /// An ACK at `now` acknowledging up to `ack_seq`, with the sender's `snd_nxt`, echoing
    /// the INT records `hops` (records past [`MAX_INT_HOPS`] are ignored).
    ///
    /// The first ACK only stores the records. An ACK whose path length differs from the
    /// previous one (a reroute) restarts the records without a window change.
    pub fn on_ack_int(&mut self, _now: Time, ack_seq: u64, snd_nxt: u64, hops: &[IntHop]) {
        let hops = &hops[..hops.len().min(MAX_INT_HOPS)];
        let Some(last) = self.last_update_seq else {
            self.store(hops);
            self.last_update_seq = Some(snd_nxt);
            return;
        };
        let update = ack_seq > last;
        if !update && !self.p.fast_react {
            return;
        }
        if hops.len() != self.n_prev {
            self.store(hops);
            if update {
                self.last_update_seq = Some(snd_nxt.max(last));
            }
            return;
        }
        let t = self.p.base_rtt as f64;
        let t_sec = t / SEC as f64;
        // The most loaded hop and the interval over which it was measured.
        let mut max_u: Option<(f64, f64)> = None;
        for (h, old) in hops.iter().zip(&self.prev) {
            if h.ts <= old.ts || h.rate_bps == 0 {
                // No time passed at this hop: no rate to read.
                continue;
            }
            let dts = (h.ts - old.ts) as f64;
            let b = h.rate_bps as f64;
            let tx_rate = h.tx_bytes.saturating_sub(old.tx_bytes) as f64 * 8.0 * SEC as f64 / dts;
            let q = h.qlen.min(old.qlen) as f64 * 8.0;
            let u = q / (b * t_sec) + tx_rate / b;
            if max_u.is_none_or(|(m, _)| u > m) {
                max_u = Some((u, dts));
            }
        }
        self.store(hops);
        let Some((u, dts)) = max_u else {
            return;
        };
        let tau = dts.min(t);
        self.u = (1.0 - tau / t) * self.u + (tau / t) * u;

        let eta = self.p.eta;
        let (w, stage) = if self.u >= eta || self.inc_stage >= self.p.max_stage {
            let w = if self.u > 0.0 {
                self.wc / (self.u / eta) + self.p.w_ai
            } else {
                self.p.w_init
            };
            (w, 0)
        } else {
            (self.wc + self.p.w_ai, self.inc_stage + 1)
        };
        self.w = w.clamp(self.p.w_min, self.p.w_init);
        if update {
            self.wc = self.w;
            self.inc_stage = stage;
            self.last_update_seq = Some(snd_nxt.max(last));
            self.updates += 1;
        }
    }
}

impl CongestionControl for Hpcc {
    fn rate_bps(&self) -> f64 {
        self.w * 8.0 * SEC as f64 / self.p.base_rtt as f64
    }
    fn on_ack_int(&mut self, now: Time, ack: &AckInfo, hops: &[IntHop]) {
        Hpcc::on_ack_int(self, now, ack.ack_seq, ack.snd_nxt, hops);
    }
    fn wants_int(&self) -> bool {
        true
    }
    fn window(&self) -> Option<u64> {
        match self.p.form {
            HpccForm::Window => Some(self.w.ceil() as u64),
            HpccForm::Rate => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::{MS, NS, US};

    const C: u64 = 100_000_000_000;
    const T: Time = 10 * US;
    /// C T in bytes at 100G and 10 us.
    const BDP: f64 = 125_000.0;
    /// (1 - 0.95) * BDP / 100.
    const W_AI: f64 = 62.5;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// A hop of a 100G port whose record advanced by one base RTT: `load` of its line rate
    /// was transmitted over the interval, and `q` bytes were queued at both ends.
    fn hop_at(k: u64, load: f64, q: u64) -> IntHop {
        IntHop {
            rate_bps: C,
            ts: k * T,
            tx_bytes: (k as f64 * load * BDP) as u64,
            qlen: q,
        }
    }

    #[test]
    fn defaults() {
        let p = HpccParams::new(Rate(C), T);
        assert!(close(p.w_init, BDP));
        assert!(close(p.w_ai, W_AI));
        assert_eq!((p.eta, p.max_stage, p.form), (0.95, 5, HpccForm::Window));
        assert_eq!(HpccParams::resolve(&HpccCfg::default(), Rate(C), T), p);
        let r = HpccParams::ns3_rate(Rate(C), T);
        // 40 Mbps over 10 us = 50 bytes.
        assert!(close(r.w_ai, 50.0));
        let cfg: HpccCfg = toml::from_str("form = \"rate\"\nexpected_flows = 10").unwrap();
        let r = HpccParams::resolve(&cfg, Rate(C), T);
        assert_eq!(r.form, HpccForm::Rate);
        assert!(close(r.w_ai, 0.05 * BDP / 10.0));
        assert!(toml::from_str::<HpccCfg>("etaa = 0.9").is_err());
        let h = Hpcc::new(p);
        assert_eq!(h.window(), Some(125_000));
        assert!(close(h.rate_bps(), C as f64));
        assert_eq!(Hpcc::new(r).window(), None);
    }

    #[test]
    fn overload_above_eta_shrinks_window_by_u_over_eta() {
        let mut h = Hpcc::new(HpccParams::new(Rate(C), T));
        h.on_ack_int(0, 0, 1000, &[hop_at(1, 1.0, 25_000)]);
        assert!(close(h.w, BDP));
        // One RTT later: the hop sent at line rate (txRate/B = 1) with 25 KB queued
        // (25000*8 / (100e9 * 10e-6) = 0.2): u = 1.2; tau = T so U = u exactly.
        h.on_ack_int(T, 2000, 3000, &[hop_at(2, 1.0, 25_000)]);
        assert!(close(h.u, 1.2), "U = {}", h.u);
        let expected = BDP / (1.2 / 0.95) + W_AI; // 99_020.83 bytes
        assert!(close(h.w, expected), "{} vs {}", h.w, expected);
        assert!(close(h.wc, expected));
        assert_eq!(h.inc_stage, 0);
        assert!(close(h.rate_bps(), expected * 8.0 / 10e-6));
        assert_eq!(h.window(), Some(99_021));
    }

    #[test]
    fn below_eta_additive_then_multiplicative_after_max_stage() {
        let mut h = Hpcc::new(HpccParams::new(Rate(C), T));
        h.w = 20_000.0;
        h.wc = 20_000.0;
        h.on_ack_int(0, 0, 1000, &[hop_at(1, 0.5, 0)]);
        let mut wc = 20_000.0;
        // Each ACK passes lastUpdateSeq: a reference update. U = 0.5 < eta.
        for k in 2..=6u64 {
            h.on_ack_int(k * T, k * 1000, k * 1000, &[hop_at(k, 0.5, 0)]);
            wc += W_AI;
            assert!(close(h.u, 0.5));
            assert!(close(h.wc, wc), "stage {}: {} vs {}", k - 1, h.wc, wc);
            assert_eq!(h.inc_stage, (k - 1) as u32);
        }
        // Five additive rounds done: the sixth is multiplicative, W = Wc / (0.5/0.95) + W_AI.
        h.on_ack_int(7 * T, 7000, 7000, &[hop_at(7, 0.5, 0)]);
        let expected = wc / (0.5 / 0.95) + W_AI; // 20_312.5 * 1.9 + 62.5
        assert!(close(h.wc, expected), "{} vs {}", h.wc, expected);
        assert_eq!(h.inc_stage, 0);
        // And then additive again.
        h.on_ack_int(8 * T, 8000, 8000, &[hop_at(8, 0.5, 0)]);
        assert!(close(h.wc, expected + W_AI));
    }

    #[test]
    fn reference_window_moves_only_when_ack_passes_last_update_seq() {
        let mut h = Hpcc::new(HpccParams::new(Rate(C), T));
        h.on_ack_int(0, 0, 10_000, &[hop_at(1, 1.0, 25_000)]);
        assert_eq!(h.last_update_seq, Some(10_000));
        // ack 5000 <= 10000: fast react, W moves against Wc = BDP but Wc stays.
        h.on_ack_int(T, 5_000, 20_000, &[hop_at(2, 1.0, 25_000)]);
        let w1 = BDP / (1.2 / 0.95) + W_AI;
        assert!(close(h.w, w1));
        assert!(close(h.wc, BDP));
        assert_eq!(h.last_update_seq, Some(10_000));
        // ack 10000 is not past 10000 either: another reaction from the same Wc (U is
        // already 1.2, so the same W), not a compounded cut.
        h.on_ack_int(2 * T, 10_000, 20_000, &[hop_at(3, 1.0, 25_000)]);
        assert!(close(h.w, w1));
        assert!(close(h.wc, BDP));
        assert_eq!(h.updates, 0);
        // ack 10001 passes it: the reference update commits W and moves lastUpdateSeq to
        // snd_nxt.
        h.on_ack_int(3 * T, 10_001, 30_000, &[hop_at(4, 1.0, 25_000)]);
        assert!(close(h.wc, w1));
        assert_eq!(h.last_update_seq, Some(30_000));
        assert_eq!(h.updates, 1);
        // Without fast react, ACKs inside the round do nothing.
        let p = HpccParams {
            fast_react: false,
            ..HpccParams::new(Rate(C), T)
        };
        let mut h = Hpcc::new(p);
        h.on_ack_int(0, 0, 10_000, &[hop_at(1, 1.0, 25_000)]);
        h.on_ack_int(T, 5_000, 20_000, &[hop_at(2, 1.0, 25_000)]);
        assert!(close(h.w, BDP));
    }

    #[test]
    fn most_loaded_hop_and_short_intervals() {
        let mut h = Hpcc::new(HpccParams::new(Rate(C), T));
        let a = |k: u64, load: f64| IntHop {
            rate_bps: C,
            ts: k * T / 4,
            tx_bytes: (k as f64 * load * BDP / 4.0) as u64,
            qlen: 0,
        };
        h.on_ack_int(0, 0, 1, &[a(1, 0.3), a(1, 0.9), a(1, 0.6)]);
        // A quarter RTT later: the 0.9 hop dominates; tau = T/4: U = 0.75 * 1 + 0.25 * 0.9.
        h.on_ack_int(T / 4, 2, 3, &[a(2, 0.3), a(2, 0.9), a(2, 0.6)]);
        assert!(close(h.u, 0.75 + 0.25 * 0.9), "U = {}", h.u);
        // More hops than the INT header holds: only the first five are read.
        let six = [a(3, 0.1); 6];
        h.on_ack_int(T / 2, 4, 5, &six);
        assert_eq!(h.n_prev, MAX_INT_HOPS);
    }

    /// Two HPCC flows share one 100G bottleneck in a fluid model: the queue integrates the
    /// sum of the sending rates minus the capacity, and the link's INT record (rate, time,
    /// transmitted bytes, queue) reaches each sender one base RTT later with the ACK of the
    /// data sent then. Flow 0 starts alone; flow 1 joins at line rate after 1 ms, which
    /// overloads the link and builds a queue. The pair settles at total utilisation ~eta
    /// with no standing queue.
    #[test]
    fn closed_loop_two_flows_settle_at_eta_with_empty_queue() {
        let p = HpccParams::new(Rate(C), T);
        let mut flows = [Hpcc::new(p), Hpcc::new(p)];
        let dt: Time = 100 * NS;
        let lag = (T / dt) as usize;
        let start = [0, (MS / dt) as usize];
        let c_bytes_per_step = C as f64 * dt as f64 / SEC as f64 / 8.0;
        let mut q = 0.0f64;
        let mut tx = 0.0f64;
        let mut snd = [0.0f64; 2];
        // (snd per flow, INT record) after each step.
        let mut hist: Vec<([f64; 2], IntHop)> = Vec::new();
        let steps = (8 * MS / dt) as usize;
        let window = (MS / dt) as usize;
        let (mut tx_at_window, mut q_sum, mut q_max, mut q_peak) = (0.0, 0.0, 0.0f64, 0.0f64);
        for k in 0..steps {
            let now = k as Time * dt;
            if k == steps - window {
                tx_at_window = tx;
            }
            for (i, f) in flows.iter_mut().enumerate() {
                if k >= start[i] + lag {
                    let (sent_then, rec) = hist[k - lag];
                    f.on_ack_int(now, sent_then[i] as u64, snd[i] as u64, &[rec]);
                }
            }
            let mut arrivals = 0.0;
            for (i, f) in flows.iter().enumerate() {
                if k >= start[i] {
                    let bytes = f.rate_bps().min(C as f64) * dt as f64 / SEC as f64 / 8.0;
                    snd[i] += bytes;
                    arrivals += bytes;
                }
            }
            let served = (q + arrivals).min(c_bytes_per_step);
            q = q + arrivals - served;
            tx += served;
            q_peak = q_peak.max(q);
            hist.push((
                snd,
                IntHop {
                    rate_bps: C,
                    ts: now + dt,
                    tx_bytes: tx as u64,
                    qlen: q as u64,
                },
            ));
            if k >= steps - window {
                q_sum += q;
                q_max = q_max.max(q);
            }
        }
        let util = (tx - tx_at_window) / (window as f64 * c_bytes_per_step);
        let q_avg = q_sum / window as f64;
        let (r0, r1) = (flows[0].rate_bps(), flows[1].rate_bps());
        let msg = format!(
            "utilisation {util:.4}, queue avg {q_avg:.0} B, max {q_max:.0} B, \
             peak {q_peak:.0} B, rates {:.2}G {:.2}G",
            r0 / 1e9,
            r1 / 1e9
        );
        // The join overloaded the link for a while: a real queue built up.
        assert!(q_peak > 0.1 * BDP, "{msg}");
        assert!((util - 0.95).abs() <= 0.03, "{msg}");
        // Near-zero queue in the last millisecond.
        assert!(q_avg < 0.01 * BDP && q_max < 0.05 * BDP, "{msg}");
        // Both flows hold a real share.
        assert!(r0 > 0.2 * C as f64 && r1 > 0.2 * C as f64, "{msg}");
    }
}
