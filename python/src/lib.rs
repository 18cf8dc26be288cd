//! `fabricsim._native`: the Rust half of the `fabricsim` Python package.
//!
//! Thin on purpose: scenarios load, patch and check through the library's own functions
//! (the CLI's `--set` is [`fabricsim::scenario::apply_override`]), a run goes through
//! [`fabricsim::run::runner::run_single`] (the files under `out` are the CLI's), and tables
//! come from the output layer's column sink ([`fabricsim::output::columns`]), the same
//! row structs that write the CSV files. This crate only turns those columns into Arrow
//! arrays and hands them to pyarrow through the Arrow C stream interface
//! (`__arrow_c_stream__`, a PyCapsule): no CSV is parsed, nothing is copied twice.
//!
//! The GIL is released while a scenario is checked or run (`Python::detach`), so Python
//! threads run simulations in parallel; the run looks for Ctrl-C where it reports
//! progress (tens of milliseconds apart) and stops.
//!
//! Everything is behind the `python` feature (see Cargo.toml): without it this crate is
//! empty, so the workspace's `cargo test` and `clippy` cost nothing for it.
#![cfg(feature = "python")]

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, RecordBatchIterator,
    RecordBatchOptions, StringArray, UInt64Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use fabricsim::output::{self, Column, ColumnData};
use fabricsim::run::runner::{self, RunError};
use fabricsim::scenario::{self, LoadedScenario, ScenarioError};
use pyo3::exceptions::{PyFileNotFoundError, PyKeyboardInterrupt, PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyCapsule, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// `fabricsim.ScenarioError` (defined in Python, `fabricsim/_errors.py`) for `e`: the
/// whole message as `str()`, and its parts as attributes.
fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let cls = py.import("fabricsim._errors")?.getattr("ScenarioError")?;
        let (line, column) = e.pos.unzip();
        let inst = cls.call1((
            e.to_string(),
            e.file.clone(),
            e.field.clone(),
            e.message.clone(),
            line,
            column,
        ))?;
        Ok(PyErr::from_value(inst))
    };
    make().unwrap_or_else(|err| err)
}

/// `errno` of a missing file (the same on Linux and macOS).
const ENOENT: i32 = 2;

/// `e` with the line and column of its field in `src` (the scenario's text) when it
/// has a field and no position yet: [`locate_field`].
fn located(mut e: ScenarioError, src: Option<&str>) -> ScenarioError {
    if e.pos.is_none() {
        if let (Some(src), Some(field)) = (src, &e.field) {
            // "unknown field `x`" is reported on the table that holds it: point at `x`.
            let unknown = (e.message.strip_prefix("unknown field `"))
                .and_then(|m| m.split_once('`'))
                .map(|(k, _)| format!("{field}.{k}"));
            e.pos = unknown
                .and_then(|f| locate_field(src, &f))
                .or_else(|| locate_field(src, field));
        }
    }
    e
}

/// A step of a field path: a key, or an index into an array.
enum Step {
    Key(String),
    Index(usize),
}

/// `topology.leaves`, `workload[0].size`, `variants[1].set."cc.algorithm"` as steps;
/// `None` when it is not such a path.
fn path_steps(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut chars = path.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            '.' => {
                chars.next();
            }
            '[' => {
                chars.next();
                let digits: String = chars.by_ref().take_while(|&c| c != ']').collect();
                steps.push(Step::Index(digits.parse().ok()?));
            }
            '"' => {
                chars.next();
                let key: String = chars.by_ref().take_while(|&c| c != '"').collect();
                steps.push(Step::Key(key));
            }
            _ => {
                let mut key = String::new();
                while let Some(&c) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    key.push(c);
                    chars.next();
                }
                steps.push(Step::Key(key));
            }
        }
    }
    Some(steps)
}

