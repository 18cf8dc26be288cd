//! The `fabricsim` command line: run, check, list, bench, reproduce.
//!
//! Exit status: 0 on success, 1 when a run stalled or did not finish its flows, 2 on bad
//! input (the message names the file, the field and what is allowed) and on an `--out`
//! that cannot take the results (found before anything is simulated), 3 when a run broke
//! one of the simulator's invariants (`fabricsim::analysis::invariants`; a bug, named on stderr),
//! 130 or 143 when `run` was interrupted by SIGINT or SIGTERM (128 + the signal, as a
//! shell reports it): the runs that finished are written, with the tables across runs
//! and `sweep.json` naming the unfinished ones, which `run --resume` then completes. A
//! second signal exits at once.
//!
//! There is no default results folder: without `--out` a run writes nothing, so no
//! scenario name can choose where files go. With it, every file lands in `--out` or in a
//! run folder directly inside it, named by `scenario::folder_name`.

use clap::{Parser, Subcommand};
use fabricsim::run::runner::{self, RunError, RunOptions};
use fabricsim::sim::Outcome;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod huge_pages;
mod list;
mod progress;
mod reproduce;

/// Large buffers on transparent huge pages where the kernel gives them on request: the
/// model of a large fabric is touched nearly at random (`huge_pages`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOCATOR: huge_pages::HugePageHint = huge_pages::HugePageHint;

#[derive(Parser)]
#[command(
    name = "fabricsim",
    version,
    about = "Fast, deterministic packet-level simulator of AI/HPC datacenter networks"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario (all its variants) and write results.
    Run {
        /// Scenario file (TOML).
        file: PathBuf,
        /// Results folder (without it, nothing is written). Runs of a scenario with
        /// variants or sweeps each get a folder inside it.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seed (overrides the scenario's).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a field: --set path=value (repeatable), e.g. --set cc.algorithm=none.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Threads each run is cut into (a parallel engine; default 1). The results are
        /// the same bytes whatever it is; a run the parallel engine cannot cut so finely
        /// runs on fewer shards or on one thread, with a note.
        #[arg(long, default_value_t = 1)]
        threads_per_run: usize,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Memory the runs may hold together (e.g. 8GiB); default: 80% of what the
        /// process may use. A run estimated above it is refused before it is built.
        #[arg(long, value_name = "BYTES")]
        max_memory: Option<String>,
        /// Allow a --max-memory above the memory this process can have at all (the
        /// machine's, the cgroup's, the ulimits): runs may then be killed for memory.
        #[arg(long)]
        force: bool,
        /// Continue an interrupted run into the same --out: runs whose folder holds their
        /// results (a `summary.json` and the same `scenario.resolved.toml`) are kept,
        /// the others run; the tables across runs cover them all.
        #[arg(long, requires = "out")]
        resume: bool,
    },
    /// Validate a scenario without running it.
    Check {
        /// Scenario file.
        file: PathBuf,
        /// Overrides, as for run.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Memory limit to check against, as for run.
        #[arg(long, value_name = "BYTES")]
        max_memory: Option<String>,
        /// Allow a --max-memory above the memory this process can have, as for run.
        #[arg(long)]
        force: bool,
        /// Also say how each run would be cut for this many threads per run, as for run:
        /// shards, threads, lookahead and window span, or why fewer shards.
        #[arg(long)]
        threads_per_run: Option<usize>,
    },
    /// List every model with its parameters and defaults.
    List {
        /// Only this section and what is under it: `fabric` (every [fabric.*]),
        /// `fabric.pfc`, `cc`, `cc.dcqcn`, `workload`, `workload.poisson`, `record.pcap`...
        section: Option<String>,
    },
    /// Rerun the scenarios behind results documents (docs/results/) and regenerate
    /// their tables, claims and the claims page (docs/results/README.md).
    Reproduce {
        /// Documents to regenerate (`longhaul`, `docs/results/longhaul.md`), or `all`.
        docs: Vec<String>,
        /// Folder of the runs, one per document and job (default: target/reproduce in
        /// the repository). Jobs already there from this commit and the same scenario
        /// are not rerun.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Repository root (default: the nearest folder at or above the current one with
        /// docs/results/ and scenarios/).
        #[arg(long)]
        root: Option<PathBuf>,
        /// Regenerate in memory and compare with the documents: exit 1, naming each
        /// table that differs, when one does. Writes no document.
        #[arg(long)]
        check: bool,
        /// The documents CI checks: those whose runs take about a minute on 2 cores.
        #[arg(long)]
        fast: bool,
        /// Rerun every job, even those already in --out.
        #[arg(long)]
        fresh: bool,
        /// List the results documents, how each is made and whether CI checks it.
        #[arg(long)]
        list: bool,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
    /// Run the fixed benchmarks and print packet-hops/s, events/s, wall time, peak RSS.
    Bench {
        /// Only this fat-tree radix (even, 2..=74); default 8 and 16.
        #[arg(long)]
        k: Option<u32>,
        /// Runs per case (1..=100); the median is reported.
        #[arg(long, default_value_t = 3)]
        repeat: u32,
        /// Instead: the long-haul pair (two campuses, DCI of 120 km vs 1 us), interleaved.
        #[arg(long)]
        long_haul: bool,
        /// Internal: run one case in this process and print one line of JSON.
        #[arg(long, hide = true)]
        child: bool,
        /// Internal (with --child): the long-haul case with this DCI fibre length.
        #[arg(long, hide = true)]
        km: Option<f64>,
        /// Also run each case cut into this many threads (the parallel engine), beside
        /// the run on one, and print the speedup.
        #[arg(long, default_value_t = 1)]
        threads_per_run: usize,
    },
}

