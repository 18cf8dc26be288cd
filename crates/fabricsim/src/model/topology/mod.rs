//! Topologies: the graph of hosts (NICs), switches and full-duplex links a scenario asks
//! for, before it is turned into ports and links of the runtime model.
//!
//! Each generator (leaf-spine, fat-tree, three-tier Clos, custom, an ns-3 HPCC topology
//! file, GPU campuses joined by long-haul fibre, the Sunway planes, rail-optimized GPU
//! clusters) produces a [`TopoGraph`]; validation common to all of them (connectivity,
//! positive rates, one link per host) lives here so every generator gets the same clear
//! errors.

pub mod custom;
pub mod fat_tree;
pub mod leaf_spine;
pub mod multi_campus;
pub mod ns3;
pub mod rail_optimized;
pub mod registry;
pub mod sunway;
pub mod three_tier;

use crate::base::ids::MAX_INDEX;
use crate::base::param::{Param, ParamError, SizeKnob};
use crate::base::units::{Rate, Time, PS_PER_METRE, US};
use std::path::Path;

pub use custom::{CustomLinkCfg, CustomRouteCfg, CustomTopoCfg};
pub use fat_tree::FatTreeCfg;
pub use leaf_spine::LeafSpineCfg;
pub use multi_campus::MultiCampusCfg;
pub use ns3::Ns3FileCfg;
pub use rail_optimized::RailOptimizedCfg;
pub use registry::{TopologyCfg, KINDS};
pub use sunway::SunwayCfg;
pub use three_tier::ThreeTierCfg;

/// A kind of topology: its settings generate the graph.
pub trait GraphGenerator {
    /// The graph; files are read relative to `base_dir`. Errors name fields relative to
    /// `[topology]`.
    fn generate(&self, base_dir: &Path) -> Result<TopoGraph, ParamError>;

    /// What [`GraphGenerator::generate`] would build, counted from the settings alone
    /// (files are read, within the input size limit, but no graph is built), so that the
    /// memory budget ([`crate::scenario::budget`]) is checked before anything large is allocated.
    /// Counts are exact or upper bounds, in saturating arithmetic. `None`: not known.
    /// Every kind implements it (no default), from the same counting function its
    /// generator checks [`check_size`] with, so the two cannot drift.
    fn size(&self, base_dir: &Path) -> Result<Option<TopoSize>, ParamError>;

    /// The settings that drive the size, as a user reads them (`"leaves x
    /// servers_per_leaf x nics_per_server"`): the budget's refusal names them.
    fn size_drivers(&self) -> &'static str;

    /// The fields that multiply the graph, each with the size it would have were that
    /// field at its least value: of these the budget names the one that drives a count
    /// (`topology.planes`, `topology.campuses`). Every kind implements it (no default),
    /// from the counting function of [`GraphGenerator::size`].
    fn size_knobs(&self, base_dir: &Path) -> Vec<SizeKnob<TopoSize>>;
}

/// Link security modes.
#[derive(Clone, Copy, Debug, serde::Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SecurityMode {
    /// No encryption.
    None,
    /// IEEE 802.1AE MACsec: SecTAG + ICV bytes on every frame (not PFC frames).
    Macsec,
    /// IPsec ESP tunnel: bytes on every IP packet.
    Ipsec,
    /// PHYSec channel-level encryption (document 000): no per-frame bytes; the segment
    /// framing (S, D, T blocks) takes a fraction of the line rate, plus a latency per hop.
    Physec,
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A NIC, with its host id.
    Host(u32),
    /// A switch, with its index in the switch table.
    Switch(u32),
}

/// A port's place in the wiring: the node it belongs to and the port at the other end
/// of its cable. What routing reads of the built ports (the fabric's `Port` holds these
/// beside its queues).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortEnds {
    /// The node the port belongs to.
    pub node: crate::base::ids::NodeId,
    /// The port at the far end of its cable.
    pub peer: crate::base::ids::PortId,
}

