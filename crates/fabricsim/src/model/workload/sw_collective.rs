//! Software collectives (`kind = "sw_collective"`): MPI-style barrier, AllReduce and
//! broadcast built from small point-to-point messages, each of which costs the CPUs at
//! both ends an overhead.
//!
//! Document 003 (Sunway, tables 2-4) sets its NIC's hardware collectives against the
//! same collectives run in software (the Intel MPI Benchmarks over point-to-point
//! messages): 59 us against 7.7 us for a barrier of 256 nodes. A software collective is
//! a few rounds of small messages, and for small messages the time goes to the
//! per-message software cost at each end (LogP's overhead `o`, Culler et al., "LogP:
//! towards a realistic model of parallel computation", PPoPP 1993) and to the network's
//! latency, once per round. This kind emits only flows and dependency edges, so it runs
//! on every fabric: credit-based Sunway planes and Ethernet with PFC alike.
//!
//! The algorithms are MPICH's (Thakur, Rabenseifner and Gropp, "Optimization of
//! collective communication operations in MPICH", IJHPCA 2005); `n` is the number of
//! ranks (the hosts in order), `R = ceil(log2 n)`:
//! - `barrier`: dissemination (Hensgen, Finkel and Manber, 1988): `R` rounds; in round
//!   `k` rank `r` sends `size` bytes to `(r + 2^k) mod n` and receives from
//!   `(r - 2^k) mod n`.
//! - `allreduce`: recursive doubling: in round `k` rank `r` exchanges `size` bytes with
//!   `r XOR 2^k`, `log2 n` rounds. When `n` is not a power of two, with `p` the largest
//!   power of two below `n`, the first `2(n - p)` ranks fold in pairs: before the
//!   doubling each odd one of them sends its data to the even one below it, the
//!   doubling runs over the `p` ranks left (the even ones of the pairs and every rank
//!   from `2(n - p)` on), and after it each even rank of a pair sends the result to its
//!   odd partner: `log2 p + 2` rounds, `p log2 p + 2(n - p)` messages.
//! - `bcast`: binomial tree from `root` (default: rank 0): with ranks numbered relative
//!   to the root, in round `k` every rank below `2^k` (those that hold the data) sends
//!   `size` bytes to relative rank `+ 2^k` if it exists: `R` rounds, `n - 1` messages.
//!
//! **The CPU model.** Each rank's CPU runs its operations one after another, in round
//! order, a round's send before its receive (`MPI_Sendrecv`): posting a send takes
//! `send_overhead`, after which the message leaves; taking a received message in takes
//! `recv_overhead`, once the message is fully there and the CPU has finished what came
//! before. A message may arrive before its receiver got to it (it waits, as an eager
//! MPI message does). As edges of the simulator's graph ([`super::TimedDep`]): the send
//! that follows a receive starts `recv_overhead + send_overhead` after both the received
//! flow's end and the previous send's start (the CPU was busy posting it until then); a
//! send after a send starts `send_overhead` after that send's start. Each iteration
//! begins with a zero-length phase (its start; the first sends leave `send_overhead`
//! after it) and ends with one zero-length phase per rank after its last operation (a
//! last receive's overhead included); the iteration is complete when every rank's final
//! phase has ended, and the next iteration (`repeat`) begins then. `jobs.csv` shows each
//! iteration as `sw_barrier`, `sw_allreduce` or `sw_bcast`.
//!
//! The default overheads (1 us each) are reconstructed [recon]: document 003 gives
//! only the totals (a 256-node software barrier, 8 rounds, takes 59 us: 7.4 us a round).
//! The lower bound in `jobs.csv` is the longest path through the iteration's graph with
//! every message at its ideal FCT (`Simulation::job_lower_bound`); on an idle fabric
//! the run meets it, e.g. a barrier takes `R x (L + send_overhead + recv_overhead)`.

use super::{
    all_hosts, check_size, resolve_host, resolve_set, Builder, DepPoint, Generator, HostRef,
    HostSet, JobKind, JobSpec, Node, Phase, TimedDep, DEFAULT_START,
};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Time, US};
use crate::model::workload::FlowSpec;
use serde::Deserialize;

