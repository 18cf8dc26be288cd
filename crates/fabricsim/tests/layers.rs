//! The crate's layers, enforced: every module of `src/` is declared below in one order,
//! bottom to top, and a module may name (`crate::...` outside comments and test modules)
//! only modules declared before it. An import that goes up, or a circle, fails here with
//! the file and the path that made it. `docs/ARCHITECTURE.md`'s code map describes the
//! same layers.
//!
//! A module is a folder at the crate root (`sim`, `output`, ...) or, inside a folder that
//! is a layer (`base`, `kernel`, `model`, `analysis`, `run`), a folder or file of that
//! layer (`model::fabric`). Inside one module, its files may import each other freely:
//! a module owns its parts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, bottom to top, each with its modules in order: a module imports only
/// modules listed before it.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "base::units",
            "base::trusted",
            "base::ids",
            "base::seed",
            "base::param",
            "base::suggest",
            "base::input_file",
            "base::floors",
            "base::presets",
            "base::ring",
            "base::memory",
            "base::block_pool",
            "base::prefetch",
            "base::wire",
            "base::charts",
        ],
    ),
    (
        "kernel",
        &["kernel::events", "kernel::packet", "kernel::ctx"],
    ),
    (
        "model",
        &[
            "model::topology",
            "model::routing",
            "model::gse",
            "model::hw_collective",
            "model::capture",
            "model::fabric",
            "model::cc",
            "model::workload",
            "model::transport",
            "model::longhaul",
            "model::record",
        ],
    ),
    ("scenario", &["scenario"]),
    ("sim", &["sim"]),
    (
        "analysis",
        &[
            "analysis::metrics",
            "analysis::invariants",
            "analysis::convergence",
            "analysis::window",
        ],
    ),
    ("output", &["output"]),
    (
        "run",
        &["run::plan", "run::runner", "run::bench", "run::estimate"],
    ),
];

/// Folders at the crate root that group modules (a layer's modules live inside).
const LAYER_FOLDERS: &[&str] = &["base", "kernel", "model", "analysis", "run"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Rank of each declared module, bottom first.
fn ranks() -> BTreeMap<String, (usize, &'static str)> {
    let mut r = BTreeMap::new();
    for (layer, mods) in LAYERS {
        for m in *mods {
            let n = r.len();
            assert!(
                r.insert(m.to_string(), (n, *layer)).is_none(),
                "{m} declared twice"
            );
        }
    }
    r
}

/// The module a path (relative to the crate root, `::`-separated) belongs to.
fn module_of(path: &[&str]) -> String {
    match path {
        [first, second, ..] if LAYER_FOLDERS.contains(first) => format!("{first}::{second}"),
        [first, ..] => first.to_string(),
        [] => String::new(),
    }
}

/// Source text without comments and without `#[cfg(test)]` items (test modules may
/// reach anywhere).
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            // Skip the item that follows: up to its closing brace (or `;`).
            let mut depth = 0i32;
            let mut opened = false;
            for l in lines.by_ref() {
                let l = strip_line_comment(l);
                for c in l.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        out.push_str(strip_line_comment(line));
        out.push('\n');
    }
    out
}