/// A node: its name, kind and its ports (contiguous ids).
#[derive(Clone, Debug)]
pub struct Node {
    /// Name from the topology (`leaf0`, `host3`).
    pub name: String,
    /// Host or switch.
    pub kind: NodeKind,
    /// Its ports.
    pub ports: crate::base::ids::PortRange,
}

crate::base::ids::indexed_by!(crate::base::ids::NodeId => Node);

/// Counts of a topology, from its settings ([`GraphGenerator::size`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopoSize {
    /// Hosts (NICs).
    pub hosts: u64,
    /// Switches (DR switches included).
    pub switches: u64,
    /// Switches with hosts attached (routing tables hold an entry per switch and edge
    /// switch).
    pub edge_switches: u64,
    /// Full-duplex links (each is two ports).
    pub links: u64,
    /// The fastest NIC, in bit/s: its host link's rate times its ports (rails); 0 when
    /// no host has a link. Bounds how many flows a
    /// Poisson workload of a given load and duration makes.
    pub host_rate_bps: u64,
}

/// The size of the topology a section describes, without building it.
pub fn size(cfg: &TopologyCfg, base_dir: &Path) -> Result<Option<TopoSize>, ParamError> {
    cfg.model().size(base_dir)
}

/// The knobs of the topology a section describes ([`GraphGenerator::size_knobs`]).
pub fn size_knobs(cfg: &TopologyCfg, base_dir: &Path) -> Vec<SizeKnob<TopoSize>> {
    cfg.model().size_knobs(base_dir)
}

fn one() -> u32 {
    1
}

/// The `link_delay` and `link_length` rows of a generated topology's listing.
fn delay_params() -> [Param; 2] {
    [
        Param::time(
            "link_delay",
            DEFAULT_LINK_DELAY,
            "delay of every link (or give link_length)",
        ),
        Param::unset(
            "link_length",
            "cable length of every link, at 5 ns per metre",
        ),
    ]
}

/// Default link delay when neither delay nor length is given.
pub const DEFAULT_LINK_DELAY: Time = US;

/// One node of the graph.
#[derive(Clone, Debug)]
pub struct NodeSpec {
    /// Human-readable name (`host12`, `leaf3`, `spine0`, ...).
    pub name: String,
    /// Switch or host.
    pub is_switch: bool,
    /// What the node does beyond forwarding; [`NodeRole::Fabric`] unless a generator
    /// says otherwise (only `multi_campus` does, for its DR switches).
    pub role: NodeRole,
    /// The campus the node belongs to in a multi-campus graph; `None` in every other kind.
    pub campus: Option<u32>,
    /// A switch's tier in a generalized fat tree (1 for leaves, 2 for spines; links
    /// between switches of one tier are lateral, for fault tolerance): the routing builds
    /// up/down tables with lateral fallbacks. 0 (every kind but `sunway`): plain
    /// shortest paths.
    pub tier: u8,
    /// A switch's own forwarding latency, for switches that are not datacenter switches
    /// (a GPU's crossbar, an NVSwitch of `rail_optimized`'s scale-up domain); `None`: the
    /// fabric's `switch_latency`.
    pub forwarding: Option<Time>,
}

/// A node's part in the network beyond being a host or a switch. The graph only carries
/// it: the simulator builds every node as a plain host or switch whatever its role, until
/// a model reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum NodeRole {
    /// A host, or a switch of a campus fabric (leaf, spine, ToR, ...).
    #[default]
    Fabric,
    /// A long-haul DR switch (document 001): it joins a campus to the DCI fibre.
    Dr(DrSpec),
}

/// What a DR switch of a multi-campus graph asks of the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrSpec {
    /// Its (deep) shared buffer, bytes.
    pub buffer: u64,
    /// Whether its DCI-facing ports are lossless (PFC across the fibre, headroom sized
    /// for it) rather than lossy (drop-tail, drops counted per port).
    pub dci_lossless: bool,
}

