//! `[record.convergence]`: the flows whose convergence to their fair share is analysed
//! after the run (the analysis: `crate::analysis::convergence`), and the settings resolved against
//! the built model (by the build, `sim/resolve.rs`).

use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, MS};
use serde::Deserialize;

/// `[record.convergence]`: which flows share the bottleneck and what counts as converged.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConvergenceCfg {
    /// Flow ids sharing the bottleneck (default: every flow).
    #[serde(default)]
    pub flows: Option<Vec<u32>>,
    /// When the joining flow starts (default: the latest start among `flows`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub join: Option<Time>,
    /// Fair share per flow (default: the line rate of the first flow's receiving NIC divided
    /// by the number of flows).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub fair_share: Option<Rate>,
    /// Relative band around the fair share, and the relative drop that counts as a cut
    /// (default 0.1).
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// How long the rates must stay in the band (default 1 ms).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub hold: Option<Time>,
}

impl crate::base::param::Described for ConvergenceCfg {
    const ABOUT: &'static str =
        "time to cut and to fair share after a flow joins (convergence.csv)";
    fn params() -> Vec<crate::base::param::Param> {
        use crate::base::param::Param;
        vec![
            Param::unset(
                "flows",
                "flow ids sharing the bottleneck; unset: every flow",
            ),
            Param::unset(
                "join",
                "when the joining flow starts; unset: the latest start",
            ),
            Param::unset(
                "fair_share",
                "per flow; unset: the first flow's receiving NIC rate / flows",
            ),
            Param::plain(
                "tolerance",
                DEFAULT_TOLERANCE,
                "band around the fair share, and the drop that counts as a cut",
            ),
            Param::time(
                "hold",
                DEFAULT_HOLD,
                "how long the rates must stay in the band",
            ),
        ]
    }
}

/// Default tolerance.
pub const DEFAULT_TOLERANCE: f64 = 0.1;
/// Default hold time.
pub const DEFAULT_HOLD: Time = MS;

/// The analysis resolved against a built simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvergenceSpec {
    /// Flows sharing the bottleneck.
    pub flows: Vec<u32>,
    /// Join time.
    pub join: Time,
    /// Fair share per flow, bit/s.
    pub fair_bps: f64,
    /// Relative tolerance.
    pub tolerance: f64,
    /// Hold time.
    pub hold: Time,
}