/// Where the field at `path` is written in the TOML text `src`, as (line, column), both
/// 1-based: its key, or where the text has only part of the path (a missing field, a
/// value set by an override), the key or element of the deepest part it has. The
/// positions are toml's own spans (toml_edit, the parser under `toml`).
fn locate_field(src: &str, path: &str) -> Option<(usize, usize)> {
    use toml_edit::{Item, TableLike, Value};
    enum Node<'a> {
        Table(&'a dyn TableLike),
        Item(&'a Item),
        Value(&'a Value),
    }
    let doc = toml_edit::ImDocument::parse(src).ok()?;
    let mut node = Node::Table(doc.as_table());
    let mut at: Option<usize> = None;
    for step in path_steps(path)? {
        node = match (step, node) {
            (Step::Key(k), n) => {
                let table: Option<&dyn TableLike> = match n {
                    Node::Table(t) => Some(t),
                    Node::Item(i) => i.as_table_like(),
                    Node::Value(v) => v.as_inline_table().map(|t| t as &dyn TableLike),
                };
                let Some((key, item)) = table.and_then(|t| t.get_key_value(&k)) else {
                    break;
                };
                at = key.span().or_else(|| item.span()).map(|s| s.start).or(at);
                Node::Item(item)
            }
            (Step::Index(i), Node::Item(item)) => {
                if let Some(t) = item.as_array_of_tables().and_then(|a| a.get(i)) {
                    at = t.span().map(|s| s.start).or(at);
                    Node::Table(t)
                } else if let Some(v) = item.as_array().and_then(|a| a.get(i)) {
                    at = v.span().map(|s| s.start).or(at);
                    Node::Value(v)
                } else {
                    break;
                }
            }
            (Step::Index(i), Node::Value(v)) => {
                let Some(v) = v.as_array().and_then(|a| a.get(i)) else {
                    break;
                };
                at = v.span().map(|s| s.start).or(at);
                Node::Value(v)
            }
            (Step::Index(_), Node::Table(_)) => break,
        };
    }
    at.map(|offset| line_col(src, offset))
}

/// Line and column (1-based, the column in characters) of byte `offset` in `src`, as
/// the library reports TOML syntax errors.
fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |s| s.chars().count()) + 1;
    (line, col)
}

/// The text of a sweep coordinate's value, for matching `Scenario.run(point=...)`: a
/// value as `Scenario.set` reads it, written as run names write it (a string as it is,
/// anything else as TOML).
#[pyfunction]
fn coordinate_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = toml_value(value).map_err(pyo3::exceptions::PyTypeError::new_err)?;
    Ok(match v {
        toml::Value::String(s) => s,
        other => other.to_string(),
    })
}

fn run_error(py: Python<'_>, e: RunError) -> PyErr {
    match e {
        RunError::Input(e) => scenario_error(py, &e),
        // `out` cannot take the results, or writing them failed.
        RunError::Out(m) | RunError::Io(m) => PyOSError::new_err(m),
    }
}

/// A Python value as a TOML value, for `Scenario.set`. A string goes through the
/// CLI's `--set` parsing (TOML syntax if it parses, a bare string otherwise), so
/// `set("topology.leaves", "4")` and `--set topology.leaves=4` mean the same.
fn toml_value(v: &Bound<'_, PyAny>) -> Result<toml::Value, String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(
            v.extract::<bool>().map_err(|e| e.to_string())?,
        ));
    }
    if v.is_instance_of::<PyInt>() {
        return v
            .extract::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| "an integer out of the 64-bit range".to_string());
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(
            v.extract::<f64>().map_err(|e| e.to_string())?,
        ));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(scenario::parse_override_value(
            &s.to_cow().map_err(|e| e.to_string())?,
        ));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for x in v.try_iter().map_err(|e| e.to_string())? {
            out.push(toml_value(&x.map_err(|e| e.to_string())?)?);
        }
        return Ok(toml::Value::Array(out));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let k: String = k
                .extract()
                .map_err(|_| "a table key that is not a string".to_string())?;
            t.insert(k, toml_value(&x)?);
        }
        return Ok(toml::Value::Table(t));
    }
    let ty = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Err(format!(
        "a value of type `{ty}`; allowed: str (as after --set path=), int, float, bool, \
         list, dict"
    ))
}

/// A loaded scenario with its overrides applied.
#[pyclass(module = "fabricsim._native")]
struct NativeScenario {
    loaded: LoadedScenario,
}

