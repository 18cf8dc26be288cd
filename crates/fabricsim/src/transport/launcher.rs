//! Flow starts: arrivals in start-time order, start-after dependencies between flows
//! (collective steps), and job iterations that wait for the previous iteration.
//!
//! A flow starts when its start time has come and nothing it waits for is unfinished:
//! the launcher keeps the flows without predecessors sorted by start time, and for the
//! others a count of what each still waits for; a finished flow releases its
//! successors, and a finished job iteration releases the next one's first flows.
//! A dependency may carry a delay (a compute phase, [`crate::workload::TimedDep`]): its
//! release then waits in the launcher's timer heap, served by the `FlowArrivals` event.

use crate::cc::CongestionControl;
use crate::engine::Event;

use crate::sim::*;
use crate::units::Time;
use crate::workload::{JobSpec, TimedDep};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What decides when flows start.
#[derive(Clone, Debug, Default)]
pub(crate) struct FlowLauncher {
    /// Flows without predecessors, by start time.
    pub(crate) order: Vec<u32>,
    /// The next of `order` to start.
    pub(crate) next: usize,
    /// Start-after dependencies between flows.
    pub(crate) deps: Deps,
    /// Delayed releases `(time, sequence, flow)`, earliest first.
    pub(crate) timers: BinaryHeap<Reverse<(Time, u64, u32)>>,
    /// Releases pushed so far (ties at one time keep their order).
    pub(crate) timer_seq: u64,
    /// The time of the `FlowArrivals` event pending for the timers, if any.
    pub(crate) armed: Option<Time>,
}

/// Flow dependencies in compressed form: the flows that wait for flow `i` are
/// `after[off[i]..off[i+1]]`; `pending[i]` counts what flow `i` still waits for (its
/// unfinished predecessors, plus one while its job iteration has not started).
#[derive(Clone, Debug, Default)]
pub(crate) struct Deps {
    pub(crate) off: Vec<u32>,
    pub(crate) after: Vec<u32>,
    /// Delay of each `after` edge (0 for plain start-after edges).
    pub(crate) lag: Vec<Time>,
    /// Edges counted from a flow's start: `safter[soff[i]..soff[i+1]]` with `slag`
    /// (empty when there are none).
    pub(crate) soff: Vec<u32>,
    pub(crate) safter: Vec<u32>,
    pub(crate) slag: Vec<Time>,
    pub(crate) pending: Vec<u32>,
    /// Job of each flow, if it belongs to one.
    pub(crate) job: Vec<Option<u32>>,
    /// Jobs waiting for job `j`: `next_jobs[noff[j]..noff[j+1]]`.
    pub(crate) noff: Vec<u32>,
    pub(crate) next_jobs: Vec<u32>,
    /// Flows a job iteration's start releases (those with no predecessor inside it).
    pub(crate) root: Vec<bool>,
    /// The previous flow of each flow's queue pair, if any: a flow continues its queue
    /// pair's congestion-control state.
    pub(crate) prev_on_conn: Vec<Option<u32>>,
}

