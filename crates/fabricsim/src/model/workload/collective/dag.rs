//! The transfer graph of each collective algorithm, and the bounds and bandwidths that
//! follow from it.
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
//! - Double binary tree AllReduce ([`super::tree`]), NVLS AllReduce ([`super::nvls`]),
//!   ring AllGather, ReduceScatter and Broadcast, PAT AllGather and ReduceScatter
//!   ([`super::ring_ops`]): in their files.
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

use super::CollectiveKind;
use crate::base::units::Time;

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
pub(super) fn split(total: u64, parts: u64) -> Vec<u64> {
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
            CollectiveKind::TreeAllreduce => super::tree::tree(&mut dag, ranks, sc, c, chunks),
            // Without servers to group them, all the ranks share one NVSwitch.
            CollectiveKind::NvlsAllreduce => {
                super::nvls::nvls(&mut dag, ranks, &[(0..n).collect()], sc, c, chunks)
            }
            CollectiveKind::RingAllgather
            | CollectiveKind::RingReduceScatter
            | CollectiveKind::Allgather
            | CollectiveKind::ReduceScatter => {
                super::ring_ops::ring_half(&mut dag, ranks, sc, c, chunks)
            }
            CollectiveKind::RingBroadcast | CollectiveKind::Broadcast => {
                super::ring_ops::broadcast(&mut dag, ranks, sc, c, chunks)
            }
            CollectiveKind::PatAllgather => {
                super::ring_ops::pat(&mut dag, ranks, sc, c, chunks, false)
            }
            CollectiveKind::PatReduceScatter => {
                super::ring_ops::pat(&mut dag, ranks, sc, c, chunks, true)
            }
            // An operation is resolved to its algorithm before it is built; its ring else.
            CollectiveKind::Allreduce => ring(&mut dag, ranks, sc, c, chunks),
        }
    }
    debug_assert!(n >= 2);
    dag
}

