//! Every scenario shipped in `scenarios/` runs, keeps the invariants (conservation, FCT >=
//! ideal, lossless when PFC is on) and is deterministic.

use fabricsim::output::{self, flows_csv, ports_csv};
use fabricsim::run::runner::build_all;
use fabricsim::{analysis::invariants, load_file};
use std::path::PathBuf;

fn scenarios_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios"))
}

/// A sample of the shipped scenarios (lossless and lossy RoCE, credits, GSE, hardware
/// collectives, long haul) keeps the invariants: the default suite's share of the
/// exhaustive test below.
#[test]
fn a_sample_of_scenarios_keeps_the_invariants() {
    let sample = [
        "quickstart.toml",
        "incast-pfc.toml",
        "pfc-vs-credit-buffer.toml",
        "gse-vs-roce-quick.toml",
        "sunway-collectives.toml",
        "longhaul-cnp.toml",
    ];
    let n = keep_the_invariants(&|f| sample.contains(&f));
    assert!(n >= sample.len(), "ran {n}");
}

#[test]
#[ignore = "exhaustive: cargo test --workspace --release -- --ignored exhaustive"]
fn exhaustive_every_scenario_keeps_the_invariants() {
    let n = keep_the_invariants(&|_| true);
    assert!(
        n >= 6,
        "expected the shipped scenarios and their variants, ran {n}"
    );
}

/// Runs the shipped scenarios whose file name `keep` takes (each bounded in simulated
/// time) and checks every run's invariants; returns the runs checked.
fn keep_the_invariants(keep: &dyn Fn(&str) -> bool) -> usize {
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(scenarios_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.extension().and_then(|e| e.to_str()) != Some("toml")
            || !keep(&path.file_name().unwrap().to_string_lossy())
        {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        assert!(
            src.starts_with('#'),
            "{}: a scenario opens with comments saying what it reproduces",
            path.display()
        );
        // Bound the work so the suite stays fast: 30 ms of simulated time, and 1 ms for
        // the long sweeps and the large generated workloads (they are checked on the
        // first millisecond of every run).
        let all = build_all(&load_file(&path, &[]).unwrap(), None).unwrap();
        let flows: usize = all.iter().map(|(_, s)| s.nics.flows.len()).sum();
        let bound = if all.len() > 30 || flows > 10_000 {
            "1ms"
        } else {
            "30ms"
        };
        let loaded = load_file(&path, &[format!("max_time=\"{bound}\"")]).unwrap();
        // Sweeps of hundreds of runs (seed replicates of every point): an evenly spread
        // sixtieth-or-so of them, which still visits every axis value.
        let stride = (all.len() / 60).max(1);
        for (name, mut sim) in build_all(&loaded, None)
            .unwrap()
            .into_iter()
            .step_by(stride)
        {
            let outcome = sim.run(&mut |_| {});
            let bad = invariants::check(&sim);
            assert!(
                bad.is_empty(),
                "{} / {name} ({outcome:?}): {bad:#?}",
                path.display()
            );
            for i in 0..sim.nics.flows.len() {
                if let Some(f) = output::fct(&sim, i) {
                    assert!(
                        f >= sim.ideal[i],
                        "{} / {name}: flow {i} beat its ideal",
                        path.display()
                    );
                }
            }
            n += 1;
        }
    }
    n
}

fn strip_wall(json: &str) -> String {
    json.lines()
        .filter(|l| {
            !l.contains("wall_seconds")
                && !l.contains("packet_hops_per_sec")
                && !l.contains("peak_rss_bytes")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// flows.csv, ports.csv, summary without wall-clock fields, and every flow's path.
type RunText = (
    String,
    String,
    String,
    Vec<Vec<fabricsim::model::transport::rdma::Hop>>,
);

fn quickstart(seed: Option<u64>) -> RunText {
    let loaded = load_file(&scenarios_dir().join("quickstart.toml"), &[]).unwrap();
    let (name, mut sim) = build_all(&loaded, seed).unwrap().pop().unwrap();
    let o = sim.run(&mut |_| {});
    let s = output::summarize(&sim, &name, &o, 0.0);
    let paths = (0..sim.nics.flows.len()).map(|i| sim.path_of(i)).collect();
    (
        flows_csv(&sim),
        ports_csv(&sim),
        strip_wall(&serde_json::to_string_pretty(&s).unwrap()),
        paths,
    )
}

#[test]
fn same_seed_same_bytes_other_seed_other_paths() {
    let a = quickstart(None);
    let b = quickstart(None);
    assert_eq!(a.0, b.0, "flows.csv differs between identical runs");
    assert_eq!(a.1, b.1, "ports.csv differs between identical runs");
    assert_eq!(a.2, b.2, "summary differs between identical runs");
    let c = quickstart(Some(12345));
    assert_ne!(a.3, c.3, "another seed must change ECMP choices");
}

#[test]
fn results_written_to_disk_are_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_file(&scenarios_dir().join("incast-pfc.toml"), &[]).unwrap();
    let mut outs = Vec::new();
    for k in 0..2 {
        let out = dir.path().join(format!("r{k}"));
        let opts = fabricsim::run::runner::RunOptions {
            out: Some(out.clone()),
            seed: None,
            threads: 2,
            threads_per_run: 1,
        };
        fabricsim::run::runner::run(&loaded, &opts, &|_, _| {}).unwrap();
        outs.push(out);
    }
    for v in ["pfc_dcqcn", "pfc_only", "lossy"] {
        for f in ["flows.csv", "ports.csv", "queues.csv"] {
            let a = std::fs::read(outs[0].join(v).join(f)).unwrap();
            let b = std::fs::read(outs[1].join(v).join(f)).unwrap();
            assert_eq!(a, b, "{v}/{f}");
        }
    }
    let cmp = std::fs::read_to_string(outs[0].join("comparison.csv")).unwrap();
    assert_eq!(cmp.lines().count(), 4, "header + 3 variants");
}

/// The complete scenarios shown in docs/SCENARIOS.md (its ```toml blocks with a
/// `[topology]`) load and build, so the guide cannot drift from the schema.
#[test]
fn the_scenario_guide_examples_load_and_build() {
    let doc = std::fs::read_to_string(scenarios_dir().join("../docs/SCENARIOS.md")).unwrap();
    let mut n = 0;
    for block in doc.split("```toml\n").skip(1) {
        let (toml, _) = block.split_once("```").expect("closed block");
        if !toml.contains("[topology]") || !toml.contains("[[workload]]") {
            continue;
        }
        let loaded = fabricsim::load_str(toml, "SCENARIOS.md", &scenarios_dir(), &[])
            .unwrap_or_else(|e| panic!("{e}\n{toml}"));
        assert!(!build_all(&loaded, None).unwrap().is_empty());
        n += 1;
    }
    assert!(n >= 1, "the guide shows at least one complete scenario");
}
