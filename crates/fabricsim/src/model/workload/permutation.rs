//! Permutation traffic (`kind = "permutation"`): every host sends one flow to another,
//! each host receiving exactly one, in a random cycle drawn from the seed.

use super::{all_hosts, host_group, Builder, Generator, HostSet, DEFAULT_START};
use crate::base::param::{Described, Param, ParamError, SizeKnob};
use crate::base::seed::component_rng;
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use crate::model::workload::FlowSpec;
use rand::Rng;
use serde::Deserialize;

/// Every host sends one flow to a distinct host (a random derangement).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermutationCfg {
    /// Hosts taking part.
    #[serde(default = "all_hosts")]
    pub hosts: HostSet,
    /// Bytes per flow.
    #[serde(deserialize_with = "su::bytes")]
    pub size: u64,
    /// Start time.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
}

impl Described for PermutationCfg {
    const ABOUT: &'static str =
        "every host sends one flow to a distinct host (random derangement, seeded)";
    fn params() -> Vec<Param> {
        vec![
            super::hosts_param(),
            Param::required("size", "bytes per flow"),
            Param::time("start", DEFAULT_START, "start of every flow"),
        ]
    }
}

impl Generator for PermutationCfg {
    /// Exact: one flow per host of the set.
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        Ok(Some(super::WorkSize {
            flows: super::set_size(&self.hosts, ctx.hosts, false),
            bytes: Some(super::set_size(&self.hosts, ctx.hosts, false).saturating_mul(self.size)),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "hosts"
    }

    /// None: the hosts the topology has drive the count.
    fn size_knobs(&self, _ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        Vec::new()
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let hs = host_group(&self.hosts, self.size, b.graph, "a permutation")?;
        // Sattolo's algorithm draws a uniformly random cyclic permutation, which has no
        // fixed point: nobody sends to itself.
        let mut perm: Vec<u32> = hs.clone();
        let mut rng = component_rng(b.seed, &format!("workload[{}].permutation", b.entry));
        for i in (1..perm.len()).rev() {
            let j = rng.gen_range(0..i);
            perm.swap(i, j);
        }
        for (src, dst) in hs.iter().zip(perm.iter()) {
            b.work.flows.push(FlowSpec {
                src: *src,
                dst: *dst,
                size: self.size,
                start: self.start.unwrap_or(DEFAULT_START),
            });
        }
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}
