//! Collectives as dependency graphs of transfers.
//!
//! A job is a set of ranks (NICs) running one collective on a message of `S` bytes per
//! rank. The collective becomes flows plus "starts after" edges between them; the
//! simulator starts a flow when every flow it waits for has been fully received. This is
//! how collective libraries behave on RDMA: a step of a ring forwards what the previous
//! step delivered, so it cannot start before that delivery.
//!
//! The transfer graph of each algorithm is in [`dag`] (the tree, NVLS and the ring
//! collectives besides AllReduce in files of their own). `collective` names an algorithm
//! (`ring_allreduce`, ...) or an operation (`allreduce`, `allgather`, `reduce_scatter`,
//! `broadcast`) whose algorithm `algorithm` names or [`select`] chooses; `protocol`
//! ([`protocol`]) adds NCCL's per-step latency and wire bytes to every transfer; `sizes`
//! runs the collective over a doubling sweep of message sizes, as nccl-tests does.
//!
//! `channels` splits the message over independent copies of the pattern (separate queue
//! pairs, so separate ECMP hashes), and `chunks` pipelines each step in pieces (piece `p`
//! of a step waits only for piece `p` of the previous step). One queue pair carries all
//! the steps of a (job, channel, source, destination), as NCCL keeps one connection per
//! peer and channel: every flow of that pair gets the same UDP source port and hence the
//! same ECMP path. `window` (see [`super::window`]) bounds each queue pair to an NCCL-like
//! buffer of chunk-sized slots, with slot credits travelling back to the sender.

use super::{all_hosts, resolve_set, Builder, Generator, HostSet, DEFAULT_START};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use serde::Deserialize;

pub mod dag;
pub(crate) mod generate;
mod nvls;
pub mod protocol;
mod ring_ops;
pub mod segment;
pub mod select;
mod tree;
use dag::dag_count;
pub use dag::{
    build, build_hierarchical, build_nvls, bus_factor, lower_bound_factor, nccl_bandwidths, Dag,
    Transfer,
};
use protocol::ProtocolCfg;
use select::AlgorithmCfg;

/// Collective algorithms.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    /// Ring AllReduce: 2(n-1) steps of S/n to the ring neighbour.
    RingAllreduce,
    /// AlltoAll: S/n to every other rank.
    Alltoall,
    /// Halving-doubling (Rabenseifner) AllReduce; power-of-two ranks.
    HalvingDoubling,
    /// Point to point: rank 2i sends S to rank 2i+1; an even number of ranks.
    P2p,
    /// Ring reduce-scatter inside each server, ring AllReduce across servers per local
    /// index (rail), ring all-gather inside each server.
    HierarchicalAllreduce,
    /// Double binary tree AllReduce.
    TreeAllreduce,
    /// AllReduce reduced in the NVSwitch (NVLS), rings along the rails across servers.
    NvlsAllreduce,
    /// Ring AllGather (`size`: the gathered buffer).
    RingAllgather,
    /// Ring ReduceScatter (`size`: each rank's input).
    RingReduceScatter,
    /// Ring Broadcast from the first rank.
    RingBroadcast,
    /// PAT AllGather (one rank per server).
    PatAllgather,
    /// PAT ReduceScatter (one rank per server).
    PatReduceScatter,
    /// AllReduce with the algorithm `algorithm` names or the table picks.
    Allreduce,
    /// AllGather, likewise.
    Allgather,
    /// ReduceScatter, likewise.
    ReduceScatter,
    /// Broadcast, likewise.
    Broadcast,
}

impl CollectiveKind {
    /// Every collective, in declaration order.
    pub const ALL: [CollectiveKind; 16] = [
        CollectiveKind::RingAllreduce,
        CollectiveKind::Alltoall,
        CollectiveKind::HalvingDoubling,
        CollectiveKind::P2p,
        CollectiveKind::HierarchicalAllreduce,
        CollectiveKind::TreeAllreduce,
        CollectiveKind::NvlsAllreduce,
        CollectiveKind::RingAllgather,
        CollectiveKind::RingReduceScatter,
        CollectiveKind::RingBroadcast,
        CollectiveKind::PatAllgather,
        CollectiveKind::PatReduceScatter,
        CollectiveKind::Allreduce,
        CollectiveKind::Allgather,
        CollectiveKind::ReduceScatter,
        CollectiveKind::Broadcast,
    ];