fn main() -> ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    huge_pages::read_environment();
    // A reader that closed the pipe (`fabricsim check ... | head`) ends the process as it
    // ends other Unix tools, quietly, rather than making the next print panic (Rust
    // ignores SIGPIPE by default). Files go through temporary names and a rename, so
    // what was written stays whole.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default action, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if cli.cmd.cuts_runs() {
        huge_pages::one_heap();
    }
    match cli.cmd {
        Cmd::Run {
            file,
            out,
            seed,
            set,
            threads,
            threads_per_run,
            quiet,
            max_memory,
            force,
            resume,
        } => match check_threads("--threads-per-run", threads_per_run, 1)
            .and_then(|()| check_threads("--threads", threads, 0))
            .and_then(|()| set_max_memory(max_memory, force))
        {
            Ok(()) => {
                let opts = RunOptions {
                    out,
                    seed,
                    threads,
                    threads_per_run,
                };
                cmd_run(file, opts, set, quiet, resume)
            }
            Err(e) => e,
        },
        Cmd::Check {
            file,
            set,
            max_memory,
            force,
            threads_per_run,
        } => match threads_per_run
            .map_or(Ok(()), |n| check_threads("--threads-per-run", n, 1))
            .and_then(|()| set_max_memory(max_memory, force))
        {
            Ok(()) => cmd_check(file, set, threads_per_run),
            Err(e) => e,
        },
        Cmd::Reproduce {
            docs,
            out,
            root,
            check,
            fast,
            fresh,
            list,
            threads,
        } => match check_threads("--threads", threads, 0) {
            Ok(()) => reproduce::main(reproduce::Args {
                docs,
                out,
                root,
                check,
                fast,
                fresh,
                list,
                threads,
            }),
            Err(e) => e,
        },
        Cmd::List { section: None } => {
            print!("{}", list::text());
            ExitCode::SUCCESS
        }
        Cmd::List {
            section: Some(section),
        } => match list::listing().filtered(&section) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => input_error(e),
        },
        Cmd::Bench {
            k,
            repeat,
            long_haul,
            child,
            km,
            threads_per_run,
        } => cmd_bench(k, repeat, long_haul, child, km, threads_per_run),
    }
}

impl Cmd {
    /// Whether the command runs models cut into shards, each on a thread of its own.
    #[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
    fn cuts_runs(&self) -> bool {
        match self {
            Cmd::Run {
                threads_per_run, ..
            }
            | Cmd::Bench {
                threads_per_run, ..
            } => *threads_per_run > 1,
            _ => false,
        }
    }
}

