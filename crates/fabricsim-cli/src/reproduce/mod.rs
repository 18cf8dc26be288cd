//! `fabricsim reproduce`: reruns the scenarios behind the results documents
//! (`docs/results/*.md`) and regenerates their tables from the runs' outputs.
//!
//! A document's tables live between `<!-- generated:NAME begin -->` and
//! `<!-- generated:NAME end -->` markers ([`blocks`]); the prose around them is
//! hand-written and restates no number a table holds. Each regenerated document gets two
//! more blocks: `claims` (the source document's claims beside ours, with a computed
//! verdict: [`claims`]) and `provenance` (the commit and the command that made the
//! tables). `docs/results/README.md` gathers every document's claims on one page.
//!
//! Runs go under `--out` (default `target/reproduce/` in the repository), one folder per
//! document and job; a job whose stamp (`<job>.reproduce.json`: the commit and a hash of
//! the scenario file, its overrides and seed) matches is not rerun, and an interrupted
//! job resumes its finished runs. Nothing is written outside `--out` except the
//! documents themselves, and with `--check` not even those: the tables are regenerated in
//! memory and compared with the committed ones (exit 1 and a summary of the differences
//! when one differs).
//!
//! A document's generator is one file in `docs/` and one word in its `registry!` line.

mod blocks;
mod claims;
mod data;
mod docs;
mod table;

use fabricsim::run::runner::{self, Control, RunError, RunOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

pub use data::Runs;

/// A results document and how it is made.
pub struct Doc {
    /// Its name on the command line: the file name without `.md`.
    pub name: &'static str,
    /// Its path from the repository root.
    pub file: &'static str,
    /// The source whose claims it tests: a document ("000".."004"), "pub" for published
    /// measurements beyond the documents (nccl-tests tables), "-" for none.
    pub source: &'static str,
    pub made: Made,
}

/// How a results document is made.
pub enum Made {
    /// By `reproduce`: these jobs, then this generator. `fast`: CI checks it on every
    /// change (`reproduce --fast --check`); the fast documents' jobs together must stay
    /// under about two minutes on 2 cores.
    Reproduce {
        fast: bool,
        jobs: &'static [Job],
        generate: fn(&Runs) -> Result<Generated, String>,
    },
    /// By `fabricsim bench` (its own tables and plots).
    Bench,
}

impl Doc {
    pub const fn other(
        name: &'static str,
        file: &'static str,
        source: &'static str,
        made: Made,
    ) -> Doc {
        Doc {
            name,
            file,
            source,
            made,
        }
    }

    fn fast(&self) -> bool {
        matches!(self.made, Made::Reproduce { fast: true, .. })
    }

    fn jobs(&self) -> &'static [Job] {
        match self.made {
            Made::Reproduce { jobs, .. } => jobs,
            _ => &[],
        }
    }
}

/// One scenario run for a document: `fabricsim run SCENARIO --set ... [--seed N]`.
pub struct Job {
    /// Its folder under `--out/<doc>/`, and its name in the generator.
    pub name: &'static str,
    /// Scenario file from the repository root.
    pub scenario: &'static str,
    pub set: &'static [&'static str],
    pub seed: Option<u64>,
}

impl Job {
    /// The scenario `scenario` as it is (its own seed, no overrides), as job `name`.
    pub const fn plain(name: &'static str, scenario: &'static str) -> Job {
        Job {
            name,
            scenario,
            set: &[],
            seed: None,
        }
    }

    /// [`Job::plain`] with the seed `seed`.
    pub const fn seeded(name: &'static str, scenario: &'static str, seed: u64) -> Job {
        Job {
            seed: Some(seed),
            ..Job::plain(name, scenario)
        }
    }

    fn command(&self) -> String {
        let mut s = format!("fabricsim run {}", self.scenario);
        for o in self.set {
            s.push_str(&format!(" --set '{o}'"));
        }
        if let Some(seed) = self.seed {
            s.push_str(&format!(" --seed {seed}"));
        }
        s
    }
}

