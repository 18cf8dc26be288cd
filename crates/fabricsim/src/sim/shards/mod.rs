//! The parallel engine: one run cut into shards (`partition.rs`), each with
//! its own event queue, packet arena, counters and tallies (its own [`Ctx`]), run in
//! windows of simulated time on one thread each.
//!
//! **Ownership.** A shard owns its nodes: their ports (queues, pause state, the frame
//! being sent), the switches' buffers and generators, the hosts' NICs and the halves of
//! the flows they send or receive, and the links that arrive at its nodes (their rings of
//! frames in flight). A handler touches only what the shard running it owns, plus
//! constants (routing tables, delays, switch salts). The one thing that crosses is a
//! frame put on a cut link: the sender hands it over ([`Ctx::hand_off`]: the frame's
//! slot is freed, the packet travels by value), and the receiving shard puts it on the
//! link's ring at the next barrier, allocating it in its own arena.
//!
//! **Synchronisation.** Conservative, in windows with a barrier: every shard runs the
//! events of one cell `[kG, (k+1)G)` of the crossing grid (`G` = the least delay of any
//! cable that has one, [`super::partition::crossing_grid`], never more than the cut's lookahead),
//! then all stop; frames handed over are delivered; the run's checks (completion, stall,
//! `max_time`, the caller's pause time) are made on the summed tallies; the next window
//! is the cell of the earliest pending event. Where the cut crosses slower cables than
//! the grid (campuses cut at their long-haul links), a window spans several cells
//! (`Shards::span`), but no further than the cell in which the run could first
//! complete (`Simulation::completion_bound`), so that it ends where the serial run does. A frame sent in a window arrives at least
//! `G` later, so in a later window: no shard ever receives anything in its past.
//! Null messages were the alternative: with one cut-cable delay for every pair of shards
//! of a fat tree (every pod talks to every core), windows cost the same barriers without
//! a protocol per pair.
//!
//! **Why the result does not depend on the thread count.** Events are ordered by (time,
//! kind, component) with no insertion counter (`crate::kernel::events`), and no handler touches
//! another shard's state in the same window. So each shard runs its own events in the
//! order the one-thread run would give them, and a frame handed over reaches its ring
//! before its arrival, with the same event key as when the sender puts it there itself.
//! The run ends at the end of a grid cell in both engines (`event_loop.rs`), the only
//! place where a barrier could otherwise show. What is summed (counters, tallies) is
//! summed exactly. The arena's peak is the one figure that is not the same: it is the sum
//! of the shards' peaks (`speed.peak_packets`), which is no bound either way: the peaks
//! may fall at different times (more), and a frame handed over is in no arena until the
//! barrier (less: a window across a campus's long-haul links holds many).
//!
//! **What runs sharded.** Besides frames, a shard hands over what else crosses the cut,
//! all delivered at the barrier and all at least a grid cell ahead ([`Outbox`]):
//! - credit returns to a port in another shard ([`Ctx::hand_off_credit`]; the grid
//!   counts return delays);
//! - releases of dependency-graph nodes another shard starts ([`Ctx::hand_off_release`]),
//!   after the notification latency (`[transport] notify_latency`, applied by the serial
//!   engine alike) plus the edge's own delay. One due before the end of the window the
//!   receiving shard has run is taken late, as of its time (`FlowLauncher::take_release`),
//!   which is exact for what acts only later (a compute phase's end, a join's count):
//!   the cut admits an edge whose delay plus the reach of what it releases is at least
//!   the grid (`Simulation::phase_reach`), and falls back, saying what to set, where a
//!   flow would start sooner;
//! - with a frame, its INT records and its PKTC container tag (per-slot tables of the
//!   shard's arena).
//!
//! Job iterations are accounted between windows, in time order ([`Simulation`]'s
//! `settle_jobs`); per-shard counters (drops per flow, GSE statistics) are summed after
//! the run. So PFC, credit flow control, lossy fabrics, ECN, ECMP, spraying, table and
//! adaptive routing, every congestion control (HPCC's INT included), GSE (PKTC, DGSQ,
//! reordering), long haul with DR switches (either trigger; cut at the DCI), the
//! message transport, dual-rail NICs, flow dependencies, collectives and their
//! iterations, and `[record]` queue and rate samples (taken between windows, on the whole
//! model, at their times: a window ends at each) run sharded, and so do faults: a window
//! ends at each step of the fault timeline, which the caller's thread takes between
//! windows on the whole model, each port's work in its shard's context, before any event
//! of that instant (as the serial engine's first-sorting `Fault` event). Compute phases
//! and training jobs run sharded: a phase in its host's shard, a join point in shard 0,
//! or, when it waits for nothing, in every shard for the nodes that shard starts
//! (`FlowLauncher::everywhere`). Packet capture runs sharded: each shard logs its own
//! ports' frames, merged by (time, interface, frame) when the run pauses or ends
//! (`Capture::merge_logs`). Hardware collectives run sharded: a rank's timers are
//! events keyed by the rank, run in its host's shard, and each shard's ranks keep their
//! own iteration records and packet counts, added up when the run pauses or ends
//! (`HwCollectives::merge_lanes`). Switches sending CNPs (`cc.dcqcn.cnp_from`) run in
//! their shards: each has its own generator and pacing table. What a cut may not split,
//! with a note saying why ([`Simulation::set_threads_per_run`]): a dependency between
//! shards that starts a flow sooner than the grid (set `[transport] notify_latency`);
//! the cut then halves its shards until one keeps it whole, or the run stays on one
//! thread. A fabric that does not fall apart below its top layer stays on one thread. Links that replay frames (LLR with bit
//! errors) are cut like any other: the sender draws each frame's fate a link delay
//! before its arrival and hands over only frames that got through (`faults/llr.rs`).
//!
//! **Livelock.** The serial guard's bound is checked between windows on the summed
//! counts, and each shard runs its window under an event budget (the bound over the
//! window plus the allowance): past it, it counts its next events for the diagnosis and
//! stops, so a livelock that stands time still cannot keep a window from ending.
//!
//! **Threads.** The shards share the model's tables (`Fabric`, `Nics`): each thread
//! writes only the entries its shard owns, which the partition makes disjoint, and reads
//! constants. Rust's borrow rules cannot see that split, so the threads reach the
//! tables through a raw pointer (`SharedModel`); the one-thread mode runs the same
//! windows through ordinary borrows, and the tests require both to give the serial
//! engine's bytes.

