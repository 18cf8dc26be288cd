//! Nothing finished is lost: a sweep stopped by SIGINT or SIGTERM keeps every finished
//! run's folder, writes the tables across runs over them and names the unfinished runs
//! (`sweep.json`, stderr), exits 130 or 143, and `run --resume` completes it to the same
//! `comparison.csv` as an uninterrupted sweep. A folder left half written by a killed
//! process (a `.tmp` without `summary.json`) is rerun and cleaned.
//!
//! No test sleeps for a fixed time: they poll for files, with a generous timeout.
#![cfg(unix)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::assert_no_tmp;

/// A run of a few hundred thousand to a few million events: 16 hosts, a permutation of
/// `size` per host plus an incast. `seeds` replicates per point; `sweep` extra tables.
fn scenario(size: &str, seeds: u32, sweep: &str) -> String {
    format!(
        r#"name = "intr"
seed = 1
seeds = {seeds}
max_time = "500ms"

[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
servers_per_leaf = 4
host_rate = "100Gbps"
uplink_rate = "100Gbps"

[cc]
algorithm = "dcqcn"

[[workload]]
kind = "permutation"
size = "{size}"

[[workload]]
kind = "incast"
senders = [4, 5, 6, 7]
receiver = 0
size = "1MB"
start = "10us"

{sweep}"#
    )
}

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
}

