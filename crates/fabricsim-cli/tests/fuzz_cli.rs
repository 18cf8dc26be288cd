//! Fuzzing the command line as a user reaches it: generated argument lists (commands,
//! flags, hostile numbers, paths to FIFOs, devices, folders, links) and mutated scenario
//! texts (a value replaced by a hostile token, a line deleted or duplicated, a NUL or a
//! byte that is not UTF-8), each run through the `fabricsim` binary. Every case must
//! end in time with status 0, 1 or 2 (2 with a one-line `error: ...`), never a panic, an
//! abort, a signal or status 3, and write nothing outside its `--out`.
//!
//! Bounded in time for CI: `FABRICSIM_FUZZ_CASES` cases per property (default 256) and
//! at most `FABRICSIM_FUZZ_SECS` seconds per property (default 60), after which the
//! remaining cases pass untried. A longer run: `FABRICSIM_FUZZ_CASES=5000
//! FABRICSIM_FUZZ_SECS=1800 cargo test --release -p fabricsim-cli --test fuzz_cli`
//! (`FABRICSIM_FUZZ_VERBOSE=1` prints each case's status and first line of stderr).
//! Each crash class found gets a fixture in `tests/fixtures/bad` (`bad_input.rs`).

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn cases() -> u32 {
    env_or("FABRICSIM_FUZZ_CASES", 256) as u32
}

fn budget() -> Duration {
    Duration::from_secs(env_or("FABRICSIM_FUZZ_SECS", 60))
}

/// Longest a case may take before it counts as a hang.
const CASE_LIMIT: Duration = Duration::from_secs(60);

/// A valid scenario of one short run, the base of the mutations.
const TINY: &str = r#"name = "fz"
seed = 3
max_time = "200us"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
[transport]
mtu = 1024
[fabric]
buffer = "1MB"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 3, size = "32KB" }, { src = 1, dst = 2, size = "8KB" }]
[[sweep]]
path = "transport.mtu"
values = [1024, 2048]
"#;

/// Tokens a value is replaced with, and values the flags get.
const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "1",
    "1025",
    "4294967295",
    "18446744073709551615",
    "99999999999999999999999",
    "1e308",
    "nan",
    "inf",
    "\"\"",
    "\"x\"",
    "\"0ns\"",
    "\"1ps\"",
    "\"1000000s\"",
    "\"0B\"",
    "\"1TiB\"",
    "\"64KiB\"",
    "\"../../../etc/passwd\"",
    "\"/dev/zero\"",
    "[]",
    "{}",
    "true",
    "[0, 0]",
    "\"\u{7f}\"",
];

/// Flag values: numbers, sizes, overrides, paths (`@fifo`, `@dev`, ... are replaced by
/// the sandbox's odd files).
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "1024",
    "1025",
    "-1",
    "18446744073709551615",
    "99999999999999999999999",
    "NaN",
    "",
    "x",
    "8GiB",
    "1KB",
    "100000000GiB",
    "1TiB",
    "max_time=\"100us\"",
    "cc.algorithm=none",
    "cc.algorithm=cubic",
    "workload[0].size=0",
    "workload[9].size=1",
    "topology.leaves=0",
    "topology.servers_per_leaf=100000000",
    "transport.mtu=1",
    "sweep[0].values=[]",
    "seeds=4294967295",
    "seeds=3",
    "transport.ack_size=65536",
    "transport.header=0",
    "transport.mtu=2048",
    "fabric.pfc.enabled=false",
    "fabric.credit.enabled=true",
    "fabric.credit.private=\"8KiB\"",
    "fabric.buffer=1",
    "workload[0].flows[0].size=1422533",
    "workload[0].flows[0].size=18446744073709551615",
    "workload[0].flows[0].start=\"1000s\"",
    "max_time=\"1000s\"",
    "stall_timeout=\"1ps\"",
    "record.queue_interval=\"1ps\"",
    "a=b=c",
    "=",
    "@scenario",
    "@fifo",
    "@dev",
    "@dir",
    "@missing",
    "@link",
    "@out",
    "@outlink",
];

const FLAGS: &[&str] = &[
    "--threads-per-run",
    "--threads",
    "--max-memory",
    "--seed",
    "--set",
    "--out",
    "--resume",
    "--quiet",
    "--force",
    "--k",
    "--repeat",
    "--long-haul",
    "--km",
    "--child",
    "--help-me",
];

