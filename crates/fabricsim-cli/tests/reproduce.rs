//! `fabricsim reproduce`: `--check` passes on the committed tables and fails, naming the
//! table, when one was edited by hand; the check writes no document; runs already in
//! `--out` are not rerun; a document it does not know is bad input (exit 2).
//!
//! Each test works on a copy of the repository's `docs/results/` and the one scenario it
//! needs (`sunway-collectives`: 30 runs, under a second), never on the repository itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A temporary root with docs/results/*.md and scenarios/sunway-collectives.toml.
fn copy_root() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let docs = t.path().join("docs/results");
    std::fs::create_dir_all(&docs).unwrap();
    for e in std::fs::read_dir(repo().join("docs/results")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            std::fs::copy(&p, docs.join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::create_dir_all(t.path().join("scenarios")).unwrap();
    std::fs::copy(
        repo().join("scenarios/sunway-collectives.toml"),
        t.path().join("scenarios/sunway-collectives.toml"),
    )
    .unwrap();
    t
}

fn reproduce(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .arg("reproduce")
        .args(args)
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(root.join("out"))
        .args(["--threads", "2"])
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `text` without the content of its provenance block (which names the commit).
fn without_provenance(text: &str) -> String {
    let b = text
        .find("<!-- generated:provenance begin -->")
        .expect("provenance block");
    let e = text
        .find("<!-- generated:provenance end -->")
        .expect("provenance end");
    format!("{}{}", &text[..b], &text[e..])
}

const DOC: &str = "docs/results/sunway-collectives.md";

#[test]
fn check_passes_on_the_committed_tables_and_fails_on_a_hand_edited_one() {
    let t = copy_root();
    let ok = reproduce(t.path(), &["sunway-collectives", "--check"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));

    // One figure of the generated latency table changed by hand.
    let path = t.path().join(DOC);
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = text
        .find("<!-- generated:latency begin -->")
        .expect("latency block");
    let row = begin
        + text[begin..]
            .find("| barrier | 256 (128) | ")
            .expect("barrier row");
    let cell = row + "| barrier | 256 (128) | ".len();
    let end = cell + text[cell..].find(' ').unwrap();
    let mut tampered = text.clone();
    tampered.replace_range(cell..end, "70.00");
    assert_ne!(tampered, text);
    std::fs::write(&path, &tampered).unwrap();

    let bad = reproduce(t.path(), &["sunway-collectives", "--check"]);
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    let err = stderr(&bad);
    assert!(err.contains("table `latency` differs"), "{err}");
    assert!(
        err.contains("70.00"),
        "the diff shows the edited cell: {err}"
    );
    // The check writes no document.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), tampered);

    // Regenerating restores the table, and the check passes again.
    let fix = reproduce(t.path(), &["sunway-collectives"]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    assert_eq!(
        without_provenance(&std::fs::read_to_string(&path).unwrap()),
        without_provenance(&text),
        "regenerated, the document is as committed but for the commit it names"
    );
    let again = reproduce(t.path(), &["sunway-collectives", "--check"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    // The runs of the first call were kept.
    assert!(stderr(&again).contains("not rerun"), "{}", stderr(&again));
}

#[test]
fn a_hand_edited_claims_page_fails_the_check() {
    let t = copy_root();
    let page = t.path().join("docs/results/README.md");
    let text = std::fs::read_to_string(&page).unwrap();
    // A computed verdict overwritten by hand.
    let tampered = text.replacen(
        "| qualitative | [sunway-collectives.md]",
        "| reproduced | [sunway-collectives.md]",
        1,
    );
    assert_ne!(tampered, text, "the page has a qualitative verdict to edit");
    std::fs::write(&page, &tampered).unwrap();
    let bad = reproduce(t.path(), &["sunway-collectives", "--check"]);
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("docs/results/README.md: table `claims-"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn unknown_or_hand_written_documents_are_bad_input() {
    let t = copy_root();
    let o = reproduce(t.path(), &["sunway-colectives"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("unknown document `sunway-colectives`"), "{e}");
    assert!(e.contains("did you mean `sunway-collectives`"), "{e}");
    assert!(
        e.contains("longhaul"),
        "the message lists the documents: {e}"
    );
    let o = reproduce(t.path(), &["bench"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("scripts/bench-doc.sh"),
        "{}",
        stderr(&o)
    );
    let o = reproduce(t.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--fast"), "{}", stderr(&o));
    // A block that is not closed is named with its line, before anything runs.
    let path = t.path().join(DOC);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("<!-- generated:fit end -->\n", "")).unwrap();
    let o = reproduce(t.path(), &["sunway-collectives"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("block `fit`"), "{}", stderr(&o));
    assert!(
        !t.path().join("out/sunway-collectives").exists(),
        "nothing ran"
    );
}
