//! The compiled job's graph has no cycle: each rank's file is acyclic (checked by
//! [`super::ir::Trace::validate`]), but ranks that each receive before they send what the
//! other waits for, or issue collectives in different orders, wait for each other.

use super::ir::Trace;
use crate::base::param::ParamError;
use crate::model::workload::{Node, TimedDep};

/// Refuses a job whose ranks wait for each other in a cycle (each receiving before it
/// sends, say): each rank's file is acyclic, but across ranks it may not be. Names a
/// node that could never start.
pub(super) fn check(
    trace: &Trace,
    flows: (u32, u32),
    phases: (u32, u32),
    timed: &[TimedDep],
    origin_flow: &[(u32, u64)],
    origin_phase: &[(u32, u64)],
) -> Result<(), ParamError> {
    let nf = (flows.1 - flows.0) as usize;
    let np = (phases.1 - phases.0) as usize;
    let local = |v: Node| match v {
        Node::Flow(f) => (f - flows.0) as usize,
        Node::Phase(p) => nf + (p - phases.0) as usize,
    };
    let total = nf + np;
    let mut indeg = vec![0u32; total];
    let mut off = vec![0u32; total + 1];
    for t in timed {
        off[local(t.before) + 1] += 1;
        indeg[local(t.after)] += 1;
    }
    for i in 0..total {
        off[i + 1] += off[i];
    }
    let mut fill = off.clone();
    let mut succ = vec![0u32; timed.len()];
    for t in timed {
        let b = local(t.before);
        succ[fill[b] as usize] = local(t.after) as u32;
        fill[b] += 1;
    }
    let mut stack: Vec<u32> = (0..total as u32)
        .filter(|&i| indeg[i as usize] == 0)
        .collect();
    let mut seen = 0usize;
    while let Some(v) = stack.pop() {
        seen += 1;
        for k in off[v as usize]..off[v as usize + 1] {
            let s = succ[k as usize] as usize;
            indeg[s] -= 1;
            if indeg[s] == 0 {
                stack.push(s as u32);
            }
        }
    }
    if seen == total {
        return Ok(());
    }
    // The first stuck node that stands for a trace node.
    let stuck = (0..total).filter(|&i| indeg[i] > 0).find_map(|i| {
        let (r, id) = if i < nf {
            origin_flow[i]
        } else {
            origin_phase[i - nf]
        };
        (id != u64::MAX).then_some((r, id))
    });
    let (r, id) = stuck.unwrap_or((0, 0));
    Err(ParamError::new(
        "path",
        format!(
            "trace {}, node {id}, field `data_deps`: the ranks wait for each other in a cycle, so this node could never start (a rank receives before it sends what its peer waits for, or collectives are issued in different orders)",
            trace.ranks[r as usize].file
        ),
    ))
}
