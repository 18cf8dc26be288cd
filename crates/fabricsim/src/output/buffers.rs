//! `buffers.csv`: one row per switch, with `[record] buffers = true`: how much of its
//! shared buffer the run used, and how much of the PFC headroom it set aside was ever
//! needed (document 002: PFC must hold headroom for the bytes in flight after XOFF,
//! credits never over-commit).

use super::{RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "buffers.csv",
    about: "with [record] buffers: one row per switch: buffer size, peak bytes stored, PFC \
            headroom and reserve set aside, the most headroom in use at once (in all, and \
            at one port), drops",
    scope: Scope::Run {
        present: |r| r.sim.record.buffers,
        write,
    },
};

#[derive(Default, Serialize)]
struct BufferRow<'a> {
    node: &'a str,
    /// The buffer (under credits: every input buffer of the switch together).
    size_bytes: u64,
    /// Most bytes stored at once.
    peak_bytes: u64,
    /// PFC headroom set aside, every port (0 without PFC).
    headroom_bytes: u64,
    /// Reserve set aside, every (port, priority) (0 without PFC).
    reserve_bytes: u64,
    /// Most headroom in use at once.
    headroom_peak_bytes: u64,
    /// Headroom set aside and never in use.
    headroom_unused_bytes: u64,
    /// Most headroom one (port, priority) ever used: the bytes in flight after its XOFF.
    port_headroom_peak_bytes: u64,
    /// Packets the switch dropped.
    drops: u64,
}

fn write(r: &RunData, out: &mut super::CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    out.table(sim.fabric.switches.iter().map(|s| {
        let b = &s.buffer;
        BufferRow {
            node: &sim.fabric.nodes[s.node.idx()].name,
            size_bytes: b.size,
            peak_bytes: b.peak,
            headroom_bytes: b.headroom_total(),
            reserve_bytes: b.reserve_total(),
            headroom_peak_bytes: b.headroom_peak,
            headroom_unused_bytes: b.headroom_total() - b.headroom_peak,
            port_headroom_peak_bytes: b.headroom_peak_port,
            drops: s.drops,
        }
    }))
}
