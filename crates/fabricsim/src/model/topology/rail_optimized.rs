//! A rail-optimized GPU cluster (`kind = "rail_optimized"`): servers of `gpus_per_server`
//! GPUs, each GPU with its own NIC, NIC `r` of every server cabled to the leaf switch of
//! rail `r`.
//!
//! This is the back-end network of NVIDIA's DGX SuperPOD reference architectures (the
//! DGX H100 SuperPOD's "rail-optimized" compute fabric: each of a DGX's eight ConnectX-7
//! ports goes to a different leaf, so GPU `r` of every server in a scalable unit shares
//! leaf `r`) and of Meta's and Alibaba's training clusters (Gangidi et al., "RDMA over
//! Ethernet for Distributed AI Training at Meta Scale", SIGCOMM 2024; Qian et al.,
//! "Alibaba HPN: A Data Center Network for Large Language Model Training", SIGCOMM 2024,
//! whose NICs have two ports on two independent planes). NCCL places GPU `r` of every
//! server on the same ring or tree channel, so most collective traffic stays on one
//! rail: it crosses two links and one leaf. Traffic between rails climbs to a spine.
//!
//! Shape: `servers` servers split evenly over `leaves_per_rail` leaves per rail (a
//! rail's leaf `i` takes servers `i * servers / leaves_per_rail ..`); every leaf of a
//! plane joins every spine of that plane by `uplinks_per_pair` links. With `planes` > 1
//! each NIC has one port per plane, `nic_rate / planes` each, and each plane is an
//! independent copy of the rail fabric (no link joins two planes; the NIC spreads or
//! pins its packets as `transport.rail` says). The spine count is given (`spines`) or
//! derived from the leaves' `oversubscription` (downlink : uplink capacity, 1 for a
//! non-blocking fabric): spines = servers per leaf x port rate / (oversubscription x
//! uplinks_per_pair x uplink_rate), which must be whole. `switch_radix`, when given,
//! bounds the ports of every leaf and spine.
//!
//! Host ids run server by server: host = server x gpus_per_server + gpu; its port `p`
//! is its link in plane `p`. Names: `s<server>-gpu<g>`, `rail<r>-leaf<i>`, `spine<j>`,
//! prefixed `p<plane>-` when there are several planes. Rates, delays, buffers, flow
//! control and load balancing are the fabric's, as for every kind.

use super::{delay_params, link_delay, GraphGenerator, TopoGraph, TopoSize};
use crate::base::ids::MAX_INDEX;
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time};
use serde::Deserialize;

/// Most GPUs in one server. The largest NVLink domain NVIDIA ships in one enclosure is
/// the GB200 NVL72 rack's 72 GPUs, but its GPUs sit in 18 compute trays of 4; an
/// eight-GPU HGX baseboard is the usual server. 64 keeps a server's rails (one leaf each)
/// within what a leaf's radix could serve and refuses typing mistakes early.
pub const MAX_GPUS_PER_SERVER: u32 = 64;

fn d_oversubscription() -> f64 {
    1.0
}

/// A rail-optimized GPU cluster.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RailOptimizedCfg {
    /// Servers.
    pub servers: u32,
    /// GPUs per server, each with its own NIC (its rail).
    pub gpus_per_server: u32,
    /// Rails per plane; when given it must equal `gpus_per_server` (one NIC per GPU).
    #[serde(default)]
    pub rails: Option<u32>,
    /// Leaf switches per rail (per plane); the servers are split evenly over them.
    #[serde(default = "super::one")]
    pub leaves_per_rail: u32,
    /// Planes: each NIC has one port per plane, each plane an independent rail fabric.
    #[serde(default = "super::one")]
    pub planes: u32,
    /// Rate of a GPU's NIC, split evenly over its ports (one per plane).
    #[serde(deserialize_with = "su::rate")]
    pub nic_rate: Rate,
    /// Rate of each leaf-spine link (unset: a NIC port's rate).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub uplink_rate: Option<Rate>,
    /// Parallel links between each leaf and each spine of a plane.
    #[serde(default = "super::one")]
    pub uplinks_per_pair: u32,
    /// Spine switches per plane; omit to derive them from `oversubscription`.
    #[serde(default)]
    pub spines: Option<u32>,
    /// A leaf's downlink : uplink capacity (1: non-blocking); sets the spine count when
    /// `spines` is not given.
    #[serde(default)]
    pub oversubscription: Option<f64>,
    /// Ports of a switch; when given every leaf and spine must fit in it.
    #[serde(default)]
    pub switch_radix: Option<u32>,
    /// Delay of every link (or give `link_length`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

