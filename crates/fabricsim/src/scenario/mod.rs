//! Scenario files: loading, overrides, variants and errors.
//!
//! Loading happens in three steps, each with its own kind of error:
//! 1. TOML syntax (reported with file:line:col),
//! 2. overrides (`--set path=value` and a variant's `set` table) patched into the TOML tree,
//! 3. the schema ([`config`]), deserialized with the path of the failing field, after the
//!    fabric profile the scenario names ([`profile`]) filled in the fields it left unset.
//!
//! Semantic checks (a disconnected topology, a flow to a host that does not exist) happen
//! when the scenario is built into a simulation ([`crate::sim::Simulation::build`]) and are
//! reported the same way: file, field path, what is allowed.

pub mod budget;
pub mod config;
pub mod profile;
mod runs;
use crate::base::suggest;
use runs::check_name;

pub use config::Scenario;
pub use runs::{folder_name, RunSpec, MAX_FOLDER_BYTES, MAX_RUNS, MAX_SEEDS, REPLICATE_AXIS};

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with user input: which file, which field, what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// The file (or `<string>`).
    pub file: String,
    /// Line and column (1-based) when known.
    pub pos: Option<(usize, usize)>,
    /// Dotted path of the field, when known.
    pub field: Option<String>,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((l, c)) = self.pos {
            write!(f, ":{l}:{c}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// An error about a field.
    pub fn field(file: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.to_string(),
            pos: None,
            field: Some(field.into()),
            message: message.into(),
        }
    }

    /// A model's parameter error (field path relative to the scenario root) in `file`.
    pub fn param(file: &str, e: crate::base::param::ParamError) -> Self {
        ScenarioError {
            file: file.to_string(),
            pos: None,
            field: (!e.field.is_empty()).then_some(e.field),
            message: e.message,
        }
    }
}

/// A scenario ready to build, with where it came from.
#[derive(Clone, Debug)]
pub struct LoadedScenario {
    /// The parsed scenario (overrides applied).
    pub scenario: Scenario,
    /// The file name used in messages.
    pub file: String,
    /// Directory that relative paths in the scenario are resolved against.
    pub base_dir: PathBuf,
    /// The patched TOML tree (kept so variants can be derived from it).
    pub table: toml::Table,
}

fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|s| s.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

/// Parses TOML text into a table, reporting syntax errors with line and column.
pub fn parse_toml(src: &str, file: &str) -> Result<toml::Table, ScenarioError> {
    src.parse::<toml::Table>().map_err(|e| {
        let pos = e.span().map(|s| line_col(src, s.start));
        ScenarioError {
            file: file.to_string(),
            pos,
            field: None,
            message: format!("TOML syntax error: {}", e.message().trim()),
        }
    })
}

/// Parses the value half of `--set path=value`: TOML syntax if it parses (numbers, booleans,
/// arrays, quoted strings), a bare string otherwise.
pub fn parse_override_value(v: &str) -> toml::Value {
    let wrapped = format!("v = {v}");
    match wrapped.parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(v.into())),
        Err(_) => toml::Value::String(v.to_string()),
    }
}

/// Sets `path` (dotted, with `[i]` for array elements, e.g. `workload[0].size`) in `table`.
pub fn apply_override(
    table: &mut toml::Table,
    path: &str,
    value: toml::Value,
    file: &str,
) -> Result<(), ScenarioError> {
    let err = |m: String| ScenarioError::field(file, path, m);
    let mut parts: Vec<(String, Option<usize>)> = Vec::new();
    for seg in path.split('.') {
        if seg.is_empty() {
            return Err(err("empty segment in field path".into()));
        }
        if let Some(open) = seg.find('[') {
            let name = &seg[..open];
            let idx = seg[open + 1..]
                .strip_suffix(']')
                .and_then(|s| s.parse::<usize>().ok())
                .ok_or_else(|| err(format!("bad index in `{seg}`: expected name[number]")))?;
            parts.push((name.to_string(), Some(idx)));
        } else {
            parts.push((seg.to_string(), None));
        }
    }
    let mut cur: &mut toml::Table = table;
    for (i, (name, idx)) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        match idx {
            None if last => {
                cur.insert(name.clone(), value);
                return Ok(());
            }
            None => {
                let entry = cur
                    .entry(name.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                cur = entry
                    .as_table_mut()
                    .ok_or_else(|| err(format!("`{name}` is not a table")))?;
            }
            Some(k) => {
                if !cur.get(name).is_some_and(toml::Value::is_array) {
                    // A misspelt list (`workloads[0]`): the closest list the scenario has.
                    let lists = cur.iter().filter(|(_, v)| v.is_array());
                    let hint = suggest::did_you_mean(name, lists.map(|(k, _)| k.as_str()));
                    return Err(err(format!(
                        "`{name}` is not an array in this scenario{hint}"
                    )));
                }
                let arr = cur
                    .get_mut(name)
                    .and_then(|v| v.as_array_mut())
                    .expect("checked above");
                let n = arr.len();
                let elem = arr.get_mut(*k).ok_or_else(|| {
                    err(format!("index {k} out of range: `{name}` has {n} elements"))
                })?;
                if last {
                    *elem = value;
                    return Ok(());
                }
                cur = elem
                    .as_table_mut()
                    .ok_or_else(|| err(format!("`{name}[{k}]` is not a table")))?;
            }
        }
    }
    Ok(())
}

