//! Training workloads from traces (`kind = "trace"`): MLCommons Chakra execution traces
//! (one protobuf file per rank, [`chakra`]) and SimAI/AICB workload files (a header and
//! one line per layer, [`aicb`]), read into one form ([`ir`]), checked, placed on GPUs
//! ([`placement`]) and compiled ([`compile`]) into the simulator's dependency graph:
//! compute nodes become compute phases of their rank (one at a time per GPU, in issue
//! order), collectives become the NCCL-like algorithms' transfers over the
//! communicator's GPUs, sends and receives become transfers matched by tag, and every
//! dependency of the trace becomes an edge. Several trace entries are several jobs on
//! one fabric; `training.csv` reports each job's iterations and `timeline.json` its
//! spans.

mod acyclic;
pub mod aicb;
pub mod chakra;
pub mod compile;
pub mod ir;
pub mod placement;

use super::collective::protocol::ProtocolCfg;
use super::collective::segment::SegmentCfg;
use super::collective::select::AlgorithmCfg;
use super::{Builder, Generator, HostRef, SizeCtx, WorkSize, DEFAULT_START};
use crate::base::param::{Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The file format of a trace.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// MLCommons Chakra ET: files `<path>.<rank>.et`.
    Chakra,
    /// A SimAI/AICB workload text file.
    Aicb,
}

impl TraceFormat {
    /// The name in scenarios and `training.csv`.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Chakra => "chakra",
            TraceFormat::Aicb => "aicb",
        }
    }
}

/// Where a job's ranks go: a rule, or the hosts listed.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum PlacementCfg {
    /// `"contiguous"`, `"by_rail"` or `"random"`.
    Rule(String),
    /// Rank `r` on the `r`-th host listed.
    Explicit(Vec<HostRef>),
}

impl Default for PlacementCfg {
    fn default() -> Self {
        PlacementCfg::Rule("contiguous".into())
    }
}

/// The communicators of a Chakra trace: a JSON file `{"name": [ranks]}` (ASTRA-sim's
/// communicator-group file) or the same table inline.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CommGroupsCfg {
    /// A JSON file, relative to the scenario.
    File(String),
    /// Inline: communicator name -> its ranks.
    Inline(BTreeMap<String, Vec<u32>>),
}

/// Slower ranks: their compute takes `slowdown` times as long.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StragglerCfg {
    /// The slow ranks; unset: `count` ranks drawn with the run's seed.
    #[serde(default)]
    pub ranks: Option<Vec<u32>>,
    /// How many ranks to draw (when `ranks` is unset).
    #[serde(default)]
    pub count: Option<u32>,
    /// Factor on the compute time of each slow rank (at least 1).
    pub slowdown: f64,
}

/// What a job does when one of its ranks fails.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FailureAction {
    /// The rank is down for `downtime` and then resumes; the job waits for it.
    #[default]
    Wait,
    /// The job stops: nothing of it begins after the failure.
    Stop,
}

/// A rank failing at a time.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FailureCfg {
    /// The rank.
    pub rank: u32,
    /// When it fails.
    #[serde(deserialize_with = "su::time")]
    pub at: Time,
    /// `wait` or `stop`.
    #[serde(default)]
    pub action: FailureAction,
    /// `wait`: how long the rank is down.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub downtime: Option<Time>,
}

/// How the job-alone reference of `training.csv` is had.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AloneCfg {
    /// Run the job alone on the same fabric, on the same GPUs, with the same seed (a
    /// second simulation per job when the scenario has several; a job alone is its own
    /// reference).
    #[default]
    Run,
    /// No reference.
    Skip,
}

/// `kind = "trace"`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceCfg {
    /// `chakra` or `aicb`.
    pub format: TraceFormat,
    /// Chakra: the files' prefix (`traces/gpt` for `traces/gpt.0.et`, ...); AICB: the file.
    pub path: String,
    /// Ranks: Chakra, how many files (unset: as many as there are from `.0.et` on);
    /// AICB, must equal the file's `all_gpus` when set.
    #[serde(default)]
    pub ranks: Option<u32>,
    /// The job's name (`training.csv`, the timeline); unset: `job<entry>`.
    #[serde(default)]
    pub name: Option<String>,
    /// Where the ranks go.
    #[serde(default)]
    pub placement: PlacementCfg,
    /// Chakra: the communicators its `pg_name` attributes name.
    #[serde(default)]
    pub comm_groups: Option<CommGroupsCfg>,
    /// Floating-point operations per second of one GPU, for compute nodes that give
    /// FLOPs instead of a duration.
    #[serde(default)]
    pub gpu_flops: Option<f64>,
    /// Iterations: the trace run this many times, each rank starting the next when it
    /// has done its part of the last.
    #[serde(default = "d_one")]
    pub iterations: u32,
    /// When the job starts.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// The collectives' algorithm (unset: NCCL's table).
    #[serde(default)]
    pub algorithm: Option<AlgorithmCfg>,
    /// The collectives' protocol (unset: NCCL's table).
    #[serde(default)]
    pub protocol: Option<ProtocolCfg>,
    /// Channels (queue pairs) each collective is split over.
    #[serde(default = "d_one")]
    pub channels: u32,
    /// Pipelined pieces per collective step.
    #[serde(default = "d_one")]
    pub chunks: u32,
    /// Frames larger than the MTU for the job's transfers (see the collective workload).
    #[serde(default)]
    pub segment: Option<SegmentCfg>,
    /// Slower ranks.
    #[serde(default)]
    pub stragglers: Option<StragglerCfg>,
    /// A rank failing.
    #[serde(default)]
    pub failure: Option<FailureCfg>,
    /// The job-alone reference.
    #[serde(default)]
    pub alone: AloneCfg,
}

