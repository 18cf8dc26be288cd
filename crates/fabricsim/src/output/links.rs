//! `links.csv`: one row per link direction (named by the port that sends on it), with
//! what faults and bit errors did to it. Written only for runs with `[[fault]]` entries
//! or bit errors (`ports.csv` keeps its columns).

use super::cells::{CsvOut, Ns};
use super::{RunData, Scope, Table};
use crate::base::ids::PortId;
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "links.csv",
    about: "one row per link direction (runs with faults or bit errors): BER, frame error \
            rate of a full data frame, frames sent, corrupted, replayed, discarded by \
            replays, lost on the link going down, dropped at its down port, time down, lanes",
    scope: Scope::Run {
        present: |r| r.sim.fabric.faults.is_some(),
        write,
    },
};

#[derive(Default, Serialize)]
struct LinkRow<'a> {
    node: &'a str,
    port: u32,
    to: &'a str,
    ber: String,
    fer_full_frame: String,
    tx_packets: u64,
    corrupted: u64,
    replayed: u64,
    discarded: u64,
    lost_link_down: u64,
    fault_drops: u64,
    down_ns: Ns,
    lanes: u8,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    let Some(fs) = sim.fabric.faults.as_deref() else {
        return out.table(std::iter::empty::<LinkRow>());
    };
    let full = sim.ctx.params.mtu + sim.ctx.params.header;
    out.table(fs.links.iter().enumerate().map(|(i, lf)| {
        let p = &sim.fabric.ports[i];
        LinkRow {
            node: sim.port_node_name(PortId(i as u32)),
            port: p.local,
            to: sim.port_node_name(p.peer),
            ber: format!("{:e}", lf.ber),
            // Four digits: the last bits of exp_m1 may differ between platforms' libm.
            fer_full_frame: format!(
                "{:.4e}",
                lf.errors.frame_error_rate(full + p.sec_extra as u64)
            ),
            tx_packets: p.tx_packets,
            corrupted: lf.corrupted,
            replayed: lf.replayed,
            discarded: lf.discarded,
            lost_link_down: lf.lost,
            fault_drops: lf.dropped,
            down_ns: Ns(lf.down_until(sim.ctx.now)),
            lanes: lf.lanes,
        }
    }))
}
