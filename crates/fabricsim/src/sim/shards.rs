//! The parallel engine (issue 19): one run cut into shards (`partition.rs`), each with
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
//! cable, [`super::partition::crossing_grid`], never more than the cut's lookahead),
//! then all stop; frames handed over are delivered; the run's checks (completion, stall,
//! `max_time`, the caller's pause time) are made on the summed tallies; the next window
//! is the cell of the earliest pending event. A frame sent in a window arrives at least
//! `G` later, so in a later window: no shard ever receives anything in its past.
//! Null messages were the alternative: with one cut-cable delay for every pair of shards
//! of a fat tree (every pod talks to every core), windows cost the same barriers without
//! a protocol per pair.
//!
//! **Why the result does not depend on the thread count.** Events are ordered by (time,
//! kind, component) with no insertion counter (`crate::engine`), and no handler touches
//! another shard's state in the same window. So each shard runs its own events in the
//! order the one-thread run would give them, and a frame handed over reaches its ring
//! before its arrival, with the same event key as when the sender puts it there itself.
//! The run ends at the end of a grid cell in both engines (`event_loop.rs`), the only
//! place where a barrier could otherwise show. What is summed (counters, tallies) is
//! summed exactly. The arena's peak is the one figure that is not the same: it is the sum
//! of the shards' peaks, an upper bound (`speed.peak_packets`).
//!
//! **What runs sharded.** Besides frames, a shard hands over what else crosses the cut,
//! all delivered at the barrier and all at least a grid cell ahead ([`Outbox`]):
//! - credit returns to a port in another shard ([`Ctx::hand_off_credit`]; the grid
//!   counts return delays);
//! - releases of dependency-graph nodes another shard starts ([`Ctx::hand_off_release`]),
//!   whose delay, the notification latency (`[transport] notify_latency`, applied by the
//!   serial engine alike) plus the edge's own, must be at least the grid: a cut where it
//!   is not falls back and says what to set;
//! - with a frame, its INT records and its PKTC container tag (per-slot tables of the
//!   shard's arena).
//!
//! Job iterations are accounted between windows, in time order ([`Simulation`]'s
//! `settle_jobs`); per-shard counters (drops per flow, GSE statistics) are summed after
//! the run. So PFC, credit flow control, lossy fabrics, ECN, ECMP, spraying, table and
//! adaptive routing, every congestion control (HPCC's INT included), GSE (PKTC, DGSQ,
//! reordering), long haul with DR switches (threshold trigger; cut at the DCI), the
//! message transport, dual-rail NICs, flow dependencies, collectives and their
//! iterations, and `[record]` queue and rate samples (taken between windows, on the whole
//! model, at their times: a window ends at each) run sharded. Compute phases and training
//! jobs, faults and bit errors, hardware collectives, packet capture, switch CNPs and the
//! DRs' RED trigger (one generator for all) run on one thread, with a note saying which
//! feature kept them there ([`Simulation::set_threads_per_run`]).
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

use crate::engine::Event;
use crate::fabric::flow_control::credit::CreditSignal;
use crate::ids::{LinkId, PortId};
use crate::packet::{Desc, Packet, PacketArena};
use crate::sim::partition::{cell_end, crossing_grid, partition, Partition};
use crate::telemetry::int::IntStack;
use crate::units::Time;

use crate::sim::*;

/// Runs every shard's events before a time and delivers what they handed over.
type RunWindow<'a> = dyn FnMut(&mut [Ctx], &mut Fabric, &mut Nics, Time) + 'a;

/// How a run of windows stopped.
enum WindowsEnd {
    /// At the pause time, or halted.
    Paused,
    /// Stalled (diagnosed once the shards are gathered).
    Stalled,
    /// The run ended so.
    Ended(Outcome),
}

/// A frame put on a cut link, on its way to the shard at the far end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handoff {
    link: LinkId,
    arrival: Time,
    desc: Desc,
    packet: Packet,
}

/// A credit return sent back over a cut link: it reaches egress `port` (in the shard
/// at the far end) at `arrival`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CreditHandoff {
    port: PortId,
    arrival: Time,
    signal: CreditSignal,
}

