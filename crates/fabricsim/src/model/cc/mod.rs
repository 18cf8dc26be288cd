//! Congestion control at the sending NIC.
//!
//! Each algorithm is one file implementing [`CongestionControl`], whose hooks default to
//! doing nothing, and is selected through the [`AnyCc`] enum (no boxing, so the call on
//! every packet is a match the compiler can inline). A controller exposes a sending rate
//! (the NIC paces packets at it) and optionally a window of bytes in flight.
//!
//! The file also owns the algorithm's `[cc.<name>]` settings (serde, defaults, checks) and
//! its [`registry::CcEntry`], through which scenarios name it and flows get their
//! controllers. Adding an algorithm `foo`: `cc/foo.rs` with `FooCfg`, the controller and
//! `pub static ENTRY: CcEntry`; here `pub mod foo;`, a variant `Foo(foo::Foo)` in
//! `any_cc!` and `pub foo: foo::FooCfg` in [`CcCfg`]; and `&foo::ENTRY` in
//! [`registry::ALGORITHMS`].

pub mod acc;
pub mod dcqcn;
pub mod hpcc;
pub mod line_rate;
pub mod registry;
pub mod timely;

pub use registry::{BaseRtt, CcAlgorithm, CcEntry, FlowContext, ALGORITHMS};

use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use crate::model::fabric::telemetry::int::IntHop;
use crate::model::fabric::telemetry::tcd::TcdMark;
use serde::Deserialize;

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

/// Matches `$self` over the listed [`AnyCc`] variants, binding the controller to `$c`.
macro_rules! dispatch {
    ($self:ident, [$($Variant:ident),*], $c:ident => $e:expr) => {
        match $self {
            $( AnyCc::$Variant($c) => $e, )*
        }
    };
}

