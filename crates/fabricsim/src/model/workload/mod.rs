//! Workloads: turn the scenario's `[[workload]]` entries into a list of flows.
//!
//! Each kind of workload is one file whose settings type generates its flows
//! ([`Generator`]) and describes itself for `fabricsim list`; [`registry`] names them all.
//! Generators with random choices (the permutation, Poisson arrivals) draw from an RNG
//! seeded from the run seed and the entry's position, so a workload is a pure function of
//! the scenario and the seed. Files (CSV, the ns-3 HPCC flow format, CDFs) are read
//! relative to the scenario file.

pub mod all_to_all;
pub mod cdf;
pub mod channel_window;
pub mod collective;
pub mod files;
pub mod flows;
pub mod hw_collective;
pub mod incast;
pub mod permutation;
pub mod poisson;
pub mod registry;
pub mod sw_collective;
pub mod trace;
pub mod training;

pub use collective::{CollectiveCfg, CollectiveKind, JobGrouping};
pub use flows::{FlowCfg, FlowsCfg};
pub use poisson::PoissonCfg;
pub use registry::{WorkloadCfg, KINDS};
pub use sw_collective::{SwCollective, SwCollectiveCfg};

use crate::base::param::{Param, ParamError, SizeKnob};
use crate::base::units::Time;
use crate::model::topology::TopoGraph;
use serde::Deserialize;
use std::path::Path;

/// A flow as the workload asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Bytes.
    pub size: u64,
    /// Start time.
    pub start: Time,
}

/// A host reference: an index, or a name of a custom topology.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HostRef {
    /// Host id.
    Index(i64),
    /// Host name.
    Name(String),
}

/// A list of hosts: `"all"`, a count (the first n hosts), or explicit references.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HostSet {
    /// `"all"`.
    Word(String),
    /// The first n hosts (skipping an incast's receiver).
    Count(i64),
    /// Explicit hosts.
    List(Vec<HostRef>),
}

/// The default host set: every host.
pub fn all_hosts() -> HostSet {
    HostSet::Word("all".into())
}

/// Start time of a flow or job whose entry gives none.
pub const DEFAULT_START: Time = 0;

/// The `hosts` row of a workload's listing.
fn hosts_param() -> Param {
    let all = match all_hosts() {
        HostSet::Word(w) => w,
        _ => unreachable!("the default host set is a word"),
    };
    Param::word(
        "hosts",
        &all,
        "hosts taking part: \"all\" | a count | a list",
    )
}

/// Resolves a host reference to a host id; errors name `field`.
pub fn resolve_host(r: &HostRef, g: &TopoGraph, field: &str) -> Result<u32, ParamError> {
    let n = g.hosts.len();
    match r {
        HostRef::Index(i) => {
            if *i < 0 || *i as usize >= n {
                Err(ParamError::new(
                    field,
                    format!("host {i} does not exist: hosts are numbered 0..{}", n - 1),
                ))
            } else {
                Ok(*i as u32)
            }
        }
        HostRef::Name(s) => g
            .hosts
            .iter()
            .position(|&h| g.nodes[h].name == *s)
            .map(|h| h as u32)
            .ok_or_else(|| {
                let names = g.hosts.iter().map(|&h| g.nodes[h].name.as_str());
                let hint = crate::base::suggest::did_you_mean(s, names);
                ParamError::new(field, format!("no host named `{s}`{hint}"))
            }),
    }
}

/// Resolves a host set (without `exclude`, for a count or `"all"`); errors name `field`.
/// The hosts must be distinct: every workload that takes a host set pairs its hosts up
/// (a host listed twice would send to itself) or gives each its own share (it would be
/// counted twice). `what` names the workload in the message ("a collective's hosts").
pub fn resolve_set(
    s: &HostSet,
    g: &TopoGraph,
    field: &str,
    exclude: Option<u32>,
    what: &str,
) -> Result<Vec<u32>, ParamError> {
    let n = g.hosts.len() as u32;
    let v: Vec<u32> = match s {
        HostSet::Word(w) if w == "all" => (0..n).filter(|h| Some(*h) != exclude).collect(),
        HostSet::Word(w) => {
            return Err(ParamError::new(
                field,
                format!("`{w}` is not a host set: use \"all\", a count, or a list of hosts"),
            ))
        }
        HostSet::Count(c) => {
            let avail: Vec<u32> = (0..n).filter(|h| Some(*h) != exclude).collect();
            if *c <= 0 || *c as usize > avail.len() {
                return Err(ParamError::new(
                    field,
                    format!(
                        "{c} hosts asked for, between 1 and {} are available",
                        avail.len()
                    ),
                ));
            }
            avail[..*c as usize].to_vec()
        }
        HostSet::List(l) => {
            let v: Vec<u32> = l
                .iter()
                .enumerate()
                .map(|(i, r)| resolve_host(r, g, &format!("{field}[{i}]")))
                .collect::<Result<_, _>>()?;
            check_distinct(&v, field, what)?;
            v
        }
    };
    Ok(v)
}