/// What one shard hands another in a window, delivered at the barrier.
#[derive(Clone, Debug, Default)]
pub(crate) struct Outbox {
    frames: Vec<Handoff>,
    credits: Vec<CreditHandoff>,
    /// Releases of dependency-graph nodes the receiver starts: `(time, node)`.
    releases: Vec<(Time, u32)>,
    /// The INT records of the frames that carry them (`FLAG_INT`), in frame order.
    ints: Vec<IntStack>,
    /// The GSE container tag of every frame, in frame order (runs with GSPs).
    tags: Vec<(crate::gse::pktc::Tag, u32)>,
}

impl Outbox {
    fn heap_bytes(&self) -> u64 {
        (self.frames.capacity() * std::mem::size_of::<Handoff>()
            + self.credits.capacity() * std::mem::size_of::<CreditHandoff>()
            + self.releases.capacity() * std::mem::size_of::<(Time, u32)>()
            + self.ints.capacity() * std::mem::size_of::<IntStack>()
            + self.tags.capacity() * std::mem::size_of::<(crate::gse::pktc::Tag, u32)>())
            as u64
    }

    fn clear(&mut self) {
        self.frames.clear();
        self.credits.clear();
        self.releases.clear();
        self.ints.clear();
        self.tags.clear();
    }
}

impl Ctx {
    /// Hands a frame sent on cut link `link` to shard `to - 1` (`Link::cut_to`): its slot
    /// here is freed and the packet goes by value.
    // (Only ports on cut links reach it, through the transmit's out-of-line path.)
    #[inline]
    pub(crate) fn hand_off(
        &mut self,
        to: u16,
        link: LinkId,
        arrival: Time,
        desc: Desc,
        int: Option<IntStack>,
    ) {
        let packet = *self.arena.get(desc.id);
        let out = &mut self.outbox[to as usize - 1];
        if let Some(st) = int {
            out.ints.push(st);
        }
        if self.arena.keeps_tags() {
            out.tags.push(self.arena.gse_tag(desc.id));
        }
        self.arena.release(desc.id);
        out.frames.push(Handoff {
            link,
            arrival,
            desc,
            packet,
        });
    }

    /// Hands shard `to` the release of dependency node `v` at `at` (at least a crossing
    /// grid from now: checked when the run was cut).
    #[cold]
    pub(crate) fn hand_off_release(&mut self, to: u32, at: Time, v: u32) {
        self.outbox[to as usize].releases.push((at, v));
    }

    /// Hands a credit return for egress `port` of shard `to - 1` over (it arrives at
    /// least a lookahead later: the grid counts return delays).
    #[cold]
    pub(crate) fn hand_off_credit(
        &mut self,
        to: u16,
        port: PortId,
        arrival: Time,
        signal: CreditSignal,
    ) {
        self.outbox[to as usize - 1].credits.push(CreditHandoff {
            port,
            arrival,
            signal,
        });
    }

    /// A shard's context: its own clock, queue, arena, counters and tallies.
    fn for_shard(
        shard: u32,
        shards: usize,
        params: &RunParams,
        horizon: Time,
        lookahead: bool,
        tags: bool,
    ) -> Ctx {
        let mut arena = PacketArena::new();
        if tags {
            arena.keep_tags();
        }
        let mut queue = EventQueue::with_capacity(1024);
        queue.set_horizon(horizon);
        queue.set_lookahead(lookahead);
        Ctx {
            now: 0,
            queue,
            arena,
            counters: Counters::default(),
            tally: Tally::default(),
            params: params.clone(),
            shard,
            outbox: vec![Outbox::default(); shards],
            flow_drops: Vec::new(),
            jobs_done: Vec::new(),
            event_budget: u64::MAX,
            past_budget: Vec::new(),
        }
    }
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
    /// The next sample (`[record]` queues and rates), taken between windows.
    next_sample: Option<Time>,
    /// When the last sample was taken.
    last_sample: Time,
    /// Samples taken (events of the serial loop).
    samples: u64,
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

/// What the parallel engine does not run yet, if the model uses any of it.
fn unsupported(sim: &Simulation) -> Option<&'static str> {
    let (f, n, l) = (&sim.fabric, &sim.nics, &sim.nics.launcher);
    let checks: [(bool, &'static str); 8] = [
        (
            (f.dr.as_ref())
                .is_some_and(|d| matches!(d.trigger, crate::longhaul::dr::Trigger::Red(_))),
            "DR notifications triggered by RED (one generator draws for every DR)",
        ),
        (f.switch_cnp.is_some(), "switch CNPs (cc.dcqcn.cnp_from)"),
        (f.faults.is_some(), "faults and bit errors"),
        (
            f.multicast.is_some() || n.hw.is_some(),
            "hardware collectives",
        ),
        (f.capture.is_some(), "packet capture ([record.pcap])"),
        (!sim.trainings.is_empty(), "training jobs"),
        (!l.phases.is_empty(), "compute phases"),
        (
            !sim.ctx.queue.is_empty() || sim.started,
            "a run already started",
        ),
    ];
    checks.iter().find(|c| c.0).map(|c| c.1)
}

impl Simulation {
    /// Runs this simulation on `n` threads, one shard each (issue 19), when the model
    /// can be cut and the parallel engine runs everything it uses; otherwise it stays
    /// on one. Returns notes saying why fewer threads than asked for, if so. The results
    /// are the same bytes whatever `n` (see the module documentation). Call before the
    /// run starts.
    pub fn set_threads_per_run(&mut self, n: usize) -> Vec<String> {
        self.set_shards(n, n)
    }

