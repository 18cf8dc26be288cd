//! The event loop and its dispatch: pop the next event, stop at `max_time`, a pause
//! time or a stall, and hand the event to the handler of the component it names.
//! Events are ordered by (time, event key) (see [`crate::kernel::events`]), so a run is a pure
//! function of its inputs.

use crate::base::trusted::Trusted;
use crate::base::units::Time;
use crate::kernel::events::Event;
use crate::model::fabric::roles::RoleStates;
use crate::model::fabric::NodeKind;
use crate::scenario::config::LbAlgorithm;

use crate::sim::partition::cell_end;
use crate::sim::*;

/// What the loop's periodic check asks of it.
enum Periodic {
    /// Go on.
    Go,
    /// Go on, and check again at the next event.
    Hold,
    /// Stop: the caller asked (the stop flag).
    Halt,
    /// The run ends so.
    End(Outcome),
}

impl Simulation {
    /// Runs to completion, `max_time`, or a stall. `progress` is called every ~2^20 events.
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) -> Outcome {
        self.run_until(Time::MAX, progress)
            .expect("a run without a pause time ends with an outcome")
    }

    /// Runs until simulated time `until` (inclusive) or the end of the run, whichever is
    /// first. Returns `None` when paused at `until` (call again to continue), or the
    /// outcome when the run ended. Pausing does not change the result.
    pub fn run_until(
        &mut self,
        until: Time,
        progress: &mut dyn FnMut(&Progress),
    ) -> Option<Outcome> {
        self.run_until_stopped(until, None, progress)
    }

    /// [`Simulation::run_until`] that also returns `None` soon after `halt` is set: the
    /// flag is read where progress is reported (every ~2^20 events, tens of
    /// milliseconds), so it costs nothing per event. A stopped run's state is partial:
    /// the caller drops it (`runner` writes nothing for it).
    pub fn run_until_stopped(
        &mut self,
        until: Time,
        halt: Option<&std::sync::atomic::AtomicBool>,
        progress: &mut dyn FnMut(&Progress),
    ) -> Option<Outcome> {
        if self.shards.is_some() {
            return self.run_sharded(until, halt, progress);
        }
        if !self.started {
            self.started = true;
            (self.ctx.queue).set_slots(self.calendar_horizon(), self.calendar_gap());
            self.fabric.route_ahead = self.routes_ahead();
            self.ctx.queue.set_lookahead(self.prefetch);
            self.decide_extras();
            self.end_grid = partition::crossing_grid(&self.fabric);
            // Faults first: one at a flow's start time acts before the flow starts.
            if self.fabric.faults.is_some() {
                self.schedule_faults();
            }
            if let Some(&first) = self.nics.launcher.lanes[0].order.first() {
                let t0 = self.nics.flows[first as usize].spec.start;
                self.ctx.queue.push(t0, Event::FlowArrivals);
            }
            self.nics
                .schedule_root_phases(std::slice::from_mut(&mut self.ctx));
            self.nics
                .schedule_collectives(std::slice::from_mut(&mut self.ctx));
            if self.ctx.params.queue_interval.is_some() || self.ctx.params.rate_interval.is_some() {
                self.ctx.queue.push(0, Event::Sample);
            }
            self.livelock = crate::sim::livelock::Guard::new(self);
        }
        // The loop is built four times, with and without the look-ahead and the tests
        // for the fabric's extras, chosen here once: not a test an event, and a model
        // too small to prefetch runs a loop without its code.
        match (self.prefetch, self.extras.unwrap_or(true)) {
            (true, true) => self.run_events::<true, true>(until, halt, progress),
            (true, false) => self.run_events::<true, false>(until, halt, progress),
            (false, true) => self.run_events::<false, true>(until, halt, progress),
            (false, false) => self.run_events::<false, false>(until, halt, progress),
        }
    }

    /// Whether the run uses any of the fabric's extras ([`crate::model::fabric`]): the
    /// fabric's own, or the NICs' (packets they mark for the fabric's, several ports a
    /// NIC, QP bursts). A run that uses none runs the loop built without their tests.
    pub fn uses_extras(&self) -> bool {
        self.fabric.uses_extras() || self.nics.uses_extras(&self.fabric)
    }

    /// Runs the loop built to test for every extra of the fabric, whether the run uses
    /// them or not: the same results, a little slower. For checking the loop without
    /// those tests against it; call before the run starts.
    pub fn always_test_extras(&mut self) {
        self.extras = Some(true);
    }

    /// Picks the loop as the run starts (see [`Simulation::extras`]).
    pub(crate) fn decide_extras(&mut self) {
        if self.extras.is_none() {
            self.extras = Some(self.uses_extras());
        }
    }

    /// The event loop of [`Self::run_until_stopped`], once the run has started;
    /// `PREFETCH`: whether it prefetches ahead ([`Simulation::prefetch`]); `EXTRAS`:
    /// whether the handlers test for the fabric's extras ([`Simulation::extras`]).
    fn run_events<const PREFETCH: bool, const EXTRAS: bool>(
        &mut self,
        until: Time,
        halt: Option<&std::sync::atomic::AtomicBool>,
        progress: &mut dyn FnMut(&Progress),
    ) -> Option<Outcome> {
        let total = self.nics.flows.len();
        let stop = self.ctx.params.max_time.min(until);
        // The loop's periodic checks run when the queue has popped `next_check` events:
        // every 2^16 events, and every event while a tripped livelock guard counts
        // events for its diagnosis. Counting here, not in a loop of its own, keeps one
        // call site per handler: a second costs every event its handlers' inlining. The
        // queue's own count, not one of the loop's: a counter of its own cost three
        // instructions an event (the loop keeps it on the stack).
        let mut next_check = next_multiple(self.ctx.queue.popped());
        let mut diagnosis: Option<(crate::sim::livelock::Tally, (Time, u64))> = None;
        // One comparison an event for both the end of the run (`stop`) and the stall
        // check: `watch` is the earlier of `stop` and the stall deadline, `last_progress`
        // + `stall_timeout`, as last read. Progress only moves the deadline later, so an
        // event before a deadline read earlier is before the current one too; an event
        // past it reads the deadline again.
        let timeout = self.ctx.params.stall_timeout;
        let mut watch = stop.min(self.ctx.tally.last_progress.saturating_add(timeout));
        let outcome = loop {
            if self.ctx.tally.flows_done == total && self.nics.launcher.phases_left == 0 {
                // Every receiver has its data. The run goes on until the last ACKs reach
                // their senders (the sender-side FCT, as ns-3 measures it), but no longer
                // than the stall timeout: an ACK path cut by a fault must not hold it.
                // The run ends with the cell of the crossing grid it completes in
                // (`partition::crossing_grid`, the least delay of any cable that has one): every event
                // of that cell still runs, so what the counters hold at the end depends
                // neither on the order of same-time events nor on where a run cut into
                // shards has its barriers (at cell ends).
                let t_done = *self.nics.receivers_done_at.get_or_insert(self.ctx.now);
                let next = self.ctx.queue.peek_time();
                let cell_over = next.is_none_or(|t| t >= cell_end(self.end_grid, self.ctx.now));
                if (self.ctx.tally.acks_awaited() == 0 && cell_over)
                    || next.is_none_or(|t| t.saturating_sub(t_done) > self.ctx.params.stall_timeout)
                {
                    break Outcome::Completed;
                }
            }
            let Some((t, ev)) = self.ctx.queue.pop() else {
                break Outcome::Starved;
            };
            if t > watch {
                if t > stop {
                    if t > self.ctx.params.max_time {
                        self.ctx.now = self.ctx.params.max_time;
                        break Outcome::MaxTime;
                    }
                    self.ctx.queue.unpop();
                    self.ctx.now = until;
                    return None;
                }
                let tally = &self.ctx.tally;
                let stall_at = tally.last_progress.saturating_add(timeout);
                if t > stall_at && tally.flows_started > tally.flows_done {
                    self.ctx.now = tally.last_progress + timeout;
                    break Outcome::Stalled(crate::sim::stall::diagnose(self));
                }
                watch = stop.min(stall_at);
            }
            self.ctx.now = t;
            // Before the event is handled, so that nothing of it (the event itself)
            // stays live across the handler on the path every event takes.
            let popped = self.ctx.queue.popped();
            if popped >= next_check {
                match self.periodic(t, ev, popped, &mut diagnosis, progress, halt) {
                    Periodic::Go => next_check = next_multiple(popped),
                    Periodic::Hold => next_check = popped + 1,
                    Periodic::Halt => {
                        self.ctx.queue.unpop();
                        return None;
                    }
                    Periodic::End(o) => {
                        self.ctx.queue.unpop();
                        break o;
                    }
                }
            }
            if PREFETCH {
                super::lookahead::prefetch_ahead(&self.ctx, &self.fabric);
            }
            self.dispatch::<EXTRAS>(t, ev);
        };
        // A run that ended (max_time, a stall) while the guard counted still livelocked.
        let outcome = match (diagnosis, outcome) {
            (Some((tally, at)), Outcome::MaxTime | Outcome::Stalled(_) | Outcome::Starved) => {
                Outcome::Livelock(crate::sim::livelock::report(self, at, tally))
            }
            (_, o) => o,
        };
        self.finish_accounting();
        progress(&self.progress());
        Some(outcome)
    }

    /// Whether a switch decides the next switch's ECMP egress as it sends (the
    /// prefetching look-ahead, `Fabric::route_ahead`), for the serial loop and the
    /// shards alike. Worth it only where the routing tables miss the cache (large
    /// models). Table routing chooses by port state and by the way a packet came in,
    /// which the hop before cannot know.
    pub(crate) fn routes_ahead(&self) -> bool {
        self.prefetch
            && !self.fabric.table_routing
            && self.fabric.lb == LbAlgorithm::Ecmp
            && self.roles.gse.is_none()
            && self.roles.dr.is_none()
            && self.roles.switch_cnp.is_none()
    }

    /// The event calendar's window: a frame's serialization plus a link delay (with some
    /// margin), as nearly every event is scheduled that far ahead at most.
    pub(crate) fn calendar_horizon(&self) -> Time {
        let frame = self.ctx.params.mtu + self.ctx.params.header;
        let delay = self.fabric.links.iter().map(|l| l.delay).max().unwrap_or(0);
        let ser = (self.fabric.ports.iter())
            .map(|p| p.tx_time(frame + p.sec_extra as u64))
            .max()
            .unwrap_or(0);
        (delay + ser) / 8 * 9
    }

    /// About how far apart in time the model's events come at full load, for the width
    /// of the calendar's slots: every port one event per one and a half frame times (the
    /// fat-tree benchmark, every host sending at line rate, runs one event per port per
    /// 480 ns at k = 8 and per 590 ns at k = 16, where a frame takes 332 ns). A lighter
    /// load puts fewer events in a slot, which costs only the move to the next slot more
    /// often.
    pub(crate) fn calendar_gap(&self) -> Time {
        let frame = self.ctx.params.mtu + self.ctx.params.header;
        let ser = (self.fabric.ports.iter())
            .map(|p| p.tx_time(frame))
            .filter(|&t| t > 0)
            .min()
            .unwrap_or(0);
        ser * 3 / (2 * self.fabric.ports.len().max(1) as u64)
    }

    /// The loop's checks every 2^16 events (out of line, so the path every event takes
    /// stays short): the livelock guard, counting events for its diagnosis once it
    /// tripped (`Hold`: check again at the next event), progress and the stop flag.
    #[cold]
    #[inline(never)]
    fn periodic(
        &mut self,
        t: Time,
        ev: Event,
        popped: u64,
        diagnosis: &mut Option<(crate::sim::livelock::Tally, (Time, u64))>,
        progress: &mut dyn FnMut(&Progress),
        halt: Option<&std::sync::atomic::AtomicBool>,
    ) -> Periodic {
        if let Some((tally, _)) = diagnosis {
            tally.add(self, ev);
            if tally.len() < crate::sim::livelock::SAMPLE as u64 {
                return Periodic::Hold;
            }
            let (tally, at) = diagnosis.take().expect("counting");
            return Periodic::End(Outcome::Livelock(crate::sim::livelock::report(
                self, at, tally,
            )));
        }
        if self.livelock.check(t, self.ctx.queue.popped()) {
            // Count the next events by kind and component, then stop.
            *diagnosis = Some((
                crate::sim::livelock::Tally::default(),
                (self.ctx.now, self.ctx.queue.popped()),
            ));
            return Periodic::Hold;
        }
        if self.timeline.is_some() {
            self.timeline_write(t);
        }
        if popped & 0xf_ffff == 0 {
            progress(&self.progress());
            if halt.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
                return Periodic::Halt;
            }
        }
        Periodic::Go
    }

    /// Hands event `ev`, due now (`t`), to the component it names.
    #[inline(always)]
    fn dispatch<const EXTRAS: bool>(&mut self, t: Time, ev: Event) {
        dispatch::<EXTRAS>(
            &mut self.ctx,
            &mut self.fabric,
            &mut self.roles,
            &mut self.nics,
            Some(&mut self.record),
            t,
            ev,
        );
    }

    /// Schedules every step of the fault timeline (out of line: the loop's code stays as
    /// it was without faults).
    #[cold]
    #[inline(never)]
    fn schedule_faults(&mut self) {
        let f = self.fabric.faults.as_ref().expect("a fault timeline");
        for (i, &(t, _)) in f.steps.iter().enumerate() {
            self.ctx.queue.push(t, Event::Fault(i as u32));
        }
    }

    /// What shards record side by side, added into the run's records: the capture's
    /// logs (a serial run's one log put in key order alike), the hardware collectives'
    /// iteration records and counts, the multicast copies. At a pause and at the end.
    pub(crate) fn merge_shard_records(&mut self) {
        if let Some(c) = self.fabric.capture.as_mut() {
            c.merge_logs();
        }
        if let Some(hw) = self.nics.hw.as_mut() {
            hw.merge_lanes();
        }
        if let Some(m) = self.fabric.multicast.as_mut() {
            m.merge_lanes();
        }
    }

    /// Writes the timeline's spans that ended before `before` (those of the run's
    /// context taken first).
    pub(crate) fn timeline_write(&mut self, before: Time) {
        let Some(tl) = self.timeline.as_deref_mut() else {
            return;
        };
        tl.take(&mut self.ctx.spans_ended);
        let flows = &self.nics.flows;
        tl.write_before(
            before,
            &self.traces,
            &self.nics.launcher.phase_times,
            &|f| {
                let fl = &flows[f as usize];
                fl.started.then_some(fl.spec.start)
            },
        );
    }

    /// Writes the rest of the timeline and closes it (after the run, or when it was
    /// cut short). A write error is returned once.
    pub fn finish_timeline(&mut self) -> Result<(), String> {
        let Some(tl) = self.timeline.as_deref_mut() else {
            return Ok(());
        };
        tl.take(&mut self.ctx.spans_ended);
        let flows = &self.nics.flows;
        tl.finish(&self.traces, &self.nics.launcher.phase_times, &|f| {
            let fl = &flows[f as usize];
            fl.started.then_some(fl.spec.start)
        });
        match tl.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    pub(crate) fn finish_accounting(&mut self) {
        let now = self.ctx.now;
        self.merge_shard_records();
        if let Some(c) = self.fabric.credit_mut() {
            c.finish(now);
        }
        for p in &mut self.fabric.ports {
            if let Some(s) = p.pause_started() {
                p.set_pause_started(None);
                let end = p.last_pause_end().min(now);
                p.stats.paused_ps += end.saturating_sub(s);
            }
        }
    }
}

