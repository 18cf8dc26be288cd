//! `flows.csv`: one row per flow of the workload, finished or not.

use super::cells::{CsvOut, Fixed, Ns};
use super::{always, RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "flows.csv",
    about: "one row per flow: hosts, size, start, finish, FCT, ideal FCT, slowdown \
            (at the receiver), then the sender's finish (last ACK) and FCT, the ns-3 \
            ideal FCT and the slowdown of the two (the HPCC ns-3 module's definitions); \
            finishes, FCTs and slowdowns empty for an unfinished flow",
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
    sender_finish_ns: Option<Ns>,
    sender_fct_ns: Option<Ns>,
    ideal_fct_rtt_ns: Ns,
    sender_slowdown: Option<Fixed<6>>,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    out.table(sim.nics.flows.iter().enumerate().map(|(i, f)| {
        let ideal = sim.ideal[i];
        let fct = f.finish.map(|t| t - f.spec.start);
        let sender_fct = f.sender_done.map(|t| t - f.spec.start);
        let ideal_rtt = sim.ideal_rtt[i];
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
            sender_finish_ns: f.sender_done.map(Ns),
            sender_fct_ns: sender_fct.map(Ns),
            ideal_fct_rtt_ns: Ns(ideal_rtt),
            sender_slowdown: sender_fct.map(|t| Fixed(t as f64 / ideal_rtt as f64)),
        }
    }))
}