/// Rejects a host that appears twice in a list, naming the second place it appears
/// (`hosts[1]`) and the first.
pub fn check_distinct(hosts: &[u32], field: &str, what: &str) -> Result<(), ParamError> {
    let mut first = std::collections::HashMap::with_capacity(hosts.len());
    for (i, &h) in hosts.iter().enumerate() {
        if let Some(j) = first.insert(h, i) {
            return Err(ParamError::new(
                format!("{field}[{i}]"),
                format!(
                    "host {h} appears twice (also {field}[{j}]); {what} must be distinct: \
                     a host listed twice would send to itself or be counted twice"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that a flow size is at least one byte; errors name `field`.
pub fn check_size(size: u64, field: &str) -> Result<(), ParamError> {
    if size == 0 {
        return Err(ParamError::new(field, "a flow must carry at least 1 byte"));
    }
    Ok(())
}

/// The hosts of a group workload (permutation, all-to-all) of flows of `size` bytes;
/// `what` names the workload in messages.
pub fn host_group(
    hosts: &HostSet,
    size: u64,
    g: &TopoGraph,
    what: &str,
) -> Result<Vec<u32>, ParamError> {
    let hs = resolve_set(hosts, g, "hosts", None, &format!("{what}'s hosts"))?;
    check_size(size, "size")?;
    if hs.len() < 2 {
        return Err(ParamError::new(
            "hosts",
            format!("{what} needs at least 2 hosts"),
        ));
    }
    Ok(hs)
}

/// What a job runs: a collective of bulk transfers, or a software collective of small
/// messages with CPU overheads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// A `collective` workload's algorithm.
    Collective(CollectiveKind),
    /// A `sw_collective` workload's algorithm.
    Software(SwCollective),
}

impl JobKind {
    /// The name in `jobs.csv`.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::Collective(c) => c.name(),
            JobKind::Software(c) => c.job_name(),
        }
    }
}

/// One iteration of a job: a collective over a set of ranks. It is complete when its
/// flows are fully received and its compute phases have ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// The collective.
    pub collective: JobKind,
    /// Hosts, in rank order.
    pub ranks: Vec<u32>,
    /// Message bytes per rank.
    pub size: u64,
    /// Start time of the first iteration (later iterations start when the previous ends).
    pub start: Time,
    /// First flow of this iteration.
    pub first_flow: u32,
    /// Flows of this iteration (contiguous from `first_flow`).
    pub n_flows: u32,
    /// First compute phase of this iteration (software collectives: its start and each
    /// rank's completion).
    pub first_phase: u32,
    /// Phases of this iteration (contiguous from `first_phase`).
    pub n_phases: u32,
    /// The iteration this one waits for.
    pub after: Option<u32>,
    /// Iteration number (0-based).
    pub iteration: u32,
    /// The protocol of a collective job that reports in `nccl_tests.csv`; `None` for the
    /// others.
    pub protocol: Option<collective::protocol::Protocol>,
}

/// Everything a scenario's workloads generate.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    /// Flows, in a stable order.
    pub flows: Vec<FlowSpec>,
    /// `(before, after)`: flow `after` starts once flow `before` has been fully received
    /// (and not before its own start time).
    pub deps: Vec<(u32, u32)>,
    /// Compute phases (training jobs).
    pub phases: Vec<Phase>,
    /// Dependencies between flows and phases, from any moment, with a delay.
    pub timed: Vec<TimedDep>,
    /// Training jobs (their iterations are read back from the flows for training.csv).
    pub trainings: Vec<training::TrainingSpec>,
    /// Jobs (collective and software-collective workloads only).
    pub jobs: Vec<JobSpec>,
    /// Connection key of each flow: flows with the same key share a queue pair and hence
    /// a UDP source port and an ECMP path. `None`: a queue pair of its own.
    pub conn: Vec<Option<u64>>,
    /// How each flow is cut into frames (packets unless a collective asks for segments;
    /// shorter than `flows` when the last flows are all packets).
    pub frames: Vec<collective::segment::FrameSize>,
    /// Index of the `[[workload]]` entry each flow came from.
    pub origin: Vec<u32>,
    /// Hardware collective jobs (they make no flows).
    pub hw: Vec<crate::model::hw_collective::HwSpec>,
    /// Trace-driven training jobs.
    pub traces: Vec<trace::compile::TraceJob>,
    /// What the trace jobs' phases stand for on the timeline, by phase.
    pub trace_spans: Vec<(u32, trace::compile::SpanTag)>,
    /// Ranks down for a while (failures their jobs wait for).
    pub outages: Vec<trace::compile::Outage>,
    /// Jobs that stop at a time (a rank failed).
    pub stops: Vec<trace::compile::Stop>,
}

/// A node of a workload's dependency graph: a flow, or a compute phase of a rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// Flow `i` of [`Workload::flows`].
    Flow(u32),
    /// Phase `i` of [`Workload::phases`].
    Phase(u32),
}

