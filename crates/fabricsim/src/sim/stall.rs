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
//!
//! Credit flow control deadlocks the same way, with credits for pauses: port p waits for
//! credits of B's input for its cable when it holds packets none of which has them (a
//! NIC port: when its next data packet has none); B returns them only when the packets
//! in that input leave, and they wait at B's egress ports. The edge p -> q joins p to
//! each credit-blocked port q of B that holds a packet which came in through p's cable,
//! so a cycle is a cycle of full input buffers (document 003's fabric relies on up/down
//! routing and VCs to have none).

use crate::sim::Simulation;
use serde::Serialize;

/// What the stall detector found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StallReport {
    /// Simulated time of the last in-order delivery.
    pub last_progress_ps: u64,
    /// Paused ports with packets waiting (`node:port`).
    pub paused_ports: Vec<String>,
    /// Ports with packets waiting for credits (`node:port`; credit flow control only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub credit_blocked_ports: Vec<String>,
    /// A cycle of paused ports (a PFC deadlock) or of credit-blocked ports (a credit
    /// deadlock), if there is one.
    pub deadlock_cycle: Vec<String>,
    /// Flows not finished.
    pub unfinished_flows: usize,
}

impl std::fmt::Display for StallReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.deadlock_cycle.is_empty() && !self.credit_blocked_ports.is_empty() {
            write!(
                f,
                "credit deadlock: cycle of ports waiting for credits {}",
                self.deadlock_cycle.join(" -> ")
            )?;
        } else if !self.deadlock_cycle.is_empty() {
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
        } else if !self.credit_blocked_ports.is_empty() {
            write!(
                f,
                "stalled with {} ports waiting for credits ({}...) but no cycle found",
                self.credit_blocked_ports.len(),
                self.credit_blocked_ports
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
        sim.port_node_name(crate::base::ids::PortId(p)),
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
            crate::model::fabric::NodeKind::Host(h) => {
                port.is_paused(sim.ctx.params.data_prio as usize, now)
                    && !sim.nics.hosts[h as usize].active.is_empty()
            }
            crate::model::fabric::NodeKind::Switch(_) => false,
        };
        queued || nic_blocked
    };
    let credit = sim.fabric.credit();
    // Under credits: a switch port holding packets none of which has its credits, or a
    // NIC port whose next data packet has none.
    let credit_blocked = |p: u32| {
        let Some(c) = credit else {
            return false;
        };
        let port = &sim.fabric.ports[p as usize];
        if !c.port(p as usize).tracked() {
            return false;
        }
        match port.owner() {
            crate::model::fabric::NodeKind::Switch(_) => {
                port.has_queued()
                    && (0..8).all(|q| {
                        (port.queues[q].front(sim.fabric.queue_pool(p as usize)))
                            .is_none_or(|d| !c.fits(p as usize, q, d.wire() as u64))
                    })
            }
            crate::model::fabric::NodeKind::Host(_) => c.is_waiting(p as usize),
        }
    };
    let credit_ports: Vec<u32> = (0..sim.fabric.ports.len() as u32)
        .filter(|&p| credit_blocked(p))
        .collect();
    let pfc_paused: Vec<u32> = (0..sim.fabric.ports.len() as u32)
        .filter(|&p| blocked(p))
        .collect();
    let paused: Vec<u32> = if credit.is_some() {
        credit_ports.clone()
    } else {
        pfc_paused.clone()
    };
    let is_paused = {
        let mut v = vec![false; sim.fabric.ports.len()];
        for &p in &paused {
            v[p as usize] = true;
        }
        v
    };
    // Wait-for edges: p -> paused non-empty ports of p's peer node (under credits: those
    // holding a packet that came in through p's cable).
    let succ = |p: u32| -> Vec<u32> {
        let peer = sim.fabric.ports[p as usize].peer.0;
        let node = &sim.fabric.nodes[sim.fabric.ports[peer as usize].node.idx()];
        let local_in = node.ports.local(crate::base::ids::PortId(peer)) as u16;
        let holds_from_p = |q: u32| {
            credit.is_none()
                || (sim.fabric.ports[q as usize].queues.iter()).any(|queue| {
                    (queue.iter(sim.fabric.queue_pool(q as usize))).any(|d| d.in_port == local_in)
                })
        };
        (node.ports.iter().map(|q| q.0))
            .filter(|&q| q != peer && is_paused[q as usize] && holds_from_p(q))
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
        paused_ports: pfc_paused.iter().map(|&p| label(sim, p)).collect(),
        credit_blocked_ports: credit_ports.iter().map(|&p| label(sim, p)).collect(),
        deadlock_cycle: names,
        unfinished_flows: sim.nics.flows.len() - sim.flows_done(),
    }
}
