//! Training jobs split across two campuses (document 001): iterations of compute phases
//! and the transfers between them, as pipeline (PP) or data (DP, DP with ZeRO-3)
//! parallelism.
//!
//! The ranks are split into two sides: by campus on a `multi_campus` topology (the first
//! two campuses among the hosts), else the first and second half of `hosts`. Side A's
//! rank `i` is paired with side B's rank `i`, so `pairs` transfers cross at once.
//!
//! **PP** (`parallelism = "pp"`): each pair is a two-stage pipeline, stage 1 on side A,
//! stage 2 on side B, running 1F1B over `microbatches` microbatches. A forward phase
//! takes `forward`, a backward phase `backward`. Stage 1 sends each microbatch's
//! activations (`activation` bytes) when its forward ends; stage 2 runs forward and
//! backward of a microbatch once its activations arrived and its previous backward ended,
//! and sends the activation gradients (`activation` bytes) back. Stage 1's compute
//! stream is F0, F1, B0, F2, B1, ..., F(M-1), B(M-2), B(M-1); its backward of microbatch
//! m waits for that gradient. The iteration ends with stage 1's last backward; the next
//! one starts there.
//!
//! **DP** (`"dp"`): every rank computes an iteration (`compute`), then the gradients
//! (`gradient` bytes per rank) are all-reduced hierarchically: ring reduce-scatter inside
//! each side (n-1 steps of S/n), an exchange of the reduced shards between paired ranks
//! across the DCI (S/n each way), and a ring all-gather inside each side. A rank starts
//! its next iteration when its all-gather is done. **DP with ZeRO-3** (`"dp_zero3"`)
//! first all-gathers the parameters (`parameters` bytes, sharded over all ranks) before
//! each iteration's compute: the paired ranks exchange their shards across the DCI,
//! then each side all-gathers in a ring; the gradients then go as in DP (ZeRO-3 needs
//! only their reduce-scatter; the all-gather half is kept, a pessimism noted in
//! docs/results/longhaul.md).
//!
//! Transfers are whole messages on their queue pairs (no NCCL window yet: windows apply
//! to `collective` workloads only).
//!
//! Compute phases are delays on the transfers' start-after edges
//! ([`super::TimedDep`]); a phase with no outgoing transfer is folded into the next
//! one's delay. `training.csv` rebuilds each iteration's time from the transfers'
//! start and finish times ([`TrainingSpec::iteration_ends`]) and compares it with the
//! same job inside one campus, computed ([`TrainingSpec::reference_iteration`]).

use super::{resolve_set, Builder, Generator, HostSet, TimedDep, DEFAULT_START};
use crate::param::{Described, Param, ParamError};
use crate::transport::FlowSpec;
use crate::units::serde_units as su;
use crate::units::Time;
use serde::Deserialize;

/// How a training job is split.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Parallelism {
    /// Pipeline: stage 1 on one campus, stage 2 on the other.
    Pp,
    /// Data parallel with a hierarchical gradient AllReduce.
    Dp,
    /// Data parallel with ZeRO-3 (parameter all-gather before each iteration).
    DpZero3,
}

impl Parallelism {
    /// The name in scenarios and `training.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Parallelism::Pp => "pp",
            Parallelism::Dp => "dp",
            Parallelism::DpZero3 => "dp_zero3",
        }
    }
}

/// `kind = "training"`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingCfg {
    /// `pp`, `dp` or `dp_zero3`.
    pub parallelism: Parallelism,
    /// Ranks (split into two sides, see the module doc).
    #[serde(default = "super::all_hosts")]
    pub hosts: HostSet,
    /// Iterations, each after the previous.
    #[serde(default = "d_iterations")]
    pub iterations: u32,
    /// Start of the first iteration.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// PP: microbatches (samples) per iteration.
    #[serde(default = "d_microbatches")]
    pub microbatches: u32,
    /// PP: activation bytes per microbatch (and gradient bytes back).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub activation: Option<u64>,
    /// PP: forward compute per microbatch and stage.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub forward: Option<Time>,
    /// PP: backward compute per microbatch and stage.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub backward: Option<Time>,
    /// DP: compute (forward and backward) per iteration.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub compute: Option<Time>,
    /// DP: gradient bytes per rank.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub gradient: Option<u64>,
    /// DP with ZeRO-3: parameter bytes of the model (sharded over all ranks).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub parameters: Option<u64>,
}

