//! What the caller's thread does between windows: fault steps and samples at their
//! instants, the shards' tallies and job iterations accounted, the livelock report,
//! and the shards gathered back into the run's one context at a pause or the end.

use super::*;

impl Simulation {
    /// Fault step due at `t`: every event before its time has run, none at it, so it
    /// acts at the start of its instant, as the serial loop's first event there. Ends
    /// the run when the livelock diagnosis has its sample.
    pub(super) fn fault_between(
        &mut self,
        sh: &mut Shards,
        t: Time,
        diagnosis: &mut Option<crate::sim::livelock::Tally>,
    ) -> Option<WindowsEnd> {
        sh.between += 1;
        let i = sh.next_fault;
        sh.next_fault += 1;
        for c in &mut sh.ctxs {
            c.now = c.now.max(t);
        }
        let shard_of_node = &sh.partition.shard_of_node;
        self.fabric
            .on_fault_step(&mut sh.ctxs, shard_of_node, i as u32);
        if let Some(d) = diagnosis.as_mut() {
            d.add(self, Event::Fault(i as u32));
            if d.len() >= crate::sim::livelock::SAMPLE as u64 {
                let d = diagnosis.take().expect("counting");
                return Some(WindowsEnd::Ended(self.sharded_livelock(sh, d)));
            }
        }
        None
    }

    /// The sample due at `t`: every event up to its time has run, none after, so it sees
    /// the model as the serial loop's sample does. Ends the run when the livelock
    /// diagnosis has its sample.
    pub(super) fn sample_between(
        &mut self,
        sh: &mut Shards,
        t: Time,
        tally: &Tally,
        diagnosis: &mut Option<crate::sim::livelock::Tally>,
    ) -> Option<WindowsEnd> {
        let total = self.nics.flows.len();
        sh.last_sample = t;
        sh.between += 1;
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
            if d.len() >= crate::sim::livelock::SAMPLE as u64 {
                let d = diagnosis.take().expect("counting");
                return Some(WindowsEnd::Ended(self.sharded_livelock(sh, d)));
            }
        }
        None
    }

    /// The livelock report of a sharded run: the events the shards ran past their
    /// budget, counted into `tally` beside what the caller's thread counted.
    #[cold]
    pub(super) fn sharded_livelock(
        &mut self,
        sh: &mut Shards,
        mut tally: crate::sim::livelock::Tally,
    ) -> Outcome {
        for c in &mut sh.ctxs {
            for ev in std::mem::take(&mut c.past_budget) {
                tally.add(self, ev);
            }
        }
        let now = (sh.ctxs.iter().map(|c| c.now))
            .max()
            .unwrap_or(0)
            .max(sh.last_sample);
        let popped = sh.ctxs.iter().map(|c| c.queue.popped()).sum::<u64>() + sh.between;
        self.ctx.now = now;
        Outcome::Livelock(crate::sim::livelock::report(self, (now, popped), tally))
    }

    /// Between windows: job iterations accounted ([`Self::settle_jobs`]) and the
    /// releases that late releases made for other shards handed over, until neither
    /// leaves anything (each may make more of the other).
    pub(super) fn settle_between(&mut self, sh: &mut Shards) {
        loop {
            self.settle_jobs(sh);
            let mut late: Vec<(u32, Time, u32)> = Vec::new();
            for c in &mut sh.ctxs {
                late.append(&mut c.late_releases);
            }
            if late.is_empty() {
                if self.timeline.is_some() {
                    let before = sh.ctxs.iter().map(|c| c.window_end).min().unwrap_or(0);
                    for c in &mut sh.ctxs {
                        if let Some(tl) = self.timeline.as_deref_mut() {
                            tl.take(&mut c.spans_ended);
                        }
                    }
                    self.timeline_write(before);
                }
                return;
            }
            for (to, at, v) in late {
                let ctx = &mut sh.ctxs[to as usize];
                self.nics.take_release(ctx, &mut self.fabric, at, v);
            }
        }
    }

    /// Accounts the job-iteration nodes the shards saw done in the last window, in time
    /// order as the serial engine does at once: finished iterations get their finish
    /// time, and the first nodes of the iterations waiting for them are released, by
    /// their shards' timers, after their notification latencies, or late when that is
    /// before the window's end (the cut admits that only where nothing it sets off acts
    /// before then: `dependency_crossings`).
    pub(super) fn settle_jobs(&mut self, sh: &mut Shards) {
        let mut done: Vec<(Time, u32)> = Vec::new();
        for c in &mut sh.ctxs {
            done.append(&mut c.jobs_done);
        }
        if done.is_empty() {
            return;
        }
        done.sort_unstable();
        for (t, v) in done {
            for (node, at) in self.nics.account_job_node(t, v) {
                let s = self.nics.owner(node, 0) as usize;
                self.nics
                    .take_release(&mut sh.ctxs[s], &mut self.fabric, at, node);
            }
        }
    }

    /// After the run: the shards' counts summed into the run's context, and every packet
    /// still queued or on a link moved into its arena, so that outputs and invariant
    /// checks read one model. (Their INT records stay behind: nothing reads them once
    /// the run is over.)
    pub(super) fn gather(&mut self, sh: &mut Shards) {
        deliver(&mut sh.ctxs, &mut self.fabric, &mut self.nics);
        self.settle_between(sh);
        let p = &sh.partition;
        let fabric = &mut self.fabric;
        let main = &mut self.ctx;
        let mut moved = |d: &mut Desc, s: usize| {
            d.id = sh.ctxs[s].arena.move_into(d.id, &mut main.arena);
        };
        for i in 0..fabric.ports.len() {
            let own = p.shard_of_node[fabric.ports[i].node.idx()] as usize;
            let far = p.shard_of_node[fabric.ports[fabric.ports[i].peer.idx()].node.idx()] as usize;
            for (_, d) in fabric.links[i].ring.iter_mut() {
                moved(d, far);
            }
            // (The descriptors stay in the shard's queue pool, the port's for good.)
            let pool = &mut fabric.queue_pools[fabric.ports[i].pool as usize];
            fabric.ports[i].for_each_queued_mut(pool, |d| moved(d, own));
        }
        // Frames in a sender's replay ring (links that may replay), the sender's.
        if let Some(fs) = fabric.faults.as_mut() {
            for (i, lf) in fs.links.iter_mut().enumerate() {
                let own = p.shard_of_node[fabric.ports[i].node.idx()];
                for (_, d) in lf.wire.iter_mut() {
                    moved(d, own as usize);
                }
            }
        }
        // Packets GSE holds: in the source GSP's VOQs, the destination GSP's reorder
        // buffers (stream = GSP x hosts + host).
        if let Some(g) = self.roles.gse.as_mut() {
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
        main.queue.add_popped(sh.between);
        let ended: usize = sh.ctxs.iter().map(|c| c.tally.phases_ended).sum();
        self.nics.launcher.phases_left -= ended;
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

/// Adds the drops and fault losses the shards logged to the flows' counts.
pub(super) fn merge_flow_drops(ctxs: &mut [Ctx], fabric: &mut Fabric) {
    for c in ctxs {
        for f in c.flow_drops.drain(..) {
            fabric.flow_drops[f as usize] += 1;
        }
        if let Some(fs) = fabric.faults.as_mut() {
            for f in c.flow_lost.drain(..) {
                fs.flow_lost[f as usize] += 1;
            }
        }
    }
}