use crate::base::ids::{LinkId, PortId};
use crate::base::units::Time;
use crate::kernel::events::Event;
use crate::kernel::packet::{Desc, PacketArena};
use crate::model::fabric::flow_control::credit::CreditSignal;
use crate::model::fabric::roles::RoleStates;
use crate::model::fabric::telemetry::int::IntStack;
use crate::sim::partition::{cell_end, crossing_grid, partition, Partition};

use crate::sim::*;

/// Runs every shard's events before a time and delivers what they handed over.
type RunWindow<'a> = dyn FnMut(&mut [Ctx], &mut Fabric, &mut RoleStates, &mut Nics, Time) + 'a;

/// Cells a run of several-cell windows waits before it works out again a bound on its
/// completion that gave nothing the last time ([`Simulation::completion_bound`]).
const RETRY_CELLS: Time = 16;

/// How a run of windows stopped.
enum WindowsEnd {
    /// At the pause time, or halted.
    Paused,
    /// Stalled (diagnosed once the shards are gathered).
    Stalled,
    /// The run ended so.
    Ended(Outcome),
}

mod between;
mod cut;
pub use cut::machine_threads;
mod outbox;
mod threads;

pub(crate) use crate::kernel::ctx::Outbox;
use between::merge_flow_drops;
use outbox::{deliver, receive};
use threads::{Pool, SharedModel, Wait, EXIT, WAITS};