    /// [`Self::set_threads_per_run`] with `shards` shards run on `threads` threads (1: in
    /// turn on the caller's thread, the same windows; for tests and the hand-off bench).
    pub fn set_shards(&mut self, shards: usize, threads: usize) -> Vec<String> {
        self.shards = None;
        self.fabric.telemetry.int.truncate(1);
        if let Some(g) = self.fabric.gse.as_mut() {
            g.stats.truncate(1);
        }
        for (l, p) in self.fabric.links.iter_mut().zip(&mut self.fabric.ports) {
            l.cut_to = 0;
            p.set_cut(false);
        }
        if shards <= 1 {
            return Vec::new();
        }
        if let Some(what) = unsupported(self) {
            return vec![format!(
                "{shards} threads per run asked for, but the parallel engine does not run \
                 {what} yet: running on one thread"
            )];
        }
        if crossing_grid(&self.fabric) == 0 {
            return vec![format!(
                "{shards} threads per run asked for, but a cable has no delay, so no shard \
                 could run ahead of another: running on one thread"
            )];
        }
        let p = partition(&self.fabric, shards.min(u16::MAX as usize - 1) as u32);
        let mut notes = p.notes.clone();
        if p.shards <= 1 {
            return notes;
        }
        let s = p.shards as usize;
        let host_shard: Vec<u16> = (0..self.nics.hosts.len() as u32)
            .map(|h| self.shard_of_host(&p, h) as u16)
            .collect();
        if let Some(why) =
            self.dependency_crossing_too_soon(&host_shard, crossing_grid(&self.fabric))
        {
            notes.push(format!(
                "{shards} threads per run asked for, but {why}: running on one thread"
            ));
            return notes;
        }
        if let Some(why) = self.dr_campus_split(&p) {
            notes.push(format!(
                "{shards} threads per run asked for, but {why}: running on one thread"
            ));
            return notes;
        }
        self.nics.launcher.host_shard = host_shard;
        let int = self.fabric.telemetry.int[0].clone();
        self.fabric.telemetry.int.resize(s, int);
        if let Some(g) = self.fabric.gse.as_mut() {
            g.stats.resize(s, Default::default());
        }
        // Links whose far end is in another shard.
        let fabric = &mut self.fabric;
        for i in 0..fabric.ports.len() {
            let from = p.shard_of_node[fabric.ports[i].node.idx()];
            let to = p.shard_of_node[fabric.ports[fabric.ports[i].peer.idx()].node.idx()];
            if from != to {
                fabric.links[i].cut_to = to as u16 + 1;
                fabric.ports[i].set_cut(true);
            }
        }
        // Each shard starts the flows its hosts send, in the same order.
        let lane = std::mem::take(&mut self.nics.launcher.lanes);
        let mut lanes = vec![crate::transport::launcher::Lane::default(); s];
        for &fid in lane.iter().flat_map(|l| l.order.iter()) {
            let sh = self.shard_of_host(&p, self.nics.flows[fid as usize].spec.src);
            lanes[sh].order.push(fid);
        }
        self.nics.launcher.lanes = lanes;
        let threads = threads.clamp(1, s);
        if threads < shards && threads > 1 && notes.is_empty() {
            notes.push(format!("running {s} shards on {threads} threads"));
        }
        self.shards = Some(Box::new(Shards {
            partition: p,
            threads,
            ctxs: Vec::new(),
            windows: 0,
            handoffs: 0,
            next_sample: None,
            last_sample: 0,
            samples: 0,
        }));
        notes
    }

