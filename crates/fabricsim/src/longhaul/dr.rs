//! The DR switch (document 001): the deep-buffer switch that joins a campus to the
//! long-haul fibre, and the congestion notifications it sends itself.
//!
//! Over 120 km a receiver's CNP reaches the sender more than a millisecond after the DR's
//! queue built up, by when a 400G sender has put tens of megabytes more on the way:
//! end-to-end ECN cannot keep the DR from dropping. Document 001's remedy is the DR
//! sending the CNP itself, from inside the sender's campus, so that it arrives within
//! tens of microseconds. Here a DR switch is a [`SwitchRole`](crate::fabric::switch)
//! whose arriving data packets are routed as a plain switch routes them; when the chosen
//! egress faces the DCI and its queue (the packet's priority) holds at least
//! `cnp_threshold` bytes, the DR sends a CNP for the packet's flow straight back to the
//! flow's sender, at most one per flow every `cnp_interval` (default 10 us). The sender's
//! congestion control treats it as any CNP.
//!
//! `cnp` chooses who notifies: `e2e` (receivers, on CE marks: RoCEv2 as deployed),
//! `dr` (only the DRs), `both`, or `none` (no CNPs at all; marks are ignored).
//! A DR's buffer (`dr_buffer` of the topology) replaces the fabric's; unless the topology
//! asks for `dci_lossless`, the DR is lossy: it never pauses its neighbours and drops a
//! packet its buffer cannot hold (counted on the egress port, `ports.csv`), while the
//! campus switches stay lossless.

use crate::engine::MAX_INDEX;
use crate::fabric::switch::RoleHandlers;
use crate::ids::PortId;
use crate::packet::{Desc, Header, Packet, PacketKind, Payload, LOCAL_PORT};
use crate::param::{Described, Param, ParamError};
use crate::routing::ecmp;
use crate::sim::{Ctx, Fabric};
use crate::units::serde_units as su;
use crate::units::{Time, US};
use serde::{Deserialize, Serialize};

/// Who sends congestion notifications.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CnpMode {
    /// Receivers, on CE-marked data (RoCEv2 DCQCN as deployed).
    #[default]
    E2e,
    /// Only the DR switches, on their DCI-facing queues.
    Dr,
    /// Receivers and DRs.
    Both,
    /// Nobody: the senders never slow down.
    None,
}

impl CnpMode {
    /// Every mode, in declaration order.
    pub const ALL: [CnpMode; 4] = [CnpMode::E2e, CnpMode::Dr, CnpMode::Both, CnpMode::None];

    /// The name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            CnpMode::E2e => "e2e",
            CnpMode::Dr => "dr",
            CnpMode::Both => "both",
            CnpMode::None => "none",
        }
    }

    /// True if receivers answer CE marks with CNPs.
    pub fn receivers(self) -> bool {
        matches!(self, CnpMode::E2e | CnpMode::Both)
    }

    /// True if DR switches send CNPs.
    pub fn dr(self) -> bool {
        matches!(self, CnpMode::Dr | CnpMode::Both)
    }
}

/// `[fabric.dr]`: what DR switches (topology `multi_campus`) do besides forwarding.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DrCfg {
    /// Who sends CNPs.
    #[serde(default)]
    pub cnp: CnpMode,
    /// A DCI-facing egress queue at least this long makes the DR notify.
    #[serde(default = "d_threshold", deserialize_with = "su::bytes")]
    pub cnp_threshold: u64,
    /// At most one DR CNP per flow this often.
    #[serde(default = "d_interval", deserialize_with = "su::time")]
    pub cnp_interval: Time,
}

fn d_threshold() -> u64 {
    1 << 20
}

/// \[recon\] The document gives the DR's feedback latency (within ~50 us), not its pacing.
/// At DCQCN's usual 50 us per flow the DR's CNPs could not hold an overloaded DCI once
/// DCQCN's rate recovery started (`tests/longhaul_dr.rs`: half the drops of e2e); at
/// 10 us they held it without a drop.
fn d_interval() -> Time {
    10 * US
}

impl Default for DrCfg {
    fn default() -> Self {
        DrCfg {
            cnp: CnpMode::default(),
            cnp_threshold: d_threshold(),
            cnp_interval: d_interval(),
        }
    }
}

impl DrCfg {
    /// Checks the fields (names relative to `[fabric.dr]`).
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.cnp_threshold == 0 {
            return Err(ParamError::new(
                "cnp_threshold",
                "must be at least 1 byte (a DR notifies when its DCI queue holds this much)",
            ));
        }
        if self.cnp_interval == 0 {
            return Err(ParamError::new(
                "cnp_interval",
                "must be positive (at most one DR CNP per flow this often)",
            ));
        }
        Ok(())
    }
}

