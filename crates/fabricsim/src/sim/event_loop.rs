//! The event loop and its dispatch: pop the next event, stop at `max_time`, a pause
//! time or a stall, and hand the event to the handler of the component it names.
//! Events are ordered by (time, insertion), so a run is a pure function of its inputs.

use crate::engine::Event;
use crate::scenario::config::LbAlgorithm;
use crate::units::Time;

use crate::sim::*;

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
        if !self.started {
            self.started = true;
            // The event calendar's window should span a frame's serialization plus a
            // link delay (with some margin): nearly every event is scheduled that far
            // ahead at most.
            let frame = self.params.mtu + self.params.header;
            let delay = self.links.iter().map(|l| l.delay).max().unwrap_or(0);
            let ser = (self.ports.iter())
                .map(|p| p.tx_time(frame + p.sec_extra as u64))
                .max()
                .unwrap_or(0);
            self.queue.set_horizon((delay + ser) / 8 * 9);
            // Worth it only where the routing tables miss the cache (large models).
            self.route_ahead =
                self.prefetch && self.params.lb == LbAlgorithm::Ecmp && self.gse.is_none();
            self.queue.set_lookahead(self.prefetch);
            if !self.launcher.order.is_empty() {
                let t0 = self.flows[self.launcher.order[0] as usize].spec.start;
                self.queue.push(t0, Event::FlowArrivals);
            }
            if self.params.queue_interval.is_some() || self.params.rate_interval.is_some() {
                self.queue.push(0, Event::Sample);
            }
        }
        let total = self.flows.len();
        let stop = self.params.max_time.min(until);
        let mut tick = 0u32;
        let outcome = loop {
            if self.flows_done == total {
                break Outcome::Completed;
            }
            let Some((t, ev)) = self.queue.pop() else {
                break Outcome::Starved;
            };
            if t > stop {
                if t > self.params.max_time {
                    self.now = self.params.max_time;
                    break Outcome::MaxTime;
                }
                self.queue.unpop();
                self.now = until;
                return None;
            }
            if t.saturating_sub(self.last_progress) > self.params.stall_timeout
                && self.flows_started > self.flows_done
            {
                self.now = self.last_progress + self.params.stall_timeout;
                break Outcome::Stalled(crate::stall::diagnose(self));
            }
            self.now = t;
            if self.prefetch {
                self.prefetch_ahead();
            }
            match ev {
                Event::LinkArrive(l) => self.on_link_arrive(l),
                Event::PortWake(p) => {
                    let port = &mut self.ports[p];
                    if port.wake_at == t {
                        port.wake_at = Time::MAX;
                    }
                    self.try_transmit(p.0);
                }
                Event::FlowArrivals => self.on_flow_arrivals(),
                Event::Rto(f) => self.on_rto(f),
                Event::CnpTimer(f) => self.on_cnp_timer(f),
                Event::PfcRefresh(p) => self.on_pfc_refresh(p),
                Event::Sample => self.on_sample(),
                Event::Reorder(i) => self.on_reorder_timer(i),
                Event::Grant(h) => self.on_grant_timer(h),
            }
            tick = tick.wrapping_add(1);
            if tick & 0xf_ffff == 0 {
                progress(&self.progress());
            }
        };
        self.finish_accounting();
        progress(&self.progress());
        Some(outcome)
    }

    pub(crate) fn finish_accounting(&mut self) {
        let now = self.now;
        for p in &mut self.ports {
            if let Some(s) = p.pause_started.take() {
                let end = p.last_pause_end().min(now);
                p.stats.paused_ps += end.saturating_sub(s);
            }
        }
    }
}
