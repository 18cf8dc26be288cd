//! SimAI/AICB workload files: a header with the parallelism, then one line per layer.
//!
//! # The format
//!
//! AICB (`aliyun/aicb` at 23eec3c, `workload_generator/SimAI_training_workload_generator.py`,
//! `dump_file`) writes them and SimAI (`aliyun/SimAI` at cef83f9,
//! `astra-sim-alibabacloud/astra-sim/workload/Workload.cc`, `initialize_workload`) reads
//! them; the files under SimAI's `example/` and AICB's `workload/simAI/` are of this form:
//!
//! ```text
//! HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 4 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0
//! 3
//! embedding_layer  -1  622731  ALLREDUCE  50331648  1  NONE  0  15091072  NONE  0  100
//! ...
//! ```
//!
//! Line 1: the parallelism word, then `key: value` pairs (SimAI also takes `pp_comm`
//! without its colon, and ignores keys it does not know, as this reader does). Line 2:
//! the number of layer lines. Then per layer, whitespace-separated: `name dependency
//! fwd_compute_time fwd_comm_type fwd_comm_size ig_compute_time ig_comm_type
//! ig_comm_size wg_compute_time wg_comm_type wg_comm_size wg_update_time`. The format
//! has no comments. Times are nanoseconds: SimAI's `Tick` counts `CLOCK_PERIOD` = 1 ns
//! (`system/Common.hh`; the ns-3 frontend's `sim_get_time` is `GetNanoSeconds`), and
//! AICB writes its measured microseconds times 1000 (`utils/utils.py`). Sizes are bytes.
//! A comm type is `NONE` or `ALLREDUCE`, `ALLGATHER`, `REDUCESCATTER`, `ALLTOALL`, alone
//! or with `_EP` or `_DP_EP`: forward and input-gradient collectives without a suffix run
//! on the tensor-parallel (TP) group, weight-gradient ones on the data-parallel (DP)
//! group, `_EP` ones on the expert group and `_DP_EP` ones on the data-parallel group of
//! the experts. `BROADCAST` is taken and, as SimAI does (its parser knows no broadcast),
//! moves nothing; a collective of 0 bytes moves nothing either. Sizes pass unchanged:
//! SimAI's flow models (`MockNcclGroup::gen*FlowModels`) split a reduce-scatter's size
//! over the ranks and an all-to-all's over the peers, the sizes [`CollOp`] counts.
//!
//! # Groups
//!
//! As SimAI forms them (SimCCL's `MockNcclGroup` constructor, called from
//! `Sys::mock_nccl_comms_init`), with TP = `model_parallel_NPU_group` and DP = all_gpus /
//! TP: `tp<i>` = ranks `i*TP .. (i+1)*TP`; `dp<i>` = `i, i+TP, i+2*TP, ...`; `ep<b*TP+k>`
//! = the `k`-th ranks of TP groups `b*EP .. (b+1)*EP`; `dp_ep<e*TP+k>` = the `k`-th ranks
//! of TP groups `e, e+EP, e+2*EP, ...`. Only groups of more than one rank exist (a
//! collective on a group of one is no communication and has no node). SimAI forms them
//! with PP = 1: `pp`, `vpp`, `ga` and `pp_comm` only feed its analytical bubble estimate
//! (`Layer::report`), its packet-level run sends nothing between pipeline stages, and
//! AICB already writes the layers of all `ga` micro-batches. They are read and checked
//! here (all_gpus must divide by TP x PP) and otherwise left alone, as in SimAI: the
//! stages of a `pp > 1` file run as data-parallel replicas.
//!
//! # The graph of a rank: one pass (training step), as `Workload::iterate_*` runs it
//!
//! - `HYBRID_TRANSFORMER`, `HYBRID_TRANSFORMER_FWD_IN_BCKWD`: forward, layer by layer,
//!   compute then its collective, waited for; backward in reverse, per layer input-gradient
//!   compute, its collective (waited for), weight-gradient compute, its collective (not
//!   waited for: it overlaps the rest of the backward pass). The `_FWD_IN_BCKWD` variant
//!   raises forward collectives under 4096 B to 4096 B, as SimAI does.
//! - `MODEL` (TP = every rank): the same, but the input-gradient collective overlaps the
//!   weight-gradient compute, layer 0 has none, and there is no weight-gradient one.
//! - `DATA` (DP = every rank): forward computes; backward per layer weight-gradient compute,
//!   its collective (overlapping), then the input-gradient compute (not for layer 0).
//! - `MICRO` (DP = every rank): each line's weight-gradient collective, one after another.
//!   SimAI issues only the first line's per pass; AICB writes a sweep of sizes, one a line,
//!   which is read here as what it is meant to be.
//!
//! After each collective, the layer's `wg_update_time` passes before what waits for it goes
//! on (SimAI's `*_Comm_Finished_After_Delay`): a compute node `<collective>.update`. A
//! compute of 0 ns has no node. The last node, `iteration.end`, waits for everything
//! (SimAI's pass ends when every collective has finished).
//!
//! # Refused
//!
//! Malformed lines (each error names the line and field): an unknown parallelism word or
//! header key without its value, a non-number, a negative or too large number, an unknown
//! comm type, a layer count that disagrees with the lines, all_gpus not divisible by TP x
//! PP or DP not by EP, `ranks` other than all_gpus, no rank count at all. Also refused:
//! SimAI's other parallelism words (DLRM, hybrid data/model, customized, inference), which
//! AICB does not write, activation checkpoints (`checkpoints:` above 0: recomputation in
//! the backward pass is not built; AICB writes 0), and `ALLREDUCEALLTOALL` (SimAI's parser
//! takes it for an all-reduce on no group at all).
//!
//! The rank count is the header's `all_gpus`, or `ranks` where the header has none (`DATA`
//! and `MICRO` files, older AICB files): SimAI takes it from the network then. SimAI reads
//! the group sizes only for the `HYBRID_TRANSFORMER` words; so does this reader.
use super::ir::{
    check_comm_size, CollOp, Compute, NodeKind, RankTrace, Trace, TraceError, TraceNode,
    MAX_COMPUTE,
};
use crate::base::input_file::{read_text, MAX_DATA_FILE_BYTES};
use crate::base::units::{Time, NS};
use std::collections::HashMap;
use std::path::Path;

