//! Three-tier k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods, each with k/2 edge
//! and k/2 aggregation switches; (k/2)^2 core switches; edge switch e of a pod links to
//! every aggregation switch of its pod; aggregation switch a links to cores
//! a*(k/2) .. a*(k/2)+k/2. With oversubscription m, each edge switch has m*k/2 hosts.
//! Host ids run pod by pod, edge by edge.

use super::{delay_params, link_delay, GraphGenerator, TopoGraph, TopoSize};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time};
use serde::Deserialize;

/// Three-tier k-ary fat-tree (k pods of k/2 edge and k/2 aggregation switches,
/// (k/2)^2 cores).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeCfg {
    /// Switch radix (even, >= 2).
    pub k: u32,
    /// Rate of every link (unless the tier rates below are given).
    #[serde(deserialize_with = "su::rate")]
    pub rate: Rate,
    /// Rate of aggregation-core links (default: `rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub core_rate: Option<Rate>,
    /// Rate of edge-aggregation links (default: `rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub agg_rate: Option<Rate>,
    /// Hosts per edge switch divided by k/2: 1 is non-blocking, 2 is 2:1 oversubscribed.
    #[serde(default = "super::one")]
    pub oversubscription: u32,
    /// Delay of every link.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

impl Described for FatTreeCfg {
    const ABOUT: &'static str = "three-tier k-ary fat-tree (k pods, (k/2)^2 cores)";
    fn params() -> Vec<Param> {
        let mut v = vec![
            Param::required("k", "switch radix: even, 2..128"),
            Param::required("rate", "rate of every link unless the tier rates are given"),
            Param::unset("agg_rate", "rate of edge-aggregation links (unset: rate)"),
            Param::unset("core_rate", "rate of aggregation-core links (unset: rate)"),
            Param::plain(
                "oversubscription",
                super::one(),
                "hosts per edge switch / (k/2): 2 is 2:1 oversubscribed",
            ),
        ];
        v.extend(delay_params());
        v
    }
}

impl GraphGenerator for FatTreeCfg {
    fn generate(&self, _base_dir: &std::path::Path) -> Result<TopoGraph, ParamError> {
        build(self)
    }

    fn size(&self, _base_dir: &std::path::Path) -> Result<Option<TopoSize>, ParamError> {
        counts(self).map(Some)
    }

    fn size_drivers(&self) -> &'static str {
        "k^3 / 4 x oversubscription (hosts), k^3 / 2 (switch links)"
    }

    fn size_knobs(&self, _base_dir: &std::path::Path) -> Vec<SizeKnob<TopoSize>> {
        size_knobs(
            self,
            &[
                ("k", |c| c.k = 2),
                ("oversubscription", |c| c.oversubscription = 1),
            ],
            |c| counts(c).ok(),
        )
    }
}

/// The graph's counts from the settings (checked as far as counting needs): what
/// [`build`] checks against the size limit before it allocates.
pub fn counts(c: &FatTreeCfg) -> Result<TopoSize, ParamError> {
    if c.k < 2 || !c.k.is_multiple_of(2) || c.k > 128 {
        return Err(ParamError::new(
            "k",
            format!(
                "k = {} is not allowed: k must be even, between 2 and 128",
                c.k
            ),
        ));
    }
    if c.oversubscription == 0 || c.oversubscription > 64 {
        return Err(ParamError::new(
            "oversubscription",
            "must be between 1 and 64",
        ));
    }
    for (field, r) in [
        ("rate", Some(c.rate)),
        ("agg_rate", c.agg_rate),
        ("core_rate", c.core_rate),
    ] {
        if r.is_some_and(|r| r.0 == 0) {
            return Err(ParamError::new(field, "must be positive"));
        }
    }
    // k pods of half edge switches with half*m hosts each; half*half edge-aggregation and
    // half*half aggregation-core links per pod; half*half cores. k <= 128 and m <= 64:
    // no overflow.
    let (k, h, m) = (c.k as u64, (c.k / 2) as u64, c.oversubscription as u64);
    let hosts = k * h * h * m;
    Ok(TopoSize {
        hosts,
        switches: 2 * k * h + h * h,
        edge_switches: k * h,
        links: hosts + 2 * k * h * h,
        host_rate_bps: c.rate.0,
    })
}

/// Builds the fat-tree graph.
pub fn build(c: &FatTreeCfg) -> Result<TopoGraph, ParamError> {
    let size = counts(c)?;
    let delay = link_delay(c.link_delay, c.link_length, "link_delay", "link_length")?;
    let half = c.k / 2;
    super::check_size(size.hosts, size.links)?;
    let hosts_per_edge = half * c.oversubscription;
    let mut g = TopoGraph::default();
    let nh = c.k * half * hosts_per_edge;
    for h in 0..nh {
        g.add_host(format!("host{h}"), h);
    }
    let mut edges = Vec::new();
    let mut aggs = Vec::new();
    for p in 0..c.k {
        for e in 0..half {
            edges.push(g.add_node(format!("edge{p}.{e}"), true));
        }
        for a in 0..half {
            aggs.push(g.add_node(format!("agg{p}.{a}"), true));
        }
    }
    let cores: Vec<usize> = (0..half * half)
        .map(|i| g.add_node(format!("core{i}"), true))
        .collect();
    let agg_rate = c.agg_rate.unwrap_or(c.rate);
    let core_rate = c.core_rate.unwrap_or(c.rate);
    for (i, &e) in edges.iter().enumerate() {
        for j in 0..hosts_per_edge {
            let h = g.hosts[i * hosts_per_edge as usize + j as usize];
            g.link(h, e, c.rate, delay);
        }
    }
    for p in 0..c.k as usize {
        for e in 0..half as usize {
            for a in 0..half as usize {
                g.link(
                    edges[p * half as usize + e],
                    aggs[p * half as usize + a],
                    agg_rate,
                    delay,
                );
            }
        }
        for a in 0..half as usize {
            for j in 0..half as usize {
                g.link(
                    aggs[p * half as usize + a],
                    cores[a * half as usize + j],
                    core_rate,
                    delay,
                );
            }
        }
    }
    Ok(g)
}