/// The files a case may point at, in a fresh sandbox folder, and what each holds.
struct Sandbox {
    dir: tempfile::TempDir,
    /// A folder outside every `--out` that links point into: must stay as it was.
    victim: PathBuf,
}

impl Sandbox {
    fn new(scenario: &[u8]) -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("s.toml"), scenario).unwrap();
        let victim = p.join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("keep"), "keep").unwrap();
        std::fs::write(victim.join(".flows.csv.tmp"), "keep").unwrap();
        std::fs::create_dir(p.join("dir")).unwrap();
        symlink(&victim, p.join("link")).unwrap();
        symlink(&victim, p.join("outlink")).unwrap();
        let _ = Command::new("mkfifo").arg(p.join("fifo")).status();
        Sandbox { dir, victim }
    }

    fn path(&self, token: &str) -> String {
        let p = self.dir.path();
        match token {
            "@scenario" => p.join("s.toml"),
            "@fifo" => p.join("fifo"),
            "@dev" => PathBuf::from("/dev/zero"),
            "@dir" => p.join("dir"),
            "@missing" => p.join("missing.toml"),
            "@link" => p.join("link"),
            "@out" => p.join("out"),
            "@outlink" => p.join("outlink"),
            t => return t.to_string(),
        }
        .to_string_lossy()
        .into_owned()
    }

    /// Every file under the sandbox but in `outs` (links not followed), with its bytes.
    fn snapshot(&self, outs: &[PathBuf]) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut m = BTreeMap::new();
        let mut stack = vec![self.dir.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                let p = e.path();
                if outs.contains(&p) {
                    continue;
                }
                let t = e.file_type().unwrap();
                if t.is_dir() {
                    stack.push(p.clone());
                    m.insert(p, b"/".to_vec());
                } else if t.is_file() {
                    m.insert(p.clone(), std::fs::read(&p).unwrap());
                } else {
                    m.insert(p, b"?".to_vec());
                }
            }
        }
        m
    }
}

