//! A topology listed by hand: named hosts and switches, links between them, and optional
//! static routes (used, for example, to build the cyclic buffer dependency of a PFC
//! deadlock, which shortest-path routing never creates on its own).

use super::{link_delay, StaticRoute, TopoGraph};
use crate::scenario::config::CustomTopoCfg;
use crate::scenario::ScenarioError;
use std::collections::HashMap;

/// Builds the custom graph.
pub fn build(c: &CustomTopoCfg, file: &str) -> Result<TopoGraph, ScenarioError> {
    let mut g = TopoGraph::default();
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (i, h) in c.hosts.iter().enumerate() {
        if names
            .insert(h.as_str(), g.add_host(h.clone(), i as u32))
            .is_some()
        {
            return Err(ScenarioError::field(
                file,
                format!("topology.hosts[{i}]"),
                format!("duplicate name `{h}`"),
            ));
        }
    }
    for (i, s) in c.switches.iter().enumerate() {
        if names
            .insert(s.as_str(), g.add_node(s.clone(), true))
            .is_some()
        {
            return Err(ScenarioError::field(
                file,
                format!("topology.switches[{i}]"),
                format!("duplicate name `{s}`"),
            ));
        }
    }
    let lookup = |n: &str, field: String| {
        names.get(n).copied().ok_or_else(|| {
            ScenarioError::field(file, field, format!("no host or switch named `{n}`"))
        })
    };
    for (i, l) in c.links.iter().enumerate() {
        let a = lookup(&l.a, format!("topology.links[{i}].a"))?;
        let b = lookup(&l.b, format!("topology.links[{i}].b"))?;
        if l.rate.0 == 0 {
            return Err(ScenarioError::field(
                file,
                format!("topology.links[{i}].rate"),
                "must be positive",
            ));
        }
        let d = link_delay(
            l.delay,
            l.length,
            file,
            &format!("topology.links[{i}].delay"),
        )?;
        g.link(a, b, l.rate, d);
        if let Some(last) = g.links.last_mut() {
            last.security = l.security;
        }
    }
    for (i, r) in c.routes.iter().enumerate() {
        let at = lookup(&r.at, format!("topology.routes[{i}].at"))?;
        if !g.nodes[at].is_switch {
            return Err(ScenarioError::field(
                file,
                format!("topology.routes[{i}].at"),
                format!("`{}` is not a switch", r.at),
            ));
        }
        let to = lookup(&r.to, format!("topology.routes[{i}].to"))?;
        let to_host = g.hosts.iter().position(|&h| h == to).ok_or_else(|| {
            ScenarioError::field(
                file,
                format!("topology.routes[{i}].to"),
                format!("`{}` is not a host", r.to),
            )
        })?;
        let mut via = Vec::new();
        for (j, v) in r.via.iter().enumerate() {
            let n = lookup(v, format!("topology.routes[{i}].via[{j}]"))?;
            if !g
                .links
                .iter()
                .any(|l| (l.a == at && l.b == n) || (l.b == at && l.a == n))
            {
                return Err(ScenarioError::field(
                    file,
                    format!("topology.routes[{i}].via[{j}]"),
                    format!("`{v}` is not a neighbour of `{}`", r.at),
                ));
            }
            via.push(n);
        }
        if via.is_empty() {
            return Err(ScenarioError::field(
                file,
                format!("topology.routes[{i}].via"),
                "needs at least one next hop",
            ));
        }
        g.routes.push(StaticRoute { at, to_host, via });
    }
    Ok(g)
}
