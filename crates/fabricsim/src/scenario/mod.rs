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
use crate::base::suggest;

pub use config::Scenario;

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
        .map_err(|message| ScenarioError {
            file: file.clone(),
            pos: None,
            field: None,
            message,
        })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_str(&src, &file, &base, overrides)
}

/// The coordinate `seeds` > 1 adds to every run: the replicate's number, 1..=seeds.
pub const REPLICATE_AXIS: &str = "replicate";

/// Most runs per scenario (variants x sweep points x seeds): each is described and
/// validated up front (about 1 ms and 30 KB a run), and a sweep is meant to finish, so
/// ten thousand (the largest shipped sweep has 600 runs); split a larger study into
/// scenarios.
pub const MAX_RUNS: usize = 10_000;

/// Most runs per sweep point (`seeds`).
pub const MAX_SEEDS: u32 = 1000;

/// One run a scenario stands for.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Run name (variant, then `label=value` per sweep axis), as written in tables and
    /// messages.
    pub name: String,
    /// Results folder under `--out`: the name made safe ([`folder_name`]).
    pub folder: String,
    /// Variant name.
    pub variant: String,
    /// Sweep coordinates (label, value) in axis order, then ([`REPLICATE_AXIS`], 1..=n)
    /// when the scenario has `seeds` > 1.
    pub coords: Vec<(String, String)>,
    /// Replicate index, 0-based (0 when the scenario has one seed per point): the run's
    /// seed is [`crate::base::seed::replicate_seed`] of the scenario's seed and this.
    pub replicate: u32,
    /// The scenario with overrides applied.
    pub scenario: Scenario,
    /// The TOML tree `scenario` was deserialized from: the file after `--set`, the
    /// variant's `set` and the sweep point, without `variants`, `sweep`, `seeds` and
    /// `baseline` (written to the run folder as `scenario.resolved.toml`, with the run's
    /// own seed).
    pub table: toml::Table,
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Longest run-folder name, in bytes (well under the 255 of common file systems, with
/// room for the `.<file>.tmp` names written inside).
pub const MAX_FOLDER_BYTES: usize = 120;

/// The results folder of a run named `name`: one path component that cannot leave
/// `--out`. Letters, digits, `-`, `_`, `.` and `=` are kept (so the shipped scenarios'
/// names, such as `gse-collective=alltoall-speedup=1.5-uplink=100Gbps-size=128MiB`, are
/// their folders), anything else (path separators, control characters, spaces,
/// non-ASCII) becomes `_`; a leading `.` or `-` becomes `_` (no `.` or `..`, no hidden
/// folder, nothing a command takes for an option), as does the first `.` of every `..`.
/// A name longer than [`MAX_FOLDER_BYTES`] is cut and ends in a hash of the whole name,
/// so that long names that differ only at the end still get different folders.
pub fn folder_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.=".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with(['.', '-']) {
        s.replace_range(..1, "_");
    }
    while s.contains("..") {
        s = s.replace("..", "_.");
    }
    if s.is_empty() {
        s.push('_');
    }
    if s.len() > MAX_FOLDER_BYTES {
        // FNV-1a: stable across builds and platforms (unlike std's hasher).
        let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        });
        s.truncate(MAX_FOLDER_BYTES - 17);
        s.push_str(&format!("-{h:016x}"));
    }
    s
}

