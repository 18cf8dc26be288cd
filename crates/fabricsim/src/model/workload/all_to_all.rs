//! All-to-all traffic (`kind = "all_to_all"`): every host sends one flow to every other
//! host, all at once (for the collective with rounds and jobs, see
//! [`super::collective`]).

use super::{all_hosts, host_group, Builder, Generator, HostSet, DEFAULT_START};
use crate::base::ids::MAX_INDEX;
use crate::base::param::{Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use crate::model::workload::FlowSpec;
use serde::Deserialize;

/// Every host sends a flow to every other host.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllToAllCfg {
    /// Hosts taking part.
    #[serde(default = "all_hosts")]
    pub hosts: HostSet,
    /// Bytes per (source, destination) pair.
    #[serde(deserialize_with = "su::bytes")]
    pub size: u64,
    /// Start time.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
}

impl Described for AllToAllCfg {
    const ABOUT: &'static str = "every host sends a flow to every other host";
    fn params() -> Vec<Param> {
        vec![
            super::hosts_param(),
            Param::required("size", "bytes per (source, destination) pair"),
            Param::time("start", DEFAULT_START, "start of every flow"),
        ]
    }
}

impl Generator for AllToAllCfg {
    /// Exact: n x (n - 1) flows among n hosts.
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let n = super::set_size(&self.hosts, ctx.hosts, false);
        Ok(Some(super::WorkSize {
            flows: n.saturating_mul(n.saturating_sub(1)),
            bytes: Some(
                n.saturating_mul(n.saturating_sub(1))
                    .saturating_mul(self.size),
            ),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "hosts x (hosts - 1)"
    }

    /// None: the hosts the topology has drive the count.
    fn size_knobs(&self, _ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        Vec::new()
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let hs = host_group(&self.hosts, self.size, b.graph, "an all-to-all")?;
        let n = hs.len() as u64;
        if (b.work.flows.len() as u64).saturating_add(n * (n - 1)) > MAX_INDEX as u64 {
            return Err(ParamError::new(
                "hosts",
                format!(
                    "all-to-all among {n} hosts is {} flows: at most {MAX_INDEX} per run",
                    n * (n - 1)
                ),
            ));
        }
        for &src in &hs {
            for &dst in &hs {
                if src != dst {
                    b.work.flows.push(FlowSpec {
                        src,
                        dst,
                        size: self.size,
                        start: self.start.unwrap_or(DEFAULT_START),
                    });
                }
            }
        }
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}
