//! The output layer: what a run writes under `--out DIR`.
//!
//! Per run (in `DIR` for a scenario of one run, else in `DIR/<run folder>`):
//! - the CSV tables of [`TABLES`] with [`Scope::Run`] (`flows.csv`, `buckets.csv`,
//!   `ports.csv`, and when the run has them `credits.csv`, `collectives.csv`,
//!   `links.csv`, `jobs.csv`,
//!   `queues.csv`,
//!   `rates.csv`, `convergence.csv`, `window.csv`);
//! - `report.html`: the run's charts;
//! - [`crate::model::capture::FILE`] (`capture.pcapng`), when the scenario has `[record.pcap]`:
//!   the frames its chosen ports sent, headers only, for Wireshark (`docs/pcap.md`);
//! - [`resolved::FILE`] (`scenario.resolved.toml`): the effective scenario, which reruns
//!   to the same `flows.csv`;
//! - `summary.json`: the headline numbers in sections (see [`summary`]), written last, so
//!   a folder with a `summary.json` is complete.
//!
//! Beside the run folders of a scenario of several runs: the [`Scope::Sweep`] tables
//! (`comparison.csv`, `jct.csv`) and a `report.html` comparing the runs, over the runs
//! that finished, and [`SWEEP_STATUS`] (`sweep.json`): which runs finished, which did
//! not (an interrupted sweep) and what interrupted it.
//!
//! Every table is a serde row struct written with the `csv` crate ([`cells`]): the
//! header is the struct's field names, cells are quoted when they hold a comma, a quote or
//! a line break, and numbers keep their fixed decimals. Times in tables are nanoseconds
//! with three decimals, so the picosecond value is exact. Everything but the wall-clock
//! figures of `summary.json` is a pure function of (scenario, seed).
//!
//! Every file is written to `.<name>.tmp` (created new: never through a link, never over
//! a file already there) and renamed, so a reader never sees half a file, and the
//! temporary file is removed when the write fails. The results folder is ours alone: a
//! folder fabricsim creates gets the mark [`OWN_MARK`], and only in a marked folder are
//! temporary files a killed process left removed, and only the names fabricsim writes
//! ([`remove_stale_tmp`]). `--out`, a run folder or a results file that is a symbolic
//! link is refused before anything is simulated ([`prepare_out`]).
//!
//! # Adding an output table
//! 1. A new file `output/<table>.rs` with a `#[derive(Default, Serialize)]` row struct
//!    (cells: integers, strings, [`cells::Fixed`], [`cells::Ns`], `Option`s of them) and
//!    `pub const TABLE: Table` naming the file, saying what it holds and giving its
//!    `present` and `write` functions.
//! 2. `mod <table>;` and `<table>::TABLE` in [`TABLES`] below. `write_all` (or
//!    `write_sweep`) then writes it, and the docs list is [`TABLES`] itself.

pub(crate) mod buckets;
mod buffers;
pub mod cells;
mod collectives;
pub mod columns;
mod comparison;
mod convergence;
mod credits;
mod flows;
pub mod headline;
pub(crate) mod jct;
mod jobs;
mod links;
mod nccl_tests;
pub mod pause_timeline;
pub mod pcap;
mod ports;
mod queues;
mod rates;
pub mod resolved;
pub mod run_report;
pub mod summary;
mod summary_json;
mod summary_table;
pub mod sweep_report;
mod training;
mod window;

pub use cells::CsvOut;
pub use columns::{Column, ColumnData};
pub use summary::{fct, quantile, summarize, table, Summary, SUMMARY_RATE_FLOWS};

use crate::sim::Simulation;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One output table.
pub struct Table {
    /// File name.
    pub file: &'static str,
    /// What it holds, one line.
    pub about: &'static str,
    /// Per run or across runs, and how to write it.
    pub scope: Scope,
}

