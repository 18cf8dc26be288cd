//! What a training trace says, whatever file it came from: per rank, a list of nodes
//! (compute, collective, send, receive, and points that only order others) with the
//! nodes each waits for. The Chakra reader ([`super::chakra`]) and the AICB reader
//! ([`super::aicb`]) both produce a [`Trace`]; [`Trace::validate`] checks what no reader
//! can check alone (a dependency on a node that does not exist, a cycle, sends without
//! their receives, collectives whose ranks disagree) before the trace is compiled
//! ([`super::compile`]) into flows and compute phases.

use crate::base::units::Time;
use std::collections::HashMap;

/// Largest message a trace node may move: 1 TiB (a size above it is a misread field,
/// as a signed count read as unsigned is).
pub const MAX_COMM_BYTES: u64 = 1 << 40;

/// Largest compute node: 1000 s of simulated time.
pub const MAX_COMPUTE: Time = 1_000 * crate::base::units::SEC;

/// A collective operation of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollOp {
    /// AllReduce.
    AllReduce,
    /// AllGather (`size`: the gathered buffer).
    AllGather,
    /// ReduceScatter (`size`: each rank's input).
    ReduceScatter,
    /// AlltoAll (`size`: each rank's send buffer).
    AllToAll,
    /// Broadcast from the communicator's first rank.
    Broadcast,
    /// Barrier: an AllReduce of one 4-byte element, as PyTorch runs it over NCCL.
    Barrier,
}

impl CollOp {
    /// The name in messages and `jobs.csv`.
    pub fn name(self) -> &'static str {
        match self {
            CollOp::AllReduce => "allreduce",
            CollOp::AllGather => "allgather",
            CollOp::ReduceScatter => "reduce_scatter",
            CollOp::AllToAll => "alltoall",
            CollOp::Broadcast => "broadcast",
            CollOp::Barrier => "barrier",
        }
    }
}

/// How long a compute node takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compute {
    /// The trace's own duration.
    Duration(Time),
    /// Floating-point operations: the time is these over the GPU's rate (the workload's
    /// `gpu_flops`).
    Flops(u64),
}

/// What a node does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// The rank computes.
    Comp(Compute),
    /// A collective over a communicator (`group`: its name in the trace, `None` for
    /// every rank of the trace). The k-th collective of a communicator on each of its
    /// ranks is one collective, as NCCL issues them in the same order everywhere.
    Coll {
        /// The operation.
        op: CollOp,
        /// Bytes (see [`CollOp`] for what they count).
        size: u64,
        /// The communicator.
        group: Option<String>,
    },
    /// Sends `size` bytes to rank `peer`, matched with that rank's receive from this
    /// one with the same `tag` (the k-th send with the k-th receive).
    Send {
        /// The receiving rank.
        peer: u32,
        /// The message tag.
        tag: u64,
        /// Bytes.
        size: u64,
    },
    /// Receives `size` bytes from rank `peer` (see [`NodeKind::Send`]).
    Recv {
        /// The sending rank.
        peer: u32,
        /// The message tag.
        tag: u64,
        /// Bytes.
        size: u64,
    },
    /// Takes no time: it only orders the nodes around it (Chakra's metadata nodes).
    Point,
}

/// One node of a rank's trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceNode {
    /// The node's id in its file (unique within the rank).
    pub id: u64,
    /// Its name (shown on the timeline).
    pub name: String,
    /// What it does.
    pub kind: NodeKind,
    /// Nodes of the same rank whose end it waits for: data and control dependencies
    /// alike (both only order execution here).
    pub deps: Vec<u64>,
}

/// One rank's trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankTrace {
    /// The file it was read from (messages name it).
    pub file: String,
    /// Its nodes, in file order.
    pub nodes: Vec<TraceNode>,
}

/// A whole trace: one [`RankTrace`] per rank, rank `r` at index `r`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// The ranks.
    pub ranks: Vec<RankTrace>,
}