/// What a generator makes: named blocks (Markdown) and the claims table's rows.
pub struct Generated {
    pub blocks: Vec<(String, String)>,
    pub claims: Vec<claims::Claim>,
}

/// The sources whose claims the claims page gathers, one table each: the five documents
/// (`docs/sources.md`), then published measurements beyond them.
const SOURCES: [&str; 6] = ["000", "001", "002", "003", "004", "pub"];

/// The page that gathers every document's claims.
const CLAIMS_PAGE: &str = "docs/results/README.md";

/// Blocks that record how and when tables were made: not compared by `--check` (they
/// name the commit, which moves with every change).
const PROVENANCE: &str = "provenance";

pub struct Args {
    pub docs: Vec<String>,
    pub out: Option<PathBuf>,
    pub root: Option<PathBuf>,
    pub check: bool,
    pub fast: bool,
    pub fresh: bool,
    pub list: bool,
    pub threads: usize,
}

fn all_docs() -> impl Iterator<Item = &'static Doc> {
    docs::GENERATED.iter().chain(docs::OTHER)
}

fn input_error(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

/// The repository root: `--root`, else the nearest folder at or above the current one
/// with `docs/results` and `scenarios`.
fn find_root(given: Option<PathBuf>) -> Result<PathBuf, String> {
    let ok = |p: &Path| p.join("docs/results").is_dir() && p.join("scenarios").is_dir();
    if let Some(r) = given {
        return if ok(&r) {
            Ok(r)
        } else {
            Err(format!(
                "--root {}: not a fabricsim repository (no docs/results/ and scenarios/ in it)",
                r.display()
            ))
        };
    }
    let cwd = std::env::current_dir().map_err(|e| format!("the current folder: {e}"))?;
    cwd.ancestors()
        .find(|p| ok(p))
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            format!(
                "no fabricsim repository at or above {} (no docs/results/ and scenarios/): \
                 run it inside the repository or give --root",
                cwd.display()
            )
        })
}

