//! The runs a scenario stands for: each variant (or the scenario itself) times every
//! combination of the sweep axes' values times `seeds` replicates, each a patched TOML
//! tree with its name, coordinates and results folder, checked before anything runs.

use super::*;

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
pub(super) fn check_name(
    file: &str,
    field: String,
    what: &str,
    name: &str,
) -> Result<(), ScenarioError> {
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