fn d_iterations() -> u32 {
    2
}
fn d_microbatches() -> u32 {
    128
}

impl Described for TrainingCfg {
    const ABOUT: &'static str =
        "a training job split across two campuses: PP, DP or DP with ZeRO-3 (document 001)";
    fn params() -> Vec<Param> {
        vec![
            Param::required("parallelism", "\"pp\" | \"dp\" | \"dp_zero3\""),
            super::hosts_param(),
            Param::plain(
                "iterations",
                d_iterations(),
                "iterations, each after the previous",
            ),
            Param::time("start", DEFAULT_START, "start of the first iteration"),
            Param::plain(
                "microbatches",
                d_microbatches(),
                "PP: microbatches per iteration",
            ),
            Param::unset(
                "activation",
                "PP (required): activation bytes per microbatch",
            ),
            Param::unset(
                "forward",
                "PP (required): forward compute per microbatch and stage",
            ),
            Param::unset(
                "backward",
                "PP (required): backward compute per microbatch and stage",
            ),
            Param::unset("compute", "DP (required): compute per iteration"),
            Param::unset("gradient", "DP (required): gradient bytes per rank"),
            Param::unset(
                "parameters",
                "dp_zero3 (required): parameter bytes of the model",
            ),
        ]
    }
}

/// One training job as generated: what `training.csv` needs after the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainingSpec {
    /// How it is split.
    pub parallelism: Parallelism,
    /// Ranks per side (= pairs crossing the DCI at once).
    pub pairs: u32,
    /// Start of the first iteration.
    pub start: Time,
    /// Per iteration, the flow indices the iteration's end is computed from.
    pub iterations: Vec<IterationFlows>,
    /// PP: microbatches, forward, backward; DP: compute.
    pub microbatches: u32,
    /// Forward phase (PP).
    pub forward: Time,
    /// Backward phase (PP).
    pub backward: Time,
    /// Compute per iteration (DP).
    pub compute: Time,
    /// Bytes of one cross-DCI transfer (PP: activation; DP: gradient shard).
    pub cross_bytes: u64,
    /// ZeRO-3: parameter bytes of the model (0 otherwise).
    pub parameters: u64,
    /// Cross-DCI transfers per pair and iteration.
    pub crossings: u32,
    /// The flows that cross the DCI (for transmissions per byte and the RTT).
    pub cross_flows: Vec<u32>,
}

/// The flows an iteration's end is read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IterationFlows {
    /// PP, per pair: stage 1's sends X(m) and stage 2's gradients G(m), m = 0..M.
    Pp {
        /// X(m) of each pair.
        x: Vec<Vec<u32>>,
        /// G(m) of each pair.
        g: Vec<Vec<u32>>,
    },
    /// DP: the last transfer into each rank (its all-gather's end).
    Dp {
        /// One per rank.
        last_in: Vec<u32>,
    },
}

impl TrainingSpec {
    /// The end time of each iteration from the flows' start and finish times (`None` if
    /// a flow it needs did not finish). `started(f)` and `finished(f)` read the run.
    pub fn iteration_ends(
        &self,
        started: impl Fn(u32) -> Option<Time>,
        finished: impl Fn(u32) -> Option<Time>,
    ) -> Vec<Option<Time>> {
        let b = self.backward;
        self.iterations
            .iter()
            .map(|it| match it {
                IterationFlows::Pp { x, g } => {
                    let mut end = 0;
                    for (xs, gs) in x.iter().zip(g) {
                        let m = xs.len();
                        let last_x = started(xs[m - 1])?;
                        let g_prev = finished(gs[m - 2])?;
                        let g_last = finished(gs[m - 1])?;
                        let e = (g_prev.max(last_x) + b).max(g_last) + b;
                        end = end.max(e);
                    }
                    Some(end)
                }
                IterationFlows::Dp { last_in } => {
                    let mut end = 0;
                    for &f in last_in {
                        end = end.max(finished(f)?);
                    }
                    Some(end)
                }
            })
            .collect()
    }