fn d_one() -> u32 {
    1
}

/// The placement rules by name.
pub const PLACEMENTS: [&str; 3] = ["contiguous", "by_rail", "random"];

impl Described for TraceCfg {
    const ABOUT: &'static str =
        "a training job from a trace: Chakra ET files or a SimAI/AICB workload file, placed on GPUs";
    fn params() -> Vec<Param> {
        vec![
            Param::required("format", "\"chakra\" | \"aicb\""),
            Param::required(
                "path",
                "chakra: the files' prefix (`t/gpt` for t/gpt.0.et, t/gpt.1.et, ...); aicb: the workload file",
            ),
            Param::unset(
                "ranks",
                "chakra: how many rank files (unset: all from .0.et on); aicb: must equal all_gpus",
            ),
            Param::unset("name", "the job's name; unset: job<entry>"),
            Param::word(
                "placement",
                "contiguous",
                "\"contiguous\" (free GPUs in host order) | \"by_rail\" (rank r on rail r mod servers: consecutive ranks on one rail of successive servers) | \"random\" (seeded) | a list of hosts",
            ),
            Param::unset(
                "comm_groups",
                "chakra: communicators named by pg_name, a JSON file {\"name\": [ranks]} or an inline table",
            ),
            Param::unset(
                "gpu_flops",
                "FLOP/s of one GPU, for compute nodes given in FLOPs (num_ops)",
            ),
            Param::plain(
                "iterations",
                d_one(),
                "the trace run this many times, each rank going on when done with the last",
            ),
            Param::time("start", DEFAULT_START, "when the job starts"),
            Param::unset(
                "algorithm",
                "the collectives' algorithm: \"auto\" (NCCL's table, default) | \"ring\" | \"tree\" | \"nvls\" | \"pat\"",
            ),
            Param::unset(
                "protocol",
                "\"auto\" (default) | \"simple\" | \"ll\" | \"ll128\" | \"none\"",
            ),
            Param::plain("channels", d_one(), "queue pairs per collective"),
            Param::plain("chunks", d_one(), "pipelined pieces per collective step"),
            Param::unset(
                "segment",
                "frames larger than transport.mtu: \"auto\" or a size (as the collective workload's)",
            ),
            Param::unset(
                "stragglers",
                "{ ranks = [..] or count = n (drawn with the seed), slowdown = x }: those ranks compute x times slower",
            ),
            Param::unset(
                "failure",
                "{ rank, at, action = \"wait\" (down for `downtime`, the job waits) | \"stop\" (the job stops), downtime }",
            ),
            Param::choice(
                "alone",
                &AloneCfg::default(),
                "training.csv's slowdown is against the job run alone on the same GPUs, or none",
            ),
        ]
    }
}

