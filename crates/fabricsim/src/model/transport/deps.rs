//! The launcher's dependency graph built from the workload: its edges in compressed
//! form per moment counted from (a node's end, its start, its last byte sent), what
//! each node waits for, job iterations and the jobs waiting for them, and each flow's
//! previous flow on its queue pair.

use super::launcher::{job_nodes, Deps};
use super::notify::Notify;
use crate::base::units::Time;
use crate::model::workload::{DepPoint, JobSpec, Node, TimedDep};

impl Deps {
    /// `notify(before, from, after)`: the notification latency an edge adds to its delay
    /// ([`Notify::latency`]).
    pub(crate) fn build(
        n: usize,
        n_phases: usize,
        plain: &[(u32, u32)],
        timed: &[TimedDep],
        jobs: &[JobSpec],
        conn: &[Option<u64>],
        notify: &Notify,
    ) -> Deps {
        let node = |v: Node| match v {
            Node::Flow(i) => i,
            Node::Phase(i) => n as u32 + i,
        };
        let of = |from: DepPoint| {
            (timed.iter())
                .filter(move |t| t.from == from)
                .map(move |t| {
                    let lag = t.lag + notify.latency(t.before, from, t.after);
                    (node(t.before), node(t.after), lag)
                })
        };
        let total = n + n_phases;
        // Plain edges first, then the timed ones counted from an end, in given order.
        let edges: Vec<(u32, u32, Time)> = (plain.iter().map(|&(b, a)| {
            let lag = notify.latency(Node::Flow(b), DepPoint::End, Node::Flow(a));
            (b, a, lag)
        }))
        .chain(of(DepPoint::End))
        .collect();
        let mut pending = vec![0u32; total];
        let (off, after, lag) = csr(total, &edges, &mut pending);
        let sparse = |from: DepPoint, pending: &mut [u32]| {
            let e: Vec<(u32, u32, Time)> = of(from).collect();
            if e.is_empty() {
                Default::default()
            } else {
                csr(total, &e, pending)
            }
        };
        let (soff, safter, slag) = sparse(DepPoint::Start, &mut pending);
        let (xoff, xafter, xlag) = sparse(DepPoint::Sent, &mut pending);
        let sent_released = if xoff.is_empty() {
            Vec::new()
        } else {
            vec![false; n]
        };
        let root: Vec<bool> = pending.iter().map(|&p| p == 0).collect();
        let mut job = vec![None; total];
        let mut ncount = vec![0u32; jobs.len() + 1];
        for (j, js) in jobs.iter().enumerate() {
            for v in job_nodes(n, js) {
                job[v as usize] = Some(j as u32);
                if js.after.is_some() && root[v as usize] {
                    pending[v as usize] += 1;
                }
            }
            if let Some(p) = js.after {
                ncount[p as usize] += 1;
            }
        }
        let mut noff = vec![0u32; jobs.len() + 1];
        for j in 0..jobs.len() {
            noff[j + 1] = noff[j] + ncount[j];
        }
        let mut nfill = noff.clone();
        let mut next_jobs = vec![0u32; noff[jobs.len()] as usize];
        for (j, js) in jobs.iter().enumerate() {
            if let Some(p) = js.after {
                next_jobs[nfill[p as usize] as usize] = j as u32;
                nfill[p as usize] += 1;
            }
        }
        let chain_lag = if notify.latency > 0 && jobs.iter().any(|js| js.after.is_some()) {
            (0..total as u32)
                .map(|v| notify.job_latency(n, v))
                .collect()
        } else {
            Vec::new()
        };
        let mut last: std::collections::HashMap<u64, u32> = Default::default();
        let mut prev_on_conn = vec![None; n];
        for (i, k) in conn.iter().enumerate() {
            if let Some(k) = k {
                if let Some(p) = last.insert(*k, i as u32) {
                    prev_on_conn[i] = Some(p);
                }
            }
        }
        Deps {
            off,
            after,
            lag,
            soff,
            safter,
            slag,
            xoff,
            xafter,
            xlag,
            sent_released,
            pending,
            job,
            noff,
            next_jobs,
            root,
            prev_on_conn,
            chain_lag,
        }
    }
}

/// Edges `(before, after, lag)` in compressed form by `before`: `(off, after, lag)`;
/// counts each edge in `pending[after]`.
fn csr(
    n: usize,
    edges: &[(u32, u32, Time)],
    pending: &mut [u32],
) -> (Vec<u32>, Vec<u32>, Vec<Time>) {
    let mut count = vec![0u32; n + 1];
    for &(b, a, _) in edges {
        count[b as usize] += 1;
        pending[a as usize] += 1;
    }
    let mut off = vec![0u32; n + 1];
    for i in 0..n {
        off[i + 1] = off[i] + count[i];
    }
    let mut fill = off.clone();
    let mut after = vec![0u32; edges.len()];
    let mut lag = vec![0; edges.len()];
    for &(b, a, l) in edges {
        after[fill[b as usize] as usize] = a;
        lag[fill[b as usize] as usize] = l;
        fill[b as usize] += 1;
    }
    (off, after, lag)
}
