//! `convergence.csv`: time to cut and to fair share after a join, per flow and for all
//! flows (`[record.convergence]`; the analysis is [`crate::analysis::convergence`]).

use super::cells::{CsvOut, Fixed};
use super::{RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "convergence.csv",
    about: "per flow, then `all`: rate at the join, time to cut and to fair share after \
            it (`[record.convergence]`)",
    scope: Scope::Run {
        present: |r| r.summary.convergence.is_some(),
        write,
    },
};

#[derive(Default, Serialize)]
struct ConvergenceRow {
    /// A flow id, or `all`.
    flow_id: String,
    rate_at_join_gbps: Option<Fixed<4>>,
    time_to_cut_ns: Option<Fixed<3>>,
    time_to_fair_ns: Option<Fixed<3>>,
    fair_share_gbps: Fixed<4>,
    join_ns: Fixed<3>,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let Some(c) = &r.summary.convergence else {
        return Ok(());
    };
    let row =
        |flow_id: String, rate: Option<f64>, cut: Option<f64>, fair: Option<f64>| ConvergenceRow {
            flow_id,
            rate_at_join_gbps: rate.map(Fixed),
            time_to_cut_ns: cut.map(Fixed),
            time_to_fair_ns: fair.map(Fixed),
            fair_share_gbps: Fixed(c.fair_share_gbps),
            join_ns: Fixed(c.join_ns),
        };
    let flows = c.per_flow.iter().map(|f| {
        row(
            f.flow.to_string(),
            f.rate_at_join_gbps,
            f.time_to_cut_ns,
            f.time_to_fair_ns,
        )
    });
    let all = row("all".into(), None, c.time_to_cut_ns, c.time_to_fair_ns);
    out.table(flows.chain(std::iter::once(all)))
}
