//! `collectives.csv`: one row per iteration of each hardware collective (document 003),
//! in runs with hardware collectives only.

use super::cells::{CsvOut, Ns};
use super::{RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "collectives.csv",
    about: "hardware collectives: one row per collective and iteration: what it is, ranks, \
            tree height, when the first and the last rank entered, when the last got the \
            result, the latency from the last entry, timeouts, failures, and whether the \
            result equals the direct computation",
    scope: Scope::Run {
        present: |r| r.sim.nics.hw.is_some(),
        write,
    },
};

#[derive(Default, Serialize)]
struct CollRow {
    collective_id: usize,
    iteration: usize,
    collective: &'static str,
    op: &'static str,
    dtype: &'static str,
    ranks: usize,
    fan_in: u32,
    height: u32,
    size_bytes: u64,
    multicast: u8,
    first_entry_ns: Option<Ns>,
    last_entry_ns: Option<Ns>,
    finish_ns: Option<Ns>,
    /// From the last rank's entry to the last rank's result: the collective's own
    /// latency (what IMB reports when every rank enters at once).
    latency_ns: Option<Ns>,
    done: u32,
    failed: u32,
    timeouts: u32,
    /// 1 when the result equals the direct computation, 0 when not, empty if no result.
    verified: Option<u8>,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let Some(hw) = r.sim.nics.hw.as_deref() else {
        return Ok(());
    };
    out.table(hw.colls.iter().enumerate().flat_map(|(c, coll)| {
        let s = &coll.spec;
        let fan_in = s
            .tree
            .children
            .iter()
            .map(|c| c.len() as u32)
            .max()
            .unwrap_or(0);
        coll.iters.iter().enumerate().map(move |(i, it)| CollRow {
            collective_id: c,
            iteration: i,
            collective: s.kind.name(),
            op: if s.kind == crate::model::hw_collective::HwKind::Allreduce {
                s.op.name()
            } else {
                ""
            },
            dtype: s.dtype.name(),
            ranks: s.ranks.len(),
            fan_in,
            height: s.tree.height(),
            size_bytes: s.down_bytes().max(s.up_bytes()),
            multicast: s.multicast as u8,
            first_entry_ns: it.first_entry.map(Ns),
            last_entry_ns: it.last_entry.map(Ns),
            finish_ns: it.finish.map(Ns),
            latency_ns: it
                .last_entry
                .zip(it.finish)
                .filter(|_| it.done as usize == s.ranks.len())
                .map(|(a, b)| Ns(b.saturating_sub(a))),
            done: it.done,
            failed: it.failed,
            timeouts: it.timeouts,
            verified: it.verified.map(|v| v as u8),
        })
    }))
}
