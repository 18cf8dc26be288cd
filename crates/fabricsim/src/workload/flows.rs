//! Flows listed one by one in the scenario (`kind = "flows"`).

use super::{check_size, resolve_host, Builder, Generator, HostRef};
use crate::param::{Described, Param, ParamError};
use crate::transport::FlowSpec;
use crate::units::serde_units as su;
use crate::units::Time;
use serde::Deserialize;

/// Flows listed in the scenario.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowsCfg {
    /// The flows.
    pub flows: Vec<FlowCfg>,
}

/// One explicit flow.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    /// Source host.
    pub src: HostRef,
    /// Destination host.
    pub dst: HostRef,
    /// Bytes to send.
    #[serde(deserialize_with = "su::bytes")]
    pub size: u64,
    /// Start time.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
}

impl Described for FlowsCfg {
    const ABOUT: &'static str = "flows listed one by one";
    fn params() -> Vec<Param> {
        vec![Param::required(
            "flows",
            format!(
                "[{{src, dst, size, start = \"{}\"}}]: hosts by id or name",
                crate::units::fmt_time(0)
            ),
        )]
    }
}

impl Generator for FlowsCfg {
    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        for (i, f) in self.flows.iter().enumerate() {
            let field = |s: &str| format!("flows[{i}].{s}");
            let src = resolve_host(&f.src, b.graph, &field("src"))?;
            let dst = resolve_host(&f.dst, b.graph, &field("dst"))?;
            if src == dst {
                return Err(ParamError::new(
                    field("dst"),
                    "a flow's source and destination must differ",
                ));
            }
            check_size(f.size, &field("size"))?;
            b.work.flows.push(FlowSpec {
                src,
                dst,
                size: f.size,
                start: f.start.unwrap_or(0),
            });
        }
        Ok(())
    }
}
