//! Flow starts: arrivals in start-time order, start-after dependencies between flows
//! (collective steps), and job iterations that wait for the previous iteration.
//!
//! A flow starts when its start time has come and nothing it waits for is unfinished:
//! the launcher keeps the flows without predecessors sorted by start time, and for the
//! others a count of what each still waits for; a finished flow releases its
//! successors, and a finished job iteration (its flows received, its phases ended)
//! releases the next one's first flows and phases.
//! Compute phases ([`crate::model::workload::Phase`]: a rank's forward or backward pass) are
//! nodes of the same graph: a phase begins when what it waits for is done and ends its
//! duration later, releasing what waits for it. A dependency counts from a node's end,
//! its start, or (flows) the moment its last byte was first sent, and may carry a delay
//! ([`crate::model::workload::TimedDep`]). Delayed releases and phase ends wait in the
//! launcher's timer heap, served by the `FlowArrivals` event.

use crate::kernel::events::Event;
use crate::model::cc::CongestionControl;

use crate::base::units::Time;
use crate::kernel::ctx::*;
use crate::model::fabric::Fabric;
use crate::model::transport::*;
use crate::model::workload::trace::compile::Outage;
use crate::model::workload::{DepPoint, JobSpec, Phase};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What decides when flows start.
#[derive(Clone, Debug, Default)]
pub(crate) struct FlowLauncher {
    /// Flows without predecessors, by start time: one lane per shard (the flows whose
    /// sender it holds, [`crate::sim::shards`]), a single lane in a run on one.
    pub(crate) lanes: Vec<Lane>,
    /// Start-after dependencies between flows.
    pub(crate) deps: Deps,
    /// The shard of each host's NIC, in a run cut into shards (empty otherwise): a node
    /// of the graph is released in the shard that starts it ([`Self::owner`]).
    pub(crate) host_shard: Vec<u16>,
    /// Compute phases (node `n_flows + i` of the graph).
    pub(crate) phases: Vec<Phase>,
    /// When each phase began and ended.
    pub(crate) phase_times: Vec<(Option<Time>, Option<Time>)>,
    /// Phases not ended yet (the run is complete when they and the flows are done).
    /// A run cut into shards counts the ends in each shard's `Tally` instead and takes
    /// them off after the run.
    pub(crate) phases_left: usize,
    /// In a run cut into shards, per phase: a join that waits for nothing (it begins at
    /// its `not_before`, a time every host knows, and tells nobody), run by every shard
    /// for the nodes that shard starts, and accounted by shard 0 ([`JOIN_SHARD`]).
    /// Empty in a run on one thread.
    pub(crate) everywhere: Vec<bool>,
    /// In a run cut into shards whose dependencies between shards may be taken late
    /// (`Simulation::dependency_crossings`), per node: the latest time one of the things
    /// it waits for was done, when it begins once the last is (a late release may come
    /// after a later one of its shard's own). Empty otherwise.
    pub(crate) released_at: Vec<Time>,
    /// Ranks down for a while ([`Outage`]): their phases wait.
    pub(crate) outages: Vec<Outage>,
    /// Trace jobs that stop at a time: (their flows, their phases, when), each a range
    /// `[first, first + count)`.
    pub(crate) stops: Vec<StoppedJob>,
    /// Per phase, whether its end goes on the timeline (empty without one).
    pub(crate) on_timeline: Vec<bool>,
}

/// A trace job that stops: its flows and its phases (each `(first, count)`), and when.
pub(crate) type StoppedJob = ((u32, u32), (u32, u32), Time);

/// The shard that runs a join point (a phase without a host) of a run cut into shards:
/// whatever it waits for is handed to it, at least a crossing grid later (checked when
/// the run is cut).
pub(crate) const JOIN_SHARD: u32 = 0;

