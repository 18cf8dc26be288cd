//! The `[record]` settings resolved against the built model: flow ids checked, port
//! names found, defaults that depend on the fabric filled in. The build does this once
//! the model exists; the settings themselves (`crate::model::record`, `crate::model::capture`) know
//! nothing of it. Errors are `"<field>: <message>"` relative to their section.

use crate::base::ids::PortId;
use crate::base::units::{Rate, Time};
use crate::model::capture::{Capture, CaptureLog, Interface, PcapCfg, MAX_LIMIT, NOT_CAPTURED};
use crate::model::record::convergence::{
    ConvergenceCfg, ConvergenceSpec, DEFAULT_HOLD, DEFAULT_TOLERANCE,
};
use crate::model::record::window::{WindowCfg, WindowSpec};
use crate::sim::Simulation;

impl ConvergenceSpec {
    /// Resolves `cfg` for a simulation with these flows; errors name the field.
    pub fn resolve(cfg: &ConvergenceCfg, sim: &Simulation) -> Result<ConvergenceSpec, String> {
        let flows: Vec<u32> = match &cfg.flows {
            Some(v) => v.clone(),
            None => (0..sim.nics.flows.len() as u32).collect(),
        };
        if flows.is_empty() {
            return Err("flows: name at least one flow".into());
        }
        for (i, &f) in flows.iter().enumerate() {
            if f as usize >= sim.nics.flows.len() {
                return Err(format!(
                    "flows: flow {f} does not exist (the run has {} flows, ids from 0)",
                    sim.nics.flows.len()
                ));
            }
            // The fair share divides by the number of flows: one listed twice would
            // count twice.
            if let Some(j) = flows[..i].iter().position(|&x| x == f) {
                return Err(format!(
                    "flows[{i}]: flow {f} appears twice (also flows[{j}]); the flows must be distinct"
                ));
            }
        }
        let tolerance = cfg.tolerance.unwrap_or(DEFAULT_TOLERANCE);
        if !(tolerance > 0.0 && tolerance < 1.0) {
            return Err("tolerance: a fraction in (0, 1)".into());
        }
        let hold = cfg.hold.unwrap_or(DEFAULT_HOLD);
        let join = cfg.join.unwrap_or_else(|| {
            flows
                .iter()
                .map(|&f| sim.nics.flows[f as usize].spec.start)
                .max()
                .unwrap_or(0)
        });
        let fair_bps = match cfg.fair_share {
            Some(Rate(0)) => return Err("fair_share: must be positive".into()),
            Some(r) => r.0 as f64,
            None => {
                let dst = sim.nics.flows[flows[0] as usize].spec.dst as usize;
                sim.fabric.ports[sim.nics.hosts[dst].port.idx()].rate.0 as f64 / flows.len() as f64
            }
        };
        Ok(ConvergenceSpec {
            flows,
            join,
            fair_bps,
            tolerance,
            hold,
        })
    }
}

impl WindowSpec {
    /// Resolves names and checks ids; the error is `"<field>: <message>"`.
    pub fn resolve(cfg: &WindowCfg, sim: &Simulation) -> Result<WindowSpec, String> {
        if cfg.to <= cfg.from {
            return Err("to: must be after `from`".into());
        }
        for &f in &cfg.flows {
            if f as usize >= sim.nics.flows.len() {
                return Err(format!(
                    "flows: flow {f} does not exist (the run has {} flows, ids from 0)",
                    sim.nics.flows.len()
                ));
            }
        }
        let mut ports = Vec::new();
        for name in &cfg.ports {
            let bad =
                || format!("ports: `{name}` is not `<switch>:<port>` naming a switch egress port");
            let (node, local) = name.rsplit_once(':').ok_or_else(bad)?;
            let local: u32 = local.parse().map_err(|_| bad())?;
            let id = (0..sim.fabric.ports.len() as u32)
                .find(|&p| {
                    let pr = &sim.fabric.ports[p as usize];
                    pr.local == local
                        && sim.is_switch(pr.node)
                        && sim.port_node_name(crate::base::ids::PortId(p)) == node
                })
                .ok_or_else(bad)?;
            ports.push((name.clone(), id));
        }
        // No sample exists after max_time: a window reaching beyond it would only dilute
        // the means with samples that were never taken. (A window wholly beyond it, as
        // after a `--set max_time` shortening a run, becomes empty.)
        let max_time = sim.ctx.params.max_time;
        Ok(WindowSpec {
            from: cfg.from.min(max_time),
            to: cfg.to.min(max_time),
            clamped_from: (cfg.to > max_time).then_some(cfg.to),
            flows: cfg.flows.clone(),
            ports,
        })
    }
}

impl Capture {
    /// Resolves port names against a built simulation and reserves the records; the
    /// error is `"<field>: <message>"` relative to `[record.pcap]`.
    pub fn resolve(cfg: &PcapCfg, sim: &Simulation) -> Result<Capture, String> {
        let fabric = &sim.fabric;
        let mut iface_of = vec![NOT_CAPTURED; fabric.ports.len()];
        let mut interfaces: Vec<Interface> = Vec::new();
        for (i, name) in cfg.ports.iter().enumerate() {
            let port = find_port(sim, name).ok_or_else(|| {
                format!(
                    "ports[{i}]: `{name}` names no port: use \"<switch>:<port>\" (a switch \
                     egress port), \"<host>\" (its NIC) or \"<host>:<port>\", with node names \
                     and local port indices as in ports.csv"
                )
            })?;
            if iface_of[port.idx()] != NOT_CAPTURED {
                return Err(format!(
                    "ports[{i}]: `{name}` is the same port as ports[{}]",
                    iface_of[port.idx()]
                ));
            }
            let p = &fabric.ports[port.idx()];
            iface_of[port.idx()] = interfaces.len() as u32;
            interfaces.push(Interface {
                name: name.clone(),
                port,
                description: format!(
                    "egress of {} port {} toward {} port {}",
                    sim.port_node_name(port),
                    p.local,
                    sim.port_node_name(p.peer),
                    fabric.ports[p.peer.idx()].local
                ),
                speed_bps: p.rate.0,
            });
        }
        let limit = cfg.limit.min(MAX_LIMIT) as usize;
        Ok(Capture {
            iface_of,
            interfaces,
            from: cfg.from.unwrap_or(0),
            to: cfg.to.unwrap_or(Time::MAX),
            verb: cfg.verb,
            payload: cfg.payload,
            logs: vec![CaptureLog::new(limit)],
        })
    }
}

/// The port `name` names: `"<node>:<local>"` for any node, or `"<host>"` for a host's
/// first port.
fn find_port(sim: &Simulation, name: &str) -> Option<PortId> {
    let (node, local) = match name.rsplit_once(':') {
        Some((n, l)) => (n, l.parse::<u32>().ok()?),
        None => (name, 0),
    };
    let n = sim.fabric.nodes.iter().find(|n| n.name == node)?;
    let bare_host = !name.contains(':');
    if bare_host && !matches!(n.kind, crate::model::fabric::NodeKind::Host(_)) {
        return None;
    }
    n.ports
        .iter()
        .find(|&p| sim.fabric.ports[p.idx()].local == local)
}