/// Most nodes a trace read from one file may have, all ranks together: a file of a few
/// kilobytes describes every rank, so its size does not bound the trace (9,216 GPUs of
/// 1,789 layer lines would be some 10^8 nodes, tens of GiB).
pub const MAX_NODES: u64 = 1 << 25;

/// The parallelism words this reader builds a pass for.
const WORDS: &str = "HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER, MODEL, DATA, MICRO";

/// SimAI's parallelism words not read here (AICB writes none of them).
const OTHER_WORDS: [&str; 6] = [
    "HYBRID_DLRM",
    "HYBRID_DLRM_ENHANCED",
    "HYBRID_DATA_MODEL",
    "HYBRID_MODEL_DATA",
    "HYBRID_CUSTOMIZED",
    "DISTRIBUTED_INFERENCE",
];

/// The comm types a layer line may name.
const COMM_TYPES: &str = "NONE, BROADCAST, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, \
    each of the last four alone or with _EP or _DP_EP";

/// The fields of a layer line, in order.
const FIELDS: [&str; 12] = [
    "name",
    "dependency",
    "fwd_compute_time",
    "fwd_comm_type",
    "fwd_comm_size",
    "ig_compute_time",
    "ig_comm_type",
    "ig_comm_size",
    "wg_compute_time",
    "wg_comm_type",
    "wg_comm_size",
    "wg_update_time",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    Transformer,
    TransformerFwdInBckwd,
    Model,
    Data,
    Micro,
}

/// Which group a collective runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GroupKind {
    Tp,
    Dp,
    Ep,
    DpEp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Comm {
    op: CollOp,
    group: GroupKind,
    size: u64,
}

#[derive(Clone, Debug)]
struct Layer {
    fwd: Time,
    fwd_comm: Option<Comm>,
    ig: Time,
    ig_comm: Option<Comm>,
    wg: Time,
    wg_comm: Option<Comm>,
    update: Time,
}

/// The group sizes; the groups themselves follow from them (see the module doc).
#[derive(Clone, Copy, Debug)]
struct Groups {
    n: u32,
    tp: u32,
    ep: u32,
}

impl Groups {
    fn dp(&self) -> u32 {
        self.n / self.tp
    }

    fn size(&self, g: GroupKind) -> u32 {
        match g {
            GroupKind::Tp => self.tp,
            GroupKind::Dp => self.dp(),
            GroupKind::Ep => self.ep,
            GroupKind::DpEp => self.dp() / self.ep,
        }
    }

    /// The index of `rank`'s group of kind `g`.
    fn index(&self, g: GroupKind, rank: u32) -> u32 {
        let (tp, ep) = (self.tp, self.ep);
        let (t, k) = (rank / tp, rank % tp);
        match g {
            GroupKind::Tp => t,
            GroupKind::Dp => k,
            GroupKind::Ep => (t / ep) * tp + k,
            GroupKind::DpEp => (t % ep) * tp + k,
        }
    }

    fn members(&self, g: GroupKind, index: u32) -> Vec<u32> {
        let (tp, ep) = (self.tp, self.ep);
        let size = self.size(g);
        match g {
            GroupKind::Tp => (0..size).map(|j| index * tp + j).collect(),
            GroupKind::Dp => (0..size).map(|j| index + j * tp).collect(),
            GroupKind::Ep => {
                let (b, k) = (index / tp, index % tp);
                (0..size).map(|l| (b * ep + l) * tp + k).collect()
            }
            GroupKind::DpEp => {
                let (e, k) = (index / tp, index % tp);
                (0..size).map(|m| (e + m * ep) * tp + k).collect()
            }
        }
    }

    fn prefix(g: GroupKind) -> &'static str {
        match g {
            GroupKind::Tp => "tp",
            GroupKind::Dp => "dp",
            GroupKind::Ep => "ep",
            GroupKind::DpEp => "dp_ep",
        }
    }

    /// The name of `rank`'s group of kind `g`, `None` for a group of one rank.
    fn name(&self, g: GroupKind, rank: u32) -> Option<String> {
        (self.size(g) > 1).then(|| format!("{}{}", Self::prefix(g), self.index(g, rank)))
    }

    /// Every group of more than one rank of the kinds in `used`, by name.
    fn table(&self, used: &[GroupKind]) -> HashMap<String, Vec<u32>> {
        let mut t = HashMap::new();
        for &g in used {
            let size = self.size(g);
            if size <= 1 {
                continue;
            }
            for i in 0..self.n / size {
                t.insert(format!("{}{i}", Self::prefix(g)), self.members(g, i));
            }
        }
        t
    }
}

/// An error of line `line`, field `field` (`line 5: fwd_comm_size`).
fn err(shown: &str, line: usize, field: &str, message: impl Into<String>) -> TraceError {
    let f = if field.is_empty() {
        format!("line {line}")
    } else {
        format!("line {line}: {field}")
    };
    TraceError::file(shown, &f, message)
}

/// A whole non-negative number.
fn number(shown: &str, line: usize, field: &str, tok: &str) -> Result<u64, TraceError> {
    if let Some(rest) = tok.strip_prefix('-') {
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err(
                shown,
                line,
                field,
                format!("`{tok}` is negative: a whole number of at least 0 is expected"),
            ));
        }
    }
    if tok.is_empty() || !tok.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(
            shown,
            line,
            field,
            format!("`{tok}` is not a number: a whole number of at least 0 is expected"),
        ));
    }
    tok.parse::<u64>().map_err(|_| {
        err(
            shown,
            line,
            field,
            format!("`{tok}` is too large: at most {} is read", u64::MAX),
        )
    })
}

/// A group size or count of the header: 1 to `u32::MAX`.
fn count(shown: &str, field: &str, tok: &str) -> Result<u32, TraceError> {
    let v = number(shown, 1, field, tok)?;
    if v == 0 || v > u32::MAX as u64 {
        return Err(err(
            shown,
            1,
            field,
            format!("{v} is out of range: 1 to {}", u32::MAX),
        ));
    }
    Ok(v as u32)
}