/// What the parallel engine did in a run cut into shards (`summary.json`'s
/// `speed.parallel`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ParallelWork {
    /// Shards the run was cut into.
    pub shards: usize,
    /// Threads they ran on.
    pub threads: usize,
    /// Windows run (barriers crossed).
    pub windows: u64,
    /// How far a window may reach (ns): whole cells of the crossing grid within the
    /// least time anything takes between shards.
    pub window_span_ns: f64,
    /// The cut's lookahead (ns): the least delay of a cable between shards.
    pub lookahead_ns: f64,
    /// Frames handed from one shard to another.
    pub handoffs: u64,
    /// Events on the run's critical path: over the windows, the most events any one
    /// shard ran in each, plus the events run between windows on the caller's thread
    /// (samples, fault steps, late releases). A count, so the same on any machine.
    pub critical_path_events: u64,
    /// Events over `critical_path_events`: how many times faster than one thread the
    /// run could go with a core for each shard, were every event equally costly and
    /// the barriers free. Measured on any machine, it bounds what more cores can give
    /// (the shards' balance window by window, not the machine's).
    pub parallelism: f64,
    /// Seconds the threads waited at the windows' barriers, on average over the threads
    /// (0 when the shards take turns on one): unlike the counts above, a timing, of what
    /// the shards' imbalance, the machine's other work and the caller's thread's work
    /// between windows cost.
    pub barrier_wait_seconds: f64,
    /// The longest any one thread waited.
    pub barrier_wait_seconds_max: f64,
    /// `barrier_wait_seconds` by where the threads waited: before a window (the workers
    /// for the caller's thread's work between windows), after their shards' events (for
    /// another thread's shards: their imbalance, or a core the machine's other work
    /// slowed), after taking the frames handed over.
    pub barrier_wait_by_barrier: [f64; 3],
}

/// A run cut into shards: the cut, and each shard's context once it runs.
pub(crate) struct Shards {
    /// The cut.
    pub(crate) partition: Partition,
    /// Threads to run the shards on (1: all shards in turn on the caller's thread).
    pub(crate) threads: usize,
    /// Each shard's context (empty until the run starts).
    ctxs: Vec<Ctx>,
    /// Windows run.
    pub(crate) windows: u64,
    /// Frames handed from one shard to another.
    pub(crate) handoffs: u64,
    /// Nanoseconds each thread waited at the windows' barriers, by barrier (`WAITS *
    /// thread + threads::Wait`; empty when the shards take turns on the caller's thread).
    pub(crate) waited: Vec<u64>,
    /// Events on the critical path so far ([`ParallelWork::critical_path_events`],
    /// less `between`).
    pub(crate) critical: u64,
    /// Each shard's events at the end of the last window (the start of the count of
    /// what it ran since, between windows and in the next).
    pub(crate) popped_at: Vec<u64>,
    /// The next sample (`[record]` queues and rates), taken between windows.
    next_sample: Option<Time>,
    /// When the last sample was taken.
    last_sample: Time,
    /// Events of the serial loop the caller's thread ran between windows (samples and
    /// fault steps).
    between: u64,
    /// The next step of the fault timeline (`FaultState::steps`), taken between
    /// windows.
    next_fault: usize,
    /// How far a window may reach, a whole number of grid cells: the least time
    /// anything takes to cross between shards (the cut's lookahead, the least
    /// notification between shards), rounded down to the grid. One cell on a fat tree
    /// (every cable alike), hundreds at a campus cut by its long-haul links.
    pub(crate) span: Time,
    /// A time before which the run cannot complete ([`Simulation::completion_bound`];
    /// 0: not yet known), and when to work it out again.
    done_bound: Time,
    bound_next: Time,
    /// Each host's line rate over all its ports, bit/s (for the bound).
    host_bps: Vec<u64>,
}

impl Shards {
    /// Heap bytes of the shards' arenas and outboxes (by capacity; event queues are not
    /// itemized, as the serial run's is not).
    pub(crate) fn heap_bytes(&self) -> u64 {
        (self.ctxs.iter())
            .map(|c| c.arena.heap_bytes() + c.outbox.iter().map(Outbox::heap_bytes).sum::<u64>())
            .sum()
    }
}

