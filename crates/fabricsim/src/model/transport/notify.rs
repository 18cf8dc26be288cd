//! Where the nodes of a dependency graph run, and what it costs one host to learn of
//! something on another (`[transport] notify_latency`): the delays the launcher
//! ([`super::launcher`]) adds to the edges between places, which the serial engine
//! applies and a run cut into shards relies on (`sim/shards/`).

use crate::base::units::Time;
use crate::model::workload::{DepPoint, JobSpec, Node, TimedDep};

/// Where the nodes of the dependency graph run, and what it costs one host to learn of
/// something on another: `[transport] notify_latency`. A flow is received at its
/// destination, starts and is sent at its source; a phase runs on its host, if it has one
/// ([`crate::model::workload::Phase::host`]). A phase with no host joins the graph (a barrier,
/// an iteration's start): one that waits for something is told by each host it waits
/// for and tells each host that waits for it, a notification each way; one that waits
/// for nothing fires at its `not_before`, a time every host knows, and tells nobody.
pub(crate) struct Notify<'a> {
    /// (source, destination) of each flow.
    pub(crate) flows: &'a [(u32, u32)],
    /// Host of each phase.
    pub(crate) phases: &'a [Option<u32>],
    /// Phases that wait for something (an edge, or the job iteration before theirs).
    pub(crate) waits: Vec<bool>,
    /// The latency between two hosts.
    pub(crate) latency: Time,
}

impl<'a> Notify<'a> {
    /// The hosts of a workload's nodes (`phases`: their hosts) and its edges and jobs.
    pub(crate) fn new(
        flows: &'a [(u32, u32)],
        phases: &'a [Option<u32>],
        timed: &[TimedDep],
        jobs: &[JobSpec],
        latency: Time,
    ) -> Self {
        let mut waits = vec![false; phases.len()];
        for t in timed {
            if let Node::Phase(p) = t.after {
                waits[p as usize] = true;
            }
        }
        for js in jobs.iter().filter(|js| js.after.is_some()) {
            let first = js.first_phase as usize;
            waits[first..first + js.n_phases as usize].fill(true);
        }
        Notify {
            flows,
            phases,
            waits,
            latency,
        }
    }

    /// Where node `v` runs: `Ok(host)`, or `Err(waits)` for a join point.
    fn place(&self, v: Node, from: DepPoint) -> Result<u32, bool> {
        match (v, from) {
            (Node::Flow(f), DepPoint::End) => Ok(self.flows[f as usize].1),
            (Node::Flow(f), _) => Ok(self.flows[f as usize].0),
            (Node::Phase(p), _) => self.phases[p as usize].ok_or(self.waits[p as usize]),
        }
    }

    /// The notification latency of an edge: `after` waits for `before` to reach `from`.
    pub(crate) fn latency(&self, before: Node, from: DepPoint, after: Node) -> Time {
        if self.latency == 0 {
            return 0;
        }
        let crosses = match (self.place(before, from), self.place(after, DepPoint::Start)) {
            (Ok(a), Ok(b)) => a != b,
            // Into a join point, or out of one that waited for something.
            (Ok(_), Err(_)) | (Err(true), Ok(_)) => true,
            (Err(false), Ok(_)) | (Err(_), Err(_)) => false,
        };
        if crosses {
            self.latency
        } else {
            0
        }
    }

    /// The latency before node `v` (a flow or a phase, as numbered in the graph of `n`
    /// flows) hears that the job iteration it waits for has finished: the iteration's
    /// ranks tell each of its first nodes (a join point among them is told at once and
    /// tells its hosts through its edges).
    pub(crate) fn job_latency(&self, n: usize, v: u32) -> Time {
        let on_host = (v as usize) < n || self.phases[v as usize - n].is_some();
        if on_host {
            self.latency
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_cost_their_latency_only_between_places() {
        // Flow 0: host 0 -> 1; flow 1: host 1 -> 2. Phase 0: a root join (waits for
        // nothing); phase 1: compute on host 1; phase 2: a join that waits (flow 1 ends
        // into it).
        let flows = [(0, 1), (1, 2)];
        let phases = [None, Some(1), None];
        let timed = [TimedDep::end(Node::Flow(1), Node::Phase(2))];
        let n = Notify::new(&flows, &phases, &timed, &[], 7);
        let (f, p) = (Node::Flow, Node::Phase);
        use DepPoint::{End, Sent, Start};
        // Received at host 1, which sends flow 1: same host.
        assert_eq!(n.latency(f(0), End, f(1)), 0);
        // Flow 0 starts at host 0; flow 1 starts at host 1.
        assert_eq!(n.latency(f(0), Start, f(1)), 7);
        assert_eq!(n.latency(f(0), Sent, f(1)), 7);
        // Flow 1 is received at host 2; compute on host 1.
        assert_eq!(n.latency(f(1), End, p(1)), 7);
        assert_eq!(n.latency(f(0), End, p(1)), 0);
        // Out of a root join: a time everyone knows. Into any join, or out of one that
        // waited: a notification.
        assert_eq!(n.latency(p(0), End, f(0)), 0);
        assert_eq!(n.latency(f(1), End, p(2)), 7);
        assert_eq!(n.latency(p(2), End, f(1)), 7);
        assert_eq!(n.latency(p(0), End, p(2)), 0);
        // No latency configured: nothing costs.
        let zero = Notify::new(&flows, &phases, &timed, &[], 0);
        assert_eq!(zero.latency(f(0), Start, f(1)), 0);
        assert_eq!(zero.job_latency(2, 0), 0);
        // A job's next iteration: its flows and hosted phases are told; joins at once.
        assert_eq!(n.job_latency(2, 1), 7);
        assert_eq!(n.job_latency(2, 3), 7);
        assert_eq!(n.job_latency(2, 2), 0);
    }
}