/// A line without its `//` comment (a `//` inside a string literal is rare enough in
/// import paths not to matter; a string is never an import).
fn strip_line_comment(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Every `crate::` path in `code`, as its segments (a group `crate::{a::b, c}` gives
/// `a::b` and `c`).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(off) = code[i..].find("crate::") {
        let at = i + off;
        let word_before =
            at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        i = at + "crate::".len();
        if word_before {
            continue;
        }
        if bytes.get(i) == Some(&b'{') {
            let mut depth = 0;
            let mut j = i;
            while j < bytes.len() {
                match bytes[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            let inner = &code[i + 1..j.min(code.len())];
            let mut depth = 0;
            let mut start = 0;
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        push_path(&mut out, &inner[start..k]);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            push_path(&mut out, &inner[start..]);
            i = j;
        } else {
            let end = code[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| i + e);
            push_path(&mut out, &code[i..end]);
            i = end;
        }
    }
    out
}

fn push_path(out: &mut Vec<Vec<String>>, p: &str) {
    let segs: Vec<String> = p
        .split("::")
        .map(|s| s.trim().to_string())
        .take_while(|s| !s.is_empty() && !s.starts_with('{'))
        .collect();
    if !segs.is_empty() && segs[0] != "self" {
        out.push(segs);
    }
}

/// The violations in one file: `(path, why)`.
fn check_file(
    rel: &[&str],
    text: &str,
    ranks: &BTreeMap<String, (usize, &'static str)>,
) -> Vec<String> {
    let here = module_of(rel);
    let Some(&(rank, layer)) = ranks.get(&here) else {
        return vec![format!(
            "module `{here}` is in no layer: declare it in LAYERS"
        )];
    };
    let mut bad = Vec::new();
    for p in crate_paths(&code_of(text)) {
        let segs: Vec<&str> = p.iter().map(String::as_str).collect();
        let there = module_of(&segs);
        if there == here || segs.len() == 1 && LAYER_FOLDERS.contains(&segs[0]) {
            continue;
        }
        match ranks.get(&there) {
            None => bad.push(format!(
                "names `crate::{}`, whose module `{there}` is in no layer",
                segs.join("::")
            )),
            Some(&(r, l)) if r >= rank => bad.push(format!(
                "names `crate::{}`: `{there}` ({l}) is not below `{here}` ({layer})",
                segs.join("::")
            )),
            Some(_) => {}
        }
    }
    bad
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src readable") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_import_goes_down() {
    let ranks = ranks();
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&root).expect("under src");
        let mut segs: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if segs.last().is_some_and(|s| s == "mod") {
            segs.pop();
        }
        if segs == ["lib"] {
            continue;
        }
        // Unit-test files (`x/tests.rs`) are test modules.
        if segs.last().is_some_and(|s| s == "tests") {
            continue;
        }
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let text = std::fs::read_to_string(f).expect("readable");
        // A layer folder's own file only declares its modules.
        if let [layer] = segs[..] {
            if LAYER_FOLDERS.contains(&layer) {
                if !crate_paths(&code_of(&text)).is_empty() {
                    problems.push(format!(
                        "src/{}: a layer's folder file declares modules and names nothing",
                        rel.display()
                    ));
                }
                continue;
            }
        }
        seen.insert(module_of(&segs));
        for why in check_file(&segs, &text, &ranks) {
            problems.push(format!("src/{}: {why}", rel.display()));
        }
    }
    for m in ranks.keys() {
        if !seen.contains(m) {
            problems.push(format!("`{m}` is declared in LAYERS but has no file"));
        }
    }
    assert!(
        problems.is_empty(),
        "imports against the layers (tests/layers.rs):\n{}",
        problems.join("\n")
    );
}

#[test]
fn an_upward_import_is_caught() {
    let ranks = ranks();
    let upward = "use crate::sim::Simulation;\nfn f() {}\n";
    let bad = check_file(&["model", "fabric", "link"], upward, &ranks);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("`sim` (sim) is not below `model::fabric` (model)"));
    // In a group, and in an expression path.
    let grouped = "use crate::{base::units::Time, output::Summary};\n";
    assert_eq!(check_file(&["sim", "build"], grouped, &ranks).len(), 1);
    let inline = "fn f() { crate::run::runner::go(); }\n";
    assert_eq!(check_file(&["output", "mod"], inline, &ranks).len(), 1);
    // Sideways within a layer, to a module declared later, is up too.
    let sideways = "use crate::model::transport::Nics;\n";
    assert_eq!(check_file(&["model", "fabric"], sideways, &ranks).len(), 1);
}

#[test]
fn comments_and_tests_do_not_count() {
    let ranks = ranks();
    let text = "//! See [`crate::sim::Simulation`].\nuse crate::base::units::Time; // crate::output\n\
                #[cfg(test)]\nmod tests {\n    use crate::run::runner::go;\n    fn x() { if true { } }\n}\n";
    assert!(check_file(&["model", "fabric"], text, &ranks).is_empty());
}

#[test]
fn the_layers_form_no_circle() {
    // A total order has none; this checks the table itself declares each module once
    // and every layer has a module.
    let r = ranks();
    assert_eq!(r.len(), LAYERS.iter().map(|(_, m)| m.len()).sum::<usize>());
    assert!(LAYERS.iter().all(|(_, m)| !m.is_empty()));
}
