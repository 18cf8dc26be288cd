//! A checked trace, placed, becomes flows, compute phases and the edges between them.
//!
//! Per iteration and rank, in a topological order of the rank's nodes (the file's order
//! where it is one):
//! - a compute node is a phase of its GPU taking the node's time (times the rank's
//!   straggler factor); a GPU runs one at a time in that order, as kernels issued on one
//!   CUDA stream do, so each compute phase also waits for the rank's previous one;
//! - a collective is, on each rank of its communicator, an entry point (when the rank's
//!   dependencies are done) and a done point (when every transfer of the algorithm into
//!   or out of the rank is received); each transfer waits for the entries of both its
//!   ends (a GPU cannot take part before it has issued the collective) and for the
//!   transfers before it in the algorithm's graph (with the protocol's step latency);
//!   one join point per collective ends when its last rank is done;
//! - a send and its matching receive are one transfer that waits for both nodes'
//!   dependencies; each side's done point waits for its delivery;
//! - a metadata node is a point of no duration;
//! - a node's dependencies (data and control alike) become edges from their done
//!   points; a rank's nodes with none wait for the rank's end of the previous iteration,
//!   a point that waits for the rank's last nodes.
//!
//! The communicator's queue pairs are shared by its collectives (NCCL keeps one
//! connection per peer and channel); a rank pair's sends share one.

use super::ir::{CollOp, Compute, NodeKind, Trace};
use super::{placement, AloneCfg, FailureAction, TraceCfg, TraceFormat};
use crate::base::ids::MAX_INDEX;
use crate::base::param::ParamError;
use crate::base::units::Time;
use crate::model::workload::collective::{generate as coll, CollectiveCfg, CollectiveKind};
use crate::model::workload::{
    Builder, DepPoint, FlowSpec, Node, Phase, TimedDep, WorkSize, DEFAULT_START,
};
use std::collections::{BTreeMap, HashMap};

/// Most iterations a trace job may run.
pub const MAX_ITERATIONS: u32 = 10_000;

/// What a phase of a trace job stands for on the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanTag {
    /// A compute node of `rank`.
    Compute {
        /// The trace job.
        job: u32,
        /// The rank.
        rank: u32,
        /// Its name ([`TraceJob::names`]).
        name: u32,
    },
    /// A rank's part of a collective, or of a send or receive, ends; it began when
    /// `from` began (an entry phase) or started (a flow).
    Comm {
        /// The trace job.
        job: u32,
        /// The rank.
        rank: u32,
        /// Its name.
        name: u32,
        /// What opened it.
        from: Node,
    },
    /// A collective ends; it began when the first of its ranks' entries
    /// (`first_entry..first_entry + ranks`) began.
    Collective {
        /// The trace job.
        job: u32,
        /// Its name.
        name: u32,
        /// Its ranks' entry phases.
        first_entry: u32,
        /// How many.
        ranks: u32,
    },
}

/// A rank down for a while (a failure the job waits for): its phases that would begin
/// within `[at, until)` begin at `until`, and one running at `at` ends `until - at`
/// later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    /// The GPU.
    pub host: u32,
    /// When it goes down.
    pub at: Time,
    /// When it is back.
    pub until: Time,
}

/// A job that stops at a time: nothing of it begins from then on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// The trace job.
    pub job: u32,
    /// When.
    pub at: Time,
}

/// A trace job as built: where it runs and what `training.csv` reads back.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceJob {
    /// Its name.
    pub name: String,
    /// Its `[[workload]]` entry.
    pub entry: u32,
    /// The trace format.
    pub format: TraceFormat,
    /// The placement rule (or `explicit`).
    pub placement: String,
    /// The host of each rank.
    pub hosts: Vec<u32>,
    /// When it starts.
    pub start: Time,
    /// Per iteration, each rank's end point (a phase).
    pub iteration_ends: Vec<Vec<u32>>,
    /// Each rank's compute per iteration (straggler factors included).
    pub compute: Vec<Time>,
    /// Slow ranks and their factors.
    pub stragglers: Vec<(u32, f64)>,
    /// A failing rank: (rank, at, action).
    pub failure: Option<(u32, Time, FailureAction)>,
    /// How the alone reference is had.
    pub alone: AloneCfg,
    /// Each iteration's time with the job alone (set by the runner).
    pub alone_times: Option<Vec<Option<Time>>>,
    /// Names of its nodes and collectives (the timeline's).
    pub names: Vec<String>,
    /// Its first flow and how many (they are contiguous).
    pub flows: (u32, u32),
    /// Its first phase and how many.
    pub phases: (u32, u32),
    /// Collectives per iteration.
    pub collectives: u32,
}