/// `fabricsim run FILE --out OUT --quiet --threads 1 EXTRA...`, started.
fn start(file: &Path, out: &Path, extra: &[&str]) -> Child {
    exe()
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(["--quiet", "--threads", "1"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn run(file: &Path, out: &Path, extra: &[&str]) -> Output {
    start(file, out, extra).wait_with_output().unwrap()
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The run folders under `out` holding a `summary.json`.
fn finished_folders(out: &Path) -> BTreeSet<String> {
    std::fs::read_dir(out)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("summary.json").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Waits until some run folder under `out` has its `summary.json`, or panics after a
/// minute (a hung binary, not a slow machine).
fn wait_for_a_finished_run(out: &Path, child: &mut Child) {
    let t0 = Instant::now();
    while finished_folders(out).is_empty() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("fabricsim ended ({st}) before any run finished");
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no run finished");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal(child: &Child, sig: &str) {
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(st.success());
}

/// The first column (run names) of `comparison.csv`, header excluded.
fn compared_runs(out: &Path) -> Vec<String> {
    let mut r = csv::Reader::from_path(out.join("comparison.csv")).unwrap();
    r.records().map(|x| x.unwrap()[0].to_string()).collect()
}

fn sweep_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap()
}

fn names(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The files every complete run folder holds.
const RUN_FILES: &[&str] = &[
    "flows.csv",
    "buckets.csv",
    "ports.csv",
    "report.html",
    "scenario.resolved.toml",
    "summary.json",
];

/// Interrupts a sweep of 6 replicates once a run has finished; checks what it left.
/// Returns (finished, unfinished) run names.
fn interrupt(file: &Path, out: &Path, sig: &str, status: i32) -> (Vec<String>, Vec<String>) {
    let mut child = start(file, out, &[]);
    wait_for_a_finished_run(out, &mut child);
    signal(&child, sig);
    let o = child.wait_with_output().unwrap();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(status), "{err}");
    let s = sweep_json(out);
    assert_eq!(s["interrupted_by"], sig_name(sig), "{s}");
    assert_eq!(s["runs"], 6);
    let (fin, unfin) = (names(&s["finished"]), names(&s["unfinished"]));
    assert_eq!(fin.len() + unfin.len(), 6, "{s}");
    assert!(!fin.is_empty() && !unfin.is_empty(), "{s}");
    // Finished folders are complete; unfinished runs wrote nothing.
    let on_disk = finished_folders(out);
    assert_eq!(on_disk, fin.iter().cloned().collect::<BTreeSet<_>>());
    for f in &fin {
        for file in RUN_FILES {
            assert!(out.join(f).join(file).is_file(), "{f}/{file}");
        }
    }
    for u in &unfin {
        assert!(!out.join(u).exists(), "unfinished run {u} wrote its folder");
        assert!(
            err.contains(&format!("  {u}\n")),
            "{u} not listed on stderr: {err}"
        );
    }
    assert!(
        err.contains(&format!("interrupted by {}", sig_name(sig))),
        "{err}"
    );
    assert_eq!(compared_runs(out), fin);
    assert!(out.join("report.html").is_file());
    assert_no_tmp(out);
    (fin, unfin)
}

fn sig_name(sig: &str) -> String {
    format!("SIG{sig}")
}

#[test]
fn sigint_keeps_the_finished_runs_and_resume_completes_the_sweep() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(&file, scenario("30MB", 6, "")).unwrap();
    let out = d.path().join("out");
    let (fin, unfin) = interrupt(&file, &out, "INT", 130);
    let o = run(&file, &out, &["--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let s = sweep_json(&out);
    assert_eq!(names(&s["reused"]), fin);
    assert!(names(&s["unfinished"]).is_empty());
    assert!(s["interrupted_by"].is_null());
    assert_eq!(names(&s["finished"]).len(), 6);
    for u in &unfin {
        assert!(out.join(u).join("summary.json").is_file());
    }
    // The same tables as a sweep that ran through.
    let whole = d.path().join("whole");
    let o = run(&file, &whole, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    for t in ["comparison.csv", "jct.csv"] {
        let (a, b) = (out.join(t), whole.join(t));
        assert_eq!(a.exists(), b.exists(), "{t}");
        if a.exists() {
            assert_eq!(
                std::fs::read_to_string(a).unwrap(),
                std::fs::read_to_string(b).unwrap(),
                "{t}"
            );
        }
    }
    // Reused runs are untouched, rerun ones equal the uninterrupted sweep's.
    for r in fin.iter().chain(&unfin) {
        for f in ["flows.csv", "ports.csv"] {
            assert_eq!(
                std::fs::read(out.join(r).join(f)).unwrap(),
                std::fs::read(whole.join(r).join(f)).unwrap(),
                "{r}/{f}"
            );
        }
    }
    assert_no_tmp(&out);
}

#[test]
fn sigterm_exits_143_with_the_same_guarantees() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(&file, scenario("30MB", 6, "")).unwrap();
    interrupt(&file, &d.path().join("out"), "TERM", 143);
}

#[test]
fn a_run_in_progress_stops_promptly_and_writes_nothing() {
    // Two runs, one short and one about 50 times longer; the short one goes first.
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    let sweep =
        "[[sweep]]\npath = \"workload[0].size\"\nlabel = \"size\"\nvalues = [\"8MB\", \"400MB\"]\n";
    std::fs::write(&file, scenario("1MB", 1, sweep)).unwrap();
    let out = d.path().join("out");
    let mut child = start(&file, &out, &[]);
    wait_for_a_finished_run(&out, &mut child);
    let short = Instant::now();
    signal(&child, "INT");
    let o = child.wait_with_output().unwrap();
    let stop = short.elapsed();
    assert_eq!(o.status.code(), Some(130), "{}", stderr_of(&o));
    assert_eq!(
        finished_folders(&out),
        BTreeSet::from(["intr-size=8MB".to_string()])
    );
    assert!(!out.join("intr-size=400MB").exists());
    assert_eq!(names(&sweep_json(&out)["unfinished"]), ["intr-size=400MB"]);
    // The long run alone takes many seconds; stopping it takes ~2^20 events.
    assert!(stop < Duration::from_secs(5), "took {stop:?} to stop");
}

#[test]
fn resume_reruns_a_folder_a_killed_process_left_half_written() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(&file, scenario("2MB", 3, "")).unwrap();
    let out = d.path().join("out");
    let o = run(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let whole = std::fs::read_to_string(out.join("comparison.csv")).unwrap();
    // kill -9 while run 2 wrote flows.csv: only its temporary file is there; a writer of
    // the tables across runs was killed too.
    let victim = out.join("intr-replicate=2");
    for e in std::fs::read_dir(&victim).unwrap() {
        let e = e.unwrap();
        if e.file_name() != ".fabricsim" {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    std::fs::write(victim.join(".flows.csv.tmp"), "flow,src\n1,").unwrap();
    std::fs::write(out.join(".comparison.csv.tmp"), "variant\n").unwrap();
    // Run 3 is complete but a stale temporary file sits beside its results.
    std::fs::write(out.join("intr-replicate=3").join(".ports.csv.tmp"), "x").unwrap();
    let o = run(&file, &out, &["--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let s = sweep_json(&out);
    assert_eq!(
        names(&s["reused"]),
        ["intr-replicate=1", "intr-replicate=3"]
    );
    for f in RUN_FILES {
        assert!(victim.join(f).is_file(), "{f}");
    }
    assert_no_tmp(&out);
    assert_eq!(
        std::fs::read_to_string(out.join("comparison.csv")).unwrap(),
        whole
    );
}

#[test]
fn resume_reruns_a_folder_of_another_scenario() {
    // The same folder names, another workload: nothing may be reused.
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    let out = d.path().join("out");
    std::fs::write(&file, scenario("2MB", 2, "")).unwrap();
    assert_eq!(run(&file, &out, &[]).status.code(), Some(0));
    std::fs::write(&file, scenario("3MB", 2, "")).unwrap();
    let o = run(&file, &out, &["--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(names(&sweep_json(&out)["reused"]).is_empty());
    let fresh = d.path().join("fresh");
    assert_eq!(run(&file, &fresh, &[]).status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(out.join("comparison.csv")).unwrap(),
        std::fs::read_to_string(fresh.join("comparison.csv")).unwrap()
    );
}

#[test]
fn resume_needs_out() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(&file, scenario("2MB", 2, "")).unwrap();
    let o = exe()
        .arg("run")
        .arg(&file)
        .args(["--resume", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("--out"), "{}", stderr_of(&o));
}