    /// One iteration of the same job inside one campus, computed: every transfer takes
    /// its serialization at the NIC's goodput `nic_bps` (no fibre, no sharing). PP: the
    /// 1F1B recurrences with that delay; DP: the compute plus a flat ring AllReduce of
    /// the gradient over all `2 pairs` ranks at that rate (`2 (N-1)/N S / B`), and with
    /// ZeRO-3 a ring all-gather of the parameters (`(N-1)/N P / B`).
    pub fn reference_iteration(&self, nic_bps: f64) -> Time {
        let ser = |bytes: f64| (bytes * 8.0 / nic_bps * 1e12).round() as Time;
        let n = 2.0 * self.pairs as f64;
        match self.parallelism {
            Parallelism::Pp => pp_with(
                self.microbatches as usize,
                self.forward,
                self.backward,
                ser(self.cross_bytes as f64),
            ),
            Parallelism::Dp | Parallelism::DpZero3 => {
                let grad = self.cross_bytes as f64 * self.pairs as f64;
                let params = self.parameters as f64;
                self.compute + ser(2.0 * (n - 1.0) / n * grad) + ser((n - 1.0) / n * params)
            }
        }
    }
}

/// 1F1B on two stages with transfers taking no time: the recurrences of the module doc
/// with every receive at its send.
pub fn pp_free(m: usize, f: Time, b: Time) -> Time {
    pp_with(m, f, b, 0)
}

/// 1F1B on two stages with every transfer taking `d`.
pub fn pp_with(m: usize, f: Time, b: Time, d: Time) -> Time {
    // x[k]: stage 1's send of k (end of F(k)); g[k]: stage 2's send of k (end of B(k)).
    let mut x = vec![0; m];
    let mut g = vec![0; m];
    for k in 0..m {
        x[k] = match k {
            0 => f,
            1 => x[0] + f,
            _ => x[k - 1].max(g[k - 2] + d) + b + f,
        };
        g[k] = if k == 0 {
            x[0] + d
        } else {
            (x[k] + d).max(g[k - 1])
        } + f
            + b;
    }
    if m == 1 {
        return g[0] + d + b;
    }
    ((g[m - 2] + d).max(x[m - 1]) + b).max(g[m - 1] + d) + b
}

/// A transfer being built, and the graph's edges.
#[derive(Default)]
struct Plan {
    flows: Vec<(u32, u32, u64)>,
    plain: Vec<(u32, u32)>,
    timed: Vec<TimedDep>,
    /// Flows to start at the first iteration's start plus this delay.
    at: Vec<(u32, Time)>,
}

impl Plan {
    fn add(&mut self, src: u32, dst: u32, size: u64) -> u32 {
        self.flows.push((src, dst, size));
        (self.flows.len() - 1) as u32
    }
    fn after(&mut self, before: u32, after: u32, lag: Time) {
        self.timed.push(TimedDep {
            before,
            after,
            lag,
            on_start: false,
        });
    }
    fn after_start(&mut self, before: u32, after: u32, lag: Time) {
        self.timed.push(TimedDep {
            before,
            after,
            lag,
            on_start: true,
        });
    }
}

fn need<T: Copy>(v: Option<T>, field: &str, what: &str) -> Result<T, ParamError> {
    v.ok_or_else(|| ParamError::new(field, format!("{what} training needs {field}")))
}

