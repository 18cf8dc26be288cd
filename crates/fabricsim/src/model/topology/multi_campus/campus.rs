//! The fabric of one campus: which generator builds it (`campus`), which of the
//! topology's fields it reads, and the tier its DR switches hang off.
//!
//! Both fabrics come from the generators of their own topology kinds, so a campus is
//! exactly the `leaf_spine` or `three_tier` graph those kinds build from the same field
//! values. The fields of the other fabric are refused rather than ignored: a scenario
//! that sets `cores` on leaf-spine campuses (or `spines` on three-tier ones) would
//! otherwise silently simulate something other than what it says.

use super::super::leaf_spine::{self, LeafSpineCfg};
use super::super::three_tier::{self, ThreeTierCfg};
use super::super::{TopoGraph, TopoSize};
use super::MultiCampusCfg;
use crate::base::param::ParamError;
use serde::{Deserialize, Serialize};

/// How each campus is built.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CampusKind {
    /// Two tiers, by the leaf-spine generator; DRs above the spines.
    #[default]
    LeafSpine,
    /// Three tiers, by the three-tier Clos generator; DRs above the cores.
    ThreeTier,
}

impl CampusKind {
    /// The name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            CampusKind::LeafSpine => "leaf_spine",
            CampusKind::ThreeTier => "three_tier",
        }
    }
}

/// One campus's settings, as its generator takes them.
#[derive(Clone, Debug)]
pub(super) enum Campus {
    LeafSpine(LeafSpineCfg),
    ThreeTier(ThreeTierCfg),
}

/// Sizes of one campus, counted before anything is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CampusSize {
    /// Hosts, switches and links inside the campus, as its generator counts them.
    pub topo: TopoSize,
    /// Servers (a three-tier server has one NIC).
    pub servers: u64,
}

impl Campus {
    /// The campus settings of `c`, or an error naming a field that belongs to the other
    /// fabric or one this fabric needs and lacks.
    pub(super) fn of(c: &MultiCampusCfg) -> Result<Campus, ParamError> {
        let kind = c.campus;
        // Fields only one of the two fabrics reads, and whether the scenario gave them.
        let leaf_spine = [
            ("leaves", c.leaves.is_some()),
            ("spines", c.spines.is_some()),
            ("servers_per_leaf", c.servers_per_leaf.is_some()),
            ("nics_per_server", c.nics_per_server.is_some()),
            ("uplink_rate", c.uplink_rate.is_some()),
            ("uplinks_per_pair", c.uplinks_per_pair.is_some()),
        ];
        let three_tier = [
            ("pods", c.pods.is_some()),
            ("tors_per_pod", c.tors_per_pod.is_some()),
            ("servers_per_tor", c.servers_per_tor.is_some()),
            ("aggs_per_pod", c.aggs_per_pod.is_some()),
            ("cores", c.cores.is_some()),
            ("tor_agg_rate", c.tor_agg_rate.is_some()),
            ("agg_core_rate", c.agg_core_rate.is_some()),
        ];
        let (foreign, other) = match kind {
            CampusKind::LeafSpine => (&three_tier[..], CampusKind::ThreeTier),
            CampusKind::ThreeTier => (&leaf_spine[..], CampusKind::LeafSpine),
        };
        if let Some(&(f, _)) = foreign.iter().find(|(_, given)| *given) {
            return Err(ParamError::new(
                f,
                format!(
                    "{f} is a field of {} campuses, and these are {} (campus = \"{}\"): remove it, or set campus = \"{}\"",
                    other.name(),
                    kind.name(),
                    kind.name(),
                    other.name()
                ),
            ));
        }
        let need = |f: &'static str, v: Option<u32>| {
            v.ok_or_else(|| {
                ParamError::new(
                    f,
                    format!(
                        "missing: {} campuses (campus = \"{}\") need {f}",
                        kind.name(),
                        kind.name()
                    ),
                )
            })
        };
        Ok(match kind {
            CampusKind::LeafSpine => Campus::LeafSpine(LeafSpineCfg {
                leaves: need("leaves", c.leaves)?,
                spines: Some(need("spines", c.spines)?),
                servers_per_leaf: need("servers_per_leaf", c.servers_per_leaf)?,
                nics_per_server: c.nics_per_server.unwrap_or(1),
                host_rate: c.host_rate,
                uplink_rate: c.uplink_rate,
                uplinks_per_pair: c.uplinks_per_pair.unwrap_or(1),
                speedup: None,
                link_delay: c.link_delay,
                link_length: c.link_length,
            }),
            CampusKind::ThreeTier => Campus::ThreeTier(ThreeTierCfg {
                pods: need("pods", c.pods)?,
                tors_per_pod: need("tors_per_pod", c.tors_per_pod)?,
                servers_per_tor: need("servers_per_tor", c.servers_per_tor)?,
                aggs_per_pod: need("aggs_per_pod", c.aggs_per_pod)?,
                cores: need("cores", c.cores)?,
                host_rate: c.host_rate,
                tor_agg_rate: c.tor_agg_rate,
                agg_core_rate: c.agg_core_rate,
                link_delay: c.link_delay,
                link_length: c.link_length,
            }),
        })
    }

    /// The top tier the DRs link to: its switch count, the field that sets it, and
    /// what one of its switches is called (the generator's name prefix too).
    pub(super) fn top(&self) -> (u32, &'static str, &'static str) {
        match self {
            Campus::LeafSpine(c) => (c.spines.unwrap_or(0), "spines", "spine"),
            Campus::ThreeTier(c) => (c.cores, "cores", "core"),
        }
    }

    /// Hosts, servers, switches and links of one campus, in saturating arithmetic, or
    /// the error its generator gives for settings it cannot count.
    pub(super) fn size(&self) -> Result<CampusSize, ParamError> {
        // The campus generators' own counting, so a campus here cannot drift from the
        // graph they build.
        Ok(match self {
            Campus::LeafSpine(c) => CampusSize {
                topo: leaf_spine::counts(c)?.0,
                servers: (c.leaves as u64).saturating_mul(c.servers_per_leaf as u64),
            },
            Campus::ThreeTier(c) => {
                let topo = three_tier::counts(c)?;
                CampusSize {
                    topo,
                    servers: topo.hosts,
                }
            }
        })
    }

    /// The campus graph, by its kind's own generator.
    pub(super) fn build(&self) -> Result<TopoGraph, ParamError> {
        match self {
            Campus::LeafSpine(c) => leaf_spine::build(c),
            Campus::ThreeTier(c) => three_tier::build(c),
        }
    }
}
