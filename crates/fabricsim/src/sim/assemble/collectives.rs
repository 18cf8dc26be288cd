//! Assembly of the hardware collectives (document 003): the collective engine and, for
//! collectives that multicast, the switches' tables. Called from the assembly (`assemble/mod.rs`) once the
//! fabric and the flows are built.

use crate::base::ids::PortId;
use crate::scenario::ScenarioError;
use crate::sim::*;

impl Simulation {
    /// The collective engine and, for collectives that multicast, the switches' tables;
    /// errors name the workload entry's field.
    pub(super) fn assemble_collectives(
        &mut self,
        specs: Vec<crate::model::hw_collective::HwSpec>,
        rails: u32,
        file: &str,
    ) -> Result<(), ScenarioError> {
        use crate::model::fabric::multicast::{MulticastTables, TABLES_PER_PORT};
        if self.roles.gse.is_some() || self.roles.dr.is_some() {
            return Err(err(
                file,
                &format!("workload[{}]", specs[0].entry),
                "hardware collectives run on fabrics of plain switches: not with GSE (pktc) or long-haul DR switches",
            ));
        }
        let most = crate::model::transport::collective_engine::HwCollectives::MAX_RANKS as usize;
        let mut ranks = 0;
        for s in &specs {
            ranks += s.ranks.len();
            if ranks > most {
                return Err(err(
                    file,
                    &format!("workload[{}]", s.entry),
                    format!(
                        "the hardware collectives up to this one have {ranks} ranks together: \
                         at most {most} (each rank's timers are events of their own)"
                    ),
                ));
            }
        }
        let mut mc = MulticastTables::default();
        for (c, s) in specs.iter().enumerate() {
            let field = |f: &str| format!("workload[{}].{f}", s.entry);
            if s.plane >= rails.max(1) {
                return Err(err(
                    file,
                    &field("plane"),
                    format!(
                        "plane {}: the NICs have {} port(s), planes 0..{}",
                        s.plane,
                        rails.max(1),
                        rails.max(1) - 1
                    ),
                ));
            }
            let most = s.up_bytes().max(s.down_bytes());
            if most > self.ctx.params.mtu {
                return Err(err(
                    file,
                    &field("size"),
                    format!(
                        "{most} B: a hardware collective's message is one packet, at most transport.mtu = {} B",
                        self.ctx.params.mtu
                    ),
                ));
            }
            if s.multicast {
                let port =
                    |r: u32| PortId(self.nics.hosts[s.ranks[r as usize] as usize].port.0 + s.plane);
                let root_host = s.ranks[s.tree.root as usize];
                let mut members: Vec<PortId> = (0..s.ranks.len() as u32)
                    .filter(|&r| s.ranks[r as usize] != root_host)
                    .map(port)
                    .collect();
                members.sort_unstable_by_key(|p| p.0);
                members.dedup();
                let routing = &self.fabric.routing;
                let lost =
                    mc.add_group(&self.fabric, c as u32, port(s.tree.root), &members, &|p| {
                        routing.is_lateral(p)
                    });
                if let Some((p, n)) = mc.fullest_port().filter(|&(_, n)| n > TABLES_PER_PORT) {
                    return Err(err(
                        file,
                        &field("multicast"),
                        format!(
                            "{} port {} would hold {n} multicast tables: a router has {TABLES_PER_PORT} per port (use fewer multicast collectives, or multicast = false)",
                            self.port_node_name(p),
                            self.fabric.ports[p.idx()].local
                        ),
                    ));
                }
                if let Some(p) = lost.first() {
                    return Err(err(
                        file,
                        &field("hosts"),
                        format!(
                            "{} cannot be reached from the root by the plane's switches",
                            self.port_node_name(*p)
                        ),
                    ));
                }
            }
        }
        if specs.iter().any(|s| s.multicast) {
            self.fabric.multicast = Some(Box::new(mc));
        }
        let hw = crate::model::transport::collective_engine::HwCollectives::new(specs);
        self.nics.launcher.phases_left += hw.rank_iterations();
        self.nics.hw = Some(Box::new(hw));
        Ok(())
    }
}
