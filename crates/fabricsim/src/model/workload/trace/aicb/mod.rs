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
mod fields;
use fields::*;

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
mod tests;
