//! The first builder: the topology's nodes and links numbered into the fabric's tables.
//! Ports are numbered node by node in link order (a node's ports are contiguous), and
//! port `i` transmits on link `i`. A port carries its link's security overhead, a link
//! the FEC latency and the receiving switch's forwarding latency.

use crate::base::ids::{PortId, PortRange, MAX_INDEX};
use crate::base::units::{Rate, Time};
use crate::model::fabric::faults::config::{FaultPlan, FecMode};
use crate::model::fabric::{Link, Node, NodeKind, Port};
use crate::model::topology::TopoGraph;
use crate::scenario::config::{Scenario, SecurityMode};
use crate::scenario::ScenarioError;
use crate::sim::{err, PortInit};

/// The wired network, before switches, routing and flows.
pub(super) struct Wiring {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub links: Vec<Link>,
    /// The two ports of each topology link: its `a` end's, then its `b` end's.
    pub port_of: Vec<[u32; 2]>,
    /// Node of each switch, in switch order.
    pub switch_nodes: Vec<u32>,
    /// Node of each host, in host order.
    pub host_nodes: Vec<u32>,
    pub node_is_switch: Vec<bool>,
    /// Forwarding latency of a switch (`fabric.switch_latency`).
    pub sw_lat: Time,
    /// Forwarding latency of each node, folded into the delay of every link toward it:
    /// 0 for hosts, `sw_lat` for switches unless the topology gives a switch its own.
    pub fwd: Vec<Time>,
}

/// Numbers nodes and ports and builds the ports and links; errors name the field.
pub(super) fn wire(
    sc: &Scenario,
    g: &TopoGraph,
    faults: &FaultPlan,
    file: &str,
) -> Result<Wiring, ScenarioError> {
    let n = g.nodes.len();
    // Ports: node by node, in link order.
    let mut node_links: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
    for (i, l) in g.links.iter().enumerate() {
        node_links[l.a].push((i, true));
        node_links[l.b].push((i, false));
    }
    let mut port_of: Vec<[u32; 2]> = vec![[0, 0]; g.links.len()];
    let mut nodes = Vec::with_capacity(n);
    let mut next_port = 0u32;
    let mut n_sw = 0u32;
    let mut switch_nodes = Vec::new();
    // Host index of each node (the first, should a node be listed twice): looked up
    // per node, so a scan of the host list each time was quadratic (tens of seconds
    // at 100k hosts).
    let mut host_of_node = vec![u32::MAX; n];
    for (h, &node) in g.hosts.iter().enumerate() {
        if host_of_node[node] == u32::MAX {
            host_of_node[node] = h as u32;
        }
    }
    for (i, ns) in g.nodes.iter().enumerate() {
        let kind = if ns.is_switch {
            n_sw += 1;
            switch_nodes.push(i as u32);
            NodeKind::Switch(n_sw - 1)
        } else {
            NodeKind::Host(match host_of_node[i] {
                u32::MAX => 0,
                h => h,
            })
        };
        nodes.push(Node {
            name: ns.name.clone(),
            kind,
            ports: PortRange {
                first: PortId(next_port),
                len: node_links[i].len() as u32,
            },
        });
        for &(li, is_a) in &node_links[i] {
            port_of[li][if is_a { 0 } else { 1 }] = next_port;
            next_port += 1;
        }
    }
    if next_port > MAX_INDEX {
        return Err(err(
            file,
            "topology",
            format!("{next_port} ports: at most {MAX_INDEX} are supported"),
        ));
    }
    // Fill ports in id order.
    let mut by_id: Vec<Option<PortInit>> = vec![None; next_port as usize];
    for (li, l) in g.links.iter().enumerate() {
        let [pa, pb] = port_of[li];
        let la = nodes[l.a].ports.local(PortId(pa)) as u32;
        let lb = nodes[l.b].ports.local(PortId(pb)) as u32;
        let sec = l.security.unwrap_or(sc.fabric.security.mode);
        by_id[pa as usize] = Some((l.a as u32, la, pb, l.rate, l.delay, sec));
        by_id[pb as usize] = Some((l.b as u32, lb, pa, l.rate, l.delay, sec));
    }
    let node_is_switch: Vec<bool> = g.nodes.iter().map(|x| x.is_switch).collect();
    let sw_lat = sc.fabric.switch_latency;
    let fwd: Vec<Time> = (g.nodes.iter())
        .map(|x| match (x.is_switch, x.forwarding) {
            (false, _) => 0,
            (true, own) => own.unwrap_or(sw_lat),
        })
        .collect();
    if sc.fabric.credit.enabled && g.nodes.iter().any(|x| x.forwarding.is_some()) {
        // Credits time cut-through by one router latency for every switch.
        return Err(err(
            file,
            "fabric.credit.enabled",
            "credit flow control assumes one router latency for every switch, and this \
             topology gives some switches their own (a GPU's crossbar, an NVSwitch): use PFC"
                .to_string(),
        ));
    }
    let by_id: Vec<PortInit> = by_id
        .into_iter()
        .map(|e| e.expect("every port belongs to a link"))
        .collect();
    let (ports, links) = ports_and_links(sc, faults, &nodes, &by_id, &fwd);
    Ok(Wiring {
        nodes,
        ports,
        links,
        port_of,
        switch_nodes,
        host_nodes: g.hosts.iter().map(|&h| h as u32).collect(),
        node_is_switch,
        sw_lat,
        fwd,
    })
}

/// The ports (with their link security) and the links they transmit on (with the FEC
/// and forwarding latencies in their delay), in port order.
fn ports_and_links(
    sc: &Scenario,
    faults: &FaultPlan,
    nodes: &[Node],
    by_id: &[PortInit],
    fwd: &[Time],
) -> (Vec<Port>, Vec<Link>) {
    let mut ports: Vec<Port> = Vec::with_capacity(by_id.len());
    let mut links: Vec<Link> = Vec::with_capacity(by_id.len());
    let secc = &sc.fabric.security;
    // FEC decodes every codeword at the receiving PHY: its latency is every hop's.
    let fec_latency = match faults.fec {
        FecMode::None => 0,
        FecMode::Rs528 => faults.fec_latency,
    };
    for &(node, local, peer, rate, delay, sec) in by_id {
        let peer_node = by_id[peer as usize].0;
        let mut port = Port::new(node, nodes[node as usize].kind, local, peer, rate);
        let mut delay = delay + fec_latency;
        match sec {
            SecurityMode::None => {}
            SecurityMode::Macsec => port.set_security(secc.macsec_bytes as u16, rate),
            SecurityMode::Ipsec => port.set_security(secc.ipsec_bytes as u16, rate),
            SecurityMode::Physec => {
                let f = physec::overhead::ChannelOverhead::for_segment(secc.physec_segment_blocks)
                    .overhead_fraction();
                let eff = ((rate.0 as f64) * (1.0 - f)).floor().max(1.0) as u64;
                port.set_security(0, Rate(eff));
                delay += secc.physec_latency;
            }
        }
        ports.push(port);
        links.push(Link::new(
            delay,
            PortId(peer),
            nodes[peer_node as usize].kind,
        ));
    }
    // The receiving node's forwarding latency is added to the link's delay (packets
    // reach the egress queue that much after their last bit arrives).
    for p in 0..ports.len() {
        let peer_node = ports[ports[p].peer.idx()].node.idx();
        links[p].delay += fwd[peer_node];
    }
    (ports, links)
}
