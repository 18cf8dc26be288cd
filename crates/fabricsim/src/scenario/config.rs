//! The scenario file's schema: the top level, and the composition of the models'
//! sections.
//!
//! Each model owns the settings of its own section, with their defaults and checks
//! (`[cc.dcqcn]` in [`crate::model::cc::dcqcn`], `[fabric.pfc]` in [`crate::model::fabric::pfc`],
//! `[fabric.reliability]` and `[[fault]]` in [`crate::model::fabric::faults::config`],
//! `[[workload]]` kinds in [`crate::model::workload`], ...); this file only says where each
//! section sits in a scenario file, and re-exports the section types for users outside
//! the crate. Every struct denies unknown fields, so a misspelt key is an error that names
//! it rather than a silently ignored setting. Quantities are strings with units (see
//! [`crate::base::units`]). `fabricsim list` prints every section with its defaults.

use crate::base::param::{Described, Param};
use crate::base::units::serde_units as su;
use crate::base::units::{Time, MS, NS};
use serde::Deserialize;

pub use crate::model::cc::dcqcn::{DcqcnCfg, DcqcnProfile};
pub use crate::model::cc::{CcAlgorithm, CcCfg, CcClassCfg};
pub use crate::model::fabric::ecn::{EcnCfg, EcnProfile};
pub use crate::model::fabric::faults::config::{
    FaultCfg, FaultKind, FecMode, LinkBerCfg, ReliabilityCfg,
};
pub use crate::model::fabric::flow_control::credit::CreditCfg;
pub use crate::model::fabric::pfc::{PfcCfg, PfcScope, PfcThreshold};
pub use crate::model::fabric::security::{SecurityCfg, SecurityMode};
pub use crate::model::fabric::telemetry::tcd::TcdCfg;
pub use crate::model::gse::{GseCfg, GseScheduling};
pub use crate::model::routing::{LbAlgorithm, LoadBalanceCfg};
pub use crate::model::topology::{
    CustomLinkCfg, CustomRouteCfg, CustomTopoCfg, FatTreeCfg, LeafSpineCfg, ThreeTierCfg,
    TopologyCfg, DEFAULT_LINK_DELAY,
};
pub use crate::model::transport::rdma::TransportCfg;
pub use crate::model::workload::{
    CollectiveCfg, CollectiveKind, FlowCfg, HostRef, HostSet, JobGrouping, PoissonCfg, WorkloadCfg,
    DEFAULT_START,
};

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name used in result folders and tables.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text: which document and experiment this reproduces.
    #[serde(default)]
    pub description: Option<String>,
    /// Fabric profile: a named bundle of field values applied where the scenario sets
    /// none ([`super::profile`]; `default` or `ns3`).
    #[serde(default)]
    pub profile: Option<String>,
    /// Seed of every random choice of the run.
    #[serde(default = "d_seed")]
    pub seed: u64,
    /// Runs per sweep point (and variant), each with its own seed derived from `seed`
    /// (the first keeps `seed` itself); above 1 the runs gain a `replicate` coordinate and
    /// `jct.csv` gives the mean and 95 % interval over them.
    #[serde(default = "d_seeds")]
    pub seeds: u32,
    /// The variant `jct.csv`'s ratios divide by (each other variant over it); unset: the
    /// first variant over each other one.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Simulated time after which the run stops, finished or not.
    #[serde(default = "d_max_time", deserialize_with = "su::time")]
    pub max_time: Time,
    /// A run with unfinished flows and no delivered byte for this long is a stall.
    #[serde(default = "d_stall", deserialize_with = "su::time")]
    pub stall_timeout: Time,
    /// The network.
    pub topology: TopologyCfg,
    /// Switch and link behaviour.
    #[serde(default)]
    pub fabric: FabricCfg,
    /// NIC transport.
    #[serde(default)]
    pub transport: TransportCfg,
    /// Congestion control.
    #[serde(default)]
    pub cc: CcCfg,
    /// Traffic: one or more generators whose flows are merged.
    #[serde(default)]
    pub workload: Vec<WorkloadCfg>,
    /// What to record beyond the standard tables.
    #[serde(default)]
    pub record: RecordCfg,
    /// Named variants: each is the base scenario with some fields overridden.
    #[serde(default)]
    pub variants: Vec<VariantCfg>,
    /// Sweep axes: every combination of their values runs, for every variant.
    #[serde(default)]
    pub sweep: Vec<SweepAxisCfg>,
    /// Faults at given times: links or switches going down or up, lane degrade.
    #[serde(default)]
    pub fault: Vec<FaultCfg>,
}