#[pymethods]
impl NativeScenario {
    /// Loads a scenario file (relative data files resolve against its folder). A file
    /// that is not there raises `FileNotFoundError`; an error in the file carries the
    /// line and column of the field it is about.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        if let Err(e) = std::fs::metadata(&path) {
            if e.kind() == std::io::ErrorKind::NotFound {
                return Err(PyFileNotFoundError::new_err((
                    ENOENT,
                    "No such file or directory",
                    path.display().to_string(),
                )));
            }
        }
        fabricsim::load_file(&path, &[])
            .map(|loaded| NativeScenario { loaded })
            .map_err(|e| {
                let src = fabricsim::base::input_file::read_text(
                    &path,
                    fabricsim::base::input_file::MAX_SCENARIO_BYTES,
                );
                scenario_error(py, &located(e, src.ok().as_deref()))
            })
    }

    /// A scenario from TOML text; `file` names it in messages, `base_dir` is where
    /// relative data files resolve. An error carries the line and column of the field
    /// it is about.
    #[staticmethod]
    fn from_toml(py: Python<'_>, text: &str, file: &str, base_dir: PathBuf) -> PyResult<Self> {
        fabricsim::load_str(text, file, &base_dir, &[])
            .map(|loaded| NativeScenario { loaded })
            .map_err(|e| scenario_error(py, &located(e, Some(text))))
    }

    /// Every run the scenario stands for, as the command line expands it (variants x
    /// sweep points x `seeds` replicates; one run for a plain scenario): one dict per
    /// run, in the command line's order, with `name` (the run's name in tables and
    /// messages), `folder` (its results folder under `--out` when there are several),
    /// `variant`, `coords` (a list of (label, value text) pairs, the sweep axes then
    /// `replicate`) and `seed` (the seed it runs with).
    fn runs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let plan = runner::plan(&self.loaded, None).map_err(|e| scenario_error(py, &e))?;
        let multi = plan.len() > 1;
        plan.into_iter()
            .map(|p| {
                let m = p.meta;
                let d = PyDict::new(py);
                d.set_item("name", &m.name)?;
                d.set_item("folder", multi.then_some(&m.folder))?;
                d.set_item(
                    "variant",
                    (!self.loaded.scenario.variants.is_empty()).then_some(&m.variant),
                )?;
                d.set_item("coords", m.coords)?;
                d.set_item("seed", m.seed)?;
                Ok(d)
            })
            .collect()
    }

    /// Sets a field (`cc.algorithm`, `workload[0].size`) as `--set path=value` does;
    /// the scenario is checked again and stays as it was when the result is refused.
    fn set(&mut self, py: Python<'_>, path: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let file = self.loaded.file.clone();
        let value = toml_value(value)
            .map_err(|m| scenario_error(py, &ScenarioError::field(&file, path, m)))?;
        let mut table = self.loaded.table.clone();
        scenario::apply_override(&mut table, path.trim(), value, &file)
            .map_err(|e| scenario_error(py, &e))?;
        let sc = scenario::from_table(&table, &file).map_err(|e| scenario_error(py, &e))?;
        self.loaded.table = table;
        self.loaded.scenario = sc;
        Ok(())
    }

    /// The scenario as TOML, overrides applied (loads back to the same scenario).
    fn to_toml(&self) -> PyResult<String> {
        toml::to_string(&self.loaded.table).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    #[getter]
    fn file(&self) -> String {
        self.loaded.file.clone()
    }

    #[getter]
    fn base_dir(&self) -> PathBuf {
        self.loaded.base_dir.clone()
    }

    #[getter]
    fn name(&self) -> Option<String> {
        self.loaded.scenario.name.clone()
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.loaded.scenario.seed
    }

    /// What `fabricsim check` does: every run planned and built (the semantic checks
    /// and the memory budget), one at a time. Returns one dict per run; with
    /// `threads_per_run`, also how the run would be cut (`shards`, `threads`,
    /// `lookahead_ns`, `window_span_ns`, `notes`), as `check --threads-per-run`.
    #[pyo3(signature = (threads_per_run=None))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        threads_per_run: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let loaded = self.loaded.clone();
        let runs = py.detach(move || -> Result<Vec<_>, ScenarioError> {
            let plan = runner::plan(&loaded, None)?;
            plan.iter()
                .map(|p| {
                    let mut sim = p.build(&loaded)?;
                    let counts = (
                        p.meta.name.clone(),
                        sim.nics.hosts.len(),
                        sim.fabric.switches.len(),
                        sim.fabric.ports.len() / 2,
                        sim.nics.flows.len(),
                        sim.memory_estimate,
                    );
                    let cut = threads_per_run.map(|n| {
                        let notes = sim.set_threads_per_run(n);
                        (sim.parallel_work(), notes)
                    });
                    Ok((counts, cut))
                })
                .collect()
        });
        let runs = runs.map_err(|e| scenario_error(py, &e))?;
        runs.into_iter()
            .map(|((name, hosts, switches, links, flows, mem), cut)| {
                let d = PyDict::new(py);
                d.set_item("run", name)?;
                d.set_item("hosts", hosts)?;
                d.set_item("switches", switches)?;
                d.set_item("links", links)?;
                d.set_item("flows", flows)?;
                d.set_item("memory_estimate_bytes", mem)?;
                if let Some((work, notes)) = cut {
                    let (shards, threads, lookahead, span) = work.map_or((1, 1, None, None), |w| {
                        (
                            w.shards,
                            w.threads,
                            Some(w.lookahead_ns),
                            Some(w.window_span_ns),
                        )
                    });
                    d.set_item("shards", shards)?;
                    d.set_item("threads", threads)?;
                    d.set_item("lookahead_ns", lookahead)?;
                    d.set_item("window_span_ns", span)?;
                    d.set_item("notes", notes)?;
                }
                Ok(d)
            })
            .collect()
    }

    /// Runs the scenario (one run) with the GIL released. `tables`: the per-run tables
    /// to keep as data (file names; `None`: all); `report`: render `report.html`;
    /// `threads_per_run`: shards of the parallel engine (the same results whatever it is).
    /// `run`: the name of one of the scenario's runs ([`Self::runs`]); `None` for a
    /// scenario of one run.
    #[pyo3(signature = (seed=None, out=None, tables=None, report=true, threads_per_run=1, run=None))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        seed: Option<u64>,
        out: Option<PathBuf>,
        tables: Option<Vec<String>>,
        report: bool,
        threads_per_run: usize,
        run: Option<String>,
    ) -> PyResult<NativeResult> {
        let loaded = self.loaded.clone();
        let stop = AtomicBool::new(false);
        let interrupt: Mutex<Option<PyErr>> = Mutex::new(None);
        // Called where the run reports progress: a pending Ctrl-C (seen only on the
        // main thread) stops the run.
        let progress = |_: &fabricsim::sim::Progress| {
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                *interrupt.lock().expect("interrupt lock") = Some(e);
                stop.store(true, Ordering::Release);
            }
        };
        let res = py.detach(|| -> Result<Option<NativeResult>, RunError> {
            let Some((sim, r)) = runner::run_named(
                &loaded,
                run.as_deref(),
                seed,
                out.as_deref(),
                threads_per_run,
                Some(&stop),
                &progress,
            )?
            else {
                return Ok(None);
            };
            let keep = |f: &str| tables.as_ref().is_none_or(|t| t.iter().any(|x| x == f));
            let mut out_tables = Vec::new();
            for (file, cols) in output::run_tables_columns(&sim, &r.summary) {
                if keep(file) {
                    out_tables.push((file.to_string(), batch(&cols).map_err(arrow_bug)?));
                }
            }
            let summary_cols = output::comparison_columns(std::slice::from_ref(&r.summary));
            Ok(Some(NativeResult {
                tables: out_tables,
                summary: batch(&summary_cols).map_err(arrow_bug)?,
                summary_json: serde_json::to_string_pretty(&r.summary)
                    .map_err(|e| RunError::Io(e.to_string()))?,
                report_html: report.then(|| output::run_report_html(&sim, &r.summary)),
                outcome: r.outcome.name().to_string(),
                seed: r.summary.seed,
                invariant_violations: r.summary.invariant_violations.clone(),
                notes: r.notes.clone(),
            }))
        });
        match res {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(interrupt
                .into_inner()
                .expect("interrupt lock")
                .unwrap_or_else(|| PyKeyboardInterrupt::new_err("the run was stopped"))),
            Err(e) => Err(run_error(py, e)),
        }
    }
}

