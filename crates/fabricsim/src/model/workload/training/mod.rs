//! Training jobs split across two campuses (document 001): iterations of compute phases
//! and the messages between them, as pipeline (PP) or data (DP, DP with ZeRO-3)
//! parallelism.
//!
//! The ranks are split into two sides: by campus on a `multi_campus` topology (the first
//! two campuses among the hosts), else the first and second half of `hosts`. Side A's
//! rank `i` is paired with side B's rank `i`, so `pairs` messages cross at once.
//!
//! - **PP** (`parallelism = "pp"`, [`pipeline`]): pipelines of `stages` stages, the first
//!   half on side A and the second on side B, running 1F1B over `microbatches`
//!   microbatches (`forward` and `backward` per microbatch and stage, `activation` bytes
//!   each way). Pipeline `p` uses ranks `p * stages/2 ..` of each side, so one stage
//!   boundary per pipeline crosses the DCI.
//! - **DP** (`"dp"`) and **DP with ZeRO-3** (`"dp_zero3"`, [`data_parallel`]): a
//!   hierarchical gradient AllReduce, and for ZeRO-3 a parameter all-gather before each
//!   iteration's compute.
//!
//! Compute phases are phases of the simulator's dependency graph ([`super::Phase`]);
//! messages are flows, split over `channels` queue pairs and, with `window`, cut into
//! chunks under NCCL-like slot credits ([`super::window`]), as the collectives' are.
//! `training.csv` reads each iteration's end from the run (the end of its flush phase)
//! and compares it with the same job inside one campus, computed from the same graph
//! ([`TrainingSpec::reference_iteration`]).

pub mod data_parallel;
pub mod graph;
pub mod pipeline;

pub use pipeline::{pp_free, pp_with};

use super::channel_window::{Window, WindowCfg, WindowTraffic};
use super::{resolve_set, Builder, Generator, HostSet, DEFAULT_START};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use graph::{Emitted, JobGraph, JobNode};
use serde::Deserialize;

/// How a training job is split.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Parallelism {
    /// Pipeline: the first half of the stages on one campus, the rest on the other.
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
    /// PP: stages per pipeline (even; half on each campus).
    #[serde(default = "d_stages")]
    pub stages: u32,
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
    /// Queue pairs (NCCL channels) each message is split over.
    #[serde(default = "d_channels")]
    pub channels: u32,
    /// NCCL-like channel window on every message (`window = {}` for NCCL's defaults);
    /// none: unbounded.
    #[serde(default)]
    pub window: Option<WindowCfg>,
}

fn d_iterations() -> u32 {
    2
}
fn d_microbatches() -> u32 {
    128
}
fn d_stages() -> u32 {
    2
}
fn d_channels() -> u32 {
    1
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
            Param::plain(
                "stages",
                d_stages(),
                "PP: stages per pipeline, even (half on each campus)",
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
            Param::plain(
                "channels",
                d_channels(),
                "queue pairs (NCCL channels) each message is split over",
            ),
            Param::unset(
                "window",
                "NCCL-like channel window on every message { buffer, chunk, slots }; `{}` for NCCL's defaults (pp: 8 x 128 KiB; dp: 4 MiB in 8 x 512 KiB)",
            ),
        ]
    }
}

/// One training job as generated: what `training.csv` needs after the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainingSpec {
    /// How it is split.
    pub parallelism: Parallelism,
    /// Messages crossing the DCI at once: PP, pipelines; DP, ranks per side.
    pub pairs: u32,
    /// Start of the first iteration.
    pub start: Time,
    /// Global phase id of each iteration's end (its flush).
    pub iteration_ends: Vec<u32>,
    /// PP: stages per pipeline.
    pub stages: u32,
    /// PP: microbatches per iteration.
    pub microbatches: u32,
    /// Forward phase (PP).
    pub forward: Time,
    /// Backward phase (PP).
    pub backward: Time,
    /// Compute per iteration (DP).
    pub compute: Time,
    /// Bytes of one cross-DCI message (PP: activation; DP: gradient shard).
    pub cross_bytes: u64,
    /// ZeRO-3: parameter bytes of the model (0 otherwise).
    pub parameters: u64,
    /// Cross-DCI messages per pair and iteration.
    pub crossings: u32,
    /// The data flows that cross the DCI (for transmissions per byte and the RTT).
    pub cross_flows: Vec<u32>,
    /// The job as phases and messages (for the one-campus reference).
    pub graph: JobGraph,
    /// Where the graph's phases went (phase `i` is global `first_phase + i`).
    pub first_phase: u32,
}

