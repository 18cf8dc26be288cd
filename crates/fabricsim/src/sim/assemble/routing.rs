//! The routing builder: tables over the wired switches (static routes from the
//! topology, up/down tables for a generalized fat tree with switch tiers, shortest paths
//! otherwise), link aggregation groups, and the fault model that rebuilds the tables
//! when links fail.

use super::wiring::Wiring;
use crate::model::fabric::faults::config::FaultPlan;
use crate::model::fabric::faults::{FaultState, RoutingInputs};
use crate::model::fabric::switch::Switch;
use crate::model::fabric::NodeKind;
use crate::model::routing::ecmp;
use crate::model::routing::{RoutingTable, Steer, Steering};
use crate::model::topology::TopoGraph;
use crate::scenario::config::{LbAlgorithm, Scenario};
use crate::scenario::ScenarioError;
use crate::sim::err;

/// The tables, and what a re-convergence rebuilds them from.
pub(super) struct Routing {
    pub table: RoutingTable,
    /// Switches route by table (up/down tables, or a balancer that reads port state).
    pub table_routing: bool,
    pub inputs: RoutingInputs,
}

/// The routing tables and the switches' LAGs; errors name the field.
pub(super) fn build_routing(
    sc: &Scenario,
    g: &TopoGraph,
    w: &Wiring,
    switches: &mut [Switch],
    lb: LbAlgorithm,
    faults: &FaultPlan,
    file: &str,
) -> Result<Routing, ScenarioError> {
    let (nodes, ports) = (&w.nodes, &w.ports);
    let statics: Vec<(u32, u32, Vec<u32>)> = g
        .routes
        .iter()
        .map(|r| {
            let sw = match nodes[r.at].kind {
                NodeKind::Switch(s) => s,
                NodeKind::Host(_) => 0,
            };
            let node = &nodes[r.at];
            let ps = r
                .via
                .iter()
                .filter_map(|&v| {
                    (node.ports.iter())
                        .find(|&p| ports[ports[p].peer].node.idx() == v)
                        .map(|p| p.0)
                })
                .collect();
            (sw, r.to_host as u32, ps)
        })
        .collect();
    // A generalized fat tree (switch tiers given) gets up/down tables with lateral
    // fallbacks; every other graph shortest-path tables.
    let tiers: Vec<u8> = (w.switch_nodes.iter())
        .map(|&n| g.nodes[n as usize].tier)
        .collect();
    let tiers = if tiers.iter().any(|&t| t > 0) {
        tiers
    } else {
        Vec::new()
    };
    let steering = Steering {
        group_of_host: if g.steer.is_empty() {
            Vec::new()
        } else {
            g.server_of_host.clone()
        },
        rules: (g.steer.iter())
            .filter_map(|r| {
                let NodeKind::Switch(sw) = nodes[r.at].kind else {
                    return None;
                };
                let node = &nodes[r.at];
                let ports = (node.ports.iter())
                    .filter(|&p| r.via.contains(&ports[ports[p].peer].node.idx()))
                    .map(|p| p.0)
                    .collect();
                Some(Steer {
                    sw,
                    group: r.server,
                    ports,
                })
            })
            .collect(),
    };
    let ends = crate::model::fabric::port::ends(ports);
    let table = if tiers.is_empty() {
        RoutingTable::build_steered(
            nodes,
            &ends,
            &w.switch_nodes,
            &w.host_nodes,
            &statics,
            &steering,
            |_| true,
        )
    } else {
        RoutingTable::build_tiered(nodes, &ends, &w.switch_nodes, &w.host_nodes, &tiers)
    }
    .map_err(|e| err(file, "topology", e.0))?;
    let table_routing = table.tiered() || lb.by_port_state();
    let lag = sc.fabric.load_balance.hash.lag;
    if lag != ecmp::LagChoice::Flat {
        crate::model::fabric::switch::form_lags(switches, &table, ports, nodes, lag, faults)
            .map_err(|m| err(file, "fabric.load_balance.hash.lag", m))?;
    }
    Ok(Routing {
        table,
        table_routing,
        inputs: RoutingInputs {
            switch_nodes: w.switch_nodes.clone(),
            host_nodes: w.host_nodes.clone(),
            statics,
            steering,
            tiers,
        },
    })
}

/// The fault model (`None` without faults, bit errors or link-level retransmission);
/// ports on links that may replay keep what they send in a replay ring.
pub(super) fn build_faults(
    sc: &Scenario,
    faults: &FaultPlan,
    w: &mut Wiring,
    inputs: RoutingInputs,
    n_flows: usize,
    n_switches: usize,
) -> Option<Box<FaultState>> {
    let state = FaultState::build(
        faults,
        &w.port_of,
        &w.ports,
        &mut w.links,
        &w.nodes,
        inputs,
        n_flows,
        n_switches,
        &w.fwd,
        sc.seed,
    );
    // Frames on links that may replay wait in the sender's replay ring (`faults::llr`).
    if let Some(fs) = state.as_deref() {
        for (p, lf) in w.ports.iter_mut().zip(&fs.links) {
            if lf.can_replay(fs.llr) {
                p.set_replays();
            }
        }
    }
    state
}
