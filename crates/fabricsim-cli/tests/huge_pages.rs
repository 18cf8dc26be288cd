//! The CLI's allocator asks for huge pages once the heap passes 32 MiB
//! (`src/huge_pages.rs`); where memory lies must change nothing a run writes. A run large
//! enough to take that path gives the same bytes with the hints and without them.
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::path::Path;
use std::process::Command;

fn run(scenario: &Path, out: &Path, hints: &str) -> serde_json::Value {
    let o = Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .args(["run", scenario.to_str().unwrap(), "--out"])
        .arg(out)
        .arg("--quiet")
        .env("FABRICSIM_HUGE_PAGES", hints)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn a_large_run_writes_the_same_bytes_with_and_without_huge_pages() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("k24.toml");
    // The benchmark's fat tree at k = 24: 3,456 hosts each sending 2 MB to another,
    // about 100 MB of model.
    std::fs::write(&scenario, fabricsim::run::bench::scenario_toml(24)).unwrap();
    let (on, off) = (dir.path().join("on"), dir.path().join("off"));
    let summary = run(&scenario, &on, "1");
    run(&scenario, &off, "0");
    // The premise: the run's heap went past the 32 MiB kept on small pages.
    let rss = summary["speed"]["peak_rss_bytes"].as_u64().unwrap();
    assert!(
        rss > 40 << 20,
        "peak RSS {rss} B: too small to take the hinted path"
    );
    assert_eq!(
        summary["flows"]["completed"], summary["flows"]["count"],
        "{summary}"
    );
    for table in ["flows.csv", "ports.csv", "buckets.csv"] {
        let (a, b) = (
            std::fs::read(on.join(table)).unwrap(),
            std::fs::read(off.join(table)).unwrap(),
        );
        assert!(!a.is_empty(), "{table} empty");
        assert!(a == b, "{table} differs with huge pages");
    }
}
