//! The runs of a scenario before they run: each one planned (its name, folder, seed and
//! effective scenario), built to check it, and what the check learnt of its cost.
//! [`super::runner`] runs them.

use crate::output::resolved;
use crate::scenario::{LoadedScenario, Scenario, ScenarioError};
use crate::sim::Simulation;

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

/// Builds every run (variants x sweep points), keeping each run's description. Holds
/// every Simulation at once: [`super::runner::run`] builds them one at a time instead.
pub fn build_runs(
    loaded: &LoadedScenario,
    seed: Option<u64>,
) -> Result<Vec<(RunMeta, Simulation)>, ScenarioError> {
    plan(loaded, seed)?
        .into_iter()
        .map(|p| Ok((p.build(loaded)?, p.meta)))
        .map(|r: Result<_, ScenarioError>| r.map(|(s, m)| (m, s)))
        .collect()
}

/// One run, ready to build.
pub struct PlannedRun {
    /// Its description.
    pub meta: RunMeta,
    /// Its scenario, with the run's seed.
    pub scenario: Scenario,
    /// Prefix of its error messages (`in run ...: `; empty for a scenario of one run).
    context: String,
}

impl PlannedRun {
    /// Builds the run's Simulation; an error names the run.
    pub fn build(&self, loaded: &LoadedScenario) -> Result<Simulation, ScenarioError> {
        Simulation::build(&self.scenario, &loaded.file, &loaded.base_dir).map_err(|e| self.err(e))
    }

    /// `e` with the run's name in front of its message.
    pub(crate) fn err(&self, mut e: ScenarioError) -> ScenarioError {
        e.message = format!("{}{}", self.context, e.message);
        e
    }
}

/// Every run of a loaded scenario (variants x sweep points x replicates), not built.
pub fn plan(loaded: &LoadedScenario, seed: Option<u64>) -> Result<Vec<PlannedRun>, ScenarioError> {
    let runs = loaded.expand_runs()?;
    let named = runs.len() > 1 || !loaded.scenario.variants.is_empty();
    let mut out = Vec::with_capacity(runs.len());
    for r in runs {
        let (name, mut sc) = (r.name.clone(), r.scenario);
        if let Some(s) = seed {
            sc.seed = s;
        }
        // Replicates derive from the seed in force (`--seed` included).
        sc.seed = crate::base::seed::replicate_seed(sc.seed, r.replicate);
        let context = if named {
            format!("in run `{name}`: ")
        } else {
            String::new()
        };
        let mut p = PlannedRun {
            meta: RunMeta {
                name,
                folder: r.folder,
                variant: r.variant,
                coords: r.coords,
                seed: sc.seed,
                table: toml::Table::new(),
            },
            scenario: sc,
            context,
        };
        p.meta.table =
            resolved::with_absolute_files(&r.table, &p.scenario, &loaded.base_dir, &loaded.file)
                .map_err(|e| p.err(e))?;
        out.push(p);
    }
    Ok(out)
}

/// What validation learnt of each run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunCost {
    /// Bytes the run's flows move: the estimate of its length, which orders the work.
    pub bytes: u64,
    /// Memory the run was estimated to hold ([`crate::scenario::budget`]).
    pub memory: u64,
}

/// Checks every run before any starts: builds each and drops it at once (see
/// [`super::runner`]); `Simulation::build` refuses a run over the memory budget
/// ([`crate::scenario::budget`]) before it allocates it.
pub fn validate(
    loaded: &LoadedScenario,
    plan: &[PlannedRun],
) -> Result<Vec<RunCost>, ScenarioError> {
    validate_keeping(loaded, plan).map(|(cost, _)| cost)
}

/// [`validate`], keeping the Simulation of a plan of one run (built, not started) for
/// the run itself: built once, not a second time. A plan of several drops each one as
/// it is checked, so that the check holds one Simulation at a time.
pub(super) fn validate_keeping(
    loaded: &LoadedScenario,
    plan: &[PlannedRun],
) -> Result<(Vec<RunCost>, Option<Simulation>), ScenarioError> {
    let mut kept = None;
    let cost = plan
        .iter()
        .map(|p| {
            let sim = p.build(loaded)?;
            let cost = RunCost {
                bytes: sim.nics.flows.iter().map(|f| f.spec.size).sum(),
                memory: sim.memory_estimate,
            };
            if plan.len() == 1 {
                kept = Some(sim);
            }
            Ok(cost)
        })
        .collect::<Result<_, ScenarioError>>()?;
    Ok((cost, kept))
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