/// The flows one shard starts by their start times, and its timers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lane {
    /// Flows without predecessors, by start time.
    pub(crate) order: Vec<u32>,
    /// The next of `order` to start.
    pub(crate) next: usize,
    /// Delayed actions `(time, action)`, earliest first: releases of a node, phase
    /// begins and phase ends ([`Timer`]). Ties at one time go by the packed action, not
    /// by when they were set, so the order is the same whichever part of the fabric set
    /// them first (see [`crate::kernel::events`]).
    pub(crate) timers: BinaryHeap<Reverse<(Time, u32)>>,
    /// The time of the `FlowArrivals` event pending for the timers, if any.
    pub(crate) armed: Option<Time>,
}

/// A timer's action, packed in a `u32`: the kind in the top two bits, a node or phase
/// index below (indices are below 2^24, [`crate::base::ids::MAX_INDEX`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    /// One thing node `i` waited for is done.
    Release(u32),
    /// Phase `i` may begin (its `not_before` has come).
    Begin(u32),
    /// Phase `i` ends.
    End(u32),
    /// Node `i` of a stopped job was skipped: release what waits for it.
    Skip(u32),
}

impl Timer {
    fn pack(self) -> u32 {
        match self {
            Timer::Release(i) => i,
            Timer::Begin(i) => 1 << 30 | i,
            Timer::End(i) => 2 << 30 | i,
            Timer::Skip(i) => 3 << 30 | i,
        }
    }
    fn unpack(v: u32) -> Timer {
        let i = v & ((1 << 30) - 1);
        match v >> 30 {
            0 => Timer::Release(i),
            1 => Timer::Begin(i),
            2 => Timer::End(i),
            _ => Timer::Skip(i),
        }
    }
}

/// The dependency graph in compressed form. Nodes are the flows (`0..n`) and then the
/// phases (`n + i`). The nodes that wait for node `i`'s end are `after[off[i]..off[i+1]]`
/// (with their delays in `lag`); those waiting for its start and (flows) for its last
/// byte sent are kept the same way (`soff`/`safter`/`slag`, `xoff`/`xafter`/`xlag`,
/// empty when there are none). `pending[i]` counts what node `i` still waits for (its
/// predecessors, plus one while its job iteration has not started).
#[derive(Clone, Debug, Default)]
pub(crate) struct Deps {
    pub(crate) off: Vec<u32>,
    pub(crate) after: Vec<u32>,
    /// Delay of each `after` edge (0 for plain start-after edges).
    pub(crate) lag: Vec<Time>,
    pub(crate) soff: Vec<u32>,
    pub(crate) safter: Vec<u32>,
    pub(crate) slag: Vec<Time>,
    pub(crate) xoff: Vec<u32>,
    pub(crate) xafter: Vec<u32>,
    pub(crate) xlag: Vec<Time>,
    /// Flows whose "sent" successors were released (each is released once, though a
    /// go-back-N rewind may send the last byte again).
    pub(crate) sent_released: Vec<bool>,
    pub(crate) pending: Vec<u32>,
    /// Job of each node (flows, then phases), if it belongs to one.
    pub(crate) job: Vec<Option<u32>>,
    /// Jobs waiting for job `j`: `next_jobs[noff[j]..noff[j+1]]`.
    pub(crate) noff: Vec<u32>,
    pub(crate) next_jobs: Vec<u32>,
    /// Nodes a job iteration's start releases (those with no predecessor inside it).
    pub(crate) root: Vec<bool>,
    /// The previous flow of each flow's queue pair, if any: a flow continues its queue
    /// pair's congestion-control state.
    pub(crate) prev_on_conn: Vec<Option<u32>>,
    /// Per node, the notification latency before it hears that the job iteration it
    /// waits for has finished ([`super::notify::Notify::job_latency`]); empty when there is none.
    pub(crate) chain_lag: Vec<Time>,
}

impl FlowLauncher {
    /// Heap bytes of the launcher: start order, dependency graph, timers, phases (by
    /// capacity).
    pub(crate) fn heap_bytes(&self) -> u64 {
        use crate::base::memory::vec_bytes;
        (self.lanes.iter())
            .map(|l| {
                vec_bytes(&l.order)
                    + (l.timers.capacity() * std::mem::size_of::<Reverse<(Time, u32)>>()) as u64
            })
            .sum::<u64>()
            + self.deps.heap_bytes()
            + vec_bytes(&self.host_shard)
            + vec_bytes(&self.phases)
            + vec_bytes(&self.phase_times)
            + vec_bytes(&self.released_at)
    }
}

