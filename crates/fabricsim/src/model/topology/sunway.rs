//! The Sunway exascale prototype's network (document 003, `kind = "sunway"`): dual-rail
//! NICs on two independent planes, each plane a generalized fat tree of 40-port routers.
//!
//! The prototype has 512 nodes; each node's NIC has two ports, one to each of two
//! 576-port switches ("planes"). A plane is a leaf-spine of 32 leaf and 18 spine
//! routers: a leaf uses 18 ports down (nodes), 18 up (one to each spine) and has 4 spare.
//! The generalized fat tree ("泛树") joins leaves R[2m] and R[2m+1], the siblings, by those
//! 4 spare ports, so that a node whose leaf lost down paths, or even every uplink, stays
//! reachable through the sibling; the routing builds up/down tables with the lateral
//! links as fallbacks ([`crate::model::routing::updown`]).
//!
//! Here `planes` planes (default 2) of `leaves` leaves and `spines` spines, `nodes` NICs
//! filled leaf by leaf, `nodes_per_leaf` per leaf, `uplinks_per_pair` links between each
//! leaf and spine and `sibling_links` between siblings (0: a plain fat tree). Host `n`
//! is node `n`; its port `p` attaches to plane `p`'s leaf `n / nodes_per_leaf`. Every
//! link runs at `lanes` x `lane_rate` with 64b/66b coding: the document's 4 x 28 Gbps
//! SerDes give a link peak of 13.63 GB/s (109 Gbit/s of data), which a lane rate of
//! 28.125 Gbit/s reproduces. Cables are short (`link_length` default 3 m [recon]); the
//! router latency is the fabric's `switch_latency`. Names: `node<n>`, `p<plane>-leaf<i>`,
//! `p<plane>-spine<j>`. The default is the prototype's full scale; a reduced one keeps
//! its ratios by setting `leaves`, `spines` and `nodes_per_leaf`.

use super::{link_delay, GraphGenerator, TopoGraph, TopoSize};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time};
use serde::Deserialize;

/// Planes (NIC ports) when not given: the prototype's two.
pub const DEFAULT_PLANES: u32 = 2;
/// Leaf routers per plane.
pub const DEFAULT_LEAVES: u32 = 32;
/// Spine routers per plane.
pub const DEFAULT_SPINES: u32 = 18;
/// Node ports per leaf.
pub const DEFAULT_NODES_PER_LEAF: u32 = 18;
/// Nodes of the prototype.
pub const DEFAULT_NODES: u32 = 512;
/// Links between siblings: a leaf's 4 spare ports.
pub const DEFAULT_SIBLING_LINKS: u32 = 4;
/// Lanes per link.
pub const DEFAULT_LANES: u32 = 4;
/// Lane rate: 28 Gbps class SerDes; 28.125 Gbit/s gives the document's 13.63 GB/s link
/// peak after 64b/66b coding.
pub const DEFAULT_LANE_RATE: Rate = Rate(28_125_000_000);
/// Cable length \[recon\]: the document gives none; 3 m within a cabinet.
pub const DEFAULT_LINK_LENGTH_M: f64 = 3.0;
/// Ports of a router chip (SWHRC).
pub const ROUTER_PORTS: u32 = 40;

fn d_planes() -> u32 {
    DEFAULT_PLANES
}
fn d_leaves() -> u32 {
    DEFAULT_LEAVES
}
fn d_spines() -> u32 {
    DEFAULT_SPINES
}
fn d_nodes_per_leaf() -> u32 {
    DEFAULT_NODES_PER_LEAF
}
fn d_nodes() -> u32 {
    DEFAULT_NODES
}
fn d_sibling_links() -> u32 {
    DEFAULT_SIBLING_LINKS
}
fn d_lanes() -> u32 {
    DEFAULT_LANES
}
fn d_lane_rate() -> Rate {
    DEFAULT_LANE_RATE
}

/// The Sunway network: dual-rail NICs on planes of generalized fat trees.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SunwayCfg {
    /// Planes, one per NIC port.
    #[serde(default = "d_planes")]
    pub planes: u32,
    /// Leaf routers per plane.
    #[serde(default = "d_leaves")]
    pub leaves: u32,
    /// Spine routers per plane.
    #[serde(default = "d_spines")]
    pub spines: u32,
    /// Node ports per leaf.
    #[serde(default = "d_nodes_per_leaf")]
    pub nodes_per_leaf: u32,
    /// Nodes (dual-rail NICs), filled leaf by leaf.
    #[serde(default = "d_nodes")]
    pub nodes: u32,
    /// Parallel links between each leaf and each spine.
    #[serde(default = "super::one")]
    pub uplinks_per_pair: u32,
    /// Links between sibling leaves R[2m] and R[2m+1]; 0 for a plain fat tree.
    #[serde(default = "d_sibling_links")]
    pub sibling_links: u32,
    /// Lanes per link.
    #[serde(default = "d_lanes")]
    pub lanes: u32,
    /// Rate of one lane (before 64b/66b coding).
    #[serde(default = "d_lane_rate", deserialize_with = "su::rate")]
    pub lane_rate: Rate,
    /// Delay of every link (or give `link_length`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre (default 3 m).
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