/// Deserializes a (patched) table into the schema, naming the failing field, and checks
/// the ranges of single fields ([`check_ranges`]).
pub fn from_table(table: &toml::Table, file: &str) -> Result<Scenario, ScenarioError> {
    let mut table = table.clone();
    profile::apply(&mut table, file)?;
    let sc = deserialize_table(&table, file)?;
    check_ranges(&sc, file)?;
    Ok(sc)
}

fn deserialize_table(table: &toml::Table, file: &str) -> Result<Scenario, ScenarioError> {
    let value = toml::Value::Table(table.clone());
    serde_path_to_error::deserialize::<_, Scenario>(value).map_err(|e| {
        let mut path = e.path().to_string();
        if path == "." {
            path.clear();
        }
        let inner = e.into_inner();
        let mut message = inner.message().trim().to_string();
        // A table tagged by `kind` reports the field inside it as "field `x`: ..."
        // (see `config::TaggedByKind`): fold that into the path.
        while let Some((sub, rest)) = message
            .strip_prefix("field `")
            .and_then(|m| m.split_once("`: "))
        {
            if !(path.is_empty() || sub.starts_with('[')) {
                path.push('.');
            }
            path.push_str(sub);
            message = rest.to_string();
        }
        // toml's own errors on a Value sometimes repeat "for key ..."; keep them short.
        if let Some(stripped) = message.strip_prefix("invalid type: ") {
            message = format!("wrong type: {stripped}");
        }
        // A misspelt field or name: the closest one serde's message lists.
        let message = suggest::annotate(&message);
        ScenarioError {
            file: file.to_string(),
            pos: None,
            field: if path.is_empty() { None } else { Some(path) },
            message,
        }
    })
}

/// Names of the files a scenario of several runs writes beside its run folders (the
/// output layer's tables across runs, its report and its status): no run folder may take
/// one. The output layer checks this list against its table registry
/// (`output::sweep_file_names`, its test `sweep_files_are_reserved`).
pub const SWEEP_FILE_NAMES: &[&str] = &["comparison.csv", "jct.csv", "report.html", "sweep.json"];

/// Largest buffer-like size (switch buffer, PFC headroom, reserve and thresholds): 64 GiB,
/// far above any switch, and small enough that per-switch totals cannot overflow.
pub const MAX_BUFFER_BYTES: u64 = 64 << 30;
/// Largest packet header or control frame: 64 KiB (like the MTU).
pub const MAX_FRAME_BYTES: u64 = 64 << 10;

/// Range checks of single fields that need no topology or workload (those are checked by
/// [`crate::sim::Simulation::build`]): values beyond these are typos or units mixed up, and
/// would overflow the model's arithmetic.
pub fn check_ranges(sc: &Scenario, file: &str) -> Result<(), ScenarioError> {
    // The name starts every run's name and results folder.
    if let Some(n) = &sc.name {
        check_name(file, "name".into(), "the scenario name", n)?;
    }
    let t = &sc.transport;
    for (field, v) in [
        ("transport.header", t.header),
        ("transport.ack_size", t.ack_size),
    ] {
        if v > MAX_FRAME_BYTES {
            return Err(ScenarioError::field(
                file,
                field,
                format!("{v} bytes: at most 64 KiB is allowed"),
            ));
        }
    }
    let f = &sc.fabric;
    for (field, v) in [
        ("fabric.buffer", Some(f.buffer)),
        ("fabric.pfc.headroom", f.pfc.headroom),
        ("fabric.pfc.reserve", Some(f.pfc.reserve)),
        ("fabric.pfc.xoff", Some(f.pfc.xoff)),
        ("fabric.pfc.xon_delta", Some(f.pfc.xon_delta)),
        ("fabric.ecn.kmin", f.ecn.kmin),
        ("fabric.ecn.kmax", f.ecn.kmax),
    ] {
        if let Some(v) = v.filter(|&v| v > MAX_BUFFER_BYTES) {
            return Err(ScenarioError::field(
                file,
                field,
                format!("{v} bytes: at most 64 GiB is allowed"),
            ));
        }
    }
    if f.switch_latency > crate::base::units::SEC {
        return Err(ScenarioError::field(
            file,
            "fabric.switch_latency",
            format!(
                "{}: at most 1 s is allowed",
                crate::base::units::fmt_time(f.switch_latency)
            ),
        ));
    }
    Ok(())
}

/// Loads a scenario from text, applying `overrides` (`path=value` strings).
pub fn load_str(
    src: &str,
    file: &str,
    base_dir: &Path,
    overrides: &[String],
) -> Result<LoadedScenario, ScenarioError> {
    let mut table = parse_toml(src, file)?;
    for o in overrides {
        let (path, value) = o.split_once('=').ok_or_else(|| ScenarioError {
            file: "--set".into(),
            pos: None,
            field: Some(o.clone()),
            message: "expected path=value, e.g. --set cc.algorithm=none".into(),
        })?;
        apply_override(
            &mut table,
            path.trim(),
            parse_override_value(value.trim()),
            file,
        )?;
    }
    let scenario = from_table(&table, file)?;
    Ok(LoadedScenario {
        scenario,
        file: file.to_string(),
        base_dir: base_dir.to_path_buf(),
        table,
    })
}

/// Loads a scenario file.
pub fn load_file(path: &Path, overrides: &[String]) -> Result<LoadedScenario, ScenarioError> {
    let file = path.display().to_string();
    let src = crate::base::input_file::read_text(path, crate::base::input_file::MAX_SCENARIO_BYTES)
        .map_err(|e| ScenarioError {
            file: file.clone(),
            pos: e.at,
            field: None,
            message: e.message,
        })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_str(&src, &file, &base, overrides)
}

#[cfg(test)]
mod tests;