/// Runs `fabricsim args` in the sandbox; `Err` says what broke a rule.
fn check_case(sb: &Sandbox, args: &[String]) -> Result<(), String> {
    // What the case named as `--out`, where writing is allowed.
    let outs: Vec<PathBuf> = (args.windows(2))
        .filter(|w| w[0] == "--out")
        .map(|w| sb.dir.path().join(&w[1]))
        .collect();
    let before = sb.snapshot(&outs);
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .args(args)
        .current_dir(sb.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        if t0.elapsed() > CASE_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{args:?}: still running after {CASE_LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let o = child.wait_with_output().map_err(|e| e.to_string())?;
    let err = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code();
    if std::env::var_os("FABRICSIM_FUZZ_VERBOSE").is_some() {
        eprintln!("{code:?} {args:?}: {}", err.lines().next().unwrap_or(""));
    }
    if !matches!(code, Some(0..=2)) {
        return Err(format!("{args:?}: status {:?}\n{err}", o.status));
    }
    if err.contains("panicked") {
        return Err(format!("{args:?}: panicked\n{err}"));
    }
    if code == Some(2) && !err.starts_with("error: ") {
        return Err(format!("{args:?}: status 2 without `error: `\n{err}"));
    }
    let after = sb.snapshot(&outs);
    if before != after {
        let changed: Vec<&PathBuf> = (before.keys().chain(after.keys()))
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        return Err(format!("{args:?}: wrote outside --out: {changed:?}\n{err}"));
    }
    if !sb.victim.join("keep").is_file() || !sb.victim.join(".flows.csv.tmp").is_file() {
        return Err(format!("{args:?}: deleted a file outside --out"));
    }
    Ok(())
}

/// An argument list: a command, the scenario (or an odd path), flags with values.
fn arg_lists() -> impl Strategy<Value = (usize, usize, Vec<(usize, usize, bool)>)> {
    (
        0usize..4,
        0usize..8,
        prop::collection::vec((0..FLAGS.len(), 0..VALUES.len(), any::<bool>()), 0..6),
    )
}

fn build_args(
    sb: &Sandbox,
    (cmd, file, flags): &(usize, usize, Vec<(usize, usize, bool)>),
) -> Vec<String> {
    let cmd = ["run", "check", "bench", "list"][*cmd];
    let mut a = vec![cmd.to_string()];
    if cmd == "run" || cmd == "check" {
        let f = [
            "@scenario",
            "@scenario",
            "@scenario",
            "@fifo",
            "@dev",
            "@dir",
            "@missing",
            "@link",
        ][*file];
        a.push(sb.path(f));
    }
    // Mostly the command's own flags (so that cases get past the argument parser),
    // sometimes any flag.
    let own: &[&str] = match cmd {
        "run" => &[
            "--threads-per-run",
            "--threads",
            "--max-memory",
            "--seed",
            "--set",
            "--set",
            "--set",
            "--out",
            "--resume",
            "--force",
        ],
        "check" => &[
            "--set",
            "--set",
            "--max-memory",
            "--threads-per-run",
            "--force",
        ],
        "bench" => &["--k", "--long-haul", "--km", "--child", "--threads-per-run"],
        _ => FLAGS,
    };
    for &(flag, value, with_value) in flags {
        let name = if flag % 8 == 7 {
            FLAGS[flag]
        } else {
            own[flag % own.len()]
        };
        a.push(name.to_string());
        // The command's own flags get a value when they take one; any other flag, at
        // random.
        let takes = !matches!(
            name,
            "--resume" | "--quiet" | "--force" | "--long-haul" | "--child" | "--help-me"
        );
        if if flag % 8 == 7 { with_value } else { takes } {
            a.push(sb.path(VALUES[value]));
        }
    }
    match cmd {
        // Always into the sandbox's `out` unless the case chose an `--out`, and short.
        "run" => {
            if !a.iter().any(|x| x == "--out") {
                a.extend(["--out".into(), sb.path("@out")]);
            }
            a.extend(["--quiet".into(), "--max-memory".into(), "1GiB".into()]);
        }
        // Never a real benchmark: a repeat of 0 is refused (or clap refuses the flag
        // given twice) after the other arguments are read.
        "bench" => a.extend(["--repeat".into(), "0".into()]),
        _ => {}
    }
    a
}

/// A mutation of [`TINY`]: (line, kind, token).
fn mutations() -> impl Strategy<Value = Vec<(usize, u8, usize)>> {
    prop::collection::vec((0usize..64, 0u8..6, 0..HOSTILE.len()), 1..4)
}

fn mutate(text: &str, muts: &[(usize, u8, usize)]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = text.lines().map(|l| l.as_bytes().to_vec()).collect();
    for &(line, kind, tok) in muts {
        let i = line % lines.len();
        let t = HOSTILE[tok].as_bytes().to_vec();
        match kind {
            // A value replaced.
            0 | 1 => {
                if let Some(eq) = lines[i].iter().position(|&b| b == b'=') {
                    let mut l = lines[i][..=eq].to_vec();
                    l.push(b' ');
                    l.extend(t);
                    lines[i] = l;
                }
            }
            2 => {
                lines.remove(i);
            }
            3 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            // A NUL, or a byte that is not UTF-8, inside a line.
            4 => {
                let at = lines[i].len() / 2;
                lines[i].insert(at, if tok % 2 == 0 { 0 } else { 0xff });
            }
            _ => {
                let l = format!(
                    "{} = {}",
                    ["seeds", "stall_timeout", "max_time"][tok % 3],
                    HOSTILE[tok]
                );
                lines.insert(i, l.into_bytes());
            }
        }
    }
    let mut out = lines.join(&b'\n');
    out.push(b'\n');
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_arguments_never_crash_or_write_outside_out(case in arg_lists()) {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        if START.get_or_init(Instant::now).elapsed() > budget() {
            return Ok(());
        }
        let sb = Sandbox::new(TINY.as_bytes());
        let args = build_args(&sb, &case);
        if let Err(m) = check_case(&sb, &args) {
            prop_assert!(false, "{}", m);
        }
    }

    #[test]
    fn mutated_scenarios_never_crash_or_write_outside_out(muts in mutations(), run in any::<bool>()) {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        if START.get_or_init(Instant::now).elapsed() > budget() {
            return Ok(());
        }
        let sb = Sandbox::new(&mutate(TINY, &muts));
        let s = sb.path("@scenario");
        let args: Vec<String> = if run {
            ["run", &s, "--out", &sb.path("@out"), "--quiet", "--max-memory", "1GiB"]
                .map(String::from)
                .to_vec()
        } else {
            ["check", &s].map(String::from).to_vec()
        };
        if let Err(m) = check_case(&sb, &args) {
            prop_assert!(false, "{}", m);
        }
    }
}
