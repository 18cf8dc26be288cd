//! The shortest-path walks behind the routing tables: for each edge switch, a breadth-first
//! walk over the switch graph lists, at every switch, the ports one step closer to it.
//!
//! The walks are independent, so large tables split them over threads: each takes a
//! block of consecutive edge switches and lists its candidates in block-local arrays,
//! which are then appended in block order. The table is the same, entry for entry, on
//! any number of threads (a test builds it both ways). A rail-optimized cluster with
//! NVLink has an edge switch per GPU (its crossbar), so at 16,384 GPUs the walks are
//! 16,384 passes over 18,752 switches, most of its build on one thread.

use super::{CONTIGUOUS, PACKED, PACKED_MAX_LEN, PACKED_PORT_BITS, PACKED_PORT_MASK, UNREACHED};
use std::collections::VecDeque;

/// Edge switches a thread walks from per block.
const BLOCK: usize = 64;
/// Tables of fewer (switch, edge) entries are built on one thread: starting threads
/// would cost more than the walks.
const PARALLEL_FROM: usize = 1 << 22;

/// The switch graph as the walks read it: each switch's usable links to switches,
/// (port, peer switch) in port order, laid out flat (the walks visit every link once
/// per edge switch, ~k^5 visits on a fat tree of radix k).
pub(super) struct SwitchGraph {
    pub adj_start: Vec<u32>,
    pub adj: Vec<(u32, u32)>,
}

impl SwitchGraph {
    fn links_of(&self, s: usize) -> &[(u32, u32)] {
        &self.adj[self.adj_start[s] as usize..self.adj_start[s + 1] as usize]
    }
    fn switches(&self) -> usize {
        self.adj_start.len() - 1
    }
}

/// The candidates found for a block of edge switches, indexed locally.
#[derive(Default)]
struct Block {
    /// Entry per (edge in the block, switch), edge-major: packed, or an index into
    /// `spans`.
    entries: Vec<u32>,
    spans: Vec<(u32, u32)>,
    /// Ports of the spans that are not runs of consecutive ports.
    flat: Vec<u32>,
}

/// Threads the walks use for a table of `entries` (switch, edge) entries.
pub(super) fn threads_for(entries: usize) -> usize {
    if entries < PARALLEL_FROM {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(16))
}

/// Fills `ranges` (switch-major, `n_edges` per switch), `spans` and `flat` with every
/// switch's candidates toward every edge switch in `edge_switch`, on `threads` threads.
pub(super) fn walk_all(
    g: &SwitchGraph,
    edge_switch: &[u32],
    threads: usize,
    ranges: &mut [u32],
    spans: &mut Vec<(u32, u32)>,
    flat: &mut Vec<u32>,
) {
    let (n_sw, n_edges) = (g.switches(), edge_switch.len());
    let blocks: Vec<std::ops::Range<usize>> = (0..n_edges)
        .step_by(BLOCK)
        .map(|e0| e0..(e0 + BLOCK).min(n_edges))
        .collect();
    // Rounds of one block per thread, appended in block order.
    for round in blocks.chunks(threads.max(1)) {
        let found: Vec<Block> = if round.len() == 1 {
            vec![walk_block(g, edge_switch, round[0].clone())]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (round.iter())
                    .map(|r| scope.spawn(|| walk_block(g, edge_switch, r.clone())))
                    .collect();
                (handles.into_iter())
                    .map(|h| h.join().expect("a routing walk panicked"))
                    .collect()
            })
        };
        for (r, b) in round.iter().zip(found) {
            let (span_base, flat_base) = (spans.len() as u32, flat.len() as u32);
            spans.extend(b.spans.iter().map(|&(start, len)| {
                if start & CONTIGUOUS != 0 {
                    (start, len)
                } else {
                    (start + flat_base, len)
                }
            }));
            flat.extend_from_slice(&b.flat);
            for (j, e) in r.clone().enumerate() {
                for s in 0..n_sw {
                    let v = b.entries[j * n_sw + s];
                    ranges[s * n_edges + e] = if v & PACKED != 0 { v } else { v + span_base };
                }
            }
        }
    }
}

/// The walks from the edge switches `edges`.
fn walk_block(g: &SwitchGraph, edge_switch: &[u32], edges: std::ops::Range<usize>) -> Block {
    let n_sw = g.switches();
    let mut b = Block {
        entries: vec![PACKED; edges.len() * n_sw],
        ..Block::default()
    };
    let mut dist = vec![UNREACHED; n_sw];
    let mut queue = VecDeque::new();
    for (j, e) in edges.enumerate() {
        dist.iter_mut().for_each(|d| *d = UNREACHED);
        let root = edge_switch[e];
        dist[root as usize] = 0;
        queue.push_back(root);
        let row = &mut b.entries[j * n_sw..(j + 1) * n_sw];
        // Breadth first from the edge switch: when switch s (distance d) is taken from
        // the queue, every switch at distance d - 1 already has its distance (they
        // were all queued before s), so one pass over s's links both finds the next
        // layer and lists s's candidates, the links one step closer, in port order.
        while let Some(s) = queue.pop_front() {
            let d = dist[s as usize];
            let start = b.flat.len() as u32;
            for &(p, t2) in g.links_of(s as usize) {
                let dt = dist[t2 as usize];
                if dt == UNREACHED {
                    dist[t2 as usize] = d + 1;
                    queue.push_back(t2);
                } else if dt + 1 == d {
                    b.flat.push(p);
                }
            }
            if s == root {
                continue;
            }
            let len = b.flat.len() as u32 - start;
            // Fat-trees and leaf-spines list their up ports consecutively: store such
            // a run as (first port | CONTIGUOUS, len) and skip the indirection.
            let run = &b.flat[start as usize..];
            let candidates =
                if len > 0 && run.windows(2).all(|w| w[1] == w[0] + 1) && run[0] < CONTIGUOUS {
                    let first = run[0];
                    b.flat.truncate(start as usize);
                    (first | CONTIGUOUS, len)
                } else {
                    (start, len)
                };
            row[s as usize] = pack(&mut b.spans, candidates);
        }
    }
    b
}

