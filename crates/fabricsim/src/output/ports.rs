//! `ports.csv`: one row per port (both directions of every link), whole-run counters.

use super::cells::{CsvOut, Fixed, Ns};
use super::{always, RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "ports.csv",
    about: "one row per egress port: bytes and packets sent, drops, PFC frames sent and \
            received, paused time, max and mean queue, ECN and TCD marks",
    scope: Scope::Run {
        present: always,
        write,
    },
};

#[derive(Default, Serialize)]
struct PortRow<'a> {
    node: &'a str,
    port: u32,
    tx_bytes: u64,
    tx_packets: u64,
    drops: u64,
    pause_frames_sent: u64,
    paused_ns: Ns,
    max_queue_bytes: u64,
    ecn_marked: u64,
    pause_frames_received: u64,
    resume_frames_sent: u64,
    mean_queue_bytes: Fixed<1>,
    tcd_ce: u64,
    tcd_ue: u64,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    out.table(sim.fabric.ports.iter().enumerate().map(|(i, p)| {
        let st = &p.stats;
        PortRow {
            node: sim.port_node_name(crate::base::ids::PortId(i as u32)),
            port: p.local,
            tx_bytes: p.tx_bytes,
            tx_packets: p.tx_packets,
            drops: st.drops,
            pause_frames_sent: st.pause_frames_sent,
            paused_ns: Ns(st.paused_ps),
            max_queue_bytes: p.max_queue_bytes,
            ecn_marked: st.ecn_marked,
            pause_frames_received: st.pause_frames_received,
            resume_frames_sent: st.resume_frames_sent,
            mean_queue_bytes: Fixed(p.mean_queue_bytes(sim.ctx.now)),
            tcd_ce: st.tcd_ce,
            tcd_ue: st.tcd_ue,
        }
    }))
}
