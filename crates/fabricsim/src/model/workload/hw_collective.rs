//! Hardware collectives (`kind = "hw_collective"`, document 003): barrier, allreduce or
//! broadcast run by the NICs' collective engines over a logical tree, the result coming
//! down by switch multicast ([`crate::model::hw_collective`]). The entry makes no flows: it adds a
//! collective job whose iterations each rank enters after an optional compute step.

use super::{all_hosts, resolve_host, resolve_set, Builder, Generator, HostRef, HostSet};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Time, NS, US};
use crate::model::hw_collective::reduce::{DType, Op};
use crate::model::hw_collective::tree::Tree;
use crate::model::hw_collective::{HwKind, HwSpec};
use serde::Deserialize;

/// A hardware collective job.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HwCollectiveCfg {
    /// `barrier`, `allreduce` or `bcast`.
    pub collective: HwKind,
    /// Hosts taking part, in rank order.
    #[serde(default = "all_hosts")]
    pub hosts: HostSet,
    /// The tree's root (default: the first host).
    #[serde(default)]
    pub root: Option<HostRef>,
    /// Bytes of data (allreduce, bcast); a barrier carries none.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub size: Option<u64>,
    /// Element type.
    #[serde(default = "d_dtype", rename = "type")]
    pub dtype: DType,
    /// Reduction (allreduce).
    #[serde(default)]
    pub op: Option<Op>,
    /// Children per node of a regular tree.
    #[serde(default)]
    pub fan_in: Option<i64>,
    /// An explicit tree: each rank's parent rank, -1 for the root.
    #[serde(default)]
    pub parents: Option<Vec<i64>>,
    /// NIC processing per level of the tree.
    #[serde(default = "d_level", deserialize_with = "su::time")]
    pub level_latency: Time,
    /// NIC processing per message from a child, one after another.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub message_latency: Option<Time>,
    /// Time after sending a contribution up before sending it again.
    #[serde(default = "d_timeout", deserialize_with = "su::time")]
    pub timeout: Time,
    /// Times a rank sends its contribution again before it gives up.
    #[serde(default = "d_retries")]
    pub retries: u32,
    /// The NIC port (plane) used.
    #[serde(default)]
    pub plane: u32,
    /// Results down by switch multicast (false: unicast down the tree).
    #[serde(default = "d_true")]
    pub multicast: bool,
    /// First iteration (each rank enters at start + compute).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// Iterations.
    #[serde(default = "d_one")]
    pub repeat: u32,
    /// Compute step of each rank before each iteration.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub compute: Option<Time>,
    /// Host software per call (posting, completion), each way.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub host_overhead: Option<Time>,
    /// Ranks per NIC (consecutive ranks share a host).
    #[serde(default = "d_one")]
    pub ranks_per_host: u32,
}

fn d_dtype() -> DType {
    DType::Fp64
}
fn d_level() -> Time {
    DEFAULT_LEVEL
}
fn d_timeout() -> Time {
    DEFAULT_TIMEOUT
}
fn d_retries() -> u32 {
    DEFAULT_RETRIES
}
fn d_true() -> bool {
    true
}
fn d_one() -> u32 {
    1
}

/// Largest message (payload bytes) of a hardware collective: one frame of the largest
/// MTU ([`crate::model::transport::config`] allows at most 64 KiB).
pub const MAX_MESSAGE: u64 = 65_536;

/// Fan-in of the tree when neither `fan_in` nor `parents` is given [recon].
pub const DEFAULT_FAN_IN: u32 = 16;
/// NIC processing per level [recon] (calibrated in docs/results/sunway-collectives.md).
pub const DEFAULT_LEVEL: Time = 500 * NS;
/// Collective timeout [recon].
pub const DEFAULT_TIMEOUT: Time = 100 * US;
/// Retries before a rank gives up [recon].
pub const DEFAULT_RETRIES: u32 = 8;

