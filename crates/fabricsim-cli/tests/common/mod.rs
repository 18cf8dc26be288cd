//! Helpers the command-line tests share: walking a results folder.

use std::path::{Path, PathBuf};

/// Every file under `dir`, recursively, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// No `.tmp` file (a half-written result) anywhere under `dir`.
pub fn assert_no_tmp(dir: &Path) {
    for f in files_under(dir) {
        let n = f.file_name().unwrap().to_string_lossy();
        assert!(!n.ends_with(".tmp"), "temporary file left: {}", f.display());
    }
}
