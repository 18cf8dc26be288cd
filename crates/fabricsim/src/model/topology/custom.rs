//! A topology listed by hand: named hosts and switches, links between them, and optional
//! static routes (used, for example, to build the cyclic buffer dependency of a PFC
//! deadlock, which shortest-path routing never creates on its own).

use super::{link_delay, GraphGenerator, StaticRoute, TopoGraph, TopoSize};
use crate::base::param::{Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time};
use crate::model::topology::SecurityMode;
use serde::Deserialize;
use std::collections::HashMap;

/// A topology listed by hand.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomTopoCfg {
    /// Host names; a host's id is its index here.
    pub hosts: Vec<String>,
    /// Switch names.
    pub switches: Vec<String>,
    /// Full-duplex links.
    pub links: Vec<CustomLinkCfg>,
    /// Static routes that replace the shortest-path next hops.
    #[serde(default)]
    pub routes: Vec<CustomRouteCfg>,
}

/// One full-duplex link of a custom topology.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomLinkCfg {
    /// One end (host or switch name).
    pub a: String,
    /// Other end.
    pub b: String,
    /// Rate.
    #[serde(deserialize_with = "su::rate")]
    pub rate: Rate,
    /// Propagation delay.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub delay: Option<Time>,
    /// Cable length, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub length: Option<f64>,
    /// Security mode of this link (default: `fabric.security.mode`).
    #[serde(default)]
    pub security: Option<SecurityMode>,
}

/// A static route: at switch `at`, packets for host `to` go to the neighbour(s) `via`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomRouteCfg {
    /// Switch name.
    pub at: String,
    /// Destination host name.
    pub to: String,
    /// Next-hop neighbour names (ECMP among them).
    pub via: Vec<String>,
}

impl Described for CustomTopoCfg {
    const ABOUT: &'static str = "hosts, switches, links and static routes listed by hand";
    fn params() -> Vec<Param> {
        vec![
            Param::required("hosts", "host names; a host's id is its index here"),
            Param::required("switches", "switch names"),
            Param::required(
                "links",
                format!(
                    "[{{a, b, rate, delay = \"{}\" | length, security = fabric's}}]",
                    crate::base::units::fmt_time_exact(super::DEFAULT_LINK_DELAY)
                ),
            ),
            Param::new(
                "routes",
                "[]",
                "[{at, to, via = [names]}]: static next hops replacing shortest paths",
            ),
        ]
    }
}

impl GraphGenerator for CustomTopoCfg {
    fn generate(&self, _base_dir: &std::path::Path) -> Result<TopoGraph, ParamError> {
        build(self)
    }

    fn size(&self, _base_dir: &std::path::Path) -> Result<Option<TopoSize>, ParamError> {
        Ok(Some(counts(self)))
    }

    fn size_drivers(&self) -> &'static str {
        "the hosts, switches and links listed"
    }

    /// The lists: without one, what it adds is gone (links to names no longer listed
    /// aside, which the build refuses anyway).
    fn size_knobs(&self, _base_dir: &std::path::Path) -> Vec<SizeKnob<TopoSize>> {
        let s = counts(self);
        let knob = |field, least| SizeKnob {
            field,
            least: Some(least),
        };
        vec![
            knob(
                "links",
                TopoSize {
                    links: 0,
                    edge_switches: 0,
                    host_rate_bps: 0,
                    ..s
                },
            ),
            knob(
                "hosts",
                TopoSize {
                    hosts: 0,
                    edge_switches: 0,
                    host_rate_bps: 0,
                    ..s
                },
            ),
            knob(
                "switches",
                TopoSize {
                    switches: 0,
                    edge_switches: 0,
                    ..s
                },
            ),
        ]
    }
}

/// The graph's counts: one node per name and one link per entry, as [`build`] makes them
/// (when it accepts the lists). An edge switch is a listed switch with a link to a
/// listed host. The sets hold names of the scenario itself, already in memory.
pub fn counts(c: &CustomTopoCfg) -> TopoSize {
    use std::collections::HashSet;
    let hosts: HashSet<&str> = c.hosts.iter().map(String::as_str).collect();
    let switches: HashSet<&str> = c.switches.iter().map(String::as_str).collect();
    let mut edge: HashSet<&str> = HashSet::new();
    let mut host_rate = 0;
    for l in &c.links {
        for (me, other) in [(&l.a, &l.b), (&l.b, &l.a)] {
            if switches.contains(me.as_str()) && hosts.contains(other.as_str()) {
                edge.insert(me.as_str());
                host_rate = l.rate.0.max(host_rate);
            }
        }
    }
    TopoSize {
        hosts: c.hosts.len() as u64,
        switches: c.switches.len() as u64,
        edge_switches: edge.len() as u64,
        links: c.links.len() as u64,
        host_rate_bps: host_rate,
    }
}

