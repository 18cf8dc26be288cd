//! The fabric's builders: switches with their buffers, ECN markers, seeds and roles
//! (after the wiring), the roles' state (GSP, DR, switch CNP) and link-level flow control
//! (once routing and the flows exist), and the `Fabric` they make.

use super::switch_features::assemble_switch_cnp;
use super::wiring::Wiring;
use crate::base::ids::{NodeId, PortId};
use crate::base::seed::{component_rng, component_seed};
use crate::base::units::Time;
use crate::model::fabric::buffer::SharedBuffer;
use crate::model::fabric::ecn::RedMarker;
use crate::model::fabric::flow_control::{AnyFlowControl, Credit, Pfc};
use crate::model::fabric::roles::dr::{DrRole, DrState};
use crate::model::fabric::roles::{RoleStates, SwitchRole};
use crate::model::fabric::switch::Switch;
use crate::model::fabric::NodeKind;
use crate::model::topology::{NodeRole, TopoGraph};
use crate::scenario::config::{LbAlgorithm, Scenario};
use crate::scenario::ScenarioError;
use crate::sim::{default_headroom, err, largest_frame, RunParams};

/// The switches, and what their roles need later.
pub(super) struct Switches {
    pub switches: Vec<Switch>,
    /// Ports of lossy DR switches: no PFC from them.
    pub lossy_dr_port: Vec<bool>,
    /// The DR switches' names, in DR order (each seeds its own RED draws).
    pub dr_names: Vec<String>,
}

/// Switches: shared buffers sized and checked against their PFC headroom, ECN markers,
/// seeded random streams and hash salts, DR roles from the topology.
pub(super) fn build_switches(
    sc: &Scenario,
    g: &TopoGraph,
    w: &Wiring,
    file: &str,
) -> Result<Switches, ScenarioError> {
    let (nodes, ports, links) = (&w.nodes, &w.ports, &w.links);
    let lb_hash = &sc.fabric.load_balance.hash;
    let mut switches = Vec::with_capacity(w.switch_nodes.len());
    let mut lossy_dr_port = vec![false; ports.len()];
    let mut dr_names: Vec<String> = Vec::new();
    let frame = largest_frame(sc);
    for &sn in &w.switch_nodes {
        let node = &nodes[sn as usize];
        let dr = match g.nodes[sn as usize].role {
            NodeRole::Dr(spec) => Some(spec),
            NodeRole::Fabric => None,
        };
        let mut headroom = Vec::new();
        let mut ecn = Vec::new();
        for p in node.ports.iter() {
            let port = &ports[p];
            // Bytes arrive on this port over the peer's link.
            let delay = links[port.peer.idx()].delay;
            let h = sc.fabric.pfc.headroom.unwrap_or_else(|| {
                default_headroom(port.rate, delay, frame, sc.fabric.reliability.llr)
            });
            headroom.push(h);
            ecn.push(RedMarker::from_cfg(&sc.fabric.ecn, port.rate));
        }
        // A DR has its own (deep) buffer; unless its DCI side is lossless it is a
        // drop-tail switch that pauses nobody.
        let (size, pfc_cfg, field) = match dr {
            Some(spec) => {
                let mut c = sc.fabric.pfc.clone();
                c.enabled &= spec.dci_lossless;
                if !c.enabled {
                    for p in node.ports.iter() {
                        lossy_dr_port[p.idx()] = true;
                    }
                }
                (spec.buffer, c, "topology.dr_buffer")
            }
            None => (sc.fabric.buffer, sc.fabric.pfc.clone(), "fabric.buffer"),
        };
        // Under credits the input buffers are the limit, counted in credits upstream:
        // the switch's buffer holds all of them and never drops.
        let cc = &sc.fabric.credit;
        let (size, pfc_cfg) = if cc.enabled {
            let per_port = cc.private * cc.vcs as u64 + cc.shared;
            let mut off = pfc_cfg;
            off.enabled = false;
            (per_port * node.ports.len as u64, off)
        } else {
            (size, pfc_cfg)
        };
        let alpha = node.ports.iter().map(|p| pfc_cfg.alpha_for(ports[p].rate));
        let buffer = SharedBuffer::new(size, &pfc_cfg, headroom).with_port_alpha(alpha);
        if pfc_cfg.enabled && buffer.set_aside() >= size {
            return Err(err(
                file,
                field,
                format!(
                    "{} bytes at switch {} is less than its PFC headroom and reserve ({} bytes; an unset fabric.pfc.headroom is 3 x rate x link delay / 8 plus three frames per port, and a round trip more with llr, so long links need more); raise the buffer or lower fabric.pfc.headroom/reserve or the link delay",
                    size,
                    node.name,
                    buffer.set_aside()
                ),
            ));
        }
        let role = match dr {
            Some(_) => {
                dr_names.push(node.name.clone());
                SwitchRole::Dr(DrRole(dr_names.len() as u32 - 1))
            }
            None => SwitchRole::Plain,
        };
        switches.push(Switch {
            node: NodeId(sn),
            ports: node.ports,
            buffer,
            ecn,
            rng: component_rng(sc.seed, &node.name),
            salt: component_seed(sc.seed, &lb_hash.seed.salt_name(&node.name)) as u32
                & lb_hash.function.mask(),
            lag: 1,
            lag_salt: component_seed(sc.seed, &(lb_hash.seed.salt_name(&node.name) + "/lag"))
                as u32
                & lb_hash.function.mask(),
            rr: 0,
            drops: 0,
            generated: 0,
            consumed: 0,
            held: 0,
            voq_wire: 0,
            role,
        });
    }
    Ok(Switches {
        switches,
        lossy_dr_port,
        dr_names,
    })
}