impl TrainingSpec {
    /// The end time of each iteration, from the end times of the run's phases (`None`
    /// if the run ended before it).
    pub fn iteration_ends(&self, phase_end: impl Fn(u32) -> Option<Time>) -> Vec<Option<Time>> {
        self.iteration_ends.iter().map(|&p| phase_end(p)).collect()
    }

    /// Each iteration's time when message `i` of the graph takes `transfer(i)` and nothing
    /// else delays anything (the graph's longest paths).
    pub fn evaluate_iterations(&self, transfer: impl Fn(usize) -> Time) -> Vec<Time> {
        let ends = self.graph.evaluate(transfer);
        let mut prev = self.start;
        self.iteration_ends
            .iter()
            .map(|&p| {
                let e = ends[(p - self.first_phase) as usize];
                let d = e - prev;
                prev = e;
                d
            })
            .collect()
    }

    /// One iteration of the same job inside one campus, computed: every message takes
    /// its serialization at the NIC's goodput `nic_bps` (no fibre, no sharing). PP: the
    /// pipeline's graph with that time per message; DP: the compute plus a flat ring
    /// AllReduce of the gradient over all `2 pairs` ranks at that rate
    /// (`2 (N-1)/N S / B`), and with ZeRO-3 a ring all-gather of the parameters
    /// (`(N-1)/N P / B`): inside one campus a job runs the flat ring.
    pub fn reference_iteration(&self, nic_bps: f64) -> Time {
        let ser = |bytes: f64| (bytes * 8.0 / nic_bps * 1e12).round() as Time;
        let n = 2.0 * self.pairs as f64;
        match self.parallelism {
            Parallelism::Pp => {
                let its = self.evaluate_iterations(|i| ser(self.graph.messages[i].size as f64));
                its.first().copied().unwrap_or(0)
            }
            Parallelism::Dp | Parallelism::DpZero3 => {
                let grad = self.cross_bytes as f64 * self.pairs as f64;
                let params = self.parameters as f64;
                self.compute + ser(2.0 * (n - 1.0) / n * grad) + ser((n - 1.0) / n * params)
            }
        }
    }
}

fn need<T: Copy>(v: Option<T>, field: &str, what: &str) -> Result<T, ParamError> {
    v.ok_or_else(|| ParamError::new(field, format!("{what} training needs {field}")))
}

