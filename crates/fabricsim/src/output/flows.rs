//! `flows.csv`: one row per flow of the workload, finished or not.

use super::cells::{CsvOut, Fixed, Ns};
use super::{always, RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "flows.csv",
    about: "one row per flow: hosts, size, start, finish, FCT, ideal FCT, slowdown \
            (finish, FCT and slowdown empty for an unfinished flow)",
    scope: Scope::Run {
        present: always,
        write,
    },
};

#[derive(Default, Serialize)]
struct FlowRow {
    flow_id: usize,
    src: u32,
    dst: u32,
    size_bytes: u64,
    start_ns: Ns,
    finish_ns: Option<Ns>,
    fct_ns: Option<Ns>,
    ideal_fct_ns: Ns,
    slowdown: Option<Fixed<6>>,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    out.table(sim.nics.flows.iter().enumerate().map(|(i, f)| {
        let ideal = sim.ideal[i];
        let fct = f.finish.map(|t| t - f.spec.start);
        FlowRow {
            flow_id: i,
            src: f.spec.src,
            dst: f.spec.dst,
            size_bytes: f.spec.size,
            start_ns: Ns(f.spec.start),
            finish_ns: f.finish.map(Ns),
            fct_ns: fct.map(Ns),
            ideal_fct_ns: Ns(ideal),
            slowdown: fct.map(|t| Fixed(t as f64 / ideal as f64)),
        }
    }))
}