impl Simulation {
    /// The sharded counterpart of the event loop (`event_loop.rs`), with the same
    /// outcomes and the same stopping points.
    #[inline(never)]
    pub(crate) fn run_sharded(
        &mut self,
        until: Time,
        halt: Option<&std::sync::atomic::AtomicBool>,
        progress: &mut dyn FnMut(&Progress),
    ) -> Option<Outcome> {
        let mut sh = self.shards.take().expect("a sharded run");
        if !self.started {
            self.started = true;
            let (horizon, gap) = (self.calendar_horizon(), self.calendar_gap());
            self.fabric.route_ahead = self.routes_ahead();
            self.end_grid = crossing_grid(&self.fabric);
            self.livelock = crate::sim::livelock::Guard::new(self);
            self.decide_extras();
            let s = sh.partition.shards as usize;
            sh.ctxs = (0..s)
                .map(|i| {
                    let tags = self.ctx.arena.keeps_tags();
                    Ctx::for_shard(
                        i as u32,
                        s,
                        &self.ctx.params,
                        (horizon, gap),
                        self.prefetch,
                        tags,
                    )
                })
                .collect();
            if self.ctx.params.queue_interval.is_some() || self.ctx.params.rate_interval.is_some() {
                sh.next_sample = Some(0);
            }
            for (i, lane) in self.nics.launcher.lanes.iter().enumerate() {
                if let Some(&first) = lane.order.first() {
                    let t0 = self.nics.flows[first as usize].spec.start;
                    sh.ctxs[i].queue.push(t0, Event::FlowArrivals);
                }
            }
            self.nics.schedule_root_phases(&mut sh.ctxs);
            self.nics.schedule_collectives(&mut sh.ctxs);
        }
        let end = self.run_windows(&mut sh, until, halt, progress);
        if let WindowsEnd::Paused = end {
            merge_flow_drops(&mut sh.ctxs, &mut self.fabric);
            self.merge_shard_records();
            self.settle_between(&mut sh);
            self.ctx.now = until;
            self.shards = Some(sh);
            return None;
        }
        self.gather(&mut sh);
        self.shards = Some(sh);
        let outcome = match end {
            // Diagnosed on the gathered state.
            WindowsEnd::Stalled => Outcome::Stalled(crate::sim::stall::diagnose(self)),
            WindowsEnd::Ended(o) => o,
            WindowsEnd::Paused => unreachable!("returned above"),
        };
        self.finish_accounting();
        progress(&self.progress());
        Some(outcome)
    }

    /// Runs windows until the run ends, stalls, or reaches `until` or is halted: on the
    /// caller's thread, or with `threads - 1` more that live as long as this call.
    fn run_windows(
        &mut self,
        sh: &mut Shards,
        until: Time,
        halt: Option<&std::sync::atomic::AtomicBool>,
        progress: &mut dyn FnMut(&Progress),
    ) -> WindowsEnd {
        let build = LoopBuild {
            prefetch: self.prefetch,
            extras: self.extras.unwrap_or(true),
        };
        if sh.threads <= 1 {
            return self.window_loop(
                sh,
                until,
                halt,
                progress,
                &mut |ctxs, fabric, roles, nics, end| {
                    for c in ctxs.iter_mut() {
                        run_window(c, fabric, roles, nics, end, build);
                    }
                    deliver(ctxs, fabric, nics);
                },
            );
        }
        let threads = sh.threads;
        let pool = Pool::new(threads);
        let model = SharedModel {
            fabric: &mut self.fabric as *mut Fabric,
            roles: &mut self.roles as *mut RoleStates,
            nics: &mut self.nics as *mut Nics,
            ctxs: sh.ctxs.as_mut_ptr(),
            shards: sh.ctxs.len(),
        };
        std::thread::scope(|scope| {
            for j in 1..threads {
                let pool = &pool;
                scope.spawn(move || loop {
                    pool.wait(j, Wait::Start);
                    let end = pool.end.load(std::sync::atomic::Ordering::Acquire);
                    if end == EXIT {
                        break;
                    }
                    model.window(j, threads, end, build, pool);
                });
            }
            let end = self.window_loop(sh, until, halt, progress, &mut |_, _, _, _, end| {
                pool.end.store(end, std::sync::atomic::Ordering::Release);
                pool.wait(0, Wait::Start);
                model.window(0, threads, end, build, &pool);
                let failed = pool.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(p) = failed {
                    // A handler panicked (a bug): release the others, then fail as the
                    // serial engine would.
                    pool.end.store(EXIT, std::sync::atomic::Ordering::Release);
                    pool.barrier.wait();
                    std::panic::resume_unwind(p);
                }
            });
            pool.end.store(EXIT, std::sync::atomic::Ordering::Release);
            pool.barrier.wait();
            sh.waited.resize(WAITS * threads, 0);
            for (w, p) in sh.waited.iter_mut().zip(&pool.waited) {
                *w += p.load(std::sync::atomic::Ordering::Relaxed);
            }
            end
        })
    }

