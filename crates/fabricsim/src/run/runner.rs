//! Running a scenario.
//!
//! 1. Every run (variants x sweep points x replicates) is planned and checked up front,
//!    so that input errors appear before any simulated time passes: each run's
//!    Simulation is built and dropped at once ([`validate`]), one at a time, so the
//!    check holds one Simulation in memory however long the sweep; a scenario of one
//!    run keeps its Simulation for the run, built once. Building is cheap
//!    beside running (the 600 runs of `scenarios/gse-vs-roce-readings.toml` build in
//!    about 0.5 s, 0.85 ms each, against minutes of simulation), and it is exact: a
//!    seed feeds the workload generators, so only a build says that every replicate
//!    builds. Planning and the check are `run/plan.rs`'s.
//! 2. `--out` is checked (created, written to, no run folder blocked); with `resume`,
//!    runs whose folder already holds their results are reused ([`reusable`]).
//! 3. The other runs share the machine's cores, one run per thread. A worker builds its
//!    run when it takes it (a sweep of 100 000 seeds never holds more Simulations than
//!    threads), and each run writes its results as soon as it ends, so a later failure
//!    or an interruption never loses what earlier runs produced.
//! 4. The files across runs (`comparison.csv`, `jct.csv`, `report.html`, [`SWEEP_STATUS`])
//!    are written over every finished run, in the scenario's order.
//!
//! Order of the runs: the workers take them alternately shortest and longest (bytes to
//! move as the estimate), starting with the shortest. Longest first balances the cores
//! best (no big run starts last and leaves the other cores idle), but a short
//! interruption of a sweep then leaves nothing finished; shortest first finishes runs
//! early but starts the biggest last. Alternating gives a finished run after the
//! shortest one, and the last runs to start are the middle-sized ones, so the idle tail
//! is about one middle-sized run. Results keep the scenario's order whatever the order of
//! work, and a run's results do not depend on it.
//!
//! Stopping: when [`Control::stop`] is set, workers take no new run and the runs in
//! progress stop within ~2^20 events ([`Simulation::run_until_stopped`]); they write
//! nothing, so their folders stay as they were and `resume` reruns them.

use crate::base::units::Time;
use crate::output::{self, resolved, Summary};
use crate::scenario::{LoadedScenario, ScenarioError};
use crate::sim::{Outcome, Progress, Simulation};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::plan::validate_keeping;
pub use super::plan::{build_all, build_runs, plan, validate, PlannedRun, RunCost, RunMeta};
pub use crate::output::SWEEP_STATUS;

/// Options of a run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Results folder; none writes nothing.
    pub out: Option<PathBuf>,
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Threads each run is cut into (0 or 1: one): see
    /// [`Simulation::set_threads_per_run`]. The results are the same bytes whatever it
    /// is.
    pub threads_per_run: usize,
}

/// How a sweep may be cut short or continued.
#[derive(Clone, Copy, Default)]
pub struct Control<'a> {
    /// Reuse the runs whose folder under `--out` is complete ([`reusable`]).
    pub resume: bool,
    /// Set to stop: no new run starts, the runs in progress end unfinished.
    pub stop: Option<&'a AtomicBool>,
    /// What stopped the sweep (`SIGINT`, ...), for [`SWEEP_STATUS`]; asked once the
    /// workers are done, if `stop` is set.
    pub stopped_by: Option<&'a (dyn Fn() -> String + Sync)>,
}