    /// Why the flow dependencies cannot be cut so, if they cannot: a shard learns what
    /// another did only at the next barrier, so every dependency whose two ends are in
    /// different shards (a flow's end at its receiver, its start and last byte sent at
    /// its sender; the next flow at its sender), and every start of a job iteration
    /// after the previous one (accounted between windows), must wait at least the
    /// crossing grid `grid`: its notification latency (`[transport] notify_latency`,
    /// which the serial engine applies alike) plus its own delay.
    fn dependency_crossing_too_soon(&self, host_shard: &[u16], grid: Time) -> Option<String> {
        let n = &self.nics;
        let d = &n.launcher.deps;
        let flow = |f: u32| &n.flows[f as usize].spec;
        let lists = [
            (&d.off, &d.after, &d.lag, true),
            (&d.soff, &d.safter, &d.slag, false),
            (&d.xoff, &d.xafter, &d.xlag, false),
        ];
        for (off, after, lag, at_end) in lists {
            for b in 0..off.len().saturating_sub(1).min(n.flows.len()) {
                let f = flow(b as u32);
                let here = host_shard[if at_end { f.dst } else { f.src } as usize];
                for k in off[b] as usize..off[b + 1] as usize {
                    let a = after[k] as usize;
                    let Some(fa) = n.flows.get(a).map(|f| &f.spec) else {
                        continue;
                    };
                    if host_shard[fa.src as usize] != here && lag[k] < grid {
                        return Some(format!(
                            "flow {a} waits for flow {b} on a host in another shard with a \
                             delay of {}, less than the crossing grid ({}, the least cable \
                             delay): set [transport] notify_latency to at least that",
                            crate::units::fmt_time(lag[k]),
                            crate::units::fmt_time(grid)
                        ));
                    }
                }
            }
        }
        for (j, js) in n.jobs.iter().enumerate() {
            if js.spec.after.is_none() {
                continue;
            }
            let first = js.spec.first_flow..js.spec.first_flow + js.spec.n_flows;
            for v in first.filter(|&v| d.root[v as usize]) {
                let lag = d.chain_lag.get(v as usize).copied().unwrap_or(0);
                if lag < grid {
                    return Some(format!(
                        "job iteration {j} starts when the one before ends, which a run cut \
                         into shards learns at a barrier, and its notification latency \
                         ({}) is less than the crossing grid ({}, the least cable delay): \
                         set [transport] notify_latency to at least that",
                        crate::units::fmt_time(lag),
                        crate::units::fmt_time(grid)
                    ));
                }
            }
        }
        for (f, prev) in d.prev_on_conn.iter().enumerate() {
            if let Some(p) = prev {
                let (a, b) = (flow(f as u32).src, flow(*p).src);
                if host_shard[a as usize] != host_shard[b as usize] {
                    return Some(format!(
                        "flows {p} and {f} share a queue pair but not a sending shard"
                    ));
                }
            }
        }
        None
    }

    /// Why the DR switches cannot be cut so, if they cannot: a flow's DR notifications
    /// are paced per flow (`DrState::next_cnp`) by the DRs of the campus it leaves (a
    /// DCI path never passes through a third campus), so those DRs must all be in one
    /// shard.
    fn dr_campus_split(&self, p: &Partition) -> Option<String> {
        let dr = self.fabric.dr.as_ref()?;
        let mut shard_of_campus: Vec<Option<u32>> = Vec::new();
        for &(port, campus) in &dr.dci_ports {
            let s = p.shard_of_node[self.fabric.ports[port].node.idx()];
            let c = campus as usize;
            if shard_of_campus.len() <= c {
                shard_of_campus.resize(c + 1, None);
            }
            match shard_of_campus[c] {
                None => shard_of_campus[c] = Some(s),
                Some(t) if t != s => {
                    return Some(format!(
                        "the DR switches of campus {c} fell into two shards"
                    ))
                }
                Some(_) => {}
            }
        }
        None
    }

