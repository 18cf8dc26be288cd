//! Collectives as dependency graphs of transfers.
//!
//! A job is a set of ranks (NICs) running one collective on a message of `S` bytes per
//! rank. The collective becomes flows plus "starts after" edges between them; the
//! simulator starts a flow when every flow it waits for has been fully received. This is
//! how collective libraries behave on RDMA: a step of a ring forwards what the previous
//! step delivered, so it cannot start before that delivery.
//!
//! The transfer graph of each algorithm is in [`dag`].
//!
//! `channels` splits the message over independent copies of the pattern (separate queue
//! pairs, so separate ECMP hashes), and `chunks` pipelines each step in pieces (piece `p`
//! of a step waits only for piece `p` of the previous step). One queue pair carries all
//! the steps of a (job, channel, source, destination), as NCCL keeps one connection per
//! peer and channel: every flow of that pair gets the same UDP source port and hence the
//! same ECMP path. `window` (see [`super::window`]) bounds each queue pair to an NCCL-like
//! buffer of chunk-sized slots, with slot credits travelling back to the sender.

use super::{
    all_hosts, resolve_set, Builder, DepPoint, Generator, HostSet, JobKind, JobSpec, Node,
    TimedDep, DEFAULT_START,
};
use crate::base::ids::MAX_INDEX;
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use crate::model::workload::FlowSpec;
use serde::Deserialize;

pub mod dag;
use dag::dag_count;
pub use dag::{build, build_hierarchical, lower_bound_factor, nccl_bandwidths, Dag, Transfer};

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
}

impl CollectiveKind {
    /// Every collective, in declaration order.
    pub const ALL: [CollectiveKind; 5] = [
        CollectiveKind::RingAllreduce,
        CollectiveKind::Alltoall,
        CollectiveKind::HalvingDoubling,
        CollectiveKind::P2p,
        CollectiveKind::HierarchicalAllreduce,
    ];

