//! Workloads: turn the scenario's `[[workload]]` entries into a list of flows.
//!
//! Generators with random choices (the permutation) draw from an RNG seeded from the run
//! seed and the generator's position, so a workload is a pure function of the scenario and
//! the seed. Files (CSV, the ns-3 HPCC flow format) are read relative to the scenario file.

pub mod cdf;
pub mod collective;
pub mod files;
pub mod poisson;

use crate::engine::MAX_INDEX;
use crate::scenario::config::{
    CollectiveCfg, CollectiveKind, HostRef, HostSet, JobGrouping, WorkloadCfg,
};
use crate::scenario::ScenarioError;
use crate::seed::component_rng;
use crate::topology::TopoGraph;
use crate::transport::FlowSpec;
use crate::units::Time;
use rand::Rng;
use std::path::Path;

/// Resolves a host reference to a host id.
pub fn resolve_host(
    r: &HostRef,
    g: &TopoGraph,
    file: &str,
    field: &str,
) -> Result<u32, ScenarioError> {
    let n = g.hosts.len();
    match r {
        HostRef::Index(i) => {
            if *i < 0 || *i as usize >= n {
                Err(ScenarioError::field(
                    file,
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
            .ok_or_else(|| ScenarioError::field(file, field, format!("no host named `{s}`"))),
    }
}

fn resolve_set(
    s: &HostSet,
    g: &TopoGraph,
    file: &str,
    field: &str,
    exclude: Option<u32>,
) -> Result<Vec<u32>, ScenarioError> {
    let n = g.hosts.len() as u32;
    let v: Vec<u32> = match s {
        HostSet::Word(w) if w == "all" => (0..n).filter(|h| Some(*h) != exclude).collect(),
        HostSet::Word(w) => {
            return Err(ScenarioError::field(
                file,
                field,
                format!("`{w}` is not a host set: use \"all\", a count, or a list of hosts"),
            ))
        }
        HostSet::Count(c) => {
            let avail: Vec<u32> = (0..n).filter(|h| Some(*h) != exclude).collect();
            if *c <= 0 || *c as usize > avail.len() {
                return Err(ScenarioError::field(
                    file,
                    field,
                    format!(
                        "{c} hosts asked for, between 1 and {} are available",
                        avail.len()
                    ),
                ));
            }
            avail[..*c as usize].to_vec()
        }
        HostSet::List(l) => l
            .iter()
            .enumerate()
            .map(|(i, r)| resolve_host(r, g, file, &format!("{field}[{i}]")))
            .collect::<Result<_, _>>()?,
    };
    Ok(v)
}

fn check_size(size: u64, file: &str, field: &str) -> Result<(), ScenarioError> {
    if size == 0 {
        return Err(ScenarioError::field(
            file,
            field,
            "a flow must carry at least 1 byte",
        ));
    }
    Ok(())
}

/// The hosts of a group workload (permutation, all-to-all) of flows of `size` bytes;
/// `prefix` is the workload's field path ending in a dot.
fn host_group(
    hosts: &HostSet,
    size: u64,
    g: &TopoGraph,
    file: &str,
    prefix: &str,
    what: &str,
) -> Result<Vec<u32>, ScenarioError> {
    let hs = resolve_set(hosts, g, file, &format!("{prefix}hosts"), None)?;
    check_size(size, file, &format!("{prefix}size"))?;
    if hs.len() < 2 {
        return Err(ScenarioError::field(
            file,
            format!("{prefix}hosts"),
            format!("{what} needs at least 2 hosts"),
        ));
    }
    Ok(hs)
}

/// One iteration of a job: a collective over a set of ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// The collective.
    pub collective: CollectiveKind,
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
    /// Jobs (collective workloads only).
    pub jobs: Vec<JobSpec>,
    /// Connection key of each flow: flows with the same key share a queue pair and hence
    /// a UDP source port and an ECMP path. `None`: a queue pair of its own.
    pub conn: Vec<Option<u64>>,
    /// Index of the `[[workload]]` entry each flow came from.
    pub origin: Vec<u32>,
}

/// Generates every flow of the scenario, in a stable order.
pub fn generate(
    cfgs: &[WorkloadCfg],
    g: &TopoGraph,
    seed: u64,
    base_dir: &Path,
    file: &str,
) -> Result<Workload, ScenarioError> {
    let mut w = Workload::default();
    w.flows = generate_flows(
        cfgs,
        g,
        seed,
        base_dir,
        file,
        &mut w.deps,
        &mut w.jobs,
        &mut w.conn,
        &mut w.origin,
    )?;
    w.conn.resize(w.flows.len(), None);
    Ok(w)
}

/// Ranks of each job of a collective workload.
fn collective_groups(
    c: &CollectiveCfg,
    g: &TopoGraph,
    file: &str,
    prefix: &str,
) -> Result<Vec<Vec<u32>>, ScenarioError> {
    let hs = resolve_set(&c.hosts, g, file, &format!("{prefix}hosts"), None)?;
    let groups = match c.jobs {
        JobGrouping::One => vec![hs],
        JobGrouping::NicIndex => {
            // Index of each host within its server, in host order.
            let mut seen: std::collections::BTreeMap<u32, u32> = Default::default();
            let mut by_idx: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
            for h in hs {
                let server = g.server_of_host.get(h as usize).copied().unwrap_or(h);
                let k = seen.entry(server).or_insert(0);
                by_idx.entry(*k).or_default().push(h);
                *k += 1;
            }
            by_idx.into_values().collect()
        }
    };
    for (j, ranks) in groups.iter().enumerate() {
        if ranks.len() < 2 {
            return Err(ScenarioError::field(
                file,
                format!("{prefix}hosts"),
                format!(
                    "job {j} has {} rank(s): a collective needs at least 2 (with jobs = \"nic_index\", hosts must span at least 2 servers)",
                    ranks.len()
                ),
            ));
        }
        if c.collective == CollectiveKind::HalvingDoubling && !ranks.len().is_power_of_two() {
            return Err(ScenarioError::field(
                file,
                format!("{prefix}collective"),
                format!(
                    "halving_doubling needs a power-of-two number of ranks; job {j} has {}",
                    ranks.len()
                ),
            ));
        }
    }
    Ok(groups)
}

#[allow(clippy::too_many_arguments)]
fn generate_flows(
    cfgs: &[WorkloadCfg],
    g: &TopoGraph,
    seed: u64,
    base_dir: &Path,
    file: &str,
    deps: &mut Vec<(u32, u32)>,
    jobs: &mut Vec<JobSpec>,
    conn: &mut Vec<Option<u64>>,
    origin: &mut Vec<u32>,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    if cfgs.is_empty() {
        return Err(ScenarioError::field(
            file,
            "workload",
            "the scenario has no workload: add a [[workload]] section (kind = flows, csv, hpcc_flow_file, incast, permutation, all_to_all, collective or poisson)",
        ));
    }
    let mut out: Vec<FlowSpec> = Vec::new();
    let mut job_groups = 0u64;
    for (wi, w) in cfgs.iter().enumerate() {
        let fld = |s: &str| format!("workload[{wi}].{s}");
        let before = out.len();
        conn.resize(out.len(), None);
        match w {
            WorkloadCfg::Collective(c) => {
                check_size(c.size, file, &fld("size"))?;
                for (name, v) in [
                    ("repeat", c.repeat),
                    ("chunks", c.chunks),
                    ("channels", c.channels),
                ] {
                    if v == 0 {
                        return Err(ScenarioError::field(file, fld(name), "must be at least 1"));
                    }
                }
                let groups = collective_groups(c, g, file, &fld(""))?;
                for ranks in groups {
                    let dag = collective::build(
                        c.collective,
                        &ranks,
                        c.size,
                        c.channels,
                        c.chunks,
                        c.rounds,
                    );
                    let group = job_groups;
                    job_groups += 1;
                    let mut prev_job: Option<u32> = None;
                    for it in 0..c.repeat {
                        let first = out.len() as u64;
                        if first + dag.transfers.len() as u64 > MAX_INDEX as u64 {
                            return Err(ScenarioError::field(
                                file,
                                fld("repeat"),
                                format!("the collectives make more than {MAX_INDEX} flows"),
                            ));
                        }
                        let first = first as u32;
                        for t in &dag.transfers {
                            out.push(FlowSpec {
                                src: t.src,
                                dst: t.dst,
                                size: t.size,
                                start: c.start.unwrap_or(0),
                            });
                            let key = crate::seed::component_seed(
                                seed,
                                &format!("job{group}/ch{}/{}-{}", t.channel, t.src, t.dst),
                            );
                            conn.push(Some(key));
                        }
                        for &(b, a) in &dag.edges {
                            deps.push((first + b, first + a));
                        }
                        jobs.push(JobSpec {
                            collective: c.collective,
                            ranks: ranks.clone(),
                            size: c.size,
                            start: c.start.unwrap_or(0),
                            first_flow: first,
                            n_flows: dag.transfers.len() as u32,
                            after: prev_job,
                            iteration: it,
                        });
                        prev_job = Some((jobs.len() - 1) as u32);
                    }
                }
            }
            WorkloadCfg::Flows { flows } => {
                for (i, f) in flows.iter().enumerate() {
                    let src = resolve_host(&f.src, g, file, &fld(&format!("flows[{i}].src")))?;
                    let dst = resolve_host(&f.dst, g, file, &fld(&format!("flows[{i}].dst")))?;
                    if src == dst {
                        return Err(ScenarioError::field(
                            file,
                            fld(&format!("flows[{i}].dst")),
                            "a flow's source and destination must differ",
                        ));
                    }
                    check_size(f.size, file, &fld(&format!("flows[{i}].size")))?;
                    out.push(FlowSpec {
                        src,
                        dst,
                        size: f.size,
                        start: f.start.unwrap_or(0),
                    });
                }
            }
            WorkloadCfg::Csv { file: path } => {
                let p = base_dir.join(path);
                out.extend(files::read_csv(
                    &p,
                    g.hosts.len() as u32,
                    &fld("file"),
                    file,
                )?);
            }
            WorkloadCfg::HpccFlowFile { file: path } => {
                let p = base_dir.join(path);
                out.extend(files::read_hpcc(
                    &p,
                    g.hosts.len() as u32,
                    &fld("file"),
                    file,
                )?);
            }
            WorkloadCfg::Incast {
                senders,
                receiver,
                size,
                start,
                repeat,
                interval,
            } => {
                let r = resolve_host(receiver, g, file, &fld("receiver"))?;
                let repeat = repeat.unwrap_or(1);
                if repeat == 0 {
                    return Err(ScenarioError::field(
                        file,
                        fld("repeat"),
                        "must be at least 1",
                    ));
                }
                let every = match interval {
                    Some(0) => {
                        return Err(ScenarioError::field(
                            file,
                            fld("interval"),
                            "must be positive",
                        ))
                    }
                    Some(t) => *t,
                    None if repeat > 1 => {
                        return Err(ScenarioError::field(
                            file,
                            fld("interval"),
                            "is required when repeat > 1 (the time between a sender's bursts)",
                        ))
                    }
                    None => 0,
                };
                let s = resolve_set(senders, g, file, &fld("senders"), Some(r))?;
                check_size(*size, file, &fld("size"))?;
                if s.contains(&r) {
                    return Err(ScenarioError::field(
                        file,
                        fld("senders"),
                        "the receiver cannot also be a sender",
                    ));
                }
                for k in 0..repeat as u64 {
                    for &src in &s {
                        out.push(FlowSpec {
                            src,
                            dst: r,
                            size: *size,
                            start: start.unwrap_or(0) + k * every,
                        });
                    }
                }
            }
            WorkloadCfg::Permutation { hosts, size, start } => {
                let hs = host_group(hosts, *size, g, file, &fld(""), "a permutation")?;
                // Sattolo's algorithm draws a uniformly random cyclic permutation, which
                // has no fixed point: nobody sends to itself.
                let mut perm: Vec<u32> = hs.clone();
                let mut rng = component_rng(seed, &format!("workload[{wi}].permutation"));
                for i in (1..perm.len()).rev() {
                    let j = rng.gen_range(0..i);
                    perm.swap(i, j);
                }
                for (src, dst) in hs.iter().zip(perm.iter()) {
                    out.push(FlowSpec {
                        src: *src,
                        dst: *dst,
                        size: *size,
                        start: start.unwrap_or(0),
                    });
                }
            }
            WorkloadCfg::AllToAll { hosts, size, start } => {
                let hs = host_group(hosts, *size, g, file, &fld(""), "all-to-all")?;
                let n = hs.len() as u64;
                if (out.len() as u64).saturating_add(n * (n - 1)) > MAX_INDEX as u64 {
                    return Err(ScenarioError::field(
                        file,
                        fld("hosts"),
                        format!(
                            "all-to-all among {n} hosts is {} flows: at most {MAX_INDEX} per run",
                            n * (n - 1)
                        ),
                    ));
                }
                for &src in &hs {
                    for &dst in &hs {
                        if src != dst {
                            out.push(FlowSpec {
                                src,
                                dst,
                                size: *size,
                                start: start.unwrap_or(0),
                            });
                        }
                    }
                }
            }
            WorkloadCfg::Poisson(c) => {
                let flows = poisson::generate(c, g, seed, base_dir, file, wi, out.len())?;
                out.extend(flows);
            }
        }
        if out.len() == before {
            return Err(ScenarioError::field(
                file,
                format!("workload[{wi}]"),
                "this workload produced no flows",
            ));
        }
        origin.resize(out.len(), wi as u32);
    }
    Ok(out)
}