impl Described for SunwayCfg {
    const ABOUT: &'static str =
        "the Sunway network (document 003): dual-rail NICs on planes of generalized fat trees";
    fn params() -> Vec<Param> {
        vec![
            Param::plain("planes", d_planes(), "planes, one per NIC port"),
            Param::plain("leaves", d_leaves(), "leaf routers per plane"),
            Param::plain("spines", d_spines(), "spine routers per plane"),
            Param::plain("nodes_per_leaf", d_nodes_per_leaf(), "node ports per leaf"),
            Param::plain("nodes", d_nodes(), "nodes (dual-rail NICs), leaf by leaf"),
            Param::plain(
                "uplinks_per_pair",
                super::one(),
                "parallel links between each leaf and each spine",
            ),
            Param::plain(
                "sibling_links",
                d_sibling_links(),
                "links between sibling leaves 2m and 2m+1 (0: plain fat tree)",
            ),
            Param::plain("lanes", d_lanes(), "lanes per link"),
            Param::rate(
                "lane_rate",
                DEFAULT_LANE_RATE.0 as f64,
                "rate of one lane; a link carries lanes x lane_rate x 64/66",
            ),
            Param::unset("link_delay", "delay of every link (or give link_length)"),
            Param::plain(
                "link_length",
                DEFAULT_LINK_LENGTH_M,
                "cable length of every link, 5 ns per metre [recon]",
            ),
        ]
    }
}

impl SunwayCfg {
    /// Data rate of a link: `lanes` x `lane_rate` after 64b/66b coding.
    pub fn link_rate(&self) -> Rate {
        Rate(self.lanes as u64 * self.lane_rate.0 / 66 * 64)
    }
}

impl GraphGenerator for SunwayCfg {
    fn generate(&self, _base_dir: &std::path::Path) -> Result<TopoGraph, ParamError> {
        build(self)
    }

    fn size(&self, _base_dir: &std::path::Path) -> Result<Option<TopoSize>, ParamError> {
        counts(self).map(Some)
    }

    fn size_drivers(&self) -> &'static str {
        "nodes (hosts), planes x (nodes + leaves x spines x uplinks_per_pair \
         + leaves / 2 x sibling_links) (links)"
    }

    fn size_knobs(&self, _base_dir: &std::path::Path) -> Vec<SizeKnob<TopoSize>> {
        size_knobs(
            self,
            &[
                ("planes", |c| c.planes = 1),
                ("nodes", |c| c.nodes = 1),
                // As few leaves as hold the nodes (an even count when siblings pair them).
                ("leaves", |c| {
                    let need = c.nodes.div_ceil(c.nodes_per_leaf.max(1)).max(1);
                    c.leaves = if c.sibling_links > 0 {
                        need.next_multiple_of(2)
                    } else {
                        need
                    };
                }),
                ("spines", |c| c.spines = 1),
                ("uplinks_per_pair", |c| c.uplinks_per_pair = 1),
                ("sibling_links", |c| c.sibling_links = 0),
            ],
            |c| counts(c).ok(),
        )
    }
}

/// The planes' counts from the settings (checked as far as counting needs): what
/// [`build`] checks against the size limit before it allocates.
pub fn counts(c: &SunwayCfg) -> Result<TopoSize, ParamError> {
    let fe = |field: &str, m: String| Err(ParamError::new(field, m));
    for (field, v) in [
        ("planes", c.planes),
        ("leaves", c.leaves),
        ("spines", c.spines),
        ("nodes_per_leaf", c.nodes_per_leaf),
        ("nodes", c.nodes),
        ("uplinks_per_pair", c.uplinks_per_pair),
    ] {
        if v == 0 {
            return fe(field, "must be at least 1".into());
        }
    }
    if !matches!(c.lanes, 1 | 2 | 4) {
        return fe("lanes", format!("{}: a link has 1, 2 or 4 lanes", c.lanes));
    }
    if c.link_rate().0 == 0 {
        return fe("lane_rate", "must be positive".into());
    }
    if c.sibling_links > 0 && !c.leaves.is_multiple_of(2) {
        return fe(
            "sibling_links",
            format!(
                "siblings pair leaves 2m and 2m+1, so the leaf count must be even: {} leaves",
                c.leaves
            ),
        );
    }
    let cap = c.leaves as u64 * c.nodes_per_leaf as u64;
    if c.nodes as u64 > cap {
        return fe(
            "nodes",
            format!(
                "{} nodes do not fit in {} leaves of {} node ports ({cap})",
                c.nodes, c.leaves, c.nodes_per_leaf
            ),
        );
    }
    // Saturating: a huge spine count must be refused here, not overflow.
    let ports = c
        .nodes_per_leaf
        .saturating_add(c.spines.saturating_mul(c.uplinks_per_pair))
        .saturating_add(c.sibling_links);
    if ports > ROUTER_PORTS * 4 {
        return fe(
            "nodes_per_leaf",
            format!("a leaf would need {ports} ports: far beyond a {ROUTER_PORTS}-port router"),
        );
    }
    // Saturating: planes, leaves, spines and uplinks_per_pair are only bounded by the
    // size check itself.
    let (planes, leaves) = (c.planes as u64, c.leaves as u64);
    let per_plane = (c.nodes as u64)
        .saturating_add(
            leaves
                .saturating_mul(c.spines as u64)
                .saturating_mul(c.uplinks_per_pair as u64),
        )
        .saturating_add((c.leaves / 2) as u64 * c.sibling_links as u64);
    // Node n hangs off leaf n / nodes_per_leaf, in every plane.
    let used_leaves = (c.nodes as u64).div_ceil(c.nodes_per_leaf as u64);
    Ok(TopoSize {
        hosts: c.nodes as u64,
        switches: planes.saturating_mul(leaves.saturating_add(c.spines as u64)),
        edge_switches: planes.saturating_mul(used_leaves),
        links: planes.saturating_mul(per_plane),
        host_rate_bps: c.link_rate().0.saturating_mul(planes),
    })
}