/// One sweep axis: a field and the values it takes, or (no `path`) a list of override
/// tables, each setting several fields at once like a variant's `set` (a "reading" of
/// the experiment that is more than one field), named by `names`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepAxisCfg {
    /// Dotted field path, as for `--set`; unset: every value is a table of
    /// `"dotted.path" = value` overrides.
    #[serde(default)]
    pub path: Option<String>,
    /// Values, in order.
    pub values: Vec<toml::Value>,
    /// Short name used in run names and table columns (default: the path's last part;
    /// required without a path).
    #[serde(default)]
    pub label: Option<String>,
    /// Name of each value in run names and tables (default: the value's text; required
    /// without a path).
    #[serde(default)]
    pub names: Option<Vec<String>>,
}

fn d_seed() -> u64 {
    1
}
fn d_seeds() -> u32 {
    1
}
fn d_max_time() -> Time {
    1_000 * MS
}
fn d_stall() -> Time {
    20 * MS
}

/// One variant of a scenario.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantCfg {
    /// Name used for its result folder.
    pub name: String,
    /// Overrides: dotted field path -> value, applied like `--set`.
    #[serde(default)]
    pub set: toml::Table,
}

/// Switch and link behaviour.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricCfg {
    /// Shared packet buffer per switch.
    #[serde(default = "d_buffer", deserialize_with = "su::bytes")]
    pub buffer: u64,
    /// Ingress-to-egress forwarding latency of a switch: a duration, or a switch preset
    /// of document 002 ([`crate::base::presets::SWITCHES`]: `"sn2410"`, `"sb7800"`, ...).
    #[serde(
        default = "d_sw_lat",
        deserialize_with = "crate::base::presets::serde_presets::latency"
    )]
    pub switch_latency: Time,
    /// Priority flow control; off makes the fabric lossy (drop-tail).
    #[serde(default)]
    pub pfc: PfcCfg,
    /// Credit-based flow control with virtual channels and cut-through (instead of PFC).
    #[serde(default)]
    pub credit: CreditCfg,
    /// ECN marking.
    #[serde(default)]
    pub ecn: EcnCfg,
    /// Load balancing of switches among equal-cost next hops.
    #[serde(default)]
    pub load_balance: LoadBalanceCfg,
    /// Link-layer security on every link (custom links may override it).
    #[serde(default)]
    pub security: SecurityCfg,
    /// GSE (Global Scheduled Ethernet) settings, used with `load_balance.algorithm =
    /// "pktc"`.
    #[serde(default)]
    pub gse: GseCfg,
    /// TCD ternary congestion detection at switch egress queues (marks CE / UE for ACC).
    #[serde(default)]
    pub tcd: TcdCfg,
    /// INT framing and precision (HPCC).
    #[serde(default)]
    pub int: crate::model::fabric::telemetry::int::IntCfg,
    /// DR switches of a multi-campus topology (long haul): who sends CNPs.
    #[serde(default)]
    pub dr: crate::model::fabric::roles::dr::DrCfg,
    /// Bit errors, FEC, link-level retransmission, route re-convergence.
    #[serde(default)]
    pub reliability: ReliabilityCfg,
}

fn d_buffer() -> u64 {
    32_000_000
}
fn d_sw_lat() -> Time {
    300 * NS
}