/// Where a table is written, when, and how.
pub enum Scope {
    /// In every run folder.
    Run {
        /// Whether the run has this table (`jobs.csv` only with collective jobs, ...).
        present: fn(&RunData) -> bool,
        /// Writes the table.
        write: fn(&RunData, &mut CsvOut) -> csv::Result<()>,
    },
    /// Once, beside the run folders of a scenario of several runs.
    Sweep {
        /// Whether the runs have this table.
        present: fn(&SweepData) -> bool,
        /// Writes the table.
        write: fn(&SweepData, &mut CsvOut) -> csv::Result<()>,
    },
}

/// What a per-run table is made from.
pub struct RunData<'a> {
    /// The finished simulation.
    pub sim: &'a Simulation,
    /// Its summary.
    pub summary: &'a Summary,
}

/// What a table across runs is made from.
pub struct SweepData<'a> {
    /// Every run's summary, in the scenario's order.
    pub rows: &'a [Summary],
    /// Sweep axis labels in the scenario's order (with the replicate coordinate last when
    /// `replicated`).
    pub axes: &'a [String],
    /// The runs are replicates (`seeds` > 1): tables across runs aggregate over the
    /// [`crate::scenario::REPLICATE_AXIS`] coordinate.
    pub replicated: bool,
    /// The variant ratios divide by (`baseline`); none: the first over each other.
    pub baseline: Option<&'a str>,
}

/// `present` of a table every run has.
fn always(_: &RunData) -> bool {
    true
}

/// Every output table, in the order they are written. The one list: writing, the
/// reserved names beside run folders and the documentation come from it.
pub const TABLES: &[Table] = &[
    flows::TABLE,
    buckets::TABLE,
    ports::TABLE,
    credits::TABLE,
    buffers::TABLE,
    collectives::TABLE,
    links::TABLE,
    jobs::TABLE,
    nccl_tests::TABLE,
    training::TABLE,
    queues::TABLE,
    rates::TABLE,
    convergence::TABLE,
    window::TABLE,
    comparison::TABLE,
    jct::TABLE,
];

/// The multi-run report beside the run folders.
pub const SWEEP_REPORT: &str = "report.html";

/// Which runs of a scenario of several runs finished ([`SweepStatus`]), beside the run
/// folders.
pub const SWEEP_STATUS: &str = "sweep.json";

/// Names of the files written beside the run folders: no run folder may take one.
pub fn sweep_file_names() -> impl Iterator<Item = &'static str> {
    TABLES
        .iter()
        .filter(|t| matches!(t.scope, Scope::Sweep { .. }))
        .map(|t| t.file)
        .chain([SWEEP_REPORT, SWEEP_STATUS])
}

/// [`SWEEP_STATUS`]: which runs the files across runs cover. Run names, in the
/// scenario's order.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SweepStatus {
    /// Runs in the scenario.
    pub runs: usize,
    /// Runs with complete results in their folder (simulated now or reused): the rows of
    /// `comparison.csv`.
    pub finished: Vec<String>,
    /// Finished runs reused from an earlier, interrupted invocation (`--resume`).
    pub reused: Vec<String>,
    /// Runs that did not finish: their folders hold nothing new; `--resume` runs them.
    pub unfinished: Vec<String>,
    /// What stopped the sweep (`SIGINT`, `SIGTERM`), `null` when nothing did.
    pub interrupted_by: Option<String>,
}

/// Writes [`SWEEP_STATUS`] into `dir`.
pub fn write_sweep_status(status: &SweepStatus, dir: &Path) -> std::io::Result<()> {
    write_file(dir, SWEEP_STATUS, |w| {
        serde_json::to_writer_pretty(&mut *w, status)?;
        w.write_all(b"\n")
    })
}

/// The mark of a folder fabricsim created for results (an empty file): only in a folder
/// holding it are stale temporary files removed ([`remove_stale_tmp`]).
pub const OWN_MARK: &str = ".fabricsim";