impl Described for RailOptimizedCfg {
    const ABOUT: &'static str =
        "GPU servers whose NIC r goes to the leaf of rail r; leaves joined by spines; planes";
    fn params() -> Vec<Param> {
        let mut v = vec![
            Param::required("servers", "servers"),
            Param::required(
                "gpus_per_server",
                format!("GPUs per server (1 to {MAX_GPUS_PER_SERVER}), each with its own NIC"),
            ),
            Param::unset(
                "rails",
                "rails per plane; if given, must equal gpus_per_server",
            ),
            Param::plain(
                "leaves_per_rail",
                super::one(),
                "leaves per rail and plane; servers split evenly over them",
            ),
            Param::plain(
                "planes",
                super::one(),
                "planes: one NIC port each, independent copies of the rail fabric",
            ),
            Param::required(
                "nic_rate",
                "rate of a GPU's NIC, split evenly over its planes",
            ),
            Param::unset(
                "uplink_rate",
                "rate of each leaf-spine link (unset: a NIC port's rate)",
            ),
            Param::plain(
                "uplinks_per_pair",
                super::one(),
                "parallel links between each leaf and each spine",
            ),
            Param::unset(
                "spines",
                "spines per plane; omit to derive them from oversubscription",
            ),
            Param::plain(
                "oversubscription",
                d_oversubscription(),
                "leaf downlink:uplink capacity when spines is not given (1: non-blocking)",
            ),
            Param::unset("switch_radix", "ports of a switch; every switch must fit"),
        ];
        v.extend(delay_params());
        v
    }
}

impl GraphGenerator for RailOptimizedCfg {
    fn generate(&self, _base_dir: &std::path::Path) -> Result<TopoGraph, ParamError> {
        build(self)
    }

    fn size(&self, _base_dir: &std::path::Path) -> Result<Option<TopoSize>, ParamError> {
        Ok(Some(counts(self)?.size))
    }

    fn size_drivers(&self) -> &'static str {
        "servers x gpus_per_server (hosts), planes x (hosts + gpus_per_server x \
         leaves_per_rail x spines x uplinks_per_pair) (links)"
    }

    fn size_knobs(&self, _base_dir: &std::path::Path) -> Vec<SizeKnob<TopoSize>> {
        size_knobs(
            self,
            &[
                ("servers", |c| c.servers = c.leaves_per_rail.max(1)),
                ("gpus_per_server", |c| {
                    c.gpus_per_server = 1;
                    c.rails = None;
                }),
                ("planes", |c| c.planes = 1),
                ("leaves_per_rail", |c| c.leaves_per_rail = 1),
                ("spines", |c| c.spines = c.spines.map(|s| s.min(1))),
                ("uplinks_per_pair", |c| c.uplinks_per_pair = 1),
            ],
            |c| counts(c).ok().map(|s| s.size),
        )
    }
}

/// What the settings make, checked as far as counting needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RailCounts {
    /// The graph's counts.
    pub size: TopoSize,
    /// Spines per plane.
    pub spines: u32,
    /// Servers on each leaf.
    pub servers_per_leaf: u32,
    /// Rate of one NIC port (one plane's share of the NIC).
    pub port_rate: Rate,
}