/// A time in nanoseconds, as picoseconds.
fn time(shown: &str, line: usize, field: &str, tok: &str) -> Result<Time, TraceError> {
    let ns = number(shown, line, field, tok)?;
    match ns.checked_mul(NS) {
        Some(t) if t <= MAX_COMPUTE => Ok(t),
        _ => Err(err(
            shown,
            line,
            field,
            format!(
                "{ns} ns is too long: at most {} ns (1000 s)",
                MAX_COMPUTE / NS
            ),
        )),
    }
}

/// A comm type and size; `None` when they move nothing. `wg`: the weight-gradient
/// column, whose plain types run on the DP group (the others' on the TP group).
fn comm(
    shown: &str,
    line: usize,
    fields: (&str, &str),
    toks: (&str, &str),
    wg: bool,
) -> Result<Option<Comm>, TraceError> {
    let size = number(shown, line, fields.1, toks.1)?;
    let t = toks.0;
    if t == "NONE" || t == "BROADCAST" {
        return Ok(None);
    }
    let (base, group) = if let Some(b) = t.strip_suffix("_DP_EP") {
        (b, GroupKind::DpEp)
    } else if let Some(b) = t.strip_suffix("_EP") {
        (b, GroupKind::Ep)
    } else if wg {
        (t, GroupKind::Dp)
    } else {
        (t, GroupKind::Tp)
    };
    let op = match base {
        "ALLREDUCE" => CollOp::AllReduce,
        "ALLGATHER" => CollOp::AllGather,
        "REDUCESCATTER" => CollOp::ReduceScatter,
        "ALLTOALL" => CollOp::AllToAll,
        _ => {
            return Err(err(
                shown,
                line,
                fields.0,
                format!("`{t}` is not a comm type: known are {COMM_TYPES}"),
            ))
        }
    };
    if size == 0 {
        return Ok(None);
    }
    check_comm_size(shown, 0, fields.1, size).map_err(|mut e| {
        e.node = None;
        e.field = format!("line {line}: {}", fields.1);
        e
    })?;
    Ok(Some(Comm { op, group, size }))
}

/// What line 1 says.
struct Header {
    policy: Policy,
    tp: u32,
    ep: u32,
    pp: u32,
    all_gpus: Option<u32>,
}

fn header(shown: &str, line: &str) -> Result<Header, TraceError> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let Some(&word) = toks.first() else {
        return Err(err(
            shown,
            1,
            "parallelism",
            format!("the line is empty: it starts with the parallelism, one of {WORDS}"),
        ));
    };
    let policy = match word {
        "HYBRID_TRANSFORMER" => Policy::Transformer,
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD" => Policy::TransformerFwdInBckwd,
        "MODEL" => Policy::Model,
        "DATA" => Policy::Data,
        "MICRO" => Policy::Micro,
        w if OTHER_WORDS.contains(&w) => {
            return Err(err(
                shown,
                1,
                "parallelism",
                format!("SimAI's `{w}` is not read (AICB does not write it): read are {WORDS}"),
            ))
        }
        w => {
            return Err(err(
                shown,
                1,
                "parallelism",
                format!("`{w}` is not a parallelism: known are {WORDS}"),
            ))
        }
    };
    let mut h = Header {
        policy,
        tp: 1,
        ep: 1,
        pp: 1,
        all_gpus: None,
    };
    let mut i = 1;
    while i < toks.len() {
        let tok = toks[i];
        // SimAI takes `pp_comm` with or without its colon (SimAI's own example has none).
        let key = match tok.strip_suffix(':') {
            Some(k) if !k.is_empty() => k,
            _ if tok == "pp_comm" => tok,
            _ => {
                return Err(err(
                    shown,
                    1,
                    "",
                    format!(
                        "`{tok}` is not a `key:`: the parallelism is followed by `key: value` \
                         pairs (model_parallel_NPU_group, ep, pp, vpp, ga, all_gpus, \
                         checkpoints, checkpoint_initiates, pp_comm)"
                    ),
                ))
            }
        };
        let Some(&v) = toks.get(i + 1) else {
            return Err(err(
                shown,
                1,
                key,
                "the key has no value: the line ends after it",
            ));
        };
        match key {
            "model_parallel_NPU_group" => h.tp = count(shown, key, v)?,
            "ep" => h.ep = count(shown, key, v)?,
            "pp" => h.pp = count(shown, key, v)?,
            // Unused by SimAI's packet-level run; AICB writes `ga: 0` when the global batch
            // is smaller than one micro-batch per replica, which SimAI only warns about.
            "vpp" | "ga" => {
                number(shown, 1, key, v)?;
            }
            "all_gpus" => h.all_gpus = Some(count(shown, key, v)?),
            "checkpoints" | "checkpoint_initiates" if number(shown, 1, key, v)? > 0 => {
                return Err(err(
                    shown,
                    1,
                    key,
                    format!(
                        "{v} layers: activation recomputation in the backward pass is not \
                         built, 0 is read (AICB writes 0)"
                    ),
                ));
            }
            "pp_comm" => {
                // AICB divides it by TP in Python and may write `4194304.0`; SimAI's stoi
                // takes the whole part. Only a zero fraction is taken here.
                let whole = match v.split_once('.') {
                    Some((w, f))
                        if !w.is_empty() && !f.is_empty() && f.bytes().all(|b| b == b'0') =>
                    {
                        w
                    }
                    _ => v,
                };
                number(shown, 1, key, whole)?;
            }
            // SimAI ignores keys it does not know (AICB's multi-allreduce test writes
            // `expert_parallel_npu_group:`, which SimAI never reads); so does this reader.
            _ => {}
        }
        i += 2;
    }
    Ok(h)
}

/// Builds a rank's nodes.
struct Builder<'a> {
    nodes: Vec<TraceNode>,
    groups: &'a Groups,
    rank: u32,
    /// The kinds of group its collectives use.
    used: Vec<GroupKind>,
}