/// Names of the files written into a run's folder (`--out` itself for a scenario of one
/// run).
pub fn run_file_names() -> impl Iterator<Item = &'static str> {
    TABLES
        .iter()
        .filter(|t| matches!(t.scope, Scope::Run { .. }))
        .map(|t| t.file)
        .chain([
            "report.html",
            crate::model::capture::FILE,
            crate::model::record::timeline::FILE,
            resolved::FILE,
            "summary.json",
        ])
}

/// The temporary name [`write_file`] writes `name` through.
pub fn tmp_name(name: &str) -> String {
    format!(".{name}.tmp")
}

/// Whether `dir` is a folder (not a link to one) that fabricsim marked as its own.
pub fn is_own_folder(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        && std::fs::symlink_metadata(dir.join(OWN_MARK)).is_ok_and(|m| m.is_file())
}

/// Marks `dir` as a results folder fabricsim owns ([`OWN_MARK`]).
fn mark_own_folder(dir: &Path) -> std::io::Result<()> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(OWN_MARK))
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Makes sure `dir` is a real folder for results: creates it (and marks it as ours) when
/// it is missing; an error when it is a symbolic link or not a folder.
pub fn ensure_results_folder(dir: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) if m.file_type().is_symlink() => Err(std::io::Error::other(format!(
            "{} is a symbolic link: results are never written through one",
            dir.display()
        ))),
        Ok(_) => Err(std::io::Error::other(format!(
            "{} exists and is not a folder",
            dir.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir(dir)?;
            mark_own_folder(dir)
        }
        Err(e) => Err(e),
    }
}

/// Removes the temporary files of [`write_file`] (`.<name>.tmp`, for the names fabricsim
/// writes) directly in `dir`: a writer killed mid-file (kill -9, power loss) leaves one,
/// and nothing else would ever remove it. Only in a folder fabricsim marked as its own
/// ([`OWN_MARK`]); elsewhere nothing is removed. A missing `dir` has none.
pub fn remove_stale_tmp(dir: &Path) -> std::io::Result<()> {
    if !is_own_folder(dir) {
        return Ok(());
    }
    for name in run_file_names().chain(sweep_file_names()) {
        let p = dir.join(tmp_name(name));
        match std::fs::symlink_metadata(&p) {
            // A link is removed itself, never what it points to.
            Ok(m) if !m.is_dir() => std::fs::remove_file(&p)?,
            _ => {}
        }
    }
    Ok(())
}

/// Checks that `dir` (an existing folder) can take the results files `names`: none is a
/// symbolic link or a folder, and no temporary name is taken by something fabricsim did
/// not leave there (in a folder not marked as ours, or a folder in its place).
fn check_results_names<'a>(
    dir: &Path,
    names: impl Iterator<Item = &'a str>,
    shown: &str,
) -> Result<(), String> {
    let own = is_own_folder(dir);
    for name in names {
        let p = dir.join(name);
        if let Ok(m) = std::fs::symlink_metadata(&p) {
            if m.file_type().is_symlink() {
                return Err(format!(
                    "--out {shown}: results file {} is a symbolic link: fabricsim never \
                     writes through one; remove it or choose another --out",
                    p.display()
                ));
            }
            if m.is_dir() {
                return Err(format!(
                    "--out {shown}: results file {} is a folder; remove it or choose \
                     another --out",
                    p.display()
                ));
            }
        }
        let t = dir.join(tmp_name(name));
        if let Ok(m) = std::fs::symlink_metadata(&t) {
            if !own || m.is_dir() {
                return Err(format!(
                    "--out {shown}: {} has the name of a temporary file of fabricsim but \
                     the folder is not one fabricsim made, so it is left alone; remove it \
                     or choose another --out",
                    t.display()
                ));
            }
        }
    }
    Ok(())
}

fn find_table(file: &str) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.file == file)
}