impl TraceJob {
    /// Each iteration's end: the latest of its ranks' end points (`None` when one has
    /// not ended), from the run's phase end times.
    pub fn iteration_ends(&self, phase_end: impl Fn(u32) -> Option<Time>) -> Vec<Option<Time>> {
        self.iteration_ends
            .iter()
            .map(|ends| {
                ends.iter()
                    .map(|&p| phase_end(p))
                    .try_fold(0, |m: Time, e| e.map(|e| m.max(e)))
            })
            .collect()
    }

    /// Each iteration's time, from [`Self::iteration_ends`].
    pub fn iteration_times(&self, phase_end: impl Fn(u32) -> Option<Time>) -> Vec<Option<Time>> {
        let mut prev = Some(self.start);
        self.iteration_ends(phase_end)
            .into_iter()
            .map(|e| {
                let t = prev.zip(e).map(|(p, e)| e.saturating_sub(p));
                prev = e;
                t
            })
            .collect()
    }
}

/// The collective kind an operation runs as (an operation whose algorithm is chosen,
/// or AlltoAll's algorithm), and its bytes.
fn operation(op: CollOp, size: u64) -> (CollectiveKind, u64) {
    match op {
        CollOp::AllReduce => (CollectiveKind::Allreduce, size),
        CollOp::AllGather => (CollectiveKind::Allgather, size),
        CollOp::ReduceScatter => (CollectiveKind::ReduceScatter, size),
        CollOp::AllToAll => (CollectiveKind::Alltoall, size),
        CollOp::Broadcast => (CollectiveKind::Broadcast, size),
        CollOp::Barrier => (CollectiveKind::Allreduce, 4),
    }
}

/// Compute time of a node on a rank with factor `slow`.
fn compute_time(
    c: Compute,
    cfg: &TraceCfg,
    slow: f64,
    file: &str,
    id: u64,
) -> Result<Time, ParamError> {
    let base = match c {
        Compute::Duration(t) => t as f64,
        Compute::Flops(f) => match cfg.gpu_flops {
            Some(rate) => f as f64 / rate * 1e12,
            None => {
                return Err(ParamError::new(
                    "gpu_flops",
                    format!(
                        "required: trace {file}, node {id} gives its compute in FLOPs (num_ops = {f}); set the GPU's FLOP/s"
                    ),
                ))
            }
        },
    };
    let t = (base * slow).round();
    if t > super::ir::MAX_COMPUTE as f64 {
        return Err(ParamError::new(
            "path",
            format!("trace {file}, node {id}: a compute node of more than 1000 s"),
        ));
    }
    Ok(t as Time)
}

/// The slow ranks and their factors.
fn stragglers(
    cfg: &TraceCfg,
    n: u32,
    name: &str,
    seed: u64,
) -> Result<Vec<(u32, f64)>, ParamError> {
    let Some(s) = &cfg.stragglers else {
        return Ok(Vec::new());
    };
    let mut ranks: Vec<u32> = match (&s.ranks, s.count) {
        (Some(r), _) => {
            if let Some(&bad) = r.iter().find(|&&x| x >= n) {
                return Err(ParamError::new(
                    "stragglers.ranks",
                    format!("rank {bad} does not exist: the job has ranks 0..{}", n - 1),
                ));
            }
            r.clone()
        }
        (None, Some(c)) => {
            if c > n {
                return Err(ParamError::new(
                    "stragglers.count",
                    format!("{c} slow ranks asked for, the job has {n}"),
                ));
            }
            use rand::seq::SliceRandom;
            use rand::SeedableRng;
            let mut all: Vec<u32> = (0..n).collect();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
                crate::base::seed::component_seed(seed, &format!("trace/{name}/stragglers")),
            );
            all.shuffle(&mut rng);
            all.truncate(c as usize);
            all
        }
        (None, None) => Vec::new(),
    };
    ranks.sort_unstable();
    ranks.dedup();
    Ok(ranks.into_iter().map(|r| (r, s.slowdown)).collect())
}