/// The graph's counts and shape from the settings alone: what [`build`] checks against
/// the size limit before it allocates. Errors name the field at fault.
pub fn counts(c: &RailOptimizedCfg) -> Result<RailCounts, ParamError> {
    let fe = |field: &str, m: String| Err(ParamError::new(field, m));
    for (field, v) in [
        ("servers", c.servers),
        ("leaves_per_rail", c.leaves_per_rail),
        ("planes", c.planes),
        ("uplinks_per_pair", c.uplinks_per_pair),
    ] {
        if v == 0 {
            return fe(field, "must be at least 1".into());
        }
    }
    if c.gpus_per_server == 0 || c.gpus_per_server > MAX_GPUS_PER_SERVER {
        return fe(
            "gpus_per_server",
            format!(
                "{}: a server has 1 to {MAX_GPUS_PER_SERVER} GPUs",
                c.gpus_per_server
            ),
        );
    }
    if let Some(r) = c.rails {
        if r != c.gpus_per_server {
            return fe(
                "rails",
                format!(
                    "{r} rails with {} GPUs per server: each GPU has its own NIC, its rail, so \
                     rails must equal gpus_per_server (one NIC per GPU; use planes for more \
                     ports per NIC)",
                    c.gpus_per_server
                ),
            );
        }
    }
    if c.planes > 255 {
        return fe("planes", format!("{}: at most 255 planes", c.planes));
    }
    if c.nic_rate.0 == 0 {
        return fe("nic_rate", "must be positive".into());
    }
    if !c.nic_rate.0.is_multiple_of(c.planes as u64) {
        return fe(
            "planes",
            format!(
                "{} planes do not divide nic_rate {} into equal ports: choose planes that divide it",
                c.planes, c.nic_rate
            ),
        );
    }
    let port_rate = Rate(c.nic_rate.0 / c.planes as u64);
    if !c.servers.is_multiple_of(c.leaves_per_rail) {
        return fe(
            "leaves_per_rail",
            format!(
                "{} servers do not split evenly over {} leaves per rail",
                c.servers, c.leaves_per_rail
            ),
        );
    }
    let servers_per_leaf = c.servers / c.leaves_per_rail;
    let up = c.uplink_rate.unwrap_or(port_rate);
    if up.0 == 0 {
        return fe("uplink_rate", "must be positive".into());
    }
    let leaves = (c.gpus_per_server as u64).saturating_mul(c.leaves_per_rail as u64);
    let spines = match (c.spines, c.oversubscription) {
        (Some(_), Some(_)) => {
            return fe(
                "oversubscription",
                "give either spines or oversubscription, not both".into(),
            )
        }
        (Some(s), None) => s,
        // One leaf in the plane: nothing to join.
        (None, None) if leaves == 1 => 0,
        (None, o) => {
            let o = o.unwrap_or_else(d_oversubscription);
            if !(o.is_finite() && o >= 1.0) {
                return fe(
                    "oversubscription",
                    format!("{o} is not a ratio of at least 1 (downlink : uplink capacity)"),
                );
            }
            let down = servers_per_leaf as f64 * port_rate.0 as f64;
            let n = down / (o * c.uplinks_per_pair as f64 * up.0 as f64);
            if n > MAX_INDEX as f64 {
                return fe(
                    "oversubscription",
                    format!("{o} needs {n:.0} spines: far more than can be simulated"),
                );
            }
            if (n - n.round()).abs() > 1e-9 || n.round() < 1.0 {
                return fe(
                    "oversubscription",
                    format!(
                        "{o}:1 needs {n:.3} spines ({servers_per_leaf} servers of {port_rate} \
                         below a leaf, {} uplinks of {up} per spine): impossible with these \
                         port counts; choose a ratio that gives a whole number, or give spines",
                        c.uplinks_per_pair
                    ),
                );
            }
            n.round() as u32
        }
    };
    if spines == 0 && leaves > 1 {
        return fe(
            "spines",
            "more than one leaf per plane needs at least one spine".into(),
        );
    }
    if let Some(radix) = c.switch_radix {
        let leaf_ports = (servers_per_leaf as u64)
            .saturating_add((spines as u64).saturating_mul(c.uplinks_per_pair as u64));
        if leaf_ports > radix as u64 {
            return fe(
                "switch_radix",
                format!(
                    "a leaf needs {leaf_ports} ports ({servers_per_leaf} servers, {spines} spines x {} uplinks) but a switch has {radix}",
                    c.uplinks_per_pair
                ),
            );
        }
        let spine_ports = leaves.saturating_mul(c.uplinks_per_pair as u64);
        if spines > 0 && spine_ports > radix as u64 {
            return fe(
                "switch_radix",
                format!(
                    "a spine needs {spine_ports} ports ({leaves} leaves x {} uplinks) but a switch has {radix}",
                    c.uplinks_per_pair
                ),
            );
        }
    }
    let planes = c.planes as u64;
    let hosts = (c.servers as u64).saturating_mul(c.gpus_per_server as u64);
    let uplinks = leaves
        .saturating_mul(spines as u64)
        .saturating_mul(c.uplinks_per_pair as u64);
    let size = TopoSize {
        hosts,
        switches: planes.saturating_mul(leaves.saturating_add(spines as u64)),
        edge_switches: planes.saturating_mul(leaves),
        links: planes.saturating_mul(hosts.saturating_add(uplinks)),
        host_rate_bps: c.nic_rate.0,
    };
    Ok(RailCounts {
        size,
        spines,
        servers_per_leaf,
        port_rate,
    })
}