/// A host or switch name: links, routes, faults, flows and result tables refer to nodes
/// by it, so it must be non-empty, and free of control characters (a line break would
/// split a CSV row or a message line). Anything else is allowed (the CSV writers quote).
fn check_node_name(name: &str, field: &str) -> Result<(), ParamError> {
    if name.is_empty() {
        return Err(ParamError::new(
            field,
            "the name is empty: nodes are referred to by name, give it one",
        ));
    }
    if let Some(ch) = name.chars().find(|c| c.is_control()) {
        return Err(ParamError::new(
            field,
            format!(
                "{name:?} contains the control character {ch:?}: any other character is allowed"
            ),
        ));
    }
    Ok(())
}

/// Builds the custom graph.
pub fn build(c: &CustomTopoCfg) -> Result<TopoGraph, ParamError> {
    let mut g = TopoGraph::default();
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (i, h) in c.hosts.iter().enumerate() {
        check_node_name(h, &format!("hosts[{i}]"))?;
        if names
            .insert(h.as_str(), g.add_host(h.clone(), i as u32))
            .is_some()
        {
            return Err(ParamError::new(
                format!("hosts[{i}]"),
                format!("duplicate name `{h}`"),
            ));
        }
    }
    for (i, s) in c.switches.iter().enumerate() {
        check_node_name(s, &format!("switches[{i}]"))?;
        if names
            .insert(s.as_str(), g.add_node(s.clone(), true))
            .is_some()
        {
            return Err(ParamError::new(
                format!("switches[{i}]"),
                format!("duplicate name `{s}`"),
            ));
        }
    }
    let lookup = |n: &str, field: String| {
        names
            .get(n)
            .copied()
            .ok_or_else(|| ParamError::new(field, format!("no host or switch named `{n}`")))
    };
    for (i, l) in c.links.iter().enumerate() {
        let a = lookup(&l.a, format!("links[{i}].a"))?;
        let b = lookup(&l.b, format!("links[{i}].b"))?;
        if a == b {
            return Err(ParamError::new(
                format!("links[{i}].b"),
                format!("`{}` again: a link joins two different nodes", l.b),
            ));
        }
        if l.rate.0 == 0 {
            return Err(ParamError::new(
                format!("links[{i}].rate"),
                "must be positive",
            ));
        }
        let d = link_delay(
            l.delay,
            l.length,
            &format!("links[{i}].delay"),
            &format!("links[{i}].length"),
        )?;
        g.link(a, b, l.rate, d);
        if let Some(last) = g.links.last_mut() {
            last.security = l.security;
        }
    }
    for (i, r) in c.routes.iter().enumerate() {
        let at = lookup(&r.at, format!("routes[{i}].at"))?;
        if !g.nodes[at].is_switch {
            return Err(ParamError::new(
                format!("routes[{i}].at"),
                format!("`{}` is not a switch", r.at),
            ));
        }
        let to = lookup(&r.to, format!("routes[{i}].to"))?;
        let to_host = g.hosts.iter().position(|&h| h == to).ok_or_else(|| {
            ParamError::new(
                format!("routes[{i}].to"),
                format!("`{}` is not a host", r.to),
            )
        })?;
        let mut via = Vec::new();
        for (j, v) in r.via.iter().enumerate() {
            let n = lookup(v, format!("routes[{i}].via[{j}]"))?;
            if !g
                .links
                .iter()
                .any(|l| (l.a == at && l.b == n) || (l.b == at && l.a == n))
            {
                return Err(ParamError::new(
                    format!("routes[{i}].via[{j}]"),
                    format!("`{v}` is not a neighbour of `{}`", r.at),
                ));
            }
            via.push(n);
        }
        if via.is_empty() {
            return Err(ParamError::new(
                format!("routes[{i}].via"),
                "needs at least one next hop",
            ));
        }
        g.routes.push(StaticRoute { at, to_host, via });
    }
    Ok(g)
}
