//! Two-tier leaf-spine. Hosts are NICs; the NICs of one server share its leaf. Host ids
//! run leaf by leaf, server by server: host = (leaf * servers_per_leaf + server) *
//! nics_per_server + nic.
//!
//! Speedup is the ratio of a leaf's uplink capacity to its downlink capacity. Give either
//! `spines` or `speedup`; with `speedup` the spine count is derived as
//! speedup * downlink capacity / (uplinks_per_pair * uplink_rate), which must be whole.

use super::{link_delay, TopoGraph};
use crate::engine::MAX_INDEX;
use crate::scenario::config::LeafSpineCfg;
use crate::scenario::ScenarioError;

/// Builds the leaf-spine graph.
pub fn build(c: &LeafSpineCfg, file: &str) -> Result<TopoGraph, ScenarioError> {
    let fe = |field: &str, m: String| ScenarioError::field(file, format!("topology.{field}"), m);
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
    super::check_size(file, hosts, hosts.saturating_add(uplinks))?;
    let delay = link_delay(c.link_delay, c.link_length, file, "topology.link_delay")?;
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