impl Described for HwCollectiveCfg {
    const ABOUT: &'static str =
        "a hardware collective (barrier, allreduce, bcast) by the NICs' engines and switch multicast";
    fn params() -> Vec<Param> {
        vec![
            Param::required("collective", "barrier | allreduce | bcast"),
            Param::word("hosts", "all", "hosts taking part, in rank order"),
            Param::unset("root", "the tree's root host (default: the first)"),
            Param::unset("size", "bytes of data (allreduce, bcast; default 8 B); none for a barrier"),
            Param::word("type", "fp64", "element type: fp32 | fp64 | int32 | int64"),
            Param::unset("op", "allreduce's reduction: sum (default) | max | min | and | or | xor (bitwise: integers only)"),
            Param::unset("fan_in", format!("children per node of a regular tree (default {DEFAULT_FAN_IN}) [recon]")),
            Param::unset("parents", "an explicit tree: each rank's parent rank, -1 for the root"),
            Param::time("level_latency", DEFAULT_LEVEL, "NIC processing per level of the tree [recon]"),
            Param::time("message_latency", 0, "NIC processing per message from a child, one after another [recon]"),
            Param::time("timeout", DEFAULT_TIMEOUT, "before a rank sends its contribution again (at least 1us) [recon]"),
            Param::plain("retries", DEFAULT_RETRIES, "times a rank asks again before it gives up"),
            Param::plain("plane", 0, "the NIC port (plane) used"),
            Param::plain("multicast", true, "result down by switch multicast (false: unicast down the tree)"),
            Param::time("start", 0, "first iteration"),
            Param::plain("repeat", 1, "iterations, each after the rank got the previous result"),
            Param::time("compute", 0, "each rank's compute step before each iteration"),
            Param::time("host_overhead", 0, "host software per call, before the NIC has the request and after it has the result"),
            Param::plain("ranks_per_host", 1, "ranks per NIC: consecutive ranks share a host (two CPUs, one NIC)"),
        ]
    }
}