/// A per-run table as text, `None` when the run does not have it.
pub fn run_table_text(file: &str, sim: &Simulation, summary: &Summary) -> Option<String> {
    let d = RunData { sim, summary };
    match find_table(file)?.scope {
        // Rendering into memory fails only for a row type the `csv` crate cannot
        // serialize (a nested sequence): a bug the tests of every table would show.
        Scope::Run { present, write } if present(&d) => {
            Some(cells::render(|o| write(&d, o)).expect("a table renders into memory"))
        }
        _ => None,
    }
}

/// Fills typed columns through a table's `write` ([`columns`]); a failure is a row
/// type the sink cannot take, a bug the tests of every table would show.
fn collect(write: impl FnOnce(&mut CsvOut) -> csv::Result<()>) -> Vec<Column> {
    let mut cols = columns::Columns::new();
    write(&mut CsvOut::columns(&mut cols)).expect("a table fills columns");
    cols.finish()
}

/// A per-run table as typed columns (named as the CSV header), `None` when the run does
/// not have it: the data of the CSV file, from the same row structs.
pub fn run_table_columns(file: &str, sim: &Simulation, summary: &Summary) -> Option<Vec<Column>> {
    let d = RunData { sim, summary };
    match find_table(file)?.scope {
        Scope::Run { present, write } if present(&d) => Some(collect(|o| write(&d, o))),
        _ => None,
    }
}

/// Every per-run table the run has, as typed columns, in the order of [`TABLES`].
pub fn run_tables_columns(sim: &Simulation, summary: &Summary) -> Vec<(&'static str, Vec<Column>)> {
    let d = RunData { sim, summary };
    TABLES
        .iter()
        .filter_map(|t| match t.scope {
            Scope::Run { present, write } if present(&d) => {
                Some((t.file, collect(|o| write(&d, o))))
            }
            _ => None,
        })
        .collect()
}

/// `comparison.csv` over `rows` as typed columns: one row per run, its headline figures
/// (one run's row is its summary as a table).
pub fn comparison_columns(rows: &[Summary]) -> Vec<Column> {
    let d = SweepData {
        rows,
        axes: &[],
        replicated: false,
        baseline: None,
    };
    collect(|o| match comparison::TABLE.scope {
        Scope::Sweep { write, .. } => write(&d, o),
        Scope::Run { .. } => Ok(()),
    })
}

/// `flows.csv` as a string (tests compare runs with it).
pub fn flows_csv(sim: &Simulation) -> String {
    run_table_text("flows.csv", sim, &Summary::default()).unwrap_or_default()
}

/// `ports.csv` as a string.
pub fn ports_csv(sim: &Simulation) -> String {
    run_table_text("ports.csv", sim, &Summary::default()).unwrap_or_default()
}

/// `jobs.csv` as a string (empty without jobs).
pub fn jobs_csv(sim: &Simulation) -> String {
    run_table_text("jobs.csv", sim, &Summary::default()).unwrap_or_default()
}

/// `buckets.csv` as a string.
pub fn buckets_csv(sim: &Simulation) -> String {
    run_table_text("buckets.csv", sim, &Summary::default()).unwrap_or_default()
}

/// `comparison.csv` across runs, as a string.
pub fn comparison_csv(rows: &[Summary]) -> String {
    let d = SweepData {
        rows,
        axes: &[],
        replicated: false,
        baseline: None,
    };
    cells::render(|o| match comparison::TABLE.scope {
        Scope::Sweep { write, .. } => write(&d, o),
        Scope::Run { .. } => Ok(()),
    })
    .expect("a table renders into memory")
}

/// `jct.csv` across runs, as a string (empty when no run has jobs).
pub fn jct_csv(
    rows: &[Summary],
    axes: &[String],
    replicated: bool,
    baseline: Option<&str>,
) -> String {
    let d = SweepData {
        rows,
        axes,
        replicated,
        baseline,
    };
    match jct::TABLE.scope {
        Scope::Sweep { present, write } if present(&d) => {
            cells::render(|o| write(&d, o)).expect("a table renders into memory")
        }
        _ => String::new(),
    }
}

