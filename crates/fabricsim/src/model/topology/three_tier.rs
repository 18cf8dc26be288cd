//! General three-tier Clos (`kind = "three_tier"`): `pods` pods, each of `tors_per_pod`
//! ToR switches with `servers_per_tor` servers and `aggs_per_pod` aggregation switches,
//! and `cores` core switches split into `aggs_per_pod` groups of `cores / aggs_per_pod`.
//! Every ToR links to every aggregation switch of its pod; aggregation switch j of every
//! pod links to every core of group j (cores j*g .. j*g+g-1 with g = cores / aggs_per_pod),
//! so each core has one link into every pod.
//!
//! Nodes and links come in the order of the HPCC ns-3 file `ns3-fat-320.txt`: hosts first
//! (pod by pod, ToR by ToR; host h is below ToR h / servers_per_tor), then the ToRs, the
//! aggregation switches (pod by pod) and the cores; links are the host links in host order,
//! then ToR-aggregation links ToR by ToR, then aggregation-core links aggregation switch by
//! aggregation switch. With pods = 5, tors_per_pod = 4, servers_per_tor = 16,
//! aggs_per_pod = 4, cores = 16 the graph is that file's, node for node and link for link
//! (only the switch names differ: `tor{p}_{t}`, `agg{p}_{a}`, `core{c}` here,
//! `switch<node id>` there). Routes are the shared shortest-path ECMP tables.

use super::{delay_params, link_delay, GraphGenerator, TopoGraph, TopoSize};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time};
use serde::Deserialize;

/// General three-tier Clos: `pods` pods, each of `tors_per_pod` ToR switches with
/// `servers_per_tor` servers (one NIC each) and `aggs_per_pod` aggregation switches, and
/// `cores` core switches. Every ToR links to every aggregation switch of its pod;
/// aggregation switch j of every pod links to the j-th group of `cores / aggs_per_pod`
/// cores. The 320-server fat-tree of document 004 is pods = 5, tors_per_pod = 4,
/// servers_per_tor = 16, aggs_per_pod = 4, cores = 16.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreeTierCfg {
    /// Pods (>= 1).
    pub pods: u32,
    /// ToR (edge) switches per pod (>= 1).
    pub tors_per_pod: u32,
    /// Servers below each ToR (>= 1); each is one host.
    pub servers_per_tor: u32,
    /// Aggregation switches per pod (>= 1).
    pub aggs_per_pod: u32,
    /// Core switches (a positive multiple of `aggs_per_pod`).
    pub cores: u32,
    /// Rate of server-ToR links.
    #[serde(deserialize_with = "su::rate")]
    pub host_rate: Rate,
    /// Rate of ToR-aggregation links (default: `host_rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub tor_agg_rate: Option<Rate>,
    /// Rate of aggregation-core links (default: `tor_agg_rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub agg_core_rate: Option<Rate>,
    /// Delay of every link.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

impl Described for ThreeTierCfg {
    const ABOUT: &'static str =
        "general three-tier Clos: pods of ToR and aggregation switches, and cores";
    fn params() -> Vec<Param> {
        let mut v = vec![
            Param::required("pods", "pods (>= 1)"),
            Param::required("tors_per_pod", "ToR switches per pod (>= 1)"),
            Param::required("servers_per_tor", "servers (hosts) below each ToR (>= 1)"),
            Param::required("aggs_per_pod", "aggregation switches per pod (>= 1)"),
            Param::required("cores", "core switches, a multiple of aggs_per_pod"),
            Param::required("host_rate", "rate of server-ToR links"),
            Param::unset(
                "tor_agg_rate",
                "rate of ToR-aggregation links (unset: host_rate)",
            ),
            Param::unset(
                "agg_core_rate",
                "rate of aggregation-core links (unset: tor_agg_rate)",
            ),
        ];
        v.extend(delay_params());
        v
    }
}

impl GraphGenerator for ThreeTierCfg {
    fn generate(&self, _base_dir: &std::path::Path) -> Result<TopoGraph, ParamError> {
        build(self)
    }

