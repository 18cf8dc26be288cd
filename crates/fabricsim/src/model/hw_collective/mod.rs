//! Hardware collectives (document 003): the NIC's collective engine and the switches'
//! multicast.
//!
//! Software defines a logical tree over the collective's ranks ([`tree`]). Each rank's
//! NIC, once its own host has entered the collective and every child's request has come
//! in, combines its children's contributions with its own ([`reduce`], in child order)
//! and, a per-level processing latency later, sends one message up to its parent. The
//! root's result is broadcast down by the routers' multicast tables ([`multicast`]), or
//! with `multicast = false` by unicast messages down the same tree, each node forwarding
//! to its children as soon as it has the result. A barrier carries no data; a broadcast
//! gathers empty requests and multicasts the root's data; an allreduce carries `size`
//! bytes both ways. Leaves send at once: the latency is the NIC's processing of what
//! came in (`message_latency` per child message, one after another, then
//! `level_latency`), so on an idle fabric a tree of height d finishes
//! d x (level latency + one message's hop latency) after every rank entered, plus the
//! multicast down, with message latency 0 (a test checks this).
//!
//! Reliability (document 003 leaves it to the transport): every message is one packet.
//! A rank that sent its contribution up and has no result `timeout` later sends it again
//! (at most `retries` times, then it gives up and the iteration counts it as failed); a
//! parent that already has the result answers a repeated request with the result by
//! unicast, and ignores it otherwise (its own timer asks further up). Lost multicast
//! copies and lost requests are thus recovered; duplicates are ignored.
//!
//! A job can compute between collectives: each rank enters iteration i+1 `compute`
//! after its call for iteration i returned (iteration 0 at `start + compute`). A call
//! costs `host_overhead` of host software before the NIC has the request and again
//! after the NIC has the result (posting the descriptor, seeing the completion).
//!
//! Several ranks may share a NIC (`ranks_per_host`: document 003's nodes have two CPUs
//! and one NIC): a message between two ranks of one NIC never leaves it, and a
//! multicast copy reaching a NIC is delivered to each of its ranks.
//!
//! Every iteration's result is checked against the direct computation over all ranks'
//! inputs ([`reduce::agrees`]); `collectives.csv` reports it with the timing.

pub mod reduce;
pub mod tree;

use crate::base::units::Time;
use reduce::{DType, Op};
use serde::Deserialize;
use tree::Tree;

/// Which collective.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum HwKind {
    /// Every rank waits for every other: requests up, an empty release down.
    Barrier,
    /// Every rank gets the reduction of every rank's data.
    Allreduce,
    /// Every rank gets the root's data (after the requests came up).
    Bcast,
}

impl HwKind {
    /// Its name in scenarios and tables.
    pub fn name(self) -> &'static str {
        match self {
            HwKind::Barrier => "barrier",
            HwKind::Allreduce => "allreduce",
            HwKind::Bcast => "bcast",
        }
    }
}

/// One hardware collective job, resolved (a `hw_collective` workload entry).
#[derive(Clone, Debug)]
pub struct HwSpec {
    /// The `[[workload]]` entry it came from (error messages).
    pub entry: u32,
    /// Which collective.
    pub kind: HwKind,
    /// Hosts, in rank order.
    pub ranks: Vec<u32>,
    /// The logical tree over the ranks.
    pub tree: Tree,
    /// Reduction (allreduce).
    pub op: Op,
    /// Element type.
    pub dtype: DType,
    /// Elements of data (0 for a barrier).
    pub count: u32,
    /// NIC processing per level of the tree.
    pub level_latency: Time,
    /// NIC processing per message received from a child (one after another).
    pub message_latency: Time,
    /// Time after sending a contribution up before asking again.
    pub timeout: Time,
    /// Requests sent again at most, before a rank gives up.
    pub retries: u32,
    /// The NIC port (plane) the collective uses.
    pub plane: u32,
    /// Results down by switch multicast (else by unicast down the tree).
    pub multicast: bool,
    /// First iteration's entry (before `compute`).
    pub start: Time,
    /// Iterations.
    pub repeat: u32,
    /// Compute step before each iteration.
    pub compute: Time,
    /// Host software per call: from a rank's call to its NIC having the request, and
    /// from the NIC having the result to the call's return.
    pub host_overhead: Time,
    /// Key of the inputs (from the run seed and the entry).
    pub key: u64,
}

impl HwSpec {
    /// Payload bytes of a message going up (a request, or a partial reduction).
    pub fn up_bytes(&self) -> u64 {
        match self.kind {
            HwKind::Allreduce => self.count as u64 * self.dtype.bytes(),
            HwKind::Barrier | HwKind::Bcast => 0,
        }
    }
    /// Payload bytes of the result coming down.
    pub fn down_bytes(&self) -> u64 {
        match self.kind {
            HwKind::Barrier => 0,
            HwKind::Allreduce | HwKind::Bcast => self.count as u64 * self.dtype.bytes(),
        }
    }
    /// Rank `r`'s input to iteration `iter`.
    pub fn input(&self, r: u32, iter: u32) -> Vec<u64> {
        (0..self.count)
            .map(|e| self.dtype.input(self.key, r, iter, e))
            .collect()
    }
    /// What every rank should get from iteration `iter`: the tree's reduction, the
    /// root's data, or nothing.
    pub fn expected(&self, iter: u32) -> Vec<u64> {
        match self.kind {
            HwKind::Barrier => Vec::new(),
            HwKind::Bcast => self.input(self.tree.root, iter),
            HwKind::Allreduce => reduce::tree_fold(
                self.op,
                self.dtype,
                self.tree.root,
                &self.tree.children,
                &|r| self.input(r, iter),
            ),
        }
    }
}

pub use crate::kernel::packet::CollMsg;

/// One iteration's record.
#[derive(Clone, Copy, Debug, Default)]
pub struct IterRecord {
    /// First rank's entry.
    pub first_entry: Option<Time>,
    /// Last rank's entry.
    pub last_entry: Option<Time>,
    /// Last rank's receipt of the result.
    pub finish: Option<Time>,
    /// Ranks that received the result.
    pub done: u32,
    /// Ranks that gave up.
    pub failed: u32,
    /// Timeouts (requests sent again).
    pub timeouts: u32,
    /// The result the root produced agrees with the direct computation (every rank
    /// received that result).
    pub verified: Option<bool>,
}

/// `summary.json`'s `collectives` section.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HwSummary {
    /// Hardware collective jobs.
    pub collectives: usize,
    /// Iterations in all.
    pub iterations: usize,
    /// Iterations every rank completed.
    pub completed: usize,
    /// Rank-iterations given up.
    pub failed: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Mean latency of the completed iterations, from the last entry (ns).
    pub latency_mean_ns: Option<f64>,
    /// Largest such latency (ns).
    pub latency_max_ns: Option<f64>,
    /// Every produced result equals the direct computation.
    pub verified: bool,
    /// Collective packets the NICs sent and received.
    pub packets_sent: u64,
    /// Received.
    pub packets_received: u64,
    /// Copies the switches made for multicast.
    pub multicast_copies: u64,
}