impl Deps {
    /// Heap bytes of the dependency graph (by capacity).
    pub(crate) fn heap_bytes(&self) -> u64 {
        use crate::base::memory::vec_bytes;
        vec_bytes(&self.off)
            + vec_bytes(&self.after)
            + vec_bytes(&self.lag)
            + vec_bytes(&self.soff)
            + vec_bytes(&self.safter)
            + vec_bytes(&self.slag)
            + vec_bytes(&self.xoff)
            + vec_bytes(&self.xafter)
            + vec_bytes(&self.xlag)
            + vec_bytes(&self.sent_released)
            + vec_bytes(&self.pending)
            + vec_bytes(&self.job)
            + vec_bytes(&self.noff)
            + vec_bytes(&self.next_jobs)
            + vec_bytes(&self.root)
            + vec_bytes(&self.prev_on_conn)
    }
}

/// The graph nodes of job iteration `js` in a graph of `n` flows: its flows, then its
/// phases.
pub(super) fn job_nodes(n: usize, js: &JobSpec) -> impl Iterator<Item = u32> {
    let phases = n as u32 + js.first_phase;
    (js.first_flow..js.first_flow + js.n_flows).chain(phases..phases + js.n_phases)
}

impl Deps {
    /// The nodes waiting for `node`, with the delay and the moment of `node` each counts
    /// from.
    fn successors(&self, node: u32) -> impl Iterator<Item = (u32, Time, DepPoint)> + '_ {
        let lists = [
            (&self.off, &self.after, &self.lag, DepPoint::End),
            (&self.soff, &self.safter, &self.slag, DepPoint::Start),
            (&self.xoff, &self.xafter, &self.xlag, DepPoint::Sent),
        ];
        lists.into_iter().flat_map(move |(off, after, lag, point)| {
            let range = if off.is_empty() {
                0..0
            } else {
                off[node as usize] as usize..off[node as usize + 1] as usize
            };
            range.map(move |k| (after[k], lag[k], point))
        })
    }

    /// The longest path through job iteration `js`'s own graph (a graph of `n` flows;
    /// edges from other iterations left out) when flow `f` takes `flow_time(f)` from its
    /// start to its end and phase `i` takes `phase_time(i)`: the iteration's duration
    /// when nothing else delays it. `Sent` edges count from the flow's start and phases'
    /// `not_before` is ignored, so the result stays a lower bound.
    pub(crate) fn critical_path(
        &self,
        n: usize,
        js: &JobSpec,
        flow_time: impl Fn(u32) -> Time,
        phase_time: impl Fn(u32) -> Time,
    ) -> Time {
        let nf = js.n_flows as usize;
        let first_phase = n as u32 + js.first_phase;
        let local = |v: u32| -> Option<usize> {
            if (js.first_flow..js.first_flow + js.n_flows).contains(&v) {
                Some((v - js.first_flow) as usize)
            } else if (first_phase..first_phase + js.n_phases).contains(&v) {
                Some(nf + (v - first_phase) as usize)
            } else {
                None
            }
        };
        let nodes: Vec<u32> = job_nodes(n, js).collect();
        let mut indeg = vec![0u32; nodes.len()];
        for &v in &nodes {
            for (a, _, _) in self.successors(v) {
                if let Some(i) = local(a) {
                    indeg[i] += 1;
                }
            }
        }
        let mut begin = vec![0; nodes.len()];
        let mut ready: Vec<usize> = (0..nodes.len()).filter(|&i| indeg[i] == 0).collect();
        let mut longest = 0;
        while let Some(i) = ready.pop() {
            let v = nodes[i];
            let end = begin[i]
                + if i < nf {
                    flow_time(v)
                } else {
                    phase_time(v - n as u32)
                };
            longest = longest.max(end);
            for (a, lag, point) in self.successors(v) {
                let Some(j) = local(a) else { continue };
                let at = match point {
                    DepPoint::End => end,
                    DepPoint::Start | DepPoint::Sent => begin[i],
                } + lag;
                begin[j] = begin[j].max(at);
                indeg[j] -= 1;
                if indeg[j] == 0 {
                    ready.push(j);
                }
            }
        }
        longest
    }
}

