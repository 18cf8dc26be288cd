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
pub mod collective;
pub mod files;
pub mod flows;
pub mod hw_collective;
pub mod incast;
pub mod permutation;
pub mod poisson;
pub mod registry;
pub mod sw_collective;
pub mod training;
pub mod window;

pub use collective::{CollectiveCfg, CollectiveKind, JobGrouping};
pub use flows::{FlowCfg, FlowsCfg};
pub use poisson::PoissonCfg;
pub use registry::{WorkloadCfg, KINDS};
pub use sw_collective::{SwCollective, SwCollectiveCfg};

use crate::param::{Param, ParamError};
use crate::topology::TopoGraph;
use crate::transport::FlowSpec;
use crate::units::Time;
use serde::Deserialize;
use std::path::Path;

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
            .ok_or_else(|| ParamError::new(field, format!("no host named `{s}`"))),
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
    /// Index of the `[[workload]]` entry each flow came from.
    pub origin: Vec<u32>,
    /// Hardware collective jobs (they make no flows).
    pub hw: Vec<crate::collective::HwSpec>,
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
        let (before, hw_before) = (b.work.flows.len(), b.work.hw.len());
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
        if b.work.flows.len() == before && b.work.hw.len() == hw_before {
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