/// An Arrow error while building a batch from the sink's columns: they are equally long
/// by construction, so this is a bug.
fn arrow_bug(e: ArrowError) -> RunError {
    RunError::Io(format!("building an Arrow table: {e}"))
}

/// The sink's columns as one Arrow record batch (every field nullable).
fn batch(cols: &[Column]) -> Result<RecordBatch, ArrowError> {
    let mut fields = Vec::with_capacity(cols.len());
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(cols.len());
    for c in cols {
        let (ty, a): (DataType, ArrayRef) = match &c.data {
            ColumnData::Int64(v) => (DataType::Int64, Arc::new(Int64Array::from(v.clone()))),
            ColumnData::UInt64(v) => (DataType::UInt64, Arc::new(UInt64Array::from(v.clone()))),
            ColumnData::Float64(v) => (DataType::Float64, Arc::new(Float64Array::from(v.clone()))),
            ColumnData::Utf8(v) => (DataType::Utf8, Arc::new(StringArray::from(v.clone()))),
            ColumnData::Bool(v) => (DataType::Boolean, Arc::new(BooleanArray::from(v.clone()))),
        };
        fields.push(Field::new(&c.name, ty, true));
        arrays.push(a);
    }
    let rows = cols.first().map_or(0, |c| c.data.len());
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
}