/// Declares [`AnyCc`], one variant per controller type, and its [`CongestionControl`]
/// impl, each method a match over the variants.
macro_rules! any_cc {
    ($( $(#[$doc:meta])* $Variant:ident($Ctl:ty), )*) => {
        /// Any congestion controller.
        #[derive(Clone, Debug)]
        pub enum AnyCc {
            $( $(#[$doc])* $Variant($Ctl), )*
        }

        impl CongestionControl for AnyCc {
            #[inline]
            fn rate_bps(&self) -> f64 {
                dispatch!(self, [$($Variant),*], c => c.rate_bps())
            }
            #[inline]
            fn window(&self) -> Option<u64> {
                dispatch!(self, [$($Variant),*], c => c.window())
            }
            fn on_start(&mut self, now: Time) {
                dispatch!(self, [$($Variant),*], c => c.on_start(now))
            }
            #[inline]
            fn on_send(&mut self, now: Time, bytes: u64) {
                dispatch!(self, [$($Variant),*], c => c.on_send(now, bytes))
            }
            #[inline]
            fn on_ack(&mut self, now: Time, ack: &AckInfo) {
                dispatch!(self, [$($Variant),*], c => c.on_ack(now, ack))
            }
            #[inline]
            fn on_ack_int(&mut self, now: Time, ack: &AckInfo, hops: &[IntHop]) {
                dispatch!(self, [$($Variant),*], c => {
                    CongestionControl::on_ack_int(c, now, ack, hops)
                })
            }
            #[inline]
            fn on_cnp(&mut self, now: Time) {
                dispatch!(self, [$($Variant),*], c => c.on_cnp(now))
            }
            #[inline]
            fn wants_int(&self) -> bool {
                dispatch!(self, [$($Variant),*], c => c.wants_int())
            }
            #[inline]
            fn wants_tcd(&self) -> bool {
                dispatch!(self, [$($Variant),*], c => c.wants_tcd())
            }
            #[inline]
            fn hold_until(&self) -> Option<Time> {
                dispatch!(self, [$($Variant),*], c => c.hold_until())
            }
            #[inline]
            fn wants_cnp(&self) -> bool {
                dispatch!(self, [$($Variant),*], c => c.wants_cnp())
            }
            #[inline]
            fn cnp_interval(&self) -> Time {
                dispatch!(self, [$($Variant),*], c => c.cnp_interval())
            }
        }
    };
}

any_cc! {
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

/// Congestion control selection and parameters.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcCfg {
    /// The algorithm of every flow not in a class below (a name of
    /// [`registry::ALGORITHMS`]).
    #[serde(default)]
    pub algorithm: CcAlgorithm,
    /// DCQCN parameters.
    #[serde(default)]
    pub dcqcn: dcqcn::DcqcnCfg,
    /// TIMELY parameters.
    #[serde(default)]
    pub timely: timely::TimelyCfg,
    /// HPCC parameters.
    #[serde(default)]
    pub hpcc: hpcc::HpccCfg,
    /// ACC parameters (also used by `acc_no_halt`).
    #[serde(default)]
    pub acc: acc::AccCfg,
    /// Flow classes with an algorithm of their own (`[[cc.class]]`); the first class a
    /// flow matches decides.
    #[serde(default)]
    pub class: Vec<CcClassCfg>,
}

/// A class of flows that runs its own congestion control.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcClassCfg {
    /// The algorithm of the class's flows.
    pub algorithm: CcAlgorithm,
    /// Flows of this `[[workload]]` entry (0-based index) only.
    #[serde(default)]
    pub workload: Option<usize>,
    /// Flows of at least this many bytes only.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub min_size: Option<u64>,
    /// Flows of fewer than this many bytes only.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub max_size: Option<u64>,
}

impl CcClassCfg {
    /// True if a flow of `size` bytes from workload entry `workload` is in the class.
    pub fn matches(&self, workload: usize, size: u64) -> bool {
        self.workload.is_none_or(|w| w == workload)
            && self.min_size.is_none_or(|m| size >= m)
            && self.max_size.is_none_or(|m| size < m)
    }
}

impl CcCfg {
    /// Checks every algorithm's section and the flow classes; fields are named relative
    /// to `[cc]`. `workloads` is the number of `[[workload]]` entries.
    pub fn validate(&self, workloads: usize) -> Checked {
        let mut checked: Vec<&str> = Vec::new();
        for e in ALGORITHMS {
            // Every section is checked, whichever algorithms the flows run; a section
            // that two algorithms share (acc, acc_no_halt) once.
            if let Some(section) = e.section.filter(|s| !checked.contains(s)) {
                (e.validate)(self).map_err(|err| err.within(section))?;
                checked.push(section);
            }
        }
        for (i, c) in self.class.iter().enumerate() {
            if let Some(w) = c.workload {
                if w >= workloads {
                    return Err(ParamError::new(
                        format!("class[{i}].workload"),
                        format!(
                            "workload entry {w} does not exist: the scenario has {workloads} \
                             (indices start at 0)"
                        ),
                    ));
                }
            }
            if let (Some(lo), Some(hi)) = (c.min_size, c.max_size) {
                if lo >= hi {
                    return Err(ParamError::new(
                        format!("class[{i}].min_size"),
                        "must be below max_size (the class is [min_size, max_size))",
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Described for CcCfg {
    const ABOUT: &'static str = "congestion control of every flow, or of classes of flows";
    fn params() -> Vec<Param> {
        let mut v = vec![
            Param::word(
                "algorithm",
                CcAlgorithm::default().name(),
                format!(
                    "{}: every flow not in a class",
                    registry::names()
                        .iter()
                        .map(|n| format!("\"{n}\""))
                        .collect::<Vec<_>>()
                        .join(" | ")
                ),
            ),
            Param::new(
                "class",
                "[]",
                "[[cc.class]]: flows matching the first class run its algorithm",
            ),
        ];
        let mut sections: Vec<&'static str> = Vec::new();
        for e in ALGORITHMS {
            if let Some(s) = e.section.filter(|s| !sections.contains(s)) {
                sections.push(s);
                v.push(Param::new(s, "table", format!("[cc.{s}], below")));
            }
        }
        v
    }
}

impl Described for CcClassCfg {
    const ABOUT: &'static str = "a class of flows running its own algorithm";
    fn params() -> Vec<Param> {
        vec![
            Param::required("algorithm", "the class's algorithm"),
            Param::unset(
                "workload",
                "flows of this [[workload]] entry (index from 0)",
            ),
            Param::unset("min_size", "flows of at least this many bytes"),
            Param::unset("max_size", "flows of fewer than this many bytes"),
        ]
    }
}

/// True if `v` is set and outside (0, 1].
fn not_unit_fraction(v: Option<f64>) -> bool {
    v.is_some_and(|x| !(x > 0.0 && x <= 1.0))
}
