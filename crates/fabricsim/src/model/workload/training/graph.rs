//! A training job as a graph of compute phases and transfers, before it becomes flows.
//!
//! The schedules ([`super::pipeline`], [`super::data_parallel`]) describe a job at the
//! level its framework sees it: a rank computes (a phase), sends a message (a transfer),
//! waits for messages. [`JobGraph::emit`] turns that into the simulator's workload:
//! each transfer is split over `channels` queue pairs and, under an NCCL-like window,
//! cut into chunks with slot credits ([`crate::model::workload::channel_window`]); each phase becomes a
//! [`crate::model::workload::Phase`]. The same graph, kept in the job's
//! [`super::TrainingSpec`], is evaluated without a network ([`JobGraph::evaluate`]) to
//! give the reference the run is compared with.

use crate::base::param::ParamError;
use crate::base::units::Time;
use crate::model::workload::channel_window::{self, Window};
use crate::model::workload::collective::{Dag, Transfer};
use crate::model::workload::FlowSpec;
use crate::model::workload::{Builder, DepPoint, Node, Phase, TimedDep};

/// A node of a [`JobGraph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobNode {
    /// Transfer `i` (a message from one rank to another).
    Transfer(u32),
    /// Compute phase `i`.
    Phase(u32),
}

/// A message of a training job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Bytes.
    pub size: u64,
    /// It crosses between the campuses.
    pub cross: bool,
}

/// Phases and transfers, and what waits for what: `(before, after)` means `after` may
/// begin once `before` has ended (a transfer ends when it has been fully received).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobGraph {
    /// The messages.
    pub messages: Vec<Message>,
    /// The compute phases (`not_before` absolute).
    pub phases: Vec<Phase>,
    /// Dependencies.
    pub edges: Vec<(JobNode, JobNode)>,
}

/// Where a [`JobGraph`] went in the workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Emitted {
    /// Global index of the graph's phase 0 (phase `i` is `first_phase + i`).
    pub first_phase: u32,
    /// Global flow ids of each message's data (pieces of every channel; no credits).
    pub flows_of: Vec<Vec<u32>>,
}

impl JobGraph {
    /// A point that joins the graph (no host, see [`Phase::host`]): it takes
    /// `duration` and may begin at `not_before` at the earliest.
    pub fn phase(&mut self, duration: Time, not_before: Time) -> JobNode {
        self.phases.push(Phase {
            duration,
            not_before,
            host: None,
        });
        JobNode::Phase((self.phases.len() - 1) as u32)
    }

    /// A compute phase of `duration` on `host`.
    pub fn compute(&mut self, host: u32, duration: Time) -> JobNode {
        self.phases.push(Phase {
            duration,
            not_before: 0,
            host: Some(host),
        });
        JobNode::Phase((self.phases.len() - 1) as u32)
    }

    /// A message from `src` to `dst`.
    pub fn message(&mut self, src: u32, dst: u32, size: u64, cross: bool) -> JobNode {
        self.messages.push(Message {
            src,
            dst,
            size,
            cross,
        });
        JobNode::Transfer((self.messages.len() - 1) as u32)
    }

    /// `after` waits for `before`'s end.
    pub fn after(&mut self, before: JobNode, after: JobNode) {
        self.edges.push((before, after));
    }

    /// End time of every node when message `i` takes `transfer(i)` from its start and
    /// nothing else delays anything: the longest path through the graph. Returns the
    /// phases' end times.
    pub fn evaluate(&self, transfer: impl Fn(usize) -> Time) -> Vec<Time> {
        let (nm, np) = (self.messages.len(), self.phases.len());
        let idx = |v: JobNode| match v {
            JobNode::Transfer(i) => i as usize,
            JobNode::Phase(i) => nm + i as usize,
        };
        let n = nm + np;
        let mut indeg = vec![0u32; n];
        let mut succ_count = vec![0u32; n + 1];
        for &(b, a) in &self.edges {
            indeg[idx(a)] += 1;
            succ_count[idx(b) + 1] += 1;
        }
        for i in 0..n {
            succ_count[i + 1] += succ_count[i];
        }
        let mut fill = succ_count.clone();
        let mut succ = vec![0u32; self.edges.len()];
        for &(b, a) in &self.edges {
            succ[fill[idx(b)] as usize] = idx(a) as u32;
            fill[idx(b)] += 1;
        }
        // Earliest begin of each node, then its end.
        let mut begin: Vec<Time> = (0..n)
            .map(|i| {
                if i < nm {
                    0
                } else {
                    self.phases[i - nm].not_before
                }
            })
            .collect();
        let mut end = vec![0; n];
        let mut ready: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut done = 0;
        while let Some(i) = ready.pop() {
            done += 1;
            end[i] = begin[i]
                + if i < nm {
                    transfer(i)
                } else {
                    self.phases[i - nm].duration
                };
            for k in succ_count[i]..succ_count[i + 1] {
                let j = succ[k as usize] as usize;
                begin[j] = begin[j].max(end[i]);
                indeg[j] -= 1;
                if indeg[j] == 0 {
                    ready.push(j);
                }
            }
        }
        assert_eq!(done, n, "a training job's graph is acyclic by construction");
        end.split_off(nm)
    }