/// Builds the rail fabric.
pub fn build(c: &RailOptimizedCfg) -> Result<TopoGraph, ParamError> {
    let k = counts(c)?;
    super::check_size(k.size.hosts, k.size.links)?;
    let delay = link_delay(c.link_delay, c.link_length, "link_delay", "link_length")?;
    let up = c.uplink_rate.unwrap_or(k.port_rate);
    let gpus = c.gpus_per_server;
    let mut g = TopoGraph {
        rails: c.planes,
        ..Default::default()
    };
    for s in 0..c.servers {
        for r in 0..gpus {
            g.add_host(format!("s{s}-gpu{r}"), s);
        }
    }
    let prefix = |p: u32| {
        if c.planes > 1 {
            format!("p{p}-")
        } else {
            String::new()
        }
    };
    // Plane by plane, so that a NIC's links, and hence its ports, are in plane order.
    for p in 0..c.planes {
        let pre = prefix(p);
        // leaves[r * leaves_per_rail + i]: rail r's leaf i.
        let leaves: Vec<usize> = (0..gpus)
            .flat_map(|r| (0..c.leaves_per_rail).map(move |i| (r, i)))
            .map(|(r, i)| g.add_node(format!("{pre}rail{r}-leaf{i}"), true))
            .collect();
        let spines: Vec<usize> = (0..k.spines)
            .map(|j| g.add_node(format!("{pre}spine{j}"), true))
            .collect();
        for s in 0..c.servers {
            for r in 0..gpus {
                let h = g.hosts[(s * gpus + r) as usize];
                let leaf = leaves[(r * c.leaves_per_rail + s / k.servers_per_leaf) as usize];
                g.link(h, leaf, k.port_rate, delay);
            }
        }
        for &l in &leaves {
            for &sp in &spines {
                for _ in 0..c.uplinks_per_pair {
                    g.link(l, sp, up, delay);
                }
            }
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(src: &str) -> RailOptimizedCfg {
        toml::from_str(src).unwrap()
    }

    const BASE: &str = "servers = 4\ngpus_per_server = 8\nnic_rate = \"400Gbps\"\n";

    fn name_of(g: &TopoGraph, n: usize) -> &str {
        &g.nodes[n].name
    }

    /// Names of the nodes joined to node `n`, in link order.
    fn neighbours(g: &TopoGraph, n: usize) -> Vec<String> {
        g.links
            .iter()
            .filter_map(|l| {
                (l.a == n)
                    .then_some(l.b)
                    .or((l.b == n).then_some(l.a))
                    .map(|m| name_of(g, m).to_string())
            })
            .collect()
    }

    #[test]
    fn counts_match_the_built_graph() {
        for extra in [
            "",
            "planes = 2",
            "leaves_per_rail = 2\nuplinks_per_pair = 2",
            "oversubscription = 2.0",
            "spines = 3\nplanes = 4",
        ] {
            let c = cfg(&format!("{BASE}{extra}"));
            let k = counts(&c).unwrap();
            let g = build(&c).unwrap();
            g.validate().unwrap();
            assert_eq!(g.hosts.len() as u64, k.size.hosts, "{extra}");
            let sw = g.nodes.iter().filter(|n| n.is_switch).count() as u64;
            assert_eq!(sw, k.size.switches, "{extra}");
            assert_eq!(g.links.len() as u64, k.size.links, "{extra}");
        }
    }

    #[test]
    fn nic_r_of_every_server_reaches_the_leaf_of_rail_r() {
        let c = cfg(&format!("{BASE}leaves_per_rail = 2\nplanes = 2"));
        let g = build(&c).unwrap();
        for s in 0..4u32 {
            for r in 0..8u32 {
                let h = g.hosts[(s * 8 + r) as usize];
                assert_eq!(name_of(&g, h), format!("s{s}-gpu{r}"));
                assert_eq!(g.server_of_host[(s * 8 + r) as usize], s);
                // Port p in plane p; servers 0-1 under leaf 0, 2-3 under leaf 1.
                let i = s / 2;
                assert_eq!(
                    neighbours(&g, h),
                    vec![format!("p0-rail{r}-leaf{i}"), format!("p1-rail{r}-leaf{i}")]
                );
            }
        }
    }

    #[test]
    fn a_non_blocking_leaf_has_as_much_capacity_up_as_down() {
        // 4 servers of 400G below each leaf: 1600G down, so 4 spines of 400G at 1:1,
        // 2 at 2:1, and 2 spines of 2 x 400G links at 1:1.
        let spines = |extra: &str| counts(&cfg(&format!("{BASE}{extra}"))).unwrap().spines;
        assert_eq!(spines(""), 4);
        assert_eq!(spines("oversubscription = 2.0"), 2);
        assert_eq!(spines("uplinks_per_pair = 2"), 2);
        assert_eq!(spines("uplink_rate = \"800Gbps\""), 2);
        // Two planes of 200G ports: 800G down per leaf, 4 spines of 200G per plane.
        let k = counts(&cfg(&format!("{BASE}planes = 2"))).unwrap();
        assert_eq!((k.spines, k.port_rate), (4, Rate(200_000_000_000)));
        let g = build(&cfg(BASE)).unwrap();
        let leaf = g
            .nodes
            .iter()
            .position(|n| n.name == "rail5-leaf0")
            .unwrap();
        let (mut down, mut upc) = (0u64, 0u64);
        for l in g.links.iter().filter(|l| l.a == leaf || l.b == leaf) {
            let other = if l.a == leaf { l.b } else { l.a };
            if g.nodes[other].is_switch {
                upc += l.rate.0;
            } else {
                down += l.rate.0;
            }
        }
        assert_eq!((down, upc), (1_600_000_000_000, 1_600_000_000_000));
    }

    #[test]
    fn bad_shapes_name_the_field() {
        let with = |f: &dyn Fn(&mut RailOptimizedCfg)| {
            let mut c = cfg(BASE);
            f(&mut c);
            build(&c)
        };
        let bad = |f: &dyn Fn(&mut RailOptimizedCfg)| with(f).unwrap_err();
        assert_eq!(bad(&|c| c.gpus_per_server = 0).field, "gpus_per_server");
        assert_eq!(bad(&|c| c.gpus_per_server = 65).field, "gpus_per_server");
        assert!(with(&|c| c.gpus_per_server = 64).is_ok());
        assert_eq!(bad(&|c| c.rails = Some(4)).field, "rails");
        assert!(with(&|c| c.rails = Some(8)).is_ok());
        assert_eq!(bad(&|c| c.planes = 3).field, "planes");
        assert_eq!(bad(&|c| c.leaves_per_rail = 3).field, "leaves_per_rail");
        let e = bad(&|c| c.oversubscription = Some(3.0));
        assert_eq!(e.field, "oversubscription");
        assert!(e.message.contains("1.333"), "{}", e.message);
        assert_eq!(
            bad(&|c| c.oversubscription = Some(0.5)).field,
            "oversubscription"
        );
        let both = bad(&|c| {
            c.spines = Some(2);
            c.oversubscription = Some(2.0);
        });
        assert_eq!(both.field, "oversubscription");
        assert_eq!(bad(&|c| c.spines = Some(0)).field, "spines");
        // A leaf needs 4 + 4 ports, a spine 8 leaves.
        assert_eq!(bad(&|c| c.switch_radix = Some(7)).field, "switch_radix");
        assert!(with(&|c| c.switch_radix = Some(8)).is_ok());
        assert_eq!(bad(&|c| c.nic_rate = Rate(0)).field, "nic_rate");
        assert_eq!(bad(&|c| c.servers = 0).field, "servers");
    }

    #[test]
    fn one_leaf_needs_no_spine() {
        let g = build(&cfg(
            "servers = 3\ngpus_per_server = 1\nnic_rate = \"100Gbps\"",
        ))
        .unwrap();
        g.validate().unwrap();
        assert_eq!(g.nodes.iter().filter(|n| n.is_switch).count(), 1);
    }
}