/// The software collectives.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SwCollective {
    /// Dissemination barrier.
    Barrier,
    /// Recursive-doubling AllReduce (with the fold for n not a power of two).
    Allreduce,
    /// Binomial-tree broadcast from `root`.
    Bcast,
}

impl SwCollective {
    /// Every software collective, in declaration order.
    pub const ALL: [SwCollective; 3] = [
        SwCollective::Barrier,
        SwCollective::Allreduce,
        SwCollective::Bcast,
    ];

    /// The name used in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            SwCollective::Barrier => "barrier",
            SwCollective::Allreduce => "allreduce",
            SwCollective::Bcast => "bcast",
        }
    }

    /// The name in `jobs.csv` (apart from the hardware and bulk collectives').
    pub fn job_name(self) -> &'static str {
        match self {
            SwCollective::Barrier => "sw_barrier",
            SwCollective::Allreduce => "sw_allreduce",
            SwCollective::Bcast => "sw_bcast",
        }
    }
}

/// How a barrier or an allreduce is built.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SwAlgorithm {
    /// Dissemination barrier, recursive-doubling allreduce (binomial bcast).
    #[default]
    Default,
    /// Binomial reduce to the root, then binomial broadcast.
    Tree,
}

/// Jobs running a software collective over point-to-point messages.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwCollectiveCfg {
    /// `barrier`, `allreduce` or `bcast`.
    pub collective: SwCollective,
    /// `"default"` (dissemination barrier, recursive-doubling allreduce) or `"tree"`
    /// (binomial reduce then binomial broadcast).
    #[serde(default)]
    pub algorithm: SwAlgorithm,
    /// Hosts taking part, in rank order.
    #[serde(default = "all_hosts")]
    pub hosts: HostSet,
    /// Bytes per message (barrier messages too).
    #[serde(default = "d_size", deserialize_with = "su::bytes")]
    pub size: u64,
    /// Root host of a broadcast (default: rank 0).
    #[serde(default)]
    pub root: Option<HostRef>,
    /// Start of the first iteration.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// Iterations, each starting when the previous one completed at every rank.
    #[serde(default = "d_one")]
    pub repeat: u32,
    /// CPU time to post a message: it leaves this long after the rank got to it.
    #[serde(default = "d_overhead", deserialize_with = "su::time")]
    pub send_overhead: Time,
    /// CPU time to take a message in once it has arrived.
    #[serde(default = "d_overhead", deserialize_with = "su::time")]
    pub recv_overhead: Time,
    /// CPU time per byte of a message at each end (copying it in and out: LogGP's G),
    /// added to both overheads.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub byte_overhead: Option<Time>,
    /// Ranks per host: consecutive ranks share a node (and its NIC).
    #[serde(default = "d_one")]
    pub ranks_per_host: u32,
    /// Time of a message between two ranks of one node (shared memory), beside the
    /// overheads.
    #[serde(default = "d_local", deserialize_with = "su::time")]
    pub local_latency: Time,
}

/// 0.5 us [recon]: a small MPI message through a node's shared memory.
fn d_local() -> Time {
    US / 2
}

fn d_one() -> u32 {
    1
}

/// 8 B: IMB's smallest reduction (one double).
fn d_size() -> u64 {
    8
}

/// 1 us per message and end [recon]: an MPI library's software path on a host CPU.
fn d_overhead() -> Time {
    US
}

/// A message of one iteration, between ranks (indices into the job's hosts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// Round (0-based).
    pub round: u32,
}

/// One operation of a rank's CPU: post message `i`, or take message `i` in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Post message `i` (a send).
    Send(u32),
    /// Take message `i` in (a receive).
    Recv(u32),
}

/// One iteration of a software collective: its messages and each rank's program (its
/// operations in the order its CPU runs them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// The messages, round by round.
    pub messages: Vec<Message>,
    /// Operations of each rank, in order.
    pub programs: Vec<Vec<Op>>,
    /// Rounds.
    pub rounds: u32,
}

impl Schedule {
    fn new(n: usize) -> Schedule {
        Schedule {
            messages: Vec::new(),
            programs: vec![Vec::new(); n],
            rounds: 0,
        }
    }