fn input_error(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

/// Most threads `--threads` and `--threads-per-run` take, on `run`, `check` and `bench`
/// alike.
const MAX_THREADS: usize = 1024;

/// Checks a thread count argument: `least..=MAX_THREADS` (`--threads 0`: one per core).
fn check_threads(arg: &str, n: usize, least: usize) -> Result<(), ExitCode> {
    if (least..=MAX_THREADS).contains(&n) {
        return Ok(());
    }
    let zero = if least == 0 { " (0: one per core)" } else { "" };
    Err(input_error(format!(
        "{arg} {n}: must be between {least} and {MAX_THREADS}{zero}"
    )))
}

/// Applies `--max-memory` for every run this process builds; above the memory the
/// process can have at all only with `--force`.
fn set_max_memory(v: Option<String>, force: bool) -> Result<(), ExitCode> {
    use fabricsim::scenario::budget;
    if let Some(v) = v {
        let b = budget::parse_limit(&v).map_err(|e| input_error(format!("--max-memory: {e}")))?;
        if let Some((room, what)) = budget::machine_memory().filter(|(room, _)| b > *room) {
            if !force {
                return Err(input_error(format!(
                    "--max-memory {v}: above the {} this process can have ({what}), so a \
                     run it admits could be killed for memory; give at most that, or add \
                     --force to allow it",
                    budget::approx_bytes(room)
                )));
            }
        }
        budget::set_limit(b);
    }
    Ok(())
}

fn cmd_check(file: PathBuf, set: Vec<String>, threads_per_run: Option<usize>) -> ExitCode {
    let loaded = match fabricsim::load_file(&file, &set) {
        Ok(l) => l,
        Err(e) => return input_error(e),
    };
    let plan = match runner::plan(&loaded, None) {
        Ok(p) => p,
        Err(e) => return input_error(e),
    };
    // One run at a time: a sweep of thousands of runs is checked in the memory of one.
    for p in &plan {
        match p.build(&loaded) {
            Ok(mut sim) => {
                println!(
                    "{}: ok: variant {}: {} hosts, {} switches, {} links, {} flows, memory estimate {}",
                    file.display(),
                    p.meta.name,
                    sim.nics.hosts.len(),
                    sim.fabric.switches.len(),
                    sim.fabric.ports.len() / 2,
                    sim.nics.flows.len(),
                    fabricsim::scenario::budget::approx_bytes(sim.memory_estimate)
                );
                let e = fabricsim::run::estimate::estimate(&sim);
                println!(
                    "{}: variant {}: estimate: {} events ({} packet-hops over {:.1} hops a \
                     path), {} on one thread at {:.1} M events/s",
                    file.display(),
                    p.meta.name,
                    e.events,
                    e.packet_hops,
                    e.hops,
                    fmt_wall(e.wall_seconds),
                    fabricsim::run::estimate::EVENTS_PER_SEC / 1e6
                );
                if let Some(n) = threads_per_run {
                    let notes = sim.set_threads_per_run(n);
                    let (cables, heaviest) = sim.cut_balance().unwrap_or((0, 1.0));
                    let cut = match sim.parallel_work() {
                        Some(w) => format!(
                            "{} shards on {} threads, lookahead {}, windows up to {}, \
                             {cables} cables cut, heaviest shard {heaviest:.2}x the mean ports",
                            w.shards,
                            w.threads,
                            fabricsim::base::units::fmt_time((w.lookahead_ns * 1e3) as u64),
                            fabricsim::base::units::fmt_time((w.window_span_ns * 1e3) as u64)
                        ),
                        None => "one thread".to_string(),
                    };
                    println!("{}: variant {}: cut: {cut}", file.display(), p.meta.name);
                    for note in notes {
                        println!("{}: variant {}: note: {note}", file.display(), p.meta.name);
                    }
                }
            }
            Err(e) => return input_error(e),
        }
    }
    ExitCode::SUCCESS
}

/// Wall seconds as `check` prints them: `under 0.1 s`, `about 0.4 s`, `about 12 s`,
/// `about 3.5 min`, `about 2.1 h`.
fn fmt_wall(s: f64) -> String {
    if s < 0.05 {
        "under 0.1 s".to_string()
    } else if s < 10.0 {
        format!("about {s:.1} s")
    } else if s < 120.0 {
        format!("about {s:.0} s")
    } else if s < 7200.0 {
        format!("about {:.1} min", s / 60.0)
    } else {
        format!("about {:.1} h", s / 3600.0)
    }
}

fn cmd_run(
    file: PathBuf,
    opts: RunOptions,
    set: Vec<String>,
    quiet: bool,
    resume: bool,
) -> ExitCode {
    let loaded = match fabricsim::load_file(&file, &set) {
        Ok(l) => l,
        Err(e) => return input_error(e),
    };
    let variants = match loaded.expand_variants() {
        Ok(v) => v,
        Err(e) => return input_error(e),
    };
    let show = !quiet && std::io::stderr().is_terminal();
    let multi = MultiProgress::new();
    let style = ProgressStyle::with_template("{prefix:>24} [{bar:30}] {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    let n_runs = variants.len();
    // Up to 8 runs get a bar each, under a line for the whole sweep (when there are
    // several); a larger sweep gets the sweep's bar alone.
    let per_run = n_runs <= 8;
    let mk = |name: String| {
        let b = if show {
            multi.add(ProgressBar::new(1000))
        } else {
            ProgressBar::hidden()
        };
        b.set_style(style.clone());
        b.set_prefix(name);
        b
    };
    let sweep_bar = (n_runs > 1).then(|| mk(format!("{n_runs} runs")));
    let bars: Vec<ProgressBar> = if per_run {
        variants.iter().map(|(name, _)| mk(name.clone())).collect()
    } else {
        Vec::new()
    };
    // Fed from the runs' reports, which the simulator makes in its periodic check (every
    // 2^20 events), never per event.
    let tracker = Mutex::new(progress::Tracker::new(n_runs));
    let report = |i: usize, p: &fabricsim::sim::Progress| {
        let now = Instant::now();
        let mut t = tracker.lock().expect("progress lock");
        t.report(i, p, now);
        if let Some(b) = bars.get(i) {
            b.set_position((t.run_frac(i) * 1000.0) as u64);
            b.set_message(format!(
                "sim {} of {} | flows {}/{} | {} | ETA {}",
                fabricsim::base::units::fmt_time(p.now),
                fabricsim::base::units::fmt_time_exact(p.max_time),
                p.flows_done,
                p.flows_total,
                progress::fmt_rate(t.run_rate(i)),
                progress::fmt_eta(t.run_eta(i, now)),
            ));
        }
        if let Some(b) = &sweep_bar {
            b.set_position((t.sweep_frac() * 1000.0) as u64);
            b.set_message(format!(
                "{}/{n_runs} runs done, {} running | {} in all | ETA {}",
                t.done(),
                t.in_flight(),
                progress::fmt_rate(t.events_per_sec()),
                progress::fmt_eta(t.sweep_eta(now)),
            ));
        }
    };
    let signals = match Signals::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot install the signal handlers: {e}");
            return ExitCode::from(1);
        }
    };
    let stopped_by = || signals.name();
    let ctl = runner::Control {
        resume,
        stop: Some(&signals.stop),
        stopped_by: Some(&stopped_by),
    };
    let started = Instant::now();
    let sweep = match runner::run_sweep(&loaded, &opts, ctl, &report) {
        Ok(r) => r,
        Err(RunError::Input(e)) => return input_error(e),
        // An unusable `--out` is found before anything runs: bad input, like a bad file.
        Err(RunError::Out(e)) => return input_error(e),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    for b in bars.iter().chain(&sweep_bar) {
        b.finish_and_clear();
    }
    println!("{}", fabricsim::output::table(&sweep.rows));
    if let Some(note) = &sweep.threads_note {
        eprintln!("note: {note}");
    }
    if let Some(note) = &sweep.per_run_note {
        eprintln!("note: {note}");
    }
    let mut seen = std::collections::BTreeSet::new();
    for note in sweep.runs.iter().flat_map(|r| &r.notes) {
        if seen.insert(note) {
            eprintln!("note: {note}");
        }
    }
    let (mut bad, mut broken) = (false, false);
    // Reused runs (`--resume`) count as they did when they ran.
    let reused: std::collections::HashSet<&String> = sweep.reused.iter().collect();
    for s in sweep.rows.iter().filter(|s| reused.contains(&s.variant)) {
        eprintln!("{}: reused ({})", s.variant, s.outcome);
        bad |= s.outcome != Outcome::Completed.name();
        for v in &s.invariant_violations {
            broken = true;
            eprintln!("{}: invariant violated: {v}", s.variant);
        }
    }
    for r in &sweep.runs {
        match &r.outcome {
            Outcome::Completed => {}
            Outcome::Stalled(rep) => {
                bad = true;
                eprintln!("{}: {rep}", r.variant);
            }
            Outcome::MaxTime => {
                bad = true;
                eprintln!(
                    "{}: reached max_time with {} of {} flows unfinished",
                    r.variant,
                    r.summary.flows - r.summary.flows_completed,
                    r.summary.flows
                );
            }
            Outcome::Livelock(rep) => {
                bad = true;
                eprintln!("{}: {rep}", r.variant);
            }
            Outcome::Starved => {
                bad = true;
                eprintln!("{}: no events left but flows unfinished", r.variant);
            }
        }
        // An analysis that did not cover what the scenario asked for says so.
        if let Some(n) = r.summary.window.as_ref().and_then(|w| w.note.as_ref()) {
            eprintln!("{}: note: {n}", r.variant);
        }
        // The simulator broke its own invariants (conservation, FCT >= ideal, JCT >=
        // lower bound): a bug, never a property of the input, so its own exit status.
        for v in &r.summary.invariant_violations {
            broken = true;
            eprintln!("{}: invariant violated: {v}", r.variant);
        }
        if let Some(c) = r.summary.capture.filter(|c| c.frames_not_kept > 0) {
            eprintln!(
                "{}: warning: {} holds the first {} frames; {} more the captured ports sent \
                 were not kept (raise record.pcap.limit, or narrow record.pcap.from/to)",
                r.variant,
                fabricsim::model::capture::FILE,
                c.frames,
                c.frames_not_kept
            );
        }
    }
    // One speed line: the run's, or the sweep's (its events together over its wall
    // time, the runs side by side).
    let (events, hops) = sweep.runs.iter().fold((0u64, 0u64), |(e, h), r| {
        (e + r.summary.events, h + r.summary.packet_hops)
    });
    match sweep.runs.as_slice() {
        [] => {}
        [r] => {
            let s = &r.summary;
            eprintln!(
                "{}: {} events, {} packet-hops in {:.2} s wall ({:.2} M packet-hops/s)",
                r.variant,
                s.events,
                s.packet_hops,
                s.wall_seconds,
                s.packet_hops_per_sec / 1e6
            );
        }
        runs => {
            let wall = started.elapsed().as_secs_f64();
            eprintln!(
                "{} runs: {events} events, {hops} packet-hops in {wall:.2} s wall \
                 ({:.2} M packet-hops/s)",
                runs.len(),
                hops as f64 / wall.max(1e-9) / 1e6
            );
        }
    }
    if let Some(o) = &opts.out {
        eprintln!("results in {}", o.display());
    }
    if let Some(by) = &sweep.stopped_by {
        eprintln!(
            "interrupted by {by}: {} of {} runs finished; unfinished (rerun them with \
             --resume and the same --out):",
            sweep.rows.len(),
            sweep.rows.len() + sweep.unfinished.len()
        );
        for u in &sweep.unfinished {
            eprintln!("  {u}");
        }
        return ExitCode::from(signals.exit_status());
    }
    if broken {
        ExitCode::from(3)
    } else if bad {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// SIGINT and SIGTERM: the first sets `stop` (the runner lets no new run start and
/// stops the runs in progress; what finished is written), a second one exits at once
/// with the signal's status.
struct Signals {
    stop: Arc<AtomicBool>,
    /// The signal's number (0: none yet).
    first: Arc<AtomicUsize>,
}

impl Signals {
    #[cfg(unix)]
    fn install() -> std::io::Result<Signals> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let s = Signals {
            stop: Arc::new(AtomicBool::new(false)),
            first: Arc::new(AtomicUsize::new(0)),
        };
        for sig in [SIGINT, SIGTERM] {
            // The signal's number is stored before `stop` is set, so whoever sees `stop`
            // (an acquire load) sees it too; a second signal overwrites it but ends the
            // process in the next action.
            signal_hook::flag::register_usize(sig, Arc::clone(&s.first), sig as usize)?;
            // Before the flag is set, so it sees `stop` as the earlier signal left it:
            // set only from the second signal on.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&s.stop))?;
            signal_hook::flag::register(sig, Arc::clone(&s.stop))?;
        }
        Ok(s)
    }

    /// Elsewhere nothing is caught: Ctrl-C ends the process as it always did.
    #[cfg(not(unix))]
    fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            stop: Arc::new(AtomicBool::new(false)),
            first: Arc::new(AtomicUsize::new(0)),
        })
    }

    fn number(&self) -> usize {
        self.first.load(Ordering::SeqCst)
    }

    fn name(&self) -> String {
        match self.number() {
            2 => "SIGINT".into(),
            15 => "SIGTERM".into(),
            0 => "a stop request".into(),
            n => format!("signal {n}"),
        }
    }

    /// 128 + the signal's number, as a shell reports a process the signal ended: 130
    /// for SIGINT, 143 for SIGTERM.
    fn exit_status(&self) -> u8 {
        (128 + self.number()).min(255) as u8
    }
}

fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The memory of each case per host, by part ([`fabricsim::base::memory`]), beside its peak
/// RSS per host; the difference is what the parts do not itemize (code, allocator,
/// event queue, scenario).
fn print_memory(runs: &[serde_json::Value]) {
    let parts = fabricsim::sim::memory::PARTS;
    print!("{:<34} {:>8}", "memory, bytes per host", "RSS");
    for p in parts {
        print!(" {p:>11}");
    }
    println!(" {:>9} {:>10}", "itemized", "B/packet");
    for v in runs {
        let hosts = v["hosts"].as_f64().unwrap_or(f64::NAN).max(1.0);
        let rss = v["peak_rss_mb"].as_f64().unwrap_or(f64::NAN) * 1024.0 * 1024.0 / hosts;
        print!("{:<34} {:>8.0}", v["name"].as_str().unwrap_or("?"), rss);
        for p in parts {
            let b = v["memory_bytes"][p].as_f64().unwrap_or(f64::NAN);
            print!(" {:>11.0}", b / hosts);
        }
        let per_pkt = ["arena", "queues", "link rings"]
            .iter()
            .map(|p| v["memory_bytes"][*p].as_f64().unwrap_or(f64::NAN))
            .sum::<f64>()
            / v["peak_packets"].as_f64().unwrap_or(f64::NAN).max(1.0);
        println!(
            " {:>9.0} {:>10.1}",
            v["memory_total"].as_f64().unwrap_or(f64::NAN) / hosts,
            per_pkt
        );
    }
    println!(
        "(itemized: the parts at their capacity after the run; B/packet: arena, queues and \
         link rings over the most packets alive at once, {} B by construction)",
        fabricsim::sim::memory::queued_packet_bytes()
    );
}

