//! Bad input never panics: every malformed scenario under `tests/fixtures/bad/` makes
//! `fabricsim check` exit with status 2 and a one-line `error: ...` naming the file and the
//! field (or the line and column of a syntax error).
//!
//! Each fixture starts with a comment saying what is wrong, followed by one or more
//! `# expect: <text>` lines; every such text must appear in the error message. Then
//! `# absent: <text>` lines may follow, texts that must not appear (a far-off name gets
//! no "did you mean").

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_fabricsim")
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad")
}

fn bad_fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures/bad exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

/// The `# expect:` lines of a fixture (right after its first comment line), and the
/// `# absent:` lines after them.
fn expectations(path: &Path) -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("fixture readable");
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("# ") && !first.starts_with("# expect:"),
        "{}: the first line must be a comment saying what is wrong",
        path.display()
    );
    let mut lines = lines.peekable();
    let mut exp = Vec::new();
    while let Some(e) = lines.peek().and_then(|l| l.strip_prefix("# expect: ")) {
        exp.push(e.to_string());
        lines.next();
    }
    assert!(
        !exp.is_empty(),
        "{}: the second line must be `# expect: <text>`",
        path.display()
    );
    let absent: Vec<String> = lines
        .map_while(|l| l.strip_prefix("# absent: "))
        .map(str::to_string)
        .collect();
    (exp, absent)
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The checks every bad-input failure must pass; `Err` says which one failed.
fn check_input_error(o: &Output, what: &str, must_contain: &[&str]) -> Result<(), String> {
    let err = stderr_of(o);
    if o.status.code() != Some(2) {
        return Err(format!(
            "{what}: expected exit status 2, got {:?}; stderr:\n{err}",
            o.status
        ));
    }
    if !err.starts_with("error: ") {
        return Err(format!("{what}: stderr must start with `error: `:\n{err}"));
    }
    if err.contains("panicked") {
        return Err(format!("{what}: the program panicked:\n{err}"));
    }
    for s in must_contain {
        if !err.contains(s) {
            return Err(format!("{what}: stderr should contain `{s}`:\n{err}"));
        }
    }
    Ok(())
}

fn assert_input_error(o: &Output, what: &str, must_contain: &[&str]) {
    if let Err(m) = check_input_error(o, what, must_contain) {
        panic!("{m}");
    }
}

#[test]
fn enough_fixtures() {
    let n = bad_fixtures().len();
    assert!(n >= 14, "only {n} bad fixtures");
}

