//! The memory budget and input limits from the command line: refusals exit 2 naming the
//! file and field, before anything large is allocated; a sweep runs at once only as many
//! runs as fit; a run's peak memory stays under its estimate.

use std::path::Path;
use std::process::{Command, Output};

fn fabricsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .args(args)
        .output()
        .expect("run fabricsim")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const SMALL: &str = r#"
name = "small"
max_time = "1ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
servers_per_leaf = 2
host_rate = "100Gbps"
[cc]
algorithm = "none"
[[workload]]
kind = "permutation"
size = "64KB"
"#;

#[test]
fn an_endless_or_binary_input_is_refused_at_once() {
    let o = fabricsim(&["check", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("/dev/zero") && stderr(&o).contains("device"));
    let d = tempfile::tempdir().unwrap();
    // A FIFO is refused unopened (opening it would wait for a writer for ever).
    let fifo = d.path().join("s.toml");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let o = fabricsim(&["check", fifo.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("s.toml") && stderr(&o).contains("FIFO"));
        std::fs::remove_file(&fifo).unwrap();
    }
    // A NUL byte: binary, with its line and column.
    let nul = d.path().join("nul.toml");
    std::fs::write(&nul, "name = \"a\"\nseed = \0\n").unwrap();
    let o = fabricsim(&["check", nul.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("nul.toml:2:8: binary content (a NUL byte)"),
        "{e}"
    );
    let big = d.path().join("big.toml");
    // 17 MiB of comments: text, but over the scenario size limit.
    let line = format!("# {}\n", "x".repeat(1022));
    std::fs::write(&big, line.repeat(17 << 10)).unwrap();
    let o = fabricsim(&["run", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("big.toml") && stderr(&o).contains("at most"));
}

#[test]
fn a_bad_memory_limit_is_an_input_error() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    std::fs::write(&f, SMALL).unwrap();
    for bad in ["lots", "1KB", "-5GB"] {
        let arg = format!("--max-memory={bad}");
        let o = fabricsim(&["check", f.to_str().unwrap(), &arg]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("--max-memory"), "{}", stderr(&o));
    }
    let o = fabricsim(&["check", f.to_str().unwrap(), "--max-memory", "1GiB"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("memory estimate"));
}

#[test]
fn a_run_over_the_limit_is_refused_naming_what_drives_it() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    // 64 leaves of 64 servers: about 40 MB of fabric, over a 64 MiB limit once the
    // all-to-all's 16M flows are counted.
    let text = SMALL
        .replace("leaves = 2", "leaves = 64")
        .replace("servers_per_leaf = 2", "servers_per_leaf = 64")
        .replace("permutation", "all_to_all");
    std::fs::write(&f, text).unwrap();
    let out = d.path().join("out");
    let o = fabricsim(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--max-memory",
        "64MiB",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    for s in [
        "s.toml",
        "field `workload[0]`",
        "flows",
        "hosts x (hosts - 1)",
        "--max-memory",
    ] {
        assert!(e.contains(s), "`{s}` missing: {e}");
    }
    assert!(!out.exists(), "nothing is written for a refused run");
}

/// A count that would not fit is refused by `check` and by `run` (exit 2, nothing written)
/// naming the field whose value drives it, whichever part of the run it is: the campuses
/// of a long-haul fabric, the message of a hardware collective that every rank reduces,
/// the message engines of every NIC.
#[test]
fn a_refusal_names_the_field_whose_value_drives_the_count() {
    let campuses = r#"
name = "campuses"
max_time = "1ms"
[topology]
kind = "multi_campus"
campuses = 200
leaves = 1
spines = 1
servers_per_leaf = 2
dr_switches = 1
dr_ports = 100000
campus_to_dr_capacity = "800Gbps"
dci_capacity = "800Gbps"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 2, size = "64KB" }]
"#;
    // 8 NICs of 64 ranks each, every rank a partial reduction of 16384 fp32 elements.
    let hw_size = r#"
name = "hw"
max_time = "1ms"
[topology]
kind = "sunway"
leaves = 4
spines = 2
nodes_per_leaf = 2
nodes = 8
sibling_links = 0
[fabric.pfc]
enabled = false
[fabric.credit]
enabled = true
private = "128KiB"
[transport]
mtu = "64KiB"
header = 48
kind = "message"
[[workload]]
kind = "hw_collective"
collective = "allreduce"
size = "64KiB"
type = "fp32"
ranks_per_host = 64
"#;
    // 1024 NICs of 1024 message engines each.
    let engines = r#"
name = "engines"
max_time = "1ms"
[topology]
kind = "leaf_spine"
leaves = 32
spines = 1
servers_per_leaf = 32
host_rate = "100Gbps"
[transport]
kind = "message"
[transport.message]
engines = 1024
[cc]
algorithm = "none"
[[workload]]
kind = "permutation"
size = "4KB"
"#;
    let d = tempfile::tempdir().unwrap();
    for (name, text, limit, field, part) in [
        ("campuses", campuses, "50MiB", "topology.campuses", "ports"),
        (
            "hw_size",
            hw_size,
            "64MiB",
            "workload[0].size",
            "hardware-collective elements in partial reductions",
        ),
        (
            "engines",
            engines,
            "20MiB",
            "transport.message.engines",
            "message-engine slots",
        ),
    ] {
        let f = d.path().join(format!("{name}.toml"));
        std::fs::write(&f, text).unwrap();
        let f = f.to_str().unwrap();
        let out = d.path().join(name);
        let o = fabricsim(&["check", f, "--max-memory", limit]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {e}");
        let field = format!("field `{field}`");
        assert!(e.contains(&field) && e.contains(part), "{name}: {e}");
        let o = fabricsim(&[
            "run",
            f,
            "--out",
            out.to_str().unwrap(),
            "--max-memory",
            limit,
        ]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {e}");
        assert!(e.contains(&field), "{name}: {e}");
        assert!(
            !out.exists(),
            "{name}: nothing is written for a refused run"
        );
        // And within the machine's memory the same scenario checks.
        let o = fabricsim(&["check", f]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
    }
}

#[test]
fn a_sweep_too_large_to_describe_is_refused_before_it_is_expanded() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    let seeds: Vec<String> = (1..=5000).map(|i| i.to_string()).collect();
    let text = format!(
        "{SMALL}\n[[sweep]]\npath = \"seed\"\nvalues = [{}]\n",
        seeds.join(", ")
    );
    std::fs::write(&f, text).unwrap();
    let o = fabricsim(&["check", f.to_str().unwrap(), "--max-memory", "64MiB"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("field `sweep`") && e.contains("5000 runs"),
        "{e}"
    );
}

#[test]
fn a_sweep_runs_at_once_only_what_fits() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    std::fs::write(
        &f,
        format!("{SMALL}\n[[sweep]]\npath = \"seed\"\nvalues = [1, 2, 3, 4]\n"),
    )
    .unwrap();
    // The estimate of one run, from `check`.
    let o = fabricsim(&["check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = d.path().join("out");
    // A limit of 1.5 runs: one at a time.
    let est = estimate_bytes(&String::from_utf8_lossy(&o.stdout));
    let limit = format!("{}B", est * 3 / 2);
    let o = fabricsim(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "4",
        "--quiet",
        "--max-memory",
        &limit,
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("running 1 runs at once instead of 4"), "{e}");
    assert!(Path::new(&out).join("comparison.csv").exists());
}

/// The largest `memory estimate X` of `fabricsim check`'s lines, in bytes.
fn estimate_bytes(stdout: &str) -> u64 {
    stdout
        .lines()
        .filter_map(|l| l.split("memory estimate ").nth(1))
        .map(|v| {
            let (n, unit) = v.trim().split_once(' ').expect("number and unit");
            let n: f64 = n.parse().expect("number");
            let k = match unit {
                "B" => 1.0,
                "KiB" => 1024.0,
                "MiB" => 1024.0 * 1024.0,
                "GiB" => 1024.0 * 1024.0 * 1024.0,
                u => panic!("unit {u}"),
            };
            (n * k) as u64
        })
        .max()
        .expect("an estimate")
}

#[test]
fn a_run_stays_under_its_estimate() {
    let d = tempfile::tempdir().unwrap();
    let scen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/quickstart.toml");
    let out = d.path().join("out");
    let o = fabricsim(&[
        "run",
        scen.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let est = s["speed"]["memory_estimate_bytes"].as_u64().unwrap();
    let rss = s["speed"]["peak_rss_bytes"].as_u64().unwrap();
    assert!(est > 0 && rss > 0, "{s}");
    assert!(rss <= est, "peak RSS {rss} above the estimate {est}");
    // And the estimate means something: not a hundred times the run.
    assert!(est < 20 * rss, "estimate {est} far above the peak {rss}");
}

/// Each shard of a cut run keeps its own capture log, up to `record.pcap.limit`: a run
/// cut into more shards than the budget holds logs for runs on fewer, says so, and gives
/// the same capture.
#[test]
fn a_cut_run_takes_only_the_shards_whose_capture_logs_fit() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("cap.toml");
    // A k = 4 fat tree (cut between pods) capturing one NIC, with the largest limit:
    // about 84 MiB a log, 96 MiB estimated for the run with one.
    let text = r#"
name = "cap"
max_time = "1ms"
[topology]
kind = "fat_tree"
k = 4
rate = "100Gbps"
[cc]
algorithm = "none"
[[workload]]
kind = "permutation"
size = "64KB"
[record.pcap]
ports = ["host0"]
limit = 1000000
"#;
    std::fs::write(&f, text).unwrap();
    let run = |max: &str, out: &str| {
        let out = d.path().join(out);
        let o = fabricsim(&[
            "run",
            f.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads-per-run",
            "4",
            "--max-memory",
            max,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&summary).unwrap();
        let shards = v["speed"]["parallel"]["shards"].as_u64().unwrap_or(1);
        let pcap = std::fs::read(out.join("capture.pcapng")).unwrap();
        (stderr(&o), shards, pcap)
    };
    // Room for two more logs beside the run: 3 shards, and a note naming the limit.
    let (e, shards, small) = run("300MiB", "small");
    assert_eq!(shards, 3, "{e}");
    assert!(
        e.contains("record.pcap.limit = 1000000") && e.contains("running on 3"),
        "{e}"
    );
    // Room for all four: no note.
    let (e, shards, large) = run("4GiB", "large");
    assert_eq!(shards, 4, "{e}");
    assert!(!e.contains("record.pcap.limit"), "{e}");
    assert!(small == large, "the capture depends on the shards");
}