impl Described for DrCfg {
    const ABOUT: &'static str = "DR switches of a multi_campus topology: who sends CNPs";
    fn params() -> Vec<Param> {
        let modes: Vec<String> = CnpMode::ALL
            .iter()
            .map(|m| format!("\"{}\"", m.name()))
            .collect();
        vec![
            Param::new(
                "cnp",
                "\"e2e\"",
                format!("who sends CNPs: {}", modes.join(" | ")),
            ),
            Param::bytes(
                "cnp_threshold",
                d_threshold(),
                "DCI-facing queue length at which a DR notifies",
            ),
            Param::time(
                "cnp_interval",
                d_interval(),
                "at most one DR CNP per flow this often",
            ),
        ]
    }
}

/// The DR role of a switch (its index among the DRs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrRole(pub u32);

/// What the DR switches share: their settings, which ports face the DCI, and the
/// per-flow CNP pacing.
#[derive(Clone, Debug)]
pub struct DrState {
    /// Settings.
    pub cfg: DrCfg,
    /// Ports whose link is a DCI link, by port id.
    pub dci_port: Vec<bool>,
    /// The DCI ports and the campus each sends from, in port order.
    pub dci_ports: Vec<(PortId, u32)>,
    /// Earliest time each flow may get its next DR CNP.
    pub next_cnp: Vec<Time>,
    /// CNPs each DR sent.
    pub cnps: Vec<u64>,
}

impl DrState {
    /// State for `n_dr` DR switches, `n_flows` flows, and the DCI ports `dci_ports`
    /// (with the campus each sends from) among `n_ports` ports.
    pub fn new(
        cfg: DrCfg,
        dci_ports: Vec<(PortId, u32)>,
        n_ports: usize,
        n_dr: usize,
        n_flows: usize,
    ) -> DrState {
        debug_assert!(n_flows <= MAX_INDEX as usize);
        let mut dci_port = vec![false; n_ports];
        for &(p, _) in &dci_ports {
            dci_port[p.idx()] = true;
        }
        DrState {
            cfg,
            dci_port,
            dci_ports,
            next_cnp: vec![0; n_flows],
            cnps: vec![0; n_dr],
        }
    }
}

/// The DCI ports of one campus (the direction leaving it): `summary.json`'s `long_haul`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DciDirection {
    /// The campus the ports send from.
    pub campus: u32,
    /// DCI ports leaving it.
    pub ports: usize,
    /// Bytes they sent, in total.
    pub tx_bytes: u64,
    /// Load imbalance: the busiest port's bytes over the mean (1 = even).
    pub imbalance: f64,
    /// Packets dropped on them.
    pub drops: u64,
    /// How many of them dropped at least one packet.
    pub ports_dropping: usize,
    /// Longest queue on any of them, bytes.
    pub max_queue_bytes: u64,
}

/// DCI and DR figures of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LongHaulStats {
    /// Imbalance of the direction that carried the most bytes.
    pub dci_imbalance: f64,
    /// Packets dropped on DCI ports.
    pub dci_drops: u64,
    /// Packets dropped anywhere in DR switches.
    pub dr_drops: u64,
    /// CNPs the DRs sent.
    pub dr_cnps: u64,
    /// One entry per campus with DCI ports.
    pub directions: Vec<DciDirection>,
}

impl LongHaulStats {
    /// The figures of `sim`, if it has DR switches.
    pub fn of(sim: &crate::sim::Simulation) -> Option<LongHaulStats> {
        let st = sim.fabric.dr.as_ref()?;
        let ports = &sim.fabric.ports;
        let mut campuses: Vec<u32> = st.dci_ports.iter().map(|&(_, c)| c).collect();
        campuses.sort_unstable();
        campuses.dedup();
        let directions: Vec<DciDirection> = campuses
            .iter()
            .map(|&c| {
                let mine: Vec<&crate::fabric::Port> = (st.dci_ports.iter())
                    .filter(|&&(_, pc)| pc == c)
                    .map(|&(p, _)| &ports[p])
                    .collect();
                let tx: u64 = mine.iter().map(|p| p.tx_bytes).sum();
                let max = mine.iter().map(|p| p.tx_bytes).max().unwrap_or(0);
                let mean = tx as f64 / mine.len().max(1) as f64;
                DciDirection {
                    campus: c,
                    ports: mine.len(),
                    tx_bytes: tx,
                    imbalance: if mean > 0.0 { max as f64 / mean } else { 1.0 },
                    drops: mine.iter().map(|p| p.stats.drops).sum(),
                    ports_dropping: mine.iter().filter(|p| p.stats.drops > 0).count(),
                    max_queue_bytes: mine.iter().map(|p| p.max_queue_bytes).max().unwrap_or(0),
                }
            })
            .collect();
        let busiest = directions.iter().max_by_key(|d| d.tx_bytes);
        Some(LongHaulStats {
            dci_imbalance: busiest.map_or(1.0, |d| d.imbalance),
            dci_drops: directions.iter().map(|d| d.drops).sum(),
            dr_drops: (sim.fabric.switches.iter())
                .filter(|s| matches!(s.role, crate::fabric::switch::SwitchRole::Dr(_)))
                .map(|s| s.drops)
                .sum(),
            dr_cnps: st.cnps.iter().sum(),
            directions,
        })
    }
}

