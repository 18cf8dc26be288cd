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