    /// The name used in scenarios and `jobs.csv`.
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::RingAllreduce => "ring_allreduce",
            CollectiveKind::Alltoall => "alltoall",
            CollectiveKind::HalvingDoubling => "halving_doubling",
            CollectiveKind::P2p => "p2p",
            CollectiveKind::HierarchicalAllreduce => "hierarchical_allreduce",
            CollectiveKind::TreeAllreduce => "tree_allreduce",
            CollectiveKind::NvlsAllreduce => "nvls_allreduce",
            CollectiveKind::RingAllgather => "ring_allgather",
            CollectiveKind::RingReduceScatter => "ring_reduce_scatter",
            CollectiveKind::RingBroadcast => "ring_broadcast",
            CollectiveKind::PatAllgather => "pat_allgather",
            CollectiveKind::PatReduceScatter => "pat_reduce_scatter",
            CollectiveKind::Allreduce => "allreduce",
            CollectiveKind::Allgather => "allgather",
            CollectiveKind::ReduceScatter => "reduce_scatter",
            CollectiveKind::Broadcast => "broadcast",
        }
    }

    /// Whether this names an operation whose algorithm is chosen (`allreduce`, ...).
    pub fn is_operation(self) -> bool {
        matches!(
            self,
            CollectiveKind::Allreduce
                | CollectiveKind::Allgather
                | CollectiveKind::ReduceScatter
                | CollectiveKind::Broadcast
        )
    }

    /// The operation nccl-tests names it by (`type` of its test: `all_reduce`, ...).
    pub fn operation(self) -> &'static str {
        use CollectiveKind as K;
        match self {
            K::RingAllreduce
            | K::HalvingDoubling
            | K::HierarchicalAllreduce
            | K::TreeAllreduce
            | K::NvlsAllreduce
            | K::Allreduce => "all_reduce",
            K::Alltoall => "alltoall",
            K::P2p => "sendrecv",
            K::RingAllgather | K::PatAllgather | K::Allgather => "all_gather",
            K::RingReduceScatter | K::PatReduceScatter | K::ReduceScatter => "reduce_scatter",
            K::RingBroadcast | K::Broadcast => "broadcast",
        }
    }
}

/// A doubling sweep of message sizes, as nccl-tests' `-b`, `-e` and `-f`: `min`, `min x
/// factor`, ... up to `max`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeSweep {
    /// First size.
    #[serde(deserialize_with = "su::bytes")]
    pub min: u64,
    /// Last size (included when the factor reaches it).
    #[serde(deserialize_with = "su::bytes")]
    pub max: u64,
    /// Ratio between consecutive sizes.
    #[serde(default = "d_factor")]
    pub factor: u64,
}

fn d_factor() -> u64 {
    2
}

/// Most sizes a sweep may have.
pub const MAX_SWEEP_SIZES: usize = 64;

impl SizeSweep {
    /// The sizes, checked (errors name fields within the sweep).
    pub fn sizes(&self) -> Result<Vec<u64>, ParamError> {
        if self.min == 0 {
            return Err(ParamError::new("min", "a message of at least 1 byte"));
        }
        if self.max < self.min {
            return Err(ParamError::new("max", "at least `min`"));
        }
        if self.factor < 2 {
            return Err(ParamError::new("factor", "at least 2"));
        }
        let mut out = vec![self.min];
        while let Some(next) = out.last().and_then(|s| s.checked_mul(self.factor)) {
            if next > self.max {
                break;
            }
            out.push(next);
            if out.len() > MAX_SWEEP_SIZES {
                return Err(ParamError::new(
                    "max",
                    format!("at most {MAX_SWEEP_SIZES} sizes"),
                ));
            }
        }
        Ok(out)
    }
}

/// How a collective workload forms its jobs.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum JobGrouping {
    /// One job over all the given hosts.
    #[default]
    One,
    /// One job per NIC index: job j is the j-th NIC of every server among the hosts (so
    /// all traffic crosses servers).
    NicIndex,
}

