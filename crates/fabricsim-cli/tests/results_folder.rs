//! The results folder is ours alone: fabricsim never writes through a symbolic link
//! (`--out`, a run folder, a results file or a temporary file that is one), refuses
//! them before anything is simulated (exit 2, naming the path), and deletes only the
//! temporary names it writes, only in folders it made. `--resume` reuses only what reads
//! back as fabricsim wrote it (regular files, a known outcome), without blocking on a
//! FIFO. The thread and memory arguments are checked alike on `run`, `check` and `bench`.

use std::collections::BTreeSet;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A sweep of two runs (folders `s-mtu=1024`, `s-mtu=2048`), or one run.
fn scenario(dir: &Path, sweep: bool) -> PathBuf {
    let f = dir.join(if sweep { "sweep.toml" } else { "one.toml" });
    let mut text = String::from(
        r#"name = "s"
max_time = "1ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
servers_per_leaf = 2
host_rate = "100Gbps"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 3, size = "64KB" }]
"#,
    );
    if sweep {
        text.push_str("[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024, 2048]\n");
    }
    std::fs::write(&f, text).unwrap();
    f
}

/// `fabricsim run FILE --out OUT --quiet EXTRA...`, killed after 60 s (a hang fails).
fn run(file: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut child = exe()
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(["--quiet", "--threads", "1"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("fabricsim run hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Names in `dir` (links not followed).
fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn assert_refused(o: &Output, names: &[&str]) {
    let e = stderr_of(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.starts_with("error: "), "{e}");
    for n in names {
        assert!(e.contains(n), "`{n}` missing: {e}");
    }
    assert!(
        o.stdout.is_empty(),
        "results were printed: a run was simulated"
    );
}

/// A folder outside `--out` holding one file, `keep`, and the same again after.
fn victim(d: &Path) -> PathBuf {
    let v = d.join("victim");
    std::fs::create_dir(&v).unwrap();
    std::fs::write(v.join("keep"), "mine").unwrap();
    std::fs::write(v.join(".flows.csv.tmp"), "mine too").unwrap();
    v
}

fn assert_untouched(v: &Path) {
    assert_eq!(
        entries(v),
        BTreeSet::from(["keep".to_string(), ".flows.csv.tmp".to_string()])
    );
    assert_eq!(std::fs::read_to_string(v.join("keep")).unwrap(), "mine");
    assert_eq!(
        std::fs::read_to_string(v.join(".flows.csv.tmp")).unwrap(),
        "mine too"
    );
}

#[test]
fn a_run_folder_that_is_a_link_is_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let f = scenario(d.path(), true);
    let v = victim(d.path());
    for dangling in [false, true] {
        let out = d.path().join(format!("out-{dangling}"));
        std::fs::create_dir(&out).unwrap();
        let target = if dangling {
            d.path().join("nowhere")
        } else {
            v.clone()
        };
        symlink(&target, out.join("s-mtu=1024")).unwrap();
        let o = run(&f, &out, &[]);
        assert_refused(&o, &["s-mtu=1024", "symbolic link"]);
        // Nothing simulated, nothing written: the other run's folder was not made.
        assert!(!out.join("s-mtu=2048").exists());
        assert!(!out.join("comparison.csv").exists());
        assert!(!d.path().join("nowhere").exists());
    }
    assert_untouched(&v);
}

#[test]
fn an_out_that_is_a_link_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let v = victim(d.path());
    let out = d.path().join("out");
    symlink(&v, &out).unwrap();
    for sweep in [false, true] {
        let o = run(&scenario(d.path(), sweep), &out, &[]);
        assert_refused(&o, &["--out", "symbolic link"]);
    }
    assert_untouched(&v);
}

#[test]
fn a_results_file_that_is_a_link_or_a_folder_is_refused_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let v = victim(d.path());
    let one = scenario(d.path(), false);
    let sweep = scenario(d.path(), true);
    // One run: its files go to --out itself.
    for name in ["summary.json", "flows.csv", "scenario.resolved.toml"] {
        let out = d.path().join(format!("one-{name}"));
        std::fs::create_dir(&out).unwrap();
        symlink(v.join("keep"), out.join(name)).unwrap();
        assert_refused(&run(&one, &out, &[]), &[name, "symbolic link"]);
        std::fs::remove_file(out.join(name)).unwrap();
        std::fs::create_dir(out.join(name)).unwrap();
        assert_refused(&run(&one, &out, &[]), &[name, "is a folder"]);
    }
    // A sweep: the files across runs, and a run folder's files.
    for name in ["comparison.csv", "sweep.json", "report.html"] {
        let out = d.path().join(format!("sweep-{name}"));
        std::fs::create_dir(&out).unwrap();
        std::fs::create_dir(out.join(name)).unwrap();
        assert_refused(&run(&sweep, &out, &[]), &[name, "is a folder"]);
        assert!(!out.join("s-mtu=1024").exists());
    }
    let out = d.path().join("sweep-run-file");
    std::fs::create_dir_all(out.join("s-mtu=2048")).unwrap();
    symlink(v.join("keep"), out.join("s-mtu=2048").join("ports.csv")).unwrap();
    assert_refused(&run(&sweep, &out, &[]), &["s-mtu=2048", "ports.csv"]);
    assert_untouched(&v);
}

#[test]
fn temporary_names_are_created_new_and_removed_only_in_our_folders() {
    let d = tempfile::tempdir().unwrap();
    let v = victim(d.path());
    let sweep = scenario(d.path(), true);
    // A folder of the user's (not empty, not made by fabricsim) holding a file with a
    // temporary name: left alone, and the run refused rather than failing late.
    let home = d.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("notes.txt"), "x").unwrap();
    std::fs::write(home.join(".comparison.csv.tmp"), "the user's").unwrap();
    std::fs::write(home.join(".x.tmp"), "the user's").unwrap();
    let o = run(&sweep, &home, &[]);
    assert_refused(&o, &[".comparison.csv.tmp", "not one fabricsim made"]);
    assert_eq!(
        std::fs::read_to_string(home.join(".comparison.csv.tmp")).unwrap(),
        "the user's"
    );
    // Without it the run writes there, and deletes nothing of the user's.
    std::fs::remove_file(home.join(".comparison.csv.tmp")).unwrap();
    let o = run(&sweep, &home, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(home.join(".x.tmp").is_file() && home.join("notes.txt").is_file());
    assert!(
        !home.join(".fabricsim").exists(),
        "a folder of the user's was marked"
    );
    // In a folder fabricsim made, a temporary file a killed writer left is removed, a
    // link with a temporary name too (the link, never its target); other names stay.
    let out = d.path().join("out");
    assert_eq!(run(&sweep, &out, &[]).status.code(), Some(0));
    assert!(out.join(".fabricsim").is_file());
    let run_dir = out.join("s-mtu=1024");
    symlink(v.join(".flows.csv.tmp"), run_dir.join(".flows.csv.tmp")).unwrap();
    std::fs::write(out.join(".jct.csv.tmp"), "stale").unwrap();
    std::fs::write(out.join(".notes.tmp"), "not a name fabricsim writes").unwrap();
    let o = run(&sweep, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(std::fs::symlink_metadata(run_dir.join(".flows.csv.tmp")).is_err());
    assert!(!out.join(".jct.csv.tmp").exists());
    assert!(out.join(".notes.tmp").is_file());
    assert!(run_dir.join("flows.csv").is_file());
    assert_untouched(&v);
}

#[test]
fn resume_reruns_what_does_not_read_back_as_fabricsim_wrote_it() {
    let d = tempfile::tempdir().unwrap();
    let sweep = scenario(d.path(), true);
    let out = d.path().join("out");
    assert_eq!(run(&sweep, &out, &[]).status.code(), Some(0));
    let a = out.join("s-mtu=1024").join("summary.json");
    let b = out.join("s-mtu=2048").join("summary.json");
    // A FIFO in place of a summary: never opened (it would block), the run reruns.
    std::fs::remove_file(&a).unwrap();
    let made = Command::new("mkfifo").arg(&a).status();
    // An outcome no run can have: not reused.
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains("\"outcome\": \"completed\""));
    std::fs::write(&b, text.replace("\"completed\"", "\"exploded\"")).unwrap();
    let o = run(&sweep, &out, &["--resume"]);
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(!e.contains("reused"), "{e}");
    assert!(!e.contains("exploded"), "{e}");
    if made.is_ok_and(|s| s.success()) {
        assert!(std::fs::symlink_metadata(&a).unwrap().is_file());
    }
    assert!(std::fs::read_to_string(&b)
        .unwrap()
        .contains("\"completed\""));
    // A summary that is a link (to an endless device): refused before anything runs.
    std::fs::remove_file(&a).unwrap();
    symlink("/dev/zero", &a).unwrap();
    let o = run(&sweep, &out, &["--resume"]);
    assert_refused(&o, &["summary.json", "symbolic link"]);
}

#[test]
fn thread_arguments_are_checked_alike_on_run_check_and_bench() {
    let d = tempfile::tempdir().unwrap();
    let one = scenario(d.path(), false);
    let f = one.to_str().unwrap();
    let max = u64::MAX.to_string();
    for bad in ["0", "1025", "1000000", max.as_str()] {
        for args in [
            vec!["run", f, "--threads-per-run", bad],
            vec!["check", f, "--threads-per-run", bad],
            vec![
                "bench",
                "--k",
                "4",
                "--repeat",
                "1",
                "--threads-per-run",
                bad,
            ],
        ] {
            let o = exe().args(&args).output().unwrap();
            let e = stderr_of(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
            assert!(e.contains("--threads-per-run"), "{args:?}: {e}");
            assert!(!e.contains("panicked"), "{args:?}: {e}");
        }
    }
    let o = exe()
        .args(["run", f, "--threads", "1000000"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("--threads 1000000"));
}

#[test]
fn a_memory_limit_above_the_machine_needs_force() {
    let d = tempfile::tempdir().unwrap();
    let one = scenario(d.path(), false);
    let f = one.to_str().unwrap();
    // Far above any machine this runs on.
    let huge = "100000000GiB";
    for cmd in ["run", "check"] {
        let o = exe().args([cmd, f, "--max-memory", huge]).output().unwrap();
        let e = stderr_of(&o);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {e}");
        assert!(e.contains("--max-memory") && e.contains("--force"), "{e}");
    }
    let o = exe()
        .args(["check", f, "--max-memory", huge, "--force"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
}

#[test]
fn a_hardware_collective_repeat_is_priced_before_it_is_allocated() {
    // 50 million iterations: a few GiB of records, refused under a 1 GiB limit, naming
    // the repeat; `check` says so without allocating them.
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("hw.toml");
    std::fs::write(
        &f,
        r#"[topology]
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
[transport]
mtu = "2KiB"
header = 48
kind = "message"
[[workload]]
kind = "hw_collective"
collective = "barrier"
repeat = 50000000
"#,
    )
    .unwrap();
    let o = exe()
        .arg("check")
        .arg(&f)
        .args(["--max-memory", "1GiB"])
        .output()
        .unwrap();
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("field `workload[0].repeat`"), "{e}");
    assert!(e.contains("iteration records"), "{e}");
}