/// One full-duplex link.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    /// Node index of one end.
    pub a: usize,
    /// Node index of the other end.
    pub b: usize,
    /// Rate in each direction.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Time,
    /// Security mode override for this link.
    pub security: Option<SecurityMode>,
}

/// A static route of a custom topology.
#[derive(Clone, Debug)]
pub struct StaticRoute {
    /// Switch node.
    pub at: usize,
    /// Destination host id.
    pub to_host: usize,
    /// Neighbour nodes to forward to.
    pub via: Vec<usize>,
}

/// A steering rule of the generated graph: at switch node `at`, toward hosts of servers
/// other than `server` (every server when `None`), forward only to the neighbours `via`
/// where a shortest path leads through one of them (`rail_optimized`'s `pxn`).
#[derive(Clone, Debug)]
pub struct SteerSpec {
    /// Switch node.
    pub at: usize,
    /// Its server (`None`: a switch of no server).
    pub server: Option<u32>,
    /// Neighbour nodes kept.
    pub via: Vec<usize>,
}

/// The generated network.
#[derive(Clone, Debug, Default)]
pub struct TopoGraph {
    /// All nodes.
    pub nodes: Vec<NodeSpec>,
    /// All links.
    pub links: Vec<LinkSpec>,
    /// Node index of each host id.
    pub hosts: Vec<usize>,
    /// Server index of each host (NICs of one server share it).
    pub server_of_host: Vec<u32>,
    /// Static routes (custom topologies only).
    pub routes: Vec<StaticRoute>,
    /// Steering rules (`rail_optimized` with `pxn` set only).
    pub steer: Vec<SteerSpec>,
    /// Ports per host (NIC), one per plane, its links in plane order; 0 means 1. Only
    /// `sunway` has more: dual-rail NICs on two independent planes.
    pub rails: u32,
}

impl TopoGraph {
    /// Adds a node and returns its index.
    pub fn add_node(&mut self, name: String, is_switch: bool) -> usize {
        self.nodes.push(NodeSpec {
            name,
            is_switch,
            role: NodeRole::Fabric,
            campus: None,
            tier: 0,
            forwarding: None,
        });
        self.nodes.len() - 1
    }
    /// Adds a host (a node plus a host id) and returns the node index.
    pub fn add_host(&mut self, name: String, server: u32) -> usize {
        let n = self.add_node(name, false);
        self.hosts.push(n);
        self.server_of_host.push(server);
        n
    }
    /// Adds a full-duplex link.
    pub fn link(&mut self, a: usize, b: usize, rate: Rate, delay: Time) {
        self.links.push(LinkSpec {
            a,
            b,
            rate,
            delay,
            security: None,
        });
    }

    /// Indices of the links that join two campuses (both ends DR switches of different
    /// campuses): the DCI links of a multi-campus graph; none in any other kind.
    pub fn dci_links(&self) -> Vec<usize> {
        let is_dr = |n: usize| matches!(self.nodes[n].role, NodeRole::Dr(_));
        (0..self.links.len())
            .filter(|&i| {
                let l = &self.links[i];
                is_dr(l.a) && is_dr(l.b) && self.nodes[l.a].campus != self.nodes[l.b].campus
            })
            .collect()
    }