/// What went wrong.
#[derive(Debug)]
pub enum RunError {
    /// Bad input.
    Input(ScenarioError),
    /// `--out` cannot take the results (found before anything runs).
    Out(String),
    /// Could not write results.
    Io(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Input(e) => write!(f, "{e}"),
            RunError::Out(e) | RunError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// One finished run.
pub struct RunResult {
    /// Variant name.
    pub variant: String,
    /// Its summary.
    pub summary: Summary,
    /// How it ended.
    pub outcome: Outcome,
    /// Why it ran on fewer threads than `threads_per_run` asked for, if so.
    pub notes: Vec<String>,
}

/// What a sweep did ([`run_sweep`]).
pub struct SweepResult {
    /// The runs simulated now, in the scenario's order.
    pub runs: Vec<RunResult>,
    /// Every finished run's summary (simulated now or reused), in the scenario's order.
    pub rows: Vec<Summary>,
    /// Names of the runs reused from `--out` (`resume`).
    pub reused: Vec<String>,
    /// Names of the runs that did not finish (stopped), in the scenario's order.
    pub unfinished: Vec<String>,
    /// What stopped the sweep, when it was stopped.
    pub stopped_by: Option<String>,
    /// Why fewer runs ran at once than threads were asked for (the memory budget).
    pub threads_note: Option<String>,
    /// When each run's shards took turns on fewer threads than `threads_per_run` (the
    /// runs at once share the machine's threads): how many, and why.
    pub per_run_note: Option<String>,
}

/// Workers that fit the memory budget together: each holds one run at a time, so
/// `threads` runs of the largest estimate must fit; never fewer than one (a run alone
/// over the budget was refused when it was built). The note says when it took fewer.
pub fn threads_within_budget(threads: usize, largest_run: u64) -> (usize, Option<String>) {
    let (limit, source) = crate::scenario::budget::limit();
    let fit = (limit / largest_run.max(1)).max(1) as usize;
    if fit >= threads {
        (threads, None)
    } else {
        (
            fit,
            Some(format!(
                "running {fit} runs at once instead of {threads}: the largest needs about {} \
                 and {} are allowed ({source}; --max-memory to change it)",
                crate::scenario::budget::approx_bytes(largest_run),
                crate::scenario::budget::approx_bytes(limit)
            )),
        )
    }
}

/// Threads each run's shards run on when `runs` run at once on a machine that runs
/// `machine` threads at once: `threads_per_run`, or the runs' fair share of the machine
/// when that is fewer (never fewer than one), with a note saying so. The shards stay
/// `threads_per_run` (the results are the same bytes either way); threads beyond the
/// machine's only wait for one another at the barriers.
pub fn threads_for_each_run(
    threads_per_run: usize,
    runs: usize,
    machine: usize,
) -> (usize, Option<String>) {
    let tpr = threads_per_run.max(1);
    let share = (machine / runs.max(1)).max(1);
    if tpr <= share {
        return (tpr, None);
    }
    let runs_part = if runs > 1 {
        format!(" shared by {runs} runs at once")
    } else {
        String::new()
    };
    (
        share,
        Some(format!(
            "--threads-per-run {tpr}: each run's {tpr} shards take turns on {share} \
             thread{} (this machine runs {machine} at once{runs_part}; the results are \
             the same bytes)",
            if share == 1 { "" } else { "s" }
        )),
    )
}

/// The summary of the run in `dir` when the folder holds this run's complete results:
/// a `summary.json` that reads back (it is written last, so the other files are there)
/// and a `scenario.resolved.toml` whose tree is `meta.table` (so a folder left by another
/// scenario, seed or `--set` is not mistaken for this run's).
///
/// Both files are read as fabricsim wrote them: regular files in a folder that is not a
/// link, of bounded size ([`crate::base::input_file`]; a FIFO or a device is never
/// opened), and the summary's outcome one a run can have. Anything else is not reused:
/// the run runs again and its files are written anew.
pub fn reusable(dir: &Path, meta: &RunMeta) -> Option<Summary> {
    use crate::base::input_file::{read_text, MAX_SCENARIO_BYTES};
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let read = |name: &str, limit: u64| -> Option<String> {
        let p = dir.join(name);
        // Written by a rename: never a link.
        if !std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
            return None;
        }
        read_text(&p, limit).ok()
    };
    let summary = output::summary::from_json(&read("summary.json", MAX_REUSED_BYTES)?).ok()?;
    if !Outcome::NAMES.contains(&summary.outcome.as_str()) {
        return None;
    }
    let table: toml::Table = toml::from_str(&read(resolved::FILE, MAX_SCENARIO_BYTES)?).ok()?;
    (table == meta.table && summary.variant == meta.name).then_some(summary)
}

/// Largest `summary.json` read back by `--resume`: 64 MiB (a summary holds a few hundred
/// numbers and its series, some KiB to a few MiB).
pub const MAX_REUSED_BYTES: u64 = 64 << 20;

/// Runs every variant; `progress(i, p)` reports run i's progress.
pub fn run(
    loaded: &LoadedScenario,
    opts: &RunOptions,
    progress: &(dyn Fn(usize, &Progress) + Sync),
) -> Result<Vec<RunResult>, RunError> {
    Ok(run_sweep(loaded, opts, Control::default(), progress)?.runs)
}

/// Alternately the shortest and the longest of the runs left, shortest first (see the
/// module documentation); ties keep the scenario's order.
fn work_order(cost: &[u64]) -> Vec<usize> {
    let mut by_cost: Vec<usize> = (0..cost.len()).collect();
    by_cost.sort_by_key(|&i| cost[i]);
    let (mut lo, mut hi) = (0, by_cost.len());
    let mut order = Vec::with_capacity(by_cost.len());
    while lo < hi {
        if order.len() % 2 == 0 {
            order.push(by_cost[lo]);
            lo += 1;
        } else {
            hi -= 1;
            order.push(by_cost[hi]);
        }
    }
    order
}

/// Runs every run of a scenario under `ctl`; see the module documentation.
pub fn run_sweep(
    loaded: &LoadedScenario,
    opts: &RunOptions,
    ctl: Control,
    progress: &(dyn Fn(usize, &Progress) + Sync),
) -> Result<SweepResult, RunError> {
    let mut plan = plan(loaded, opts.seed).map_err(RunError::Input)?;
    let (cost, built) = validate_keeping(loaded, &plan).map_err(RunError::Input)?;
    // The lone run's Simulation, built by the check, for the worker that takes it.
    let built = Mutex::new(built);
    let n = plan.len();
    let multi = n > 1;
    // Sweep axis labels in the scenario's order (every run has the same axes).
    let axes: Vec<String> = plan
        .first()
        .map(|p| p.meta.coords.iter().map(|(l, _)| l.clone()).collect())
        .unwrap_or_default();
    let dir_of = |m: &RunMeta| -> Option<PathBuf> {
        // `folder` is one sanitised path component (`scenario::folder_name`): the run
        // cannot write outside `out`.
        let out = opts.out.as_ref()?;
        Some(if multi {
            out.join(&m.folder)
        } else {
            out.clone()
        })
    };
    // Runs reused from `--out`, by index.
    let mut reused: Vec<Option<Summary>> = (0..n).map(|_| None).collect();
    if let Some(out) = &opts.out {
        for p in &mut plan {
            resolved::set_seed(&mut p.meta.table, p.meta.seed).map_err(RunError::Input)?;
        }
        let folders: Vec<String> = if multi {
            plan.iter().map(|p| p.meta.folder.clone()).collect()
        } else {
            Vec::new()
        };
        // Also removes what a writer killed mid-file (kill -9, a full disk) left in the
        // folders that are ours.
        output::prepare_out(out, &folders).map_err(RunError::Out)?;
        if ctl.resume {
            for (i, p) in plan.iter().enumerate() {
                let dir = dir_of(&p.meta).expect("--out is set");
                reused[i] = reusable(&dir, &p.meta);
            }
        }
    }
    // A reused run reports itself finished at once, so progress counts it done; it
    // processes no event here.
    for (i, s) in reused.iter().enumerate() {
        if let Some(s) = s {
            progress(
                i,
                &Progress {
                    now: (s.sim_end_ns * 1000.0) as Time,
                    events: 0,
                    flows_done: s.flows_completed,
                    flows_total: s.flows,
                    max_time: loaded.scenario.max_time,
                    finished: true,
                },
            );
        }
    }
    let todo_cost: Vec<u64> = (0..n)
        .filter(|&i| reused[i].is_none())
        .map(|i| cost[i].bytes)
        .collect();
    let todo: Vec<usize> = (0..n).filter(|&i| reused[i].is_none()).collect();
    let order: Vec<usize> = work_order(&todo_cost)
        .into_iter()
        .map(|k| todo[k])
        .collect();
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism()
            .map(|p| p.get())
            .unwrap_or(1)
    } else {
        opts.threads
    }
    .min(order.len())
    .max(1);
    let largest = (0..n)
        .filter(|&i| reused[i].is_none())
        .map(|i| cost[i].memory)
        .max()
        .unwrap_or(0);
    let (threads, threads_note) = threads_within_budget(threads, largest);
    let (per_run, per_run_note) =
        threads_for_each_run(opts.threads_per_run, threads, crate::sim::machine_threads());
    // Acquire: what the stopper wrote before setting the flag (the CLI: which signal) is
    // visible to `stopped_by`.
    let stopped = || ctl.stop.is_some_and(|s| s.load(Ordering::Acquire));
    let results: Vec<Mutex<Option<Result<RunResult, RunError>>>> =
        (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    // The calling thread is one of the workers: a lone run (the common case) then runs
    // on it, its model in the process's main heap, which the CLI's allocator asks to
    // put on huge pages (`fabricsim-cli/src/huge_pages.rs`).
    let work = || loop {
        if stopped() {
            break;
        }
        let k = next.fetch_add(1, Ordering::Relaxed);
        if k >= order.len() {
            break;
        }
        let i = order[k];
        let p = &plan[i];
        let prebuilt = built.lock().expect("built lock").take();
        let res = run_one(
            loaded,
            p,
            prebuilt,
            multi,
            dir_of(&p.meta),
            (opts.threads_per_run, per_run),
            ctl.stop,
            &|x| progress(i, x),
        );
        // `None`: stopped, the run stays unfinished.
        if let Some(res) = res {
            *results[i].lock().expect("result lock") = Some(res);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(work);
        }
        work();
    });
    let mut sweep = SweepResult {
        runs: Vec::new(),
        rows: Vec::new(),
        reused: Vec::new(),
        unfinished: Vec::new(),
        stopped_by: None,
        threads_note,
        per_run_note,
    };
    for (i, (r, old)) in results.into_iter().zip(reused).enumerate() {
        let name = &plan[i].meta.name;
        if let Some(s) = old {
            sweep.reused.push(name.clone());
            sweep.rows.push(s);
            continue;
        }
        match r.into_inner().expect("result lock") {
            Some(r) => {
                let r = r?;
                sweep.rows.push(r.summary.clone());
                sweep.runs.push(r);
            }
            None => {
                assert!(stopped(), "run {name} neither finished nor was stopped");
                sweep.unfinished.push(name.clone());
            }
        }
    }
    if stopped() {
        sweep.stopped_by = Some(ctl.stopped_by.map_or("stop requested".into(), |f| f()));
    }
    if multi {
        if let Some(dir) = &opts.out {
            let replicated = loaded.scenario.seeds > 1;
            let baseline = loaded.scenario.baseline.as_deref();
            let unfinished: std::collections::HashSet<&String> = sweep.unfinished.iter().collect();
            let status = output::SweepStatus {
                runs: n,
                finished: plan
                    .iter()
                    .map(|p| &p.meta.name)
                    .filter(|m| !unfinished.contains(m))
                    .cloned()
                    .collect(),
                reused: sweep.reused.clone(),
                unfinished: sweep.unfinished.clone(),
                interrupted_by: sweep.stopped_by.clone(),
            };
            output::write_sweep(&sweep.rows, &axes, replicated, baseline, dir)
                .and_then(|()| output::write_sweep_status(&status, dir))
                .map_err(|e| RunError::Io(format!("writing to {}: {e}", dir.display())))?;
        }
    }
    Ok(sweep)
}

