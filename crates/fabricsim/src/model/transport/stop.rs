//! Trace jobs that stop when a rank fails (`failure.action = "stop"`): a node of such a
//! job released at or after the failure is skipped instead of run. It counts as done for
//! the run's completion and passes its release on, through the launcher's timers, so the
//! rest of the job is skipped as what it waits for finishes; what was already running
//! (transfers in flight) finishes.

use super::launcher::Timer;
use crate::base::units::Time;
use crate::kernel::ctx::*;
use crate::model::fabric::Fabric;
use crate::model::transport::Nics;

impl Nics {
    /// Whether node `v` belongs to a job stopped by `now`.
    pub(super) fn stopped(&self, v: u32, now: Time) -> bool {
        let n = self.flows.len() as u32;
        let inside = |(first, count): (u32, u32), x: u32| x >= first && x - first < count;
        self.launcher.stops.iter().any(|&(fl, ph, at)| {
            now >= at
                && if v < n {
                    inside(fl, v)
                } else {
                    inside(ph, v - n)
                }
        })
    }

    /// Node `v` of a stopped job would start: it never runs. It counts as done for the
    /// run's completion (a flow sends nothing and is never received, a phase has no
    /// times) and passes the release on at once, so the rest of its job is skipped
    /// as what it waits for finishes.
    #[cold]
    pub(super) fn skip(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, v: u32) {
        let n = self.flows.len() as u32;
        if v < n {
            ctx.tally.flows_started += 1;
            ctx.tally.flows_done += 1;
            ctx.tally.senders_done += 1;
        } else {
            if self.launcher.host_shard.is_empty() {
                self.launcher.phases_left -= 1;
            } else {
                ctx.tally.phases_ended += 1;
            }
        }
        // Through the timers, not at once: a long chain of skipped nodes would
        // otherwise recurse as deep as the chain is long.
        self.set_timer(ctx, fabric, ctx.now, Timer::Skip(v));
        self.job_node_done(ctx, fabric, v);
    }
}