/// Interned names.
#[derive(Default)]
struct Names {
    at: HashMap<String, u32>,
    all: Vec<String>,
}

impl Names {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.at.get(s) {
            return i;
        }
        let i = self.all.len() as u32;
        self.all.push(s.to_string());
        self.at.insert(s.to_string(), i);
        i
    }
}

/// Adds the job `cfg` describes, from its checked `trace`, to `b.work`.
pub fn compile(
    cfg: &TraceCfg,
    trace: &Trace,
    groups: &HashMap<String, Vec<u32>>,
    b: &mut Builder<'_>,
) -> Result<(), ParamError> {
    let n = trace.ranks.len() as u32;
    let name = cfg.job_name(b.entry);
    if b.work.traces.iter().any(|t| t.name == name) {
        return Err(ParamError::new(
            "name",
            format!("two trace jobs are named `{name}`: give each its own name"),
        ));
    }
    let mut taken = vec![false; b.graph.hosts.len()];
    for t in &b.work.traces {
        for &h in &t.hosts {
            taken[h as usize] = true;
        }
    }
    let hosts = placement::place(&cfg.placement, n, &name, &taken, b)?;
    let slow = stragglers(cfg, n, &name, b.seed)?;
    let mut factor = vec![1.0f64; n as usize];
    for &(r, f) in &slow {
        factor[r as usize] = f;
    }
    let failure = match &cfg.failure {
        Some(f) if f.rank >= n => {
            return Err(ParamError::new(
                "failure.rank",
                format!(
                    "rank {} does not exist: the job has ranks 0..{}",
                    f.rank,
                    n - 1
                ),
            ))
        }
        Some(f) => Some((f.rank, f.at, f.action, f.downtime.unwrap_or(0))),
        None => None,
    };
    let start = cfg.start.unwrap_or(DEFAULT_START);
    let job = b.work.traces.len() as u32;
    let orders: Vec<Vec<u32>> = trace
        .ranks
        .iter()
        .map(|r| r.topo_order().expect("the trace was checked"))
        .collect();
    let index: Vec<HashMap<u64, u32>> = trace
        .ranks
        .iter()
        .map(|r| r.index().expect("the trace was checked"))
        .collect();
    // Nodes something waits for, per rank: the others end the rank's iteration.
    let waited: Vec<Vec<bool>> = trace
        .ranks
        .iter()
        .zip(&index)
        .map(|(r, at)| {
            let mut w = vec![false; r.nodes.len()];
            for nd in &r.nodes {
                for d in &nd.deps {
                    w[at[d] as usize] = true;
                }
            }
            w
        })
        .collect();
    let mut compute = vec![0 as Time; n as usize];
    let mut durations: Vec<Vec<Time>> = Vec::with_capacity(n as usize);
    for (r, rt) in trace.ranks.iter().enumerate() {
        let mut d = vec![0; rt.nodes.len()];
        for (i, nd) in rt.nodes.iter().enumerate() {
            if let NodeKind::Comp(c) = nd.kind {
                d[i] = compute_time(c, cfg, factor[r], &rt.file, nd.id)?;
                compute[r] += d[i];
            }
        }
        durations.push(d);
    }
    // The collectives' settings: each instance is one `collective` of its operation.
    let coll_cfg = |kind: CollectiveKind, size: u64| CollectiveCfg {
        collective: kind,
        size,
        sizes: None,
        algorithm: if kind.is_operation() {
            cfg.algorithm
        } else {
            None
        },
        protocol: cfg.protocol,
        hosts: super::super::all_hosts(),
        jobs: Default::default(),
        start: None,
        repeat: 1,
        chunks: cfg.chunks,
        channels: cfg.channels,
        rounds: false,
        window: None,
        segment: cfg.segment,
    };
    coll::check(&coll_cfg(CollectiveKind::Allreduce, 1))?;
    let mut names = Names::default();
    let first_flow = b.work.flows.len() as u32;
    let first_phase = b.work.phases.len() as u32;
    let first_timed = b.work.timed.len();
    let mut iteration_ends: Vec<Vec<u32>> = Vec::new();
    // The shape of each communicator's GPUs (servers, NVSwitches), found once.
    type Shape = (
        crate::model::workload::collective::select::JobShape,
        Option<Vec<Vec<usize>>>,
    );
    let mut shapes: HashMap<Vec<u32>, Shape> = HashMap::new();
    let g = b.graph;
    let mut collectives = 0u32;
    // Where each trace node's graph node came from, for the cycle check's message.
    let mut origin_phase: Vec<(u32, u64)> = Vec::new();
    let mut origin_flow: Vec<(u32, u64)> = Vec::new();
    for it in 0..cfg.iterations {
        let w = &mut b.work;
        let mut entry: Vec<Vec<Option<Node>>> = trace
            .ranks
            .iter()
            .map(|r| vec![None; r.nodes.len()])
            .collect();
        let mut done = entry.clone();
        let new_phase = |w: &mut crate::model::workload::Workload,
                         origin: &mut Vec<(u32, u64)>,
                         host: Option<u32>,
                         duration: Time,
                         who: (u32, u64)| {
            w.phases.push(Phase {
                duration,
                not_before: start,
                host,
            });
            origin.push(who);
            w.phases.len() as u32 - 1
        };
        // Collectives by communicator: per member rank, its collective nodes in order.
        let mut colls: BTreeMap<Option<&str>, BTreeMap<u32, Vec<u32>>> = BTreeMap::new();
        type Key = (u32, u32, u64);
        let mut sends: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
        let mut recvs: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
        for (r, rt) in trace.ranks.iter().enumerate() {
            let h = hosts[r];
            for &i in &orders[r] {
                let nd = &rt.nodes[i as usize];
                let who = (r as u32, nd.id);
                match &nd.kind {
                    NodeKind::Comp(_) => {
                        let p =
                            new_phase(w, &mut origin_phase, Some(h), durations[r][i as usize], who);
                        let nm = names.id(&nd.name);
                        w.trace_spans.push((
                            p,
                            SpanTag::Compute {
                                job,
                                rank: r as u32,
                                name: nm,
                            },
                        ));
                        entry[r][i as usize] = Some(Node::Phase(p));
                        done[r][i as usize] = Some(Node::Phase(p));
                    }
                    NodeKind::Point => {
                        let p = new_phase(w, &mut origin_phase, Some(h), 0, who);
                        entry[r][i as usize] = Some(Node::Phase(p));
                        done[r][i as usize] = Some(Node::Phase(p));
                    }
                    NodeKind::Coll { group, .. } => colls
                        .entry(group.as_deref())
                        .or_default()
                        .entry(r as u32)
                        .or_default()
                        .push(i),
                    NodeKind::Send { peer, tag, .. } => {
                        sends.entry((r as u32, *peer, *tag)).or_default().push(i)
                    }
                    NodeKind::Recv { peer, tag, .. } => {
                        recvs.entry((*peer, r as u32, *tag)).or_default().push(i)
                    }
                }
            }
        }
        // Sends and receives, matched in order per (source, destination, tag). The
        // orders above are topological, not the file's: match in file order instead.
        for ((s, d, tag), list) in &sends {
            let mut sl = list.clone();
            sl.sort_unstable();
            let mut rl = recvs[&(*s, *d, *tag)].clone();
            rl.sort_unstable();
            for (&si, &ri) in sl.iter().zip(&rl) {
                let snode = &trace.ranks[*s as usize].nodes[si as usize];
                let NodeKind::Send { size, .. } = snode.kind else {
                    unreachable!("a send")
                };
                let f = w.flows.len() as u32;
                w.flows.push(FlowSpec {
                    src: hosts[*s as usize],
                    dst: hosts[*d as usize],
                    size,
                    start,
                });
                w.conn.push(Some(crate::base::seed::component_seed(
                    b.seed,
                    &format!("trace/{name}/p2p/{s}-{d}"),
                )));
                origin_flow.push((*s, snode.id));
                // A send moves in the job's segments as its collectives do.
                if let Some(fr) = cfg.segment.map(|sg| sg.frames(size)) {
                    if fr != crate::model::workload::collective::segment::FrameSize::Mtu {
                        w.frames.resize(f as usize, Default::default());
                        w.frames.push(fr);
                    }
                }
                let rnode = &trace.ranks[*d as usize].nodes[ri as usize];
                for (rank, idx, nd) in [(*s, si, snode), (*d, ri, rnode)] {
                    let p = new_phase(
                        w,
                        &mut origin_phase,
                        Some(hosts[rank as usize]),
                        0,
                        (rank, nd.id),
                    );
                    w.timed.push(TimedDep::end(Node::Flow(f), Node::Phase(p)));
                    let nm = names.id(&nd.name);
                    w.trace_spans.push((
                        p,
                        SpanTag::Comm {
                            job,
                            rank,
                            name: nm,
                            from: Node::Flow(f),
                        },
                    ));
                    entry[rank as usize][idx as usize] = Some(Node::Flow(f));
                    done[rank as usize][idx as usize] = Some(Node::Phase(p));
                }
            }
        }
        // Collectives: the k-th of a communicator on each of its ranks is one.
        for (group, per) in &colls {
            let members: Vec<u32> = match group {
                Some(g) => groups[*g].clone(),
                None => (0..n).collect(),
            };
            let lists: Vec<&Vec<u32>> = members.iter().map(|m| &per[m]).collect();
            let count = lists[0].len();
            for k in 0..count {
                let idx: Vec<u32> = lists.iter().map(|l| l[k]).collect();
                let first = &trace.ranks[members[0] as usize].nodes[idx[0] as usize];
                let NodeKind::Coll { op, size, .. } = first.kind else {
                    unreachable!("a collective")
                };
                let cname = names.id(&format!(
                    "{} {} ({})",
                    op.name(),
                    crate::base::units::fmt_bytes_exact(size),
                    group.unwrap_or("all")
                ));
                collectives += u32::from(it == 0);
                let m = members.len();
                let e0 = w.phases.len() as u32;
                for (j, &r) in members.iter().enumerate() {
                    let nd = &trace.ranks[r as usize].nodes[idx[j] as usize];
                    new_phase(w, &mut origin_phase, Some(hosts[r as usize]), 0, (r, nd.id));
                }
                let d0 = w.phases.len() as u32;
                for (j, &r) in members.iter().enumerate() {
                    let nd = &trace.ranks[r as usize].nodes[idx[j] as usize];
                    new_phase(w, &mut origin_phase, Some(hosts[r as usize]), 0, (r, nd.id));
                    let nm = names.id(&nd.name);
                    w.trace_spans.push((
                        d0 + j as u32,
                        SpanTag::Comm {
                            job,
                            rank: r,
                            name: nm,
                            from: Node::Phase(e0 + j as u32),
                        },
                    ));
                    entry[r as usize][idx[j] as usize] = Some(Node::Phase(e0 + j as u32));
                    done[r as usize][idx[j] as usize] = Some(Node::Phase(d0 + j as u32));
                }
                let join = new_phase(w, &mut origin_phase, None, 0, (members[0], first.id));
                w.trace_spans.push((
                    join,
                    SpanTag::Collective {
                        job,
                        name: cname,
                        first_entry: e0,
                        ranks: m as u32,
                    },
                ));
                for j in 0..m as u32 {
                    w.timed
                        .push(TimedDep::end(Node::Phase(d0 + j), Node::Phase(join)));
                }
                if m == 1 {
                    w.timed
                        .push(TimedDep::end(Node::Phase(e0), Node::Phase(d0)));
                    continue;
                }
                let rank_hosts: Vec<u32> = members.iter().map(|&r| hosts[r as usize]).collect();
                let (kind, bytes) = operation(op, size);
                let c = coll_cfg(kind, bytes);
                let (shape, servers) = shapes
                    .entry(rank_hosts.clone())
                    .or_insert_with(|| coll::shape(&rank_hosts, g));
                let plan = coll::plan(&c, &rank_hosts, *shape, servers.as_deref(), bytes, g)
                    .map_err(|e| {
                        ParamError::new(
                            e.field.clone(),
                            format!(
                                "{} (the trace's collective {} of communicator `{}`, node {} of {})",
                                e.message,
                                k + 1,
                                group.unwrap_or("all"),
                                first.id,
                                trace.ranks[members[0] as usize].file
                            ),
                        )
                    })?;
                let f0 = w.flows.len() as u64;
                if f0 + plan.dag.transfers.len() as u64 > MAX_INDEX as u64 {
                    return Err(ParamError::new(
                        "iterations",
                        format!("the trace's collectives make more than {MAX_INDEX} flows"),
                    ));
                }
                let f0 = f0 as u32;
                if plan.frames != crate::model::workload::collective::segment::FrameSize::Mtu {
                    w.frames.resize(f0 as usize, Default::default());
                    w.frames
                        .resize(f0 as usize + plan.dag.transfers.len(), plan.frames);
                }
                let pos: HashMap<u32, u32> = rank_hosts
                    .iter()
                    .enumerate()
                    .map(|(j, &h)| (h, j as u32))
                    .collect();
                let lat = plan.proto.step_latency();
                let mut waits = vec![false; plan.dag.transfers.len()];
                for &(_, a) in plan.dag.edges.iter().chain(&plan.dag.sent) {
                    waits[a as usize] = true;
                }
                let gname = group.unwrap_or("all");
                for (ti, t) in plan.dag.transfers.iter().enumerate() {
                    w.flows.push(FlowSpec {
                        src: t.src,
                        dst: t.dst,
                        size: plan.proto.wire_bytes(t.size),
                        start,
                    });
                    w.conn.push(Some(crate::base::seed::component_seed(
                        b.seed,
                        &format!("trace/{name}/{gname}/ch{}/{}-{}", t.channel, t.src, t.dst),
                    )));
                    origin_flow.push((members[pos[&t.src] as usize], first.id));
                    let f = Node::Flow(f0 + ti as u32);
                    let lag = if waits[ti] { 0 } else { lat };
                    for end in [t.src, t.dst] {
                        let j = pos[&end];
                        w.timed.push(TimedDep {
                            before: Node::Phase(e0 + j),
                            after: f,
                            lag,
                            from: DepPoint::End,
                        });
                        w.timed.push(TimedDep::end(f, Node::Phase(d0 + j)));
                    }
                }
                w.timed
                    .extend(plan.dag.edges.iter().map(|&(bf, af)| TimedDep {
                        before: Node::Flow(f0 + bf),
                        after: Node::Flow(f0 + af),
                        lag: lat,
                        from: DepPoint::End,
                    }));
                w.timed
                    .extend(plan.dag.sent.iter().map(|&(bf, af)| TimedDep {
                        before: Node::Flow(f0 + bf),
                        after: Node::Flow(f0 + af),
                        lag: 0,
                        from: DepPoint::Sent,
                    }));
            }
        }
        // Dependencies, the GPU's one-kernel-at-a-time order, and the iteration's end.
        let w = &mut b.work;
        let mut ends = Vec::with_capacity(n as usize);
        for (r, rt) in trace.ranks.iter().enumerate() {
            let h = hosts[r];
            let mut prev_comp: Option<u32> = None;
            let prev_end = iteration_ends.last().map(|e: &Vec<u32>| e[r]);
            let end = new_phase(w, &mut origin_phase, Some(h), 0, (r as u32, u64::MAX));
            for &i in &orders[r] {
                let nd = &rt.nodes[i as usize];
                let target = entry[r][i as usize].expect("every node has its entry");
                for d in &nd.deps {
                    let j = index[r][d] as usize;
                    let before = done[r][j].expect("every node has its done point");
                    w.timed.push(TimedDep::end(before, target));
                }
                if nd.deps.is_empty() {
                    if let Some(pe) = prev_end {
                        w.timed.push(TimedDep::end(Node::Phase(pe), target));
                    }
                }
                if let NodeKind::Comp(_) = nd.kind {
                    let Node::Phase(p) = target else {
                        unreachable!("a compute node is a phase")
                    };
                    if let Some(pc) = prev_comp {
                        w.timed.push(TimedDep::end(Node::Phase(pc), Node::Phase(p)));
                    }
                    prev_comp = Some(p);
                }
                if !waited[r][i as usize] {
                    let dn = done[r][i as usize].expect("every node has its done point");
                    w.timed.push(TimedDep::end(dn, Node::Phase(end)));
                }
            }
            if let Some(pe) = prev_end {
                w.timed
                    .push(TimedDep::end(Node::Phase(pe), Node::Phase(end)));
            }
            ends.push(end);
        }
        iteration_ends.push(ends);
    }
    let w = &mut b.work;
    let last_flow = w.flows.len() as u32;
    let last_phase = w.phases.len() as u32;
    super::acyclic::check(
        trace,
        (first_flow, last_flow),
        (first_phase, last_phase),
        &w.timed[first_timed..],
        &origin_flow,
        &origin_phase,
    )?;
    if let Some((rank, at, action, downtime)) = failure {
        match action {
            FailureAction::Wait => w.outages.push(Outage {
                host: hosts[rank as usize],
                at,
                until: at.saturating_add(downtime),
            }),
            FailureAction::Stop => w.stops.push(Stop { job, at }),
        }
    }
    w.traces.push(TraceJob {
        name,
        entry: b.entry as u32,
        format: cfg.format,
        placement: match &cfg.placement {
            super::PlacementCfg::Rule(r) => r.clone(),
            super::PlacementCfg::Explicit(_) => "explicit".into(),
        },
        hosts,
        start,
        iteration_ends,
        compute,
        stragglers: slow,
        failure: failure.map(|(r, at, a, _)| (r, at, a)),
        alone: cfg.alone,
        alone_times: None,
        names: names.all,
        flows: (first_flow, last_flow - first_flow),
        phases: (first_phase, last_phase - first_phase),
        collectives,
    });
    Ok(())
}

