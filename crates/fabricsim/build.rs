//! Records the git commit the library is built from, so that every `summary.json` says
//! which code produced it (`run.git_commit`). Outside a git checkout (a source tarball,
//! a registry download) or without `git` on the machine the commit is `unknown`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=FABRICSIM_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves: HEAD itself (a checkout of another branch) and the ref it
    // points at (a commit on the branch). Only existing files are named: cargo treats a
    // missing one as always changed and would rerun this script on every build.
    // `--git-dir` is the worktree's own folder (its HEAD); refs live in the common folder.
    let Some(git_dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) else {
        return;
    };
    let common = git(&["rev-parse", "--git-common-dir"])
        .map(PathBuf::from)
        .unwrap_or_else(|| git_dir.clone());
    let mut watch = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(git_dir.join(&r));
        watch.push(common.join(&r));
    }
    for p in watch {
        if Path::new(&p).is_file() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