/// Jobs running a collective.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveCfg {
    /// An algorithm (`ring_allreduce`, `alltoall`, `halving_doubling`, `p2p`,
    /// `hierarchical_allreduce`, `tree_allreduce`, `nvls_allreduce`, `ring_allgather`,
    /// `ring_reduce_scatter`, `ring_broadcast`, `pat_allgather`, `pat_reduce_scatter`)
    /// or an operation (`allreduce`,
    /// `allgather`, `reduce_scatter`, `broadcast`).
    pub collective: CollectiveKind,
    /// Message bytes per rank (S); 0 when `sizes` gives them.
    #[serde(default, deserialize_with = "su::bytes")]
    pub size: u64,
    /// A sweep of sizes instead of `size`.
    #[serde(default)]
    pub sizes: Option<SizeSweep>,
    /// An operation's algorithm (default `auto`).
    #[serde(default)]
    pub algorithm: Option<AlgorithmCfg>,
    /// The protocol (default `auto` for an operation, none for an algorithm).
    #[serde(default)]
    pub protocol: Option<ProtocolCfg>,
    /// Hosts taking part.
    #[serde(default = "all_hosts")]
    pub hosts: HostSet,
    /// `one` job over all hosts, or one job per `nic_index`.
    #[serde(default)]
    pub jobs: JobGrouping,
    /// Start of the first iteration.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// Iterations per job, each starting when the previous one completes.
    #[serde(default = "d_one")]
    pub repeat: u32,
    /// Pipelined pieces per step.
    #[serde(default = "d_one")]
    pub chunks: u32,
    /// Independent channels (queue pairs), each carrying 1/channels of the message.
    #[serde(default = "d_one")]
    pub channels: u32,
    /// AlltoAll in n-1 shifted rounds instead of all at once.
    #[serde(default)]
    pub rounds: bool,
    /// NCCL-like channel window (`window = {}` for NCCL's defaults); none: unbounded.
    #[serde(default)]
    pub window: Option<super::channel_window::WindowCfg>,
    /// Frames larger than `transport.mtu` (see [`segment`]); none: packets.
    #[serde(default)]
    pub segment: Option<segment::SegmentCfg>,
}

fn d_one() -> u32 {
    1
}

impl Described for CollectiveCfg {
    const ABOUT: &'static str =
        "jobs running a collective, as flows that start when the flows they need are received";
    fn params() -> Vec<Param> {
        let kinds: Vec<String> = CollectiveKind::ALL
            .iter()
            .map(|k| format!("\"{}\"", k.name()))
            .collect();
        vec![
            Param::required("collective", kinds.join(" | ")),
            Param::required("size", "message bytes per rank (S), unless `sizes` is given"),
            Param::unset(
                "sizes",
                "a sweep { min = \"8B\", max = \"1GiB\", factor = 2 }, as nccl-tests' -b -e -f; writes nccl_tests.csv",
            ),
            Param::unset(
                "algorithm",
                "an operation's algorithm: \"auto\" (default) | \"ring\" | \"tree\" | \"nvls\" | \"pat\"",
            ),
            Param::unset(
                "protocol",
                "\"auto\" | \"simple\" | \"ll\" | \"ll128\" | \"none\"; unset: auto for an operation, none (bare transfers) for an algorithm",
            ),
            super::hosts_param(),
            Param::choice(
                "jobs",
                &JobGrouping::default(),
                "one job over all hosts, or one per NIC index of the servers",
            ),
            Param::time("start", DEFAULT_START, "start of the first iteration"),
            Param::plain(
                "repeat",
                d_one(),
                "iterations per job, each after the previous",
            ),
            Param::plain("chunks", d_one(), "pipelined pieces per step"),
            Param::plain(
                "channels",
                d_one(),
                "independent queue pairs, each carrying 1/channels of the message",
            ),
            Param::plain(
                "rounds",
                bool::default(),
                "AlltoAll in n-1 shifted rounds instead of all at once",
            ),
            Param::unset(
                "window",
                "NCCL-like channel window { buffer, chunk, slots }; `{}` for NCCL's defaults (4 MiB in 8 x 512 KiB; p2p: 8 x 128 KiB)",
            ),
            Param::unset(
                "segment",
                "frames larger than transport.mtu, each with the headers of the packets it stands for: \"auto\" (messages >= 512 MiB: at least 16 segments per transfer, at most 64 KiB each) or a size (a multiple of mtu, at most 64 KiB); unset: packets",
            ),
        ]
    }
}

