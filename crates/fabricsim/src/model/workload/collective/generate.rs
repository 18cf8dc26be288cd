//! A collective workload's jobs: the checks, then for each job, size and iteration the
//! transfer graph of the algorithm that runs, with its protocol's costs.
//!
//! A protocol ([`super::protocol`]) acts on the built graph: every transfer carries its
//! wire bytes, every "starts after" edge waits the protocol's per-step latency more, and
//! an iteration opens with a join point of that latency, which the first step waits for:
//! `k` dependent steps pay `k` latencies.

use super::select::{self, JobShape};
use super::{
    build, build_hierarchical, build_nvls, groups, servers_of, CollectiveCfg, CollectiveKind,
    JobGrouping,
};
use crate::base::ids::MAX_INDEX;
use crate::base::param::ParamError;
use crate::model::topology::TopoGraph;
use crate::model::workload::{
    check_size, Builder, DepPoint, FlowSpec, JobKind, JobSpec, Node, Phase, TimedDep, DEFAULT_START,
};

/// The collectives of old, whose jobs have no `nccl_tests.csv` row unless a sweep or a
/// protocol is asked for.
pub(super) const BARE: [CollectiveKind; 5] = [
    CollectiveKind::RingAllreduce,
    CollectiveKind::Alltoall,
    CollectiveKind::HalvingDoubling,
    CollectiveKind::P2p,
    CollectiveKind::HierarchicalAllreduce,
];

/// The message sizes the workload runs: `size`, or its `sizes`.
pub(super) fn sizes(c: &CollectiveCfg) -> Result<Vec<u64>, ParamError> {
    match &c.sizes {
        Some(_) if c.size > 0 => Err(ParamError::new("sizes", "give `size` or `sizes`, not both")),
        Some(sw) => sw.sizes().map_err(|e| e.within("sizes")),
        None if c.size == 0 => Err(ParamError::new(
            "size",
            "required: the message bytes per rank, at least 1 (or `sizes`, a sweep)",
        )),
        None => {
            check_size(c.size, "size")?;
            Ok(vec![c.size])
        }
    }
}

pub(crate) fn check(c: &CollectiveCfg) -> Result<(), ParamError> {
    for (name, v) in [
        ("repeat", c.repeat),
        ("chunks", c.chunks),
        ("channels", c.channels),
    ] {
        if v == 0 {
            return Err(ParamError::new(name, "must be at least 1"));
        }
    }
    let by_server = matches!(
        c.collective,
        CollectiveKind::HierarchicalAllreduce | CollectiveKind::NvlsAllreduce
    );
    if by_server && c.jobs != JobGrouping::One {
        return Err(ParamError::new(
            "jobs",
            format!(
                "{} groups its ranks by server itself: use jobs = \"one\"",
                c.collective.name()
            ),
        ));
    }
    if let Some(w) = &c.window {
        if !BARE.contains(&c.collective) || by_server || c.protocol.is_some() {
            return Err(ParamError::new(
                "window",
                format!(
                    "{} takes no window{}: use chunks",
                    c.collective.name(),
                    if c.protocol.is_some() {
                        " with a protocol"
                    } else {
                        " yet"
                    }
                ),
            ));
        }
        w.validate(c.window_traffic())
            .map_err(|e| e.within("window"))?;
        if c.chunks != 1 {
            return Err(ParamError::new(
                "chunks",
                "a window cuts transfers into its own chunks: set window.chunk, not chunks",
            ));
        }
    }
    Ok(())
}

/// Servers of `ranks` as [`servers_of`] groups them, and whether they have the same
/// count each (what NVLS and the hierarchical AllReduce need).
pub(crate) fn shape(ranks: &[u32], g: &TopoGraph) -> (JobShape, Option<Vec<Vec<usize>>>) {
    let mut seen: Vec<u32> = ranks
        .iter()
        .map(|&h| g.server_of_host.get(h as usize).copied().unwrap_or(h))
        .collect();
    seen.sort_unstable();
    seen.dedup();
    let servers = servers_of(ranks, g).ok();
    let nvswitch = servers
        .as_ref()
        .is_some_and(|s| select::nvswitch_domains(g, ranks, s));
    let shape = JobShape {
        ranks: ranks.len() as u64,
        servers: seen.len() as u64,
        nvswitch,
    };
    (shape, servers)
}

/// One collective planned: the algorithm that runs, its protocol, its transfer graph
/// and how its transfers are cut into frames.
pub(crate) struct Planned {
    /// The algorithm.
    pub kind: CollectiveKind,
    /// The protocol.
    pub proto: super::protocol::Protocol,
    /// The transfers and their edges.
    pub dag: super::Dag,
    /// Packets, or segments.
    pub frames: super::segment::FrameSize,
}

