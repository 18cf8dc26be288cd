//! Collectives as dependency graphs of transfers.
//!
//! A job is a set of ranks (NICs) running one collective on a message of `S` bytes per
//! rank. The collective becomes flows plus "starts after" edges between them; the
//! simulator starts a flow when every flow it waits for has been fully received. This is
//! how collective libraries behave on RDMA: a step of a ring forwards what the previous
//! step delivered, so it cannot start before that delivery.
//!
//! - Ring AllReduce (reduce-scatter then all-gather): `2(n-1)` steps; in step `k` rank `r`
//!   sends `S/n` to rank `r+1`; step `k+1` of rank `r` waits for the step-`k` transfer
//!   into `r` (from `r-1`). Lower bound `2(n-1)/n * S / B`.
//! - AlltoAll: rank `r` sends `S/n` to every other rank, all at once, or in `n-1` shifted
//!   rounds (round `i`: `r -> r+i`; a rank starts round `i+1` once its round-`i` send
//!   and receive are done). Lower bound `(n-1)/n * S / B`.
//! - Halving-doubling AllReduce (Rabenseifner): recursive-halving reduce-scatter over
//!   partners at distance `n/2, n/4, .., 1` exchanging `S/2, S/4, .., S/n`, then
//!   recursive-doubling all-gather in reverse; each step waits for the previous step's
//!   receive. Needs a power-of-two rank count. Lower bound `2(n-1)/n * S / B`.
//!
//! - Point to point (`p2p`): rank `2i` sends `S` to rank `2i+1` (a send/recv pair per two
//!   ranks, as pipeline-parallel stages exchange activations). Lower bound `S / B`.
//! - Hierarchical AllReduce (`hierarchical_allreduce`), for `m` servers of `g` GPUs
//!   joined inside by a scale-up domain: a ring reduce-scatter inside each server (`g-1`
//!   steps of `S/g`, over NVLink), then for each local index `i` a ring AllReduce of the
//!   `S/g` shard among the GPUs `i` of all servers (`2(m-1)` steps of `S/(gm)`, on rail
//!   `i`), then a ring all-gather inside each server (`g-1` steps of `S/g`); a rank's
//!   first step of a phase waits for its last receive of the one before. Each rank sends
//!   `2(n-1)/n S` in all, as in a flat ring: the lower bound is the ring's.
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

/// One transfer of a collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Sending rank's host.
    pub src: u32,
    /// Receiving rank's host.
    pub dst: u32,
    /// Bytes.
    pub size: u64,
    /// Channel (queue-pair) index.
    pub channel: u32,
}

/// A collective as transfers and edges `(before, after)`: `after` starts once `before`
/// has been fully received, and (windows) once `before` has been sent for `sent` edges.
/// Indices are into `transfers`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dag {
    /// The transfers.
    pub transfers: Vec<Transfer>,
    /// Dependencies on a transfer's delivery.
    pub edges: Vec<(u32, u32)>,
    /// Dependencies on a transfer's last byte leaving its NIC (messages of one queue
    /// pair, in order).
    pub sent: Vec<(u32, u32)>,
}

/// Splits `total` into `parts` sizes that differ by at most one byte, none below 1.
fn split(total: u64, parts: u64) -> Vec<u64> {
    let parts = parts.max(1);
    (0..parts)
        .map(|i| (total / parts + u64::from(i < total % parts)).max(1))
        .collect()
}

/// Builds the transfer graph of one run of `kind` over `ranks` with `size` bytes per rank.
/// `ranks` must hold at least 2 hosts (and a power of two for halving-doubling; the
/// caller checks).
pub fn build(
    kind: CollectiveKind,
    ranks: &[u32],
    size: u64,
    channels: u32,
    chunks: u32,
    rounds: bool,
) -> Dag {
    let n = ranks.len();
    let mut dag = Dag::default();
    let per_channel = split(size, channels as u64);
    for (c, &sc) in per_channel.iter().enumerate() {
        let c = c as u32;
        match kind {
            CollectiveKind::RingAllreduce => ring(&mut dag, ranks, sc, c, chunks),
            CollectiveKind::Alltoall => alltoall(&mut dag, ranks, sc, c, chunks, rounds),
            CollectiveKind::HalvingDoubling => halving_doubling(&mut dag, ranks, sc, c, chunks),
            CollectiveKind::P2p => p2p(&mut dag, ranks, sc, c, chunks),
            // Without servers to group them, every rank is its own: a flat ring.
            CollectiveKind::HierarchicalAllreduce => {
                let one_each: Vec<Vec<usize>> = (0..n).map(|r| vec![r]).collect();
                hierarchical(&mut dag, ranks, &one_each, sc, c, chunks)
            }
        }
    }
    debug_assert!(n >= 2);
    dag
}