    fn size(&self, _base_dir: &std::path::Path) -> Result<Option<TopoSize>, ParamError> {
        counts(self).map(Some)
    }

    fn size_drivers(&self) -> &'static str {
        "pods x tors_per_pod x servers_per_tor (hosts), \
         pods x tors_per_pod x aggs_per_pod + pods x cores (switch links)"
    }

    fn size_knobs(&self, _base_dir: &std::path::Path) -> Vec<SizeKnob<TopoSize>> {
        size_knobs(
            self,
            &[
                ("pods", |c| c.pods = 1),
                ("tors_per_pod", |c| c.tors_per_pod = 1),
                ("servers_per_tor", |c| c.servers_per_tor = 1),
                ("aggs_per_pod", |c| {
                    c.cores = c.cores.max(1) / c.aggs_per_pod.max(1);
                    c.aggs_per_pod = 1;
                }),
                // Cores are a multiple of aggs_per_pod.
                ("cores", |c| c.cores = c.aggs_per_pod),
            ],
            |c| counts(c).ok(),
        )
    }
}

/// The graph's counts from the settings (checked as far as counting needs): what
/// [`build`] checks against the size limit before it allocates.
pub fn counts(c: &ThreeTierCfg) -> Result<TopoSize, ParamError> {
    for (field, what, n) in [
        ("pods", "pod", c.pods),
        ("tors_per_pod", "ToR switch per pod", c.tors_per_pod),
        ("servers_per_tor", "server per ToR", c.servers_per_tor),
        ("aggs_per_pod", "aggregation switch per pod", c.aggs_per_pod),
        ("cores", "core switch", c.cores),
    ] {
        if n == 0 {
            return Err(ParamError::new(
                field,
                format!("{field} = 0: a three-tier topology needs at least 1 {what}"),
            ));
        }
    }
    if !c.cores.is_multiple_of(c.aggs_per_pod) {
        return Err(ParamError::new(
            "cores",
            format!(
                "cores = {} is not a multiple of aggs_per_pod = {}: aggregation switch j of \
                 every pod links to the j-th group of cores / aggs_per_pod cores",
                c.cores, c.aggs_per_pod
            ),
        ));
    }
    for (field, r) in [
        ("host_rate", Some(c.host_rate)),
        ("tor_agg_rate", c.tor_agg_rate),
        ("agg_core_rate", c.agg_core_rate),
    ] {
        if r.is_some_and(|r| r.0 == 0) {
            return Err(ParamError::new(field, "must be positive"));
        }
    }
    // Sizes in saturating u64 before anything is allocated: host links, ToR-aggregation
    // links (tors x aggs per pod) and aggregation-core links (each core has one per pod).
    let (p, t, s, a, k) = (
        c.pods as u64,
        c.tors_per_pod as u64,
        c.servers_per_tor as u64,
        c.aggs_per_pod as u64,
        c.cores as u64,
    );
    let hosts = p.saturating_mul(t).saturating_mul(s);
    let links = hosts
        .saturating_add(p.saturating_mul(t).saturating_mul(a))
        .saturating_add(p.saturating_mul(k));
    let tors = p.saturating_mul(t);
    Ok(TopoSize {
        hosts,
        switches: tors.saturating_add(p.saturating_mul(a)).saturating_add(k),
        // Every ToR has servers_per_tor >= 1 servers.
        edge_switches: tors,
        links,
        host_rate_bps: c.host_rate.0,
    })
}