/// Plans `c`'s collective over `ranks` (of the given shape and, when known, servers)
/// for a message of `size` bytes. Errors name fields of `c`.
pub(crate) fn plan(
    c: &CollectiveCfg,
    ranks: &[u32],
    shape: JobShape,
    servers: Option<&[Vec<usize>]>,
    size: u64,
    g: &TopoGraph,
) -> Result<Planned, ParamError> {
    let kind = select::algorithm(c.collective, c.algorithm, shape, size)?;
    let proto = select::protocol(c.collective.is_operation(), c.protocol, kind, size)?;
    let by_server = || servers_of(ranks, g);
    let mut dag = match kind {
        CollectiveKind::HierarchicalAllreduce => {
            build_hierarchical(ranks, &by_server()?, size, c.channels, c.chunks)
        }
        CollectiveKind::NvlsAllreduce => {
            let servers = match servers {
                Some(s) => s.to_vec(),
                None => by_server()?,
            };
            build_nvls(ranks, &servers, size, c.channels, c.chunks)
        }
        k => build(k, ranks, size, c.channels, c.chunks, c.rounds),
    };
    if let Some(w) = c.resolved_window() {
        dag = super::super::channel_window::apply(&dag, &w).0;
    }
    let frames = c
        .segment
        .map_or(super::segment::FrameSize::Mtu, |sg| sg.frames(size));
    Ok(Planned {
        kind,
        proto,
        dag,
        frames,
    })
}

pub(super) fn generate(c: &CollectiveCfg, b: &mut Builder<'_>) -> Result<(), ParamError> {
    let sizes = sizes(c)?;
    check(c)?;
    let record = c.sizes.is_some()
        || c.protocol.is_some()
        || c.algorithm.is_some()
        || !BARE.contains(&c.collective);
    let start = c.start.unwrap_or(DEFAULT_START);
    for ranks in groups(c, b)? {
        let (shape, servers) = shape(&ranks, b.graph);
        let group = b.job_groups;
        b.job_groups += 1;
        let mut prev_job: Option<u32> = None;
        for &size in &sizes {
            let Planned {
                kind,
                proto,
                dag,
                frames,
            } = plan(c, &ranks, shape, servers.as_deref(), size, b.graph)?;
            let lat = proto.step_latency();
            // Transfers that wait for nothing: the first step, after the opening latency.
            let mut waits = vec![false; dag.transfers.len()];
            for &(_, a) in dag.edges.iter().chain(&dag.sent) {
                waits[a as usize] = true;
            }
            for it in 0..c.repeat {
                let w = &mut b.work;
                let first = w.flows.len() as u64;
                if first + dag.transfers.len() as u64 > MAX_INDEX as u64 {
                    return Err(ParamError::new(
                        "repeat",
                        format!("the collectives make more than {MAX_INDEX} flows"),
                    ));
                }
                let first = first as u32;
                if frames != super::segment::FrameSize::Mtu {
                    w.frames.resize(first as usize, Default::default());
                    w.frames
                        .resize(first as usize + dag.transfers.len(), frames);
                }
                for t in &dag.transfers {
                    w.flows.push(FlowSpec {
                        src: t.src,
                        dst: t.dst,
                        size: proto.wire_bytes(t.size),
                        start,
                    });
                    let key = crate::base::seed::component_seed(
                        b.seed,
                        &format!("job{group}/ch{}/{}-{}", t.channel, t.src, t.dst),
                    );
                    w.conn.push(Some(key));
                }
                let first_phase = w.phases.len() as u32;
                let n_phases = u32::from(lat > 0);
                if lat > 0 {
                    w.phases.push(Phase {
                        duration: lat,
                        not_before: start,
                        host: None,
                    });
                    w.timed.extend(
                        (0..dag.transfers.len() as u32)
                            .filter(|&i| !waits[i as usize])
                            .map(|i| {
                                TimedDep::end(Node::Phase(first_phase), Node::Flow(first + i))
                            }),
                    );
                    w.timed
                        .extend(dag.edges.iter().map(|&(before, after)| TimedDep {
                            before: Node::Flow(first + before),
                            after: Node::Flow(first + after),
                            lag: lat,
                            from: DepPoint::End,
                        }));
                } else {
                    for &(before, after) in &dag.edges {
                        w.deps.push((first + before, first + after));
                    }
                }
                w.timed
                    .extend(dag.sent.iter().map(|&(before, after)| TimedDep {
                        before: Node::Flow(first + before),
                        after: Node::Flow(first + after),
                        lag: 0,
                        from: DepPoint::Sent,
                    }));
                w.jobs.push(JobSpec {
                    collective: JobKind::Collective(kind),
                    ranks: ranks.clone(),
                    size,
                    start,
                    first_flow: first,
                    n_flows: dag.transfers.len() as u32,
                    first_phase,
                    n_phases,
                    after: prev_job,
                    iteration: it,
                    protocol: record.then_some(proto),
                });
                prev_job = Some((w.jobs.len() - 1) as u32);
            }
        }
    }
    Ok(())
}
