//! Golden outputs: every scenario in `scenarios/` (long ones cut with `--set`) must give
//! byte-identical `flows.csv`, `ports.csv`, `links.csv` (runs with faults or bit errors),
//! `jobs.csv`, `nccl_tests.csv`, `training.csv`, `collectives.csv` and `buffers.csv` (runs
//! with `[record] buffers`) to the reviewed files under `tests/golden/`. A refactor
//! keeps them; a change that moves results regenerates them in a commit of its own that
//! says why, with
//!
//! ```sh
//! FABRICSIM_BLESS=1 cargo test --release -p fabricsim-cli --test golden
//! ```
//!
//! The same runs check `fabricsim check`'s estimate of events
//! (`fabricsim::run::estimate`): within 2x of the events each run's `summary.json`
//! counts, for every run that does not stall (a stalled run, pfc-deadlock's point, ends
//! before its bytes are delivered).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/cases.rs"]
mod cases;
use cases::CASES;

/// The tables compared (`links.csv` only where faults or bit errors make one).
const TABLES: &[&str] = &[
    "flows.csv",
    "ports.csv",
    "links.csv",
    "jobs.csv",
    "nccl_tests.csv",
    "training.csv",
    "collectives.csv",
    "buffers.csv",
];

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn golden_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"))
}

/// Every compared table under `dir`, by path relative to `dir`.
fn tables(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if TABLES.iter().any(|t| p.file_name().unwrap() == *t) {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn run_case(scenario: &str, sets: &[&str], out: &Path) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fabricsim"));
    cmd.args(["run"])
        .arg(root().join("scenarios").join(scenario))
        .arg("--out")
        .arg(out)
        .args(["--quiet", "--threads", "2"]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    let o = cmd.output().unwrap();
    // 0: completed; 1: max_time or a stall (the cut runs and pfc-deadlock end so).
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{scenario}: exit {:?}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `fabricsim check`'s estimate of events per run of `scenario` with `sets`.
fn estimated_events(scenario: &str, sets: &[&str]) -> BTreeMap<String, u64> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fabricsim"));
    cmd.arg("check")
        .arg(root().join("scenarios").join(scenario));
    for s in sets {
        cmd.args(["--set", s]);
    }
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{scenario}: check");
    let text = String::from_utf8_lossy(&o.stdout);
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((head, tail)) = line.split_once(": estimate: ") else {
            continue;
        };
        let name = head.rsplit_once(": variant ").unwrap().1;
        let events = tail.split_whitespace().next().unwrap().parse().unwrap();
        out.insert(name.to_string(), events);
    }
    assert!(!out.is_empty(), "{scenario}: no estimate in\n{text}");
    out
}

/// (run name, outcome, events) of every run under `out`, from its `summary.json`.
fn counted_events(out: &Path) -> Vec<(String, String, u64)> {
    let mut runs = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap() == "summary.json" {
                let v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
                runs.push((
                    v["run"]["name"].as_str().unwrap().to_string(),
                    v["run"]["outcome"].as_str().unwrap().to_string(),
                    v["speed"]["events"].as_u64().unwrap(),
                ));
            }
        }
    }
    runs
}

#[test]
fn every_scenario_matches_its_golden_tables() {
    let bless = std::env::var_os("FABRICSIM_BLESS").is_some();
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut off = Vec::new();
    for (case, scenario, sets) in CASES {
        let out = tmp.path().join(case);
        run_case(scenario, sets, &out);
        let estimates = estimated_events(scenario, sets);
        let runs = counted_events(&out);
        assert_eq!(runs.len(), estimates.len(), "{case}: runs and estimates");
        for (name, outcome, events) in runs {
            let est = estimates[&name];
            let ratio = est.max(1) as f64 / events.max(1) as f64;
            eprintln!("{case}/{name}: {outcome}, {events} events, estimate {est} ({ratio:.2}x)");
            if outcome != "stalled" && !(0.5..=2.0).contains(&ratio) {
                off.push(format!(
                    "{case}/{name}: estimated {est} events, counted {events} ({ratio:.2}x)"
                ));
            }
        }
        let got = tables(&out);
        assert!(!got.is_empty(), "{case}: no tables written");
        let gdir = golden_dir().join(case);
        if bless {
            let _ = std::fs::remove_dir_all(&gdir);
            for (rel, bytes) in &got {
                let p = gdir.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, bytes).unwrap();
            }
            continue;
        }
        let want = tables(&gdir);
        assert!(
            !want.is_empty(),
            "{case}: no golden files in {}; generate them with FABRICSIM_BLESS=1",
            gdir.display()
        );
        let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
        if names(&got) != names(&want) {
            failures.push(format!(
                "{case}: tables differ in name: got {:?}, golden {:?}",
                names(&got),
                names(&want)
            ));
            continue;
        }
        for (rel, bytes) in &got {
            let w = &want[rel];
            if bytes != w {
                let (g, w) = (String::from_utf8_lossy(bytes), String::from_utf8_lossy(w));
                let line = g
                    .lines()
                    .zip(w.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(g.lines().count().min(w.lines().count()));
                failures.push(format!(
                    "{case}/{rel}: differs from line {}:\n  got:    {}\n  golden: {}",
                    line + 1,
                    g.lines().nth(line).unwrap_or("<end>"),
                    w.lines().nth(line).unwrap_or("<end>")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "golden outputs changed (regenerate only for a reviewed change of results):\n{}",
        failures.join("\n")
    );
    assert!(
        off.is_empty(),
        "check's estimate of events is off by more than 2x:\n{}",
        off.join("\n")
    );
}
