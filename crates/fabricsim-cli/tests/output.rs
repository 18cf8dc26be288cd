//! The output layer end to end: what a run writes, that no scenario can make it write
//! outside `--out`, that tables stay well-formed CSV whatever the names in them, that
//! every run folder's `scenario.resolved.toml` reruns to the same `flows.csv`, and that
//! an unusable `--out` or two runs sharing a folder are refused with exit status 2
//! before anything is simulated.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod common;
use common::{assert_no_tmp, files_under};

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `fabricsim run FILE --out OUT --quiet --threads 2 EXTRA...`
fn run(file: &Path, out: &Path, extra: &[&str]) -> Output {
    exe()
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(["--quiet", "--threads", "2"])
        .args(extra)
        .output()
        .unwrap()
}

/// A small scenario: 4 hosts, one 64 KB flow; `top` goes before the tables (e.g. the
/// name), `tables` after them (variants, sweeps).
fn tiny(top: &str, tables: &str) -> String {
    format!(
        r#"{top}
max_time = "5ms"

[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"

[[workload]]
kind = "flows"
flows = [{{ src = 0, dst = 3, size = "64KB" }}, {{ src = 1, dst = 2, size = "16KB" }}]

{tables}"#
    )
}

/// Names of the entries of `dir`.
fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// The run folders under `out`: every folder holding a `summary.json` (`out` itself for
/// a scenario of one run).
fn run_folders(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = files_under(out)
        .into_iter()
        .filter(|f| f.file_name().unwrap() == "summary.json")
        .map(|f| f.parent().unwrap().to_path_buf())
        .collect();
    v.sort();
    v
}

#[test]
fn a_scenario_name_that_is_a_path_writes_nothing_outside_out() {
    let escape = format!("/tmp/fabricsim-escape-{}", std::process::id());
    let gone = || {
        entries(Path::new("/tmp"))
            .into_iter()
            .filter(|n| n.starts_with(escape.trim_start_matches("/tmp/")))
            .collect::<Vec<_>>()
    };
    assert!(
        gone().is_empty(),
        "left over from an earlier run: {:?}",
        gone()
    );
    for name in ["../../x", escape.as_str()] {
        let src = tempfile::tempdir().unwrap();
        let file = src.path().join("s.toml");
        // A sweep, so runs get folders named after the scenario; and variants whose
        // names are paths too.
        let plain = tiny(
            &format!("name = {name:?}"),
            "[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024, 2048]\n",
        );
        let with_variants = format!(
            "{plain}\n[[variants]]\nname = \"../v\"\n[[variants]]\nname = \"{escape}-v\"\n"
        );
        for (what, text) in [("sweep", &plain), ("variants", &with_variants)] {
            std::fs::write(&file, text).unwrap();
            let top = tempfile::tempdir().unwrap();
            let out = top.path().join("a").join("b").join("out");
            let o = run(&file, &out, &[]);
            assert_eq!(o.status.code(), Some(0), "{name} {what}: {}", stderr_of(&o));
            // Nothing beside `out` at any level up to the temporary root.
            assert_eq!(entries(top.path()), BTreeSet::from(["a".to_string()]));
            assert_eq!(
                entries(&top.path().join("a")),
                BTreeSet::from(["b".to_string()])
            );
            assert_eq!(
                entries(&top.path().join("a/b")),
                BTreeSet::from(["out".to_string()]),
                "{name} {what}"
            );
            assert_eq!(entries(src.path()), BTreeSet::from(["s.toml".to_string()]));
            let folders = run_folders(&out);
            assert_eq!(folders.len(), if what == "sweep" { 2 } else { 4 });
            for f in &folders {
                assert_eq!(f.parent().unwrap(), out, "{}", f.display());
            }
            assert!(out.join("comparison.csv").is_file());
            assert_no_tmp(&out);
        }
    }
    assert!(
        gone().is_empty(),
        "written outside --out: /tmp/{:?}",
        gone()
    );
}

/// Rows of a CSV file read with the `csv` crate, without assuming equal widths.
fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .unwrap();
    r.records()
        .map(|x| x.unwrap().iter().map(str::to_string).collect())
        .collect()
}

fn python3() -> Option<&'static str> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some("python3")
}