impl Nics {
    /// Flows whose start time has come, and timers that are due.
    pub(crate) fn on_flow_arrivals(&mut self, ctx: &mut Ctx, fabric: &mut Fabric) {
        let lane = ctx.shard as usize;
        if self.launcher.lanes[lane].armed == Some(ctx.now) {
            self.launcher.lanes[lane].armed = None;
        }
        while let Some(&Reverse((t, v))) = self.launcher.lanes[lane].timers.peek() {
            if t > ctx.now {
                break;
            }
            self.launcher.lanes[lane].timers.pop();
            self.act(ctx, fabric, Timer::unpack(v));
        }
        while self.launcher.lanes[lane].next < self.launcher.lanes[lane].order.len() {
            let fid = self.launcher.lanes[lane].order[self.launcher.lanes[lane].next];
            let f = &mut self.flows[fid as usize];
            if f.spec.start > ctx.now {
                ctx.queue.push(f.spec.start, Event::FlowArrivals);
                break;
            }
            self.launcher.lanes[lane].next += 1;
            self.start_flow(ctx, fabric, fid);
        }
        self.arm_timers(ctx);
    }

    /// Keeps a `FlowArrivals` event pending for the earliest timer (of `ctx`'s shard).
    pub(crate) fn arm_timers(&mut self, ctx: &mut Ctx) {
        let l = &mut self.launcher.lanes[ctx.shard as usize];
        if let Some(&Reverse((t, _))) = l.timers.peek() {
            if l.armed.is_none_or(|a| t < a) {
                l.armed = Some(t);
                ctx.queue.push(t, Event::FlowArrivals);
            }
        }
    }

    /// What a timer does when it is due.
    fn act(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, what: Timer) {
        match what {
            Timer::Release(node) => self.release(ctx, fabric, node),
            Timer::Begin(i) => self.begin_phase(ctx, fabric, i),
            Timer::End(i) => self.end_phase(ctx, fabric, i),
            Timer::Skip(v) => {
                for point in [DepPoint::Start, DepPoint::Sent, DepPoint::End] {
                    self.release_list(ctx, fabric, v, point);
                }
            }
        }
    }

    /// Sets a timer for `at` (in `ctx`'s shard).
    fn push_timer(&mut self, ctx: &mut Ctx, at: Time, what: Timer) {
        let l = &mut self.launcher.lanes[ctx.shard as usize];
        l.timers.push(Reverse((at, what.pack())));
        self.arm_timers(ctx);
    }

    /// Sets a timer for `at`; while a late release is taken, one due before the window
    /// just run ended acts at once, as of its time ([`Self::take_release`]).
    pub(super) fn set_timer(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, at: Time, what: Timer) {
        if ctx.late && at < ctx.window_end {
            self.act_as_of(ctx, fabric, at, what);
        } else {
            self.push_timer(ctx, at, what);
        }
    }

    /// Node `v` is released at `at` (now or later): by a timer of the shard that starts
    /// it, which, if it is another, gets the release at the next barrier.
    fn release_at(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, at: Time, v: u32) {
        let to = self.owner(v, ctx.shard);
        if to == ctx.shard {
            self.set_timer(ctx, fabric, at, Timer::Release(v));
        } else if ctx.late {
            ctx.late_releases.push((to, at, v));
        } else {
            ctx.hand_off_release(to, at, v);
        }
    }

