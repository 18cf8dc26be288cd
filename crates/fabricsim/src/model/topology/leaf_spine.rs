//! Two-tier leaf-spine. Hosts are NICs; the NICs of one server share its leaf. Host ids
//! run leaf by leaf, server by server: host = (leaf * servers_per_leaf + server) *
//! nics_per_server + nic.
//!
//! Speedup is the ratio of a leaf's uplink capacity to its downlink capacity. Give either
//! `spines` or `speedup`; with `speedup` the spine count is derived as
//! speedup * downlink capacity / (uplinks_per_pair * uplink_rate), which must be whole.

use super::{delay_params, link_delay, GraphGenerator, TopoGraph, TopoSize};
use crate::base::ids::MAX_INDEX;
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time};
use serde::Deserialize;

/// Two-tier leaf-spine (a Clos of leaves and spines).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineCfg {
    /// Leaf switches.
    pub leaves: u32,
    /// Spine switches; omit and give `speedup` to derive it.
    #[serde(default)]
    pub spines: Option<u32>,
    /// Servers below each leaf.
    pub servers_per_leaf: u32,
    /// NICs per server (all on the server's leaf); each NIC is a host of the simulation.
    #[serde(default = "super::one")]
    pub nics_per_server: u32,
    /// Rate of NIC-leaf links.
    #[serde(deserialize_with = "su::rate")]
    pub host_rate: Rate,
    /// Rate of each leaf-spine link.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub uplink_rate: Option<Rate>,
    /// Parallel links between each leaf and each spine.
    #[serde(default = "super::one")]
    pub uplinks_per_pair: u32,
    /// Uplink:downlink capacity ratio of a leaf (e.g. 1.5 or 2.0); sets the spine count.
    #[serde(default)]
    pub speedup: Option<f64>,
    /// Delay of every link (or give `link_length`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

impl Described for LeafSpineCfg {
    const ABOUT: &'static str = "two-tier leaf-spine; host ids run leaf by leaf";
    fn params() -> Vec<Param> {
        let mut v = vec![
            Param::required("leaves", "leaf switches"),
            Param::unset(
                "spines",
                "spine switches; omit and give speedup to derive it",
            ),
            Param::required("servers_per_leaf", "servers below each leaf"),
            Param::plain(
                "nics_per_server",
                super::one(),
                "NICs per server, each a host of the simulation",
            ),
            Param::required("host_rate", "rate of NIC-leaf links"),
            Param::unset(
                "uplink_rate",
                "rate of each leaf-spine link (unset: host_rate)",
            ),
            Param::plain(
                "uplinks_per_pair",
                super::one(),
                "parallel links between each leaf and each spine",
            ),
            Param::unset(
                "speedup",
                "uplink:downlink capacity of a leaf; sets the spine count",
            ),
        ];
        v.extend(delay_params());
        v
    }
}

impl GraphGenerator for LeafSpineCfg {
    fn generate(&self, _base_dir: &std::path::Path) -> Result<TopoGraph, ParamError> {
        build(self)
    }

    fn size(&self, _base_dir: &std::path::Path) -> Result<Option<TopoSize>, ParamError> {
        Ok(Some(counts(self)?.0))
    }

    fn size_drivers(&self) -> &'static str {
        "leaves x servers_per_leaf x nics_per_server (hosts), \
         leaves x spines x uplinks_per_pair (links)"
    }

    fn size_knobs(&self, _base_dir: &std::path::Path) -> Vec<SizeKnob<TopoSize>> {
        size_knobs(
            self,
            &[
                ("leaves", |c| c.leaves = 1),
                ("servers_per_leaf", |c| c.servers_per_leaf = 1),
                ("nics_per_server", |c| c.nics_per_server = 1),
                ("spines", |c| c.spines = c.spines.map(|s| s.min(1))),
                ("uplinks_per_pair", |c| c.uplinks_per_pair = 1),
                // Spines derived from the speedup: as few as one.
                ("speedup", |c| {
                    if c.speedup.take().is_some() {
                        c.spines = Some(1);
                    }
                }),
            ],
            |c| counts(c).ok().map(|(s, _)| s),
        )
    }
}

