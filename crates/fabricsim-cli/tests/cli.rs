//! The command line end to end: exit statuses, the files a run writes, and that a run
//! that stalls still writes its results.

use std::path::PathBuf;
use std::process::Command;

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
}

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios")).join(name)
}

/// `fabricsim run scenarios/<name> --out <out> --quiet <extra...>`.
fn run_scenario(name: &str, out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    exe()
        .args([
            "run",
            scenario(name).to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn quickstart_runs_and_writes_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("qs");
    let o = run_scenario("quickstart.toml", &out, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    // The table: the run, every flow done (no outcome column when all completed).
    assert!(
        stdout.contains("FCT p50/p99")
            && stdout.lines().nth(1).is_some_and(|l| {
                l.starts_with("quickstart ") && l.contains(" 27/27 ") && !l.contains("completed")
            }),
        "{stdout}"
    );
    // One speed line.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.matches("packet-hops/s").count(), 1, "{stderr}");
    let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    assert!(flows.starts_with(
        "flow_id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,\
         sender_finish_ns,sender_fct_ns,ideal_fct_rtt_ns,sender_slowdown\n"
    ));
    assert_eq!(flows.lines().count(), 1 + 27);
    // The sender hears of the last byte an ACK after the receiver has it; the ns-3
    // ideal counts the way back (two propagation delays), so it exceeds the one-way
    // ideal; each slowdown is its FCT over its own ideal. The run ends when the last
    // receiver has its last byte, so only a flow finishing then may lack its last ACK.
    let rows: Vec<Vec<Option<f64>>> = flows
        .lines()
        .skip(1)
        .map(|r| r.split(',').map(|x| x.parse().ok()).collect())
        .collect();
    let end = rows.iter().filter_map(|c| c[5]).fold(0.0, f64::max);
    let mut with_sender = 0;
    for c in &rows {
        let [fct, ideal, slow, finish, ideal_rtt] =
            [c[6], c[7], c[8], c[5], c[11]].map(Option::unwrap);
        assert!((slow - fct / ideal).abs() < 1e-5, "{c:?}");
        assert!(ideal_rtt > ideal, "{c:?}");
        let Some(s_finish) = c[9] else {
            assert_eq!(
                finish, end,
                "no last ACK only for a flow ending the run: {c:?}"
            );
            assert!(c[10].is_none() && c[12].is_none(), "{c:?}");
            continue;
        };
        with_sender += 1;
        let (s_fct, s_slow) = (c[10].unwrap(), c[12].unwrap());
        assert!(s_finish > finish, "{c:?}");
        assert!((s_fct - (s_finish - c[4].unwrap())).abs() < 1e-3, "{c:?}");
        assert!((s_slow - s_fct / ideal_rtt).abs() < 1e-5, "{c:?}");
    }
    assert!(
        with_sender >= 26,
        "{with_sender} of 27 flows have a sender FCT"
    );
    let ports = std::fs::read_to_string(out.join("ports.csv")).unwrap();
    assert!(ports.starts_with("node,port,tx_bytes,tx_packets,drops,pause_frames_sent,paused_ns,max_queue_bytes,ecn_marked"));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["run"]["outcome"], "completed");
    assert_eq!(summary["flows"]["completed"], 27);
    // Every headline FCT figure says which definition it uses.
    let defs = &summary["flows"]["definitions"];
    assert!(defs["fct"].as_str().unwrap().starts_with("receiver"));
    assert!(defs["sender_fct"].as_str().unwrap().starts_with("sender"));
    // The sender figures are those of the flows whose last ACK came.
    let sender_mean = rows.iter().filter_map(|c| c[10]).sum::<f64>() / with_sender as f64;
    let reported = summary["flows"]["sender_fct_mean_ns"].as_f64().unwrap();
    assert!(
        (reported - sender_mean).abs() < 1e-3 * sender_mean,
        "{reported} vs {sender_mean}"
    );
    assert!(summary["speed"]["packet_hops"].as_u64().unwrap() > 10_000);
    for f in ["queues.csv", "rates.csv"] {
        assert!(
            std::fs::read_to_string(out.join(f))
                .unwrap()
                .lines()
                .count()
                > 10,
            "{f}"
        );
    }
}

#[test]
fn a_deadlocked_run_exits_1_names_the_cycle_and_keeps_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dl");
    let o = run_scenario("pfc-deadlock.toml", &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("PFC deadlock: cycle of paused ports"),
        "{stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["run"]["outcome"], "stalled");
    assert!(
        summary["run"]["stall"]["deadlock_cycle"]
            .as_array()
            .unwrap()
            .len()
            >= 4
    );
    assert!(out.join("flows.csv").exists());
}

#[test]
fn variants_and_sweeps_write_one_folder_each_and_a_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sec");
    let o = run_scenario(
        "security-overhead.toml",
        &out,
        &["--set", "workload[0].flows[0].size=\"256KB\""],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cmp = std::fs::read_to_string(out.join("comparison.csv")).unwrap();
    assert!(cmp.starts_with("variant,payload,outcome,"), "{cmp}");
    assert_eq!(cmp.lines().count(), 1 + 4 * 7);
    assert!(out.join("physec-payload=64").join("summary.json").exists());
}

#[test]
fn check_list_and_bench_work() {
    let o = exe()
        .args(["check", scenario("incast-pfc.toml").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .matches(": ok: variant")
            .count(),
        3
    );
    // How each run would be cut: incast-pfc's two leaves hold 2 shards, not 3.
    let o = exe()
        .args(["check", scenario("incast-pfc.toml").to_str().unwrap()])
        .args(["--threads-per-run", "3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.matches(": cut: 2 shards on ").count(), 3, "{text}");
    assert_eq!(text.matches("running on 2").count(), 3, "{text}");
    // Each leaf with its hosts in a shard of its own, the spines between: even.
    assert_eq!(
        text.matches("cables cut, heaviest shard 1.00x the mean ports")
            .count(),
        3,
        "{text}"
    );
    let o = exe()
        .args(["check", scenario("quickstart.toml").to_str().unwrap()])
        .args(["--threads-per-run", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--threads-per-run 0"));
    let o = exe().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    for word in [
        "leaf_spine",
        "fat_tree",
        "dcqcn",
        "spray_rr",
        "hpcc_flow_file",
        "physec",
        "[[sweep]]",
    ] {
        assert!(text.contains(word), "list lacks {word}");
    }
    let o = exe()
        .args(["bench", "--k", "8", "--repeat", "1"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("packet-hops/s") && text.contains("build s") && text.contains("128/128"),
        "{text}"
    );
    // The memory table: one row per case, a column per part.
    let mem = text
        .lines()
        .find(|l| l.starts_with("memory, bytes per host"))
        .unwrap_or_else(|| panic!("no memory table: {text}"));
    for part in fabricsim::sim::memory::PARTS {
        assert!(mem.contains(part), "{part} missing: {mem}");
    }
}

/// The memory a bench child reports is the sum of its parts, each part is what the
/// structures hold (a k = 4 fat tree: 16 hosts, 20 switches, 48 cables, so 96 ports and
/// 96 links), and the packets' part is at least a descriptor and a slot per packet alive
/// at the peak.
#[test]
fn bench_memory_parts_sum_to_the_reported_total() {
    let o = exe()
        .args(["bench", "--child", "--k", "4"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let part = |p: &str| {
        v["memory_bytes"][p]
            .as_u64()
            .unwrap_or_else(|| panic!("{p}: {v}"))
    };
    let sum: u64 = fabricsim::sim::memory::PARTS.iter().map(|p| part(p)).sum();
    assert_eq!(v["memory_total"].as_u64(), Some(sum), "{v}");
    assert_eq!(v["hosts"].as_u64(), Some(16));
    let port = std::mem::size_of::<fabricsim::model::fabric::Port>() as u64;
    let link = std::mem::size_of::<fabricsim::model::fabric::Link>() as u64;
    assert_eq!(part("ports"), 96 * port, "{v}");
    assert_eq!(part("links"), 96 * link, "{v}");
    let peak = v["peak_packets"].as_u64().unwrap();
    assert!(peak > 0, "{v}");
    let slot = std::mem::size_of::<fabricsim::kernel::packet::Slot>() as u64;
    assert!(part("arena") >= peak * slot, "{v}");
    let queued = fabricsim::sim::memory::queued_packet_bytes() as u64;
    assert!(
        part("arena") + part("queues") + part("link rings") >= peak * queued,
        "{v}"
    );
}

/// Bad `bench` arguments are input errors (status 2, the argument named) found before any
/// case runs, not a failed child run.
#[test]
fn bench_rejects_bad_arguments_before_running() {
    for (args, expect) in [
        (
            &["bench", "--k", "7"][..],
            "--k 7: the fat-tree radix must be even",
        ),
        (
            &["bench", "--k", "0"][..],
            "--k 0: the fat-tree radix must be even",
        ),
        (&["bench", "--k", "130"][..], "between 2 and 74"),
        (&["bench", "--repeat", "0"][..], "--repeat 0: runs per case"),
        (
            &["bench", "--repeat", "4000000000"][..],
            "between 1 and 100",
        ),
        (&["bench", "--child", "--km", "nan"][..], "--km NaN"),
        (
            &["bench", "--child", "--km=-3"][..],
            "positive number of km",
        ),
        (&["bench", "--child", "--km", "1e12"][..], "at most"),
        (&["bench", "--km", "120"][..], "--km is internal"),
        (
            &["bench", "--long-haul", "--k", "8"][..],
            "give one of them",
        ),
    ] {
        let t = std::time::Instant::now();
        let o = exe().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(expect),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: ran something");
        // Rejected before any work: no case was built.
        assert!(
            t.elapsed().as_secs() < 10,
            "{args:?} took {:?}",
            t.elapsed()
        );
    }
}

/// A reader that stops early (`fabricsim check ... | head -1`) ends fabricsim quietly, as
/// it ends other Unix tools: no panic message, and not the panic's exit status.
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    // 600 runs: a listing longer than the pipe holds, so its writes must meet EPIPE.
    let mut child = exe()
        .args([
            "check",
            scenario("gse-vs-roce-readings.toml").to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is closed here: later writes get EPIPE.
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(o.status.code(), Some(101), "{stderr}");
    assert!(
        o.status.success() || o.status.signal() == Some(libc::SIGPIPE),
        "{:?}: {stderr}",
        o.status
    );
}
