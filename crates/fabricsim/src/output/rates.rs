//! `rates.csv`: the sampled sending rate and goodput of active flows
//! (`[record] rate_interval`).

use super::cells::{CsvOut, Fixed, Ns};
use super::{RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "rates.csv",
    about: "congestion controller's rate and goodput of every active flow at every sample \
            (`[record] rate_interval`)",
    scope: Scope::Run {
        present: |r| r.sim.ctx.params.rate_interval.is_some(),
        write,
    },
};

#[derive(Default, Serialize)]
struct RateRow {
    time_ns: Ns,
    flow_id: u32,
    rate_gbps: Fixed<4>,
    goodput_gbps: Fixed<4>,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    out.table(r.sim.record.rate_samples.iter().map(|s| RateRow {
        time_ns: Ns(s.t),
        flow_id: s.flow,
        rate_gbps: Fixed(s.rate_bps / 1e9),
        goodput_gbps: Fixed(s.goodput_bps / 1e9),
    }))
}