/// The graph's counts and its spine count, from the settings alone (checked as far as
/// counting needs): what [`build`] checks against the size limit before it allocates.
pub fn counts(c: &LeafSpineCfg) -> Result<(TopoSize, u32), ParamError> {
    let fe = |field: &str, m: String| ParamError::new(field, m);
    if c.leaves == 0 {
        return Err(fe("leaves", "must be at least 1".into()));
    }
    if c.servers_per_leaf == 0 {
        return Err(fe("servers_per_leaf", "must be at least 1".into()));
    }
    if c.nics_per_server == 0 {
        return Err(fe("nics_per_server", "must be at least 1".into()));
    }
    if c.uplinks_per_pair == 0 {
        return Err(fe("uplinks_per_pair", "must be at least 1".into()));
    }
    if c.host_rate.0 == 0 {
        return Err(fe("host_rate", "must be positive".into()));
    }
    let up = c.uplink_rate.unwrap_or(c.host_rate);
    if up.0 == 0 {
        return Err(fe("uplink_rate", "must be positive".into()));
    }
    let down_cap = c.servers_per_leaf as f64 * c.nics_per_server as f64 * c.host_rate.0 as f64;
    let spines = match (c.spines, c.speedup) {
        (Some(_), Some(_)) => {
            return Err(fe(
                "speedup",
                "give either spines or speedup, not both".into(),
            ))
        }
        (Some(s), None) => s,
        (None, Some(sp)) => {
            if !(sp.is_finite() && sp > 0.0) {
                return Err(fe("speedup", format!("{sp} is not a positive ratio")));
            }
            let n = sp * down_cap / (c.uplinks_per_pair as f64 * up.0 as f64);
            if n > MAX_INDEX as f64 {
                return Err(fe(
                    "speedup",
                    format!("speedup {sp} needs {n:.0} spines: far more than can be simulated"),
                ));
            }
            if (n - n.round()).abs() > 1e-9 || n.round() < 1.0 {
                return Err(fe(
                    "speedup",
                    format!(
                        "speedup {sp} needs {n:.3} spines ({} links of {} per spine); choose a speedup that gives a whole number",
                        c.uplinks_per_pair, up
                    ),
                ));
            }
            n.round() as u32
        }
        (None, None) => return Err(fe("spines", "give spines or speedup".into())),
    };
    if spines == 0 && c.leaves > 1 {
        return Err(fe(
            "spines",
            "more than one leaf needs at least one spine".into(),
        ));
    }
    let hosts = (c.leaves as u64)
        .saturating_mul(c.servers_per_leaf as u64)
        .saturating_mul(c.nics_per_server as u64);
    let uplinks = (c.leaves as u64)
        .saturating_mul(spines as u64)
        .saturating_mul(c.uplinks_per_pair as u64);
    // Every leaf has servers_per_leaf >= 1 servers below it.
    let size = TopoSize {
        hosts,
        switches: (c.leaves as u64).saturating_add(spines as u64),
        edge_switches: c.leaves as u64,
        links: hosts.saturating_add(uplinks),
        host_rate_bps: c.host_rate.0,
    };
    Ok((size, spines))
}

/// Builds the leaf-spine graph.
pub fn build(c: &LeafSpineCfg) -> Result<TopoGraph, ParamError> {
    let (size, spines) = counts(c)?;
    super::check_size(size.hosts, size.links)?;
    let up = c.uplink_rate.unwrap_or(c.host_rate);
    let delay = link_delay(c.link_delay, c.link_length, "link_delay", "link_length")?;
    let mut g = TopoGraph::default();
    let hosts_per_leaf = c.servers_per_leaf * c.nics_per_server;
    for l in 0..c.leaves {
        for s in 0..c.servers_per_leaf {
            for n in 0..c.nics_per_server {
                let h = (l * c.servers_per_leaf + s) * c.nics_per_server + n;
                g.add_host(format!("host{h}"), l * c.servers_per_leaf + s);
            }
        }
    }
    let leaves: Vec<usize> = (0..c.leaves)
        .map(|l| g.add_node(format!("leaf{l}"), true))
        .collect();
    let spine_nodes: Vec<usize> = (0..spines)
        .map(|s| g.add_node(format!("spine{s}"), true))
        .collect();
    for (l, &leaf) in leaves.iter().enumerate() {
        for i in 0..hosts_per_leaf {
            let h = g.hosts[l * hosts_per_leaf as usize + i as usize];
            g.link(h, leaf, c.host_rate, delay);
        }
    }
    for &leaf in &leaves {
        for &sp in &spine_nodes {
            for _ in 0..c.uplinks_per_pair {
                g.link(leaf, sp, up, delay);
            }
        }
    }
    Ok(g)
}
