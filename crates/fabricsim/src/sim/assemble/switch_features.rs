//! Assembly of document 002's switch features: the per-ingress-port ECN bias and DCQCN's
//! forward notification (switches that send CNPs themselves). Called from the assembly (`assemble/mod.rs`).

use crate::base::seed::component_rng;
use crate::base::units::Rate;
use crate::model::fabric::roles::SwitchRole;
use crate::model::fabric::switch::Switch;
use crate::model::fabric::{NodeKind, Port};
use crate::scenario::config::Scenario;
use crate::scenario::ScenarioError;
use crate::sim::err;

/// `fabric.ecn.ingress_bias` resolved to a factor per port id (empty when unset); a
/// name that is not a switch port is an error naming its key.
pub(super) fn ecn_bias(
    cfg: &crate::model::fabric::ecn::EcnCfg,
    nodes: &[crate::model::fabric::Node],
    ports: &[Port],
    file: &str,
) -> Result<Vec<f64>, ScenarioError> {
    if cfg.ingress_bias.is_empty() {
        return Ok(Vec::new());
    }
    let mut bias = vec![1.0; ports.len()];
    for (name, &b) in &cfg.ingress_bias {
        let port = name.rsplit_once(':').and_then(|(n, l)| {
            let local = l.parse::<usize>().ok()?;
            let node = nodes
                .iter()
                .find(|x| x.name == n && matches!(x.kind, NodeKind::Switch(_)))?;
            (local < node.ports.len as usize).then(|| node.ports.port(local))
        });
        let Some(p) = port else {
            return Err(err(
                file,
                &format!("fabric.ecn.ingress_bias.\"{name}\""),
                format!(
                    "`{name}` names no switch port: use \"<switch>:<port>\", a switch's name and \
                     a local port index as in ports.csv"
                ),
            ));
        };
        bias[p.idx()] = b;
    }
    Ok(bias)
}

/// DCQCN's forward notification (`cc.dcqcn.cnp_from` naming switches): every switch
/// takes the [`crate::model::fabric::roles::switch_cnp`] role and the state is built; `None` (and no
/// role changed) otherwise. Fabrics whose switches already play a role, or that hold
/// packets by credits, are refused naming the field.
pub(super) fn assemble_switch_cnp(
    sc: &Scenario,
    switches: &mut [Switch],
    node_names: &[&str],
    n_dr: u32,
    n_flows: usize,
    file: &str,
) -> Result<Option<Box<crate::model::fabric::roles::switch_cnp::SwitchCnpState>>, ScenarioError> {
    use crate::model::cc::dcqcn::{DcqcnParams, ENTRY};
    let from = sc.cc.dcqcn.cnp_from;
    if !from.switch() {
        return Ok(None);
    }
    let field = "cc.dcqcn.cnp_from";
    let dcqcn = sc.cc.algorithm.name() == ENTRY.name
        || sc.cc.class.iter().any(|c| c.algorithm.name() == ENTRY.name);
    let why = if !dcqcn {
        Some("applies to DCQCN flows, and no flow runs DCQCN (set cc.algorithm = \"dcqcn\")")
    } else if n_dr > 0 {
        Some("names every switch, and DR switches send their own CNPs: use fabric.dr.cnp on a multi_campus topology")
    } else if sc.fabric.credit.enabled {
        Some("is modelled on PFC fabrics: switch-generated frames are not credited (fabric.credit.enabled)")
    } else if switches.iter().any(|s| s.role != SwitchRole::Plain) {
        Some("needs plain switches: not with GSE (pktc)")
    } else {
        None
    };
    if let Some(why) = why {
        return Err(err(
            file,
            field,
            format!(
                "\"{}\" {why}",
                if from.receiver() { "both" } else { "switch" }
            ),
        ));
    }
    for s in switches.iter_mut() {
        s.role = SwitchRole::SwitchCnp(crate::model::fabric::roles::switch_cnp::SwitchCnpRole);
    }
    // cnp_interval does not depend on the line rate.
    let interval = DcqcnParams::resolve(&sc.cc.dcqcn, Rate::gbps(100)).cnp_interval;
    let rngs = (switches.iter())
        .map(|s| component_rng(sc.seed, &format!("{}/{field}", node_names[s.node.idx()])))
        .collect();
    Ok(Some(Box::new(
        crate::model::fabric::roles::switch_cnp::SwitchCnpState::new(interval, rngs, n_flows),
    )))
}
