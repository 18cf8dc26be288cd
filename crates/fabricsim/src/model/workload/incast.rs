//! Incast (`kind = "incast"`): many senders to one receiver at once, the pattern that
//! fills a switch's egress toward the receiver and, with PFC, pauses its upstream.

use super::DEFAULT_START;
use super::{check_size, resolve_host, resolve_set, Builder, Generator, HostRef, HostSet};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use crate::model::workload::FlowSpec;
use serde::Deserialize;

/// N senders to one receiver.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IncastCfg {
    /// Sending hosts.
    pub senders: HostSet,
    /// Receiving host.
    pub receiver: HostRef,
    /// Bytes per sender.
    #[serde(deserialize_with = "su::bytes")]
    pub size: u64,
    /// Start time.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// Bursts per sender (default 1): each sender starts a new flow of `size` every
    /// `interval`.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Time between a sender's bursts (required when `repeat` > 1).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub interval: Option<Time>,
}

/// Bursts per sender when `repeat` is not given.
const DEFAULT_REPEAT: u32 = 1;

impl Described for IncastCfg {
    const ABOUT: &'static str = "N senders to one receiver";
    fn params() -> Vec<Param> {
        vec![
            Param::required("senders", "\"all\" | a count | a list of hosts"),
            Param::required("receiver", "a host id or name"),
            Param::required("size", "bytes per sender and burst"),
            Param::time("start", DEFAULT_START, "time of the first burst"),
            Param::plain("repeat", DEFAULT_REPEAT, "bursts per sender"),
            Param::unset(
                "interval",
                "time between a sender's bursts (required when repeat > 1)",
            ),
        ]
    }
}

impl Generator for IncastCfg {
    /// Exact: every sender once per repeat.
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let senders = super::set_size(&self.senders, ctx.hosts, true);
        let repeat = self.repeat.unwrap_or(DEFAULT_REPEAT) as u64;
        Ok(Some(super::WorkSize {
            flows: senders.saturating_mul(repeat),
            bytes: Some(senders.saturating_mul(repeat).saturating_mul(self.size)),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "senders x repeat"
    }

    fn size_knobs(&self, ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        size_knobs(
            self,
            &[
                ("senders", |c| c.senders = HostSet::Count(1)),
                ("repeat", |c| c.repeat = c.repeat.map(|_| 1)),
            ],
            |c| c.size(ctx).ok().flatten(),
        )
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let g = b.graph;
        let r = resolve_host(&self.receiver, g, "receiver")?;
        let repeat = self.repeat.unwrap_or(DEFAULT_REPEAT);
        if repeat == 0 {
            return Err(ParamError::new("repeat", "must be at least 1"));
        }
        let every = match self.interval {
            Some(0) => return Err(ParamError::new("interval", "must be positive")),
            Some(t) => t,
            None if repeat > 1 => {
                return Err(ParamError::new(
                    "interval",
                    "is required when repeat > 1 (the time between a sender's bursts)",
                ))
            }
            None => 0,
        };
        let s = resolve_set(&self.senders, g, "senders", Some(r), "an incast's senders")?;
        check_size(self.size, "size")?;
        if let Some(i) = s.iter().position(|&h| h == r) {
            return Err(ParamError::new(
                format!("senders[{i}]"),
                format!("host {r} is the receiver: it cannot also be a sender (no flow to itself)"),
            ));
        }
        let start = self.start.unwrap_or(DEFAULT_START);
        for k in 0..repeat as u64 {
            for &src in &s {
                b.work.flows.push(FlowSpec {
                    src,
                    dst: r,
                    size: self.size,
                    start: start + k * every,
                });
            }
        }
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}
