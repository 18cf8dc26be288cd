//! Data parallelism split across two campuses: every rank holds the whole model, and
//! only the gradient AllReduce crosses, hierarchically (document 001, appendix): a ring
//! reduce-scatter inside each campus (`n - 1` steps of `S/n`), an exchange of the reduced
//! shards between paired ranks across the DCI (`S/n` each way), and a ring all-gather
//! inside each campus. A rank computes its iteration (`compute`) once its previous
//! all-gather is done.
//!
//! With ZeRO-3 (DeepSpeed) the parameters are sharded over all ranks and gathered before
//! the compute: the paired ranks exchange their parameter shards across the DCI
//! (`P / 2n` each way), then each campus all-gathers in a ring (`n - 1` steps of
//! `P / n`); the gradients then go as above. (ZeRO-3 needs only their reduce-scatter;
//! the all-gather half is kept, a pessimism noted in docs/results/longhaul.md.)

use super::graph::{JobGraph, JobNode};
use crate::base::units::Time;

/// The shape of one data-parallel job.
#[derive(Clone, Copy, Debug)]
pub struct DataParallelShape {
    /// Compute (forward and backward) per iteration.
    pub compute: Time,
    /// Gradient bytes per rank.
    pub gradient: u64,
    /// ZeRO-3: parameter bytes of the model.
    pub parameters: Option<u64>,
}

/// A ring over `ranks` of `n - 1` steps of `shard` bytes whose first send of rank `r`
/// waits for `ready[r]`. Returns the last transfer into each rank (`ready[r]` itself when
/// there is one rank).
fn ring(g: &mut JobGraph, ranks: &[u32], shard: u64, ready: &[JobNode]) -> Vec<JobNode> {
    let n = ranks.len();
    let mut into: Vec<JobNode> = ready.to_vec();
    for _ in 0..n.saturating_sub(1) {
        let mut next = into.clone();
        for r in 0..n {
            let to = (r + 1) % n;
            let t = g.message(ranks[r], ranks[to], shard, false);
            // Step 0 waits for the rank to be ready; later steps forward what arrived.
            g.after(into[r], t);
            next[to] = t;
        }
        into = next;
    }
    into
}

/// Adds `iterations` iterations of data parallelism over the paired ranks `a[i]`, `b[i]`
/// (one side per campus) to `g`. Returns each iteration's end phase.
pub fn build(
    g: &mut JobGraph,
    a: &[u32],
    b: &[u32],
    sh: &DataParallelShape,
    iterations: u32,
    start: Time,
) -> Vec<JobNode> {
    let n = a.len();
    let sides = [a, b];
    let shard = sh.gradient.div_ceil(n as u64).max(1);
    let begin = g.phase(0, start);
    // done[s][i]: what ends rank i of side s's previous iteration.
    let mut done: [Vec<JobNode>; 2] = [vec![begin; n], vec![begin; n]];
    let mut ends = Vec::new();
    for _ in 0..iterations {
        let mut ready = done.clone();
        if let Some(p) = sh.parameters {
            // Parameter shards cross between the pairs, then each side gathers.
            let pshard = p.div_ceil(2 * n as u64).max(1);
            let mut got: [Vec<JobNode>; 2] = [vec![begin; n], vec![begin; n]];
            for i in 0..n {
                for (s, (from, to)) in [(a[i], b[i]), (b[i], a[i])].into_iter().enumerate() {
                    let t = g.message(from, to, pshard, true);
                    g.after(done[s][i], t);
                    got[1 - s][i] = t;
                }
            }
            for s in 0..2 {
                ready[s] = ring(g, sides[s], 2 * pshard, &got[s]);
            }
        }
        // Compute, then the gradients: reduce-scatter per side, exchange, all-gather.
        let mut computed: [Vec<JobNode>; 2] = [Vec::new(), Vec::new()];
        for (s, side) in ready.iter().enumerate() {
            for (i, &r) in side.iter().enumerate() {
                let c = g.compute(sides[s][i], sh.compute);
                g.after(r, c);
                computed[s].push(c);
            }
        }
        let reduced: Vec<Vec<JobNode>> = (0..2)
            .map(|s| ring(g, sides[s], shard, &computed[s]))
            .collect();
        let mut crossed: [Vec<JobNode>; 2] = [vec![begin; n], vec![begin; n]];
        for i in 0..n {
            for (s, (from, to)) in [(a[i], b[i]), (b[i], a[i])].into_iter().enumerate() {
                let t = g.message(from, to, shard, true);
                g.after(reduced[s][i], t);
                crossed[1 - s][i] = t;
            }
        }
        let end = g.phase(0, 0);
        for s in 0..2 {
            done[s] = ring(g, sides[s], shard, &crossed[s]);
            for &d in &done[s] {
                g.after(d, end);
            }
        }
        ends.push(end);
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase_end(t: &[Time], v: JobNode) -> Time {
        match v {
            JobNode::Phase(i) => t[i as usize],
            JobNode::Transfer(_) => unreachable!(),
        }
    }

    #[test]
    fn an_iteration_is_compute_then_three_exposed_rings() {
        // 4 ranks per side: reduce-scatter 3 steps, exchange 1, all-gather 3, each
        // transfer taking d: compute + 7 d per iteration.
        let (a, b) = ([0, 1, 2, 3], [4, 5, 6, 7]);
        let sh = DataParallelShape {
            compute: 1000,
            gradient: 4000,
            parameters: None,
        };
        let mut g = JobGraph::default();
        let ends = build(&mut g, &a, &b, &sh, 2, 50);
        let t = g.evaluate(|_| 10);
        assert_eq!(phase_end(&t, ends[0]), 50 + 1000 + 7 * 10);
        assert_eq!(phase_end(&t, ends[1]), 50 + 2 * (1000 + 7 * 10));
        // Every shard is S/n; two crossings per pair per iteration.
        assert!(g.messages.iter().all(|m| m.size == 1000));
        assert_eq!(g.messages.iter().filter(|m| m.cross).count(), 2 * 4 * 2);
    }

    #[test]
    fn zero3_gathers_the_parameters_first() {
        let (a, b) = ([0, 1], [2, 3]);
        let sh = DataParallelShape {
            compute: 1000,
            gradient: 4000,
            parameters: Some(8000),
        };
        let mut g = JobGraph::default();
        let ends = build(&mut g, &a, &b, &sh, 1, 0);
        let t = g.evaluate(|_| 10);
        // Parameter exchange and a 1-step ring, compute, then 1 + 1 + 1 gradient steps.
        assert_eq!(phase_end(&t, ends[0]), 2 * 10 + 1000 + 3 * 10);
        let cross: Vec<u64> = g
            .messages
            .iter()
            .filter(|m| m.cross)
            .map(|m| m.size)
            .collect();
        assert_eq!(cross, vec![2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000]);
    }
}