/// The roles' state, once the flows are known: GSPs (PKTC), DR switches (long haul),
/// switches that send CNPs; a role asked for where the fabric cannot have it is an error
/// naming the field.
pub(super) fn build_roles(
    sc: &Scenario,
    g: &TopoGraph,
    w: &Wiring,
    sw: &mut Switches,
    lb: LbAlgorithm,
    n_flows: usize,
    file: &str,
) -> Result<RoleStates, ScenarioError> {
    let n_dr = sw.dr_names.len() as u32;
    let gse = if lb == LbAlgorithm::Pktc {
        let host_ports: Vec<PortId> = (w.host_nodes.iter())
            .map(|&hn| w.nodes[hn as usize].ports.first)
            .collect();
        Some(Box::new(crate::model::gse::Gse::build(
            &sc.fabric.gse,
            &w.nodes,
            &w.ports,
            &host_ports,
            &mut sw.switches,
        )))
    } else {
        None
    };
    let dr_cfg = &sc.fabric.dr;
    if n_dr == 0 && dr_cfg.cnp.dr() {
        return Err(err(
            file,
            "fabric.dr.cnp",
            format!(
                "\"{}\" needs DR switches, and this topology has none (topology kind \"multi_campus\" has them)",
                dr_cfg.cnp.name()
            ),
        ));
    }
    let node_names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    let switch_cnp = assemble_switch_cnp(sc, &mut sw.switches, &node_names, n_dr, n_flows, file)?;
    let dr = (n_dr > 0).then(|| {
        // Each DCI link's two ports, with the campus of the DR that sends on each.
        let mut dci = Vec::new();
        for li in g.dci_links() {
            let l = &g.links[li];
            for (p, end) in w.port_of[li].into_iter().zip([l.a, l.b]) {
                dci.push((PortId(p), g.nodes[end].campus.unwrap_or(0)));
            }
        }
        dci.sort_unstable();
        Box::new(DrState::new(
            dr_cfg.clone(),
            (sw.dr_names.iter())
                .map(|n| component_rng(sc.seed, &format!("{n}/fabric.dr.red")))
                .collect(),
            dci,
            w.ports.len(),
            n_dr as usize,
            n_flows,
        ))
    });
    Ok(RoleStates {
        gse,
        dr,
        switch_cnp,
    })
}

/// Switch ports whose peer is a host.
pub(super) fn edge_ports(w: &Wiring) -> Vec<bool> {
    let ports = &w.ports;
    ports
        .iter()
        .map(|p| {
            matches!(p.owner(), NodeKind::Switch(_))
                && matches!(ports[p.peer.idx()].owner(), NodeKind::Host(_))
        })
        .collect()
}

/// Link-level flow control: credits, PFC (where its scope says and never from a lossy
/// DR), or none.
pub(super) fn build_flow_control(
    sc: &Scenario,
    params: &RunParams,
    w: &mut Wiring,
    edge_port: &[bool],
    sw: &Switches,
) -> AnyFlowControl {
    let n_dr = sw.dr_names.len();
    // PFC runs where the scope says and never from a lossy DR.
    let pfc_on: Option<Vec<bool>> = if params.pfc_edge_only || n_dr > 0 {
        Some(
            (0..w.ports.len())
                .map(|p| (!params.pfc_edge_only || edge_port[p]) && !sw.lossy_dr_port[p])
                .collect(),
        )
    } else {
        None
    };
    if sc.fabric.credit.enabled {
        // A credit return crosses the cable back: its propagation, without the
        // forwarding latency folded into the delay of links toward a switch.
        let prop: Vec<Time> = (0..w.ports.len())
            .map(|p| w.links[p].delay - w.fwd[w.ports[w.ports[p].peer.idx()].node.idx()])
            .collect();
        let c = Credit::new(&sc.fabric.credit, &w.ports, &prop, w.sw_lat);
        for (i, p) in w.ports.iter_mut().enumerate() {
            if c.port(i).tracked() {
                p.set_credit_gated();
            }
        }
        AnyFlowControl::Credit(Box::new(c))
    } else if params.pfc {
        AnyFlowControl::Pfc(Pfc::new(
            pfc_on,
            params.ctrl_prio,
            params.pause_quanta,
            w.ports.len(),
        ))
    } else {
        AnyFlowControl::Lossy
    }
}