impl Builder<'_> {
    fn push(&mut self, name: String, kind: NodeKind, deps: Vec<u64>) -> u64 {
        let id = self.nodes.len() as u64;
        self.nodes.push(TraceNode {
            id,
            name,
            kind,
            deps,
        });
        id
    }

    /// A compute of `t` after `tail`, which it becomes; none for 0.
    fn compute(&mut self, name: String, t: Time, tail: &mut Vec<u64>) {
        if t > 0 {
            let id = self.push(
                name,
                NodeKind::Comp(Compute::Duration(t)),
                std::mem::take(tail),
            );
            *tail = vec![id];
        }
    }

    /// A collective after `after` and its update time; the nodes what waits for it waits
    /// for (`None`: it moves nothing here).
    fn collective(
        &mut self,
        name: &str,
        c: Option<Comm>,
        update: Time,
        after: &[u64],
    ) -> Option<Vec<u64>> {
        let c = c?;
        let group = self.groups.name(c.group, self.rank)?;
        if !self.used.contains(&c.group) {
            self.used.push(c.group);
        }
        let id = self.push(
            format!("{name}.{}", c.op.name()),
            NodeKind::Coll {
                op: c.op,
                size: c.size,
                group: Some(group),
            },
            after.to_vec(),
        );
        let mut tail = vec![id];
        self.compute(format!("{name}.update"), update, &mut tail);
        Some(tail)
    }
}

/// One pass of `layers` on `rank`, and the kinds of group it communicates on.
fn build(
    policy: Policy,
    layers: &[Layer],
    groups: &Groups,
    rank: u32,
) -> (Vec<TraceNode>, Vec<GroupKind>) {
    let mut b = Builder {
        nodes: Vec::new(),
        groups,
        rank,
        used: Vec::new(),
    };
    // `tail`: what the next step waits for; `pending`: collectives nothing waits for but
    // the end of the pass.
    let mut tail: Vec<u64> = Vec::new();
    let mut pending: Vec<u64> = Vec::new();
    if policy == Policy::Micro {
        for (i, l) in layers.iter().enumerate() {
            if let Some(t) = b.collective(&format!("L{i}.wg"), l.wg_comm, l.update, &tail) {
                tail = t;
            }
        }
    } else {
        let forward_comm = policy != Policy::Data;
        for (i, l) in layers.iter().enumerate() {
            b.compute(format!("L{i}.fwd"), l.fwd, &mut tail);
            if forward_comm {
                let mut c = l.fwd_comm;
                if policy == Policy::TransformerFwdInBckwd {
                    // Workload::iterate_hybrid_parallel_Transformer_fwd_in_bckwd.
                    if let Some(c) = c.as_mut() {
                        c.size = c.size.max(4096);
                    }
                }
                if let Some(t) = b.collective(&format!("L{i}.fwd"), c, l.update, &tail) {
                    tail = t;
                }
            }
        }
        for (i, l) in layers.iter().enumerate().rev() {
            let (ig, wg) = (format!("L{i}.ig"), format!("L{i}.wg"));
            match policy {
                Policy::Transformer | Policy::TransformerFwdInBckwd => {
                    b.compute(ig.clone(), l.ig, &mut tail);
                    if let Some(t) = b.collective(&ig, l.ig_comm, l.update, &tail) {
                        tail = t;
                    }
                    b.compute(wg.clone(), l.wg, &mut tail);
                    if let Some(t) = b.collective(&wg, l.wg_comm, l.update, &tail) {
                        pending.extend(t);
                    }
                }
                Policy::Model => {
                    b.compute(ig.clone(), l.ig, &mut tail);
                    let overlapped = if i > 0 {
                        b.collective(&ig, l.ig_comm, l.update, &tail)
                    } else {
                        None
                    };
                    b.compute(wg, l.wg, &mut tail);
                    for t in overlapped.into_iter().flatten() {
                        if !tail.contains(&t) {
                            tail.push(t);
                        }
                    }
                }
                Policy::Data => {
                    b.compute(wg.clone(), l.wg, &mut tail);
                    if let Some(t) = b.collective(&wg, l.wg_comm, l.update, &tail) {
                        pending.extend(t);
                    }
                    if i > 0 {
                        b.compute(ig, l.ig, &mut tail);
                    }
                }
                Policy::Micro => unreachable!("built above"),
            }
        }
    }
    for p in pending {
        if !tail.contains(&p) {
            tail.push(p);
        }
    }
    b.push("iteration.end".into(), NodeKind::Point, tail);
    (b.nodes, b.used)
}

/// Reads an AICB workload file into a trace of its `all_gpus` ranks (or `ranks`, when
/// given, which must agree), with the communicators it implies (tensor, data, pipeline
/// and expert parallel groups) by name.
pub fn read(
    path: &Path,
    shown: &str,
    ranks: Option<u32>,
) -> Result<(Trace, HashMap<String, Vec<u32>>), TraceError> {
    let text = read_text(path, MAX_DATA_FILE_BYTES)
        .map_err(|e| TraceError::file(shown, "", e.to_string()))?;
    let (policy, layers, groups) = parse(shown, &text, ranks)?;
    // Every rank has the same nodes but for its groups' names: rank 0 tells the size and
    // the kinds of group used (only those are returned).
    let (first, used) = build(policy, &layers, &groups, 0);
    let per_rank = first.len() as u64;
    let total = per_rank.saturating_mul(groups.n as u64);
    if total > MAX_NODES {
        return Err(TraceError::file(
            shown,
            "",
            format!(
                "the trace would have {total} nodes ({per_rank} per rank x {} ranks): at most \
                 {MAX_NODES} are built",
                groups.n
            ),
        ));
    }
    let trace = Trace {
        ranks: std::iter::once(first)
            .chain((1..groups.n).map(|r| build(policy, &layers, &groups, r).0))
            .map(|nodes| RankTrace {
                file: shown.to_string(),
                nodes,
            })
            .collect(),
    };
    Ok((trace, groups.table(&used)))
}

