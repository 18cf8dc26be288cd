//! Workloads: turn the scenario's `[[workload]]` entries into a list of flows.
//!
//! Generators with random choices (the permutation) draw from an RNG seeded from the run
//! seed and the generator's position, so a workload is a pure function of the scenario and
//! the seed. Files (CSV, the ns-3 HPCC flow format) are read relative to the scenario file.

pub mod files;

use crate::engine::MAX_INDEX;
use crate::scenario::config::{HostRef, HostSet, WorkloadCfg};
use crate::scenario::ScenarioError;
use crate::seed::component_rng;
use crate::topology::TopoGraph;
use crate::transport::FlowSpec;
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

/// Generates every flow of the scenario, in a stable order.
pub fn generate(
    cfgs: &[WorkloadCfg],
    g: &TopoGraph,
    seed: u64,
    base_dir: &Path,
    file: &str,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    if cfgs.is_empty() {
        return Err(ScenarioError::field(
            file,
            "workload",
            "the scenario has no workload: add a [[workload]] section (kind = flows, csv, hpcc_flow_file, incast, permutation or all_to_all)",
        ));
    }
    let mut out = Vec::new();
    for (wi, w) in cfgs.iter().enumerate() {
        let fld = |s: &str| format!("workload[{wi}].{s}");
        let before = out.len();
        match w {
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
            } => {
                let r = resolve_host(receiver, g, file, &fld("receiver"))?;
                let s = resolve_set(senders, g, file, &fld("senders"), Some(r))?;
                check_size(*size, file, &fld("size"))?;
                if s.contains(&r) {
                    return Err(ScenarioError::field(
                        file,
                        fld("senders"),
                        "the receiver cannot also be a sender",
                    ));
                }
                for src in s {
                    out.push(FlowSpec {
                        src,
                        dst: r,
                        size: *size,
                        start: start.unwrap_or(0),
                    });
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
        }
        if out.len() == before {
            return Err(ScenarioError::field(
                file,
                format!("workload[{wi}]"),
                "this workload produced no flows",
            ));
        }
    }
    Ok(out)
}