/// The entry for candidates (start, count): packed when they are a short run of
/// consecutive ports (or none), else an index into `spans`, where they are kept.
pub(super) fn pack(spans: &mut Vec<(u32, u32)>, (start, len): (u32, u32)) -> u32 {
    let port = start & !CONTIGUOUS;
    if len == 0 {
        PACKED
    } else if start & CONTIGUOUS != 0 && port <= PACKED_PORT_MASK && len <= PACKED_MAX_LEN {
        PACKED | (len << PACKED_PORT_BITS) | port
    } else {
        spans.push((start, len));
        (spans.len() - 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A random connected switch graph of `n` switches: a random tree plus `extra`
    /// random links (parallel links and cycles), ports numbered per link end in a
    /// shuffled order so that many candidate sets are not runs.
    fn graph(n: usize, extra: usize, seed: u64) -> SwitchGraph {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut links: Vec<(u32, u32)> = (1..n)
            .map(|i| (i as u32, rng.gen_range(0..i) as u32))
            .collect();
        for _ in 0..extra {
            let (a, b) = (rng.gen_range(0..n) as u32, rng.gen_range(0..n) as u32);
            if a != b {
                links.push((a, b));
            }
        }
        let mut ends: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut next_port = 0u32;
        for &(a, b) in &links {
            // Ports of one link end far apart when the link index is odd.
            let jump = if next_port % 2 == 1 { 1000 } else { 0 };
            ends[a as usize].push((next_port + jump, b));
            ends[b as usize].push((next_port + 1, a));
            next_port += 2;
        }
        let mut g = SwitchGraph {
            adj_start: Vec::new(),
            adj: Vec::new(),
        };
        for mut e in ends {
            e.sort_unstable();
            g.adj_start.push(g.adj.len() as u32);
            g.adj.extend(e);
        }
        g.adj_start.push(g.adj.len() as u32);
        g
    }

    /// Hops from every switch to `root`.
    fn distances(g: &SwitchGraph, root: u32) -> Vec<u32> {
        let mut dist = vec![UNREACHED; g.switches()];
        dist[root as usize] = 0;
        let mut queue = VecDeque::from([root]);
        while let Some(s) = queue.pop_front() {
            for &(_, t) in g.links_of(s as usize) {
                if dist[t as usize] == UNREACHED {
                    dist[t as usize] = dist[s as usize] + 1;
                    queue.push_back(t);
                }
            }
        }
        dist
    }

    #[test]
    fn the_walks_give_the_same_table_on_any_number_of_threads() {
        for (n, extra, seed) in [(300, 500, 1), (130, 40, 2), (257, 900, 3)] {
            let g = graph(n, extra, seed);
            // Every third switch is an edge switch: several blocks, the last one short.
            let edges: Vec<u32> = (0..n as u32).step_by(3).collect();
            let build = |threads| {
                let mut ranges = vec![PACKED; n * edges.len()];
                let (mut spans, mut flat) = (Vec::new(), vec![7u32; 5]);
                walk_all(&g, &edges, threads, &mut ranges, &mut spans, &mut flat);
                (ranges, spans, flat)
            };
            let one = build(1);
            assert!(
                one.1.len() > 10,
                "the graph gives candidate sets that are not runs"
            );
            // Against the definition: at switch s, the ports to switches one hop
            // closer to the edge switch, in port order.
            let (ranges, spans, flat) = &one;
            for (j, &root) in edges.iter().enumerate() {
                let dist = distances(&g, root);
                for s in 0..n {
                    let want: Vec<u32> = (g.links_of(s).iter())
                        .filter(|&&(_, t)| s != root as usize && dist[t as usize] + 1 == dist[s])
                        .map(|&(p, _)| p)
                        .collect();
                    let v = ranges[s * edges.len() + j];
                    let (start, len) = if v & PACKED != 0 {
                        (
                            (v & PACKED_PORT_MASK) | CONTIGUOUS,
                            (v & !PACKED) >> PACKED_PORT_BITS,
                        )
                    } else {
                        spans[v as usize]
                    };
                    let got: Vec<u32> = (0..len)
                        .map(|k| match start & CONTIGUOUS {
                            0 => flat[(start + k) as usize],
                            _ => (start & !CONTIGUOUS) + k,
                        })
                        .collect();
                    assert_eq!(got, want, "switch {s} toward edge switch {root}");
                }
            }
            for threads in [2, 3, 16] {
                assert_eq!(build(threads), one, "{threads} threads, graph {seed}");
            }
        }
    }
}