/// The moment of a node that a dependency counts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DepPoint {
    /// A flow fully received; a phase ended.
    End,
    /// A flow started; a phase began.
    Start,
    /// A flow put its last byte on the wire for the first time (messages of one queue
    /// pair leave the NIC in order: the next may go once this one has been sent). Flows
    /// only.
    Sent,
}

/// A compute phase of a rank (a forward or backward pass, an optimizer step): it takes
/// `duration` of simulated time and uses no network. It begins when everything it waits
/// for is done, and not before `not_before`; phases with nothing to wait for begin at
/// `not_before`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// How long it computes.
    pub duration: Time,
    /// Earliest begin.
    pub not_before: Time,
    /// The host it runs on: a rank's compute, or a message between two ranks of one
    /// host. `None` for the points that only join the graph (an iteration's start, a
    /// barrier that gathers every rank): they belong to no host, and a dependency to or
    /// from one costs no notification ([`crate::model::transport::TransportCfg::notify_latency`]).
    pub host: Option<u32>,
}

/// A dependency: `after` may start (a flow) or begin (a phase) `lag` after `before`
/// reached `from`. Training jobs chain each rank's compute phases with `End` edges and
/// hang transfers off them; NCCL-like windows order the pieces of a queue pair with
/// `Sent` edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedDep {
    /// The node waited for.
    pub before: Node,
    /// The node that waits.
    pub after: Node,
    /// Delay after `before` reached `from`.
    pub lag: Time,
    /// Which moment of `before`.
    pub from: DepPoint,
}

impl TimedDep {
    /// `after` waits for `before`'s end, with no delay.
    pub fn end(before: Node, after: Node) -> TimedDep {
        TimedDep {
            before,
            after,
            lag: 0,
            from: DepPoint::End,
        }
    }
}

/// What a generator sees and adds to.
pub struct Builder<'a> {
    /// The network.
    pub graph: &'a TopoGraph,
    /// The run seed.
    pub seed: u64,
    /// Directory that files named in the entry are relative to.
    pub base_dir: &'a Path,
    /// Index of the `[[workload]]` entry being generated (names its RNG streams).
    pub entry: usize,
    /// Everything generated so far, this entry included. A generator pushes flows, and
    /// for flows that share a queue pair their `conn` key in step; flows it pushes
    /// without a key get a queue pair of their own.
    pub work: Workload,
    /// Collective job groups made so far (they name the queue pairs of their flows).
    pub job_groups: u64,
}

/// A kind of workload: its settings generate flows.
pub trait Generator {
    /// Adds this entry's flows (and for jobs their start-after edges and job records) to
    /// `b.work`. Errors name fields relative to the entry.
    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError>;

