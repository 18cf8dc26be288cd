//! `queues.csv`: the sampled switch egress queues (`[record] queue_interval`).

use super::cells::{CsvOut, Ns};
use super::{RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "queues.csv",
    about: "bytes queued at each non-empty switch egress port at every sample \
            (`[record] queue_interval`)",
    scope: Scope::Run {
        present: |r| {
            !r.sim.record.queue_samples.is_empty() || r.sim.ctx.params.queue_interval.is_some()
        },
        write,
    },
};

#[derive(Default, Serialize)]
struct QueueRow<'a> {
    time_ns: Ns,
    node: &'a str,
    port: u32,
    bytes: u64,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    out.table(sim.record.queue_samples.iter().map(|q| QueueRow {
        time_ns: Ns(q.t),
        node: sim.port_node_name(crate::base::ids::PortId(q.port)),
        port: sim.fabric.ports[q.port as usize].local,
        bytes: q.bytes,
    }))
}