pub(super) fn push(dag: &mut Dag, src: u32, dst: u32, size: u64, channel: u32) -> u32 {
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

/// The transfer graph of an NVLS AllReduce whose ranks are grouped by server (as for
/// [`build_hierarchical`]).
pub fn build_nvls(
    ranks: &[u32],
    servers: &[Vec<usize>],
    size: u64,
    channels: u32,
    chunks: u32,
) -> Dag {
    per_server_channel(ranks, servers, size, channels, chunks, super::nvls::nvls)
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
    per_server_channel(ranks, servers, size, channels, chunks, hierarchical)
}

/// Adds one channel's transfers of a collective of ranks grouped by server: (graph,
/// ranks, servers, the channel's bytes, channel, chunks).
type ServerPattern = fn(&mut Dag, &[u32], &[Vec<usize>], u64, u32, u32);

/// A collective of ranks grouped by server, one copy of `pattern` per channel on that
/// channel's share of `size`.
fn per_server_channel(
    ranks: &[u32],
    servers: &[Vec<usize>],
    size: u64,
    channels: u32,
    chunks: u32,
    pattern: ServerPattern,
) -> Dag {
    let mut dag = Dag::default();
    for (c, &sc) in split(size, channels as u64).iter().enumerate() {
        pattern(&mut dag, ranks, servers, sc, c as u32, chunks);
    }
    dag
}

/// `steps` ring steps among `ring` (indices into `ranks`) of `bytes` per transfer, cut
/// into `chunks` pieces; `into[p][r]` is the last transfer of piece `p` into rank `r`,
/// which rank `r`'s next send of that piece waits for, and is updated.
#[allow(clippy::too_many_arguments)]
pub(super) fn ring_steps(
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
    w: Option<&super::super::channel_window::Window>,
) -> (u64, u64) {
    let chunks = chunks.max(1);
    let (q, r) = (bytes / chunks, bytes % chunks);
    let (big, small) = (
        super::super::window_pieces(q.saturating_add(1), w),
        super::super::window_pieces(q.max(1), w),
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
pub(super) fn dag_count(
    kind: CollectiveKind,
    n: u64,
    size_ranks: u64,
    sc: u64,
    chunks: u64,
    rounds: bool,
    w: Option<&super::super::channel_window::Window>,
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
        // No window with these (refused): `chunks` pieces of at least a byte each.
        // Two trees of n-1 edges, each crossed up and down by every piece; a transfer
        // waits for at most 2 (up) or 1 (down) others, the root's 4 at most: 3n per
        // tree and piece bounds them, linearly (so any split of the ranks too).
        CollectiveKind::TreeAllreduce => {
            let c = chunks.max(1).saturating_mul(2);
            (
                c.saturating_mul(2).saturating_mul(n - 1),
                c.saturating_mul(3).saturating_mul(n),
            )
        }
        // Per piece 2n NVLink transfers and a rail ring of 2(m-1) steps of n transfers
        // (m - 1 <= n - 1): at most 2n^2, each waiting for one.
        CollectiveKind::NvlsAllreduce => {
            let f = chunks
                .max(1)
                .saturating_mul(2)
                .saturating_mul(n.saturating_mul(n));
            (f, f)
        }
        // n-1 steps of n transfers per piece, each waiting for one.
        CollectiveKind::RingAllgather
        | CollectiveKind::RingReduceScatter
        | CollectiveKind::Allgather
        | CollectiveKind::ReduceScatter => {
            let f = chunks.max(1).saturating_mul(n).saturating_mul(n - 1);
            (f, f)
        }
        CollectiveKind::RingBroadcast | CollectiveKind::Broadcast => {
            let f = chunks.max(1).saturating_mul(n - 1);
            (f, f)
        }
        // ceil(log2 n) steps of n transfers per piece, each waiting for one; at most
        // n - 1 steps, which bounds any split of the ranks (superadditive).
        CollectiveKind::PatAllgather | CollectiveKind::PatReduceScatter => {
            let f = chunks.max(1).saturating_mul(n).saturating_mul(n - 1);
            (f, f)
        }
        // Any of its algorithms: the largest count of each.
        CollectiveKind::Allreduce => {
            let all = [
                CollectiveKind::RingAllreduce,
                CollectiveKind::TreeAllreduce,
                CollectiveKind::NvlsAllreduce,
            ]
            .map(|k| dag_count(k, n, size_ranks, sc, chunks, rounds, w));
            (
                all.iter().map(|c| c.0).max().unwrap_or(0),
                all.iter().map(|c| c.1).max().unwrap_or(0),
            )
        }
    }
}

/// nccl-tests' bandwidths of a collective on `n` ranks of `size` bytes that took `time`
/// picoseconds, in bytes per second: (algbw, busbw). algbw = size / time; busbw scales it
/// by the bytes each rank moves over its slowest link, so that it compares with the
/// hardware's bandwidth whatever the rank count: 2(n-1)/n for AllReduce, (n-1)/n for
/// AlltoAll, AllGather and ReduceScatter, 1 for Broadcast and a send/receive
/// (nccl-tests, `doc/PERFORMANCE.md`), whatever the algorithm (an NVLS AllReduce too).
pub fn nccl_bandwidths(kind: CollectiveKind, n: usize, size: u64, time: Time) -> (f64, f64) {
    let algbw = size as f64 / (time as f64 * 1e-12);
    let (num, den) = bus_factor(kind, n);
    (algbw, algbw * num as f64 / den as f64)
}

/// nccl-tests' bus bandwidth factor of a collective, as (numerator, denominator).
pub fn bus_factor(kind: CollectiveKind, n: usize) -> (u64, u64) {
    match kind {
        CollectiveKind::NvlsAllreduce | CollectiveKind::Allreduce => {
            lower_bound_factor(CollectiveKind::RingAllreduce, n)
        }
        CollectiveKind::RingBroadcast | CollectiveKind::Broadcast => (1, 1),
        k => lower_bound_factor(k, n),
    }
}

/// Bytes each rank must put on its link, as a multiple of `S`: the numerator and
/// denominator of the lower bound `factor * S / B`.
pub fn lower_bound_factor(kind: CollectiveKind, n: usize) -> (u64, u64) {
    let n = n as u64;
    match kind {
        // A tree moves 2(n-1) S in all, as a ring: some rank sends at least the mean.
        CollectiveKind::RingAllreduce
        | CollectiveKind::HalvingDoubling
        | CollectiveKind::HierarchicalAllreduce
        | CollectiveKind::TreeAllreduce => (2 * (n - 1), n),
        // The switch reduces: a GPU sends its S (and a little more) once.
        CollectiveKind::NvlsAllreduce | CollectiveKind::Allreduce => (1, 1),
        CollectiveKind::Alltoall
        | CollectiveKind::RingAllgather
        | CollectiveKind::RingReduceScatter
        | CollectiveKind::Allgather
        | CollectiveKind::ReduceScatter
        | CollectiveKind::PatAllgather
        | CollectiveKind::PatReduceScatter => (n - 1, n),
        // The root sends S.
        CollectiveKind::P2p | CollectiveKind::RingBroadcast | CollectiveKind::Broadcast => (1, 1),
    }
}