impl Generator for HwCollectiveCfg {
    /// Exact: no flows, one collective whose ranks (hosts x ranks_per_host) each hold a
    /// tree node and engine state, and a partial reduction of the message's elements;
    /// `hw_ops` counts those ranks, `hw_elems` those elements (a size above
    /// [`MAX_MESSAGE`], which generating refuses, counted at that).
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let hosts = super::set_size(&self.hosts, ctx.hosts, false);
        let ranks = hosts.saturating_mul(self.ranks_per_host as u64);
        let elems = match self.collective {
            HwKind::Barrier => 0,
            HwKind::Allreduce | HwKind::Bcast => {
                self.size.unwrap_or(8).min(MAX_MESSAGE) / self.dtype.bytes().max(1)
            }
        };
        Ok(Some(super::WorkSize {
            hw_ops: ranks,
            hw_iters: self.repeat as u64,
            hw_elems: ranks.saturating_mul(elems),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "hosts x ranks_per_host (ranks)"
    }

    fn size_knobs(&self, ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        size_knobs(
            self,
            &[
                ("ranks_per_host", |c| c.ranks_per_host = 1),
                ("repeat", |c| c.repeat = 1),
                // At most the default size, 8 B.
                ("size", |c| c.size = c.size.map(|s| s.min(8))),
            ],
            |c| c.size(ctx).ok().flatten(),
        )
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let g = b.graph;
        let ranks = resolve_set(
            &self.hosts,
            g,
            "hosts",
            None,
            "a hardware collective's hosts (each rank a distinct NIC)",
        )?;
        if ranks.len() < 2 && self.ranks_per_host < 2 {
            return Err(ParamError::new(
                "hosts",
                "a collective needs at least 2 ranks (2 hosts, or ranks_per_host = 2)",
            ));
        }
        if self.ranks_per_host == 0 {
            return Err(ParamError::new("ranks_per_host", "must be at least 1"));
        }
        let ranks: Vec<u32> = ranks
            .iter()
            .flat_map(|&h| std::iter::repeat_n(h, self.ranks_per_host as usize))
            .collect();
        if self.repeat == 0 {
            return Err(ParamError::new("repeat", "must be at least 1"));
        }
        let n = ranks.len() as u32;
        let root = match &self.root {
            None => 0,
            Some(h) => {
                let host = resolve_host(h, g, "root")?;
                ranks.iter().position(|&x| x == host).ok_or_else(|| {
                    ParamError::new(
                        "root",
                        format!("host {host} is not one of the collective's hosts"),
                    )
                })? as u32
            }
        };
        let tree = match (&self.parents, self.fan_in) {
            (Some(_), Some(_)) => {
                return Err(ParamError::new(
                    "parents",
                    "give a tree by `fan_in` or by `parents`, not both",
                ))
            }
            (Some(p), None) => {
                if p.len() != ranks.len() {
                    return Err(ParamError::new(
                        "parents",
                        format!("{} parents for {n} ranks: one per rank", p.len()),
                    ));
                }
                if self.root.is_some() {
                    return Err(ParamError::new(
                        "root",
                        "an explicit tree names its root (the rank whose parent is -1)",
                    ));
                }
                Tree::explicit(p)?
            }
            (None, Some(k)) if k <= 0 => {
                return Err(ParamError::new(
                    "fan_in",
                    format!("{k}: must be at least 1 (children per node of the tree)"),
                ))
            }
            (None, k) => Tree::regular(
                n,
                root,
                k.map_or(DEFAULT_FAN_IN, |k| k.min(u32::MAX as i64) as u32),
            )?,
        };
        let op = match (self.collective, self.op) {
            (HwKind::Allreduce, op) => op.unwrap_or(Op::Sum),
            (_, Some(_)) => {
                return Err(ParamError::new(
                    "op",
                    "only an allreduce reduces: remove `op`",
                ))
            }
            (_, None) => Op::Sum,
        };
        if !op.defined_for(self.dtype) {
            return Err(ParamError::new(
                "op",
                format!(
                    "`{}` is not defined for {}: bitwise ops (and, or, xor) need an integer type (int32, int64)",
                    op.name(),
                    self.dtype.name()
                ),
            ));
        }
        let count = match (self.collective, self.size) {
            (HwKind::Barrier, Some(_)) => {
                return Err(ParamError::new(
                    "size",
                    "a barrier carries no data: remove `size`",
                ))
            }
            (HwKind::Barrier, None) => 0,
            (_, size) => {
                let size = size.unwrap_or(8);
                // A message is one frame; frames are at most the largest MTU.
                if size > MAX_MESSAGE {
                    return Err(ParamError::new(
                        "size",
                        format!(
                            "{size} B: a hardware collective's message is one frame, at most {MAX_MESSAGE} B (64 KiB)"
                        ),
                    ));
                }
                let eb = self.dtype.bytes();
                if size == 0 || size % eb != 0 {
                    return Err(ParamError::new(
                        "size",
                        format!(
                            "{size} B is not a whole number of {} elements ({eb} B each)",
                            self.dtype.name()
                        ),
                    ));
                }
                (size / eb) as u32
            }
        };
        crate::base::floors::at_least(
            "timeout",
            self.timeout,
            crate::base::floors::RESEND,
            "a retry timer that re-sends data: no round trip is shorter",
        )?;
        let key = crate::base::seed::component_seed(b.seed, &format!("hw_collective[{}]", b.entry));
        b.work.hw.push(HwSpec {
            entry: b.entry as u32,
            kind: self.collective,
            ranks,
            tree,
            op,
            dtype: self.dtype,
            count,
            level_latency: self.level_latency,
            message_latency: self.message_latency.unwrap_or(0),
            timeout: self.timeout,
            retries: self.retries,
            plane: self.plane,
            multicast: self.multicast,
            start: self.start.unwrap_or(0),
            repeat: self.repeat,
            compute: self.compute.unwrap_or(0),
            host_overhead: self.host_overhead.unwrap_or(0),
            key,
        });
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}