    /// A release of node `v` for `at` handed over from another shard (or decided
    /// between windows) joins the timers of `ctx`'s shard, or, when `at` is before the
    /// end of the window the shard has just run, is taken late, now, as of `at`. What a
    /// late release sets off cannot act before the window's end, or in a way that
    /// depends on when it is taken (the cut's check, `Simulation::dependency_crossings`,
    /// admits only such dependencies between shards): counts of what a node waits for,
    /// the latest time of its releases, a phase's begin and end times and its end timer,
    /// the nodes done of a job iteration, further such releases. So the state after it
    /// is the state the serial engine reaches, whatever order late releases are taken in.
    pub(crate) fn take_release(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, at: Time, v: u32) {
        if at < ctx.window_end {
            self.act_as_of(ctx, fabric, at, Timer::Release(v));
        } else {
            self.push_timer(ctx, at, Timer::Release(v));
        }
    }

    /// Acts `what` late, as of `at` (before the end of the window the shard has run).
    #[cold]
    fn act_as_of(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, at: Time, what: Timer) {
        let (now, late) = (ctx.now, ctx.late);
        ctx.now = at;
        ctx.late = true;
        self.act(ctx, fabric, what);
        ctx.now = now;
        ctx.late = late;
    }

    /// The shard that starts node `v` (its flow's sender; a phase's host; a join's
    /// [`JOIN_SHARD`]), `here` in a run on one shard.
    pub(crate) fn owner(&self, v: u32, here: u32) -> u32 {
        let hs = &self.launcher.host_shard;
        if hs.is_empty() {
            return here;
        }
        let n = self.flows.len() as u32;
        let host = if v < n {
            Some(self.flows[v as usize].spec.src)
        } else {
            self.launcher.phases[(v - n) as usize].host
        };
        host.map_or(JOIN_SHARD, |h| hs[h as usize] as u32)
    }

    /// True when phase `i` runs in every shard ([`FlowLauncher::everywhere`]).
    #[inline]
    fn everywhere(&self, i: u32) -> bool {
        self.launcher.everywhere.get(i as usize) == Some(&true)
    }

    /// Releases the successors `list[off[node]..off[node + 1]]` (with their delays); of
    /// a join every shard runs, those that `ctx`'s shard starts.
    fn release_list(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, node: u32, point: DepPoint) {
        let n = self.flows.len() as u32;
        let only_own = node >= n && self.everywhere(node - n);
        let d = &self.launcher.deps;
        let off = match point {
            DepPoint::End => &d.off,
            DepPoint::Start => &d.soff,
            DepPoint::Sent => &d.xoff,
        };
        if off.is_empty() {
            return;
        }
        let (a, b) = (off[node as usize] as usize, off[node as usize + 1] as usize);
        for k in a..b {
            let d = &self.launcher.deps;
            let (nxt, lag) = match point {
                DepPoint::End => (d.after[k], d.lag[k]),
                DepPoint::Start => (d.safter[k], d.slag[k]),
                DepPoint::Sent => (d.xafter[k], d.xlag[k]),
            };
            if only_own && self.owner(nxt, ctx.shard) != ctx.shard {
                continue;
            }
            if lag == 0 && self.owner(nxt, ctx.shard) == ctx.shard {
                self.release(ctx, fabric, nxt);
            } else {
                self.release_at(ctx, fabric, ctx.now + lag, nxt);
            }
        }
    }

    /// Starts flow `fid` now: its NIC begins sending it.
    pub(crate) fn start_flow(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, fid: u32) {
        assert!(
            !ctx.late,
            "flow {fid} would start in its shard's past: the cut admitted a dependency \
             between shards that it must not (dependency_crossings)"
        );
        let now = ctx.now;
        if let Some(eng) = self.engines.as_mut() {
            // A NIC keeps so many messages in flight; the next waits for a place (it was
            // posted now: its FCT counts from here).
            let h = self.flows[fid as usize].spec.src;
            if self.hosts[h as usize].active.len() >= eng.capacity() {
                let f = &mut self.flows[fid as usize];
                f.spec.start = now;
                f.started = true;
                ctx.tally.flows_started += 1;
                eng.waiting[h as usize].push_back(fid);
                return;
            }
        }
        self.begin_flow(ctx, fabric, fid, now);
    }