    /// Checks what every topology must satisfy.
    pub fn validate(&self) -> Result<(), ParamError> {
        let f = |m: String| ParamError::new("", m);
        if self.hosts.len() < 2 {
            return Err(f(format!(
                "a topology needs at least 2 hosts, this one has {}",
                self.hosts.len()
            )));
        }
        let mut degree = vec![0usize; self.nodes.len()];
        for l in &self.links {
            if l.rate.0 == 0 {
                return Err(f(format!(
                    "link {} - {} has rate 0; rates must be positive",
                    self.nodes[l.a].name, self.nodes[l.b].name
                )));
            }
            if l.a == l.b {
                return Err(f(format!("link from {} to itself", self.nodes[l.a].name)));
            }
            if !self.nodes[l.a].is_switch && !self.nodes[l.b].is_switch {
                return Err(f(format!(
                    "link {} - {} joins two hosts; hosts attach to switches",
                    self.nodes[l.a].name, self.nodes[l.b].name
                )));
            }
            degree[l.a] += 1;
            degree[l.b] += 1;
        }
        let rails = self.rails.max(1) as usize;
        for &h in &self.hosts {
            if degree[h] != rails {
                return Err(f(format!(
                    "host {} has {} links; each host (NIC) has exactly {}",
                    self.nodes[h].name,
                    degree[h],
                    if rails == 1 {
                        "one".to_string()
                    } else {
                        format!("{rails}, one per plane")
                    }
                )));
            }
        }
        // Connectivity: a breadth-first search from host 0 must reach every node.
        let mut adj = vec![Vec::new(); self.nodes.len()];
        for l in &self.links {
            adj[l.a].push(l.b);
            adj[l.b].push(l.a);
        }
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![self.hosts[0]];
        seen[self.hosts[0]] = true;
        while let Some(n) = stack.pop() {
            for &m in &adj[n] {
                if !seen[m] {
                    seen[m] = true;
                    stack.push(m);
                }
            }
        }
        if let Some(n) = seen.iter().position(|s| !s) {
            return Err(f(format!(
                "the topology is disconnected: {} cannot be reached from {}",
                self.nodes[n].name, self.nodes[self.hosts[0]].name
            )));
        }
        Ok(())
    }
}

/// Checks, before anything is allocated, that a generated network fits the simulator: each
/// full-duplex link is two ports, and ports (like hosts) are numbered up to
/// [`MAX_INDEX`]. Counts are computed in saturating arithmetic by the caller.
pub fn check_size(hosts: u64, links: u64) -> Result<(), ParamError> {
    let ports = links.saturating_mul(2);
    if hosts > MAX_INDEX as u64 || ports > MAX_INDEX as u64 {
        return Err(ParamError::new("",
            format!(
                "{hosts} hosts and {links} links ({ports} ports) is too large: at most {MAX_INDEX} ports are supported"
            ),
        ));
    }
    Ok(())
}

/// Resolves a link's delay from an explicit delay or a cable length.
pub fn link_delay(
    delay: Option<Time>,
    length_m: Option<f64>,
    field: &str,
    length_field: &str,
) -> Result<Time, ParamError> {
    // A delay derived from a length is reported under the length: that is what the
    // user wrote.
    let mut at = field;
    let d = match (delay, length_m) {
        (Some(_), Some(_)) => {
            return Err(ParamError::new(
                field,
                "give either a delay or a length, not both",
            ))
        }
        (Some(d), None) => d,
        (None, Some(m)) => {
            at = length_field;
            let d = m * PS_PER_METRE as f64;
            // A length is finite and non-negative (see `parse_length_m`); its delay may be inf.
            if d > MAX_LINK_DELAY as f64 {
                return Err(ParamError::new(
                    at,
                    format!(
                        "{m} m of cable is a delay above 1 s: at most 1 s (200,000 km) is allowed"
                    ),
                ));
            }
            d.round() as Time
        }
        (None, None) => DEFAULT_LINK_DELAY,
    };
    if d > MAX_LINK_DELAY {
        return Err(ParamError::new(
            at,
            format!(
                "{}: at most 1 s is allowed",
                crate::base::units::fmt_time(d)
            ),
        ));
    }
    Ok(d)
}

/// Longest link delay: 1 s (200,000 km of fibre).
pub const MAX_LINK_DELAY: Time = crate::base::units::SEC;

/// Builds the graph a scenario's topology section describes; topology files are read
/// relative to `base_dir` (the scenario file's directory). Errors name fields relative to
/// `[topology]`.
pub fn build(cfg: &TopologyCfg, base_dir: &Path) -> Result<TopoGraph, ParamError> {
    let g = cfg.model().generate(base_dir)?;
    g.validate()?;
    Ok(g)
}
