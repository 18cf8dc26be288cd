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

#[test]
fn every_scenario_matches_its_golden_tables() {
    let bless = std::env::var_os("FABRICSIM_BLESS").is_some();
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (case, scenario, sets) in CASES {
        let out = tmp.path().join(case);
        run_case(scenario, sets, &out);
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
}
