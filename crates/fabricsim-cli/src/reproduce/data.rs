//! Reading what the runs wrote: each run's `summary.json` and CSV tables, found by run
//! name under a job's folder. Every lookup that fails names the job, the run, the file
//! and the field, so a generator whose scenario changed says what it no longer finds.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The runs of one document: `out/<doc>/<job>/...`.
pub struct Runs {
    pub dir: PathBuf,
}

impl Runs {
    /// The runs of job `name`.
    pub fn job(&self, name: &str) -> Result<Job, String> {
        Job::load(name, &self.dir.join(name))
    }
}

/// One job's runs, by run name (`summary.json`'s `run.name`).
pub struct Job {
    pub name: String,
    dir: PathBuf,
    runs: BTreeMap<String, Run>,
}

impl Job {
    fn load(name: &str, dir: &Path) -> Result<Job, String> {
        let mut runs = BTreeMap::new();
        let mut add = |d: &Path| -> Result<(), String> {
            let p = d.join("summary.json");
            if p.is_file() {
                let text =
                    std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                let summary: Value =
                    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
                let run = summary["run"]["name"]
                    .as_str()
                    .ok_or_else(|| format!("{}: no run.name", p.display()))?
                    .to_string();
                runs.insert(
                    run.clone(),
                    Run {
                        job: name.to_string(),
                        name: run,
                        dir: d.to_path_buf(),
                        summary,
                    },
                );
            }
            Ok(())
        };
        add(dir)?;
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("job `{name}`: {}: {e}", dir.display()))?;
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                add(&e.path())?;
            }
        }
        if runs.is_empty() {
            return Err(format!("job `{name}`: no run in {}", dir.display()));
        }
        Ok(Job {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            runs,
        })
    }

    /// Run `name` (`summary.json`'s `run.name`: the variant and its sweep point).
    pub fn run(&self, name: &str) -> Result<&Run, String> {
        self.runs.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.runs.keys().map(|k| k.as_str()).collect();
            format!(
                "job `{}`: no run `{name}` (runs: {})",
                self.name,
                known.join(", ")
            )
        })
    }

    /// A table across the job's runs (`jct.csv`, `comparison.csv`).
    pub fn csv(&self, file: &str) -> Result<Csv, String> {
        read_csv(&self.dir.join(file), format!("job `{}`: {file}", self.name))
    }
}

/// One run's folder and summary.
pub struct Run {
    pub job: String,
    pub name: String,
    pub dir: PathBuf,
    pub summary: Value,
}

impl Run {
    fn at(&self, path: &str) -> Result<&Value, String> {
        let mut v = &self.summary;
        for key in path.split('.') {
            v = match key.parse::<usize>() {
                Ok(i) => v.get(i),
                Err(_) => v.get(key),
            }
            .ok_or_else(|| {
                format!(
                    "job `{}`, run `{}`: summary.json has no `{path}`",
                    self.job, self.name
                )
            })?;
        }
        Ok(v)
    }

    /// A number of `summary.json` by its dotted path (`fabric.drops`,
    /// `long_haul.directions.0.imbalance`); null reads as NaN (a statistic of nothing).
    pub fn num(&self, path: &str) -> Result<f64, String> {
        let v = self.at(path)?;
        if v.is_null() {
            return Ok(f64::NAN);
        }
        v.as_f64().ok_or_else(|| {
            format!(
                "job `{}`, run `{}`: summary.json `{path}` is not a number: {v}",
                self.job, self.name
            )
        })
    }

    /// A count of a section that a run may not have (`faults` is null in a run without
    /// faults): 0 when the section is null, else as [`Run::num`].
    pub fn count(&self, path: &str) -> Result<f64, String> {
        let section = path.split('.').next().unwrap_or(path);
        if self.summary.get(section).is_some_and(|v| v.is_null()) {
            return Ok(0.0);
        }
        self.num(path)
    }

    /// A string of `summary.json` by its dotted path (`run.outcome`).
    pub fn text(&self, path: &str) -> Result<String, String> {
        let v = self.at(path)?;
        Ok(v.as_str().map_or_else(|| v.to_string(), |s| s.to_string()))
    }

    /// A setting of the run's effective scenario (`scenario.resolved.toml`) by its dotted
    /// path (`topology.dr_buffer`), as written there.
    pub fn setting(&self, path: &str) -> Result<String, String> {
        let p = self.dir.join("scenario.resolved.toml");
        let what = format!(
            "job `{}`, run `{}`: scenario.resolved.toml",
            self.job, self.name
        );
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{what}: {e}"))?;
        let table: toml::Table = toml::from_str(&text).map_err(|e| format!("{what}: {e}"))?;
        let mut v: Option<&toml::Value> = None;
        for key in path.split('.') {
            v = match v {
                None => table.get(key),
                Some(x) => x.get(key),
            };
            if v.is_none() {
                return Err(format!("{what}: no `{path}`"));
            }
        }
        let v = v.ok_or_else(|| format!("{what}: no `{path}`"))?;
        Ok(v.as_str().map_or_else(|| v.to_string(), |s| s.to_string()))
    }

    /// A CSV table of the run's folder.
    pub fn csv(&self, file: &str) -> Result<Csv, String> {
        read_csv(
            &self.dir.join(file),
            format!("job `{}`, run `{}`: {file}", self.job, self.name),
        )
    }
}

fn read_csv(p: &Path, what: String) -> Result<Csv, String> {
    let mut r = csv::ReaderBuilder::new()
        .from_path(p)
        .map_err(|e| format!("{what}: {e}"))?;
    let header: Vec<String> = r
        .headers()
        .map_err(|e| format!("{what}: {e}"))?
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| format!("{what}: {e}"))?;
        rows.push(rec.iter().map(|s| s.to_string()).collect());
    }
    Ok(Csv { what, header, rows })
}

/// A CSV table read whole.
pub struct Csv {
    what: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    fn col(&self, name: &str) -> Result<usize, String> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{}: no column `{name}`", self.what))
    }

    /// Cell (`row`, `column`) as a number; empty reads as NaN.
    pub fn num(&self, row: usize, column: &str) -> Result<f64, String> {
        let c = self.col(column)?;
        let cell = self
            .rows
            .get(row)
            .and_then(|r| r.get(c))
            .ok_or_else(|| format!("{}: no row {row}", self.what))?;
        if cell.is_empty() {
            return Ok(f64::NAN);
        }
        cell.parse().map_err(|_| {
            format!(
                "{}: row {row}, `{column}` is not a number: {cell}",
                self.what
            )
        })
    }

    /// The first row whose cells in `columns` are `values`.
    pub fn find_all(&self, columns: &[(&str, &str)]) -> Result<usize, String> {
        let cols: Vec<(usize, &str)> = columns
            .iter()
            .map(|(c, v)| self.col(c).map(|i| (i, *v)))
            .collect::<Result<_, _>>()?;
        self.rows
            .iter()
            .position(|r| cols.iter().all(|(i, v)| r.get(*i).is_some_and(|x| x == v)))
            .ok_or_else(|| format!("{}: no row with {columns:?}", self.what))
    }

    /// The row whose `column` is `value`.
    pub fn find(&self, column: &str, value: &str) -> Result<usize, String> {
        let c = self.col(column)?;
        self.rows
            .iter()
            .position(|r| r.get(c).is_some_and(|v| v == value))
            .ok_or_else(|| format!("{}: no row with {column} = {value}", self.what))
    }
}