/// Builds the three-tier graph.
pub fn build(c: &ThreeTierCfg) -> Result<TopoGraph, ParamError> {
    let TopoSize { hosts, links, .. } = counts(c)?;
    let delay = link_delay(c.link_delay, c.link_length, "link_delay", "link_length")?;
    super::check_size(hosts, links)?;

    let (pods, tors, servers, aggs, cores) = (
        c.pods as usize,
        c.tors_per_pod as usize,
        c.servers_per_tor as usize,
        c.aggs_per_pod as usize,
        c.cores as usize,
    );
    let group = cores / aggs;
    let tor_agg_rate = c.tor_agg_rate.unwrap_or(c.host_rate);
    let agg_core_rate = c.agg_core_rate.unwrap_or(tor_agg_rate);

    let mut g = TopoGraph::default();
    for h in 0..hosts as u32 {
        g.add_host(format!("host{h}"), h);
    }
    let mut tor_nodes = Vec::with_capacity(pods * tors);
    for pi in 0..pods {
        for ti in 0..tors {
            tor_nodes.push(g.add_node(format!("tor{pi}_{ti}"), true));
        }
    }
    let mut agg_nodes = Vec::with_capacity(pods * aggs);
    for pi in 0..pods {
        for ai in 0..aggs {
            agg_nodes.push(g.add_node(format!("agg{pi}_{ai}"), true));
        }
    }
    let core_nodes: Vec<usize> = (0..cores)
        .map(|ci| g.add_node(format!("core{ci}"), true))
        .collect();

    for h in 0..hosts as usize {
        g.link(g.hosts[h], tor_nodes[h / servers], c.host_rate, delay);
    }
    for (i, &tor) in tor_nodes.iter().enumerate() {
        let pod = i / tors;
        for &agg in &agg_nodes[pod * aggs..(pod + 1) * aggs] {
            g.link(tor, agg, tor_agg_rate, delay);
        }
    }
    for (i, &agg) in agg_nodes.iter().enumerate() {
        let j = i % aggs;
        for &core in &core_nodes[j * group..(j + 1) * group] {
            g.link(agg, core, agg_core_rate, delay);
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::{Rate, US};

    fn cfg(pods: u32, tors: u32, servers: u32, aggs: u32, cores: u32) -> ThreeTierCfg {
        ThreeTierCfg {
            pods,
            tors_per_pod: tors,
            servers_per_tor: servers,
            aggs_per_pod: aggs,
            cores,
            host_rate: Rate::gbps(100),
            tor_agg_rate: Some(Rate::gbps(400)),
            agg_core_rate: None,
            link_delay: Some(US),
            link_length: None,
        }
    }

    #[test]
    fn counts_names_and_wiring() {
        let g = build(&cfg(2, 3, 2, 2, 4)).unwrap();
        g.validate().unwrap();
        assert_eq!(g.hosts.len(), 12);
        // 12 hosts, 6 ToRs, 4 aggs, 4 cores.
        assert_eq!(g.nodes.len(), 26);
        // 12 host links, 2 * 3 * 2 ToR-agg, 2 * 4 agg-core.
        assert_eq!(g.links.len(), 12 + 12 + 8);
        assert_eq!(g.nodes[12].name, "tor0_0");
        assert_eq!(g.nodes[17].name, "tor1_2");
        assert_eq!(g.nodes[18].name, "agg0_0");
        assert_eq!(g.nodes[22].name, "core0");
        // Host 5 is the second server of ToR 2 (tor0_2).
        assert_eq!(g.links[5].b, 14);
        // agg1_1 (node 21) links to cores 2 and 3 (nodes 24, 25).
        let up: Vec<usize> = g.links.iter().filter(|l| l.a == 21).map(|l| l.b).collect();
        assert_eq!(up, [24, 25]);
        // agg_core_rate defaults to tor_agg_rate.
        assert_eq!(g.links.last().unwrap().rate, Rate::gbps(400));
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (cfg(0, 1, 1, 1, 1), "pods"),
            (cfg(1, 0, 1, 1, 1), "tors_per_pod"),
            (cfg(1, 1, 0, 1, 1), "servers_per_tor"),
            (cfg(1, 1, 1, 0, 1), "aggs_per_pod"),
            (cfg(1, 1, 1, 1, 0), "cores"),
            (cfg(2, 2, 2, 4, 6), "cores"),
            (cfg(4096, 4096, 4096, 4096, 4096), ""),
        ];
        for (c, field) in cases {
            let e = build(&c).unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
        let mut c = cfg(1, 1, 2, 1, 1);
        c.agg_core_rate = Some(Rate(0));
        let e = build(&c).unwrap_err();
        assert_eq!(e.field, "agg_core_rate", "{e}");
    }
}