/// A name that ends up in tables, messages and the terminal: not empty, no control
/// characters (a line break would split a message line; escape sequences would act on
/// the terminal).
fn check_name(file: &str, field: String, what: &str, name: &str) -> Result<(), ScenarioError> {
    if name.is_empty() {
        return Err(ScenarioError::field(
            file,
            field,
            format!("{what} is empty: give it a name"),
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(ScenarioError::field(
            file,
            field,
            format!(
                "{what} {name:?} contains the control character {c:?}: any other character \
                 is allowed"
            ),
        ));
    }
    Ok(())
}

impl LoadedScenario {
    /// The runs this scenario stands for: itself, or one per variant (name, scenario).
    pub fn expand_variants(&self) -> Result<Vec<(String, Scenario)>, ScenarioError> {
        Ok(self
            .expand_runs()?
            .into_iter()
            .map(|r| (r.name, r.scenario))
            .collect())
    }

    /// Every run: each variant (or the scenario itself) times every combination of the
    /// sweep axes' values. Two runs never share a results folder: duplicate variant
    /// names, duplicate values on a sweep axis, two axes with one label, and names that
    /// make the same folder are errors, found here, before anything runs.
    pub fn expand_runs(&self) -> Result<Vec<RunSpec>, ScenarioError> {
        let (bases, base_table) = self.variant_bases()?;
        self.check_baseline()?;
        let seeds = self.scenario.seeds;
        if !(1..=MAX_SEEDS).contains(&seeds) {
            return Err(ScenarioError::field(
                &self.file,
                "seeds",
                format!("{seeds}: runs per sweep point must be 1 to {MAX_SEEDS}"),
            ));
        }
        let axes = &self.scenario.sweep;
        let mut labels: Vec<String> = Vec::new();
        // Per axis, the text of each value in run names and tables.
        let mut value_names: Vec<Vec<String>> = Vec::new();
        for (i, a) in axes.iter().enumerate() {
            let (label, texts) = self.sweep_axis(i, a, &labels)?;
            labels.push(label);
            value_names.push(texts);
        }
        // Counted without overflow: three axes of a million values must be refused, not
        // wrap around to a small number.
        let total = axes
            .iter()
            .fold(1usize, |p, a| p.saturating_mul(a.values.len()));
        let runs = total
            .saturating_mul(bases.len())
            .saturating_mul(seeds as usize);
        self.check_run_count(runs, bases.len(), &base_table)?;
        let mut out = Vec::with_capacity(runs);
        let mut folders = Folders {
            taken: std::collections::HashMap::new(),
            // A scenario of one run writes into `--out` itself: no run folder to check.
            multi: runs > 1,
        };
        for (vname, vidx, t) in &bases {
            for combo in 0..total * seeds as usize {
                // Replicates of one point are adjacent, the last (innermost) coordinate.
                let (combo, replicate) = (combo / seeds as usize, (combo % seeds as usize) as u32);
                let mut idx = vec![0usize; axes.len()];
                let mut rem = combo;
                for k in (0..axes.len()).rev() {
                    idx[k] = rem % axes[k].values.len();
                    rem /= axes[k].values.len();
                }
                let point = Point {
                    variant: (vname, *vidx),
                    idx,
                    replicate,
                };
                out.push(self.run_at(t, &point, &labels, &value_names, &mut folders)?);
            }
        }
        Ok(out)
    }

    /// The variants' trees (or the scenario's own), each with its overrides applied, as
    /// (name, index in `variants`, tree); and the tree without the sweep's tables.
    #[allow(clippy::type_complexity)]
    fn variant_bases(
        &self,
    ) -> Result<(Vec<(String, Option<usize>, toml::Table)>, toml::Table), ScenarioError> {
        let base_name = self.scenario.name.clone().unwrap_or_else(|| "run".into());
        let mut bases: Vec<(String, Option<usize>, toml::Table)> = Vec::new();
        let mut base_table = self.table.clone();
        base_table.remove("variants");
        base_table.remove("sweep");
        // A run is one replicate with its own seed, compared with nothing: its tree (and
        // `scenario.resolved.toml`) reruns that run alone.
        base_table.remove("seeds");
        base_table.remove("baseline");
        if self.scenario.variants.is_empty() {
            bases.push((base_name, None, base_table.clone()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, v) in self.scenario.variants.iter().enumerate() {
            if !seen.insert(v.name.clone()) {
                return Err(ScenarioError::field(
                    &self.file,
                    format!("variants[{i}].name"),
                    format!("duplicate variant name `{}`", v.name),
                ));
            }
            check_name(
                &self.file,
                format!("variants[{i}].name"),
                "the variant name",
                &v.name,
            )?;
            let mut t = base_table.clone();
            for (path, value) in &v.set {
                apply_override(&mut t, path, value.clone(), &self.file).map_err(|mut e| {
                    e.field = Some(format!("variants[{i}].set.\"{path}\""));
                    e
                })?;
            }
            bases.push((v.name.clone(), Some(i), t));
        }
        Ok((bases, base_table))
    }

    /// `baseline` names a variant.
    fn check_baseline(&self) -> Result<(), ScenarioError> {
        let Some(b) = &self.scenario.baseline else {
            return Ok(());
        };
        if self.scenario.variants.iter().any(|v| v.name == *b) {
            return Ok(());
        }
        let names: Vec<String> = (self.scenario.variants.iter())
            .map(|v| format!("`{}`", v.name))
            .collect();
        Err(ScenarioError::field(
            &self.file,
            "baseline",
            format!(
                "`{b}` is not a variant of this scenario: name one of {}",
                if names.is_empty() {
                    "its [[variants]] (it has none)".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ))
    }

    /// Sweep axis `i`'s label and the text of each of its values, checked: values
    /// present, a label of its own (not one of `labels`, the axes before it), names for
    /// an axis without a path, and no two values alike.
    fn sweep_axis(
        &self,
        i: usize,
        a: &config::SweepAxisCfg,
        labels: &[String],
    ) -> Result<(String, Vec<String>), ScenarioError> {
        let seeds = self.scenario.seeds;
        if a.values.is_empty() {
            return Err(ScenarioError::field(
                &self.file,
                format!("sweep[{i}].values"),
                "a sweep axis needs at least one value",
            ));
        }
        let label = match (&a.label, &a.path) {
            (Some(l), _) => l.clone(),
            (None, Some(p)) => p.rsplit('.').next().unwrap_or(p).to_string(),
            (None, None) => {
                return Err(ScenarioError::field(
                    &self.file,
                    format!("sweep[{i}].label"),
                    "an axis without a `path` needs a `label` (it names a column and \
                     part of the run folders)",
                ))
            }
        };
        check_name(&self.file, format!("sweep[{i}].label"), "the label", &label)?;
        if seeds > 1 && label == REPLICATE_AXIS {
            return Err(ScenarioError::field(
                &self.file,
                format!("sweep[{i}].label"),
                format!(
                    "`{REPLICATE_AXIS}` is the coordinate `seeds` adds to every run: \
                     label this axis otherwise"
                ),
            ));
        }
        if a.path.is_none() {
            if a.names.is_none() {
                return Err(ScenarioError::field(
                    &self.file,
                    format!("sweep[{i}].names"),
                    "an axis without a `path` needs `names`, one per value",
                ));
            }
            if let Some(j) = a.values.iter().position(|v| !v.is_table()) {
                return Err(ScenarioError::field(
                    &self.file,
                    format!("sweep[{i}].values"),
                    format!(
                        "values[{j}] is not a table: without a `path`, each value is a \
                         table of overrides, {{ \"dotted.path\" = value, ... }}"
                    ),
                ));
            }
        }
        let texts: Vec<String> = match &a.names {
            Some(n) => {
                if n.len() != a.values.len() {
                    return Err(ScenarioError::field(
                        &self.file,
                        format!("sweep[{i}].names"),
                        format!(
                            "{} names for {} values: give one name per value",
                            n.len(),
                            a.values.len()
                        ),
                    ));
                }
                for (j, x) in n.iter().enumerate() {
                    check_name(&self.file, format!("sweep[{i}].names[{j}]"), "the name", x)?;
                }
                n.clone()
            }
            None => a.values.iter().map(value_text).collect(),
        };
        if let Some(j) = labels.iter().position(|l| *l == label) {
            return Err(ScenarioError::field(
                &self.file,
                format!("sweep[{i}].label"),
                format!(
                    "sweep[{j}] and sweep[{i}] are both labelled `{label}`: each axis \
                     needs its own label (set `label`), it names a column and part of \
                     the run folders"
                ),
            ));
        }
        // Two equal values would make two runs with one name and one folder.
        let field = if a.names.is_some() { "names" } else { "values" };
        // A map from text to first index: an axis of a million values is checked in
        // linear time, not in a quadratic scan.
        let mut first: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(texts.len());
        for (k, t) in texts.iter().enumerate() {
            if let Some(&j) = first.get(t.as_str()) {
                return Err(ScenarioError::field(
                    &self.file,
                    format!("sweep[{i}].{field}"),
                    format!(
                        "values[{j}] and values[{k}] are both `{t}`: each value of an \
                         axis must differ, two runs cannot share a results folder"
                    ),
                ));
            }
            first.insert(t, k);
        }
        drop(first);
        Ok((label, texts))
    }

    /// At most [`MAX_RUNS`] runs, whose descriptions (a tree and a scenario each, made up
    /// front) fit in half the memory budget ([`crate::scenario::budget`]).
    fn check_run_count(
        &self,
        runs: usize,
        variants: usize,
        base_table: &toml::Table,
    ) -> Result<(), ScenarioError> {
        let (axes, seeds) = (&self.scenario.sweep, self.scenario.seeds);
        if runs > MAX_RUNS {
            let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
            return Err(ScenarioError::field(
                &self.file,
                "sweep",
                format!(
                    "{runs} runs (sweep axes of {} values x {} variants x {seeds} seeds): at most {MAX_RUNS} per scenario",
                    sizes.join(" x "),
                    variants
                ),
            ));
        }
        let each = crate::scenario::budget::run_description_bytes(base_table);
        let described = each.saturating_mul(runs as u64);
        let (limit, source) = crate::scenario::budget::limit();
        if described > limit / 2 {
            return Err(ScenarioError::field(
                &self.file,
                "sweep",
                format!(
                    "{runs} runs of about {} each would need {} to describe, more than half \
                     the {} allowed ({source}): sweep fewer points or seeds, or split the \
                     scenario",
                    crate::scenario::budget::approx_bytes(each),
                    crate::scenario::budget::approx_bytes(described),
                    crate::scenario::budget::approx_bytes(limit)
                ),
            ));
        }
        Ok(())
    }

    /// The run at `point` of variant tree `base`: the axes' values applied, its name and
    /// coordinates, its folder checked against the others' and the reserved names.
    fn run_at(
        &self,
        base: &toml::Table,
        point: &Point<'_>,
        labels: &[String],
        value_names: &[Vec<String>],
        folders: &mut Folders,
    ) -> Result<RunSpec, ScenarioError> {
        let axes = &self.scenario.sweep;
        let (vname, idx) = (point.variant.0, &point.idx);
        let mut t = base.clone();
        let mut coords = Vec::new();
        for (k, a) in axes.iter().enumerate() {
            let v = &a.values[idx[k]];
            match (&a.path, v) {
                (Some(path), _) => {
                    apply_override(&mut t, path, v.clone(), &self.file).map_err(|mut e| {
                        e.field = Some(format!("sweep[{k}].path"));
                        e
                    })?
                }
                (None, toml::Value::Table(set)) => {
                    for (path, value) in set {
                        apply_override(&mut t, path, value.clone(), &self.file).map_err(
                            |mut e| {
                                e.field = Some(format!("sweep[{k}].values[{}].\"{path}\"", idx[k]));
                                e
                            },
                        )?;
                    }
                }
                (None, _) => unreachable!("pathless values are checked to be tables"),
            }
            coords.push((labels[k].clone(), value_names[k][idx[k]].clone()));
        }
        if self.scenario.seeds > 1 {
            coords.push((
                REPLICATE_AXIS.to_string(),
                (point.replicate + 1).to_string(),
            ));
        }
        let name = if coords.is_empty() {
            vname.clone()
        } else {
            let c: Vec<String> = coords.iter().map(|(l, v)| format!("{l}={v}")).collect();
            format!("{vname}-{}", c.join("-"))
        };
        let folder = folder_name(&name);
        self.take_folder(folders, &name, &folder, point)?;
        let s = from_table(&t, &self.file).map_err(|mut e| {
            e.message = if coords.is_empty() {
                format!("in variant `{vname}`: {}", e.message)
            } else {
                format!("in run `{name}`: {}", e.message)
            };
            e
        })?;
        Ok(RunSpec {
            name,
            folder,
            variant: vname.clone(),
            coords,
            replicate: point.replicate,
            scenario: s,
            table: t,
        })
    }

    /// Takes `folder` for run `name` (in a scenario of several runs): not a name written
    /// beside the run folders, not another run's (case ignored); the error names the
    /// field that tells the two runs apart.
    fn take_folder(
        &self,
        folders: &mut Folders,
        name: &str,
        folder: &str,
        point: &Point<'_>,
    ) -> Result<(), ScenarioError> {
        if !folders.multi {
            return Ok(());
        }
        let vidx = point.variant.1;
        let field = || match vidx {
            Some(i) => format!("variants[{i}].name"),
            None => "name".to_string(),
        };
        // Lower case: a case-insensitive file system would merge `A` and `a`.
        let key = folder.to_ascii_lowercase();
        if let Some(r) = SWEEP_FILE_NAMES
            .iter()
            .find(|r| r.eq_ignore_ascii_case(&key))
        {
            return Err(ScenarioError::field(
                &self.file,
                field(),
                format!(
                    "run `{name}` would be written to folder `{folder}`, the name \
                     of a file written beside the run folders (`{r}`): rename it"
                ),
            ));
        }
        if let Some((other, ovidx, oidx)) = folders.taken.get(&key) {
            // Name the field that tells the two runs apart.
            let f = if *ovidx != vidx {
                field()
            } else {
                let k = (0..point.idx.len())
                    .find(|&k| oidx[k] != point.idx[k])
                    .unwrap_or(0);
                format!("sweep[{k}].values")
            };
            return Err(ScenarioError::field(
                &self.file,
                f,
                format!(
                    "runs `{other}` and `{name}` would share the results folder \
                     `{folder}` (folder names keep letters, digits, `-`, `_`, `.` \
                     and `=`, anything else becomes `_`, and ignore case): \
                     make the names differ in those characters"
                ),
            ));
        }
        folders
            .taken
            .insert(key, (name.to_string(), vidx, point.idx.clone()));
        Ok(())
    }
}

/// A point of the sweep: the variant (its name and index in `variants`), the index of
/// each axis's value, the replicate.
struct Point<'a> {
    variant: (&'a String, Option<usize>),
    idx: Vec<usize>,
    replicate: u32,
}

/// The run folders taken so far (lower case) -> (run, its variant index, its axis
/// indices), to name the field of a clash; none are checked in a scenario of one run.
struct Folders {
    #[allow(clippy::type_complexity)]
    taken: std::collections::HashMap<String, (String, Option<usize>, Vec<usize>)>,
    multi: bool,
}

#[cfg(test)]
mod tests;