    /// Flow `fid`, posted at `posted`, starts sending now.
    pub(crate) fn begin_flow(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        fid: u32,
        posted: Time,
    ) {
        let now = ctx.now;
        let prev = self.launcher.deps.prev_on_conn[fid as usize];
        if let Some(prev) = prev.filter(|&p| self.flows[p as usize].started) {
            // The same queue pair: its congestion state carries over.
            let cc = self.flows[prev as usize].cc.clone();
            self.flows[fid as usize].cc = cc;
        }
        let f = &mut self.flows[fid as usize];
        if !f.started {
            ctx.tally.flows_started += 1;
        }
        f.spec.start = posted;
        f.started = true;
        // A message engine sets the message up before its first packet.
        f.next_send = match self.engines.as_mut() {
            Some(eng) => eng.set_up(f.spec.src, f.spec.size, now),
            None => now,
        };
        f.cc.on_start(now);
        ctx.tally.last_progress = now;
        let h = f.spec.src as usize;
        let flows = &mut self.flows;
        let slot = self.hosts[h]
            .active
            .push(fid, |f, s| flows[f as usize].rr_slot = s);
        self.flows[fid as usize].rr_slot = slot;
        self.wake_nic(ctx, fabric, h as u32, now);
        // What waits for this flow's start.
        self.release_list(ctx, fabric, fid, DepPoint::Start);
    }

    /// Flow `fid` put its last byte on the wire: the next message of its queue pair may
    /// go (released once per flow).
    #[inline]
    pub(crate) fn on_all_sent(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, fid: u32) {
        let d = &mut self.launcher.deps;
        if d.sent_released.is_empty() || d.sent_released[fid as usize] {
            return;
        }
        d.sent_released[fid as usize] = true;
        self.release_list(ctx, fabric, fid, DepPoint::Sent);
    }

    /// Phase `i` may begin (what it waited for is done): it begins now, or at its
    /// `not_before` if that is later.
    fn begin_phase(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, i: u32) {
        let p = self.launcher.phases[i as usize];
        if p.not_before > ctx.now {
            self.set_timer(ctx, fabric, p.not_before, Timer::Begin(i));
            return;
        }
        let mut duration = p.duration;
        if !self.launcher.outages.is_empty() {
            if let Some(o) =
                (self.launcher.outages.iter()).find(|o| Some(o.host) == p.host && ctx.now < o.until)
            {
                if ctx.now >= o.at {
                    // The GPU is down: the phase begins when it is back.
                    self.set_timer(ctx, fabric, o.until, Timer::Begin(i));
                    return;
                }
                if ctx.now + duration > o.at {
                    // It fails mid-phase: the phase resumes when it is back.
                    duration += o.until - o.at;
                }
            }
        }
        // A join every shard runs is accounted once, by its shard.
        let lead = !self.everywhere(i) || ctx.shard == JOIN_SHARD;
        if lead {
            self.launcher.phase_times[i as usize].0 = Some(ctx.now);
        }
        let node = self.flows.len() as u32 + i;
        self.release_list(ctx, fabric, node, DepPoint::Start);
        self.set_timer(ctx, fabric, ctx.now + duration, Timer::End(i));
    }

    /// Phase `i` ends: release what waited for it.
    fn end_phase(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, i: u32) {
        let node = self.flows.len() as u32 + i;
        self.release_list(ctx, fabric, node, DepPoint::End);
        if self.everywhere(i) && ctx.shard != JOIN_SHARD {
            return;
        }
        self.launcher.phase_times[i as usize].1 = Some(ctx.now);
        if self.launcher.on_timeline.get(i as usize) == Some(&true) {
            ctx.spans_ended.push((ctx.now, i));
        }
        if self.launcher.host_shard.is_empty() {
            self.launcher.phases_left -= 1;
        } else {
            // Shards end phases side by side: each counts its own.
            ctx.tally.phases_ended += 1;
            // (A late end may come after later ones of the shard's own.)
            ctx.tally.last_phase_end = ctx.tally.last_phase_end.max(ctx.now);
        }
        self.job_node_done(ctx, fabric, node);
    }