    /// Adds a round of messages `(src, dst)`: each rank posts its sends of the round
    /// before it takes its receives in.
    fn round(&mut self, pairs: impl IntoIterator<Item = (usize, usize)>) {
        let first = self.messages.len();
        for (src, dst) in pairs {
            self.messages.push(Message {
                src: src as u32,
                dst: dst as u32,
                round: self.rounds,
            });
        }
        for (i, m) in self.messages.iter().enumerate().skip(first) {
            self.programs[m.src as usize].push(Op::Send(i as u32));
        }
        for (i, m) in self.messages.iter().enumerate().skip(first) {
            self.programs[m.dst as usize].push(Op::Recv(i as u32));
        }
        self.rounds += 1;
    }

    /// A binomial reduce to `root` followed by a binomial broadcast from it: `2R` rounds,
    /// `2(n - 1)` messages. The `tree` algorithm of a barrier or an allreduce (MPI
    /// libraries use it for small messages: a barrier is a reduce of nothing).
    pub fn reduce_bcast(n: usize, root: usize) -> Schedule {
        debug_assert!(n >= 2 && root < n);
        let mut s = Schedule::new(n);
        let abs = |v: usize| (v + root) % n;
        for k in (0..ceil_log2(n)).rev() {
            let d = 1usize << k;
            s.round((0..d.min(n - d)).map(|v| (abs(v + d), abs(v))));
        }
        let b = bcast(n, root);
        let first = s.messages.len() as u32;
        for m in &b.messages {
            s.messages.push(Message {
                round: m.round + s.rounds,
                ..*m
            });
        }
        for (prog, more) in s.programs.iter_mut().zip(&b.programs) {
            prog.extend(more.iter().map(|&op| match op {
                Op::Send(i) => Op::Send(i + first),
                Op::Recv(i) => Op::Recv(i + first),
            }));
        }
        s.rounds += b.rounds;
        s
    }

    /// The schedule of `kind` over `n >= 2` ranks; `root` is the broadcast's root rank.
    pub fn build(kind: SwCollective, n: usize, root: usize) -> Schedule {
        debug_assert!(n >= 2 && root < n);
        match kind {
            SwCollective::Barrier => barrier(n),
            SwCollective::Allreduce => allreduce(n),
            SwCollective::Bcast => bcast(n, root),
        }
    }

    /// The iteration's dependency graph, with local indices: flow `i` is message `i`,
    /// phase 0 the iteration's start, phase `1 + r` rank `r`'s completion (the module
    /// docs give the CPU model).
    pub fn lower(&self, send_overhead: Time, recv_overhead: Time) -> Vec<TimedDep> {
        let mut edges = Vec::new();
        for (r, program) in self.programs.iter().enumerate() {
            // The moments whose latest is when the rank's CPU is next free: (node, moment,
            // delay after it).
            let mut free: Vec<(Node, DepPoint, Time)> = vec![(Node::Phase(0), DepPoint::End, 0)];
            for &op in program {
                match op {
                    Op::Send(m) => {
                        let f = Node::Flow(m);
                        edges.extend(free.iter().map(|&(before, from, lag)| TimedDep {
                            before,
                            after: f,
                            lag: lag + send_overhead,
                            from,
                        }));
                        // The message leaves when the CPU has posted it.
                        free = vec![(f, DepPoint::Start, 0)];
                    }
                    Op::Recv(m) => {
                        for t in &mut free {
                            t.2 += recv_overhead;
                        }
                        free.push((Node::Flow(m), DepPoint::End, recv_overhead));
                    }
                }
            }
            let done = Node::Phase(1 + r as u32);
            edges.extend(free.iter().map(|&(before, from, lag)| TimedDep {
                before,
                after: done,
                lag,
                from,
            }));
        }
        edges
    }
}

/// `ceil(log2 n)`.
fn ceil_log2(n: usize) -> u32 {
    n.next_power_of_two().trailing_zeros()
}

fn barrier(n: usize) -> Schedule {
    let mut s = Schedule::new(n);
    for k in 0..ceil_log2(n) {
        let d = 1usize << k;
        s.round((0..n).map(|r| (r, (r + d) % n)));
    }
    s
}

