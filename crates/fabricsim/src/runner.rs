//! Running a scenario: every variant is built first (so input errors appear before any
//! simulated time passes), then `--out` is checked (created, written to, no run folder
//! blocked), then the runs share the machine's cores, one run per thread. Each run writes
//! its results as soon as it ends, so a later failure or interruption never loses what
//! earlier runs produced.

use crate::output::{self as results, resolved, Summary};
use crate::scenario::{LoadedScenario, ScenarioError};
use crate::sim::{Outcome, Progress, Simulation};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Options of a run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Results folder; none writes nothing.
    pub out: Option<PathBuf>,
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Worker threads (0: one per core).
    pub threads: usize,
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
}

/// Builds every variant of a loaded scenario.
pub fn build_all(
    loaded: &LoadedScenario,
    seed: Option<u64>,
) -> Result<Vec<(String, Simulation)>, ScenarioError> {
    Ok(build_runs(loaded, seed)?
        .into_iter()
        .map(|(r, sim)| (r.name, sim))
        .collect())
}

/// Builds every run (variants x sweep points), keeping each run's description.
pub fn build_runs(
    loaded: &LoadedScenario,
    seed: Option<u64>,
) -> Result<Vec<(RunMeta, Simulation)>, ScenarioError> {
    let mut out = Vec::new();
    let runs = loaded.expand_runs()?;
    let named = runs.len() > 1 || !loaded.scenario.variants.is_empty();
    for r in runs {
        let (name, mut sc) = (r.name.clone(), r.scenario);
        if let Some(s) = seed {
            sc.seed = s;
        }
        // Replicates derive from the seed in force (`--seed` included).
        sc.seed = crate::seed::replicate_seed(sc.seed, r.replicate);
        let in_run = |mut e: ScenarioError| {
            if named {
                e.message = format!("in run `{name}`: {}", e.message);
            }
            e
        };
        let sim = Simulation::build(&sc, &loaded.file, &loaded.base_dir).map_err(in_run)?;
        let table = resolved::with_absolute_files(&r.table, &sc, &loaded.base_dir, &loaded.file)
            .map_err(in_run)?;
        out.push((
            RunMeta {
                name,
                folder: r.folder,
                variant: r.variant,
                coords: r.coords,
                seed: sc.seed,
                table,
            },
            sim,
        ));
    }
    Ok(out)
}

/// Name, folder, sweep coordinates and effective scenario of a run.
#[derive(Clone, Debug)]
pub struct RunMeta {
    /// Run name.
    pub name: String,
    /// Results folder under `--out` when the scenario has several runs.
    pub folder: String,
    /// Variant.
    pub variant: String,
    /// Sweep coordinates.
    pub coords: Vec<(String, String)>,
    /// Seed the run uses.
    pub seed: u64,
    /// The run's TOML tree with absolute file paths (`scenario.resolved.toml` once the
    /// seed is set).
    pub table: toml::Table,
}

/// Runs every variant; `progress(i, p)` reports run i's progress.
pub fn run(
    loaded: &LoadedScenario,
    opts: &RunOptions,
    progress: &(dyn Fn(usize, &Progress) + Sync),
) -> Result<Vec<RunResult>, RunError> {
    let mut sims = build_runs(loaded, opts.seed).map_err(RunError::Input)?;
    let multi = sims.len() > 1;
    let n = sims.len();
    // Sweep axis labels in the scenario's order (every run has the same axes).
    let axes: Vec<String> = sims
        .first()
        .map(|(m, _)| m.coords.iter().map(|(l, _)| l.clone()).collect())
        .unwrap_or_default();
    if let Some(out) = &opts.out {
        for (m, _) in &mut sims {
            resolved::set_seed(&mut m.table, m.seed).map_err(RunError::Input)?;
        }
        let folders: Vec<String> = if multi {
            sims.iter().map(|(m, _)| m.folder.clone()).collect()
        } else {
            Vec::new()
        };
        results::prepare_out(out, &folders).map_err(RunError::Out)?;
    }
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism()
            .map(|p| p.get())
            .unwrap_or(1)
    } else {
        opts.threads
    }
    .min(n)
    .max(1);
    // Longest runs first (bytes to move as the estimate), so that a sweep's big runs do
    // not start last and leave the other cores idle; results keep the scenario's order.
    let mut order: Vec<usize> = (0..n).collect();
    let cost: Vec<u64> = sims
        .iter()
        .map(|(_, s)| s.nics.flows.iter().map(|f| f.spec.size).sum())
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost[i]));
    let work: Vec<Mutex<Option<(RunMeta, Simulation)>>> =
        sims.into_iter().map(|s| Mutex::new(Some(s))).collect();
    let results: Vec<Mutex<Option<Result<RunResult, RunError>>>> =
        (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= n {
                    break;
                }
                let i = order[k];
                let (meta, mut sim) = work[i]
                    .lock()
                    .expect("work lock")
                    .take()
                    .expect("each run taken once");
                let t0 = Instant::now();
                let outcome = sim.run(&mut |p| progress(i, p));
                let wall = t0.elapsed().as_secs_f64();
                let mut summary = results::summarize(&sim, &meta.name, &outcome, wall);
                summary.params = meta.coords.iter().cloned().collect();
                summary.variant_name = meta.variant.clone();
                if multi {
                    summary.folder = meta.folder.clone();
                }
                let mut res = Ok(());
                if let Some(out) = &opts.out {
                    // `folder` is one sanitised path component (`scenario::folder_name`):
                    // the run cannot write outside `out`.
                    let dir = if multi {
                        out.join(&meta.folder)
                    } else {
                        out.clone()
                    };
                    res = resolved::text(&meta.table, &meta.name, &loaded.file)
                        .and_then(|toml| {
                            results::write_all(&sim, &summary, &toml, &dir)
                                .map_err(|e| e.to_string())
                        })
                        .map_err(|e| {
                            RunError::Io(format!("writing results to {}: {e}", dir.display()))
                        });
                }
                let name = meta.name;
                *results[i].lock().expect("result lock") = Some(res.map(|_| RunResult {
                    variant: name,
                    summary,
                    outcome,
                }));
            });
        }
    });
    let mut out = Vec::new();
    for r in results {
        out.push(
            r.into_inner()
                .expect("result lock")
                .expect("every run finished")?,
        );
    }
    if multi {
        if let Some(dir) = &opts.out {
            let rows: Vec<Summary> = out.iter().map(|r| r.summary.clone()).collect();
            let replicated = loaded.scenario.seeds > 1;
            let baseline = loaded.scenario.baseline.as_deref();
            results::write_sweep(&rows, &axes, replicated, baseline, dir)
                .map_err(|e| RunError::Io(format!("writing to {}: {e}", dir.display())))?;
        }
    }
    Ok(out)
}