/// The first multiple of [`crate::sim::livelock::CHECK_EVERY`] after `popped`: when the
/// loop's periodic checks run next.
fn next_multiple(popped: u64) -> u64 {
    let every = crate::sim::livelock::CHECK_EVERY as u64;
    (popped / every + 1) * every
}

/// Credit returns reach port `p`; a port that waited for them tries to send. Out of line:
/// only credit runs have these events, and the loop's other paths keep their registers.
#[inline(never)]
fn credit_return(ctx: &mut Ctx, fabric: &mut Fabric, nics: &mut Nics, p: crate::base::ids::PortId) {
    if fabric.on_credit_return(ctx, p) {
        match fabric.ports.at(p).owner() {
            NodeKind::Switch(_) => fabric.try_transmit::<true>(ctx, p),
            NodeKind::Host(h) => nics.try_transmit::<true>(ctx, fabric, h, p),
        }
    }
}

/// The GSPs' state, for their timers (only GSE runs have them).
fn gse(roles: &mut RoleStates) -> &mut crate::model::gse::Gse {
    roles
        .gse
        .as_deref_mut()
        .expect("GSE timers run in GSE mode")
}

/// Hands event `ev`, due now (`t`), to the component it names: the serial loop's
/// dispatch, and a shard's (`sim/shards/`, with no recorder: it samples between
/// windows). Always inlined, and the handlers both call are too: with two call sites the
/// compiler had kept five of them out of the serial loop (+5 % instructions at k = 8).
/// `EXTRAS`: whether the handlers test for the fabric's extras ([`crate::model::fabric`]).
#[inline(always)]
pub(crate) fn dispatch<const EXTRAS: bool>(
    ctx: &mut Ctx,
    fabric: &mut Fabric,
    roles: &mut RoleStates,
    nics: &mut Nics,
    record: Option<&mut Recorder>,
    t: Time,
    ev: Event,
) {
    match ev {
        Event::LinkArrive(l) => {
            if let Some((port, pkt)) = fabric.on_link_arrive::<EXTRAS>(ctx, roles, l) {
                nics.host_receive::<EXTRAS>(ctx, fabric, port, pkt);
            }
        }
        Event::PortWake(p) => {
            let port = fabric.ports.at_mut(p);
            if port.wake_at == t {
                port.wake_at = Time::MAX;
            }
            match port.owner() {
                NodeKind::Switch(_) => fabric.try_transmit::<EXTRAS>(ctx, p),
                NodeKind::Host(h) => nics.try_transmit::<EXTRAS>(ctx, fabric, h, p),
            }
        }
        Event::FlowArrivals => nics.on_flow_arrivals(ctx, fabric),
        Event::Rto(f) => nics.on_rto(ctx, fabric, f),
        Event::CnpTimer(f) => nics.on_cnp_timer(ctx, fabric, f),
        Event::PfcRefresh(p) => fabric.on_pfc_refresh(ctx, p),
        Event::Sample => record
            .expect("a sharded run samples between windows, not by event")
            .on_sample(ctx, fabric, nics),
        Event::Reorder(i) => gse(roles).on_reorder_timer(fabric, ctx, i),
        Event::Grant(h) => gse(roles).on_grant_timer(fabric, ctx, h),
        Event::CreditReturn(p) => credit_return(ctx, fabric, nics, p),
        Event::Fault(i) => fabric.on_fault_step(std::slice::from_mut(ctx), &[], i),
        Event::Replay(l) => fabric.on_replay(ctx, l),
        Event::Collective(i) => nics.on_collective_timer(ctx, fabric, i),
    }
}
