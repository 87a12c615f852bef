//! The repository's files, for the tests that check the repository itself
//! (`tidy`, `tidy_parity`, `tidy_targets`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (this crate lives in `crates/claude-code-agent`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// Paths (relative to the root, `/`-separated) of the files git tracks or
/// would track: new files count before they are added.
pub fn files() -> Vec<String> {
    let root = repo_root();
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(&root)
        .output()
        .unwrap_or_else(|e| panic!("tidy needs git to list the repository's files: {e}"));
    assert!(
        out.status.success(),
        "`git ls-files` failed in {} (tidy needs a git checkout): {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files: Vec<String> = String::from_utf8(out.stdout)
        .expect("UTF-8 paths")
        .split('\0')
        .filter(|p| !p.is_empty())
        // Not files deleted in the work tree but still in the index, nor
        // symbolic links (a crate's README and licences point at the root's,
        // which are checked themselves).
        .filter(|p| std::fs::symlink_metadata(root.join(p)).is_ok_and(|m| m.file_type().is_file()))
        .map(str::to_owned)
        .collect();
    files.sort();
    files.dedup();
    files
}

/// A file's text; binary files are read lossily (line numbers still hold).
pub fn read(path: &str) -> String {
    let bytes = std::fs::read(repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What `cargo <args>` prints, run in the repository's root (the cargo
/// running the tests, `$CARGO`); fails the test if cargo fails.
pub fn cargo_stdout(args: &[&str]) -> Vec<u8> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap_or_else(|e| panic!("tidy needs `cargo {}`: {e}", args[0]));
    assert!(
        out.status.success(),
        "`cargo {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Fails with every violation, one a line.
pub fn check(rule: &str, violations: Vec<String>) {
    assert!(
        violations.is_empty(),
        "tidy: {rule}\n{}\n",
        violations.join("\n")
    );
}
