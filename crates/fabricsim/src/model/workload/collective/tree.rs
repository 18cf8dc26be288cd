//! Double binary tree AllReduce (`tree_allreduce`, or `allreduce` with `algorithm =
//! "tree"`).
//!
//! NCCL 2.4 added trees for AllReduce at scale (Sylvain Jeaugey, "Massively Scale Your
//! Deep Learning Training with NCCL 2.4", NVIDIA technical blog, 2019; arXiv 2507.04786,
//! section V): a ring's latency grows with the rank count, a tree's with its logarithm.
//! One binary tree would leave the leaves' send bandwidth unused, so NCCL runs two trees,
//! each carrying half of the data, built so that a rank that is a leaf of one is an inner
//! node of the other: the first tree is an in-order binary tree over the ranks (a rank's
//! level is the number of trailing zeros of its 1-based label, the root the largest power
//! of two not above `n`), the second the same tree over labels shifted by one rank.
//!
//! In each tree the half-message is reduced up (a rank sends its part to its parent once
//! it has received its children's) and broadcast down (the root sends the result to its
//! children, each rank forwards what it received to its own), pipelined in `chunks`
//! pieces: piece `p` moves on as soon as piece `p` arrived, whatever the other pieces
//! do. Every tree edge carries `S/2` up and `S/2` down, so both trees together move
//! `2(n-1) S`, as a ring does, but a rank sends up to `2 S`.

use super::dag::{push, split, Dag};

/// Parent label of label `x` in the in-order binary tree over `1..=n`, `None` at the
/// root. A label's lowest set bit `b` is its level; its parent is `x - b` or `x + b`,
/// whichever has `2b` as its lowest bit; a parent above `n` is skipped for its own.
fn parent(x: usize, n: usize) -> Option<usize> {
    let root = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let up = |v: usize| {
        let b = v & v.wrapping_neg();
        if v & (b << 1) != 0 {
            v - b
        } else {
            v + b
        }
    };
    if x == root {
        return None;
    }
    let mut p = up(x);
    while p > n {
        p = up(p);
    }
    Some(p)
}

/// The parent of each rank index (`None` for the root) of tree `t` (0 or 1) over `n`
/// ranks: tree 0 labels rank `r` with `r + 1`, tree 1 with `r` (rank 0 with `n`).
pub(super) fn parents(n: usize, t: usize) -> Vec<Option<usize>> {
    let label = |r: usize| if t == 0 { r + 1 } else { (r + n - 1) % n + 1 };
    let rank = |x: usize| if t == 0 { x - 1 } else { x % n };
    (0..n).map(|r| parent(label(r), n).map(rank)).collect()
}

/// Ranks in order of decreasing depth (children before their parents).
fn bottom_up(par: &[Option<usize>]) -> Vec<usize> {
    let depth = |mut r: usize| {
        let mut d = 0;
        while let Some(p) = par[r] {
            r = p;
            d += 1;
        }
        d
    };
    let mut order: Vec<usize> = (0..par.len()).collect();
    order.sort_by_key(|&r| (std::cmp::Reverse(depth(r)), r));
    order
}

/// Appends the double binary tree AllReduce of `s` bytes on channel `ch`.
pub(super) fn tree(dag: &mut Dag, ranks: &[u32], s: u64, ch: u32, chunks: u32) {
    let n = ranks.len();
    for (t, &half) in split(s, 2).iter().enumerate() {
        let par = parents(n, t);
        let order = bottom_up(&par);
        for ps in split(half, u64::from(chunks)) {
            // up_into[r]: the transfers from r's children; down_into[r]: from its parent.
            let mut up_into: Vec<Vec<u32>> = vec![Vec::new(); n];
            for &r in &order {
                if let Some(p) = par[r] {
                    let x = push(dag, ranks[r], ranks[p], ps, ch);
                    for &b in &up_into[r] {
                        dag.edges.push((b, x));
                    }
                    up_into[p].push(x);
                }
            }
            let mut down_into: Vec<Option<u32>> = vec![None; n];
            for &r in order.iter().rev() {
                for c in (0..n).filter(|&c| par[c] == Some(r)) {
                    let x = push(dag, ranks[r], ranks[c], ps, ch);
                    match down_into[r] {
                        Some(b) => dag.edges.push((b, x)),
                        // The root sends down once everything came up.
                        None => dag.edges.extend(up_into[r].iter().map(|&b| (b, x))),
                    }
                    down_into[c] = Some(x);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_trees_each_rank_a_leaf_of_at_most_one() {
        for n in [2usize, 3, 4, 7, 8, 12, 16, 128] {
            let trees: Vec<Vec<Option<usize>>> = (0..2).map(|t| parents(n, t)).collect();
            for par in &trees {
                // One root, n - 1 edges, at most two children each, no cycle.
                assert_eq!(par.iter().filter(|p| p.is_none()).count(), 1, "n = {n}");
                for r in 0..n {
                    assert!((0..n).filter(|&c| par[c] == Some(r)).count() <= 2);
                }
                assert_eq!(bottom_up(par).len(), n);
            }
            if n % 2 == 0 {
                // A rank that is a leaf in one tree has children in the other.
                let leaf = |t: usize, r: usize| !trees[t].contains(&Some(r));
                for r in 0..n {
                    assert!(!(leaf(0, r) && leaf(1, r)), "n = {n}, rank {r}");
                }
            }
        }
    }
}