/// Ranks of each job of a collective workload.
fn groups(c: &CollectiveCfg, b: &Builder<'_>) -> Result<Vec<Vec<u32>>, ParamError> {
    let g = b.graph;
    let hs = resolve_set(&c.hosts, g, "hosts", None, "a collective's hosts")?;
    let groups = match c.jobs {
        JobGrouping::One => vec![hs],
        JobGrouping::NicIndex => {
            // Index of each host within its server, in host order.
            let mut seen: std::collections::BTreeMap<u32, u32> = Default::default();
            let mut by_idx: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
            for h in hs {
                let server = g.server_of_host.get(h as usize).copied().unwrap_or(h);
                let k = seen.entry(server).or_insert(0);
                by_idx.entry(*k).or_default().push(h);
                *k += 1;
            }
            by_idx.into_values().collect()
        }
    };
    for (j, ranks) in groups.iter().enumerate() {
        if ranks.len() < 2 {
            return Err(ParamError::new(
                "hosts",
                format!(
                    "job {j} has {} rank(s): a collective needs at least 2 (with jobs = \"nic_index\", hosts must span at least 2 servers)",
                    ranks.len()
                ),
            ));
        }
        if c.collective == CollectiveKind::P2p && ranks.len() % 2 != 0 {
            return Err(ParamError::new(
                "hosts",
                format!(
                    "p2p pairs rank 2i with rank 2i+1: job {j} has an odd number of ranks ({})",
                    ranks.len()
                ),
            ));
        }
        if c.collective == CollectiveKind::HalvingDoubling && !ranks.len().is_power_of_two() {
            return Err(ParamError::new(
                "collective",
                format!(
                    "halving_doubling needs a power-of-two number of ranks; job {j} has {}",
                    ranks.len()
                ),
            ));
        }
    }
    Ok(groups)
}

/// The ranks of a hierarchical AllReduce grouped by server, in order of first
/// appearance, each in host order: the same count in every server.
fn servers_of(
    ranks: &[u32],
    g: &crate::model::topology::TopoGraph,
) -> Result<Vec<Vec<usize>>, ParamError> {
    let mut order: Vec<u32> = Vec::new();
    let mut by: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for (i, &h) in ranks.iter().enumerate() {
        let server = g.server_of_host.get(h as usize).copied().unwrap_or(h);
        by.entry(server)
            .or_insert_with(|| {
                order.push(server);
                Vec::new()
            })
            .push(i);
    }
    let servers: Vec<Vec<usize>> = order.iter().map(|k| by[k].clone()).collect();
    let g = servers[0].len();
    if let Some(bad) = servers.iter().position(|s| s.len() != g) {
        return Err(ParamError::new(
            "hosts",
            format!(
                "hierarchical_allreduce needs as many ranks in every server: server {} has {}, server {} has {g}",
                order[bad],
                servers[bad].len(),
                order[0]
            ),
        ));
    }
    Ok(servers)
}

impl CollectiveCfg {
    /// What the window's queue pairs carry: a p2p job's pairs are NCCL send/receive
    /// connections, every other collective's are a collective's channel buffers.
    pub fn window_traffic(&self) -> super::channel_window::WindowTraffic {
        use super::channel_window::WindowTraffic;
        match self.collective {
            CollectiveKind::P2p => WindowTraffic::PointToPoint,
            _ => WindowTraffic::Collective,
        }
    }

    /// The window with NCCL's defaults for this traffic filled in (checked at generation).
    pub fn resolved_window(&self) -> Option<super::channel_window::Window> {
        let t = self.window_traffic();
        self.window.as_ref().map(|w| w.resolve(t))
    }
}

