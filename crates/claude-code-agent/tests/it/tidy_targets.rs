//! Each crate's integration tests are one test binary, `tests/it/main.rs`
//! (as cargo's and rust-analyzer's are laid out): when every file of
//! `tests/` was a binary of its own, linking a hundred of them was most of
//! the suite's build. A crate has another test target only for a reason
//! that ARCHITECTURE.md gives, in its section "Test targets of their own",
//! one list item each: `` - `<crate>`, `<target>`: <reason> ``.
//!
//! The targets are cargo's own account of them (`cargo metadata`): files of
//! `tests/` and `[[test]]` entries alike.

use std::process::Command;

use serde_json::Value;

use crate::support::repo::{check, read, repo_root};

/// The heading of ARCHITECTURE.md's list of allowed extra test targets.
const SECTION: &str = "Test targets of their own";

/// Every integration-test target of the workspace: `(package, target)`.
fn test_targets() -> Vec<(String, String)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(repo_root())
        .output()
        .unwrap_or_else(|e| panic!("tidy needs `cargo metadata`: {e}"));
    assert!(
        out.status.success(),
        "`cargo metadata` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    let mut targets = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().expect("targets") {
            if target["kind"]
                .as_array()
                .is_some_and(|k| k.contains(&"test".into()))
            {
                targets.push((
                    package["name"].as_str().unwrap().to_owned(),
                    target["name"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    targets.sort();
    targets
}

/// The allowed extra targets in `architecture`: `(line, package, target,
/// reason)` for each list item of the section [`SECTION`].
fn allowed(architecture: &str) -> Vec<(usize, String, String, String)> {
    let mut found = Vec::new();
    let mut inside = false;
    for (n, line) in architecture.lines().enumerate() {
        if line.starts_with('#') {
            inside = line.trim_start_matches('#').trim() == SECTION;
            continue;
        }
        let Some(item) = line.strip_prefix("- ").filter(|_| inside) else {
            continue;
        };
        let spans: Vec<&str> = item.split('`').skip(1).step_by(2).collect();
        let reason = item.split_once(':').map_or("", |(_, r)| r.trim());
        if let [package, target, ..] = spans[..] {
            found.push((n + 1, package.into(), target.into(), reason.into()));
        }
    }
    found
}

/// Crates with more than one test target beyond those allowed, allowed
/// targets without a reason, and allowed targets that do not exist.
fn target_violations(targets: &[(String, String)], architecture: &str) -> Vec<String> {
    let allowed = allowed(architecture);
    let is_allowed = |package: &str, target: &str| {
        allowed
            .iter()
            .any(|(_, p, t, _)| p == package && t == target)
    };
    let mut found = Vec::new();
    let mut packages: Vec<&str> = targets.iter().map(|(p, _)| p.as_str()).collect();
    packages.sort_unstable();
    packages.dedup();
    for package in packages {
        let mut own: Vec<&str> = targets
            .iter()
            .filter(|(p, t)| p == package && !is_allowed(p, t))
            .map(|(_, t)| t.as_str())
            .collect();
        own.sort_unstable();
        if own.len() > 1 {
            found.push(format!(
                "{package}: {} integration-test targets ({}); make them modules of \
                 one `tests/it/main.rs`, or give the reason for each other in \
                 ARCHITECTURE.md under \"{SECTION}\"",
                own.len(),
                own.join(", ")
            ));
        }
    }
    for (line, package, target, reason) in &allowed {
        if reason.is_empty() {
            found.push(format!(
                "ARCHITECTURE.md:{line}: `{package}`, `{target}` gives no reason"
            ));
        }
        if !targets.iter().any(|(p, t)| p == package && t == target) {
            found.push(format!(
                "ARCHITECTURE.md:{line}: `{package}` has no test target `{target}`"
            ));
        }
    }
    found
}

#[test]
fn each_crate_has_one_test_binary() {
    check(
        "crates have more test targets than ARCHITECTURE.md allows",
        target_violations(&test_targets(), &read("ARCHITECTURE.md")),
    );
}

#[test]
fn the_target_rule_catches_what_it_should() {
    let targets = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    };
    let none = "# A\n\n#### Test targets of their own\n\nNone.\n";
    let one_each = targets(&[("a", "it"), ("b", "it")]);
    assert!(target_violations(&one_each, none).is_empty());

    let two = targets(&[("a", "it"), ("a", "alone"), ("b", "it")]);
    let v = target_violations(&two, none);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(
        v[0].starts_with("a: 2 integration-test targets (alone, it)"),
        "{v:#?}"
    );

    let with_reason = "#### Test targets of their own\n\n- `a`, `alone`: it must be alone\n\n## Next\n- `b`, `x`: y\n";
    assert!(target_violations(&two, with_reason).is_empty());

    let stale = "#### Test targets of their own\n- `a`, `gone`: a reason\n- `b`, `it`:\n";
    let v = target_violations(&one_each, stale);
    assert_eq!(v.len(), 2, "{v:#?}");
    assert_eq!(v[0], "ARCHITECTURE.md:2: `a` has no test target `gone`");
    assert_eq!(v[1], "ARCHITECTURE.md:3: `b`, `it` gives no reason");
}