fn select(args: &Args) -> Result<Vec<&'static Doc>, String> {
    let names = || {
        docs::GENERATED
            .iter()
            .map(|d| d.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if args.fast {
        if !args.docs.is_empty() {
            return Err(
                "--fast selects the fast documents: give it or document names, not both".into(),
            );
        }
        return Ok(docs::GENERATED.iter().filter(|d| d.fast()).collect());
    }
    if args.docs.is_empty() {
        return Err(format!(
            "name the documents to reproduce ({}), `all`, or --fast",
            names()
        ));
    }
    let mut out: Vec<&'static Doc> = Vec::new();
    for n in &args.docs {
        let n = n.trim_end_matches(".md");
        let n = n.rsplit('/').next().unwrap_or(n);
        if n == "all" {
            out.extend(docs::GENERATED.iter());
            continue;
        }
        match all_docs().find(|d| d.name == n) {
            Some(
                d @ Doc {
                    made: Made::Reproduce { .. },
                    ..
                },
            ) => out.push(d),
            Some(
                d @ Doc {
                    made: Made::Bench, ..
                },
            ) => {
                return Err(format!(
                    "{}: made by scripts/bench-doc.sh, not by reproduce",
                    d.file
                ))
            }
            None => {
                let all: Vec<&str> = all_docs().map(|d| d.name).collect();
                let hint = fabricsim::base::suggest::did_you_mean(n, all.iter().copied());
                return Err(format!(
                    "unknown document `{n}`{hint} (documents reproduce regenerates: {}, or `all`)",
                    names()
                ));
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|d| seen.insert(d.name));
    Ok(out)
}

fn list() -> ExitCode {
    let mut t = table::Table::new(&["document", "source", "made by", "CI", ">jobs"]);
    for d in all_docs() {
        let made = match d.made {
            Made::Reproduce { .. } => "fabricsim reproduce",
            Made::Bench => "scripts/bench-doc.sh",
        };
        t.row(vec![
            d.file.into(),
            d.source.into(),
            made.into(),
            if d.fast() { "checked" } else { "-" }.into(),
            d.jobs().len().to_string(),
        ]);
    }
    print!("{}", t.render());
    ExitCode::SUCCESS
}

/// The stamp of a job's runs: what they were made from.
fn stamp(root: &Path, job: &Job) -> Result<String, String> {
    let path = root.join(job.scenario);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut key = bytes;
    for s in job.set {
        key.extend_from_slice(b"\0set\0");
        key.extend_from_slice(s.as_bytes());
    }
    key.extend_from_slice(format!("\0seed\0{:?}", job.seed).as_bytes());
    let hash = fabricsim::base::seed::fnv1a64(&key);
    Ok(serde_json::json!({
        "commit": fabricsim::output::summary::GIT_COMMIT,
        "version": fabricsim::output::summary::VERSION,
        "inputs": format!("{hash:016x}"),
    })
    .to_string())
}

/// Where the stamp of `job` of `doc` is kept: beside the job's folder.
fn stamp_path(out: &Path, doc: &Doc, job: &Job) -> PathBuf {
    out.join(doc.name)
        .join(format!("{}.reproduce.json", job.name))
}

/// Whether the job's runs are there, made from the same commit and inputs. A build
/// whose commit is unknown never reuses.
fn stamped(out: &Path, doc: &Doc, job: &Job, want: &str) -> bool {
    fabricsim::output::summary::GIT_COMMIT != "unknown"
        && std::fs::symlink_metadata(stamp_path(out, doc, job)).is_ok_and(|m| m.is_file())
        && std::fs::read_to_string(stamp_path(out, doc, job)).is_ok_and(|s| s == want)
}

/// Makes `dir` (and its parents) as a folder that is not a symbolic link.
fn make_folder(dir: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "{} is a symbolic link: reproduce never writes through one",
            dir.display()
        )),
        Ok(m) if !m.is_dir() => Err(format!("{} exists and is not a folder", dir.display())),
        Ok(_) => Ok(()),
        Err(_) => std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display())),
    }
}

struct Work<'a> {
    doc: &'a Doc,
    job: &'a Job,
    stamp: String,
    runs: usize,
}

enum Failure {
    Input(String),
    Other(String),
    Broken(String),
}

fn run_job(root: &Path, out: &Path, w: &Work, threads: usize) -> Result<(), Failure> {
    let dir = out.join(w.doc.name);
    make_folder(&dir).map_err(Failure::Other)?;
    let sp = stamp_path(out, w.doc, w.job);
    // An interrupted job whose stamp matched keeps its finished runs (`--resume`).
    let resume = std::fs::read_to_string(&sp).is_ok_and(|s| s == format!("partial {}", w.stamp));
    let file = root.join(w.job.scenario);
    let set: Vec<String> = w.job.set.iter().map(|s| s.to_string()).collect();
    let loaded = fabricsim::load_file(&file, &set).map_err(|e| Failure::Input(e.to_string()))?;
    let write_stamp = |text: String| {
        let name = sp.file_name().and_then(|n| n.to_str()).expect("ours");
        // Through a temporary file and a rename, which replaces the old stamp (or a link
        // in its place) and never writes through it.
        fabricsim::output::write_file(&dir, name, |f| f.write_all(text.as_bytes()))
            .map_err(|e| Failure::Other(format!("{}: {e}", sp.display())))
    };
    write_stamp(format!("partial {}", w.stamp))?;
    let opts = RunOptions {
        out: Some(dir.join(w.job.name)),
        seed: w.job.seed,
        threads,
        threads_per_run: 1,
    };
    let ctl = Control {
        resume,
        ..Control::default()
    };
    let started = Instant::now();
    let sweep = runner::run_sweep(&loaded, &opts, ctl, &|_, _| {}).map_err(|e| match e {
        RunError::Input(e) => Failure::Input(e.to_string()),
        RunError::Out(e) => Failure::Input(e),
        RunError::Io(e) => Failure::Other(e),
    })?;
    let broken: Vec<String> = sweep
        .rows
        .iter()
        .flat_map(|s| {
            s.invariant_violations
                .iter()
                .map(move |v| format!("{}: {v}", s.variant))
        })
        .collect();
    if !broken.is_empty() {
        return Err(Failure::Broken(broken.join("; ")));
    }
    write_stamp(w.stamp.clone())?;
    eprintln!(
        "{}/{}: {} runs in {:.1} s{}",
        w.doc.name,
        w.job.name,
        sweep.rows.len(),
        started.elapsed().as_secs_f64(),
        if sweep.reused.is_empty() {
            String::new()
        } else {
            format!(" ({} kept from an interrupted run)", sweep.reused.len())
        }
    );
    Ok(())
}