/// The two sides: hosts of the first two campuses, or the two halves of `hosts`.
fn sides(c: &TrainingCfg, b: &Builder<'_>) -> Result<(Vec<u32>, Vec<u32>), ParamError> {
    let g = b.graph;
    let hs = resolve_set(&c.hosts, g, "hosts", None)?;
    let campus = |h: u32| g.nodes[g.hosts[h as usize]].campus;
    let (a, bside): (Vec<u32>, Vec<u32>) = if hs.iter().all(|&h| campus(h).is_some()) {
        let mut cs: Vec<u32> = hs.iter().filter_map(|&h| campus(h)).collect();
        cs.sort_unstable();
        cs.dedup();
        if cs.len() != 2 {
            return Err(ParamError::new(
                "hosts",
                format!(
                    "the ranks span {} campus(es): a training job here is split across exactly two",
                    cs.len()
                ),
            ));
        }
        (
            hs.iter()
                .copied()
                .filter(|&h| campus(h) == Some(cs[0]))
                .collect(),
            hs.iter()
                .copied()
                .filter(|&h| campus(h) == Some(cs[1]))
                .collect(),
        )
    } else {
        let half = hs.len() / 2;
        (hs[..half].to_vec(), hs[half..].to_vec())
    };
    if a.is_empty() || a.len() != bside.len() {
        return Err(ParamError::new(
            "hosts",
            format!(
                "the two sides have {} and {} ranks: they must be equal and non-empty (rank i of one side pairs with rank i of the other)",
                a.len(),
                bside.len()
            ),
        ));
    }
    Ok((a, bside))
}

/// Ring reduce-scatter or all-gather over `ranks` (n-1 steps of `shard` bytes): the
/// transfers; `first[r]` the first send of rank r, `last_in[r]` the last receive.
struct Ring {
    first: Vec<u32>,
    last_in: Vec<u32>,
}

/// Adds a ring of `steps` steps over `ranks`; the first send of rank r waits for
/// `ready[r]` (a flow and a lag) if given.
fn ring(p: &mut Plan, ranks: &[u32], shard: u64, ready: &[Option<(u32, Time)>]) -> Ring {
    let n = ranks.len();
    // Every rank sends and receives in each of the n - 1 >= 1 steps, so both get set.
    let mut first = vec![0; n];
    let mut last_in = vec![0; n];
    // into[r]: previous step's transfer into rank r.
    let mut into: Vec<Option<u32>> = vec![None; n];
    for step in 0..n.saturating_sub(1) {
        let mut next = vec![None; n];
        for r in 0..n {
            let to = (r + 1) % n;
            let t = p.add(ranks[r], ranks[to], shard);
            match into[r] {
                Some(prev) => p.plain.push((prev, t)),
                None => {
                    if let Some((f, lag)) = ready[r] {
                        p.after(f, t, lag);
                    }
                }
            }
            if step == 0 {
                first[r] = t;
            }
            next[to] = Some(t);
            last_in[to] = t;
        }
        into = next;
    }
    Ring { first, last_in }
}