#[test]
fn a_variant_name_with_a_comma_and_a_quote_gives_a_comparison_csv_that_reads_back() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    let odd = r#"a,"b""#;
    std::fs::write(
        &file,
        tiny(
            "name = \"quote\"",
            "[[variants]]\nname = 'a,\"b\"'\n[[variants]]\nname = \"c\"\n\
             [[sweep]]\npath = \"transport.mtu\"\nlabel = \"m,t\\\"u\"\nvalues = [1024, 2048]\n",
        ),
    )
    .unwrap();
    let out = d.path().join("out");
    let o = run(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let cmp = out.join("comparison.csv");
    let rows = csv_rows(&cmp);
    assert_eq!(rows.len(), 1 + 4);
    let width = rows[0].len();
    for r in &rows {
        assert_eq!(r.len(), width, "{r:?}");
    }
    assert_eq!(rows[0][0], "variant");
    assert_eq!(rows[0][1], "m,t\"u", "the axis label is one column");
    assert_eq!(rows[1][0], format!("{odd}-m,t\"u=1024"));
    assert_eq!(rows[1][1], "1024");
    // The run folders exist, with safe names.
    let folders = entries(&out);
    assert!(folders.contains("a__b_-m_t_u=1024"), "{folders:?}");
    // Python's csv module reads the same table.
    let Some(py) = python3() else {
        eprintln!("python3 not found: skipping the Python half");
        return;
    };
    let script = "import csv, sys\n\
                  rows = list(csv.reader(open(sys.argv[1], newline='')))\n\
                  widths = {len(r) for r in rows}\n\
                  assert len(widths) == 1, widths\n\
                  assert rows[1][0] == sys.argv[2], rows[1][0]\n\
                  print(len(rows), widths.pop())\n";
    let o = Command::new(py)
        .args(["-c", script])
        .arg(&cmp)
        .arg(format!("{odd}-m,t\"u=1024"))
        .output()
        .unwrap();
    assert!(o.status.success(), "python3: {}", stderr_of(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("5 {width}")
    );
}

#[test]
fn node_names_with_commas_and_quotes_keep_ports_csv_well_formed() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(
        &file,
        r#"name = "names"
max_time = "5ms"
[topology]
kind = "custom"
hosts = ["h,0", "h\"1", "r"]
switches = ["s, \"x\""]
links = [
  { a = "h,0", b = "s, \"x\"", rate = "100Gbps", delay = "1us" },
  { a = "h\"1", b = "s, \"x\"", rate = "100Gbps", delay = "1us" },
  { a = "r", b = "s, \"x\"", rate = "100Gbps", delay = "1us" },
]
[record]
queue_interval = "1us"
[[workload]]
kind = "flows"
# Two senders into one receiver: the switch queue towards it fills.
flows = [{ src = 0, dst = 2, size = "256KB" }, { src = 1, dst = 2, size = "256KB" }]
"#,
    )
    .unwrap();
    let out = d.path().join("out");
    let o = run(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    for (t, col) in [("ports.csv", 0), ("queues.csv", 1)] {
        let rows = csv_rows(&out.join(t));
        assert!(rows.len() > 1, "{t}");
        for r in &rows {
            assert_eq!(r.len(), rows[0].len(), "{t}: {r:?}");
        }
        assert_eq!(rows[0][col], "node", "{t}");
        let nodes: BTreeSet<&str> = rows[1..].iter().map(|r| r[col].as_str()).collect();
        assert!(nodes.contains("s, \"x\""), "{t}: {nodes:?}");
    }
}

/// (case, scenario, overrides): every shipped scenario, cut short.
const CASES: &[(&str, &str, &[&str])] = &[
    ("quickstart", "quickstart.toml", &["max_time=\"1ms\""]),
    ("pfc-deadlock", "pfc-deadlock.toml", &[]),
    ("security-overhead", "security-overhead.toml", &[]),
    (
        "dcqcn-fairness",
        "dcqcn-fairness.toml",
        &["max_time=\"1ms\""],
    ),
    (
        "acc-convergence",
        "acc-convergence.toml",
        &["max_time=\"1ms\""],
    ),
    ("acc-victim", "acc-victim.toml", &["max_time=\"1ms\""]),
    ("incast-pfc", "incast-pfc.toml", &["max_time=\"1ms\""]),
    ("gse-ablation", "gse-ablation.toml", &["max_time=\"500us\""]),
    (
        "gse-vs-roce-quick",
        "gse-vs-roce-quick.toml",
        &["sweep[3].values=[\"1MiB\"]", "max_time=\"500us\""],
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
            "sweep[2].values=[\"1MiB\"]", "max_time=\"500us\"",
        ],
    ),
    ("trace-jobs", "trace-jobs.toml", &[]),
    (
        "gse-vs-roce-nic",
        "gse-vs-roce-nic.toml",
        &[
            "seeds=2",
            "workload[0].size=\"1MiB\"",
            "sweep[0].values=[0, \"64KiB\"]",
            "max_time=\"500us\"",
        ],
    ),
    (
        "gse-vs-roce",
        "gse-vs-roce.toml",
        &[
            "sweep[1].values=[1.5]",
            "sweep[3].values=[\"1MiB\"]",
            "max_time=\"500us\"",
        ],
    ),
    ("longhaul-cnp", "longhaul-cnp.toml", &["max_time=\"1ms\""]),
    (
        "longhaul-nccl",
        "longhaul-nccl.toml",
        &["sweep[0].values=[\"p2p\"]", "sweep[1].values=[\"4MiB\"]"],
    ),
    (
        "longhaul-training",
        "longhaul-training.toml",
        &[
            "sweep[0].values=[10]",
            "sweep[1].values=[\"400Gbps\"]",
            "max_time=\"5ms\"",
        ],
    ),
    (
        "longhaul-dp-scale",
        "longhaul-dp-scale.toml",
        &["topology.leaves=2", "workload[0].gradient=\"8MB\""],
    ),
    (
        "sunway-adaptive",
        "sunway-adaptive.toml",
        &["max_time=\"20us\""],
    ),
    (
        "sunway-faults",
        "sunway-faults.toml",
        &["max_time=\"20us\""],
    ),
    (
        "sunway-bandwidth",
        "sunway-bandwidth.toml",
        &["workload[0].size=\"1MiB\"", "sweep[0].values=[16]"],
    ),
    (
        "sunway-collectives",
        "sunway-collectives.toml",
        &["sweep[0].values=[128]"],
    ),
    (
        "longhaul-pp-tuning",
        "longhaul-pp-tuning.toml",
        &["workload[0].microbatches=2", "max_time=\"150ms\""],
    ),
    (
        "websearch-fattree",
        "websearch-fattree.toml",
        &["workload[0].duration=\"100us\"", "max_time=\"500us\""],
    ),
    (
        "gse-ber",
        "gse-ber.toml",
        &[
            "workload[0].size=\"1MiB\"",
            "sweep[0].values=[\"alltoall\"]",
            "sweep[1].values=[\"rs528\"]",
            "sweep[3].values=[1e-5]",
            "max_time=\"500us\"",
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
    (
        "rail-optimized",
        "rail-optimized.toml",
        &["workload[0].size=\"64KiB\""],
    ),
    (
        "nccl-fidelity",
        "nccl-fidelity.toml",
        &[
            "workload[0].sizes={ min = \"1MiB\", max = \"1MiB\" }",
            "variants[2].set={ \"topology.servers\" = 2, \"workload[0].sizes\" = { min = \"1MiB\", max = \"1MiB\" } }",
            "variants[3].set={ \"topology.gpus_per_server\" = 2, \"workload[0].algorithm\" = \"nvls\", \"workload[0].sizes\" = { min = \"128B\", max = \"8KiB\", factor = 64 } }",
        ],
    ),
    (
        "nvlink-granularity",
        "nvlink-granularity.toml",
        &[
            "sweep[0].values=[\"1MiB\"]",
            "sweep[1].values=[4096, 65536]",
        ],
    ),
    (
        "nccl-tests",
        "nccl-tests.toml",
        &["workload[0].sizes={ min = \"8B\", max = \"64KiB\", factor = 64 }"],
    ),    (
        "nccl-segments",
        "nccl-segments.toml",
        &[
            "topology.servers=2",
            "sweep[0].names=[\"1MiB\"]",
            "sweep[0].values=[{ min = \"1MiB\", max = \"1MiB\" }]",
            "sweep[1].names=[\"4KiB\", \"64KiB\"]",
            "sweep[1].values=[4096, 65536]",
        ],
    ),
];

#[test]
fn every_run_folder_has_a_resolved_scenario_that_checks_and_reruns_to_the_same_flows() {
    // Every shipped scenario is covered.
    let shipped: BTreeSet<String> = entries(&root().join("scenarios"))
        .into_iter()
        .filter(|n| n.ends_with(".toml"))
        .collect();
    let covered: BTreeSet<String> = CASES.iter().map(|c| c.1.to_string()).collect();
    assert_eq!(shipped, covered, "add the new scenario to CASES");
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut folders_checked = 0;
    for (case, scenario, sets) in CASES {
        let out = tmp.path().join(case);
        let mut extra: Vec<&str> = Vec::new();
        for s in *sets {
            extra.extend(["--set", s]);
        }
        let o = run(&root().join("scenarios").join(scenario), &out, &extra);
        assert!(
            matches!(o.status.code(), Some(0) | Some(1)),
            "{case}: {}",
            stderr_of(&o)
        );
        assert_no_tmp(&out);
        for dir in run_folders(&out) {
            folders_checked += 1;
            let resolved = dir.join("scenario.resolved.toml");
            let label = format!("{case}/{}", dir.file_name().unwrap().to_string_lossy());
            if !resolved.is_file() {
                failures.push(format!("{label}: no scenario.resolved.toml"));
                continue;
            }
            let c = exe().arg("check").arg(&resolved).output().unwrap();
            if c.status.code() != Some(0) {
                failures.push(format!("{label}: check failed: {}", stderr_of(&c)));
                continue;
            }
            // Rerun from another folder: nothing may depend on the working directory.
            let again = tmp.path().join("again").join(&label);
            let o = exe()
                .current_dir(tmp.path())
                .arg("run")
                .arg(&resolved)
                .arg("--out")
                .arg(&again)
                .args(["--quiet", "--threads", "1"])
                .output()
                .unwrap();
            if !matches!(o.status.code(), Some(0) | Some(1)) {
                failures.push(format!("{label}: rerun failed: {}", stderr_of(&o)));
                continue;
            }
            let (a, b) = (
                std::fs::read(dir.join("flows.csv")).unwrap(),
                std::fs::read(again.join("flows.csv")).unwrap(),
            );
            if a != b {
                failures.push(format!("{label}: the rerun's flows.csv differs"));
            }
        }
    }
    assert!(folders_checked >= 30, "only {folders_checked} run folders");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn files_a_scenario_reads_are_found_from_the_resolved_scenario() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("wl")).unwrap();
    std::fs::write(
        d.path().join("wl/flows.csv"),
        "src,dst,size,start\n0,3,20000,0\n1,2,8000,1000\n",
    )
    .unwrap();
    std::fs::write(
        d.path().join("wl/sizes.cdf"),
        "1000 0\n5000 50\n20000 100\n",
    )
    .unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(
        &file,
        r#"name = "files"
max_time = "2ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
[[workload]]
kind = "csv"
file = "wl/flows.csv"
[[workload]]
kind = "poisson"
cdf = "wl/sizes.cdf"
load = 0.3
flows = 20
"#,
    )
    .unwrap();
    let out = d.path().join("out");
    // Run from elsewhere: the paths are relative to the scenario file, not the cwd.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = exe()
        .current_dir(elsewhere.path())
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let resolved = out.join("scenario.resolved.toml");
    let text = std::fs::read_to_string(&resolved).unwrap();
    let t: toml::Table = text.parse().unwrap();
    for (i, key) in [(0, "file"), (1, "cdf")] {
        let p = t["workload"][i][key].as_str().unwrap();
        assert!(Path::new(p).is_absolute(), "{key} = {p}");
        assert!(Path::new(p).is_file(), "{key} = {p}");
    }
    let again = d.path().join("again");
    let o = exe()
        .current_dir(elsewhere.path())
        .arg("run")
        .arg(&resolved)
        .arg("--out")
        .arg(&again)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 1 + 2 + 20);
    assert_eq!(
        flows,
        std::fs::read_to_string(again.join("flows.csv")).unwrap()
    );
}