impl Default for FabricCfg {
    fn default() -> Self {
        FabricCfg {
            buffer: d_buffer(),
            switch_latency: d_sw_lat(),
            pfc: PfcCfg::default(),
            credit: CreditCfg::default(),
            ecn: EcnCfg::default(),
            load_balance: LoadBalanceCfg::default(),
            security: SecurityCfg::default(),
            gse: GseCfg::default(),
            tcd: TcdCfg::default(),
            int: Default::default(),
            dr: Default::default(),
            reliability: ReliabilityCfg::default(),
        }
    }
}

/// Optional time series.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordCfg {
    /// Sample every switch egress queue this often (`queues.csv`, non-empty queues only).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub queue_interval: Option<Time>,
    /// Sample every active flow's sending rate and goodput this often (`rates.csv`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub rate_interval: Option<Time>,
    /// Time to cut and time to fair share after a flow joins (`convergence.csv`); samples
    /// rates every 10 us unless `rate_interval` says otherwise.
    #[serde(default)]
    pub convergence: Option<crate::model::record::convergence::ConvergenceCfg>,
    /// Goodput of chosen flows and queues of chosen ports over a time window
    /// (`window.csv`); needs `rate_interval` for flows and `queue_interval` for ports.
    #[serde(default)]
    pub window: Option<crate::model::record::window::WindowCfg>,
    /// Frames the chosen ports send, written as `capture.pcapng` ([`crate::model::capture`]).
    #[serde(default)]
    pub pcap: Option<crate::model::capture::PcapCfg>,
    /// The trace jobs' spans, written as `timeline.json` as the run goes
    /// ([`crate::model::record::timeline`]).
    #[serde(default)]
    pub timeline: Option<crate::model::record::timeline::TimelineCfg>,
    /// Each switch's buffer: size, peak use, headroom set aside and the most of it ever
    /// used (`buffers.csv`).
    #[serde(default)]
    pub buffers: bool,
}

impl Described for Scenario {
    const ABOUT: &'static str = "the top level of a scenario file";
    fn params() -> Vec<Param> {
        vec![
            Param::unset("name", "short name used in result folders and tables"),
            Param::unset(
                "description",
                "which document and experiment this reproduces",
            ),
            Param::plain("seed", d_seed(), "seed of every random choice of the run"),
            Param::plain(
                "seeds",
                d_seeds(),
                "runs per sweep point, each with a seed derived from `seed` (mean and 95 % \
                 interval in jct.csv)",
            ),
            Param::unset(
                "baseline",
                "variant jct.csv's ratios divide by; unset: the first over each other",
            ),
            Param::time(
                "max_time",
                d_max_time(),
                "the run stops here, finished or not (at least 1ns)",
            ),
            Param::time(
                "stall_timeout",
                d_stall(),
                "unfinished flows and no byte delivered for this long: a stall (at least 1us)",
            ),
            Param::new(
                "profile",
                "\"default\"",
                "fabric profile: fields it sets where the file sets none (profiles below)",
            ),
            Param::new("topology", "required", "[topology], below"),
            Param::section("fabric", "[fabric]"),
            Param::section("transport", "[transport]"),
            Param::section("cc", "[cc]"),
            Param::new("workload", "required", "[[workload]] entries, below"),
            Param::section("record", "[record]"),
            Param::new("variants", "[]", "[[variants]], below"),
            Param::new("sweep", "[]", "[[sweep]] axes, below"),
            Param::new("fault", "[]", "[[fault]] entries, below"),
        ]
    }
}

