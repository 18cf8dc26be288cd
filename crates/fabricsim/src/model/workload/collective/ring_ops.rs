//! The ring collectives besides AllReduce: AllGather, ReduceScatter and Broadcast, as
//! NCCL runs them on its rings (arXiv 2507.04786, section V) and with the sizes
//! nccl-tests gives them (`doc/PERFORMANCE.md`).
//!
//! - AllGather (`ring_allgather`): `S` is the gathered buffer, each rank contributing
//!   `S/n`; `n-1` steps in which rank `r` forwards to `r+1` the block it received last
//!   (its own first). Each rank sends `(n-1)/n S`.
//! - ReduceScatter (`ring_reduce_scatter`): `S` is each rank's input, each rank ending
//!   with its reduced `S/n`; `n-1` steps of `S/n` to the ring neighbour, each adding the
//!   block it received. Each rank sends `(n-1)/n S`: the same graph as AllGather.
//! - Broadcast (`ring_broadcast`): the first rank's `S` flows along the ring, rank `k`
//!   forwarding each piece to `k+1` as soon as it has it (pipelined in `chunks`); the
//!   last rank sends nothing. The root sends `S`.

use super::dag::{push, ring_steps, split, Dag};

/// Appends `n-1` ring steps of `S/n` (AllGather and ReduceScatter).
pub(super) fn ring_half(dag: &mut Dag, ranks: &[u32], s: u64, ch: u32, chunks: u32) {
    let n = ranks.len();
    let ring: Vec<usize> = (0..n).collect();
    let mut into: Vec<Vec<Option<u32>>> = vec![vec![None; n]; chunks as usize];
    let per_step = split(s, n as u64)[0];
    ring_steps(dag, ranks, &ring, n - 1, per_step, ch, chunks, &mut into);
}

/// Appends a pipelined ring broadcast of `s` bytes from `ranks[0]`.
pub(super) fn broadcast(dag: &mut Dag, ranks: &[u32], s: u64, ch: u32, chunks: u32) {
    for ps in split(s, u64::from(chunks)) {
        let mut prev: Option<u32> = None;
        for k in 0..ranks.len() - 1 {
            let x = push(dag, ranks[k], ranks[k + 1], ps, ch);
            if let Some(b) = prev {
                dag.edges.push((b, x));
            }
            prev = Some(x);
        }
    }
}

/// Appends PAT AllGather (`reduce = false`) or ReduceScatter (`reduce = true`): NCCL's
/// Parallel Aggregated Trees (S. Jeaugey, "PAT: a new algorithm for all-gather and
/// reduce-scatter operations at scale", arXiv 2506.20252), a Bruck algorithm with its
/// dimensions reversed, for one GPU per node: `ceil(log2 n)` steps instead of a ring's
/// `n-1`, and the far ranks reached first with little data, so that no large transfer
/// crosses the fabric's longest distance. Bruck's all-gather sends, at distance `2^k`,
/// the `min(2^k, n - 2^k)` blocks of `S/n` a rank holds to rank `r - 2^k`; PAT's
/// AllGather keeps those block counts in that order and takes the distances from the
/// largest down; its ReduceScatter runs the same steps backwards (the most data to the
/// nearest rank first), each rank sending the partial sums it aggregated. A step waits
/// for the step before's receive. Each rank sends `(n-1)/n S`, as on a ring. The
/// bounded intermediate buffers that make PAT split large steps are not modelled.
pub(super) fn pat(dag: &mut Dag, ranks: &[u32], s: u64, ch: u32, chunks: u32, reduce: bool) {
    let n = ranks.len();
    let block = split(s, n as u64)[0];
    let dists: Vec<usize> = std::iter::successors(Some(1usize), |d| Some(d * 2))
        .take_while(|&d| d < n)
        .collect();
    let mut plan: Vec<(usize, u64)> = dists
        .iter()
        .rev()
        .zip(dists.iter().map(|&d| d.min(n - d) as u64))
        .map(|(&d, b)| (d, b))
        .collect();
    if reduce {
        plan.reverse();
    }
    for ps in split(block, u64::from(chunks)) {
        // into[r]: the transfer of the step before into rank r.
        let mut into: Vec<Option<u32>> = vec![None; n];
        for &(d, blocks) in &plan {
            let mut next = vec![None; n];
            for r in 0..n {
                let to = (r + n - d) % n;
                let x = push(dag, ranks[r], ranks[to], ps * blocks, ch);
                if let Some(b) = into[r] {
                    dag.edges.push((b, x));
                }
                next[to] = Some(x);
            }
            into = next;
        }
    }
}