    /// Adds the graph to the workload: messages split over `channels` queue pairs (named
    /// by `group`) and cut by `window`, phases after the workload's. A message with
    /// nothing to wait for starts at `start`.
    pub fn emit(
        &self,
        b: &mut Builder<'_>,
        start: Time,
        group: u64,
        channels: u32,
        window: Option<&Window>,
    ) -> Result<Emitted, ParamError> {
        // Channel parts of each message, as one collective graph.
        let mut dag = Dag::default();
        let mut parts: Vec<Vec<u32>> = Vec::with_capacity(self.messages.len());
        for m in &self.messages {
            let c = u64::from(channels).min(m.size).max(1);
            let ids = (0..c)
                .map(|k| {
                    let size = m.size / c + u64::from(k < m.size % c);
                    dag.transfers.push(Transfer {
                        src: m.src,
                        dst: m.dst,
                        size,
                        channel: k as u32,
                    });
                    (dag.transfers.len() - 1) as u32
                })
                .collect();
            parts.push(ids);
        }
        // Message-to-message edges go part by part (a ring's step k+1 of a channel waits
        // for step k of that channel), as a collective's do.
        for &(bf, af) in &self.edges {
            if let (JobNode::Transfer(x), JobNode::Transfer(y)) = (bf, af) {
                let (px, py) = (&parts[x as usize], &parts[y as usize]);
                for (k, &to) in py.iter().enumerate() {
                    dag.edges.push((px[k.min(px.len() - 1)], to));
                }
            }
        }
        let (dag, pieces) = match window {
            Some(w) => channel_window::apply(&dag, w),
            None => {
                let p = (0..dag.transfers.len() as u32).map(|i| vec![i]).collect();
                (dag, p)
            }
        };
        let w = &mut b.work;
        let first = w.flows.len() as u64;
        let first_phase = w.phases.len() as u64;
        let limit = crate::base::ids::MAX_INDEX as u64;
        if first + dag.transfers.len() as u64 > limit
            || first + dag.transfers.len() as u64 + first_phase + self.phases.len() as u64 > limit
        {
            return Err(ParamError::new(
                "iterations",
                format!(
                    "the training job makes {} flows and {} compute phases: at most {limit} in all per run",
                    dag.transfers.len(),
                    self.phases.len()
                ),
            ));
        }
        let (first, first_phase) = (first as u32, first_phase as u32);
        for t in &dag.transfers {
            w.flows.push(FlowSpec {
                src: t.src,
                dst: t.dst,
                size: t.size,
                start,
            });
            // Channel 0 keeps the name queue pairs had before channels existed, so a
            // job on one channel keeps its ECMP paths.
            let name = match t.channel {
                0 => format!("train{group}/{}-{}", t.src, t.dst),
                c => format!("train{group}/ch{c}/{}-{}", t.src, t.dst),
            };
            let key = crate::base::seed::component_seed(b.seed, &name);
            w.conn.push(Some(key));
        }
        w.deps
            .extend(dag.edges.iter().map(|&(x, y)| (first + x, first + y)));
        let flow = |i: u32| Node::Flow(first + i);
        w.timed.extend(dag.sent.iter().map(|&(x, y)| TimedDep {
            before: flow(x),
            after: flow(y),
            lag: 0,
            from: DepPoint::Sent,
        }));
        w.phases.extend(&self.phases);
        // The data flows of each message: its channel parts' pieces.
        let flows_of: Vec<Vec<u32>> = parts
            .iter()
            .map(|ps| {
                ps.iter()
                    .flat_map(|&p| pieces[p as usize].iter().map(|&f| first + f))
                    .collect()
            })
            .collect();
        let phase = |i: u32| Node::Phase(first_phase + i);
        for &(bf, af) in &self.edges {
            match (bf, af) {
                (JobNode::Phase(x), JobNode::Phase(y)) => {
                    w.timed.push(TimedDep::end(phase(x), phase(y)))
                }
                (JobNode::Phase(x), JobNode::Transfer(y)) => w.timed.extend(
                    (flows_of[y as usize].iter()).map(|&f| TimedDep::end(phase(x), Node::Flow(f))),
                ),
                (JobNode::Transfer(x), JobNode::Phase(y)) => w.timed.extend(
                    (flows_of[x as usize].iter()).map(|&f| TimedDep::end(Node::Flow(f), phase(y))),
                ),
                (JobNode::Transfer(_), JobNode::Transfer(_)) => {}
            }
        }
        Ok(Emitted {
            first_phase,
            flows_of,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluation_is_the_longest_path() {
        // p0 (5) -> m0 (3) -> p1 (2); p0 -> p2 (20); p1, p2 -> p3 (1), p3 not before 40.
        let mut g = JobGraph::default();
        let p0 = g.phase(5, 0);
        let m0 = g.message(0, 1, 100, false);
        let p1 = g.phase(2, 0);
        let p2 = g.phase(20, 0);
        let p3 = g.phase(1, 40);
        g.after(p0, m0);
        g.after(m0, p1);
        g.after(p0, p2);
        g.after(p1, p3);
        g.after(p2, p3);
        assert_eq!(g.evaluate(|_| 3), vec![5, 10, 25, 41]);
        // A slower transfer moves p1 but not the join.
        assert_eq!(g.evaluate(|_| 30), vec![5, 37, 25, 41]);
        assert_eq!(g.evaluate(|_| 50), vec![5, 57, 25, 58]);
    }
}