/// Builds the planes.
pub fn build(c: &SunwayCfg) -> Result<TopoGraph, ParamError> {
    let size = counts(c)?;
    super::check_size(size.hosts, size.links)?;
    let length = match (c.link_delay, c.link_length) {
        (None, None) => Some(DEFAULT_LINK_LENGTH_M),
        (_, l) => l,
    };
    let delay = link_delay(c.link_delay, length, "link_delay", "link_length")?;
    let rate = c.link_rate();
    let mut g = TopoGraph {
        rails: c.planes,
        ..Default::default()
    };
    let hosts: Vec<usize> = (0..c.nodes)
        .map(|n| g.add_host(format!("node{n}"), n))
        .collect();
    // Plane by plane, so that a node's links, and hence its ports, are in plane order.
    for p in 0..c.planes {
        let leaves: Vec<usize> = (0..c.leaves)
            .map(|i| {
                let n = g.add_node(format!("p{p}-leaf{i}"), true);
                g.nodes[n].tier = 1;
                n
            })
            .collect();
        let spines: Vec<usize> = (0..c.spines)
            .map(|j| {
                let n = g.add_node(format!("p{p}-spine{j}"), true);
                g.nodes[n].tier = 2;
                n
            })
            .collect();
        for (n, &h) in hosts.iter().enumerate() {
            g.link(h, leaves[n / c.nodes_per_leaf as usize], rate, delay);
        }
        for &l in &leaves {
            for &s in &spines {
                for _ in 0..c.uplinks_per_pair {
                    g.link(l, s, rate, delay);
                }
            }
        }
        for m in 0..(c.leaves / 2) as usize {
            for _ in 0..c.sibling_links {
                g.link(leaves[2 * m], leaves[2 * m + 1], rate, delay);
            }
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(src: &str) -> SunwayCfg {
        toml::from_str(src).unwrap()
    }

    #[test]
    fn the_prototype_is_two_planes_of_32_leaves_and_18_spines() {
        let c = cfg("");
        let g = build(&c).unwrap();
        g.validate().unwrap();
        assert_eq!(g.hosts.len(), 512);
        assert_eq!(g.rails, 2);
        let switches = g.nodes.iter().filter(|n| n.is_switch).count();
        assert_eq!(switches, 2 * (32 + 18));
        // Per plane: 512 node links, 32 x 18 uplinks, 16 x 4 sibling links.
        assert_eq!(g.links.len(), 2 * (512 + 32 * 18 + 16 * 4));
        // 4 x 28.125 Gbit/s with 64b/66b: 109.09 Gbit/s, 13.64 GB/s.
        assert_eq!(c.link_rate(), Rate(109_090_909_056));
        // A leaf uses 18 + 18 + 4 = 40 ports: the router's.
        let leaf = g.nodes.iter().position(|n| n.name == "p1-leaf7").unwrap();
        let deg = g
            .links
            .iter()
            .filter(|l| l.a == leaf || l.b == leaf)
            .count();
        assert_eq!(deg, 40);
    }

    #[test]
    fn node_ports_are_in_plane_order() {
        let g = build(&cfg(
            "leaves = 4\nspines = 2\nnodes_per_leaf = 3\nnodes = 10",
        ))
        .unwrap();
        g.validate().unwrap();
        let name = |i: usize| g.nodes[i].name.clone();
        for (n, &h) in g.hosts.iter().enumerate() {
            let ends: Vec<String> = g
                .links
                .iter()
                .filter(|l| l.a == h)
                .map(|l| name(l.b))
                .collect();
            let leaf = n / 3;
            assert_eq!(
                ends,
                vec![format!("p0-leaf{leaf}"), format!("p1-leaf{leaf}")]
            );
        }
    }

    #[test]
    fn bad_shapes_name_the_field() {
        let bad = |src: &str| build(&cfg(src)).unwrap_err().to_string();
        assert!(bad("leaves = 3").contains("sibling_links"));
        assert!(build(&cfg("leaves = 3\nsibling_links = 0\nnodes = 10")).is_ok());
        assert!(bad("nodes = 600").contains("nodes"));
        assert!(bad("planes = 0").contains("planes"));
        assert!(bad("lanes = 3").contains("lanes"));
    }
}
