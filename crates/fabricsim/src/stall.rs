//! Stall and deadlock diagnosis.
//!
//! A run stalls when flows are unfinished and no byte has been delivered in order for
//! `stall_timeout`. The usual cause in a lossless fabric is a PFC deadlock: a cycle of
//! ports each paused by the next (a cyclic buffer dependency, Hu et al., HotNets 2016).
//! The diagnosis builds a wait-for graph on egress ports: port p (at node A, cable to B) is
//! paused by B and holds packets; B's ingress for that cable stays in XOFF because B's
//! egress ports that hold packets are themselves paused. An edge p -> q joins p to every
//! such paused, non-empty port q of B. A cycle in that graph is the deadlock, reported
//! with the ports' names.

use crate::sim::Simulation;
use serde::Serialize;

/// What the stall detector found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StallReport {
    /// Simulated time of the last in-order delivery.
    pub last_progress_ps: u64,
    /// Paused ports with packets waiting (`node:port`).
    pub paused_ports: Vec<String>,
    /// A cycle of paused ports (a PFC deadlock), if there is one.
    pub deadlock_cycle: Vec<String>,
    /// Flows not finished.
    pub unfinished_flows: usize,
}

impl std::fmt::Display for StallReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.deadlock_cycle.is_empty() {
            write!(
                f,
                "PFC deadlock: cycle of paused ports {}",
                self.deadlock_cycle.join(" -> ")
            )?;
        } else if !self.paused_ports.is_empty() {
            write!(
                f,
                "stalled with {} paused ports ({}...) but no cycle found",
                self.paused_ports.len(),
                self.paused_ports
                    .iter()
                    .take(4)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )?;
        } else {
            write!(f, "stalled: no in-order delivery and no paused port")?;
        }
        write!(f, "; {} flows unfinished", self.unfinished_flows)
    }
}

fn label(sim: &Simulation, p: u32) -> String {
    format!(
        "{}:{}",
        sim.port_node_name(crate::ids::PortId(p)),
        sim.fabric.ports[p as usize].local
    )
}

/// Inspects a stalled simulation.
pub fn diagnose(sim: &Simulation) -> StallReport {
    let now = sim.ctx.now;
    // A port is blocked when a paused priority holds packets, or when it is a NIC with
    // data to send whose data priority is paused.
    let blocked = |p: u32| {
        let port = &sim.fabric.ports[p as usize];
        let queued = (0..8).any(|q| port.is_paused(q, now) && !port.queues[q].is_empty());
        let nic_blocked = match sim.fabric.nodes[port.node.idx()].kind {
            crate::fabric::NodeKind::Host(h) => {
                port.is_paused(sim.ctx.params.data_prio as usize, now)
                    && !sim.nics.hosts[h as usize].active.is_empty()
            }
            crate::fabric::NodeKind::Switch(_) => false,
        };
        queued || nic_blocked
    };
    let paused: Vec<u32> = (0..sim.fabric.ports.len() as u32)
        .filter(|&p| blocked(p))
        .collect();
    let is_paused = {
        let mut v = vec![false; sim.fabric.ports.len()];
        for &p in &paused {
            v[p as usize] = true;
        }
        v
    };
    // Wait-for edges: p -> paused non-empty ports of p's peer node.
    let succ = |p: u32| -> Vec<u32> {
        let peer = sim.fabric.ports[p as usize].peer.0;
        let node = &sim.fabric.nodes[sim.fabric.ports[peer as usize].node.idx()];
        (node.ports.iter().map(|q| q.0))
            .filter(|&q| q != peer && is_paused[q as usize])
            .collect()
    };
    // Iterative DFS with colours to find one cycle.
    let mut colour = vec![0u8; sim.fabric.ports.len()];
    let mut cycle = Vec::new();
    'outer: for &start in &paused {
        if colour[start as usize] != 0 {
            continue;
        }
        let mut stack: Vec<(u32, Vec<u32>, usize)> = vec![(start, succ(start), 0)];
        colour[start as usize] = 1;
        while let Some((node, next, idx)) = stack.last_mut() {
            if *idx < next.len() {
                let q = next[*idx];
                *idx += 1;
                match colour[q as usize] {
                    0 => {
                        colour[q as usize] = 1;
                        let s = succ(q);
                        stack.push((q, s, 0));
                    }
                    1 => {
                        let pos = stack.iter().position(|(n, _, _)| *n == q).unwrap_or(0);
                        cycle = stack[pos..].iter().map(|(n, _, _)| *n).collect();
                        break 'outer;
                    }
                    _ => {}
                }
            } else {
                colour[*node as usize] = 2;
                stack.pop();
            }
        }
    }
    let mut names: Vec<String> = cycle.iter().map(|&p| label(sim, p)).collect();
    if let Some(first) = names.first().cloned() {
        names.push(first);
    }
    StallReport {
        last_progress_ps: now.saturating_sub(sim.ctx.params.stall_timeout),
        paused_ports: paused.iter().map(|&p| label(sim, p)).collect(),
        deadlock_cycle: names,
        unfinished_flows: sim.nics.flows.len() - sim.flows_done(),
    }
}