fn allreduce(n: usize) -> Schedule {
    let mut s = Schedule::new(n);
    // p: the largest power of two <= n; the first 2(n - p) ranks fold in pairs.
    let p = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let folded = n - p;
    // Rank of the doubling's virtual rank v.
    let real = |v: usize| if v < folded { 2 * v } else { v + folded };
    if folded > 0 {
        s.round((0..folded).map(|i| (2 * i + 1, 2 * i)));
    }
    for k in 0..p.trailing_zeros() {
        s.round((0..p).map(|v| (real(v), real(v ^ (1 << k)))));
    }
    if folded > 0 {
        s.round((0..folded).map(|i| (2 * i, 2 * i + 1)));
    }
    s
}

fn bcast(n: usize, root: usize) -> Schedule {
    let mut s = Schedule::new(n);
    let abs = |v: usize| (v + root) % n;
    for k in 0..ceil_log2(n) {
        let d = 1usize << k;
        s.round((0..d.min(n - d)).map(|v| (abs(v), abs(v + d))));
    }
    s
}

impl Described for SwCollectiveCfg {
    const ABOUT: &'static str =
        "MPI-style software collectives: rounds of small point-to-point messages, each with CPU overheads at both ends";
    fn params() -> Vec<Param> {
        let kinds: Vec<String> = SwCollective::ALL
            .iter()
            .map(|k| format!("\"{}\"", k.name()))
            .collect();
        vec![
            Param::required("collective", kinds.join(" | ")),
            Param::word(
                "algorithm",
                "default",
                "\"default\" (dissemination barrier, recursive-doubling allreduce) | \"tree\" (binomial reduce, then binomial bcast)",
            ),
            super::hosts_param(),
            Param::bytes("size", d_size(), "bytes per message (barrier messages too)"),
            Param::unset(
                "root",
                "bcast only: root host (id or name), one of hosts; unset: rank 0",
            ),
            Param::time("start", DEFAULT_START, "start of the first iteration"),
            Param::plain(
                "repeat",
                d_one(),
                "iterations, each after the previous completed at every rank",
            ),
            Param::time(
                "send_overhead",
                d_overhead(),
                "[recon] CPU time to post a message; it leaves after it",
            ),
            Param::time(
                "recv_overhead",
                d_overhead(),
                "[recon] CPU time to take an arrived message in",
            ),
            Param::time(
                "byte_overhead",
                0,
                "CPU time per byte of a message at each end (copies: LogGP's G), added to both overheads",
            ),
            Param::plain(
                "ranks_per_host",
                d_one(),
                "ranks per node: consecutive ranks share a host (two CPUs, one NIC)",
            ),
            Param::time(
                "local_latency",
                d_local(),
                "[recon] a message between two ranks of one node (shared memory)",
            ),
        ]
    }
}