/// The two sides: hosts of the first two campuses, or the two halves of `hosts`.
fn sides(c: &TrainingCfg, b: &Builder<'_>) -> Result<(Vec<u32>, Vec<u32>), ParamError> {
    let g = b.graph;
    let hs = resolve_set(&c.hosts, g, "hosts", None, "a training job's hosts")?;
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

impl TrainingCfg {
    /// What the window's queue pairs carry: a pipeline's activations and gradients go by
    /// NCCL send/receive (Megatron-LM's p2p communication); data parallelism's by
    /// collectives (AllReduce, ZeRO-3's AllGather).
    pub fn window_traffic(&self) -> WindowTraffic {
        match self.parallelism {
            Parallelism::Pp => WindowTraffic::PointToPoint,
            Parallelism::Dp | Parallelism::DpZero3 => WindowTraffic::Collective,
        }
    }

    /// The window with NCCL's defaults for this traffic filled in (checked at generation).
    pub fn resolved_window(&self) -> Option<Window> {
        let t = self.window_traffic();
        self.window.as_ref().map(|w| w.resolve(t))
    }
}

impl Generator for TrainingCfg {
    /// Counted from the schedules' shapes (n pairs = hosts / 2, I iterations), each
    /// message split over `channels` and, with a window, cut into chunks (at most one
    /// credit per chunk, so at most twice the flows):
    /// - PP: `I x (n / (stages/2)) x (stages - 1) x 2 microbatches` messages; phases
    ///   `1 + I x (pipelines x stages x 2 microbatches + 1)`; every message has a phase
    ///   before and after it, and every pass a phase before it.
    /// - DP: per iteration `2n + 4n(n-1)` gradient messages (two rings per side and the
    ///   crossing), with ZeRO-3 also `2n + 2n(n-1)` parameter messages; phases
    ///   `1 + I x (2n + 1)`; every message waits for one node, every compute phase for
    ///   one, the iteration's end for `2n`. Edges out of a message are counted at the
    ///   largest message's flows, so a bound within a few percent.
    ///
    /// Exact without a window, the DP compute edges aside. One job.
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let n = super::set_size(&self.hosts, ctx.hosts, false) / 2;
        let window = self.resolved_window();
        let w = window.as_ref();
        let channels = u64::from(self.channels.max(1));
        // Flows of one message of `bytes`: its channel parts, each cut by the window.
        let flows_of = |bytes: u64| {
            let c = channels.min(bytes).max(1);
            let (q, r) = (bytes / c, bytes % c);
            r.saturating_mul(super::window_pieces(q.saturating_add(1), w))
                .saturating_add((c - r).saturating_mul(super::window_pieces(q.max(1), w)))
        };
        let it = u64::from(self.iterations);
        let (data, edges, phases) = match self.parallelism {
            Parallelism::Pp => {
                let st = u64::from(self.stages);
                let half = st / 2;
                let pipelines = n.checked_div(half).unwrap_or(0);
                let mb2 = 2 * u64::from(self.microbatches);
                let passes = pipelines.saturating_mul(st).saturating_mul(mb2);
                let messages = it
                    .saturating_mul(pipelines)
                    .saturating_mul(st.saturating_sub(1))
                    .saturating_mul(mb2);
                let data = messages.saturating_mul(flows_of(self.activation.unwrap_or(1)));
                // Pass after pass, each stage's last pass before the end.
                let phase_edges = it.saturating_mul(passes.saturating_add(pipelines * st));
                (
                    data,
                    phase_edges.saturating_add(data.saturating_mul(2)),
                    it.saturating_mul(passes.saturating_add(1))
                        .saturating_add(1),
                )
            }
            Parallelism::Dp | Parallelism::DpZero3 => {
                let n1 = n.max(1);
                let shard = self.gradient.unwrap_or(1).div_ceil(n1).max(1);
                let fa = flows_of(shard);
                let ring = (2 * n).saturating_mul(n.saturating_sub(1));
                let grads = (2 * n).saturating_add(ring.saturating_mul(2));
                let mut per_it = grads.saturating_mul(fa);
                let mut widest = fa;
                if self.parallelism == Parallelism::DpZero3 {
                    let pshard = self.parameters.unwrap_or(1).div_ceil(2 * n1).max(1);
                    let (fb, fc) = (flows_of(pshard), flows_of(pshard.saturating_mul(2)));
                    per_it = per_it
                        .saturating_add((2 * n).saturating_mul(fb))
                        .saturating_add(ring.saturating_mul(fc));
                    widest = widest.max(fb).max(fc);
                }
                let data = it.saturating_mul(per_it);
                // Each message's one incoming edge becomes one per flow of it; compute
                // phases wait for a message (at most the widest) or a phase; the end
                // waits for each rank's last all-gather message.
                let other = (2 * n).saturating_mul(widest.saturating_add(fa));
                (
                    data,
                    data.saturating_add(it.saturating_mul(other)),
                    it.saturating_mul(2 * n + 1).saturating_add(1),
                )
            }
        };
        let (flows, deps) = super::with_window(data, edges, w.is_some());
        Ok(Some(super::WorkSize {
            flows,
            deps,
            phases,
            jobs: 1,
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        match self.parallelism {
            Parallelism::Pp => "hosts x microbatches x iterations x channels (and window chunks)",
            Parallelism::Dp | Parallelism::DpZero3 => {
                "hosts^2 x iterations x channels (and window chunks)"
            }
        }
    }

    fn size_knobs(&self, ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        size_knobs(
            self,
            &[
                ("iterations", |c| c.iterations = 1),
                ("microbatches", |c| c.microbatches = 1),
                ("channels", |c| c.channels = 1),
                // A window cuts a message into size / chunk pieces: one at the least.
                ("window.chunk", |c| {
                    if let Some(w) = &mut c.window {
                        w.chunk = Some(u64::MAX);
                    }
                }),
                ("activation", |c| c.activation = c.activation.map(|_| 1)),
                ("gradient", |c| c.gradient = c.gradient.map(|_| 1)),
                ("parameters", |c| c.parameters = c.parameters.map(|_| 1)),
            ],
            |c| c.size(ctx).ok().flatten(),
        )
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let c = self;
        if c.iterations == 0 {
            return Err(ParamError::new("iterations", "must be at least 1"));
        }
        if c.channels == 0 {
            return Err(ParamError::new("channels", "must be at least 1"));
        }
        if let Some(w) = &c.window {
            w.validate(c.window_traffic())
                .map_err(|e| e.within("window"))?;
        }
        let (a, bs) = sides(c, b)?;
        let n = a.len();
        let start = c.start.unwrap_or(DEFAULT_START);
        let mut g = JobGraph::default();
        let mut spec = TrainingSpec {
            parallelism: c.parallelism,
            pairs: n as u32,
            start,
            iteration_ends: Vec::new(),
            stages: 0,
            microbatches: 0,
            forward: 0,
            backward: 0,
            compute: 0,
            cross_bytes: 0,
            parameters: 0,
            crossings: 0,
            cross_flows: Vec::new(),
            graph: JobGraph::default(),
            first_phase: 0,
        };
        let ends = match c.parallelism {
            Parallelism::Pp => {
                let act = need(c.activation, "activation", "pp")?;
                let f = need(c.forward, "forward", "pp")?;
                let bw = need(c.backward, "backward", "pp")?;
                super::check_size(act, "activation")?;
                if c.microbatches < 2 {
                    return Err(ParamError::new(
                        "microbatches",
                        "a pipeline needs at least 2",
                    ));
                }
                let st = c.stages as usize;
                if st < 2 || !st.is_multiple_of(2) {
                    return Err(ParamError::new(
                        "stages",
                        format!("{st} stages: a pipeline split across two campuses needs an even number, at least 2 (half on each)"),
                    ));
                }
                let half = st / 2;
                if !n.is_multiple_of(half) {
                    return Err(ParamError::new(
                        "stages",
                        format!("{n} ranks per campus do not split into pipelines of {half} stages per campus"),
                    ));
                }
                let pipelines: Vec<Vec<u32>> = (0..n / half)
                    .map(|p| {
                        let r = p * half..(p + 1) * half;
                        a[r.clone()].iter().chain(&bs[r]).copied().collect()
                    })
                    .collect();
                spec.pairs = pipelines.len() as u32;
                spec.stages = c.stages;
                spec.microbatches = c.microbatches;
                spec.forward = f;
                spec.backward = bw;
                spec.cross_bytes = act;
                spec.crossings = 2 * c.microbatches;
                let shape = pipeline::PipelineShape {
                    stages: st,
                    microbatches: c.microbatches as usize,
                    forward: f,
                    backward: bw,
                    activation: act,
                };
                pipeline::build(&mut g, &pipelines, &shape, c.iterations, start)
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
                spec.cross_bytes = grad.div_ceil(n as u64).max(1);
                spec.parameters = params.unwrap_or(0);
                spec.crossings = 1 + u32::from(params.is_some());
                let shape = data_parallel::DataParallelShape {
                    compute,
                    gradient: grad,
                    parameters: params,
                };
                data_parallel::build(&mut g, &a, &bs, &shape, c.iterations, start)
            }
        };
        let group = b.job_groups;
        b.job_groups += 1;
        let Emitted {
            first_phase,
            flows_of,
        } = g.emit(b, start, group, c.channels, c.resolved_window().as_ref())?;
        spec.first_phase = first_phase;
        spec.iteration_ends = ends
            .iter()
            .map(|&e| match e {
                JobNode::Phase(i) => first_phase + i,
                JobNode::Transfer(_) => unreachable!("an iteration ends with a phase"),
            })
            .collect();
        spec.cross_flows = (g.messages.iter().zip(&flows_of))
            .filter(|(m, _)| m.cross)
            .flat_map(|(_, fs)| fs.iter().copied())
            .collect();
        spec.graph = g;
        b.work.trainings.push(spec);
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}