/// A scenario of one run, run as [`run_sweep`] runs it (checked first, `out` prepared,
/// the same files written into `out`), keeping the finished Simulation for callers
/// that read its tables as data ([`crate::output::run_tables_columns`]). `None` when
/// `stop` cut it short. A scenario of several runs (variants, sweeps, seeds) is an
/// input error: those go through [`run_sweep`], or one at a time through [`run_named`].
pub fn run_single(
    loaded: &LoadedScenario,
    seed: Option<u64>,
    out: Option<&Path>,
    threads_per_run: usize,
    stop: Option<&AtomicBool>,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Option<(Simulation, RunResult)>, RunError> {
    run_named(loaded, None, seed, out, threads_per_run, stop, progress)
}

/// [`run_single`] for one run of a scenario of several: the run [`plan`] names `name`
/// (the variant, then `label=value` per sweep axis), checked, run and written into
/// `out` as [`run_sweep`] writes it into that run's folder. `name: None` takes the
/// scenario's only run. A name the scenario does not have is an input error that names
/// the runs it has.
pub fn run_named(
    loaded: &LoadedScenario,
    name: Option<&str>,
    seed: Option<u64>,
    out: Option<&Path>,
    threads_per_run: usize,
    stop: Option<&AtomicBool>,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Option<(Simulation, RunResult)>, RunError> {
    let mut plan = plan(loaded, seed).map_err(RunError::Input)?;
    let multi = plan.len() > 1;
    let refuse = |message: String| {
        RunError::Input(ScenarioError {
            file: loaded.file.clone(),
            pos: None,
            field: None,
            message,
        })
    };
    let i = match name {
        None if !multi => 0,
        None => {
            return Err(refuse(format!(
                "the scenario has {} runs (variants, sweeps or seeds); run one at a time or \
                 run them all as a sweep",
                plan.len()
            )))
        }
        Some(n) => plan.iter().position(|p| p.meta.name == n).ok_or_else(|| {
            const SHOWN: usize = 12;
            let names: Vec<String> = (plan.iter().take(SHOWN))
                .map(|p| format!("`{}`", p.meta.name))
                .collect();
            let more = plan.len().saturating_sub(SHOWN);
            refuse(format!(
                "no run named `{n}`: the runs are {}{}",
                names.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ))
        })?,
    };
    let mut p = plan.swap_remove(i);
    let (_, built) = validate_keeping(loaded, std::slice::from_ref(&p)).map_err(RunError::Input)?;
    if let Some(out) = out {
        resolved::set_seed(&mut p.meta.table, p.meta.seed).map_err(RunError::Input)?;
        output::prepare_out(out, &[]).map_err(RunError::Out)?;
    }
    // Cut into as many shards as asked for, on at most the machine's threads (as the
    // command line's `--threads-per-run`).
    let n = threads_per_run.max(1);
    run_one_kept(
        loaded,
        &p,
        built,
        multi,
        out.map(Path::to_path_buf),
        (n, n.min(crate::sim::machine_threads())),
        stop,
        progress,
    )
    .transpose()
}

/// Each trace job's iterations alone (`alone = "run"`): a job that is the scenario's
/// only workload is its own reference; otherwise the run's scenario with only that
/// job, on the same GPUs (its placement made explicit), with the same seed, without
/// the timeline and capture, is run to its end.
fn alone_references(
    loaded: &LoadedScenario,
    p: &PlannedRun,
    sim: &mut Simulation,
    stop: Option<&AtomicBool>,
) -> Result<(), RunError> {
    use crate::model::workload::trace::{AloneCfg, PlacementCfg};
    use crate::model::workload::{HostRef, WorkloadCfg};
    let only = p.scenario.workload.len() == 1;
    for j in 0..sim.traces.len() {
        let job = &sim.traces[j];
        if job.alone != AloneCfg::Run {
            continue;
        }
        if only {
            let times = job.iteration_times(|q| sim.phase_times(q).1);
            sim.traces[j].alone_times = Some(times);
            continue;
        }
        let mut sc = p.scenario.clone();
        let mut cfg = match &sc.workload[job.entry as usize] {
            WorkloadCfg::Trace(c) => c.clone(),
            _ => unreachable!("a trace job comes from a trace entry"),
        };
        cfg.name = Some(job.name.clone());
        cfg.placement = PlacementCfg::Explicit(
            job.hosts
                .iter()
                .map(|&h| HostRef::Index(h.into()))
                .collect(),
        );
        cfg.failure = None;
        sc.workload = vec![WorkloadCfg::Trace(cfg)];
        sc.record.timeline = None;
        sc.record.pcap = None;
        let mut alone = Simulation::build(&sc, &loaded.file, &loaded.base_dir)
            .map_err(|e| RunError::Input(p.err(e)))?;
        let Some(_) = alone.run_until_stopped(Time::MAX, stop, &mut |_| {}) else {
            return Ok(());
        };
        let a = &alone.traces[0];
        let times = a.iteration_times(|q| alone.phase_times(q).1);
        sim.traces[j].alone_times = Some(times);
    }
    Ok(())
}

/// Builds (unless `prebuilt` is its Simulation, built by [`validate_keeping`]), runs and
/// writes one run; `None` when `stop` cut it short (nothing written).
#[allow(clippy::too_many_arguments)]
fn run_one(
    loaded: &LoadedScenario,
    p: &PlannedRun,
    prebuilt: Option<Simulation>,
    multi: bool,
    dir: Option<PathBuf>,
    cut: (usize, usize),
    stop: Option<&AtomicBool>,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Option<Result<RunResult, RunError>> {
    run_one_kept(loaded, p, prebuilt, multi, dir, cut, stop, progress).map(|r| r.map(|(_, r)| r))
}

/// [`run_one`], returning the finished Simulation too.
#[allow(clippy::too_many_arguments)]
fn run_one_kept(
    loaded: &LoadedScenario,
    p: &PlannedRun,
    prebuilt: Option<Simulation>,
    multi: bool,
    dir: Option<PathBuf>,
    (shards, threads): (usize, usize),
    stop: Option<&AtomicBool>,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Option<Result<(Simulation, RunResult), RunError>> {
    // [`validate`] built this run already: an error here would be a nondeterministic
    // build, reported rather than hidden.
    let mut sim = match prebuilt.map_or_else(|| p.build(loaded), Ok) {
        Ok(s) => s,
        Err(e) => return Some(Err(RunError::Input(e))),
    };
    let notes = sim.set_shards(shards, threads);
    let meta = &p.meta;
    // The timeline is written as the run goes, straight into its file.
    if let (Some(_), Some(dir)) = (sim.timeline.as_ref(), dir.as_ref()) {
        match output::open_streamed(dir, crate::model::record::timeline::FILE) {
            Ok(f) => {
                if let Some(tl) = sim.timeline.as_deref_mut() {
                    tl.attach(Box::new(std::io::BufWriter::with_capacity(1 << 20, f)));
                }
            }
            Err(e) => {
                return Some(Err(RunError::Io(format!(
                    "writing results to {}: {e}",
                    dir.display()
                ))))
            }
        }
    }
    // The run starts: its first report from the loop comes only 2^20 events in, and an
    // ETA needs to know when the run began.
    progress(&sim.progress());
    let t0 = Instant::now();
    let outcome = sim.run_until_stopped(Time::MAX, stop, &mut |x| progress(x))?;
    // The run ended, whatever its outcome: said here rather than in the event loop,
    // whose code stays as it is.
    progress(&Progress {
        finished: true,
        ..sim.progress()
    });
    let wall = t0.elapsed().as_secs_f64();
    if let Err(e) = sim.finish_timeline() {
        return Some(Err(RunError::Io(format!(
            "writing {}: {e}",
            crate::model::record::timeline::FILE
        ))));
    }
    if let Err(e) = alone_references(loaded, p, &mut sim, stop) {
        return Some(Err(e));
    }
    let mut summary = output::summarize(&sim, &meta.name, &outcome, wall);
    summary.params = meta.coords.iter().cloned().collect();
    summary.variant_name = meta.variant.clone();
    if multi {
        summary.folder = meta.folder.clone();
    }
    let mut res = Ok(());
    if let Some(dir) = dir {
        res = resolved::text(&meta.table, &meta.name, &loaded.file)
            .and_then(|toml| {
                // A `.tmp` left in the folder (ours) by a writer killed mid-file goes
                // first; a folder that became a link since `--out` was checked is refused.
                output::ensure_results_folder(&dir)
                    .and_then(|()| output::remove_stale_tmp(&dir))
                    .and_then(|()| output::write_all(&sim, &summary, &toml, &dir))
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| RunError::Io(format!("writing results to {}: {e}", dir.display())));
    }
    Some(res.map(|_| {
        let r = RunResult {
            variant: meta.name.clone(),
            summary,
            outcome,
            notes,
        };
        (sim, r)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two variants x two sizes of a small leaf-spine with a collective job (so
    /// `jct.csv` is written) and flows.
    fn sweep() -> LoadedScenario {
        let text = r#"
name = "rt"
max_time = "20ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
[[workload]]
kind = "collective"
collective = "ring_allreduce"
hosts = [0, 1, 2, 3]
size = "256KiB"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 3, size = "64KB" }, { src = 1, dst = 2, size = "8KB" }]
[[variants]]
name = "a"
[[variants]]
name = "b"
set = { "cc.algorithm" = "none" }
[[sweep]]
path = "workload[0].size"
label = "size"
values = ["256KiB", "1MiB"]
"#;
        crate::scenario::load_str(text, "<rt>", Path::new("."), &[]).unwrap()
    }

    fn opts(out: &Path) -> RunOptions {
        RunOptions {
            out: Some(out.to_path_buf()),
            seed: None,
            threads: 2,
            threads_per_run: 1,
        }
    }

    #[test]
    fn each_run_gets_its_share_of_the_machine_threads_never_more_than_asked() {
        // (threads per run asked, runs at once, machine threads) -> threads each run.
        for (tpr, runs, machine, want) in [
            (1, 1, 16, 1),
            (8, 1, 16, 8),
            (16, 1, 16, 16),
            (32, 1, 16, 16),
            (8, 2, 16, 8),
            (8, 4, 16, 4),
            (3, 2, 2, 1),
            (2, 1, 2, 2),
            (0, 1, 2, 1),
            (4, 3, 8, 2),
            (4, 16, 8, 1),
        ] {
            let (got, note) = threads_for_each_run(tpr, runs, machine);
            assert_eq!(
                got, want,
                "{tpr} per run, {runs} at once, {machine} threads"
            );
            // A note exactly when a run gets fewer threads than asked for.
            assert_eq!(note.is_some(), want < tpr.max(1), "{note:?}");
            if let Some(n) = note {
                assert!(
                    n.contains(&format!("{tpr} shards take turns on {want} thread")),
                    "{n}"
                );
            }
        }
    }

    #[test]
    fn summaries_read_back_give_the_same_tables_across_runs() {
        let d = tempfile::tempdir().unwrap();
        let l = sweep();
        let res = run_sweep(&l, &opts(d.path()), Control::default(), &|_, _| {}).unwrap();
        assert_eq!(res.rows.len(), 4);
        assert!(res.rows.iter().all(|r| r.jobs > 0));
        let back: Vec<Summary> = res
            .rows
            .iter()
            .map(|r| {
                let text =
                    std::fs::read_to_string(d.path().join(&r.folder).join("summary.json")).unwrap();
                let b = output::summary::from_json(&text).unwrap();
                // What it holds writes the same file again.
                let again = serde_json::to_string_pretty(&b).unwrap() + "\n";
                assert_eq!(again, text, "{}", r.variant);
                b
            })
            .collect();
        let axes = vec!["size".to_string()];
        assert_eq!(
            output::comparison_csv(&back),
            output::comparison_csv(&res.rows)
        );
        let jct = output::jct_csv(&res.rows, &axes, false, None);
        assert!(jct.lines().count() > 1, "{jct}");
        assert_eq!(output::jct_csv(&back, &axes, false, None), jct);
        // A file cut short or of another shape names what is missing.
        let e = output::summary::from_json("{}").unwrap_err();
        assert!(e.starts_with("missing /run/"), "{e}");
        assert!(output::summary::from_json("{\"run\": ").is_err());
    }

    #[test]
    fn a_stopped_sweep_writes_no_run_and_lists_every_run_unfinished() {
        let d = tempfile::tempdir().unwrap();
        let l = sweep();
        let stop = AtomicBool::new(true);
        let by = || "test".to_string();
        let ctl = Control {
            resume: false,
            stop: Some(&stop),
            stopped_by: Some(&by),
        };
        let res = run_sweep(&l, &opts(d.path()), ctl, &|_, _| {}).unwrap();
        assert!(res.runs.is_empty() && res.rows.is_empty());
        assert_eq!(res.unfinished.len(), 4);
        assert_eq!(res.stopped_by.as_deref(), Some("test"));
        let mut names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        // The empty folder was marked as ours (`output::OWN_MARK`), and no run folder
        // was made.
        assert_eq!(
            names,
            [
                output::OWN_MARK,
                "comparison.csv",
                "report.html",
                "sweep.json"
            ]
        );
        // Then resume runs them all, and a second resume reuses them all.
        let ctl = Control {
            resume: true,
            ..Control::default()
        };
        let res = run_sweep(&l, &opts(d.path()), ctl, &|_, _| {}).unwrap();
        assert_eq!((res.runs.len(), res.reused.len()), (4, 0));
        let first = output::comparison_csv(&res.rows);
        let res = run_sweep(&l, &opts(d.path()), ctl, &|_, _| {}).unwrap();
        assert_eq!((res.runs.len(), res.reused.len()), (0, 4));
        assert_eq!(output::comparison_csv(&res.rows), first);
    }

    #[test]
    fn input_errors_are_found_before_anything_is_written() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        // The second size makes the collective's size invalid only in one run.
        let text = r#"
name = "bad"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 3, size = "64KB" }]
[[sweep]]
path = "workload[0].flows[0].dst"
values = [3, 9]
"#;
        let l = crate::scenario::load_str(text, "<bad>", Path::new("."), &[]).unwrap();
        let e = match run_sweep(&l, &opts(&out), Control::default(), &|_, _| {}) {
            Err(RunError::Input(e)) => e.to_string(),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a flow to host 9 of 4 ran"),
        };
        assert!(e.contains("in run `bad-"), "{e}");
        assert!(
            !out.exists(),
            "--out was touched before the runs were checked"
        );
    }

    /// Every run reports as it starts (no event yet) and once finished (its events,
    /// every flow); a run reused by `--resume` reports only that it is finished, with no
    /// event processed here. Progress bars count runs done and time ETAs from these.
    #[test]
    fn each_run_reports_its_start_and_its_end() {
        let d = tempfile::tempdir().unwrap();
        let l = sweep();
        let seen: Mutex<Vec<(usize, Progress)>> = Mutex::new(Vec::new());
        let record = |i: usize, p: &Progress| seen.lock().unwrap().push((i, *p));
        let res = run_sweep(&l, &opts(d.path()), Control::default(), &record).unwrap();
        let seen = std::mem::take(&mut *seen.lock().unwrap());
        for (i, row) in res.rows.iter().enumerate() {
            let mine: Vec<&Progress> = seen.iter().filter(|x| x.0 == i).map(|x| &x.1).collect();
            let (first, last) = (mine[0], mine[mine.len() - 1]);
            assert_eq!((first.events, first.finished), (0, false), "{i}");
            assert!(last.finished && last.events == row.events, "{i}");
            assert_eq!(last.flows_done, row.flows_completed, "{i}");
            assert_eq!(mine.iter().filter(|p| p.finished).count(), 1, "{i}");
        }
        let again: Mutex<Vec<(usize, Progress)>> = Mutex::new(Vec::new());
        let record = |i: usize, p: &Progress| again.lock().unwrap().push((i, *p));
        let ctl = Control {
            resume: true,
            ..Control::default()
        };
        let res = run_sweep(&l, &opts(d.path()), ctl, &record).unwrap();
        assert_eq!(res.reused.len(), 4);
        let again = again.into_inner().unwrap();
        assert_eq!(again.len(), 4);
        assert!(again.iter().all(|(_, p)| p.finished && p.events == 0));
    }

    #[test]
    fn work_order_alternates_shortest_and_longest_and_takes_every_run_once() {
        let cost = [50, 10, 40, 30, 20, 60, 10];
        let order = work_order(&cost);
        let c: Vec<u64> = order.iter().map(|&i| cost[i]).collect();
        assert_eq!(c, [10, 60, 10, 50, 20, 40, 30]);
        // Ties keep the scenario's order.
        assert_eq!(order[0], 1);
        assert_eq!(order[2], 6);
        let mut seen = order.clone();
        seen.sort();
        assert_eq!(seen, (0..cost.len()).collect::<Vec<_>>());
        assert!(work_order(&[]).is_empty());
        assert_eq!(work_order(&[7]), [0]);
    }
}