    /// The run's decisions between windows, the serial loop's made on the summed tallies
    /// at cell ends; `window(ctxs, fabric, roles, nics, end)` runs every shard's events before
    /// `end` and delivers what they handed over.
    fn window_loop(
        &mut self,
        sh: &mut Shards,
        until: Time,
        halt: Option<&std::sync::atomic::AtomicBool>,
        progress: &mut dyn FnMut(&Progress),
        window: &mut RunWindow,
    ) -> WindowsEnd {
        let total = self.nics.flows.len();
        let stop = self.ctx.params.max_time.min(until);
        let timeout = self.ctx.params.stall_timeout;
        let mut reported = 0u64;
        // The livelock guard over windows: a stretch of windows whose events outpace the
        // fabric's bound (time creeping on) trips it between windows; a shard whose
        // window alone holds more than the bound allows (time standing still) stops
        // itself (`run_window`). Either way the next events are counted by kind for
        // the diagnosis, as the serial loop does.
        let mut diagnosis: Option<crate::sim::livelock::Tally> = None;
        loop {
            self.settle_between(sh);
            let mut tally = Tally::default();
            for c in &sh.ctxs {
                tally.merge(&c.tally);
            }
            // The next event: a shard's, or the next sample (which the caller's thread
            // takes between windows, as the serial loop's last event of its instant).
            let next_event = sh.ctxs.iter().filter_map(|c| c.queue.peek_time()).min();
            let next_fault = (self.fabric.faults.as_ref())
                .and_then(|f| f.steps.get(sh.next_fault))
                .map(|&(t, _)| t);
            let next = [next_event, sh.next_sample, next_fault]
                .into_iter()
                .flatten()
                .min();
            let now = (sh.ctxs.iter().map(|c| c.now))
                .max()
                .unwrap_or(0)
                .max(sh.last_sample);
            let mut end = Time::MAX;
            if tally.flows_done == total && tally.phases_ended == self.nics.launcher.phases_left {
                // Done when the last flow or phase was (the serial loop's clock then).
                let last = tally.last_flow_done.max(tally.last_phase_end);
                let t_done = *self.nics.receivers_done_at.get_or_insert(last);
                // The serial loop's test: the cell of the last event is over.
                let cell_over = next.is_none_or(|t| t >= cell_end(self.end_grid, now));
                if (tally.acks_awaited() == 0 && cell_over)
                    || next.is_none_or(|t| t.saturating_sub(t_done) > timeout)
                {
                    self.ctx.now = now;
                    return WindowsEnd::Ended(Outcome::Completed);
                }
                end = end.min(t_done.saturating_add(timeout).saturating_add(1));
            }
            let Some(t) = next else {
                self.ctx.now = now;
                return WindowsEnd::Ended(Outcome::Starved);
            };
            if t > stop {
                if t > self.ctx.params.max_time {
                    self.ctx.now = self.ctx.params.max_time;
                    return WindowsEnd::Ended(Outcome::MaxTime);
                }
                return WindowsEnd::Paused;
            }
            if t.saturating_sub(tally.last_progress) > timeout
                && tally.flows_started > tally.flows_done
            {
                self.ctx.now = tally.last_progress + timeout;
                return WindowsEnd::Stalled;
            }
            let popped: u64 = sh.ctxs.iter().map(|c| c.queue.popped()).sum();
            if diagnosis.is_none() && self.livelock.check(now, popped + sh.between) {
                diagnosis = Some(Default::default());
            }
            if popped >= reported + (1 << 20) {
                reported = popped;
                let mut p = self.progress();
                p.now = now;
                p.events = popped;
                p.flows_done = tally.flows_done;
                progress(&p);
                if halt.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
                    return WindowsEnd::Paused;
                }
            }
            if next_fault == Some(t) {
                if let Some(e) = self.fault_between(sh, t, &mut diagnosis) {
                    return e;
                }
                continue;
            }
            if sh.next_sample == Some(t) && next_event.is_none_or(|e| e > t) {
                if let Some(e) = self.sample_between(sh, t, &tally, &mut diagnosis) {
                    return e;
                }
                continue;
            }
            // The window: from the cell of the next event as far as the span reaches
            // (and the run cannot complete), no further than the run may go, nor past
            // the next sample, nor up to the next fault step.
            let end = end
                .min(self.window_end(sh, t))
                .min(sh.next_sample.map_or(Time::MAX, |s| s.saturating_add(1)))
                .min(next_fault.unwrap_or(Time::MAX))
                .min(stop.saturating_add(1));
            if let Some(e) = self.run_one_window(sh, t, end, &tally, &mut diagnosis, window) {
                return e;
            }
        }
    }

    /// Runs every shard's events from `t` to before `end` (held to the stall time while
    /// flows are in flight), counting the critical path, under the livelock guard's
    /// budget; ends the run when a shard stopped itself past it.
    fn run_one_window(
        &mut self,
        sh: &mut Shards,
        t: Time,
        end: Time,
        tally: &Tally,
        diagnosis: &mut Option<crate::sim::livelock::Tally>,
        window: &mut RunWindow,
    ) -> Option<WindowsEnd> {
        let timeout = self.ctx.params.stall_timeout;
        // Up to the stall time, while flows are in flight (the stall is found at the
        // same event as in the serial loop); with none, nothing can stall, and a quiet
        // stretch longer than the timeout (compute, flows starting later) must not hold
        // the windows back.
        let end = if tally.flows_started > tally.flows_done {
            end.min(
                tally
                    .last_progress
                    .saturating_add(timeout)
                    .saturating_add(1),
            )
        } else {
            end
        };
        sh.windows += 1;
        let budget = if diagnosis.is_some() {
            0
        } else {
            self.livelock.budget(end.saturating_sub(t))
        };
        for c in &mut sh.ctxs {
            c.event_budget = budget;
            c.window_end = end;
        }
        sh.popped_at.resize(sh.ctxs.len(), 0);
        for (c, at) in sh.ctxs.iter().zip(&mut sh.popped_at) {
            // What a shard ran between windows (late releases) ran on this thread.
            sh.critical += c.queue.popped() - *at;
            *at = c.queue.popped();
        }
        window(
            &mut sh.ctxs,
            &mut self.fabric,
            &mut self.roles,
            &mut self.nics,
            end,
        );
        let mut most = 0;
        for (c, at) in sh.ctxs.iter().zip(&mut sh.popped_at) {
            most = most.max(c.queue.popped() - *at);
            *at = c.queue.popped();
        }
        sh.critical += most;
        if sh.ctxs.iter().any(|c| !c.past_budget.is_empty()) {
            let d = diagnosis.take().unwrap_or_default();
            return Some(WindowsEnd::Ended(self.sharded_livelock(sh, d)));
        }
        None
    }

    /// Where a window starting at the next event `t` may end: the end of `t`'s grid cell,
    /// or with a span of several cells, the span's end, but no later than the cell in
    /// which the run could first complete (the serial run stops at the end of the cell
    /// it completes in, and a window ends at a barrier where that is tested), nor a
    /// stall timeout after `t` (a flow starting in the window could stall in it).
    fn window_end(&self, sh: &mut Shards, t: Time) -> Time {
        let g = self.end_grid;
        let cell = cell_end(g, t);
        if sh.span <= g {
            return cell;
        }
        // Worked out again once the last bound is reached (it costs a pass over the
        // flows), but when that gave nothing new, only some cells later.
        if t >= sh.done_bound && t >= sh.bound_next {
            // Any bound is one on the same completion time: keep the greatest.
            sh.done_bound = sh.done_bound.max(self.completion_bound(sh, t));
            if sh.done_bound < cell {
                sh.bound_next = t.saturating_add(RETRY_CELLS * g);
            }
        }
        (cell + (sh.span - g))
            .min(cell_end(g, sh.done_bound.max(t)))
            .min(t.saturating_add(self.ctx.params.stall_timeout))
    }

    /// A time the run cannot complete before, as the state is between windows with `t`
    /// the next event: every flow's receiver must get the bytes its sender has not sent
    /// yet, which leave at the sender's line rate at the earliest from `t`, and its last
    /// byte, which between shards crosses a cable of at least the cut's lookahead after
    /// it was first sent, and back its last ACK, sent when the receiver finished; every
    /// compute phase must run its duration. (Other frames
    /// already sent may arrive at any time: they bound nothing. Hardware collectives are
    /// not bounded: their windows are one cell.)
    fn completion_bound(&self, sh: &mut Shards, t: Time) -> Time {
        if self.nics.hw.is_some() {
            return t;
        }
        if sh.host_bps.is_empty() {
            let f = &self.fabric;
            sh.host_bps = (self.nics.hosts.iter())
                .map(|h| {
                    let node = f.ports[h.port].node;
                    f.nodes[node.idx()]
                        .ports
                        .iter()
                        .map(|p| f.ports[p].rate.0)
                        .sum()
                })
                .collect();
        }
        let shard = &self.nics.launcher.host_shard;
        let mut bound = t;
        for f in self.nics.flows.iter().filter(|f| f.sender_done.is_none()) {
            if let Some(done) = f.finish {
                // The run waits for the last ACK, sent when the receiver finished.
                let (src, dst) = (f.spec.src as usize, f.spec.dst as usize);
                if shard[src] != shard[dst] {
                    bound = bound.max(done.saturating_add(sh.partition.lookahead));
                }
                continue;
            }
            let rest = f.spec.size.saturating_sub(f.high_sent);
            let (src, dst) = (f.spec.src as usize, f.spec.dst as usize);
            let bps = sh.host_bps[src].max(1) as u128;
            let cross = if shard[src] != shard[dst] {
                sh.partition.lookahead
            } else {
                0
            };
            // The last byte leaves after the rest (rounded down: a bound), or left.
            let last_sent = if f.all_sent_at != Time::MAX {
                f.all_sent_at
            } else {
                t.saturating_add((rest as u128 * 8 * crate::base::units::SEC as u128 / bps) as Time)
            };
            bound = bound.max(last_sent.saturating_add(cross));
        }
        let l = &self.nics.launcher;
        for (p, times) in l.phases.iter().zip(&l.phase_times) {
            bound = bound.max(match *times {
                (_, Some(_)) => continue,
                (Some(began), None) => began.saturating_add(p.duration),
                (None, None) => t.max(p.not_before).saturating_add(p.duration),
            });
        }
        bound
    }
}