fn push(dag: &mut Dag, src: u32, dst: u32, size: u64, channel: u32) -> u32 {
    dag.transfers.push(Transfer {
        src,
        dst,
        size,
        channel,
    });
    (dag.transfers.len() - 1) as u32
}

fn ring(dag: &mut Dag, ranks: &[u32], s: u64, ch: u32, chunks: u32) {
    let n = ranks.len();
    let steps = (n - 1).saturating_mul(2);
    let per_step = split(s, n as u64)[0];
    let pieces = split(per_step, chunks as u64);
    // prev[p][r]: transfer of piece p into rank r in the previous step.
    let mut prev: Vec<Vec<Option<u32>>> = vec![vec![None; n]; pieces.len()];
    for _k in 0..steps {
        let mut cur: Vec<Vec<Option<u32>>> = vec![vec![None; n]; pieces.len()];
        for (p, &ps) in pieces.iter().enumerate() {
            for r in 0..n {
                let to = (r + 1) % n;
                let t = push(dag, ranks[r], ranks[to], ps, ch);
                if let Some(b) = prev[p][r] {
                    dag.edges.push((b, t));
                }
                cur[p][to] = Some(t);
            }
        }
        prev = cur;
    }
}

/// The transfer graph of a hierarchical AllReduce whose ranks are grouped by server:
/// `servers[k]` lists the indices into `ranks` of server `k`'s ranks, in local order (all
/// the same length; the caller checks).
pub fn build_hierarchical(
    ranks: &[u32],
    servers: &[Vec<usize>],
    size: u64,
    channels: u32,
    chunks: u32,
) -> Dag {
    let mut dag = Dag::default();
    for (c, &sc) in split(size, channels as u64).iter().enumerate() {
        hierarchical(&mut dag, ranks, servers, sc, c as u32, chunks);
    }
    dag
}

/// `steps` ring steps among `ring` (indices into `ranks`) of `bytes` per transfer, cut
/// into `chunks` pieces; `into[p][r]` is the last transfer of piece `p` into rank `r`,
/// which rank `r`'s next send of that piece waits for, and is updated.
#[allow(clippy::too_many_arguments)]
fn ring_steps(
    dag: &mut Dag,
    ranks: &[u32],
    ring: &[usize],
    steps: usize,
    bytes: u64,
    ch: u32,
    chunks: u32,
    into: &mut [Vec<Option<u32>>],
) {
    let k = ring.len();
    if k < 2 {
        return;
    }
    for _ in 0..steps {
        for (p, &ps) in split(bytes, chunks as u64).iter().enumerate() {
            let before: Vec<Option<u32>> = ring.iter().map(|&r| into[p][r]).collect();
            for (i, &r) in ring.iter().enumerate() {
                let to = ring[(i + 1) % k];
                let t = push(dag, ranks[r], ranks[to], ps, ch);
                if let Some(b) = before[i] {
                    dag.edges.push((b, t));
                }
                into[p][to] = Some(t);
            }
        }
    }
}

fn hierarchical(
    dag: &mut Dag,
    ranks: &[u32],
    servers: &[Vec<usize>],
    s: u64,
    ch: u32,
    chunks: u32,
) {
    let (m, g) = (servers.len(), servers[0].len());
    let shard = split(s, g as u64)[0];
    let per_step = split(shard, m as u64)[0];
    let mut into: Vec<Vec<Option<u32>>> = vec![vec![None; ranks.len()]; chunks as usize];
    // Reduce-scatter inside each server.
    for srv in servers {
        ring_steps(dag, ranks, srv, g - 1, shard, ch, chunks, &mut into);
    }
    // AllReduce of each shard across servers, among the ranks of one local index.
    for i in 0..g {
        let rail: Vec<usize> = servers.iter().map(|srv| srv[i]).collect();
        ring_steps(
            dag,
            ranks,
            &rail,
            2 * (m - 1),
            per_step,
            ch,
            chunks,
            &mut into,
        );
    }
    // All-gather inside each server.
    for srv in servers {
        ring_steps(dag, ranks, srv, g - 1, shard, ch, chunks, &mut into);
    }
}

