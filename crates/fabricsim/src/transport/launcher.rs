//! Flow starts: arrivals, start-after dependencies and job iterations.

use crate::cc::CongestionControl;
use crate::engine::Event;

use crate::sim::*;

impl Simulation {
    pub(crate) fn on_flow_arrivals(&mut self) {
        while self.next_arrival < self.arrival_order.len() {
            let fid = self.arrival_order[self.next_arrival];
            let f = &mut self.flows[fid as usize];
            if f.spec.start > self.now {
                self.queue.push(f.spec.start, Event::FlowArrivals);
                return;
            }
            self.next_arrival += 1;
            self.start_flow(fid);
        }
    }

    /// Starts flow `fid` now: its NIC begins sending it.
    pub(crate) fn start_flow(&mut self, fid: u32) {
        let now = self.now;
        let prev = self.deps.prev_on_conn[fid as usize];
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
        self.hosts[h].active.push(fid);
        let port = self.hosts[h].port;
        self.schedule_wake(port, now);
    }

    /// Flow `fid` was fully received: release what waited for it and account its job.
    pub(crate) fn on_flow_finished(&mut self, fid: u32) {
        let now = self.now;
        let (a, b) = (
            self.deps.off[fid as usize] as usize,
            self.deps.off[fid as usize + 1] as usize,
        );
        for k in a..b {
            let nxt = self.deps.after[k];
            self.release(nxt);
        }
        let j = self.deps.job[fid as usize];
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
            self.deps.noff[j as usize] as usize,
            self.deps.noff[j as usize + 1] as usize,
        );
        for k in a..b {
            let nj = self.deps.next_jobs[k] as usize;
            self.jobs[nj].started = Some(now);
            let (f0, n) = (self.jobs[nj].spec.first_flow, self.jobs[nj].spec.n_flows);
            for f in f0..f0 + n {
                if self.deps.root[f as usize] {
                    self.release(f);
                }
            }
        }
    }

    /// One thing flow `f` waited for is done; start it if nothing else remains.
    pub(crate) fn release(&mut self, f: u32) {
        let p = &mut self.deps.pending[f as usize];
        debug_assert!(*p > 0);
        *p -= 1;
        if *p == 0 {
            self.start_flow(f);
        }
    }
}