    /// Upper bounds on what [`Generator::generate`] adds, from the settings and the
    /// host count alone (files are read, within the input size limit), so that the
    /// memory budget ([`crate::scenario::budget`]) is checked before any flow is made. Saturating
    /// arithmetic: a bound never wraps. `None`: not known. Every kind implements it (no
    /// default); each says how tight its bound is.
    fn size(&self, ctx: &SizeCtx<'_>) -> Result<Option<WorkSize>, ParamError>;

    /// The settings that drive the size, as a user reads them (`"senders x repeat"`):
    /// the budget's refusal names them.
    fn size_drivers(&self) -> &'static str;

    /// The fields that multiply what the entry makes, each with the size it would have
    /// were that field at its least value: of these the budget names the one that drives
    /// a count (`workload[0].chunks`). Every kind implements it (no default); a kind whose
    /// count only the topology's hosts drive has none.
    fn size_knobs(&self, ctx: &SizeCtx<'_>) -> Vec<SizeKnob<WorkSize>>;

    /// The files this entry reads, as (its field, relative to the entry; the path as
    /// written): the resolved scenario makes each absolute, so that it reruns from any
    /// folder (`output::resolved`). Every kind implements it (no default), so a kind that
    /// reads a file cannot leave it out.
    fn files(&self) -> Vec<(&'static str, String)>;
}

/// What [`Generator::size`] sees.
pub struct SizeCtx<'a> {
    /// Hosts of the topology.
    pub hosts: u64,
    /// The fastest NIC's rate, bit/s ([`crate::model::topology::TopoSize::host_rate_bps`]); 0
    /// when not known.
    pub host_rate_bps: u64,
    /// Directory that files named in the entry are relative to.
    pub base_dir: &'a Path,
}

/// Upper bounds on what one workload entry generates ([`Generator::size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkSize {
    /// Flows (transfers, messages, collective pieces).
    pub flows: u64,
    /// Dependency edges (`TimedDep`s and start-after edges).
    pub deps: u64,
    /// Compute phases.
    pub phases: u64,
    /// Jobs.
    pub jobs: u64,
    /// Hardware-collective operations.
    pub hw_ops: u64,
    /// Hardware-collective iterations (`repeat`), each with its record.
    pub hw_iters: u64,
    /// Hardware-collective elements held at once: per rank, a partial reduction of the
    /// message's elements (ranks x size / element size).
    pub hw_elems: u64,
    /// Payload bytes all the flows carry together, at most; `None` when the settings do
    /// not bound it cheaply (the budget then prices packets at every buffer full).
    pub bytes: Option<u64>,
}

impl Default for WorkSize {
    /// Nothing, and bytes not bounded.
    fn default() -> Self {
        WorkSize {
            flows: 0,
            deps: 0,
            phases: 0,
            jobs: 0,
            hw_ops: 0,
            hw_iters: 0,
            hw_elems: 0,
            bytes: None,
        }
    }
}

impl WorkSize {
    /// Both, added without wrapping.
    pub fn plus(self, o: WorkSize) -> WorkSize {
        WorkSize {
            flows: self.flows.saturating_add(o.flows),
            deps: self.deps.saturating_add(o.deps),
            phases: self.phases.saturating_add(o.phases),
            jobs: self.jobs.saturating_add(o.jobs),
            hw_ops: self.hw_ops.saturating_add(o.hw_ops),
            hw_iters: self.hw_iters.saturating_add(o.hw_iters),
            hw_elems: self.hw_elems.saturating_add(o.hw_elems),
            bytes: self.bytes.zip(o.bytes).map(|(a, b)| a.saturating_add(b)),
        }
    }
}

/// Per `[[workload]]` entry, its size bound and the settings that drive it, without
/// generating anything. `None` for an entry whose size is not known.
pub fn size(
    cfgs: &[WorkloadCfg],
    hosts: u64,
    base_dir: &Path,
) -> Result<Vec<(Option<WorkSize>, &'static str)>, ParamError> {
    size_in(
        cfgs,
        &SizeCtx {
            hosts,
            host_rate_bps: 0,
            base_dir,
        },
    )
}

/// [`size`] with everything known of the topology.
pub fn size_in(
    cfgs: &[WorkloadCfg],
    ctx: &SizeCtx<'_>,
) -> Result<Vec<(Option<WorkSize>, &'static str)>, ParamError> {
    cfgs.iter()
        .enumerate()
        .map(|(i, w)| {
            let m = w.model();
            Ok((
                m.size(ctx).map_err(|e| e.within(&format!("[{i}]")))?,
                m.size_drivers(),
            ))
        })
        .collect()
}

/// The knobs of one `[[workload]]` entry ([`Generator::size_knobs`]).
pub fn size_knobs(cfg: &WorkloadCfg, ctx: &SizeCtx<'_>) -> Vec<SizeKnob<WorkSize>> {
    cfg.model().size_knobs(ctx)
}

/// How many hosts a set names, for [`Generator::size`], from the host count alone:
/// `"all"` is every host (but the `excluded` one, when there is one), a count is itself
/// and a list its length. Exact for every set [`resolve_set`] accepts; a count beyond the
/// hosts available gives those available (generating refuses it anyway).
pub fn set_size(s: &HostSet, hosts: u64, excluded: bool) -> u64 {
    let avail = if excluded {
        hosts.saturating_sub(1)
    } else {
        hosts
    };
    match s {
        HostSet::Word(_) => avail,
        HostSet::Count(c) => (*c).max(0).unsigned_abs().min(avail),
        HostSet::List(l) => l.len() as u64,
    }
}

/// Flows a transfer of `bytes` becomes: one, or with a `window` one per chunk
/// ([`channel_window::apply`] cuts every transfer into `chunk`-byte pieces, at least one).
pub fn window_pieces(bytes: u64, window: Option<&channel_window::Window>) -> u64 {
    match window {
        Some(w) => bytes.div_ceil(w.chunk.max(1)).max(1),
        None => 1,
    }
}

/// Flows and dependency edges of a pattern of `pieces` transfer pieces and `edges`
/// piece-to-piece edges once a window has added its slot credits: at most one credit per
/// piece (a credit frees the slot of a piece `slots` earlier on its queue pair), with two
/// edges each, and one `Sent` edge per piece after the first of its queue pair.
pub fn with_window(pieces: u64, edges: u64, window: bool) -> (u64, u64) {
    if window {
        (
            pieces.saturating_mul(2),
            edges.saturating_add(pieces.saturating_mul(3)),
        )
    } else {
        (pieces, edges)
    }
}

/// Generates every flow of the scenario, in a stable order. Errors name fields relative
/// to the `workload` list (`[2].flows[0].dst`).
pub fn generate(
    cfgs: &[WorkloadCfg],
    g: &TopoGraph,
    seed: u64,
    base_dir: &Path,
) -> Result<Workload, ParamError> {
    if cfgs.is_empty() {
        let kinds: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
        let (last, rest) = kinds.split_last().expect("workload kinds are registered");
        return Err(ParamError::new(
            "",
            format!(
                "the scenario has no workload: add a [[workload]] section (kind = {} or {last})",
                rest.join(", ")
            ),
        ));
    }
    let mut b = Builder {
        graph: g,
        seed,
        base_dir,
        entry: 0,
        work: Workload::default(),
        job_groups: 0,
    };
    for (wi, w) in cfgs.iter().enumerate() {
        b.entry = wi;
        let (before, hw_before, phases_before) =
            (b.work.flows.len(), b.work.hw.len(), b.work.phases.len());
        b.work.conn.resize(before, None);
        w.model()
            .generate(&mut b)
            .map_err(|e| e.within(&format!("[{wi}]")))?;
        // Every generator checks its own hosts (and names the field); this catches any
        // that would still pair a host with itself, before the run does.
        if let Some((i, f)) =
            (b.work.flows[before..].iter().enumerate()).find(|(_, f)| f.src == f.dst)
        {
            return Err(ParamError::new(
                format!("[{wi}]"),
                format!(
                    "the workload's flow {i} goes from host {} to itself: a flow needs two distinct hosts",
                    f.src
                ),
            ));
        }
        // A trace of compute alone makes phases and no flow.
        if b.work.flows.len() == before
            && b.work.hw.len() == hw_before
            && b.work.phases.len() == phases_before
        {
            return Err(ParamError::new(
                format!("[{wi}]"),
                "this workload produced no flows",
            ));
        }
        b.work.origin.resize(b.work.flows.len(), wi as u32);
    }
    let mut w = b.work;
    w.conn.resize(w.flows.len(), None);
    Ok(w)
}