fn alltoall(dag: &mut Dag, ranks: &[u32], s: u64, ch: u32, chunks: u32, rounds: bool) {
    let n = ranks.len();
    let per_peer = split(s, n as u64)[0];
    let pieces = split(per_peer, chunks as u64);
    // Pieces of one (src, dst) pair go one after the other on their queue pair.
    let send_pair = |dag: &mut Dag, r: usize, to: usize| -> (u32, u32) {
        let mut first = None;
        let mut last: Option<u32> = None;
        for &ps in &pieces {
            let t = push(dag, ranks[r], ranks[to], ps, ch);
            if let Some(b) = last {
                dag.edges.push((b, t));
            }
            first.get_or_insert(t);
            last = Some(t);
        }
        (first.expect("at least one piece"), last.expect("piece"))
    };
    if !rounds {
        for r in 0..n {
            for i in 1..n {
                send_pair(dag, r, (r + i) % n);
            }
        }
        return;
    }
    // last_send[r], last_recv[r]: final piece of rank r's previous-round send / receive.
    let mut last_send: Vec<Option<u32>> = vec![None; n];
    let mut last_recv: Vec<Option<u32>> = vec![None; n];
    for i in 1..n {
        let mut sends = vec![None; n];
        let mut recvs = vec![None; n];
        for r in 0..n {
            let to = (r + i) % n;
            let (first, last) = send_pair(dag, r, to);
            for b in [last_send[r], last_recv[r]].into_iter().flatten() {
                dag.edges.push((b, first));
            }
            sends[r] = Some(last);
            recvs[to] = Some(last);
        }
        last_send = sends;
        last_recv = recvs;
    }
}

fn p2p(dag: &mut Dag, ranks: &[u32], s: u64, ch: u32, chunks: u32) {
    for pair in ranks.chunks_exact(2) {
        for ps in split(s, chunks as u64) {
            push(dag, pair[0], pair[1], ps, ch);
        }
    }
}

fn halving_doubling(dag: &mut Dag, ranks: &[u32], s: u64, ch: u32, chunks: u32) {
    let n = ranks.len();
    let log = n.trailing_zeros() as usize;
    // Distances and byte counts: reduce-scatter halves, all-gather doubles.
    let mut plan: Vec<(usize, u64)> = Vec::new();
    for k in 0..log {
        plan.push((n >> (k + 1), (s >> (k + 1)).max(1)));
    }
    for k in (0..log).rev() {
        plan.push((n >> (k + 1), (s >> (k + 1)).max(1)));
    }
    let mut prev: Vec<Vec<Option<u32>>> = vec![vec![None; n]; chunks as usize];
    for &(dist, bytes) in &plan {
        let pieces = split(bytes, chunks as u64);
        let mut cur: Vec<Vec<Option<u32>>> = vec![vec![None; n]; chunks as usize];
        for (p, &ps) in pieces.iter().enumerate() {
            for r in 0..n {
                let partner = r ^ dist;
                let t = push(dag, ranks[r], ranks[partner], ps, ch);
                if let Some(b) = prev[p][r] {
                    dag.edges.push((b, t));
                }
                cur[p][partner] = Some(t);
            }
        }
        prev = cur;
    }
}

/// Flows of a step whose transfers carry `bytes` each, cut into `chunks` pipelined
/// pieces as [`split`] cuts them (and each piece by a window): all of them, and the first
/// piece's. Saturating.
fn step_pieces(
    bytes: u64,
    chunks: u64,
    w: Option<&super::channel_window::WindowCfg>,
) -> (u64, u64) {
    let chunks = chunks.max(1);
    let (q, r) = (bytes / chunks, bytes % chunks);
    let (big, small) = (
        super::window_pieces(q.saturating_add(1), w),
        super::window_pieces(q.max(1), w),
    );
    let total = r
        .saturating_mul(big)
        .saturating_add((chunks - r).saturating_mul(small));
    (total, if r > 0 { big } else { small })
}