#[test]
fn check_rejects_every_bad_fixture_with_status_2() {
    let mut failures = Vec::new();
    for f in bad_fixtures() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let (exp, absent) = expectations(&f);
        let o = Command::new(exe())
            .arg("check")
            .arg(&f)
            .output()
            .expect("run fabricsim");
        let mut want: Vec<&str> = vec![name.as_str()];
        want.extend(exp.iter().map(String::as_str));
        // Collect every failure so one run reports them all.
        if let Err(m) = check_input_error(&o, &name, &want) {
            failures.push(m);
        }
        let err = stderr_of(&o);
        for a in &absent {
            if err.contains(a.as_str()) {
                failures.push(format!("{name}: stderr should not contain `{a}`:\n{err}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn syntax_errors_carry_line_and_column() {
    let f = fixtures_dir().join("syntax_error.toml");
    let o = Command::new(exe()).arg("check").arg(&f).output().unwrap();
    let err = stderr_of(&o);
    // `<path>:7:<col>: TOML syntax error`
    let after = err
        .split_once("syntax_error.toml:7:")
        .map(|(_, r)| r)
        .unwrap_or_else(|| panic!("no line 7 in:\n{err}"));
    let col: String = after.chars().take_while(char::is_ascii_digit).collect();
    assert!(
        col.parse::<usize>().is_ok_and(|c| c > 0),
        "no column in:\n{err}"
    );
}

#[test]
fn run_on_bad_input_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["flow_missing_host.toml", "duplicate_variants.toml"] {
        let out = dir.path().join(name.trim_end_matches(".toml"));
        let o = Command::new(exe())
            .arg("run")
            .arg(fixtures_dir().join(name))
            .arg("--out")
            .arg(&out)
            .arg("--quiet")
            .output()
            .unwrap();
        assert_input_error(&o, name, &[name]);
        assert!(
            !out.exists(),
            "{name}: results folder {} was created",
            out.display()
        );
        assert!(o.stdout.is_empty(), "{name}: printed results");
    }
}

/// The quickstart scenario: `--set` is tested on a valid file.
fn quickstart() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/quickstart.toml")
}

#[test]
fn quickstart_is_valid() {
    // The control for the `--set` tests below: without overrides the scenario checks.
    let o = Command::new(exe())
        .arg("check")
        .arg(quickstart())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
}

#[test]
fn bad_overrides_exit_2_naming_the_path() {
    let cases: &[(&str, &[&str])] = &[
        // Unknown field.
        ("cc.algorythm=none", &["cc.algorythm"]),
        // Unknown value.
        ("cc.algorithm=cubic", &["cc.algorithm", "cubic"]),
        // Not path=value.
        ("cc.algorithm", &["path=value"]),
        // Index out of range.
        ("workload[9].size=1", &["workload[9].size", "out of range"]),
        // Bad index syntax.
        ("workload[x].size=1", &["workload[x].size", "bad index"]),
        // Empty segment.
        ("fabric..buffer=1MB", &["fabric..buffer", "empty segment"]),
        // Descending into a value that is not a table.
        ("seed.x=1", &["seed.x", "not a table"]),
        // Negative rate.
        (
            "topology.host_rate=-100Gbps",
            &["topology.host_rate", "negative"],
        ),
        // Zero rate.
        (
            "topology.uplink_rate=0Gbps",
            &["topology.uplink_rate", "positive"],
        ),
        // Wrong type.
        ("topology.leaves=\"four\"", &["topology.leaves"]),
        // MTU above what the buffer can hold.
        ("fabric.buffer=4KB", &["fabric.buffer"]),
        // Flow to a missing host.
        (
            "workload[2].flows[0].dst=99",
            &["workload[2].flows[0].dst", "99"],
        ),
    ];
    for (set, want) in cases {
        let o = Command::new(exe())
            .arg("check")
            .arg(quickstart())
            .arg("--set")
            .arg(set)
            .output()
            .unwrap();
        assert_input_error(&o, &format!("--set {set}"), want);
    }
}

/// A `--set` path that does not exist is bad input whose error suggests the path
/// meant, at whatever depth the typo is; a path far from any gets no suggestion.
#[test]
fn misspelt_set_paths_suggest_the_name_meant() {
    let qs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/quickstart.toml");
    for (set, field, want) in [
        (
            "cc.algoritm=hpcc",
            "cc.algoritm",
            Some("did you mean `algorithm`?"),
        ),
        (
            "cc.algorithm=hpc",
            "cc.algorithm",
            Some("did you mean `hpcc`?"),
        ),
        (
            "fabric.pfcc.xoff=1",
            "fabric.pfcc",
            Some("did you mean `pfc`?"),
        ),
        (
            "workloads[0].size=1",
            "workloads[0].size",
            Some("did you mean `workload`?"),
        ),
        ("topology.kind=torus", "topology.kind", None),
    ] {
        let o = Command::new(exe())
            .arg("check")
            .arg(&qs)
            .args(["--set", set])
            .output()
            .expect("run fabricsim");
        let field = format!("field `{field}`");
        let mut must = vec![field.as_str()];
        must.extend(want);
        assert_input_error(&o, set, &must);
        if want.is_none() {
            let err = stderr_of(&o);
            assert!(!err.contains("did you mean"), "{set}: {err}");
        }
    }
}