impl Generator for CollectiveCfg {
    /// Exact for `jobs = "one"`: the pattern's transfers and edges are counted as
    /// [`build`] makes them (per channel: ring `2n(n-1)` steps, AlltoAll `n(n-1)` pairs,
    /// halving-doubling `2n log2 n`, p2p `n/2`; each cut into `chunks` pieces) and, with a
    /// window, each piece into chunks, plus at most one credit per piece (so at most
    /// twice the flows). With `jobs = "nic_index"` the groups depend on the servers, which
    /// the host count does not tell: every count is superadditive in the ranks (`f(a) +
    /// f(b) <= f(a + b)`), so one group of all the hosts bounds any split, loosely (about
    /// NICs per server times for the quadratic patterns); a window's pieces are then
    /// counted at the largest transfer any group could have (2 ranks), and jobs at one
    /// per 2 hosts. An operation whose algorithm `auto` picks is counted at the largest
    /// of its algorithms' counts (a ring's): the choice depends on the servers and
    /// NVSwitches, which the host count does not tell, so the bound is loose (about
    /// GPUs per server times) when NVLS or a tree runs.
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let n = super::set_size(&self.hosts, ctx.hosts, false);
        if n < 2 {
            return Ok(Some(super::WorkSize::default()));
        }
        let window = self.resolved_window();
        let w = window.as_ref();
        let (groups, size_ranks) = match self.jobs {
            JobGrouping::One => (1, n),
            JobGrouping::NicIndex => (n / 2, if w.is_some() { 2 } else { n }),
        };
        let channels = u64::from(self.channels.max(1));
        let sizes = generate::sizes(self)?;
        // The algorithms and protocols of old move at most 2 S per rank, as bare
        // transfers; a tree or NVLS rank up to 2.5 S, and LL doubles the wire bytes.
        let (per_rank, steps) = match self.protocol {
            None if generate::BARE.contains(&self.collective) => (2, 0),
            _ => (6, 1),
        };
        let mut total = super::WorkSize::default();
        let (mut flows, mut deps, mut bytes) = (0u64, 0u64, 0u64);
        for &size in &sizes {
            let sc = size.div_ceil(channels).max(1);
            let (pieces, edges) = dag_count(
                select::counted_as(self.collective, self.algorithm),
                n,
                size_ranks,
                sc,
                u64::from(self.chunks),
                self.rounds,
                w,
            );
            let (f, d) = super::with_window(
                pieces.saturating_mul(channels),
                edges.saturating_mul(channels),
                w.is_some(),
            );
            flows = flows.saturating_add(f);
            // With a protocol's latency, the first step also waits for a join point.
            deps = deps
                .saturating_add(d)
                .saturating_add(f.saturating_mul(steps));
            // Per iteration each rank sends at most 2 S (an AllReduce's two phases of
            // (n-1)/n S; AlltoAll and p2p less), and every host is a rank of one job;
            // plus up to 8 B per flow: a piece is never less than one byte (a 1 B ring
            // AllReduce over 12 ranks sends 264 B, not 24) and a window's slot credit
            // carries `CREDIT_BYTES`.
            bytes = bytes.saturating_add(
                n.saturating_mul(size)
                    .saturating_mul(per_rank)
                    .saturating_add(f.saturating_mul(super::channel_window::CREDIT_BYTES.max(1))),
            );
        }
        let repeat = u64::from(self.repeat);
        let jobs = groups
            .saturating_mul(repeat)
            .saturating_mul(sizes.len() as u64);
        total.flows = flows.saturating_mul(repeat);
        total.deps = deps.saturating_mul(repeat);
        total.jobs = jobs;
        total.phases = jobs.saturating_mul(steps);
        total.bytes = Some(bytes.saturating_mul(repeat));
        Ok(Some(total))
    }

    fn size_drivers(&self) -> &'static str {
        match select::counted_as(self.collective, self.algorithm) {
            CollectiveKind::HalvingDoubling => {
                "hosts x log2(hosts) x chunks x channels x repeat (and window pieces: size / window.chunk)"
            }
            CollectiveKind::P2p => {
                "hosts x chunks x channels x repeat (and window pieces: size / window.chunk)"
            }
            CollectiveKind::TreeAllreduce | CollectiveKind::RingBroadcast | CollectiveKind::Broadcast => {
                "hosts x chunks x channels x repeat x sizes"
            }
            CollectiveKind::NvlsAllreduce
            | CollectiveKind::Allreduce
            | CollectiveKind::RingAllgather
            | CollectiveKind::Allgather
            | CollectiveKind::RingReduceScatter
            | CollectiveKind::ReduceScatter => "hosts^2 x chunks x channels x repeat x sizes",
            CollectiveKind::PatAllgather | CollectiveKind::PatReduceScatter => {
                "hosts x log2(hosts) x chunks x channels x repeat x sizes"
            }
            CollectiveKind::Alltoall
            | CollectiveKind::RingAllreduce
            | CollectiveKind::HierarchicalAllreduce => {
                "hosts^2 x chunks x channels x repeat (and window pieces: size / window.chunk)"
            }
        }
    }

    fn size_knobs(&self, ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        size_knobs(
            self,
            &[
                ("chunks", |c| c.chunks = 1),
                ("channels", |c| c.channels = 1),
                ("repeat", |c| c.repeat = 1),
                // A window cuts a transfer into size / chunk pieces: one at the least.
                ("window.chunk", |c| {
                    let t = c.window_traffic();
                    if let Some(w) = &mut c.window {
                        w.chunk = Some(w.resolve(t).chunk.max(c.size));
                    }
                }),
                ("size", |c| c.size = c.size.min(1)),
                ("sizes.max", |c| {
                    if let Some(s) = &mut c.sizes {
                        s.max = s.min;
                    }
                }),
            ],
            |c| c.size(ctx).ok().flatten(),
        )
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        generate::generate(self, b)
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests;