    /// The name used in scenarios and `jobs.csv`.
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::RingAllreduce => "ring_allreduce",
            CollectiveKind::Alltoall => "alltoall",
            CollectiveKind::HalvingDoubling => "halving_doubling",
            CollectiveKind::P2p => "p2p",
            CollectiveKind::HierarchicalAllreduce => "hierarchical_allreduce",
        }
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
    /// `ring_allreduce`, `alltoall`, `halving_doubling`, `p2p` or
    /// `hierarchical_allreduce`.
    pub collective: CollectiveKind,
    /// Message bytes per rank (S).
    #[serde(deserialize_with = "su::bytes")]
    pub size: u64,
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
            Param::required("size", "message bytes per rank (S)"),
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
                "NCCL-like channel window { buffer = \"4MiB\", chunk = \"512KiB\", slots = 8 }; `{}` for these defaults",
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
fn servers_of(ranks: &[u32], b: &Builder<'_>) -> Result<Vec<Vec<usize>>, ParamError> {
    let mut order: Vec<u32> = Vec::new();
    let mut by: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for (i, &h) in ranks.iter().enumerate() {
        let server = b.graph.server_of_host.get(h as usize).copied().unwrap_or(h);
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
    /// per 2 hosts.
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let n = super::set_size(&self.hosts, ctx.hosts, false);
        if n < 2 {
            return Ok(Some(super::WorkSize::default()));
        }
        let w = self.window.as_ref();
        let (groups, size_ranks) = match self.jobs {
            JobGrouping::One => (1, n),
            JobGrouping::NicIndex => (n / 2, if w.is_some() { 2 } else { n }),
        };
        let channels = u64::from(self.channels.max(1));
        let sc = self.size.div_ceil(channels).max(1);
        let (pieces, edges) = dag_count(
            self.collective,
            n,
            size_ranks,
            sc,
            u64::from(self.chunks),
            self.rounds,
            w,
        );
        let (flows, deps) = super::with_window(
            pieces.saturating_mul(channels),
            edges.saturating_mul(channels),
            w.is_some(),
        );
        let repeat = u64::from(self.repeat);
        Ok(Some(super::WorkSize {
            flows: flows.saturating_mul(repeat),
            deps: deps.saturating_mul(repeat),
            jobs: groups.saturating_mul(repeat),
            // Per iteration each rank sends at most 2 S (an AllReduce's two phases of
            // (n-1)/n S; AlltoAll and p2p less), and every host is a rank of one job;
            // plus up to 8 B per flow: a piece is never less than one byte (a 1 B ring
            // AllReduce over 12 ranks sends 264 B, not 24) and a window's slot credit
            // carries `CREDIT_BYTES`.
            bytes: Some(
                n.saturating_mul(self.size)
                    .saturating_mul(2)
                    .saturating_add(
                        flows.saturating_mul(super::channel_window::CREDIT_BYTES.max(1)),
                    )
                    .saturating_mul(repeat),
            ),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        match self.collective {
            CollectiveKind::Alltoall
            | CollectiveKind::RingAllreduce
            | CollectiveKind::HierarchicalAllreduce => {
                "hosts^2 x chunks x channels x repeat (and window pieces: size / window.chunk)"
            }
            CollectiveKind::HalvingDoubling => {
                "hosts x log2(hosts) x chunks x channels x repeat (and window pieces: size / window.chunk)"
            }
            CollectiveKind::P2p => {
                "hosts x chunks x channels x repeat (and window pieces: size / window.chunk)"
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
                    if let Some(w) = &mut c.window {
                        w.chunk = w.chunk.max(c.size);
                    }
                }),
                ("size", |c| c.size = 1),
            ],
            |c| c.size(ctx).ok().flatten(),
        )
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let c = self;
        super::check_size(c.size, "size")?;
        for (name, v) in [
            ("repeat", c.repeat),
            ("chunks", c.chunks),
            ("channels", c.channels),
        ] {
            if v == 0 {
                return Err(ParamError::new(name, "must be at least 1"));
            }
        }
        if c.collective == CollectiveKind::HierarchicalAllreduce {
            if c.window.is_some() {
                return Err(ParamError::new(
                    "window",
                    "hierarchical_allreduce takes no window yet: use chunks",
                ));
            }
            if c.jobs != JobGrouping::One {
                return Err(ParamError::new(
                    "jobs",
                    "hierarchical_allreduce groups its ranks by server itself: use jobs = \"one\"",
                ));
            }
        }
        if let Some(w) = &c.window {
            w.validate().map_err(|e| e.within("window"))?;
            if c.chunks != 1 {
                return Err(ParamError::new(
                    "chunks",
                    "a window cuts transfers into its own chunks: set window.chunk, not chunks",
                ));
            }
        }
        let start = c.start.unwrap_or(DEFAULT_START);
        for ranks in groups(c, b)? {
            let mut dag = if c.collective == CollectiveKind::HierarchicalAllreduce {
                let servers = servers_of(&ranks, b)?;
                build_hierarchical(&ranks, &servers, c.size, c.channels, c.chunks)
            } else {
                build(c.collective, &ranks, c.size, c.channels, c.chunks, c.rounds)
            };
            if let Some(w) = &c.window {
                dag = super::channel_window::apply(&dag, w).0;
            }
            let group = b.job_groups;
            b.job_groups += 1;
            let mut prev_job: Option<u32> = None;
            for it in 0..c.repeat {
                let w = &mut b.work;
                let first = w.flows.len() as u64;
                if first + dag.transfers.len() as u64 > MAX_INDEX as u64 {
                    return Err(ParamError::new(
                        "repeat",
                        format!("the collectives make more than {MAX_INDEX} flows"),
                    ));
                }
                let first = first as u32;
                for t in &dag.transfers {
                    w.flows.push(FlowSpec {
                        src: t.src,
                        dst: t.dst,
                        size: t.size,
                        start,
                    });
                    let key = crate::base::seed::component_seed(
                        b.seed,
                        &format!("job{group}/ch{}/{}-{}", t.channel, t.src, t.dst),
                    );
                    w.conn.push(Some(key));
                }
                for &(before, after) in &dag.edges {
                    w.deps.push((first + before, first + after));
                }
                w.timed
                    .extend(dag.sent.iter().map(|&(before, after)| TimedDep {
                        before: Node::Flow(first + before),
                        after: Node::Flow(first + after),
                        lag: 0,
                        from: DepPoint::Sent,
                    }));
                w.jobs.push(JobSpec {
                    collective: JobKind::Collective(c.collective),
                    ranks: ranks.clone(),
                    size: c.size,
                    start,
                    first_flow: first,
                    n_flows: dag.transfers.len() as u32,
                    first_phase: 0,
                    n_phases: 0,
                    after: prev_job,
                    iteration: it,
                });
                prev_job = Some((w.jobs.len() - 1) as u32);
            }
        }
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_names_every_collective() {
        let names: Vec<String> = CollectiveKind::ALL
            .iter()
            .map(|k| k.name().into())
            .collect();
        assert_eq!(
            names,
            crate::base::param::serde_variants::<CollectiveKind>()
        );
    }

    fn bytes_from(d: &Dag, src: u32) -> u64 {
        d.transfers
            .iter()
            .filter(|t| t.src == src)
            .map(|t| t.size)
            .sum()
    }

    /// Topological check: every edge goes forward and the graph is acyclic.
    fn acyclic(d: &Dag) -> bool {
        let n = d.transfers.len();
        let mut indeg = vec![0usize; n];
        for &(_, a) in &d.edges {
            indeg[a as usize] += 1;
        }
        let mut ready: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut seen = 0;
        while let Some(i) = ready.pop() {
            seen += 1;
            for &(b, a) in &d.edges {
                if b as usize == i {
                    indeg[a as usize] -= 1;
                    if indeg[a as usize] == 0 {
                        ready.push(a as usize);
                    }
                }
            }
        }
        seen == n
    }

    #[test]
    fn hierarchical_allreduce_reduces_inside_servers_and_rings_along_rails() {
        // 3 servers of 4 GPUs: hosts 10s + i.
        let ranks: Vec<u32> = (0..3)
            .flat_map(|s| (0..4).map(move |i| 10 * s + i))
            .collect();
        let servers: Vec<Vec<usize>> = (0..3).map(|s| (4 * s..4 * s + 4).collect()).collect();
        let (n, g, m, size) = (12u64, 4u64, 3u64, 12 * 4096u64);
        let d = build_hierarchical(&ranks, &servers, size, 1, 1);
        assert!(acyclic(&d));
        // n(2(g-1) + 2(m-1)) transfers.
        assert_eq!(d.transfers.len() as u64, n * (2 * (g - 1) + 2 * (m - 1)));
        let (intra, inter): (Vec<&Transfer>, Vec<&Transfer>) =
            d.transfers.iter().partition(|t| t.src / 10 == t.dst / 10);
        assert_eq!(intra.len() as u64, n * 2 * (g - 1));
        assert!(intra.iter().all(|t| t.size == size / g));
        // Across servers only between GPUs of one local index, S/(gm) each.
        assert!(inter
            .iter()
            .all(|t| t.src % 10 == t.dst % 10 && t.size == size / (g * m)));
        // Every rank sends 2(n-1)/n S, as in a flat ring.
        for &r in &ranks {
            assert_eq!(bytes_from(&d, r), 2 * (n - 1) * size / n);
        }
        // A transfer waits for the last one into its sender: all but those of the very
        // first step (a phase's first step waits for the phase before).
        assert_eq!(d.edges.len(), d.transfers.len() - n as usize);
        for &(b, a) in &d.edges {
            assert_eq!(d.transfers[b as usize].dst, d.transfers[a as usize].src);
        }
        // The memory budget counts it as a ring of n ranks, an upper bound.
        let (flows, edges) = dag_count(
            CollectiveKind::HierarchicalAllreduce,
            n,
            n,
            size,
            1,
            false,
            None,
        );
        assert!(flows >= d.transfers.len() as u64 && edges >= d.edges.len() as u64);
        // One GPU per server is a flat ring.
        let flat = build(
            CollectiveKind::HierarchicalAllreduce,
            &ranks,
            size,
            1,
            1,
            false,
        );
        assert_eq!(
            flat,
            build(CollectiveKind::RingAllreduce, &ranks, size, 1, 1, false)
        );
    }

    #[test]
    fn nccl_bus_bandwidth_follows_nccl_tests() {
        // 1 GB in 10 ms over 8 ranks: algbw 100 GB/s; AllReduce busbw x 2(8-1)/8 = 175,
        // AlltoAll x 7/8 = 87.5, p2p x 1.
        let t = 10 * crate::base::units::MS;
        let bw = |k| nccl_bandwidths(k, 8, 1_000_000_000, t);
        assert_eq!(bw(CollectiveKind::RingAllreduce), (1e11, 1.75e11));
        assert_eq!(bw(CollectiveKind::HierarchicalAllreduce), (1e11, 1.75e11));
        assert_eq!(bw(CollectiveKind::Alltoall), (1e11, 8.75e10));
        assert_eq!(bw(CollectiveKind::P2p), (1e11, 1e11));
    }

    #[test]
    fn ring_has_2n_minus_2_steps_of_s_over_n() {
        let ranks = [10, 11, 12, 13];
        let d = build(CollectiveKind::RingAllreduce, &ranks, 4000, 1, 1, false);
        assert_eq!(d.transfers.len(), 4 * 6);
        for &r in &ranks {
            assert_eq!(bytes_from(&d, r), 6 * 1000);
        }
        // Every transfer goes to the ring neighbour.
        assert!(d
            .transfers
            .iter()
            .all(|t| t.dst - 10 == (t.src - 10 + 1) % 4));
        // Each non-first step waits for exactly one receive into its sender.
        assert_eq!(d.edges.len(), 4 * 5);
        for &(b, a) in &d.edges {
            assert_eq!(d.transfers[b as usize].dst, d.transfers[a as usize].src);
        }
        assert!(acyclic(&d));
    }

    #[test]
    fn ring_chunks_and_channels_keep_totals() {
        let ranks = [0, 1, 2];
        let d = build(CollectiveKind::RingAllreduce, &ranks, 6000, 2, 4, false);
        for &r in &ranks {
            assert_eq!(bytes_from(&d, r), 4 * 2000);
        }
        assert_eq!(
            d.transfers.iter().filter(|t| t.channel == 1).count(),
            3 * 4 * 4
        );
        assert!(acyclic(&d));
    }

    #[test]
    fn alltoall_sends_s_over_n_to_every_peer() {
        let ranks = [0, 1, 2, 3];
        for rounds in [false, true] {
            let d = build(CollectiveKind::Alltoall, &ranks, 4096, 1, 1, rounds);
            assert_eq!(d.transfers.len(), 12);
            for &r in &ranks {
                assert_eq!(bytes_from(&d, r), 3 * 1024);
                let mut peers: Vec<u32> = d
                    .transfers
                    .iter()
                    .filter(|t| t.src == r)
                    .map(|t| t.dst)
                    .collect();
                peers.sort();
                peers.dedup();
                assert_eq!(peers.len(), 3);
            }
            assert_eq!(d.edges.is_empty(), !rounds);
            assert!(acyclic(&d));
        }
    }

    #[test]
    fn halving_doubling_exchanges_with_xor_partners() {
        let ranks = [0, 1, 2, 3, 4, 5, 6, 7];
        let d = build(CollectiveKind::HalvingDoubling, &ranks, 8000, 1, 1, false);
        assert_eq!(d.transfers.len(), 8 * 6);
        for &r in &ranks {
            // 2 * (S/2 + S/4 + S/8) = 2 * 7/8 S = 2(n-1)/n S
            assert_eq!(bytes_from(&d, r), 14_000);
        }
        assert!(d
            .transfers
            .iter()
            .all(|t| (t.src ^ t.dst).is_power_of_two()));
        assert!(acyclic(&d));
    }

    #[test]
    fn lower_bound_factors() {
        assert_eq!(lower_bound_factor(CollectiveKind::RingAllreduce, 4), (6, 4));
        assert_eq!(lower_bound_factor(CollectiveKind::Alltoall, 4), (3, 4));
    }
}