/// Runs shard `ctx`'s events before `end`. Past its event budget (a livelock: events
/// that outpace anything the fabric could cause) it keeps the next events for the
/// diagnosis, up to the serial guard's sample, and stops.
fn run_window(
    ctx: &mut Ctx,
    fabric: &mut Fabric,
    roles: &mut RoleStates,
    nics: &mut Nics,
    end: Time,
    build: LoopBuild,
) {
    // Chosen once a window, not tested an event.
    match (build.prefetch, build.extras) {
        (true, true) => run_window_as::<true, true>(ctx, fabric, roles, nics, end),
        (true, false) => run_window_as::<true, false>(ctx, fabric, roles, nics, end),
        (false, true) => run_window_as::<false, true>(ctx, fabric, roles, nics, end),
        (false, false) => run_window_as::<false, false>(ctx, fabric, roles, nics, end),
    }
}

/// Which build of the event loop the shards run: with the look-ahead or not
/// ([`Simulation::prefetch`]), testing for the fabric's extras or not
/// ([`Simulation::extras`]).
#[derive(Clone, Copy)]
pub(super) struct LoopBuild {
    prefetch: bool,
    extras: bool,
}

/// [`run_window`] in the loop built with (`PREFETCH`) or without the look-ahead, and
/// with (`EXTRAS`) or without the tests for the fabric's extras.
fn run_window_as<const PREFETCH: bool, const EXTRAS: bool>(
    ctx: &mut Ctx,
    fabric: &mut Fabric,
    roles: &mut RoleStates,
    nics: &mut Nics,
    end: Time,
) {
    let limit = ctx.queue.popped().saturating_add(ctx.event_budget);
    while let Some((t, ev)) = ctx.queue.pop_before(end) {
        ctx.now = t;
        if PREFETCH {
            super::lookahead::prefetch_ahead(ctx, fabric);
        }
        super::event_loop::dispatch::<EXTRAS>(ctx, fabric, roles, nics, None, t, ev);
        if ctx.queue.popped() > limit && past_budget(ctx, ev) {
            break;
        }
    }
    ctx.seal_handoffs();
}

/// Keeps event `ev`, run past the shard's budget, for the livelock diagnosis; true
/// once the sample is full.
#[cold]
#[inline(never)]
fn past_budget(ctx: &mut Ctx, ev: Event) -> bool {
    ctx.past_budget.push(ev);
    ctx.past_budget.len() >= crate::sim::livelock::SAMPLE as usize
}