    fn shard_of_host(&self, p: &Partition, h: u32) -> usize {
        let port = self.nics.hosts[h as usize].port;
        p.shard_of_node[self.fabric.ports[port].node.idx()] as usize
    }

    /// Shards the run is cut into (1 when it runs on one thread).
    pub fn shard_count(&self) -> usize {
        self.shards
            .as_ref()
            .map_or(1, |s| s.partition.shards as usize)
    }

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
            let horizon = self.calendar_horizon();
            self.fabric.route_ahead = self.routes_ahead();
            self.end_grid = crossing_grid(&self.fabric);
            self.livelock = crate::livelock::Guard::new(self);
            let s = sh.partition.shards as usize;
            sh.ctxs = (0..s)
                .map(|i| {
                    let tags = self.ctx.arena.keeps_tags();
                    Ctx::for_shard(i as u32, s, &self.ctx.params, horizon, self.prefetch, tags)
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
        }
        let end = self.run_windows(&mut sh, until, halt, progress);
        if let WindowsEnd::Paused = end {
            merge_flow_drops(&mut sh.ctxs, &mut self.fabric);
            self.settle_jobs(&mut sh);
            self.ctx.now = until;
            self.shards = Some(sh);
            return None;
        }
        self.gather(&mut sh);
        self.shards = Some(sh);
        let outcome = match end {
            // Diagnosed on the gathered state.
            WindowsEnd::Stalled => Outcome::Stalled(crate::stall::diagnose(self)),
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
        let prefetch = self.prefetch;
        if sh.threads <= 1 {
            return self.window_loop(sh, until, halt, progress, &mut |ctxs, fabric, nics, end| {
                for c in ctxs.iter_mut() {
                    run_window(c, fabric, nics, end, prefetch);
                }
                deliver(ctxs, fabric, nics);
            });
        }
        let threads = sh.threads;
        let pool = Pool {
            barrier: std::sync::Barrier::new(threads),
            end: std::sync::atomic::AtomicU64::new(0),
            panic: std::sync::Mutex::new(None),
        };
        let model = SharedModel {
            fabric: &mut self.fabric as *mut Fabric,
            nics: &mut self.nics as *mut Nics,
            ctxs: sh.ctxs.as_mut_ptr(),
            shards: sh.ctxs.len(),
        };
        std::thread::scope(|scope| {
            for j in 1..threads {
                let pool = &pool;
                scope.spawn(move || loop {
                    pool.barrier.wait();
                    let end = pool.end.load(std::sync::atomic::Ordering::Acquire);
                    if end == EXIT {
                        break;
                    }
                    model.window(j, threads, end, prefetch, pool);
                });
            }
            let end = self.window_loop(sh, until, halt, progress, &mut |_, _, _, end| {
                pool.end.store(end, std::sync::atomic::Ordering::Release);
                pool.barrier.wait();
                model.window(0, threads, end, prefetch, &pool);
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
            end
        })
    }

    /// The run's decisions between windows, the serial loop's made on the summed tallies
    /// at cell ends; `window(ctxs, fabric, nics, end)` runs every shard's events before
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
        let mut diagnosis: Option<crate::livelock::Tally> = None;
        loop {
            self.settle_jobs(sh);
            let mut tally = Tally::default();
            for c in &sh.ctxs {
                tally.merge(&c.tally);
            }
            // The next event: a shard's, or the next sample (which the caller's thread
            // takes between windows, as the serial loop's last event of its instant).
            let next_event = sh.ctxs.iter().filter_map(|c| c.queue.peek_time()).min();
            let next = match (next_event, sh.next_sample) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let now = (sh.ctxs.iter().map(|c| c.now))
                .max()
                .unwrap_or(0)
                .max(sh.last_sample);
            let mut end = Time::MAX;
            if tally.flows_done == total {
                let t_done = *self
                    .nics
                    .receivers_done_at
                    .get_or_insert(tally.last_flow_done);
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
            if diagnosis.is_none() && self.livelock.check(now, popped + sh.samples) {
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
            if sh.next_sample == Some(t) && next_event.is_none_or(|e| e > t) {
                // Every event up to the sample's time has run, none after: the model as
                // the serial loop's sample sees it.
                sh.last_sample = t;
                sh.samples += 1;
                self.ctx.now = t;
                let intervals = (
                    self.ctx.params.queue_interval,
                    self.ctx.params.rate_interval,
                );
                let fabric = &self.fabric;
                let next = self.record.sample(
                    t,
                    intervals,
                    &fabric.ports,
                    &fabric.node_is_switch,
                    &mut self.nics.flows,
                );
                sh.next_sample = next.filter(|_| tally.flows_done < total);
                if let Some(d) = diagnosis.as_mut() {
                    d.add(self, Event::Sample);
                    if d.len() >= crate::livelock::SAMPLE as u64 {
                        let d = diagnosis.take().expect("counting");
                        return WindowsEnd::Ended(self.sharded_livelock(sh, d));
                    }
                }
                continue;
            }
            // The window: the cell of the next event, no further than the run may go,
            // nor past the next sample.
            let end = end
                .min(cell_end(self.end_grid, t))
                .min(sh.next_sample.map_or(Time::MAX, |s| s.saturating_add(1)))
                .min(stop.saturating_add(1))
                .min(
                    tally
                        .last_progress
                        .saturating_add(timeout)
                        .saturating_add(1),
                );
            sh.windows += 1;
            let budget = if diagnosis.is_some() {
                0
            } else {
                self.livelock.budget(end.saturating_sub(t))
            };
            for c in &mut sh.ctxs {
                c.event_budget = budget;
            }
            window(&mut sh.ctxs, &mut self.fabric, &mut self.nics, end);
            if sh.ctxs.iter().any(|c| !c.past_budget.is_empty()) {
                let d = diagnosis.take().unwrap_or_default();
                return WindowsEnd::Ended(self.sharded_livelock(sh, d));
            }
        }
    }

    /// The livelock report of a sharded run: the events the shards ran past their
    /// budget, counted into `tally` beside what the caller's thread counted.
    #[cold]
    fn sharded_livelock(&mut self, sh: &mut Shards, mut tally: crate::livelock::Tally) -> Outcome {
        for c in &mut sh.ctxs {
            for ev in std::mem::take(&mut c.past_budget) {
                tally.add(self, ev);
            }
        }
        let now = (sh.ctxs.iter().map(|c| c.now))
            .max()
            .unwrap_or(0)
            .max(sh.last_sample);
        let popped = sh.ctxs.iter().map(|c| c.queue.popped()).sum::<u64>() + sh.samples;
        self.ctx.now = now;
        Outcome::Livelock(crate::livelock::report(self, (now, popped), tally))
    }

    /// Accounts the job-iteration nodes the shards saw done in the last window, in time
    /// order as the serial engine does at once: finished iterations get their finish
    /// time, and the first nodes of the iterations waiting for them are released, by
    /// their shards' timers, after their notification latencies (never less than the
    /// crossing grid, so never inside the window just run: checked when the run was cut).
    fn settle_jobs(&mut self, sh: &mut Shards) {
        let mut done: Vec<(Time, u32)> = Vec::new();
        for c in &mut sh.ctxs {
            done.append(&mut c.jobs_done);
        }
        if done.is_empty() {
            return;
        }
        done.sort_unstable();
        for (t, v) in done {
            for (node, lag) in self.nics.account_job_node(t, v) {
                debug_assert!(lag >= self.end_grid && lag > 0);
                let s = self.nics.owner(node, 0) as usize;
                self.nics.take_release(&mut sh.ctxs[s], t + lag, node);
            }
        }
    }

    /// After the run: the shards' counts summed into the run's context, and every packet
    /// still queued or on a link moved into its arena, so that outputs and invariant
    /// checks read one model. (Their INT records stay behind: nothing reads them once
    /// the run is over.)
    fn gather(&mut self, sh: &mut Shards) {
        deliver(&mut sh.ctxs, &mut self.fabric, &mut self.nics);
        self.settle_jobs(sh);
        let p = &sh.partition;
        let fabric = &mut self.fabric;
        let main = &mut self.ctx;
        let mut moved = |d: &mut Desc, s: usize| {
            let packet = *sh.ctxs[s].arena.get(d.id);
            let (tag, gsp) = sh.ctxs[s].arena.gse_tag(d.id);
            sh.ctxs[s].arena.release(d.id);
            d.id = main.arena.alloc(packet);
            if main.arena.keeps_tags() {
                main.arena.set_tag(d.id, tag, gsp);
            }
        };
        for i in 0..fabric.ports.len() {
            let own = p.shard_of_node[fabric.ports[i].node.idx()] as usize;
            let far = p.shard_of_node[fabric.ports[fabric.ports[i].peer.idx()].node.idx()] as usize;
            for (_, d) in fabric.links[i].ring.iter_mut() {
                moved(d, far);
            }
            fabric.ports[i].for_each_queued_mut(|d| moved(d, own));
        }
        // Packets GSE holds: in the source GSP's VOQs, the destination GSP's reorder
        // buffers (stream = GSP x hosts + host).
        if let Some(g) = fabric.gse.as_mut() {
            let switches = &fabric.switches;
            let shard_of_gsp = |gsp: u32| {
                let s = g.switch_of_gsp[gsp as usize] as usize;
                p.shard_of_node[switches[s].node.idx()] as usize
            };
            let n = g.n_hosts.max(1);
            let gsps: Vec<usize> = (0..g.switch_of_gsp.len() as u32)
                .map(shard_of_gsp)
                .collect();
            let dst_shard: Vec<Option<usize>> = (g.gsp_of_host.iter())
                .map(|x| x.map(|gsp| gsps[gsp as usize]))
                .collect();
            for (i, v) in g.voq.iter_mut().enumerate() {
                for d in v.q.iter_mut() {
                    moved(d, gsps[i / n]);
                }
            }
            for (i, r) in g.rx.iter_mut().enumerate() {
                if let Some(s) = dst_shard[i % n] {
                    for h in r.held.iter_mut() {
                        moved(&mut h.desc, s);
                    }
                }
            }
        }
        main.queue.add_popped(sh.samples);
        let mut peak = 0;
        merge_flow_drops(&mut sh.ctxs, fabric);
        for c in &sh.ctxs {
            sh.handoffs += c.counters.handoffs;
            main.counters.add(&c.counters);
            main.tally.merge(&c.tally);
            main.queue.add_popped(c.queue.popped());
            peak += c.arena.peak();
        }
        main.arena.raise_peak(peak);
    }
}

/// Adds the drops the shards logged to the flows' counts.
fn merge_flow_drops(ctxs: &mut [Ctx], fabric: &mut Fabric) {
    for c in ctxs {
        for f in c.flow_drops.drain(..) {
            fabric.flow_drops[f as usize] += 1;
        }
    }
}

/// Puts every frame handed over in the last window on its link's ring, in the shard at
/// the far end.
fn deliver(ctxs: &mut [Ctx], fabric: &mut Fabric, nics: &mut Nics) {
    for to in 0..ctxs.len() {
        for from in 0..ctxs.len() {
            let mut msgs = std::mem::take(&mut ctxs[from].outbox[to]);
            receive(&mut ctxs[to], fabric, nics, &msgs);
            msgs.clear();
            ctxs[from].outbox[to] = msgs;
        }
    }
}

/// Shard `ctx` takes what another handed to it: frames go on their links' rings, credit
/// returns on their ports' rings of returns, releases among its timers, as the sender
/// would have put them itself.
fn receive(ctx: &mut Ctx, fabric: &mut Fabric, nics: &mut Nics, msgs: &Outbox) {
    ctx.counters.handoffs += msgs.frames.len() as u64;
    let mut ints = msgs.ints.iter();
    let mut tags = msgs.tags.iter();
    for h in &msgs.frames {
        let mut d = h.desc;
        d.id = ctx.arena.alloc(h.packet);
        if let Some(&(tag, gsp)) = tags.next() {
            ctx.arena.set_tag(d.id, tag, gsp);
        }
        if d.flags & crate::packet::FLAG_INT != 0 {
            let st = ints
                .next()
                .expect("an INT frame handed over with its records");
            *fabric.telemetry.int[ctx.shard as usize].slot(d.id) = *st;
        }
        if fabric.links[h.link].put(h.arrival, d) {
            ctx.queue.push(h.arrival, Event::LinkArrive(h.link));
        }
    }
    for c in &msgs.credits {
        fabric.credit_arrives(ctx, c.port, c.arrival, c.signal);
    }
    for &(at, v) in &msgs.releases {
        debug_assert!(at >= ctx.now);
        nics.take_release(ctx, at, v);
    }
}

/// Runs shard `ctx`'s events before `end`.
/// Runs shard `ctx`'s events before `end`. Past its event budget (a livelock: events
/// that outpace anything the fabric could cause) it keeps the next events for the
/// diagnosis, up to the serial guard's sample, and stops.
fn run_window(ctx: &mut Ctx, fabric: &mut Fabric, nics: &mut Nics, end: Time, prefetch: bool) {
    let limit = ctx.queue.popped().saturating_add(ctx.event_budget);
    while let Some((t, ev)) = ctx.queue.pop_before(end) {
        ctx.now = t;
        if prefetch {
            super::lookahead::prefetch_ahead(ctx, fabric);
        }
        super::event_loop::dispatch(ctx, fabric, nics, None, t, ev);
        if ctx.queue.popped() > limit && past_budget(ctx, ev) {
            return;
        }
    }
}

/// Keeps event `ev`, run past the shard's budget, for the livelock diagnosis; true
/// once the sample is full.
#[cold]
#[inline(never)]
fn past_budget(ctx: &mut Ctx, ev: Event) -> bool {
    ctx.past_budget.push(ev);
    ctx.past_budget.len() >= crate::livelock::SAMPLE as usize
}

/// The `end` that tells the worker threads to leave.
const EXIT: u64 = u64::MAX;

/// What the threads of a sharded run share besides the model: a barrier, and the end of
/// the next window.
struct Pool {
    barrier: std::sync::Barrier,
    end: std::sync::atomic::AtomicU64,
    /// The first panic of a thread in the window just run: the threads still meet at
    /// every barrier (a thread that left would hang the others), and the caller's
    /// thread stops the rest and resumes the panic.
    panic: std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl Pool {
    /// Runs `f`, keeping its panic (the first of the window) instead of unwinding.
    fn guard(&self, f: impl FnOnce()) {
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(p);
        }
    }
}

/// The model's tables and the shards' contexts, shared by the threads of a sharded run.
/// In a window each thread writes only what its shards own (module documentation);
/// between windows only the caller's thread touches anything, while the others wait at
/// the barrier.
#[derive(Clone, Copy)]
struct SharedModel {
    fabric: *mut Fabric,
    nics: *mut Nics,
    ctxs: *mut Ctx,
    shards: usize,
}

// SAFETY: see `SharedModel` and `SharedModel::window`.
#[allow(unsafe_code)]
unsafe impl Send for SharedModel {}
#[allow(unsafe_code)]
unsafe impl Sync for SharedModel {}

impl SharedModel {
    /// Thread `j` of `threads` runs the window of its shards (`i % threads == j`), waits
    /// for every thread, takes the frames handed to its shards, and waits again.
    #[allow(unsafe_code)]
    fn window(&self, j: usize, threads: usize, end: Time, prefetch: bool, pool: &Pool) {
        // SAFETY: shard i's context is touched by thread i % threads only; the model's
        // tables are written only where the running shard owns them (the partition
        // makes those parts disjoint, and `unsupported` admits only handlers that keep
        // to them); the barriers order each phase's writes before the next phase.
        for i in (j..self.shards).step_by(threads) {
            let (ctx, fabric, nics) =
                unsafe { (&mut *self.ctxs.add(i), &mut *self.fabric, &mut *self.nics) };
            pool.guard(|| run_window(ctx, fabric, nics, end, prefetch));
        }
        pool.barrier.wait();
        for to in (j..self.shards).step_by(threads) {
            // (A shard never hands frames to itself: a cut link joins two shards.)
            for from in (0..self.shards).filter(|&f| f != to) {
                // SAFETY: `outbox[to]` of every shard is touched by the thread of shard
                // `to` alone in this phase, and so is shard `to`'s context, the rings
                // of the links and credit returns arriving in it, and its launcher lane.
                let (src, dst, fabric, nics) = unsafe {
                    (
                        &mut *self.ctxs.add(from),
                        &mut *self.ctxs.add(to),
                        &mut *self.fabric,
                        &mut *self.nics,
                    )
                };
                let mut msgs = std::mem::take(&mut src.outbox[to]);
                pool.guard(|| receive(dst, fabric, nics, &msgs));
                msgs.clear();
                src.outbox[to] = msgs;
            }
        }
        pool.barrier.wait();
    }
}