    /// Phases with nothing to wait for: they begin at their `not_before`, by a timer of
    /// the shard that runs them (`ctxs[shard]`; one context in a run on one thread), or
    /// of every shard for a join every shard runs.
    pub(crate) fn schedule_root_phases(&mut self, ctxs: &mut [Ctx]) {
        let n = self.flows.len();
        for i in 0..self.launcher.phases.len() {
            if self.launcher.deps.pending[n + i] == 0 {
                let t = self.launcher.phases[i].not_before;
                let owner = self.owner((n + i) as u32, 0) as usize;
                for ctx in ctxs.iter_mut() {
                    if self.everywhere(i as u32) || ctx.shard as usize == owner {
                        self.push_timer(ctx, t, Timer::Begin(i as u32));
                    }
                }
            }
        }
    }

    /// Flow `fid` was fully received: release what waited for it and account its job.
    pub(crate) fn on_flow_finished(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, fid: u32) {
        self.release_list(ctx, fabric, fid, DepPoint::End);
        self.job_node_done(ctx, fabric, fid);
    }

    /// Node `v` (a flow or a phase) is done: account its job iteration, and when that
    /// is complete start the iterations waiting for it. In a run cut into shards the
    /// iterations are accounted between windows ([`crate::sim::shards`]): the shard
    /// logs the node.
    pub(super) fn job_node_done(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, v: u32) {
        if self.launcher.deps.job[v as usize].is_none() {
            return;
        }
        if !self.launcher.host_shard.is_empty() {
            ctx.jobs_done.push((ctx.now, v));
            return;
        }
        let now = ctx.now;
        for (v, at) in self.account_job_node(now, v) {
            if at > now {
                self.push_timer(ctx, at, Timer::Release(v));
            } else {
                self.release(ctx, fabric, v);
            }
        }
    }

    /// Node `v` of a job iteration was done at `at`: counts it, and when it was the
    /// iteration's last, starts the iterations waiting for it. Returns their first
    /// nodes with when to release them (after their notification latencies). The
    /// iteration finishes when its latest node was done, whatever order they are
    /// accounted in.
    pub(crate) fn account_job_node(&mut self, at: Time, v: u32) -> Vec<(u32, Time)> {
        let Some(j) = self.launcher.deps.job[v as usize] else {
            return Vec::new();
        };
        let job = &mut self.jobs[j as usize];
        job.left -= 1;
        job.last_done = job.last_done.max(at);
        if job.left > 0 {
            return Vec::new();
        }
        let now = job.last_done;
        job.finish = Some(now);
        let (a, b) = (
            self.launcher.deps.noff[j as usize] as usize,
            self.launcher.deps.noff[j as usize + 1] as usize,
        );
        let mut out = Vec::new();
        for k in a..b {
            let nj = self.launcher.deps.next_jobs[k] as usize;
            self.jobs[nj].started = Some(now);
            let d = &self.launcher.deps;
            out.extend(
                job_nodes(self.flows.len(), &self.jobs[nj].spec)
                    .filter(|&v| d.root[v as usize])
                    .map(|v| (v, now + d.chain_lag.get(v as usize).copied().unwrap_or(0))),
            );
        }
        out
    }

    /// One thing node `v` waited for is done; start the flow or begin the phase if
    /// nothing else remains.
    pub(crate) fn release(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, v: u32) {
        let p = &mut self.launcher.deps.pending[v as usize];
        debug_assert!(*p > 0);
        *p -= 1;
        let left = *p;
        if let Some(r) = self.launcher.released_at.get_mut(v as usize) {
            *r = (*r).max(ctx.now);
            if left == 0 && ctx.late {
                // It begins when the last thing it waited for was done.
                ctx.now = *r;
            }
        }
        if left == 0 {
            let n = self.flows.len() as u32;
            if !self.launcher.stops.is_empty() && self.stopped(v, ctx.now) {
                self.skip(ctx, fabric, v);
            } else if v < n {
                self.start_flow(ctx, fabric, v);
            } else {
                self.begin_phase(ctx, fabric, v - n);
            }
        }
    }
}