impl RoleHandlers for DrRole {
    #[inline]
    fn take(self, fabric: &mut Fabric, ctx: &mut Ctx, s: u32, in_port: PortId, pkt: Desc) -> bool {
        fabric.dr_receive(ctx, s, self, in_port, pkt);
        true
    }
}

impl Fabric {
    /// A packet arrived at DR switch `s`: route it, notify its sender if it joins a long
    /// DCI queue, and forward it.
    pub(crate) fn dr_receive(
        &mut self,
        ctx: &mut Ctx,
        s: u32,
        dr: DrRole,
        in_port: PortId,
        pkt: Desc,
    ) {
        let Some(egress) = self.route(ctx, s, &pkt) else {
            self.drop_packet(ctx, pkt, in_port, s);
            return;
        };
        let st = self.dr.as_ref().expect("DR switches have DR state");
        if pkt.kind == PacketKind::Data
            && st.cfg.cnp.dr()
            && st.dci_port[egress.idx()]
            && self.ports[egress].queues[pkt.prio as usize].bytes >= st.cfg.cnp_threshold
        {
            self.dr_notify(ctx, s, dr, &pkt);
        }
        self.forward(ctx, s, in_port, pkt, egress);
    }

    /// Sends a CNP for the flow of data packet `pkt` from DR `s` back to the flow's
    /// sender, unless that flow had one less than `cnp_interval` ago.
    fn dr_notify(&mut self, ctx: &mut Ctx, s: u32, dr: DrRole, pkt: &Desc) {
        let data = *ctx.arena.get(pkt.id);
        let Some(flow) = data.payload.flow() else {
            return;
        };
        let st = self.dr.as_mut().expect("DR state");
        let now = ctx.now;
        if now < st.next_cnp[flow.idx()] {
            return;
        }
        st.next_cnp[flow.idx()] = now + st.cfg.cnp_interval;
        st.cnps[dr.0 as usize] += 1;
        let p = Packet::new(Payload::Cnp { flow, by_dr: true }, pkt.dst, now);
        let hdr = Header {
            dst: data.src,
            hash: ecmp::mix32(pkt.hash ^ 0x5bd1_e995),
            wire: ctx.params.ack_size,
            prio: ctx.params.ctrl_prio,
            ..Header::default()
        };
        let cands = self.routing.lookup(s, hdr.dst);
        if cands.len == 0 {
            return;
        }
        let k = ecmp::pick(hdr.hash, self.switches[s as usize].salt, cands.len as usize);
        let egress = self.routing.port_of(cands, k);
        let mut d = ctx.arena.alloc_desc(p, hdr);
        d.in_port = LOCAL_PORT;
        self.switches[s as usize].generated += 1;
        ctx.counters.cnps += 1;
        self.ports[egress].enqueue(hdr.prio as usize, d, now);
        self.try_transmit(ctx, egress);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_say_who_notifies() {
        let who: Vec<(bool, bool)> = CnpMode::ALL
            .iter()
            .map(|m| (m.receivers(), m.dr()))
            .collect();
        assert_eq!(
            who,
            [(true, false), (false, true), (true, true), (false, false)]
        );
        let names: Vec<String> = CnpMode::ALL.iter().map(|m| m.name().into()).collect();
        assert_eq!(names, crate::param::serde_variants::<CnpMode>());
    }

    #[test]
    fn bad_settings_name_the_field() {
        let mut c = DrCfg {
            cnp_threshold: 0,
            ..DrCfg::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("cnp_threshold"));
        c.cnp_threshold = 1;
        c.cnp_interval = 0;
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("cnp_interval"));
    }
}