/// An Arrow table Python reads through the Arrow PyCapsule interface.
#[pyclass(module = "fabricsim._native", frozen)]
struct ArrowTable {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowTable {
    /// The Arrow C stream interface: pyarrow (`pa.RecordBatchReader.from_stream`,
    /// `pa.table`) and other Arrow libraries take the table from it without a copy.
    /// `requested_schema` is ignored: the table has one schema.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = RecordBatchIterator::new(vec![Ok(self.batch.clone())], self.batch.schema());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        let name = CString::new("arrow_array_stream").expect("no NUL in the name");
        // The consumer moves the stream out and leaves a released one behind; dropping
        // the capsule drops (and releases) whatever is left.
        PyCapsule::new(py, stream, Some(name))
    }

    /// Rows.
    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    /// Column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

/// A finished run: its tables as Arrow, its summary, its report.
#[pyclass(module = "fabricsim._native", frozen)]
struct NativeResult {
    tables: Vec<(String, RecordBatch)>,
    summary: RecordBatch,
    summary_json: String,
    report_html: Option<String>,
    outcome: String,
    seed: u64,
    invariant_violations: Vec<String>,
    notes: Vec<String>,
}

#[pymethods]
impl NativeResult {
    /// The per-run tables this result holds (file names, in the CLI's order).
    fn table_names(&self) -> Vec<String> {
        self.tables.iter().map(|(n, _)| n.clone()).collect()
    }

    /// A per-run table (`flows.csv`, ...), `None` when the run does not have it.
    fn table(&self, name: &str) -> Option<ArrowTable> {
        self.tables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| ArrowTable { batch: b.clone() })
    }

    /// The run's `comparison.csv` row: its headline figures.
    fn summary(&self) -> ArrowTable {
        ArrowTable {
            batch: self.summary.clone(),
        }
    }

    /// `summary.json`, as text.
    #[getter]
    fn summary_json(&self) -> &str {
        &self.summary_json
    }

    /// `report.html`, as text (`None` when not rendered).
    #[getter]
    fn report_html(&self) -> Option<&str> {
        self.report_html.as_deref()
    }

    /// How the run ended (`completed`, `stalled`, `max_time`, ...).
    #[getter]
    fn outcome(&self) -> &str {
        &self.outcome
    }

    /// The seed the run ran with (a replicate's own, derived from the scenario's).
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// Broken simulator invariants (a bug when not empty).
    #[getter]
    fn invariant_violations(&self) -> Vec<String> {
        self.invariant_violations.clone()
    }

    /// What the run said about how it ran (fewer shards than asked for, and why).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

/// Sets the memory the runs of this process may hold (`"8GiB"`), as `--max-memory`;
/// `None` restores the default (80% of what the process may use). A limit above the
/// memory the process can have at all needs `force=True`, as `--force`.
#[pyfunction]
#[pyo3(signature = (limit, force = false))]
fn set_max_memory(py: Python<'_>, limit: Option<&str>, force: bool) -> PyResult<()> {
    use fabricsim::scenario::budget;
    let refuse =
        |m: String| scenario_error(py, &ScenarioError::field("set_max_memory", "limit", m));
    let b = match limit {
        None => 0,
        Some(l) => budget::parse_limit(l).map_err(refuse)?,
    };
    if let Some((room, what)) = budget::machine_memory().filter(|(room, _)| b > *room) {
        if !force {
            return Err(refuse(format!(
                "{}: above the {} this process can have ({what}); give at most that, or \
                 force=True to allow it",
                limit.unwrap_or_default(),
                budget::approx_bytes(room)
            )));
        }
    }
    fabricsim::scenario::budget::set_limit(b);
    Ok(())
}

/// The memory limit runs are checked against, in bytes, and where it comes from
/// (`set_max_memory`, or the machine's default).
#[pyfunction]
fn memory_limit() -> (u64, String) {
    fabricsim::scenario::budget::limit()
}

/// The version of the simulator this module was built from.
const VERSION: &str = env!("CARGO_PKG_VERSION");

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeScenario>()?;
    m.add_class::<NativeResult>()?;
    m.add_class::<ArrowTable>()?;
    m.add_function(wrap_pyfunction!(set_max_memory, m)?)?;
    m.add_function(wrap_pyfunction!(memory_limit, m)?)?;
    m.add_function(wrap_pyfunction!(coordinate_text, m)?)?;
    m.add("__version__", VERSION)?;
    Ok(())
}