impl Generator for TrainingCfg {
    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let c = self;
        if c.iterations == 0 {
            return Err(ParamError::new("iterations", "must be at least 1"));
        }
        let (a, bs) = sides(c, b)?;
        let n = a.len();
        let start = c.start.unwrap_or(DEFAULT_START);
        let mut p = Plan::default();
        let mut spec = TrainingSpec {
            parallelism: c.parallelism,
            pairs: n as u32,
            start,
            iterations: Vec::new(),
            microbatches: c.microbatches,
            forward: 0,
            backward: 0,
            compute: 0,
            cross_bytes: 0,
            parameters: c
                .parameters
                .filter(|_| c.parallelism == Parallelism::DpZero3)
                .unwrap_or(0),
            crossings: 0,
            cross_flows: Vec::new(),
        };
        match c.parallelism {
            Parallelism::Pp => {
                let act = need(c.activation, "activation", "pp")?;
                let f = need(c.forward, "forward", "pp")?;
                let bw = need(c.backward, "backward", "pp")?;
                super::check_size(act, "activation")?;
                let m = c.microbatches as usize;
                if m < 2 {
                    return Err(ParamError::new(
                        "microbatches",
                        "a pipeline needs at least 2",
                    ));
                }
                spec.forward = f;
                spec.backward = bw;
                spec.cross_bytes = act;
                spec.crossings = 2 * c.microbatches;
                // prev[i]: last iteration's (X(M-1), G(M-2), G(M-1)) of pair i.
                let mut prev: Vec<Option<(u32, u32, u32)>> = vec![None; n];
                for _ in 0..c.iterations {
                    let mut xs = Vec::with_capacity(n);
                    let mut gs = Vec::with_capacity(n);
                    for i in 0..n {
                        let x: Vec<u32> = (0..m).map(|_| p.add(a[i], bs[i], act)).collect();
                        let g: Vec<u32> = (0..m).map(|_| p.add(bs[i], a[i], act)).collect();
                        // Stage 1: F0 after the previous iteration's end; F1 right after.
                        match prev[i] {
                            None => p.at.push((x[0], f)),
                            Some((px, pg2, pg1)) => {
                                p.after(pg1, x[0], bw + f);
                                p.after(pg2, x[0], 2 * bw + f);
                                p.after_start(px, x[0], 2 * bw + f);
                                // Stage 2's stream continues from its last backward.
                                p.after_start(pg1, g[0], f + bw);
                            }
                        }
                        p.after_start(x[0], x[1], f);
                        for k in 2..m {
                            // ... F(k-1), B(k-2), F(k): after F(k-1) ended and G(k-2) came.
                            p.after_start(x[k - 1], x[k], bw + f);
                            p.after(g[k - 2], x[k], bw + f);
                        }
                        // Stage 2: F(k) and B(k) once X(k) arrived and B(k-1) ended.
                        for k in 0..m {
                            p.after(x[k], g[k], f + bw);
                            if k > 0 {
                                p.after_start(g[k - 1], g[k], f + bw);
                            }
                        }
                        spec.cross_flows.extend(&x);
                        spec.cross_flows.extend(&g);
                        prev[i] = Some((x[m - 1], g[m - 2], g[m - 1]));
                        xs.push(x);
                        gs.push(g);
                    }
                    spec.iterations.push(IterationFlows::Pp { x: xs, g: gs });
                }
            }
            Parallelism::Dp | Parallelism::DpZero3 => {
                let compute = need(c.compute, "compute", c.parallelism.name())?;
                let grad = need(c.gradient, "gradient", c.parallelism.name())?;
                super::check_size(grad, "gradient")?;
                let params = if c.parallelism == Parallelism::DpZero3 {
                    let v = need(c.parameters, "parameters", "dp_zero3")?;
                    super::check_size(v, "parameters")?;
                    Some(v)
                } else {
                    None
                };
                spec.compute = compute;
                let shard = grad.div_ceil(n as u64).max(1);
                spec.cross_bytes = shard;
                spec.crossings = 1 + u32::from(params.is_some());
                // done[side][r]: the flow ending rank r's previous iteration.
                let mut done: [Vec<Option<u32>>; 2] = [vec![None; n], vec![None; n]];
                for _ in 0..c.iterations {
                    // Ready to compute: (flow, lag) before the gradient phase, per rank.
                    let mut ready: [Vec<Option<(u32, Time)>>; 2] = [vec![None; n], vec![None; n]];
                    let mut first_cross: Vec<u32> = Vec::new();
                    if let Some(pb) = params {
                        // Parameter shards cross between the pairs, then each side gathers.
                        let pshard = pb.div_ceil(2 * n as u64).max(1);
                        let mut got: [Vec<Option<(u32, Time)>>; 2] = [vec![None; n], vec![None; n]];
                        for i in 0..n {
                            for (s, (from, to)) in
                                [(a[i], bs[i]), (bs[i], a[i])].into_iter().enumerate()
                            {
                                let t = p.add(from, to, pshard);
                                match done[s][i] {
                                    Some(d) => p.after(d, t, 0),
                                    None => p.at.push((t, 0)),
                                }
                                first_cross.push(t);
                                got[1 - s][i] = Some((t, 0));
                            }
                        }
                        for (s, side) in [&a, &bs].into_iter().enumerate() {
                            let r = ring(&mut p, side, 2 * pshard, &got[s]);
                            for i in 0..n {
                                ready[s][i] = Some(if n > 1 {
                                    (r.last_in[i], compute)
                                } else {
                                    (got[s][i].expect("crossed").0, compute)
                                });
                            }
                        }
                        spec.cross_flows.extend(&first_cross);
                    } else {
                        for s in 0..2 {
                            for i in 0..n {
                                ready[s][i] = done[s][i].map(|d| (d, compute));
                            }
                        }
                    }
                    // Gradients: reduce-scatter per side, exchange across, all-gather.
                    let mut shard_ready: [Vec<Option<(u32, Time)>>; 2] =
                        [vec![None; n], vec![None; n]];
                    for (s, side) in [&a, &bs].into_iter().enumerate() {
                        if n > 1 {
                            let rs = ring(&mut p, side, shard, &ready[s]);
                            for i in 0..n {
                                if ready[s][i].is_none() {
                                    p.at.push((rs.first[i], compute));
                                }
                                shard_ready[s][i] = Some((rs.last_in[i], 0));
                            }
                        } else {
                            shard_ready[s][0] = ready[s][0];
                        }
                    }
                    let mut crossed: [Vec<Option<(u32, Time)>>; 2] = [vec![None; n], vec![None; n]];
                    for i in 0..n {
                        for (s, (from, to)) in
                            [(a[i], bs[i]), (bs[i], a[i])].into_iter().enumerate()
                        {
                            let t = p.add(from, to, shard);
                            match shard_ready[s][i] {
                                Some((f, lag)) => p.after(f, t, lag),
                                None => p.at.push((t, compute)),
                            }
                            spec.cross_flows.push(t);
                            crossed[1 - s][i] = Some((t, 0));
                        }
                    }
                    let mut last_in = Vec::with_capacity(2 * n);
                    for (s, side) in [&a, &bs].into_iter().enumerate() {
                        if n > 1 {
                            let ag = ring(&mut p, side, shard, &crossed[s]);
                            for (d, &l) in done[s].iter_mut().zip(&ag.last_in) {
                                *d = Some(l);
                                last_in.push(l);
                            }
                        } else {
                            let t = crossed[s][0].expect("crossed").0;
                            done[s][0] = Some(t);
                            last_in.push(t);
                        }
                    }
                    spec.iterations.push(IterationFlows::Dp { last_in });
                }
            }
        }
        // Into the workload: flows, edges, absolute starts of the first phases.
        let w = &mut b.work;
        let first = w.flows.len() as u32;
        if first as u64 + p.flows.len() as u64 > crate::engine::MAX_INDEX as u64 {
            return Err(ParamError::new(
                "microbatches",
                format!(
                    "the training job makes more than {} flows",
                    crate::engine::MAX_INDEX
                ),
            ));
        }
        let mut starts = vec![start; p.flows.len()];
        for &(f, lag) in &p.at {
            starts[f as usize] = start + lag;
        }
        let group = b.job_groups;
        b.job_groups += 1;
        for (k, &(src, dst, size)) in p.flows.iter().enumerate() {
            w.flows.push(FlowSpec {
                src,
                dst,
                size,
                start: starts[k],
            });
            let key = crate::seed::component_seed(b.seed, &format!("train{group}/{src}-{dst}"));
            w.conn.push(Some(key));
        }
        w.deps
            .extend(p.plain.iter().map(|&(x, y)| (first + x, first + y)));
        w.timed.extend(p.timed.iter().map(|t| TimedDep {
            before: first + t.before,
            after: first + t.after,
            ..*t
        }));
        let shift = |f: u32| first + f;
        spec.cross_flows = spec.cross_flows.iter().map(|&f| shift(f)).collect();
        for it in &mut spec.iterations {
            match it {
                IterationFlows::Pp { x, g } => {
                    for v in x.iter_mut().chain(g.iter_mut()) {
                        for f in v.iter_mut() {
                            *f = shift(*f);
                        }
                    }
                }
                IterationFlows::Dp { last_in } => {
                    for f in last_in.iter_mut() {
                        *f = shift(*f);
                    }
                }
            }
        }
        w.trainings.push(spec);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_pipeline_is_warmup_plus_steady_state() {
        // Two stages, M microbatches, f = 1, b = 2: stage 2 is busy from f (its first
        // input) for M (f + b), then stage 1's last backward: f + M (f + b) + b.
        for m in 2..10usize {
            assert_eq!(pp_free(m, 1, 2), 1 + m as Time * 3 + 2, "m = {m}");
        }
    }
}
