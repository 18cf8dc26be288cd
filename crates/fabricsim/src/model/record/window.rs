//! `[record.window]`: the time window whose flow goodput and port queues are reported
//! after the run (the analysis: `crate::analysis::window`), and the window resolved against the
//! built model (by the build, `sim/resolve.rs`).

use crate::base::units::serde_units as su;
use crate::base::units::Time;
use serde::Deserialize;

/// `[record.window]`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WindowCfg {
    /// Start of the window.
    #[serde(deserialize_with = "su::time")]
    pub from: Time,
    /// End of the window.
    #[serde(deserialize_with = "su::time")]
    pub to: Time,
    /// Flow ids whose goodput to report (default: none).
    #[serde(default)]
    pub flows: Vec<u32>,
    /// Switch egress ports whose queue to report, as `"<switch>:<port>"` with the port's
    /// local index (as in `ports.csv`).
    #[serde(default)]
    pub ports: Vec<String>,
}

impl crate::base::param::Described for WindowCfg {
    const ABOUT: &'static str = "flow goodput and port queues over a time window (window.csv)";
    fn params() -> Vec<crate::base::param::Param> {
        use crate::base::param::Param;
        vec![
            Param::required("from", "start of the window"),
            Param::required("to", "end of the window"),
            Param::new(
                "flows",
                "[]",
                "flow ids whose goodput to report (needs rate_interval)",
            ),
            Param::new(
                "ports",
                "[]",
                "\"switch:port\" egress queues to report (needs queue_interval)",
            ),
        ]
    }
}

/// The window resolved against a built simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowSpec {
    /// Start.
    pub from: Time,
    /// End (at most the run's `max_time`).
    pub to: Time,
    /// The `to` the scenario asked for, when it lay beyond `max_time` and was clamped.
    pub clamped_from: Option<Time>,
    /// Flow ids.
    pub flows: Vec<u32>,
    /// (name as given, port id).
    pub ports: Vec<(String, u32)>,
}
