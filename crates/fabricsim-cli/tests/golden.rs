//! Golden outputs: every scenario in `scenarios/` (long ones cut with `--set`) must give
//! byte-identical `flows.csv`, `ports.csv`, `links.csv` (runs with faults or bit errors),
//! `jobs.csv`, `training.csv`, `collectives.csv` and `buffers.csv` (runs with `[record]
//! buffers`) to the reviewed files under `tests/golden/`. A refactor
//! keeps them; a change that moves results regenerates them in a commit of its own that
//! says why, with
//!
//! ```sh
//! FABRICSIM_BLESS=1 cargo test --release -p fabricsim-cli --test golden
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// (case, scenario file, overrides). Every scenario appears at least once.
const CASES: &[(&str, &str, &[&str])] = &[
    ("quickstart", "quickstart.toml", &[]),
    ("pfc-deadlock", "pfc-deadlock.toml", &[]),
    ("security-overhead", "security-overhead.toml", &[]),
    (
        "dcqcn-fairness",
        "dcqcn-fairness.toml",
        &["max_time=\"10ms\""],
    ),
    (
        "acc-convergence",
        "acc-convergence.toml",
        &["max_time=\"10ms\""],
    ),
    ("acc-victim", "acc-victim.toml", &["max_time=\"5ms\""]),
    ("incast-pfc", "incast-pfc.toml", &["max_time=\"10ms\""]),
    ("gse-ablation", "gse-ablation.toml", &["max_time=\"2ms\""]),
    (
        "gse-vs-roce-quick",
        "gse-vs-roce-quick.toml",
        &["sweep[3].values=[\"1MiB\"]"],
    ),
    (
        "gse-vs-roce-readings",
        "gse-vs-roce-readings.toml",
        &[
            "seeds=2",
            "sweep[0].names=[\"alltoall_pairwise\", \"halving_doubling\"]",
            "sweep[0].values=[{ \"workload[0].collective\" = \"alltoall\", \"workload[0].rounds\" = true }, { \"workload[0].collective\" = \"halving_doubling\" }]",
            "sweep[1].names=[\"4x100G\"]",
            "sweep[1].values=[{ \"topology.uplink_rate\" = \"100Gbps\", \"topology.uplinks_per_pair\" = 4 }]",
            "sweep[2].values=[\"1MiB\"]",
        ],
    ),
    (
        "gse-vs-roce",
        "gse-vs-roce.toml",
        &["sweep[1].values=[1.5]", "sweep[3].values=[\"2MiB\"]"],
    ),
    ("longhaul-cnp", "longhaul-cnp.toml", &["max_time=\"3ms\""]),
    (
        "longhaul-nccl",
        "longhaul-nccl.toml",
        &["sweep[1].values=[\"16MiB\"]"],
    ),
    (
        "longhaul-training",
        "longhaul-training.toml",
        &["sweep[0].values=[120]", "sweep[1].values=[\"1600Gbps\"]"],
    ),
    ("longhaul-pp-tuning", "longhaul-pp-tuning.toml", &[]),
    (
        "sunway-bandwidth",
        "sunway-bandwidth.toml",
        &["workload[0].size=\"1MiB\"", "sweep[0].values=[1, 256]"],
    ),
    (
        "sunway-collectives",
        "sunway-collectives.toml",
        &["sweep[0].values=[128]"],
    ),
    (
        "longhaul-dp-scale",
        "longhaul-dp-scale.toml",
        &["topology.leaves=2", "workload[0].gradient=\"32MB\""],
    ),
    (
        "websearch-fattree",
        "websearch-fattree.toml",
        &["workload[0].duration=\"300us\"", "max_time=\"2ms\""],
    ),
    // The same under the ns3 fabric profile (every ns-3 parity option at once).
    (
        "websearch-fattree-ns3",
        "websearch-fattree.toml",
        &[
            "workload[0].duration=\"300us\"",
            "max_time=\"2ms\"",
            "profile=\"ns3\"",
        ],
    ),
    (
        "gse-ber",
        "gse-ber.toml",
        &[
            "workload[0].size=\"1MiB\"",
            "sweep[0].values=[\"alltoall\"]",
            "sweep[1].values=[\"none\"]",
            "sweep[3].values=[1e-6]",
        ],
    ),
    (
        "ecmp-lag",
        "ecmp-lag.toml",
        &[
            "workload[0].size=\"256KiB\"",
            "workload[1].size=\"256KiB\"",
            "workload[2].size=\"256KiB\"",
            "workload[3].size=\"256KiB\"",
        ],
    ),
    (
        "ecmp-polarization",
        "ecmp-polarization.toml",
        &[
            "workload[0].size=\"256KiB\"",
            "workload[1].size=\"256KiB\"",
            "workload[2].size=\"256KiB\"",
            "workload[3].size=\"256KiB\"",
        ],
    ),
    (
        "asymmetry",
        "asymmetry.toml",
        &["workload[0].size=\"1MiB\""],
    ),
    ("roce-vs-ib-latency", "roce-vs-ib-latency.toml", &[]),
    ("pfc-vs-credit-buffer", "pfc-vs-credit-buffer.toml", &[]),
    (
        "pfc-vs-credit-min-buffer",
        "pfc-vs-credit-min-buffer.toml",
        &[
            "sweep[1].names=[\"pfc\", \"credits-32KiB\"]",
            "sweep[1].values=[{}, { \"fabric.pfc.enabled\" = false, \"fabric.credit.enabled\" = true, \"fabric.credit.shared\" = \"32KiB\" }]",
        ],
    ),
    ("ecn-unfairness", "ecn-unfairness.toml", &["max_time=\"8ms\""]),
    ("forward-cnp", "forward-cnp.toml", &[]),
];

/// The tables compared (`links.csv` only where faults or bit errors make one).
const TABLES: &[&str] = &[
    "flows.csv",
    "ports.csv",
    "links.csv",
    "jobs.csv",
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