impl Generator for SwCollectiveCfg {
    /// Per iteration, with n = hosts x ranks_per_host ranks and M messages (barrier
    /// `n ceil(log2 n)`, allreduce `p log2 p + 2(n - p)`, bcast `n - 1`, tree `2(n - 1)`):
    /// flows at most M (messages inside a host become phases instead), phases `n + 1`
    /// plus those local messages (none when every rank has its own host), and exactly
    /// `n + 2M` timed edges ([`Schedule::lower`]: per rank one edge per send, receive,
    /// and its final phase). Times `repeat`, one job per iteration.
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let n = super::set_size(&self.hosts, ctx.hosts, false)
            .saturating_mul(u64::from(self.ranks_per_host));
        if n < 2 {
            return Ok(Some(super::WorkSize::default()));
        }
        let ceil_log2 = u64::from(64 - (n - 1).leading_zeros());
        let m = match (self.algorithm, self.collective) {
            (SwAlgorithm::Tree, _) => (n - 1).saturating_mul(2),
            (SwAlgorithm::Default, SwCollective::Barrier) => n.saturating_mul(ceil_log2),
            (SwAlgorithm::Default, SwCollective::Allreduce) => {
                let log_p = u64::from(63 - n.leading_zeros());
                let p = 1u64 << log_p;
                p.saturating_mul(log_p).saturating_add(2 * (n - p))
            }
            (SwAlgorithm::Default, SwCollective::Bcast) => n - 1,
        };
        // Two ranks share a host with ranks_per_host > 1, or a host listed twice.
        let local = if self.ranks_per_host > 1 || matches!(self.hosts, HostSet::List(_)) {
            m
        } else {
            0
        };
        let repeat = u64::from(self.repeat);
        Ok(Some(super::WorkSize {
            flows: m.saturating_mul(repeat),
            deps: n.saturating_add(m.saturating_mul(2)).saturating_mul(repeat),
            phases: n
                .saturating_add(1)
                .saturating_add(local)
                .saturating_mul(repeat),
            jobs: repeat,
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "hosts x ranks_per_host x log2(ranks) x repeat"
    }

    fn size_knobs(&self, ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        size_knobs(
            self,
            &[
                ("ranks_per_host", |c| c.ranks_per_host = 1),
                ("repeat", |c| c.repeat = 1),
            ],
            |c| c.size(ctx).ok().flatten(),
        )
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let g = b.graph;
        let hosts = resolve_set(
            &self.hosts,
            g,
            "hosts",
            None,
            "a software collective's hosts",
        )?;
        if self.ranks_per_host == 0 {
            return Err(ParamError::new("ranks_per_host", "must be at least 1"));
        }
        let ranks: Vec<u32> = hosts
            .iter()
            .flat_map(|&h| std::iter::repeat_n(h, self.ranks_per_host as usize))
            .collect();
        if ranks.len() < 2 {
            return Err(ParamError::new(
                "hosts",
                format!(
                    "a software collective needs at least 2 ranks, {} given",
                    ranks.len()
                ),
            ));
        }
        check_size(self.size, "size")?;
        if self.repeat == 0 {
            return Err(ParamError::new("repeat", "must be at least 1"));
        }
        let root = match (&self.root, self.collective) {
            (None, _) => 0,
            (Some(_), c) if c != SwCollective::Bcast => {
                return Err(ParamError::new(
                    "root",
                    format!("only a bcast has a root; {} has none", c.name()),
                ))
            }
            (Some(h), _) => {
                let h = resolve_host(h, g, "root")?;
                ranks.iter().position(|&r| r == h).ok_or_else(|| {
                    ParamError::new("root", format!("host {h} is not among the hosts"))
                })?
            }
        };
        let schedule =
            match (self.algorithm, self.collective) {
                (SwAlgorithm::Tree, SwCollective::Bcast) => return Err(ParamError::new(
                    "algorithm",
                    "a bcast is a binomial tree already: `tree` is for a barrier or an allreduce",
                )),
                (SwAlgorithm::Tree, _) => Schedule::reduce_bcast(ranks.len(), root),
                (SwAlgorithm::Default, c) => Schedule::build(c, ranks.len(), root),
            };
        let per_byte = self.byte_overhead.unwrap_or(0).saturating_mul(self.size);
        let edges = schedule.lower(self.send_overhead + per_byte, self.recv_overhead + per_byte);
        // Messages between two ranks of one node go through its memory: a phase of
        // `local_latency` in place of a flow. `slot[m]`: message m's flow or phase among
        // the iteration's (local indices).
        let local: Vec<bool> = (schedule.messages.iter())
            .map(|m| ranks[m.src as usize] == ranks[m.dst as usize])
            .collect();
        let n_local = local.iter().filter(|&&l| l).count() as u32;
        let n_phases = ranks.len() as u32 + 1 + n_local;
        let (mut nf, mut np) = (0u32, ranks.len() as u32 + 1);
        let slot: Vec<u32> = (local.iter())
            .map(|&l| {
                let v = if l { &mut np } else { &mut nf };
                *v += 1;
                *v - 1
            })
            .collect();
        let start = self.start.unwrap_or(DEFAULT_START);
        let group = b.job_groups;
        b.job_groups += 1;
        let w = &mut b.work;
        let per_iter = u64::from(nf) + u64::from(n_phases);
        let limit = crate::base::ids::MAX_INDEX as u64;
        if (w.flows.len() + w.phases.len()) as u64 + per_iter * u64::from(self.repeat) > limit {
            return Err(ParamError::new(
                "repeat",
                format!(
                    "the iterations make {per_iter} flows and phases each: at most {limit} in all per run"
                ),
            ));
        }
        let mut prev_job: Option<u32> = None;
        for it in 0..self.repeat {
            let first = w.flows.len() as u32;
            let first_phase = w.phases.len() as u32;
            for m in schedule
                .messages
                .iter()
                .filter(|m| ranks[m.src as usize] != ranks[m.dst as usize])
            {
                let (src, dst) = (ranks[m.src as usize], ranks[m.dst as usize]);
                w.flows.push(FlowSpec {
                    src,
                    dst,
                    size: self.size,
                    start,
                });
                // One queue pair per (job, source, destination), as an MPI library over
                // RDMA keeps one connection per peer.
                let key =
                    crate::base::seed::component_seed(b.seed, &format!("job{group}/{src}-{dst}"));
                w.conn.push(Some(key));
            }
            // Phase 0 joins (the iteration's start), 1 + r is rank r's completion, and
            // the rest are the messages inside a host.
            let mut host_of: Vec<Option<u32>> = std::iter::once(None)
                .chain(ranks.iter().map(|&h| Some(h)))
                .collect();
            host_of.resize(n_phases as usize, None);
            for (m, msg) in schedule.messages.iter().enumerate() {
                if local[m] {
                    host_of[slot[m] as usize] = Some(ranks[msg.src as usize]);
                }
            }
            w.phases.extend((0..n_phases).map(|i| Phase {
                duration: if i > ranks.len() as u32 {
                    self.local_latency
                } else {
                    0
                },
                not_before: start,
                host: host_of[i as usize],
            }));
            let place = |v: Node| match v {
                Node::Flow(m) if local[m as usize] => Node::Phase(first_phase + slot[m as usize]),
                Node::Flow(m) => Node::Flow(first + slot[m as usize]),
                Node::Phase(i) => Node::Phase(first_phase + i),
            };
            w.timed.extend(edges.iter().map(|e| TimedDep {
                before: place(e.before),
                after: place(e.after),
                ..*e
            }));
            w.jobs.push(JobSpec {
                collective: JobKind::Software(self.collective),
                ranks: ranks.clone(),
                size: self.size,
                start,
                first_flow: first,
                n_flows: nf,
                first_phase,
                n_phases,
                after: prev_job,
                iteration: it,
                protocol: None,
            });
            prev_job = Some((w.jobs.len() - 1) as u32);
        }
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_names_every_collective() {
        let names: Vec<String> = SwCollective::ALL.iter().map(|k| k.name().into()).collect();
        assert_eq!(names, crate::base::param::serde_variants::<SwCollective>());
    }

    /// End time of every node of an iteration's graph when each message takes `latency`
    /// from its start to its end: (flow starts, flow ends, phase ends), by relaxing the
    /// edges until nothing moves (the graphs here are small).
    fn evaluate(s: &Schedule, edges: &[TimedDep], latency: Time) -> (Vec<Time>, Vec<Time>) {
        let nf = s.messages.len();
        let np = s.programs.len() + 1;
        let mut begin_f = vec![0; nf];
        let mut begin_p = vec![0; np];
        loop {
            let mut moved = false;
            for e in edges {
                let (b, end) = match e.before {
                    Node::Flow(i) => (begin_f[i as usize], begin_f[i as usize] + latency),
                    Node::Phase(i) => (begin_p[i as usize], begin_p[i as usize]),
                };
                let at = match e.from {
                    DepPoint::End => end,
                    _ => b,
                } + e.lag;
                let slot = match e.after {
                    Node::Flow(i) => &mut begin_f[i as usize],
                    Node::Phase(i) => &mut begin_p[i as usize],
                };
                if at > *slot {
                    *slot = at;
                    moved = true;
                }
            }
            if !moved {
                return (begin_f, begin_p);
            }
        }
    }

    /// The completion time of an iteration: the latest rank's final phase.
    fn completion(s: &Schedule, o_s: Time, o_r: Time, latency: Time) -> Time {
        let edges = s.lower(o_s, o_r);
        let (_, p) = evaluate(s, &edges, latency);
        p[1..].iter().copied().max().unwrap()
    }

    fn rounds_of(n: usize) -> u32 {
        (n as f64).log2().ceil() as u32
    }

    #[test]
    fn barrier_sends_one_message_per_rank_and_round() {
        for n in 2..=33 {
            let s = Schedule::build(SwCollective::Barrier, n, 0);
            let r = rounds_of(n);
            assert_eq!(s.rounds, r, "n = {n}");
            assert_eq!(s.messages.len(), n * r as usize, "n = {n}");
            for k in 0..r {
                let d = 1 << k;
                let mut sent = vec![0; n];
                let mut got = vec![0; n];
                for m in s.messages.iter().filter(|m| m.round == k) {
                    assert_eq!(m.dst as usize, (m.src as usize + d) % n);
                    sent[m.src as usize] += 1;
                    got[m.dst as usize] += 1;
                }
                assert!(sent.iter().chain(&got).all(|&c| c == 1), "n = {n}, k = {k}");
            }
            // Graph depth: with a unit send overhead and nothing else, every round costs
            // one unit, so the iteration takes as many units as it has rounds.
            assert_eq!(completion(&s, 1, 0, 0), r as Time, "n = {n}");
        }
    }

    #[test]
    fn barrier_waits_for_the_previous_round_receive() {
        // Rank 1 of 4 gets round 0 from rank 0: if rank 0's message is slow, rank 1's
        // round-1 send waits for it (plus both overheads).
        let s = Schedule::build(SwCollective::Barrier, 4, 0);
        let edges = s.lower(100, 10);
        let (f, _) = evaluate(&s, &edges, 1000);
        let send = |src: u32, round: u32| {
            s.messages
                .iter()
                .position(|m| m.src == src && m.round == round)
                .unwrap()
        };
        assert_eq!(f[send(1, 0)], 100);
        assert_eq!(f[send(1, 1)], 100 + 1000 + 10 + 100);
        // Two rounds of (o_s + L + o_r).
        assert_eq!(completion(&s, 100, 10, 1000), 2 * 1110);
    }

    #[test]
    fn a_receive_before_the_send_was_posted_waits_for_the_cpu() {
        // Latency 0 and a long send overhead: the message into a rank is there before
        // the rank has posted its own, so it is taken in after the post: per round
        // o_s + o_r.
        let s = Schedule::build(SwCollective::Barrier, 8, 0);
        assert_eq!(completion(&s, 500, 70, 0), 3 * 570);
    }

    #[test]
    fn bcast_reaches_every_rank_once_in_log_rounds() {
        for n in 2..=33 {
            for root in [0, n / 2, n - 1] {
                let s = Schedule::build(SwCollective::Bcast, n, root);
                assert_eq!(s.messages.len(), n - 1, "n = {n}");
                assert_eq!(s.rounds, rounds_of(n), "n = {n}");
                let mut got = vec![0; n];
                // A rank sends only once it holds the data.
                let mut holds = vec![None; n];
                holds[root] = Some(0);
                for m in &s.messages {
                    got[m.dst as usize] += 1;
                    let had = holds[m.src as usize].expect("the sender holds the data");
                    assert!(had <= m.round, "n = {n}: sent before received");
                    holds[m.dst as usize] = Some(m.round + 1);
                }
                assert_eq!(got[root], 0);
                assert!((0..n).filter(|&r| r != root).all(|r| got[r] == 1));
                // Unit send overhead: the root posts one message a round, and every
                // other rank forwards in the round after it received: depth R.
                assert_eq!(completion(&s, 1, 0, 0), rounds_of(n) as Time, "n = {n}");
                // The receive edges: with latency, the deepest chain decides.
                let (f, _) = evaluate(&s, &s.lower(0, 0), 5);
                for (i, m) in s.messages.iter().enumerate() {
                    if m.src as usize != root {
                        let into = s.messages.iter().position(|x| x.dst == m.src).unwrap();
                        assert!(f[i] >= f[into] + 5, "forwards only after receiving");
                    }
                }
            }
        }
    }

    #[test]
    fn allreduce_is_recursive_doubling_with_a_fold() {
        for n in 2..=33usize {
            let s = Schedule::build(SwCollective::Allreduce, n, 0);
            let p = if n.is_power_of_two() {
                n
            } else {
                n.next_power_of_two() / 2
            };
            let log = p.trailing_zeros() as usize;
            let folded = n - p;
            assert_eq!(s.messages.len(), p * log + 2 * folded, "n = {n}");
            if n.is_power_of_two() {
                assert_eq!(s.messages.len(), n * log);
                for m in &s.messages {
                    assert_eq!(m.src ^ m.dst, 1 << m.round, "n = {n}");
                }
            }
            let extra = if folded > 0 { 2 } else { 0 };
            assert_eq!(s.rounds as usize, log + extra);
            // Odd ranks below 2(n - p) send once (their data) and receive once (the
            // result); every other rank sends once per doubling round, plus the result
            // for the even ones of the pairs.
            for r in 0..n {
                let sends = s.messages.iter().filter(|m| m.src as usize == r).count();
                let recvs = s.messages.iter().filter(|m| m.dst as usize == r).count();
                if r < 2 * folded && r % 2 == 1 {
                    assert_eq!((sends, recvs), (1, 1), "n = {n}, r = {r}");
                } else if r < 2 * folded {
                    assert_eq!((sends, recvs), (log + 1, log + 1), "n = {n}, r = {r}");
                } else {
                    assert_eq!((sends, recvs), (log, log), "n = {n}, r = {r}");
                }
            }
            // Every rank's result depends on every rank's data: a message path from
            // each rank's first send to each rank's last operation (data flow closure).
            let mut knows: Vec<u64> = (0..n).map(|r| 1u64 << r).collect();
            for round in 0..s.rounds {
                let before = knows.clone();
                for m in s.messages.iter().filter(|m| m.round == round) {
                    knows[m.dst as usize] |= before[m.src as usize];
                }
            }
            assert!(knows.iter().all(|&k| k == (1u64 << n) - 1), "n = {n}");
            assert_eq!(completion(&s, 1, 0, 0), (log + extra) as Time, "n = {n}");
        }
    }

    #[test]
    fn final_receive_overhead_counts() {
        // A two-rank barrier: one round; each rank ends o_r after its receive.
        let s = Schedule::build(SwCollective::Barrier, 2, 0);
        let edges = s.lower(3, 40);
        let (_, p) = evaluate(&s, &edges, 500);
        assert_eq!(p[1..], [3 + 500 + 40, 3 + 500 + 40]);
        // A bcast's root ends once it posted its last send.
        let s = Schedule::build(SwCollective::Bcast, 4, 0);
        let (_, p) = evaluate(&s, &s.lower(3, 40), 500);
        assert_eq!(p[1], 2 * 3);
    }

    #[test]
    fn tree_is_a_binomial_reduce_then_a_binomial_bcast() {
        for n in 2..=33usize {
            for root in [0, n / 2, n - 1] {
                let s = Schedule::reduce_bcast(n, root);
                let r = ceil_log2(n);
                assert_eq!(s.rounds, 2 * r, "n {n}");
                assert_eq!(s.messages.len(), 2 * (n - 1), "n {n}");
                let (up, down) = s.messages.split_at(n - 1);
                // Up: every rank but the root sends once, after all it receives; the
                // root only receives. Down: every rank but the root receives once.
                for q in 0..n as u32 {
                    let sends = up.iter().filter(|m| m.src == q).count();
                    assert_eq!(sends, usize::from(q as usize != root), "n {n} rank {q}");
                    let got = down.iter().filter(|m| m.dst == q).count();
                    assert_eq!(got, usize::from(q as usize != root), "n {n} rank {q}");
                    let prog = &s.programs[q as usize];
                    let last_up_recv = prog
                        .iter()
                        .rposition(|op| matches!(op, Op::Recv(i) if (*i as usize) < n - 1));
                    let up_send = prog
                        .iter()
                        .position(|op| matches!(op, Op::Send(i) if (*i as usize) < n - 1));
                    if let (Some(a), Some(b)) = (last_up_recv, up_send) {
                        assert!(
                            a < b,
                            "n {n} rank {q}: sends up before it has its children's"
                        );
                    }
                }
                assert!(up.iter().all(|m| m.round < r) && down.iter().all(|m| m.round >= r));
            }
        }
    }
}
