//! `scenario.resolved.toml`: the effective scenario of one run, so that a run folder says
//! exactly what ran and can be run again on its own.
//!
//! It is the TOML tree the run was deserialized from: the scenario file after `--set`,
//! the variant's `set` and the sweep point, without `[[variants]]` and `[[sweep]]`, with
//! `seed` set to the seed the run used (`--seed` included). Files the scenario reads
//! (`topology.file` of an ns-3 topology, `workload[i].file` of a CSV or ns-3 flow file,
//! `workload[i].cdf` when it is a file rather than a built-in CDF) are written as absolute
//! paths, because the resolved file lives in the run folder while the originals were
//! relative to the scenario file's folder. `fabricsim check` accepts it, and
//! `fabricsim run` on it gives the same `flows.csv` (as long as those files are still
//! there).

use crate::scenario::config::TopologyCfg;
use crate::scenario::{apply_override, Scenario, ScenarioError};
use std::path::Path;

/// The file's name in a run folder.
pub const FILE: &str = "scenario.resolved.toml";

/// The fields of `sc` that name a file, as `--set` paths, with their values.
fn file_fields(sc: &Scenario) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let TopologyCfg::Ns3File(t) = &sc.topology {
        out.push(("topology.file".to_string(), t.file.clone()));
    }
    for (i, w) in sc.workload.iter().enumerate() {
        for (field, path) in w.model().files() {
            out.push((format!("workload[{i}].{field}"), path));
        }
    }
    out
}

/// `table` (a run's patched tree, as [`crate::scenario::RunSpec::table`]) with every
/// file it names made absolute. `sc` is the scenario deserialized from `table`;
/// `base_dir` resolved its relative paths; `file` names the scenario in errors.
pub fn with_absolute_files(
    table: &toml::Table,
    sc: &Scenario,
    base_dir: &Path,
    file: &str,
) -> Result<toml::Table, ScenarioError> {
    let mut t = table.clone();
    for (path, value) in file_fields(sc) {
        let joined = base_dir.join(&value);
        let abs = std::path::absolute(&joined).unwrap_or(joined);
        apply_override(
            &mut t,
            &path,
            toml::Value::String(abs.to_string_lossy().into_owned()),
            file,
        )?;
    }
    Ok(t)
}

/// Sets `seed` in a run's tree to the seed the run uses.
pub fn set_seed(table: &mut toml::Table, seed: u64) -> Result<(), ScenarioError> {
    // TOML integers are i64: a larger seed (possible only through `--seed`) could not be
    // written back, and the file would rerun with another seed.
    let v = i64::try_from(seed).map_err(|_| ScenarioError {
        file: "--seed".into(),
        pos: None,
        field: None,
        message: format!(
            "{seed}: at most {} when results are written (scenario.resolved.toml records \
             the seed as a TOML integer)",
            i64::MAX
        ),
    })?;
    table.insert("seed".into(), toml::Value::Integer(v));
    Ok(())
}

/// The file's text: a comment saying where it comes from, then the tree.
pub fn text(table: &toml::Table, run: &str, scenario_file: &str) -> Result<String, String> {
    let body = toml::to_string(table).map_err(|e| format!("writing {FILE}: {e}"))?;
    // Names are written with `{:?}` (quoted, escaped): a newline in a scenario name must
    // not end the comment and inject TOML.
    Ok(format!(
        "# The effective scenario of run {run:?} of {scenario_file:?}: --set, the variant \
         and the sweep point\n\
         # applied, the seed fixed, files named by absolute paths. Written by fabricsim {} \
         (commit {}).\n\
         # `fabricsim run` on this file reruns the run (same flows.csv).\n\n{body}",
        super::summary::VERSION,
        super::summary::GIT_COMMIT,
    ))
}