/// Upper bounds on what [`compile`] makes of `trace` (see [`super::TraceCfg`]'s `size`).
pub fn size(cfg: &TraceCfg, trace: &Trace, groups: &HashMap<String, Vec<u32>>) -> WorkSize {
    let (mut flows, mut deps, mut phases, mut bytes) = (0u64, 0u64, 0u64, 0u64);
    let n = trace.ranks.len() as u64;
    let per = u64::from(cfg.channels).saturating_mul(u64::from(cfg.chunks));
    for r in &trace.ranks {
        phases = phases.saturating_add(1);
        for nd in &r.nodes {
            // Its dependencies, the compute chain and the iteration's end.
            deps = deps.saturating_add(nd.deps.len() as u64 + 2);
            match &nd.kind {
                NodeKind::Comp(_) | NodeKind::Point => phases += 1,
                NodeKind::Coll { size, group, .. } => {
                    let m = group
                        .as_ref()
                        .and_then(|g| groups.get(g))
                        .map_or(n, |v| v.len() as u64);
                    let t = 2u64.saturating_mul(m.saturating_sub(1)).saturating_mul(per);
                    flows = flows.saturating_add(t);
                    // Graph edges (at most 2 a transfer), both ends' entries and done points.
                    deps = deps.saturating_add(t.saturating_mul(6)).saturating_add(1);
                    phases = phases.saturating_add(3);
                    bytes = bytes.saturating_add(
                        size.max(&4)
                            .saturating_mul(6)
                            .saturating_add(t.saturating_mul(8)),
                    );
                }
                NodeKind::Send { size, .. } => {
                    flows += 1;
                    deps += 2;
                    phases += 1;
                    bytes = bytes.saturating_add(*size);
                }
                NodeKind::Recv { .. } => {
                    deps += 1;
                    phases += 1;
                }
            }
        }
    }
    let it = u64::from(cfg.iterations);
    WorkSize {
        flows: flows.saturating_mul(it),
        deps: deps.saturating_mul(it),
        phases: phases.saturating_mul(it),
        bytes: Some(bytes.saturating_mul(it)),
        ..Default::default()
    }
}