#[test]
fn the_resolved_scenario_records_the_seed_the_run_used() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let qs = root().join("scenarios/quickstart.toml");
    let o = run(&qs, &out, &["--seed", "77", "--set", "max_time=\"1ms\""]);
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{}",
        stderr_of(&o)
    );
    let t: toml::Table = std::fs::read_to_string(out.join("scenario.resolved.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(t["seed"].as_integer(), Some(77));
    assert_eq!(t["max_time"].as_str(), Some("1ms"));
    // A seed TOML cannot hold is refused before anything runs, not silently changed.
    let o = run(
        &qs,
        &d.path().join("big"),
        &["--seed", "18446744073709551615"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(
        stderr_of(&o).starts_with("error: --seed"),
        "{}",
        stderr_of(&o)
    );
}

#[test]
fn duplicate_sweep_values_exit_2_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("dup.toml");
    std::fs::write(
        &file,
        tiny(
            "name = \"dup\"",
            "[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024, 2048, 1024]\n",
        ),
    )
    .unwrap();
    let out = d.path().join("out");
    let o = run(&file, &out, &[]);
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for want in [
        "dup.toml",
        "field `sweep[0].values`",
        "values[0] and values[2]",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert!(!out.exists(), "the results folder was created");
    assert!(o.stdout.is_empty());
}

#[test]
fn an_unwritable_out_exits_2_before_anything_is_simulated() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    // A sweep of ten runs of a 320-server fat-tree: minutes of simulation if it started.
    let long = root().join("scenarios/websearch-fattree.toml");
    for out in [file.join("out"), file.clone()] {
        let t0 = Instant::now();
        let o = run(&long, &out, &[]);
        let took = t0.elapsed();
        let err = stderr_of(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", out.display());
        assert!(err.starts_with("error: --out "), "{err}");
        assert!(err.contains(&out.display().to_string()), "{err}");
        assert!(o.stdout.is_empty(), "printed results");
        assert!(took < Duration::from_secs(60), "took {took:?}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder");
    // A run folder taken by a file.
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let sweep = d.path().join("sweep.toml");
    std::fs::write(
        &sweep,
        tiny(
            "name = \"s\"",
            "[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024, 2048]\n",
        ),
    )
    .unwrap();
    std::fs::write(out.join("s-mtu=2048"), "in the way").unwrap();
    let o = run(&sweep, &out, &[]);
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("s-mtu=2048") && err.contains("not a folder"),
        "{err}"
    );
    assert_eq!(entries(&out), BTreeSet::from(["s-mtu=2048".to_string()]));
    // A read-only folder (only meaningful when not root: root writes anyway).
    use std::os::unix::fs::PermissionsExt;
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(ro.join("probe"), "x").is_err() {
        let o = run(&sweep, &ro.join("out"), &[]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_run_writes_the_registered_tables_the_resolved_scenario_and_a_sectioned_summary() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("qs");
    let qs = root().join("scenarios/quickstart.toml");
    let o = run(&qs, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let want: BTreeSet<String> = [
        // The mark of a folder fabricsim made (`output::OWN_MARK`).
        ".fabricsim",
        "flows.csv",
        "buckets.csv",
        "ports.csv",
        "queues.csv",
        "rates.csv",
        "report.html",
        "scenario.resolved.toml",
        "summary.json",
    ]
    .map(String::from)
    .into();
    assert_eq!(entries(&out), want);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "capture",
            "collectives",
            "convergence",
            "fabric",
            "faults",
            "flows",
            "gse",
            "jobs",
            "long_haul",
            "run",
            "speed",
            "transport",
            "window"
        ]
    );
    let run = &v["run"];
    assert_eq!(run["scenario"], "quickstart");
    assert_eq!(run["outcome"], "completed");
    assert_eq!(run["fabricsim_version"], env!("CARGO_PKG_VERSION"));
    let commit = run["git_commit"].as_str().unwrap();
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{commit}"
    );
    // Built in a git checkout: the commit is the checkout's.
    if let Ok(o) = Command::new("git")
        .current_dir(root())
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
    {
        if o.status.success() {
            assert_eq!(commit, String::from_utf8_lossy(&o.stdout).trim());
        }
    }
    for (section, key) in [
        ("speed", "wall_seconds"),
        ("speed", "packet_hops"),
        ("flows", "completed"),
        ("flows", "slowdown_p99"),
        ("flows", "buckets"),
        ("transport", "cnps"),
        ("fabric", "pause_frames"),
        ("jobs", "count"),
    ] {
        assert!(v[section].get(key).is_some(), "{section}.{key}");
    }
    assert_eq!(v["flows"]["completed"], v["flows"]["count"]);
}