impl Deps {
    pub(crate) fn build(
        n: usize,
        plain: &[(u32, u32)],
        timed: &[TimedDep],
        jobs: &[JobSpec],
        conn: &[Option<u64>],
    ) -> Deps {
        // Plain edges first, then the timed ones counted from a finish, in given order.
        let edges: Vec<(u32, u32, Time)> = (plain.iter().map(|&(b, a)| (b, a, 0)))
            .chain(
                (timed.iter())
                    .filter(|t| !t.on_start)
                    .map(|t| (t.before, t.after, t.lag)),
            )
            .collect();
        let mut pending = vec![0u32; n];
        let (off, after, lag) = csr(n, &edges, &mut pending);
        let starts: Vec<(u32, u32, Time)> = (timed.iter())
            .filter(|t| t.on_start)
            .map(|t| (t.before, t.after, t.lag))
            .collect();
        let (soff, safter, slag) = if starts.is_empty() {
            Default::default()
        } else {
            csr(n, &starts, &mut pending)
        };
        let root: Vec<bool> = pending.iter().map(|&p| p == 0).collect();
        let mut job = vec![None; n];
        let mut ncount = vec![0u32; jobs.len() + 1];
        for (j, js) in jobs.iter().enumerate() {
            for f in js.first_flow..js.first_flow + js.n_flows {
                job[f as usize] = Some(j as u32);
                if js.after.is_some() && root[f as usize] {
                    pending[f as usize] += 1;
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
            pending,
            job,
            noff,
            next_jobs,
            root,
            prev_on_conn,
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

impl Nics {
    /// Flows whose start time has come, and delayed releases that are due.
    pub(crate) fn on_flow_arrivals(&mut self, ctx: &mut Ctx, fabric: &mut Fabric) {
        if self.launcher.armed == Some(ctx.now) {
            self.launcher.armed = None;
        }
        while let Some(&Reverse((t, _, f))) = self.launcher.timers.peek() {
            if t > ctx.now {
                break;
            }
            self.launcher.timers.pop();
            self.release(ctx, fabric, f);
        }
        while self.launcher.next < self.launcher.order.len() {
            let fid = self.launcher.order[self.launcher.next];
            let f = &mut self.flows[fid as usize];
            if f.spec.start > ctx.now {
                ctx.queue.push(f.spec.start, Event::FlowArrivals);
                break;
            }
            self.launcher.next += 1;
            self.start_flow(ctx, fabric, fid);
        }
        self.arm_timers(ctx);
    }

    /// Keeps a `FlowArrivals` event pending for the earliest delayed release.
    fn arm_timers(&mut self, ctx: &mut Ctx) {
        let l = &mut self.launcher;
        if let Some(&Reverse((t, _, _))) = l.timers.peek() {
            if l.armed.is_none_or(|a| t < a) {
                l.armed = Some(t);
                ctx.queue.push(t, Event::FlowArrivals);
            }
        }
    }

    /// One thing flow `f` waited for is done, `lag` ago counting from now: release it
    /// now (no lag) or when the lag has passed.
    fn release_after(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, f: u32, lag: Time) {
        if lag == 0 {
            self.release(ctx, fabric, f);
            return;
        }
        let l = &mut self.launcher;
        l.timer_seq += 1;
        l.timers.push(Reverse((ctx.now + lag, l.timer_seq, f)));
        self.arm_timers(ctx);
    }

    /// Starts flow `fid` now: its NIC begins sending it.
    pub(crate) fn start_flow(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, fid: u32) {
        let now = ctx.now;
        let prev = self.launcher.deps.prev_on_conn[fid as usize];
        if let Some(prev) = prev.filter(|&p| self.flows[p as usize].started) {
            // The same queue pair: its congestion state carries over.
            let cc = self.flows[prev as usize].cc.clone();
            self.flows[fid as usize].cc = cc;
        }
        let f = &mut self.flows[fid as usize];
        f.spec.start = now;
        f.started = true;
        f.next_send = now;
        f.cc.on_start(now);
        self.flows_started += 1;
        self.last_progress = now;
        let h = f.spec.src as usize;
        let flows = &mut self.flows;
        let slot = self.hosts[h]
            .active
            .push(fid, |f, s| flows[f as usize].rr_slot = s);
        self.flows[fid as usize].rr_slot = slot;
        let port = self.hosts[h].port;
        fabric.schedule_wake(ctx, port, now);
        // What waits for this flow's start (the next compute phase of its rank).
        let d = &self.launcher.deps;
        if !d.soff.is_empty() {
            let (a, b) = (
                d.soff[fid as usize] as usize,
                d.soff[fid as usize + 1] as usize,
            );
            for k in a..b {
                let (nxt, lag) = (self.launcher.deps.safter[k], self.launcher.deps.slag[k]);
                self.release_after(ctx, fabric, nxt, lag);
            }
        }
    }

    /// Flow `fid` was fully received: release what waited for it and account its job.
    pub(crate) fn on_flow_finished(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, fid: u32) {
        let now = ctx.now;
        let (a, b) = (
            self.launcher.deps.off[fid as usize] as usize,
            self.launcher.deps.off[fid as usize + 1] as usize,
        );
        for k in a..b {
            let (nxt, lag) = (self.launcher.deps.after[k], self.launcher.deps.lag[k]);
            self.release_after(ctx, fabric, nxt, lag);
        }
        let j = self.launcher.deps.job[fid as usize];
        let Some(j) = j else {
            return;
        };
        let job = &mut self.jobs[j as usize];
        job.left -= 1;
        if job.left > 0 {
            return;
        }
        job.finish = Some(now);
        let (a, b) = (
            self.launcher.deps.noff[j as usize] as usize,
            self.launcher.deps.noff[j as usize + 1] as usize,
        );
        for k in a..b {
            let nj = self.launcher.deps.next_jobs[k] as usize;
            self.jobs[nj].started = Some(now);
            let (f0, n) = (self.jobs[nj].spec.first_flow, self.jobs[nj].spec.n_flows);
            for f in f0..f0 + n {
                if self.launcher.deps.root[f as usize] {
                    self.release(ctx, fabric, f);
                }
            }
        }
    }

    /// One thing flow `f` waited for is done; start it if nothing else remains.
    pub(crate) fn release(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, f: u32) {
        let p = &mut self.launcher.deps.pending[f as usize];
        debug_assert!(*p > 0);
        *p -= 1;
        if *p == 0 {
            self.start_flow(ctx, fabric, f);
        }
    }
}