impl Described for FabricCfg {
    const ABOUT: &'static str = "switch and link behaviour";
    fn params() -> Vec<Param> {
        vec![
            Param::bytes("buffer", d_buffer(), "shared packet buffer per switch"),
            Param::time(
                "switch_latency",
                d_sw_lat(),
                format!(
                    "ingress-to-egress forwarding latency, or a switch preset (document 002's figures): {}",
                    crate::base::presets::switch_names()
                ),
            ),
            Param::section("pfc", "[fabric.pfc]"),
            Param::section("credit", "[fabric.credit]"),
            Param::section("ecn", "[fabric.ecn]"),
            Param::section("load_balance", "[fabric.load_balance]"),
            Param::section("security", "[fabric.security]"),
            Param::section("gse", "[fabric.gse]"),
            Param::section("tcd", "[fabric.tcd]"),
            Param::section("int", "[fabric.int]"),
            Param::section("dr", "[fabric.dr]"),
            Param::section("reliability", "[fabric.reliability]"),
        ]
    }
}

impl Described for RecordCfg {
    const ABOUT: &'static str = "optional time series and analyses";
    fn params() -> Vec<Param> {
        vec![
            Param::unset(
                "queue_interval",
                "sample switch egress queues (queues.csv); at least a 64 B frame's time at \
                 the fastest link, and 1ns",
            ),
            Param::unset(
                "rate_interval",
                "sample flow sending rates and goodput (rates.csv); at least a 64 B frame's \
                 time at the fastest link, and 1ns",
            ),
            Param::unset(
                "convergence",
                "[record.convergence], below (convergence.csv)",
            ),
            Param::unset("window", "[record.window], below (window.csv)"),
            Param::unset("pcap", "[record.pcap], below (capture.pcapng)"),
            Param::unset(
                "timeline",
                "[record.timeline], below (timeline.json: trace jobs' spans for Perfetto)",
            ),
            Param::plain(
                "buffers",
                false,
                "each switch's buffer: size, peak use, PFC headroom set aside and most used (buffers.csv)",
            ),
        ]
    }
}

impl Described for VariantCfg {
    const ABOUT: &'static str = "the scenario with some fields overridden; one run each";
    fn params() -> Vec<Param> {
        vec![
            Param::required("name", "names the variant's result folder"),
            Param::new(
                "set",
                "{}",
                "{ \"dotted.path\" = value, ... } applied like --set",
            ),
        ]
    }
}

impl Described for SweepAxisCfg {
    const ABOUT: &'static str = "a field and its values: every combination runs, for every variant";
    fn params() -> Vec<Param> {
        vec![
            Param::unset(
                "path",
                "dotted field path, as for --set; unset: values are override tables",
            ),
            Param::required(
                "values",
                "the values, in order (no path: { \"dotted.path\" = value, ... } each)",
            ),
            Param::unset(
                "label",
                "name in run names and tables; unset: the path's last part",
            ),
            Param::unset(
                "names",
                "name of each value in run names and tables; unset: the value's text",
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::param::assert_describes_fields;

    #[test]
    fn listings_name_every_field() {
        assert_describes_fields::<Scenario>();
        assert_describes_fields::<FabricCfg>();
        assert_describes_fields::<RecordCfg>();
        assert_describes_fields::<VariantCfg>();
        assert_describes_fields::<SweepAxisCfg>();
        assert_describes_fields::<PfcCfg>();
        assert_describes_fields::<CreditCfg>();
        assert_describes_fields::<EcnCfg>();
        assert_describes_fields::<SecurityCfg>();
        assert_describes_fields::<GseCfg>();
        assert_describes_fields::<TcdCfg>();
        assert_describes_fields::<crate::model::fabric::roles::dr::DrCfg>();
        assert_describes_fields::<ReliabilityCfg>();
        assert_describes_fields::<FaultCfg>();
        assert_describes_fields::<crate::model::workload::channel_window::WindowCfg>();
        assert_describes_fields::<TransportCfg>();
        assert_describes_fields::<LoadBalanceCfg>();
        assert_describes_fields::<CcCfg>();
        assert_describes_fields::<CcClassCfg>();
        assert_describes_fields::<crate::model::record::convergence::ConvergenceCfg>();
        assert_describes_fields::<crate::model::record::window::WindowCfg>();
        assert_describes_fields::<crate::model::capture::PcapCfg>();
    }
}