/// Flows and start-after edges of one channel (`sc` bytes) of a job of `n` ranks, as
/// [`build`] and a window make them, without building anything; transfer sizes are taken
/// at `size_ranks` ranks (a smaller count gives larger transfers). Exact when
/// `size_ranks == n`, the window's credits aside.
fn dag_count(
    kind: CollectiveKind,
    n: u64,
    size_ranks: u64,
    sc: u64,
    chunks: u64,
    rounds: bool,
    w: Option<&super::channel_window::WindowCfg>,
) -> (u64, u64) {
    // What each rank sends per step: split(s, n)[0].
    let per_rank = sc.div_ceil(size_ranks.max(1)).max(1);
    match kind {
        // A hierarchical AllReduce makes n(2(g-1) + 2(m-1)) <= 2n(n-1) transfers per
        // piece (g + m - 2 <= gm - 1), of sizes the ring's bound at least when no window
        // cuts them (refused with this collective): the ring's counts bound it.
        CollectiveKind::RingAllreduce | CollectiveKind::HierarchicalAllreduce => {
            // 2(n-1) steps of n transfers; every step after the first waits, piece by
            // piece, for the previous one.
            let (step, _) = step_pieces(per_rank, chunks, w);
            let per_step = n.saturating_mul(step);
            let steps = (n - 1).saturating_mul(2);
            (
                per_step.saturating_mul(steps),
                per_step.saturating_mul(steps - 1),
            )
        }
        CollectiveKind::Alltoall => {
            // n(n-1) pairs; a pair's pieces are chained; with rounds, the first piece of
            // every send from round 2 on waits for the rank's previous send and receive.
            let (pair, first) = step_pieces(per_rank, chunks, w);
            let pairs = n.saturating_mul(n - 1);
            let chain = pairs.saturating_mul(pair - first);
            let round_edges = if rounds {
                n.saturating_mul(2)
                    .saturating_mul(n - 2)
                    .saturating_mul(first)
            } else {
                0
            };
            (
                pairs.saturating_mul(pair),
                chain.saturating_add(round_edges),
            )
        }
        CollectiveKind::HalvingDoubling => {
            // log2 n steps each way (rounded up: other counts are refused), step k of
            // sc >> (k+1) bytes; every step after the first waits for the previous.
            let log = 64 - (n - 1).leading_zeros();
            let mut total = 0u64;
            let mut first = 0u64;
            for k in 0..log {
                let bytes = sc.checked_shr(k + 1).unwrap_or(0).max(1);
                let (step, _) = step_pieces(bytes, chunks, w);
                if k == 0 {
                    first = step;
                }
                total = total.saturating_add(step.saturating_mul(2));
            }
            let flows = n.saturating_mul(total);
            (flows, flows.saturating_sub(n.saturating_mul(first)))
        }
        CollectiveKind::P2p => {
            let (pair, _) = step_pieces(sc, chunks, w);
            ((n / 2).saturating_mul(pair), 0)
        }
    }
}

/// nccl-tests' bandwidths of a collective on `n` ranks of `size` bytes that took `time`
/// picoseconds, in bytes per second: (algbw, busbw). algbw = size / time; busbw scales it
/// by the bytes each rank moves over its slowest link, so that it compares with the
/// hardware's bandwidth whatever the rank count: 2(n-1)/n for AllReduce, (n-1)/n for
/// AlltoAll, 1 for a send/receive (nccl-tests, `doc/PERFORMANCE.md`).
pub fn nccl_bandwidths(kind: CollectiveKind, n: usize, size: u64, time: Time) -> (f64, f64) {
    let algbw = size as f64 / (time as f64 * 1e-12);
    let (num, den) = lower_bound_factor(kind, n);
    (algbw, algbw * num as f64 / den as f64)
}

/// Bytes each rank must put on its link, as a multiple of `S`: the numerator and
/// denominator of the lower bound `factor * S / B`.
pub fn lower_bound_factor(kind: CollectiveKind, n: usize) -> (u64, u64) {
    let n = n as u64;
    match kind {
        CollectiveKind::RingAllreduce
        | CollectiveKind::HalvingDoubling
        | CollectiveKind::HierarchicalAllreduce => (2 * (n - 1), n),
        CollectiveKind::Alltoall => (n - 1, n),
        CollectiveKind::P2p => (1, 1),
    }
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