/// A trace error: the file, the node (when there is one), the field and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The file.
    pub file: String,
    /// The node's id.
    pub node: Option<u64>,
    /// The field of the node (`data_deps`, `comm_size`, ...), or of the file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(n) = self.node {
            write!(f, ", node {n}")?;
        }
        if !self.field.is_empty() {
            write!(f, ", field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl TraceError {
    /// An error of `file`'s node `node`, field `field`.
    pub fn node(file: &str, node: u64, field: &str, message: impl Into<String>) -> TraceError {
        TraceError {
            file: file.to_string(),
            node: Some(node),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// An error of `file` as a whole.
    pub fn file(file: &str, field: &str, message: impl Into<String>) -> TraceError {
        TraceError {
            file: file.to_string(),
            node: None,
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// Checks a size a node moves.
pub fn check_comm_size(file: &str, node: u64, field: &str, size: u64) -> Result<(), TraceError> {
    if size == 0 || size > MAX_COMM_BYTES {
        return Err(TraceError::node(
            file,
            node,
            field,
            format!("{size} bytes is out of range: 1 B to {MAX_COMM_BYTES} B (1 TiB)"),
        ));
    }
    Ok(())
}

impl RankTrace {
    /// Index of each node id.
    pub fn index(&self) -> Result<HashMap<u64, u32>, TraceError> {
        let mut at = HashMap::with_capacity(self.nodes.len());
        for (i, n) in self.nodes.iter().enumerate() {
            if at.insert(n.id, i as u32).is_some() {
                return Err(TraceError::node(
                    &self.file,
                    n.id,
                    "id",
                    "two nodes have this id: ids must be unique within a rank's file",
                ));
            }
        }
        Ok(at)
    }

    /// The nodes in an order where each comes after what it waits for, as indices (of
    /// the nodes ready, the earliest in the file first); an error names a dependency on
    /// a missing node, or a node of a cycle.
    pub fn topo_order(&self) -> Result<Vec<u32>, TraceError> {
        let at = self.index()?;
        let n = self.nodes.len();
        let mut indeg = vec![0u32; n];
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, node) in self.nodes.iter().enumerate() {
            for &d in &node.deps {
                let Some(&j) = at.get(&d) else {
                    return Err(TraceError::node(
                        &self.file,
                        node.id,
                        "data_deps",
                        format!("waits for node {d}, which the file does not have"),
                    ));
                };
                if j as usize == i {
                    return Err(TraceError::node(
                        &self.file,
                        node.id,
                        "data_deps",
                        "the node waits for itself",
                    ));
                }
                succ[j as usize].push(i as u32);
                indeg[i] += 1;
            }
        }
        // Of the nodes ready, the first in the file: the file's order when it is
        // already one where each node follows what it waits for (issue order).
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<u32>> = (0..n as u32)
            .filter(|&i| indeg[i as usize] == 0)
            .map(std::cmp::Reverse)
            .collect();
        let mut order = Vec::with_capacity(n);
        while let Some(std::cmp::Reverse(i)) = ready.pop() {
            order.push(i);
            for &s in &succ[i as usize] {
                indeg[s as usize] -= 1;
                if indeg[s as usize] == 0 {
                    ready.push(std::cmp::Reverse(s));
                }
            }
        }
        if order.len() < n {
            // The first node (in file order) still waiting is on a cycle or after one.
            let stuck = (0..n).find(|&i| indeg[i] > 0).expect("a node is left");
            return Err(TraceError::node(
                &self.file,
                self.nodes[stuck].id,
                "data_deps",
                "the dependencies form a cycle through this node: nothing on it could ever start",
            ));
        }
        Ok(order)
    }
}

impl Trace {
    /// Checks the whole trace: per rank, ids, dependencies and cycles; across ranks,
    /// that every send has its receive with the same size, that every peer exists, and
    /// that the ranks of each communicator issue the same collectives (operation and
    /// size) in the same order. `groups` gives each named communicator's ranks.
    pub fn validate(&self, groups: &HashMap<String, Vec<u32>>) -> Result<(), TraceError> {
        let n = self.ranks.len() as u32;
        if n == 0 {
            return Err(TraceError::file("", "ranks", "the trace has no rank"));
        }
        for r in &self.ranks {
            r.topo_order()?;
        }
        // Sends and receives: (src, dst, tag) -> sizes in order, both sides.
        type Key = (u32, u32, u64);
        let mut sends: HashMap<Key, Vec<(u64, u32, u64)>> = HashMap::new();
        let mut recvs: HashMap<Key, Vec<(u64, u32, u64)>> = HashMap::new();
        // Collectives: group -> per rank, (op, size, node id) in order.
        type PerRank = HashMap<u32, Vec<(CollOp, u64, u64)>>;
        let mut colls: HashMap<Option<&str>, PerRank> = HashMap::new();
        for (ri, r) in self.ranks.iter().enumerate() {
            let ri = ri as u32;
            for node in &r.nodes {
                match &node.kind {
                    NodeKind::Send { peer, tag, size } | NodeKind::Recv { peer, tag, size } => {
                        let send = matches!(node.kind, NodeKind::Send { .. });
                        let field = if send { "comm_dst" } else { "comm_src" };
                        if *peer >= n {
                            return Err(TraceError::node(
                                &r.file,
                                node.id,
                                field,
                                format!(
                                    "rank {peer} does not exist: the trace has ranks 0..{}",
                                    n - 1
                                ),
                            ));
                        }
                        if *peer == ri {
                            return Err(TraceError::node(
                                &r.file,
                                node.id,
                                field,
                                "a rank cannot send to itself",
                            ));
                        }
                        let (key, map) = if send {
                            ((ri, *peer, *tag), &mut sends)
                        } else {
                            ((*peer, ri, *tag), &mut recvs)
                        };
                        map.entry(key).or_default().push((*size, ri, node.id));
                    }
                    NodeKind::Coll { op, size, group } => {
                        if let Some(g) = group {
                            let Some(members) = groups.get(g) else {
                                return Err(TraceError::node(
                                    &r.file,
                                    node.id,
                                    "pg_name",
                                    format!(
                                        "communicator `{g}` is not in the workload's comm_groups"
                                    ),
                                ));
                            };
                            if !members.contains(&ri) {
                                return Err(TraceError::node(
                                    &r.file,
                                    node.id,
                                    "pg_name",
                                    format!("rank {ri} is not a member of communicator `{g}` ({members:?})"),
                                ));
                            }
                        }
                        colls
                            .entry(group.as_deref())
                            .or_default()
                            .entry(ri)
                            .or_default()
                            .push((*op, *size, node.id));
                    }
                    NodeKind::Comp(_) | NodeKind::Point => {}
                }
            }
        }
        let mut keys: Vec<&Key> = sends.keys().chain(recvs.keys()).collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            let (s, rv) = (
                sends.get(k).map_or(&[][..], |v| v),
                recvs.get(k).map_or(&[][..], |v| v),
            );
            for i in 0..s.len().max(rv.len()) {
                match (s.get(i), rv.get(i)) {
                    (Some(a), Some(b)) if a.0 != b.0 => {
                        return Err(TraceError::node(
                            &self.ranks[b.1 as usize].file,
                            b.2,
                            "comm_size",
                            format!(
                                "receives {} bytes but the matching send ({}, node {}) sends {}",
                                b.0, self.ranks[a.1 as usize].file, a.2, a.0
                            ),
                        ))
                    }
                    (Some(a), None) => {
                        return Err(TraceError::node(
                            &self.ranks[a.1 as usize].file,
                            a.2,
                            "comm_dst",
                            format!(
                                "send {} from rank {} to rank {} with tag {} has no matching receive on rank {}",
                                i + 1, k.0, k.1, k.2, k.1
                            ),
                        ))
                    }
                    (None, Some(b)) => {
                        return Err(TraceError::node(
                            &self.ranks[b.1 as usize].file,
                            b.2,
                            "comm_src",
                            format!(
                                "receive {} on rank {} from rank {} with tag {} has no matching send on rank {}",
                                i + 1, k.1, k.0, k.2, k.0
                            ),
                        ))
                    }
                    _ => {}
                }
            }
        }
        let mut names: Vec<Option<&str>> = colls.keys().copied().collect();
        names.sort_unstable();
        for g in names {
            let per = &colls[&g];
            let members: Vec<u32> = match g {
                Some(g) => groups[g].clone(),
                None => (0..n).collect(),
            };
            let first = members[0];
            let empty = Vec::new();
            let base = per.get(&first).unwrap_or(&empty);
            for &m in &members[1..] {
                let mine = per.get(&m).unwrap_or(&empty);
                for i in 0..base.len().max(mine.len()) {
                    let what =
                        g.map_or("every rank".to_string(), |g| format!("communicator `{g}`"));
                    match (base.get(i), mine.get(i)) {
                        (Some(a), Some(b)) if (a.0, a.1) != (b.0, b.1) => {
                            return Err(TraceError::node(
                                &self.ranks[m as usize].file,
                                b.2,
                                if a.0 != b.0 { "comm_type" } else { "comm_size" },
                                format!(
                                    "collective {} of {what} is {} of {} bytes here but {} of {} bytes on rank {first} (node {})",
                                    i + 1, b.0.name(), b.1, a.0.name(), a.1, a.2
                                ),
                            ))
                        }
                        (Some(a), None) => {
                            return Err(TraceError::file(
                                &self.ranks[m as usize].file,
                                "COMM_COLL_NODE",
                                format!(
                                    "rank {m} issues {} collectives of {what}, rank {first} issues more (its node {} has no counterpart here)",
                                    mine.len(), a.2
                                ),
                            ))
                        }
                        (None, Some(b)) => {
                            return Err(TraceError::node(
                                &self.ranks[m as usize].file,
                                b.2,
                                "COMM_COLL_NODE",
                                format!(
                                    "collective {} of {what} has no counterpart on rank {first}, which issues {}",
                                    i + 1, base.len()
                                ),
                            ))
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }
}
