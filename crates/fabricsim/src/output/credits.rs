//! `credits.csv`: one row per egress port that needs credits (its far end is a switch),
//! in runs with credit-based flow control only (the other runs' tables keep their
//! columns).

use super::cells::{CsvOut, Ns};
use super::{RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "credits.csv",
    about: "credit flow control runs: one row per egress port feeding a switch: whether \
            the far switch cuts its packets through, time spent waiting for credits, waits, \
            credits (blocks) sent and the fewest free credits left",
    scope: Scope::Run {
        present: |r| r.sim.fabric.credit().is_some(),
        write,
    },
};

#[derive(Default, Serialize)]
struct CreditRow<'a> {
    node: &'a str,
    port: u32,
    /// The node at the far end.
    peer: &'a str,
    /// 1 when the far switch cuts this port's packets through, 0 when it stores and
    /// forwards them.
    cut_through: u8,
    /// Time the port had packets to send and credits for none of them.
    credit_wait_ns: Ns,
    /// Times such a wait began.
    credit_stalls: u64,
    /// Credits taken: blocks sent.
    blocks_sent: u64,
    /// Fewest free credits (private and shared, all VCs) the port was left with.
    min_free_blocks: u32,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    let Some(c) = sim.fabric.credit() else {
        return Ok(());
    };
    let ports = &sim.fabric.ports;
    out.table((0..ports.len()).filter(|&i| c.port(i).tracked()).map(|i| {
        let (p, cp) = (&ports[i], c.port(i));
        CreditRow {
            node: sim.port_node_name(crate::base::ids::PortId(i as u32)),
            port: p.local,
            peer: sim.port_node_name(p.peer),
            cut_through: cp.cut_through() as u8,
            credit_wait_ns: Ns(cp.stats.wait_ps),
            credit_stalls: cp.stats.stalls,
            blocks_sent: cp.stats.blocks_sent,
            min_free_blocks: cp.stats.min_free,
        }
    }))
}