impl TraceCfg {
    /// The job's name.
    pub fn job_name(&self, entry: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("job{entry}"))
    }

    /// Reads and checks the trace and its communicators. Errors name `path` (with the
    /// trace file, node and field in the message) or `comm_groups`.
    pub fn load(&self, base: &Path) -> Result<(ir::Trace, HashMap<String, Vec<u32>>), ParamError> {
        crate::base::param::check_file_name(&self.path, "path")?;
        let at = base.join(&self.path);
        let terr = |e: ir::TraceError| ParamError::new("path", format!("trace {e}"));
        let (trace, groups) = match self.format {
            TraceFormat::Chakra => {
                let ranks = match self.ranks {
                    Some(r) => r,
                    None => chakra::rank_count(&at),
                };
                if ranks == 0 {
                    return Err(ParamError::new(
                        "path",
                        format!(
                            "no trace file `{}.0.et`: a Chakra trace is one file per rank, `<path>.<rank>.et`",
                            self.path
                        ),
                    ));
                }
                let t = chakra::read(&at, &self.path, ranks).map_err(terr)?;
                let groups = self.comm_groups(base, ranks)?;
                (t, groups)
            }
            TraceFormat::Aicb => {
                if self.comm_groups.is_some() {
                    return Err(ParamError::new(
                        "comm_groups",
                        "an AICB file implies its communicators (tensor, data, pipeline, expert parallel): remove comm_groups",
                    ));
                }
                aicb::read(&at, &self.path, self.ranks).map_err(terr)?
            }
        };
        trace.validate(&groups).map_err(terr)?;
        Ok((trace, groups))
    }

    /// The communicator table, checked against the rank count.
    fn comm_groups(
        &self,
        base: &Path,
        ranks: u32,
    ) -> Result<HashMap<String, Vec<u32>>, ParamError> {
        let table: BTreeMap<String, Vec<u32>> = match &self.comm_groups {
            None => return Ok(HashMap::new()),
            Some(CommGroupsCfg::Inline(t)) => t.clone(),
            Some(CommGroupsCfg::File(f)) => {
                crate::base::param::check_file_name(f, "comm_groups")?;
                let p = base.join(f);
                let text = crate::base::input_file::read_text(
                    &p,
                    crate::base::input_file::MAX_DATA_FILE_BYTES,
                )
                .map_err(|e| ParamError::new("comm_groups", e.in_file(&p)))?;
                serde_json::from_str(&text).map_err(|e| {
                    ParamError::new(
                        "comm_groups",
                        format!(
                            "{}: {e}: expected a JSON object of communicator name -> list of ranks",
                            p.display()
                        ),
                    )
                })?
            }
        };
        for (name, members) in &table {
            let field = format!("comm_groups.{name}");
            if members.is_empty() {
                return Err(ParamError::new(
                    field,
                    "a communicator needs at least one rank",
                ));
            }
            if let Some(&r) = members.iter().find(|&&r| r >= ranks) {
                return Err(ParamError::new(
                    field,
                    format!(
                        "rank {r} does not exist: the trace has ranks 0..{}",
                        ranks - 1
                    ),
                ));
            }
            let mut s = members.clone();
            s.sort_unstable();
            if s.windows(2).any(|w| w[0] == w[1]) {
                return Err(ParamError::new(field, "a rank is listed twice"));
            }
        }
        Ok(table.into_iter().collect())
    }

    /// Checks the settings that need no trace.
    fn check(&self) -> Result<(), ParamError> {
        for (name, v) in [
            ("iterations", self.iterations),
            ("channels", self.channels),
            ("chunks", self.chunks),
        ] {
            if v == 0 {
                return Err(ParamError::new(name, "must be at least 1"));
            }
        }
        if self.iterations > compile::MAX_ITERATIONS {
            return Err(ParamError::new(
                "iterations",
                format!("at most {}", compile::MAX_ITERATIONS),
            ));
        }
        if let Some(f) = self.gpu_flops {
            if !(f.is_finite() && f > 0.0) {
                return Err(ParamError::new(
                    "gpu_flops",
                    "a positive number of floating-point operations per second (989e12 for an H100's dense BF16)",
                ));
            }
        }
        if let Some(s) = &self.stragglers {
            if !(s.slowdown.is_finite() && (1.0..=1000.0).contains(&s.slowdown)) {
                return Err(ParamError::new(
                    "stragglers.slowdown",
                    "a factor from 1 to 1000 on the slow ranks' compute time",
                ));
            }
            if s.ranks.is_some() == s.count.is_some() {
                return Err(ParamError::new(
                    "stragglers",
                    "give the slow ranks (`ranks = [..]`) or how many to draw (`count = n`), one of the two",
                ));
            }
        }
        if let Some(f) = &self.failure {
            match (f.action, f.downtime) {
                (FailureAction::Wait, None) => {
                    return Err(ParamError::new(
                        "failure.downtime",
                        "required with action = \"wait\": how long the rank is down",
                    ))
                }
                (FailureAction::Stop, Some(_)) => {
                    return Err(ParamError::new(
                        "failure.downtime",
                        "a stopped job does not resume: remove downtime, or use action = \"wait\"",
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl Generator for TraceCfg {
    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        self.check()?;
        let (trace, groups) = self.load(b.base_dir)?;
        compile::compile(self, &trace, &groups, b)
    }

    /// From the trace itself (read within the input size limit): per collective and
    /// rank at most `2 (n - 1)` transfers of each channel and chunk (a ring AllReduce's
    /// count, the largest of the algorithms), each with its edges; per node its
    /// phases; bytes at most 6 S per rank and collective (a tree or NVLS rank's 2.5 S
    /// under LL's doubled wire bytes), as the collective workload counts them.
    fn size(&self, ctx: &SizeCtx<'_>) -> Result<Option<WorkSize>, ParamError> {
        self.check()?;
        let (trace, groups) = self.load(ctx.base_dir)?;
        Ok(Some(compile::size(self, &trace, &groups)))
    }

    fn size_drivers(&self) -> &'static str {
        "the trace's nodes x iterations (collectives: ranks x channels x chunks)"
    }

    fn size_knobs(&self, ctx: &SizeCtx<'_>) -> Vec<SizeKnob<WorkSize>> {
        crate::base::param::size_knobs(
            self,
            &[
                ("iterations", |c| c.iterations = 1),
                ("channels", |c| c.channels = 1),
                ("chunks", |c| c.chunks = 1),
            ],
            |c| c.size(ctx).ok().flatten(),
        )
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        // A Chakra prefix is not a file; the resolved scenario still makes it absolute.
        v.push(("path", self.path.clone()));
        if let Some(CommGroupsCfg::File(f)) = &self.comm_groups {
            v.push(("comm_groups", f.clone()));
        }
        v
    }
}