/// Opens `dir/name` (in a results folder, created if needed) for a file written as the
/// run goes: one left by an earlier run into the folder is replaced, a link or folder
/// in its place is an error (`--out` was checked for both before any run).
pub fn open_streamed(dir: &Path, name: &str) -> std::io::Result<std::fs::File> {
    ensure_results_folder(dir)?;
    let p = dir.join(name);
    if let Ok(m) = std::fs::symlink_metadata(&p) {
        if m.is_file() {
            std::fs::remove_file(&p)?;
        }
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&p)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))
}

/// Writes `dir/name` through a temporary file: `body` writes the content, then the
/// temporary file is renamed to `name`. On any error the temporary file is removed, so a
/// failed write leaves neither a half file nor a `.tmp` behind.
pub fn write_file(
    dir: &Path,
    name: &str,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = dir.join(tmp_name(name));
    // Created new: a file or link already there is an error, never followed or truncated.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", tmp.display())))?;
    let res = (|| {
        let mut w = std::io::BufWriter::new(f);
        body(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        // Best effort: a file system without fsync still gets the rename.
        f.sync_all().ok();
        let to = dir.join(name);
        std::fs::rename(&tmp, &to)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", to.display())))
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

fn write_csv(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&mut CsvOut) -> csv::Result<()>,
) -> std::io::Result<()> {
    write_file(dir, name, |w| {
        let mut out = CsvOut::new(w);
        write(&mut out)?;
        out.finish()?;
        Ok(())
    })
}

/// A run's `report.html`, as text.
pub fn run_report_html(sim: &Simulation, summary: &Summary) -> String {
    let title = crate::output::run_report::run_report_title(summary);
    let sections = crate::output::run_report::run_report_sections(sim, summary);
    crate::base::charts::render_html(&title, &sections)
}

/// Writes every file of a run into `dir` (created if needed): its tables, `report.html`,
/// `capture.pcapng` (with `[record.pcap]`), `scenario.resolved.toml` (`resolved_toml`, see [`resolved`]) and last `summary.json`.
pub fn write_all(
    sim: &Simulation,
    summary: &Summary,
    resolved_toml: &str,
    dir: &Path,
) -> std::io::Result<()> {
    ensure_results_folder(dir)?;
    let d = RunData { sim, summary };
    for t in TABLES {
        if let Scope::Run { present, write } = t.scope {
            if present(&d) {
                write_csv(dir, t.file, |o| write(&d, o))?;
            }
        }
    }
    let html = run_report_html(sim, summary);
    write_file(dir, "report.html", |w| w.write_all(html.as_bytes()))?;
    if let Some(cap) = sim.fabric.capture.as_deref() {
        write_file(dir, crate::model::capture::FILE, |w| {
            crate::output::pcap::pcapng::write(sim, cap, w)
        })?;
    }
    write_file(dir, resolved::FILE, |w| {
        w.write_all(resolved_toml.as_bytes())
    })?;
    write_file(dir, "summary.json", |w| {
        serde_json::to_writer_pretty(&mut *w, summary)?;
        w.write_all(b"\n")
    })
}

/// Writes the files beside the run folders of a scenario of several runs: the
/// [`Scope::Sweep`] tables and the multi-run `report.html`. `axes` are the sweep axis
/// labels in the scenario's order; `replicated` and `baseline` as in [`SweepData`].
pub fn write_sweep(
    rows: &[Summary],
    axes: &[String],
    replicated: bool,
    baseline: Option<&str>,
    dir: &Path,
) -> std::io::Result<()> {
    ensure_results_folder(dir)?;
    let d = SweepData {
        rows,
        axes,
        replicated,
        baseline,
    };
    for t in TABLES {
        if let Scope::Sweep { present, write } = t.scope {
            if present(&d) {
                write_csv(dir, t.file, |o| write(&d, o))?;
            }
        }
    }
    let title = rows.first().map(|r| r.scenario.clone()).unwrap_or_default();
    let sections =
        crate::output::sweep_report::report_sections(&title, rows, axes, replicated, baseline);
    let html = crate::base::charts::render_html(&title, &sections);
    write_file(dir, SWEEP_REPORT, |w| w.write_all(html.as_bytes()))
}

/// Makes sure results can be written before anything is simulated: creates `out` (and
/// marks it as ours, as an empty folder is marked), writes and removes a probe file in it,
/// checks that neither `out` nor any run folder nor any results file is a symbolic link
/// or in the way (a folder where a file goes, a file where a folder goes, a temporary
/// name taken in a folder not ours), then removes the temporary files a killed process
/// left in the folders that are ours. `folders` are the run folders under `out` (none for
/// a scenario of one run). The error says what is wrong with which path.
pub fn prepare_out(out: &Path, folders: &[String]) -> Result<(), String> {
    let shown = out.display().to_string();
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(format!(
                "--out {shown}: the results folder is a symbolic link: fabricsim never \
                 writes through one; give the folder it points to"
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(format!(
                "--out {shown}: cannot create the results folder: it exists and is not a folder"
            ))
        }
        Ok(_) => {
            let empty = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_none());
            if empty {
                mark_own_folder(out).map_err(|e| {
                    format!("--out {shown}: the results folder is not writable: {e}")
                })?;
            }
        }
        Err(_) => {
            std::fs::create_dir_all(out)
                .map_err(|e| format!("--out {shown}: cannot create the results folder: {e}"))?;
            mark_own_folder(out)
                .map_err(|e| format!("--out {shown}: the results folder is not writable: {e}"))?;
        }
    }
    let probe: PathBuf = out.join(format!(".fabricsim-probe-{}.tmp", std::process::id()));
    let res = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|mut f| {
            let r = f.write_all(b"probe");
            let _ = std::fs::remove_file(&probe);
            r
        });
    res.map_err(|e| format!("--out {shown}: the results folder is not writable: {e}"))?;
    if folders.is_empty() {
        check_results_names(out, run_file_names(), &shown)?;
    } else {
        check_results_names(out, sweep_file_names(), &shown)?;
    }
    for f in folders {
        let p = out.join(f);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "--out {shown}: run folder {} is a symbolic link: fabricsim never writes \
                     through one; remove it or choose another --out",
                    p.display()
                ))
            }
            Ok(m) if !m.is_dir() => {
                return Err(format!(
                    "--out {shown}: {} exists and is not a folder, so run folder `{f}` cannot \
                     be created there",
                    p.display()
                ))
            }
            Ok(_) => check_results_names(&p, run_file_names(), &shown)?,
            Err(_) => {}
        }
    }
    let clean = |d: &Path| {
        remove_stale_tmp(d).map_err(|e| format!("--out {shown}: cleaning {}: {e}", d.display()))
    };
    clean(out)?;
    for f in folders {
        clean(&out.join(f))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_files_are_reserved() {
        let mut ours: Vec<&str> = sweep_file_names().collect();
        let mut reserved = crate::scenario::SWEEP_FILE_NAMES.to_vec();
        ours.sort_unstable();
        reserved.sort_unstable();
        assert_eq!(
            ours, reserved,
            "scenario::SWEEP_FILE_NAMES must list every file written beside run folders"
        );
    }

    #[test]
    fn a_failed_write_leaves_no_tmp_file() {
        let d = tempfile::tempdir().unwrap();
        // The body fails half way.
        let e = write_file(d.path(), "a.csv", |w| {
            w.write_all(b"half a table")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(e.is_err());
        // The rename fails: the target is a folder.
        std::fs::create_dir(d.path().join("b.csv")).unwrap();
        std::fs::write(d.path().join("b.csv").join("x"), "keep").unwrap();
        let e = write_file(d.path(), "b.csv", |w| w.write_all(b"rows"));
        assert!(e.is_err());
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["b.csv"], "only the pre-existing folder stays");
        // The parent is a regular file: nothing can be created, nothing is left.
        let file = d.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(write_file(&file, "c.csv", |w| w.write_all(b"rows")).is_err());
        assert!(!d.path().join("f").join(".c.csv.tmp").exists());
    }

    #[test]
    fn a_write_that_succeeds_leaves_only_the_file() {
        let d = tempfile::tempdir().unwrap();
        write_file(d.path(), "a.csv", |w| w.write_all(b"x,y\n")).unwrap();
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.csv"]);
        assert_eq!(std::fs::read(d.path().join("a.csv")).unwrap(), b"x,y\n");
    }

    #[test]
    fn prepare_out_refuses_a_path_under_a_file_and_a_blocked_run_folder() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let e = prepare_out(&file.join("out"), &[]).unwrap_err();
        assert!(
            e.starts_with("--out ") && e.contains("cannot create"),
            "{e}"
        );
        let e = prepare_out(&file, &[]).unwrap_err();
        assert!(e.contains("cannot create"), "{e}");
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("run-a"), "x").unwrap();
        let e = prepare_out(&out, &["run-a".into()]).unwrap_err();
        assert!(e.contains("run-a") && e.contains("not a folder"), "{e}");
        prepare_out(&out, &["run-b".into()]).unwrap();
        // The probe is gone.
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn prepare_out_never_goes_through_a_link_and_cleans_only_its_own_folders() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join(".flows.csv.tmp"), "theirs").unwrap();
        // `--out` a link: refused.
        let link = d.path().join("link");
        symlink(&elsewhere, &link).unwrap();
        assert!(prepare_out(&link, &[])
            .unwrap_err()
            .contains("symbolic link"));
        // A run folder a link, dangling or not: refused, naming it.
        let out = d.path().join("out");
        prepare_out(&out, &[]).unwrap();
        assert!(is_own_folder(&out), "a folder fabricsim made is marked");
        symlink(&elsewhere, out.join("r1")).unwrap();
        symlink(d.path().join("none"), out.join("r2")).unwrap();
        for r in ["r1", "r2"] {
            let e = prepare_out(&out, &[r.into()]).unwrap_err();
            assert!(e.contains(r) && e.contains("symbolic link"), "{e}");
        }
        // A stale temporary file in our folder goes, a link with a temporary name too
        // (the link only); a name fabricsim does not write stays.
        std::fs::write(out.join(".comparison.csv.tmp"), "stale").unwrap();
        symlink(elsewhere.join(".flows.csv.tmp"), out.join(".flows.csv.tmp")).unwrap();
        std::fs::write(out.join(".other.tmp"), "x").unwrap();
        prepare_out(&out, &["r3".into()]).unwrap();
        assert!(!out.join(".comparison.csv.tmp").exists());
        assert!(std::fs::symlink_metadata(out.join(".flows.csv.tmp")).is_err());
        assert!(out.join(".other.tmp").exists());
        assert_eq!(
            std::fs::read_to_string(elsewhere.join(".flows.csv.tmp")).unwrap(),
            "theirs"
        );
        // In a folder not ours nothing is removed: a taken temporary name is refused.
        let theirs = d.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("notes"), "x").unwrap();
        std::fs::write(theirs.join(".summary.json.tmp"), "x").unwrap();
        let e = prepare_out(&theirs, &[]).unwrap_err();
        assert!(e.contains(".summary.json.tmp"), "{e}");
        assert!(theirs.join(".summary.json.tmp").exists());
        remove_stale_tmp(&theirs).unwrap();
        assert!(theirs.join(".summary.json.tmp").exists());
        // A write never follows a link in place of its temporary file.
        symlink(elsewhere.join("target"), out.join(".ports.csv.tmp")).unwrap();
        assert!(write_file(&out, "ports.csv", |w| w.write_all(b"x")).is_err());
        assert!(!elsewhere.join("target").exists());
        assert!(std::fs::symlink_metadata(out.join(".ports.csv.tmp")).is_ok());
    }

    /// Every per-run table of a run with flows, a collective job and time series, as
    /// columns and as CSV text: the same names, rows and values (text equal, integers
    /// equal, floats within the printed decimals, nulls where cells are empty).
    #[test]
    fn columns_hold_what_the_csv_files_print() {
        let text = r#"
name = "cols"
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
[record]
queue_interval = "10us"
rate_interval = "10us"
"#;
        let l = crate::scenario::load_str(text, "<cols>", Path::new("."), &[]).unwrap();
        let mut sim = Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap();
        let outcome = sim
            .run_until(crate::base::units::Time::MAX, &mut |_| {})
            .unwrap();
        let summary = summarize(&sim, "cols", &outcome, 0.0);
        let tables = run_tables_columns(&sim, &summary);
        let names: Vec<&str> = tables.iter().map(|(f, _)| *f).collect();
        for f in [
            "flows.csv",
            "ports.csv",
            "jobs.csv",
            "queues.csv",
            "rates.csv",
        ] {
            assert!(names.contains(&f), "{f} missing from {names:?}");
        }
        for (file, cols) in &tables {
            let csv_text = run_table_text(file, &sim, &summary).unwrap();
            let mut r = csv::ReaderBuilder::new().from_reader(csv_text.as_bytes());
            let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
            let col_names: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
            assert_eq!(col_names, header, "{file}");
            let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
            assert!(!rows.is_empty(), "{file}");
            for (j, c) in cols.iter().enumerate() {
                assert_eq!(c.data.len(), rows.len(), "{file} {}", c.name);
                for (i, row) in rows.iter().enumerate() {
                    let cell = &row[j];
                    let what = format!("{file} row {i} {}: {cell:?}", c.name);
                    match &c.data {
                        ColumnData::UInt64(v) => {
                            assert_eq!(
                                v[i].map(|x| x.to_string()).unwrap_or_default(),
                                cell,
                                "{what}"
                            )
                        }
                        ColumnData::Int64(v) => {
                            assert_eq!(
                                v[i].map(|x| x.to_string()).unwrap_or_default(),
                                cell,
                                "{what}"
                            )
                        }
                        ColumnData::Utf8(v) => {
                            assert_eq!(v[i].as_deref().unwrap_or(""), cell, "{what}")
                        }
                        ColumnData::Bool(v) => {
                            assert_eq!(
                                v[i].map(|x| x.to_string()).unwrap_or_default(),
                                cell,
                                "{what}"
                            )
                        }
                        ColumnData::Float64(v) => match v[i] {
                            None => assert_eq!(cell, "", "{what}"),
                            Some(x) if x.is_nan() => assert_eq!(cell, "NaN", "{what}"),
                            Some(x) => {
                                let printed: f64 = cell.parse().expect(&what);
                                let decimals = cell.split_once('.').map_or(0, |(_, d)| d.len());
                                let tol = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-12 * x.abs();
                                assert!((x - printed).abs() <= tol, "{what} vs {x}");
                                // The times of flows.csv (`Ns`) are exact:
                                // picoseconds / 1000 is the printed value.
                                if *file == "flows.csv" && c.name.ends_with("_ns") {
                                    assert_eq!(x, printed, "{what}");
                                }
                            }
                        },
                    }
                }
            }
        }
        // The summary's row: the columns of comparison.csv.
        let cols = comparison_columns(std::slice::from_ref(&summary));
        let header = comparison_csv(std::slice::from_ref(&summary));
        let first = header.lines().next().unwrap();
        let col_names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(col_names.join(","), first);
        assert!(cols.iter().all(|c| c.data.len() == 1));
    }

    #[test]
    fn table_names_are_unique_and_csv() {
        let mut names: Vec<&str> = TABLES.iter().map(|t| t.file).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TABLES.len());
        assert!(names.iter().all(|n| n.ends_with(".csv")));
        assert!(TABLES.iter().all(|t| !t.about.is_empty()));
    }
}
