//! Congestion control at the sending NIC.
//!
//! Each algorithm is one file implementing [`CongestionControl`], whose hooks default to
//! doing nothing, and is selected through the [`AnyCc`] enum (no boxing, so the call on
//! every packet is a match the compiler can inline). A controller exposes a sending rate
//! (the NIC paces packets at it) and optionally a window of bytes in flight.
//!
//! Adding an algorithm: a new file with a config type that builds the controller, a
//! variant of [`AnyCc`] and of `CcAlgorithm` in the scenario schema.

pub mod acc;
pub mod dcqcn;
pub mod hpcc;
pub mod line_rate;
pub mod timely;

use crate::telemetry::int::IntHop;
use crate::telemetry::tcd::TcdMark;
use crate::units::Time;

/// What an ACK tells the sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckInfo {
    /// Bytes newly acknowledged.
    pub newly_acked: u64,
    /// Cumulative ack point.
    pub ack_seq: u64,
    /// The acked packet's ECN echo (1 if it was CE-marked).
    pub ecn_echo: u8,
    /// Round-trip time sample (send of the acked packet to arrival of this ACK).
    pub rtt: Time,
    /// The TCD mark of the acked packet, echoed.
    pub mark: TcdMark,
    /// Wire bytes (payload plus headers) newly acknowledged.
    pub newly_acked_wire: u64,
    /// Wire bytes still in flight after this ACK.
    pub inflight_wire: u64,
    /// The sender's next sequence number when the ACK arrived.
    pub snd_nxt: u64,
}

/// The hooks a congestion controller implements.
pub trait CongestionControl {
    /// Current sending rate in bits per second.
    fn rate_bps(&self) -> f64;
    /// Maximum bytes in flight, if the algorithm is window-based.
    fn window(&self) -> Option<u64> {
        None
    }
    /// The flow starts sending at `now` (its timers begin here). A flow that continues a
    /// queue pair's earlier flow keeps that flow's state and gets this call too.
    fn on_start(&mut self, _now: Time) {}
    /// A data packet of `bytes` (wire) is being sent at `now`.
    fn on_send(&mut self, _now: Time, _bytes: u64) {}
    /// An ACK arrived.
    fn on_ack(&mut self, _now: Time, _ack: &AckInfo) {}
    /// An ACK echoing the INT records `hops` of the acked packet arrived (called after
    /// [`CongestionControl::on_ack`], for algorithms that ask for INT).
    fn on_ack_int(&mut self, _now: Time, _ack: &AckInfo, _hops: &[IntHop]) {}
    /// A congestion notification packet arrived.
    fn on_cnp(&mut self, _now: Time) {}
    /// Whether data packets of this flow collect INT records at every switch egress.
    fn wants_int(&self) -> bool {
        false
    }
    /// Whether the flow reads TCD marks (switches must run TCD).
    fn wants_tcd(&self) -> bool {
        false
    }
    /// The sender sends nothing of this flow before this time (a source halt), if set.
    fn hold_until(&self) -> Option<Time> {
        None
    }
    /// Whether receivers should return CNPs for CE-marked packets of this flow.
    fn wants_cnp(&self) -> bool {
        false
    }
    /// Receiver-side minimum gap between CNPs of one flow (0: one per CE-marked packet).
    fn cnp_interval(&self) -> Time {
        0
    }
}

/// Any congestion controller.
#[derive(Clone, Debug)]
pub enum AnyCc {
    /// Line rate, no reaction.
    LineRate(line_rate::LineRate),
    /// DCQCN.
    Dcqcn(dcqcn::Dcqcn),
    /// TIMELY.
    Timely(timely::Timely),
    /// HPCC.
    Hpcc(hpcc::Hpcc),
    /// ACC (with or without halt).
    Acc(acc::Acc),
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyCc::LineRate($c) => $e,
            AnyCc::Dcqcn($c) => $e,
            AnyCc::Timely($c) => $e,
            AnyCc::Hpcc($c) => $e,
            AnyCc::Acc($c) => $e,
        }
    };
}

impl CongestionControl for AnyCc {
    #[inline]
    fn rate_bps(&self) -> f64 {
        dispatch!(self, c => c.rate_bps())
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        dispatch!(self, c => c.window())
    }
    fn on_start(&mut self, now: Time) {
        dispatch!(self, c => c.on_start(now))
    }
    #[inline]
    fn on_send(&mut self, now: Time, bytes: u64) {
        dispatch!(self, c => c.on_send(now, bytes))
    }
    #[inline]
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        dispatch!(self, c => c.on_ack(now, ack))
    }
    #[inline]
    fn on_ack_int(&mut self, now: Time, ack: &AckInfo, hops: &[IntHop]) {
        dispatch!(self, c => CongestionControl::on_ack_int(c, now, ack, hops))
    }
    #[inline]
    fn on_cnp(&mut self, now: Time) {
        dispatch!(self, c => c.on_cnp(now))
    }
    #[inline]
    fn wants_int(&self) -> bool {
        dispatch!(self, c => c.wants_int())
    }
    #[inline]
    fn wants_tcd(&self) -> bool {
        dispatch!(self, c => c.wants_tcd())
    }
    #[inline]
    fn hold_until(&self) -> Option<Time> {
        dispatch!(self, c => c.hold_until())
    }
    #[inline]
    fn wants_cnp(&self) -> bool {
        dispatch!(self, c => c.wants_cnp())
    }
    #[inline]
    fn cnp_interval(&self) -> Time {
        dispatch!(self, c => c.cnp_interval())
    }
}