/// Runs the jobs: those with at least as many runs as threads one after another, each on
/// every thread (the runner spreads its runs); the smaller ones side by side, a thread
/// each.
fn run_all(root: &Path, out: &Path, mut work: Vec<Work>, threads: usize) -> Result<(), Failure> {
    work.sort_by_key(|w| std::cmp::Reverse(w.runs));
    let (big, small): (Vec<Work>, Vec<Work>) = work.into_iter().partition(|w| w.runs >= threads);
    for w in &big {
        run_job(root, out, w, threads)?;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let first_error: std::sync::Mutex<Option<Failure>> = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..threads.min(small.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(w) = small.get(i) else { break };
                let per = (threads / small.len().max(1)).max(1);
                if let Err(e) = run_job(root, out, w, per) {
                    first_error.lock().expect("lock").get_or_insert(e);
                    // The others finish what they run; no new job starts.
                    next.store(small.len(), std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    match first_error.into_inner().expect("lock") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The provenance block of a document.
fn provenance(doc: &Doc) -> String {
    let mut s = format!(
        "Tables generated by `fabricsim reproduce {}` at commit `{}` from:\n\n",
        doc.name,
        fabricsim::output::summary::GIT_COMMIT
    );
    for j in doc.jobs() {
        s.push_str(&format!("- `{}`\n", j.command()));
    }
    s
}

/// The claims page: one table per source document, gathered from the documents' claims
/// blocks (as regenerated now, or as committed for the others).
fn claims_page(texts: &[(&Doc, String)]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut index = table::Table::new(&["document", "source", "made by", "checked by CI"]);
    for d in all_docs() {
        let made = match d.made {
            Made::Reproduce { .. } => format!("`fabricsim reproduce {}`", d.name),
            Made::Bench => {
                "`scripts/bench-doc.sh` (from its measurements; CI renders it again)".into()
            }
        };
        let name = d.file.rsplit('/').next().unwrap_or(d.file);
        index.row(vec![
            format!("[{name}]({name})"),
            d.source.into(),
            made,
            if d.fast() { "yes" } else { "no" }.into(),
        ]);
    }
    out.push(("documents".to_string(), index.render()));
    let mut totals = table::Table::new(&[
        "source",
        ">reproduced",
        ">within tolerance",
        ">not reproduced",
        ">qualitative",
    ]);
    for source in SOURCES {
        let mut t = table::Table::new(&[
            "claim",
            "document",
            "ours",
            "tolerance",
            "verdict",
            "results",
        ]);
        let mut count = [0usize; 4];
        for (d, text) in texts.iter().filter(|(d, _)| d.source == source) {
            let Some(b) = blocks::parse(text)
                .map_err(|e| format!("{}: {e}", d.file))?
                .into_iter()
                .find(|b| b.name == "claims")
            else {
                continue;
            };
            let name = d.file.rsplit('/').next().unwrap_or(d.file);
            for mut row in claims::rows_of(&b.content) {
                if row.len() != claims::HEADER.len() {
                    return Err(format!(
                        "{}: a claims row is not {:?}: {row:?}",
                        d.file,
                        claims::HEADER
                    ));
                }
                if let Some(i) = claims::Verdict::ALL.iter().position(|v| v.name() == row[4]) {
                    count[i] += 1;
                }
                row.push(format!("[{name}]({name})"));
                t.row(row);
            }
        }
        out.push((format!("claims-{source}"), t.render()));
        totals.row(
            std::iter::once(source.to_string())
                .chain(count.iter().map(|c| c.to_string()))
                .collect(),
        );
    }
    out.push(("totals".to_string(), totals.render()));
    out.push((
        PROVENANCE.to_string(),
        format!(
            "Gathered by `fabricsim reproduce` at commit `{}` from the documents' `claims` blocks.\n",
            fabricsim::output::summary::GIT_COMMIT
        ),
    ));
    Ok(out)
}

/// The blocks of `old` and `new` that differ (provenance aside), with a few lines of
/// each side.
fn differences(file: &str, old: &str, new: &str) -> Result<Vec<String>, String> {
    let a = blocks::parse(old).map_err(|e| format!("{file}: {e}"))?;
    let b = blocks::parse(new).map_err(|e| format!("{file}: {e}"))?;
    let mut out = Vec::new();
    for nb in b.iter().filter(|b| b.name != PROVENANCE) {
        let ob = a
            .iter()
            .find(|x| x.name == nb.name)
            .map_or("", |x| x.content.as_str());
        if ob == nb.content {
            continue;
        }
        let ol: Vec<&str> = ob.lines().collect();
        let nl: Vec<&str> = nb.content.lines().collect();
        let mut s = format!("{file}: table `{}` differs from the runs", nb.name);
        let mut shown = 0;
        for i in 0..ol.len().max(nl.len()) {
            let (x, y) = (ol.get(i), nl.get(i));
            if x != y {
                if shown == 4 {
                    s.push_str("\n    ...");
                    break;
                }
                if let Some(x) = x {
                    s.push_str(&format!("\n  - {x}"));
                }
                if let Some(y) = y {
                    s.push_str(&format!("\n  + {y}"));
                }
                shown += 1;
            }
        }
        out.push(s);
    }
    Ok(out)
}

fn write_doc(root: &Path, file: &str, text: &str) -> Result<(), String> {
    let path = root.join(file);
    let dir = path.parent().expect("in docs/results");
    let name = path.file_name().and_then(|n| n.to_str()).expect("a file");
    fabricsim::output::write_file(dir, name, |w| w.write_all(text.as_bytes()))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

pub fn main(args: Args) -> ExitCode {
    if args.list {
        return list();
    }
    let root = match find_root(args.root.clone()) {
        Ok(r) => r,
        Err(e) => return input_error(e),
    };
    let selected = match select(&args) {
        Ok(s) => s,
        Err(e) => return input_error(e),
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("target").join("reproduce"));
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    // Everything that can be wrong with the input is found before anything runs: the
    // documents' markers, the scenarios.
    let mut texts: Vec<(&Doc, String)> = Vec::new();
    for d in all_docs() {
        let p = root.join(d.file);
        match fabricsim::base::input_file::read_text(&p, 16 << 20) {
            Ok(t) => {
                if let Err(e) = blocks::parse(&t) {
                    return input_error(format!("{}: {e}", p.display()));
                }
                texts.push((d, t));
            }
            Err(e) if selected.iter().any(|s| s.name == d.name) => {
                return input_error(e.in_file(&p))
            }
            Err(_) => {}
        }
    }
    let page_path = root.join(CLAIMS_PAGE);
    let page = match fabricsim::base::input_file::read_text(&page_path, 16 << 20) {
        Ok(t) => t,
        Err(e) => return input_error(e.in_file(&page_path)),
    };
    if let Err(e) = make_folder(&out) {
        return input_error(format!("--out: {e}"));
    }
    let mut work = Vec::new();
    let mut kept = 0;
    for d in &selected {
        for j in d.jobs() {
            let file = root.join(j.scenario);
            let set: Vec<String> = j.set.iter().map(|s| s.to_string()).collect();
            let runs =
                match fabricsim::load_file(&file, &set).and_then(|l| runner::plan(&l, j.seed)) {
                    Ok(p) => p.len(),
                    Err(e) => return input_error(format!("{}/{}: {e}", d.name, j.name)),
                };
            let s = match stamp(&root, j) {
                Ok(s) => s,
                Err(e) => return input_error(e),
            };
            if !args.fresh && stamped(&out, d, j, &s) {
                kept += 1;
                continue;
            }
            work.push(Work {
                doc: d,
                job: j,
                stamp: s,
                runs,
            });
        }
    }
    if kept > 0 {
        eprintln!(
            "{kept} job{} already in {} from this commit and the same scenarios: not rerun \
             (--fresh reruns them)",
            if kept == 1 { "" } else { "s" },
            out.display()
        );
    }
    let started = Instant::now();
    match run_all(&root, &out, work, threads) {
        Ok(()) => {}
        Err(Failure::Input(e)) => return input_error(e),
        Err(Failure::Other(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        Err(Failure::Broken(e)) => {
            eprintln!("error: invariant violated: {e}");
            return ExitCode::from(3);
        }
    }
    eprintln!("runs done in {:.1} s", started.elapsed().as_secs_f64());
    // Regenerate every selected document in memory.
    let mut changed: Vec<(String, String, String)> = Vec::new();
    for d in &selected {
        let Made::Reproduce { generate, .. } = d.made else {
            continue;
        };
        let runs = Runs {
            dir: out.join(d.name),
        };
        let mut g = match generate(&runs) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("error: {}: generating its tables: {e}", d.file);
                return ExitCode::from(1);
            }
        };
        g.blocks.push(("claims".into(), claims::table(&g.claims)));
        g.blocks.push((PROVENANCE.into(), provenance(d)));
        let entry = texts
            .iter_mut()
            .find(|(x, _)| x.name == d.name)
            .expect("read above");
        let new = match blocks::replace(&entry.1, &g.blocks) {
            Ok(t) => t,
            Err(e) => return input_error(format!("{}: {e}", d.file)),
        };
        changed.push((d.file.to_string(), entry.1.clone(), new.clone()));
        entry.1 = new;
    }
    let page_blocks = match claims_page(&texts) {
        Ok(b) => b,
        Err(e) => return input_error(e),
    };
    match blocks::replace(&page, &page_blocks) {
        Ok(new) => changed.push((CLAIMS_PAGE.to_string(), page, new)),
        Err(e) => return input_error(format!("{CLAIMS_PAGE}: {e}")),
    }
    if args.check {
        let mut diffs = Vec::new();
        for (file, old, new) in &changed {
            match differences(file, old, new) {
                Ok(d) => diffs.extend(d),
                Err(e) => return input_error(e),
            }
        }
        if diffs.is_empty() {
            eprintln!(
                "check: the tables of {} and {CLAIMS_PAGE} match the runs",
                selected
                    .iter()
                    .map(|d| d.file)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return ExitCode::SUCCESS;
        }
        for d in &diffs {
            eprintln!("{d}");
        }
        eprintln!(
            "check: {} table{} differ{} from the runs; regenerate with `fabricsim reproduce {}` \
             and commit the result",
            diffs.len(),
            if diffs.len() == 1 { "" } else { "s" },
            if diffs.len() == 1 { "s" } else { "" },
            selected
                .iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
                .join(" ")
        );
        return ExitCode::from(1);
    }
    for (file, old, new) in &changed {
        if old != new {
            if let Err(e) = write_doc(&root, file, new) {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
            eprintln!("wrote {file}");
        }
    }
    ExitCode::SUCCESS
}