fn cmd_bench(
    k: Option<u32>,
    repeat: u32,
    long_haul: bool,
    child: bool,
    km: Option<f64>,
    threads_per_run: usize,
) -> ExitCode {
    use fabricsim::run::bench::Case;
    if let Err(e) = check_threads("--threads-per-run", threads_per_run, 1) {
        return e;
    }
    if let Err(m) = fabricsim::run::bench::check_args(k, repeat, km) {
        return input_error(m);
    }
    if long_haul && k.is_some() {
        return input_error("--k picks a fat-tree case; --long-haul runs the long-haul pair instead: give one of them");
    }
    if km.is_some() && !child {
        return input_error("--km is internal to --child runs: use --long-haul");
    }
    if child {
        let case = match km {
            Some(km) => Case::LongHaul(km),
            None => Case::FatTree(k.unwrap_or(8)),
        };
        let r = fabricsim::run::bench::run_case_on(case, threads_per_run);
        let memory: serde_json::Map<String, serde_json::Value> = (fabricsim::sim::memory::PARTS
            .iter())
        .zip(r.memory.bytes)
        .map(|(p, b)| (p.to_string(), b.into()))
        .collect();
        let j = serde_json::json!({
            "name": r.name, "hosts": r.hosts, "wall_seconds": r.wall_seconds,
            "build_seconds": r.build_seconds, "packet_hops": r.packet_hops, "events": r.events,
            "sim_ps": r.sim_ps, "flows_done": r.flows.0, "flows": r.flows.1,
            "peak_rss_mb": peak_rss_mb(), "memory_bytes": memory,
            "memory_total": r.memory.total(), "peak_packets": r.memory.peak_packets,
            "threads": r.threads, "shards": r.shards, "notes": r.notes,
            "parallelism": r.parallelism,
            "barrier_wait_seconds": r.barrier_wait_seconds.map(|w| w.0),
            "barrier_wait_seconds_max": r.barrier_wait_seconds.map(|w| w.1),
            "barrier_wait_by_barrier": r.barrier_wait_by_barrier.map(|[start, events, handover]| {
                serde_json::json!({"start": start, "events": events, "handover": handover})
            }),
        });
        println!("{j}");
        return ExitCode::SUCCESS;
    }
    let cases: Vec<Case> = if long_haul {
        vec![
            Case::LongHaul(120.0),
            Case::LongHaul(fabricsim::run::bench::SHORT_DCI_KM),
        ]
    } else {
        match k {
            Some(k) => vec![Case::FatTree(k)],
            None => vec![Case::FatTree(8), Case::FatTree(16)],
        }
    };
    // With --threads-per-run, each case on one thread and on that many, side by side.
    let cases: Vec<(Case, usize)> = cases
        .into_iter()
        .flat_map(|c| {
            let mut v = vec![(c, 1)];
            if threads_per_run > 1 {
                v.push((c, threads_per_run));
            }
            v
        })
        .collect();
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot find own executable: {e}");
            return ExitCode::from(1);
        }
    };
    println!(
        "{:<34} {:>7} {:>6} {:>10} {:>14} {:>12} {:>10} {:>8} {:>10}",
        "case",
        "sh/thr",
        "hosts",
        "flows",
        "packet-hops/s",
        "events/s",
        "wall s",
        "build s",
        "peak RSS"
    );
    // Rounds interleave the cases (A, B, A, B, ...) so that a VM's drift falls on all of
    // them alike.
    let mut runs: Vec<Vec<serde_json::Value>> = vec![Vec::new(); cases.len()];
    for _ in 0..repeat {
        for (i, &(case, threads)) in cases.iter().enumerate() {
            let mut args: Vec<String> = match case {
                Case::FatTree(k) => vec!["--k".into(), k.to_string()],
                Case::LongHaul(km) => vec!["--km".into(), km.to_string()],
            };
            args.extend(["--threads-per-run".into(), threads.to_string()]);
            // Each run is its own process so its peak RSS is its own.
            let out = std::process::Command::new(&exe)
                .args(["bench", "--child"])
                .args(&args)
                .output();
            let name = case.name();
            let out = match out {
                Ok(o) if o.status.success() => o,
                Ok(o) => {
                    eprintln!(
                        "bench {name} failed: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                    return ExitCode::from(1);
                }
                Err(e) => {
                    eprintln!("bench {name} failed to start: {e}");
                    return ExitCode::from(1);
                }
            };
            match serde_json::from_slice::<serde_json::Value>(&out.stdout) {
                Ok(v) => runs[i].push(v),
                Err(e) => {
                    eprintln!("bench {name}: bad output: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    }
    let mut rates = Vec::new();
    let mut medians = Vec::new();
    let mut walls = Vec::new();
    for mut runs in runs {
        runs.sort_by(|a, b| {
            let w = |v: &serde_json::Value| v["wall_seconds"].as_f64().unwrap_or(f64::MAX);
            w(a).total_cmp(&w(b))
        });
        let v = &runs[runs.len() / 2];
        let wall = v["wall_seconds"].as_f64().unwrap_or(f64::NAN);
        let hops = v["packet_hops"].as_f64().unwrap_or(f64::NAN);
        let events = v["events"].as_f64().unwrap_or(f64::NAN);
        rates.push(events / wall);
        walls.push(wall);
        println!(
            "{:<34} {:>7} {:>6} {:>10} {:>12.2} M {:>10.2} M {:>10.2} {:>8.2} {:>7.1} MB",
            v["name"].as_str().unwrap_or("?"),
            format!("{}/{}", v["shards"], v["threads"]),
            v["hosts"],
            format!("{}/{}", v["flows_done"], v["flows"]),
            hops / wall / 1e6,
            events / wall / 1e6,
            wall,
            // Building the model (topology, routing tables, the cut) is not in the wall
            // of the event loop; shown apart so that a slow build is seen.
            v["build_seconds"].as_f64().unwrap_or(f64::NAN),
            v["peak_rss_mb"].as_f64().unwrap_or(f64::NAN)
        );
        for note in v["notes"].as_array().into_iter().flatten() {
            println!("  note: {}", note.as_str().unwrap_or("?"));
        }
        medians.push(v.clone());
    }
    if threads_per_run > 1 {
        for (i, pair) in walls.chunks(2).enumerate() {
            if let [one, many] = pair {
                let t = &medians[2 * i + 1];
                println!(
                    "{}: {:.2}x on {} shards, {} threads (wall of one thread / wall of the shards)",
                    cases[2 * i].0.name(),
                    one / many,
                    t["shards"],
                    t["threads"]
                );
                if let Some(p) = t["parallelism"].as_f64() {
                    println!(
                        "  at most {p:.2}x with a core per shard: the events of every window's \
                         busiest shard, summed, are 1/{p:.2} of all (a count, not a timing)"
                    );
                }
                if let (Some(mean), Some(most)) = (
                    t["barrier_wait_seconds"].as_f64(),
                    t["barrier_wait_seconds_max"].as_f64(),
                ) {
                    println!(
                        "  the threads waited at the windows' barriers {mean:.2} s on average, \
                         {most:.2} s at most, of {many:.2} s"
                    );
                }
                let by = &t["barrier_wait_by_barrier"];
                if let (Some(events), Some(handover), Some(start)) = (
                    by["events"].as_f64(),
                    by["handover"].as_f64(),
                    by["start"].as_f64(),
                ) {
                    println!(
                        "    {events:.2} s for another thread's shards to run their events (the \
                         shards' imbalance, or a core slowed by the machine's other work), \
                         {handover:.2} s for the frames handed over, {start:.2} s for the work \
                         between windows"
                    );
                }
            }
        }
    }
    print_memory(&medians);
    if long_haul {
        println!(
            "long links: {:.2} of the events/s without them (target >= 0.80)",
            rates[0] / rates[1]
        );
    }
    println!(
        "(median of {} runs each, interleaved; packet-hops = packets crossing one link)",
        repeat
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_commands_that_cut_runs_across_threads_share_one_heap() {
        let cuts = |args: &[&str]| {
            let mut v = vec!["fabricsim"];
            v.extend_from_slice(args);
            Cli::try_parse_from(v)
                .expect("valid arguments")
                .cmd
                .cuts_runs()
        };
        assert!(cuts(&["run", "s.toml", "--threads-per-run", "2"]));
        assert!(cuts(&[
            "bench",
            "--child",
            "--k",
            "32",
            "--threads-per-run",
            "2"
        ]));
        assert!(!cuts(&["run", "s.toml"]));
        assert!(!cuts(&[
            "run",
            "s.toml",
            "--threads",
            "8",
            "--threads-per-run",
            "1"
        ]));
        assert!(!cuts(&["bench", "--child", "--k", "32"]));
        // `check` only says how a run would be cut.
        assert!(!cuts(&["check", "s.toml", "--threads-per-run", "2"]));
    }
}