/// Checks the parameters of every algorithm and the flow classes of `[cc]` (the DCQCN
/// block is checked with the fabric); `workloads` is the number of `[[workload]]` entries.
pub fn validate(
    cc: &crate::scenario::config::CcCfg,
    workloads: usize,
    file: &str,
) -> Result<(), crate::scenario::ScenarioError> {
    use crate::scenario::ScenarioError;
    let e = |field: &str, m: &str| Err(ScenarioError::field(file, field, m));
    let frac = |v: Option<f64>| v.is_some_and(|x| !(x > 0.0 && x <= 1.0));
    let pos_rate = |v: Option<crate::units::Rate>| v.is_some_and(|r| r.0 == 0);
    let t = &cc.timely;
    if frac(t.alpha) {
        return e("cc.timely.alpha", "an EWMA gain in (0, 1]");
    }
    if frac(t.beta) {
        return e("cc.timely.beta", "a decrease factor in (0, 1]");
    }
    if t.min_rtt == Some(0) {
        return e(
            "cc.timely.min_rtt",
            "must be positive (it divides the gradient)",
        );
    }
    let (lo, hi) = (
        t.t_low.unwrap_or(50 * crate::units::US),
        t.t_high.unwrap_or(500 * crate::units::US),
    );
    if lo >= hi {
        return e(
            "cc.timely.t_low",
            "must be below t_high (defaults 50us and 500us)",
        );
    }
    for (f, r) in [
        ("cc.timely.delta", t.delta),
        ("cc.timely.hai", t.hai),
        ("cc.timely.min_rate", t.min_rate),
    ] {
        if pos_rate(r) {
            return e(f, "must be positive");
        }
    }
    let h = &cc.hpcc;
    if frac(h.eta) {
        return e("cc.hpcc.eta", "a target utilisation in (0, 1]");
    }
    if h.base_rtt == Some(0) {
        return e("cc.hpcc.base_rtt", "must be positive");
    }
    if h.expected_flows == Some(0) {
        return e("cc.hpcc.expected_flows", "must be at least 1");
    }
    if h.w_ai == Some(0) {
        return e("cc.hpcc.w_ai", "must be positive");
    }
    for (f, r) in [("cc.hpcc.r_ai", h.r_ai), ("cc.hpcc.min_rate", h.min_rate)] {
        if pos_rate(r) {
            return e(f, "must be positive");
        }
    }
    let a = &cc.acc;
    if a.period == Some(0) {
        return e("cc.acc.period", "must be positive");
    }
    if a.base_rtt == Some(0) {
        return e("cc.acc.base_rtt", "must be positive");
    }
    if frac(a.ce_threshold) {
        return e("cc.acc.ce_threshold", "a fraction of ACKs in (0, 1]");
    }
    if a.fast_factor.is_some_and(|f| !(f >= 1.0 && f.is_finite())) {
        return e("cc.acc.fast_factor", "a step multiplier of at least 1");
    }
    if a.rate_weight.is_some_and(|w| !(w >= 0.0 && w.is_finite())) {
        return e(
            "cc.acc.rate_weight",
            "a non-negative weight (0: plain additive steps)",
        );
    }
    for (f, r) in [("cc.acc.r_ai", a.r_ai), ("cc.acc.min_rate", a.min_rate)] {
        if pos_rate(r) {
            return e(f, "must be positive");
        }
    }
    for (i, c) in cc.class.iter().enumerate() {
        if let Some(w) = c.workload {
            if w >= workloads {
                return Err(ScenarioError::field(
                    file,
                    format!("cc.class[{i}].workload"),
                    format!(
                        "workload entry {w} does not exist: the scenario has {workloads} \
                         (indices start at 0)"
                    ),
                ));
            }
        }
        if let (Some(lo), Some(hi)) = (c.min_size, c.max_size) {
            if lo >= hi {
                return Err(ScenarioError::field(
                    file,
                    format!("cc.class[{i}].min_size"),
                    "must be below max_size (the class is [min_size, max_size))",
                ));
            }
        }
    }
    Ok(())
}