/// The file's parallelism, layers and groups.
fn parse(
    shown: &str,
    text: &str,
    ranks: Option<u32>,
) -> Result<(Policy, Vec<Layer>, Groups), TraceError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let h = header(shown, lines.next().map_or("", |l| l.1))?;
    let n = match (h.all_gpus, ranks) {
        (Some(a), Some(r)) if a != r => {
            return Err(TraceError::file(
                shown,
                "ranks",
                format!("{r} ranks are asked for, but the file's all_gpus is {a}"),
            ))
        }
        (Some(a), _) => a,
        (None, Some(0)) => {
            return Err(TraceError::file(
                shown,
                "ranks",
                "0 ranks: at least 1 is needed",
            ))
        }
        (None, Some(r)) => r,
        (None, None) => {
            return Err(err(
                shown,
                1,
                "all_gpus",
                "the header has no all_gpus: give the number of ranks (`ranks`)",
            ))
        }
    };
    let groups = match h.policy {
        Policy::Transformer | Policy::TransformerFwdInBckwd => {
            let tp_pp = h.tp as u64 * h.pp as u64;
            if !(n as u64).is_multiple_of(tp_pp) {
                return Err(err(
                    shown,
                    1,
                    "all_gpus",
                    format!(
                        "{n} ranks do not divide into model_parallel_NPU_group ({}) x pp ({})",
                        h.tp, h.pp
                    ),
                ));
            }
            let dp = n / h.tp;
            if !dp.is_multiple_of(h.ep) {
                return Err(err(
                    shown,
                    1,
                    "ep",
                    format!(
                        "the data-parallel size {dp} (all_gpus {n} / model_parallel_NPU_group {}) \
                         does not divide into ep ({})",
                        h.tp, h.ep
                    ),
                ));
            }
            Groups {
                n,
                tp: h.tp,
                ep: h.ep,
            }
        }
        // SimAI runs these over every rank (all dimensions involved): a TP group of all
        // for MODEL, a DP group of all for DATA and MICRO.
        Policy::Model => Groups { n, tp: n, ep: 1 },
        Policy::Data | Policy::Micro => Groups { n, tp: 1, ep: 1 },
    };
    let Some((cl, count_line)) = lines.next() else {
        return Err(err(
            shown,
            2,
            "layer count",
            "the file ends after the header: line 2 is the number of layers",
        ));
    };
    let ct = count_line.trim();
    let expected = number(shown, cl, "layer count", ct)?;
    if expected == 0 {
        return Err(err(
            shown,
            cl,
            "layer count",
            "0 layers: at least 1 is needed",
        ));
    }
    let mut layers = Vec::new();
    for (ln, line) in lines {
        let toks: Vec<&str> = line.split_whitespace().collect();
        // SimAI reads tokens, not lines: blank lines are nothing to it.
        if toks.is_empty() {
            continue;
        }
        if layers.len() as u64 == expected {
            return Err(err(
                shown,
                ln,
                "",
                format!("a layer line beyond the {expected} that line 2 announces"),
            ));
        }
        if toks.len() < FIELDS.len() {
            return Err(err(
                shown,
                ln,
                FIELDS[toks.len()],
                format!(
                    "the line ends before this field: a layer line has {} fields ({})",
                    FIELDS.len(),
                    FIELDS.join(" ")
                ),
            ));
        }
        if toks.len() > FIELDS.len() {
            return Err(err(
                shown,
                ln,
                "",
                format!(
                    "{} fields: a layer line has {} ({})",
                    toks.len(),
                    FIELDS.len(),
                    FIELDS.join(" ")
                ),
            ));
        }
        // The dependency is read and unused by SimAI (every file has -1).
        let d = toks[1];
        if d.parse::<i64>().is_err() {
            return Err(err(
                shown,
                ln,
                FIELDS[1],
                format!("`{d}` is not a whole number (AICB writes -1)"),
            ));
        }
        let f = |i: usize| (FIELDS[i], toks[i]);
        let pair = |i: usize| ((FIELDS[i], FIELDS[i + 1]), (toks[i], toks[i + 1]));
        let (fwd_f, fwd_t) = pair(3);
        let (ig_f, ig_t) = pair(6);
        let (wg_f, wg_t) = pair(9);
        layers.push(Layer {
            fwd: time(shown, ln, f(2).0, f(2).1)?,
            fwd_comm: comm(shown, ln, fwd_f, fwd_t, false)?,
            ig: time(shown, ln, f(5).0, f(5).1)?,
            ig_comm: comm(shown, ln, ig_f, ig_t, false)?,
            wg: time(shown, ln, f(8).0, f(8).1)?,
            wg_comm: comm(shown, ln, wg_f, wg_t, true)?,
            update: time(shown, ln, f(11).0, f(11).1)?,
        });
    }
    if (layers.len() as u64) < expected {
        return Err(err(
            shown,
            cl,
            "layer count",
            format!(
                "{expected} layers are announced, the file has {} layer lines",
                layers.len()
            ),
        ));
    }
    Ok((h.policy, layers, groups))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fabricsim-cli/tests/fixtures/traces/aicb")
            .join(name)
    }

    /// Reads `text` as a file named `name`.
    fn read_str(
        name: &str,
        text: &str,
        ranks: Option<u32>,
    ) -> Result<(Trace, HashMap<String, Vec<u32>>), TraceError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        read(&p, name, ranks)
    }

    fn comp(id: u64, name: &str, ns: u64, deps: &[u64]) -> TraceNode {
        TraceNode {
            id,
            name: name.into(),
            kind: NodeKind::Comp(Compute::Duration(ns * NS)),
            deps: deps.to_vec(),
        }
    }

    fn coll(id: u64, name: &str, op: CollOp, size: u64, g: &str, deps: &[u64]) -> TraceNode {
        TraceNode {
            id,
            name: name.into(),
            kind: NodeKind::Coll {
                op,
                size,
                group: Some(g.into()),
            },
            deps: deps.to_vec(),
        }
    }

    fn end(id: u64, deps: &[u64]) -> TraceNode {
        TraceNode {
            id,
            name: "iteration.end".into(),
            kind: NodeKind::Point,
            deps: deps.to_vec(),
        }
    }

    const TINY: &str = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 \
        vpp: 1 ga: 1 all_gpus: 4 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0\n\
        2\n\
        emb\t-1\t10\tALLREDUCE\t1000\t20\tNONE\t0\t30\tNONE\t0\t5\n\
        attn\t-1\t100\tALLGATHER\t8192\t200\tREDUCESCATTER\t4096\t300\tALLREDUCE\t65536\t0\n";

    #[test]
    fn tiny_transformer_graph_is_exact() {
        let (t, groups) = read_str("tiny.txt", TINY, None).unwrap();
        assert_eq!(t.ranks.len(), 4);
        for (r, tp, dp) in [
            (0, "tp0", "dp0"),
            (1, "tp0", "dp1"),
            (2, "tp1", "dp0"),
            (3, "tp1", "dp1"),
        ] {
            use CollOp::*;
            let want = vec![
                comp(0, "L0.fwd", 10, &[]),
                // 1000 B raised to SimAI's 4096 B floor for forward collectives.
                coll(1, "L0.fwd.allreduce", AllReduce, 4096, tp, &[0]),
                comp(2, "L0.fwd.update", 5, &[1]),
                comp(3, "L1.fwd", 100, &[2]),
                coll(4, "L1.fwd.allgather", AllGather, 8192, tp, &[3]),
                comp(5, "L1.ig", 200, &[4]),
                coll(6, "L1.ig.reduce_scatter", ReduceScatter, 4096, tp, &[5]),
                comp(7, "L1.wg", 300, &[6]),
                // Not waited for by the backward pass, only by the end.
                coll(8, "L1.wg.allreduce", AllReduce, 65536, dp, &[7]),
                comp(9, "L0.ig", 20, &[7]),
                comp(10, "L0.wg", 30, &[9]),
                end(11, &[10, 8]),
            ];
            assert_eq!(t.ranks[r].nodes, want, "rank {r}");
            assert_eq!(t.ranks[r].file, "tiny.txt");
        }
        let mut names: Vec<_> = groups.keys().cloned().collect();
        names.sort();
        assert_eq!(names, ["dp0", "dp1", "tp0", "tp1"]);
        assert_eq!(groups["tp1"], [2, 3]);
        assert_eq!(groups["dp1"], [1, 3]);
        t.validate(&groups).unwrap();
    }

    #[test]
    fn plain_transformer_keeps_small_forward_sizes() {
        let text = TINY.replace("HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER");
        let (t, _) = read_str("tiny.txt", &text, None).unwrap();
        assert!(matches!(
            t.ranks[0].nodes[1].kind,
            NodeKind::Coll { size: 1000, .. }
        ));
    }

    #[test]
    fn data_parallel_graph_is_exact() {
        let (t, groups) =
            read(&fixture("data_parallel.txt"), "data_parallel.txt", Some(4)).unwrap();
        use CollOp::AllReduce;
        let want = vec![
            comp(0, "L0.fwd", 200_000, &[]),
            comp(1, "L1.fwd", 300_000, &[0]),
            comp(2, "L2.fwd", 50_000, &[1]),
            comp(3, "L2.wg", 45_000, &[2]),
            coll(4, "L2.wg.allreduce", AllReduce, 8_200_192, "dp0", &[3]),
            comp(5, "L2.wg.update", 100, &[4]),
            comp(6, "L2.ig", 40_000, &[3]),
            comp(7, "L1.wg", 280_000, &[6]),
            coll(8, "L1.wg.allreduce", AllReduce, 18_874_368, "dp0", &[7]),
            comp(9, "L1.wg.update", 100, &[8]),
            comp(10, "L1.ig", 250_000, &[7]),
            comp(11, "L0.wg", 180_000, &[10]),
            coll(12, "L0.wg.allreduce", AllReduce, 9_437_184, "dp0", &[11]),
            comp(13, "L0.wg.update", 100, &[12]),
            end(14, &[11, 5, 9, 13]),
        ];
        for r in 0..4 {
            assert_eq!(t.ranks[r].nodes, want, "rank {r}");
        }
        assert_eq!(groups.len(), 1);
        assert_eq!(groups["dp0"], [0, 1, 2, 3]);
        t.validate(&groups).unwrap();
    }

    #[test]
    fn model_parallel_overlaps_input_gradient_collectives() {
        let text = "MODEL all_gpus: 2\n2\n\
            a\t-1\t10\tALLREDUCE\t8192\t20\tALLREDUCE\t8192\t30\tALLREDUCE\t8192\t0\n\
            b\t-1\t10\tNONE\t0\t20\tALLREDUCE\t4096\t30\tNONE\t0\t0\n";
        let (t, groups) = read_str("model.txt", text, None).unwrap();
        use CollOp::AllReduce;
        let want = vec![
            comp(0, "L0.fwd", 10, &[]),
            coll(1, "L0.fwd.allreduce", AllReduce, 8192, "tp0", &[0]),
            comp(2, "L1.fwd", 10, &[1]),
            comp(3, "L1.ig", 20, &[2]),
            coll(4, "L1.ig.allreduce", AllReduce, 4096, "tp0", &[3]),
            comp(5, "L1.wg", 30, &[3]),
            // Layer 0's input gradient has no collective; no weight-gradient collective.
            comp(6, "L0.ig", 20, &[5, 4]),
            comp(7, "L0.wg", 30, &[6]),
            end(8, &[7]),
        ];
        assert_eq!(t.ranks[1].nodes, want);
        assert_eq!(groups["tp0"], [0, 1]);
        t.validate(&groups).unwrap();
    }

    #[test]
    fn micro_runs_each_line_in_turn() {
        let (t, groups) = read(
            &fixture("micro_allreduce.txt"),
            "micro_allreduce.txt",
            Some(8),
        )
        .unwrap();
        let n = &t.ranks[5].nodes;
        // Four collectives, each with its 1 ns update, then the end.
        assert_eq!(n.len(), 9);
        for (i, size) in [4096u64, 8192, 16384, 32768].into_iter().enumerate() {
            let c = &n[2 * i];
            assert_eq!(c.name, format!("L{i}.wg.allreduce"));
            assert_eq!(
                c.kind,
                NodeKind::Coll {
                    op: CollOp::AllReduce,
                    size,
                    group: Some("dp0".into())
                }
            );
            assert_eq!(
                c.deps,
                if i == 0 {
                    vec![]
                } else {
                    vec![2 * i as u64 - 1]
                }
            );
        }
        assert_eq!(groups["dp0"], (0..8).collect::<Vec<u32>>());
        t.validate(&groups).unwrap();
    }

    #[test]
    fn good_files_validate() {
        for (f, ranks) in [
            ("megatron_tp2_dp4.txt", None),
            ("megatron_tp2_dp4.txt", Some(8)),
            ("micro_allreduce.txt", Some(3)),
            ("data_parallel.txt", Some(16)),
        ] {
            let (t, g) = read(&fixture(f), f, ranks).unwrap();
            t.validate(&g).unwrap_or_else(|e| panic!("{f}: {e}"));
        }
        let (t, g) = read(&fixture("megatron_tp2_dp4.txt"), "m", None).unwrap();
        assert_eq!(t.ranks.len(), 8);
        let mut names: Vec<_> = g.keys().cloned().collect();
        names.sort();
        assert_eq!(names, ["dp0", "dp1", "tp0", "tp1", "tp2", "tp3"]);
        assert_eq!(g["dp1"], [1, 3, 5, 7]);
    }

    fn moe(tp: u32, ep: u32, all: u32) -> String {
        format!(
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: {ep} pp: 1 vpp: 1 \
             ga: 1 all_gpus: {all} checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0\n4\n\
             moe_grad_norm1\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLGATHER_DP_EP\t1048576\t100\n\
             attention_layer\t-1\t1000\tALLREDUCE\t65536\t1000\tALLREDUCE\t65536\t1000\tALLREDUCE\t65536\t100\n\
             mlp_moelayer\t-1\t1\tALLTOALL_EP\t262144\t1\tALLTOALL_EP\t262144\t1\tNONE\t0\t100\n\
             mlp_moelayer\t-1\t1\tALLGATHER\t65536\t1\tREDUCESCATTER\t65536\t1\tALLREDUCE_EP\t4096\t100\n"
        )
    }

    #[test]
    fn groups_partition_the_ranks_as_simai_forms_them() {
        let (t, g) = read_str("moe.txt", &moe(2, 2, 16), None).unwrap();
        t.validate(&g).unwrap();
        let of = |p: &str| -> Vec<Vec<u32>> {
            let mut v: Vec<(u32, Vec<u32>)> = g
                .iter()
                .filter_map(|(k, m)| {
                    let i = k.strip_prefix(p)?.parse().ok()?;
                    Some((i, m.clone()))
                })
                .collect();
            v.sort();
            v.into_iter().map(|x| x.1).collect()
        };
        let (tp, dp, ep, dp_ep) = (of("tp"), of("dp"), of("ep"), of("dp_ep"));
        assert_eq!(tp.len(), 8);
        assert_eq!(tp[3], [6, 7]);
        assert_eq!(
            dp,
            [
                vec![0, 2, 4, 6, 8, 10, 12, 14],
                vec![1, 3, 5, 7, 9, 11, 13, 15]
            ]
        );
        assert_eq!(&ep[..4], [vec![0, 2], vec![1, 3], vec![4, 6], vec![5, 7]]);
        assert_eq!(ep.len(), 8);
        assert_eq!(
            dp_ep,
            [
                vec![0, 4, 8, 12],
                vec![1, 5, 9, 13],
                vec![2, 6, 10, 14],
                vec![3, 7, 11, 15]
            ]
        );
        for kind in [&tp, &dp, &ep, &dp_ep] {
            let mut all: Vec<u32> = kind.iter().flatten().copied().collect();
            all.sort();
            assert_eq!(all, (0..16).collect::<Vec<u32>>());
            for m in kind.iter() {
                assert!(m.windows(2).all(|w| w[0] < w[1]), "rank order: {m:?}");
            }
        }
        // An expert group lies in one DP group and meets each of its DP_EP groups once.
        for e in &ep {
            assert!(dp.iter().any(|d| e.iter().all(|r| d.contains(r))));
            for de in &dp_ep {
                assert!(e.iter().filter(|r| de.contains(r)).count() <= 1);
            }
        }
        // Each rank's collectives name its own groups.
        for (r, rt) in t.ranks.iter().enumerate() {
            for n in &rt.nodes {
                if let NodeKind::Coll {
                    group: Some(gn), ..
                } = &n.kind
                {
                    assert!(g[gn].contains(&(r as u32)), "rank {r} {gn}");
                }
            }
        }
        // The `_EP` alltoall of rank 5 runs on ep3 = [5, 7].
        let a2a = t.ranks[5]
            .nodes
            .iter()
            .find(|n| n.name == "L2.fwd.alltoall")
            .unwrap();
        assert_eq!(
            a2a.kind,
            NodeKind::Coll {
                op: CollOp::AllToAll,
                size: 262144,
                group: Some("ep3".into())
            }
        );
    }

    #[test]
    fn groups_of_one_rank_have_no_collective() {
        // TP 1 and EP 1: only the weight-gradient collectives (DP and DP_EP, both every
        // rank here) communicate.
        let (t, g) = read_str("moe.txt", &moe(1, 1, 4), None).unwrap();
        let mut names: Vec<_> = g.keys().cloned().collect();
        names.sort();
        assert_eq!(names, ["dp0", "dp_ep0"]);
        assert_eq!(g["dp_ep0"], [0, 1, 2, 3]);
        let colls: Vec<&str> = t.ranks[0]
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Coll { .. }))
            .map(|n| n.name.as_str())
            .collect();
        assert_eq!(colls, ["L1.wg.allreduce", "L0.wg.allgather"]);
        t.validate(&g).unwrap();
        // One rank: no collective at all.
        let (t, g) = read_str("moe.txt", &moe(1, 1, 1), None).unwrap();
        assert!(g.is_empty());
        assert!(t.ranks[0]
            .nodes
            .iter()
            .all(|n| !matches!(n.kind, NodeKind::Coll { .. })));
        t.validate(&g).unwrap();
    }

    fn error_of(file: &str, ranks: Option<u32>) -> String {
        read(&fixture(file), file, ranks).unwrap_err().to_string()
    }

    #[test]
    fn bad_files_name_file_line_and_field() {
        for (f, has) in [
            (
                "bad_header.txt",
                &["line 1: parallelism", "HYBRID_TRANSFORMR", "MICRO"][..],
            ),
            (
                "bad_comm_type.txt",
                &["line 4: fwd_comm_type", "ALLREDUCE_TP", "REDUCESCATTER"],
            ),
            (
                "bad_layer_count.txt",
                &["line 2: layer count", "3 layers", "2 layer lines"],
            ),
            (
                "bad_number.txt",
                &["line 4: fwd_comm_size", "-16777216", "negative"],
            ),
        ] {
            let e = error_of(f, None);
            assert!(e.starts_with(f), "{e}");
            for h in has {
                assert!(e.contains(h), "{f}: `{e}` lacks `{h}`");
            }
        }
    }

    #[test]
    fn other_refusals() {
        let cases: Vec<(String, Option<u32>, &[&str])> = vec![
            (TINY.into(), Some(8), &["field `ranks`", "all_gpus is 4"]),
            (
                "MICRO\n1\nm\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4096\t1\n".into(),
                None,
                &["line 1: all_gpus", "`ranks`"],
            ),
            (
                TINY.replace("all_gpus: 4", "all_gpus: 5"),
                None,
                &["line 1: all_gpus", "divide"],
            ),
            (
                TINY.replace("pp: 1", "pp: 4"),
                None,
                &["line 1: all_gpus", "pp (4)"],
            ),
            (
                TINY.replace("ep: 1", "ep: 4"),
                None,
                &["line 1: ep", "data-parallel size 2"],
            ),
            (
                TINY.replace("checkpoints: 0", "checkpoints: 1 3"),
                None,
                &["line 1: checkpoints", "recomputation"],
            ),
            (
                TINY.replace("HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_DLRM"),
                None,
                &["line 1: parallelism", "not read"],
            ),
            (
                TINY.replace("pp_comm: 0", "pp_comm:"),
                None,
                &["line 1: pp_comm", "no value"],
            ),
            (TINY.replace("ga: 1", "ga 1"), None, &["line 1", "`ga`"]),
            (
                TINY.replace("all_gpus: 4", "all_gpus: 4x"),
                None,
                &["line 1: all_gpus", "not a number"],
            ),
            (
                TINY.replace("\t10\t", "\t99999999999999999999999\t"),
                None,
                &["line 3: fwd_compute_time", "too large"],
            ),
            (
                TINY.replace("\t10\t", "\t1000000000001\t"),
                None,
                &["line 3: fwd_compute_time", "too long"],
            ),
            (
                TINY.replace("\t65536\t0", "\t2199023255553\t0"),
                None,
                &["line 4: wg_comm_size", "1 TiB"],
            ),
            (
                TINY.replace("\t65536\t0", "\t65536"),
                None,
                &["line 4: wg_update_time", "ends before"],
            ),
            (
                TINY.replace("\t65536\t0", "\t65536\t0\t0"),
                None,
                &["line 4", "13 fields"],
            ),
            (
                TINY.replace("emb\t-1", "emb\tx"),
                None,
                &["line 3: dependency"],
            ),
            (
                TINY.replace("\n2\n", "\nmany\n"),
                None,
                &["line 2: layer count", "not a number"],
            ),
            (
                TINY.replace("\n2\n", "\n0\n"),
                None,
                &["line 2: layer count", "0 layers"],
            ),
            (
                TINY.replace("\n2\n", "\n1\n"),
                None,
                &["line 4", "beyond the 1"],
            ),
            (
                TINY.lines().next().unwrap().into(),
                None,
                &["line 2: layer count", "ends after the header"],
            ),
            (String::new(), None, &["line 1: parallelism", "empty"]),
        ];
        for (text, ranks, has) in cases {
            let e = read_str("f.txt", &text, ranks).unwrap_err().to_string();
            assert!(e.starts_with("f.txt"), "{e}");
            for h in has {
                assert!(e.contains(h), "`{e}` lacks `{h}`");
            }
        }
    }

    #[test]
    fn header_forms_simai_takes() {
        // SimAI's own example writes `pp_comm` without its colon; AICB may write a float;
        // AICB's multi-allreduce test writes a key SimAI ignores; old files have only the
        // TP size (the rank count then comes from `ranks`).
        for h in [
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 8 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm 50331648",
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 2 expert_parallel_npu_group: 1 pp: 2 ga: 0 all_gpus: 8 pp_comm: 4194304.0",
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 2 checkpoints: 0 checkpoint_initiates: 0",
        ] {
            let text = format!("{h}\n1\r\n\nl\t-1\t1\tALLREDUCE\t4096\t1\tNONE\t0\t1\tALLREDUCE\t4096\t100");
            let (t, g) = read_str("h.txt", &text, Some(8)).unwrap_or_else(|e| panic!("{h}: {e}"));
            assert_eq!(t.ranks.len(), 8);
            // PP is not modelled: DP = all_gpus / TP.
            assert_eq!(g["dp0"], [0, 2, 4, 6]);
            t.validate(&g).unwrap();
        }
        let e = read_str("h.txt", "DATA all_gpus: 2 pp_comm: 1.5\n1\n", None).unwrap_err();
        assert!(e.to_string().contains("line 1: pp_comm"), "{e}");
    }

    #[test]
    fn too_many_nodes_are_refused() {
        let e = read_str("big.txt", &moe(1, 1, 4_000_000), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most"), "{e}");
    }

    #[test]
    fn truncations_and_edits_never_panic() {
        let text = std::fs::read_to_string(fixture("megatron_tp2_dp4.txt")).unwrap();
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.txt");
        for cut in 0..=text.len() {
            std::fs::write(&p, &text[..cut]).unwrap();
            if let Ok((t, g)) = read(&p, "t.txt", None) {
                t.validate(&g).unwrap();
            }
        }
        // Each token replaced by values that are out of range or of the wrong kind.
        let lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        for (li, l) in lines.iter().enumerate() {
            for ti in 0..l.len() {
                for bad in [
                    "",
                    "-1",
                    "0",
                    "1",
                    "18446744073709551616",
                    "NONE",
                    "x:",
                    "4.5",
                ] {
                    let mut edited = lines.clone();
                    edited[li][ti] = bad;
                    let out: Vec<String> = edited.iter().map(|l| l.join("\t")).collect();
                    std::fs::write(&p, out.join("\n")).unwrap();
                    if let Ok((t, g)) = read(&p, "t.txt", Some(8)) {
                        t.validate(&g).unwrap();
                    }
                }
            }
        }
    }
}
