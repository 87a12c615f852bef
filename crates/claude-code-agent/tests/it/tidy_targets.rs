//! Each crate's integration tests are one test binary, `tests/it/main.rs`
//! (as cargo's and rust-analyzer's are laid out): when every file of
//! `tests/` was a binary of its own, linking a hundred of them was most of
//! the suite's build. A crate has another test target only for a reason
//! that ARCHITECTURE.md gives, in its section "Test targets of their own",
//! one list item each: `` - `<crate>`, `<target>`: <reason> ``.
//!
//! The targets are cargo's own account of them (`cargo metadata`): files of
//! `tests/` and `[[test]]` entries alike.
//!
//! A program (a `bin` target) with no unit test says `test = false` and
//! `bench = false` in its manifest, and one with unit tests does not say
//! `test = false`: otherwise every test build (and clippy's
//! `--all-targets`) compiles the program a second time as an empty test
//! harness, or its tests never run.

use serde_json::Value;

use crate::support::repo::{cargo_stdout, check, read};

/// The heading of ARCHITECTURE.md's list of allowed extra test targets.
const SECTION: &str = "Test targets of their own";

/// `cargo metadata` of the workspace's own packages.
fn metadata() -> Value {
    let out = cargo_stdout(&[
        "metadata",
        "--no-deps",
        "--offline",
        "--format-version",
        "1",
    ]);
    serde_json::from_slice(&out).expect("cargo metadata's JSON")
}

/// Every integration-test target of the workspace: `(package, target)`.
fn test_targets() -> Vec<(String, String)> {
    let metadata = metadata();
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

/// Whether Rust source `text` holds a unit test.
fn has_tests(text: &str) -> bool {
    ["#[test]", "#[tokio::test", "#[cfg(test)]"]
        .iter()
        .any(|mark| text.contains(mark))
}

/// A program as [`harness_violations`] sees it.
struct Program {
    package: String,
    name: String,
    /// Its `test` flag.
    test: bool,
    /// Its `bench` flag.
    bench: bool,
    /// Whether its sources hold a unit test.
    has_tests: bool,
}

/// Programs whose `test` and `bench` flags disagree with their sources.
fn harness_violations(programs: &[Program]) -> Vec<String> {
    let mut found = Vec::new();
    for p in programs {
        let (package, program) = (&p.package, &p.name);
        if p.has_tests && !p.test {
            found.push(format!(
                "{package}: program `{program}` has unit tests but says `test = false`: \
                 they never run"
            ));
        } else if !p.has_tests && (p.test || p.bench) {
            found.push(format!(
                "{package}: program `{program}` has no unit test: declare it with \
                 `test = false` and `bench = false` (a `[[bin]]` entry), or a test \
                 build compiles it again as an empty harness"
            ));
        }
    }
    found
}

/// The `bench` flag of program `name` in `manifest` (cargo metadata does
/// not give it): `false` only where its `[[bin]]` entry says so.
fn says_bench(manifest: &str, name: &str) -> bool {
    let named = format!("name = \"{name}\"");
    !manifest.split("[[bin]]").skip(1).any(|entry| {
        let entry = entry.split("\n[").next().unwrap_or("");
        entry.lines().any(|l| l.trim() == named)
            && entry.lines().any(|l| l.replace(' ', "") == "bench=false")
    })
}

#[test]
fn programs_without_tests_build_no_test_harness() {
    let metadata = metadata();
    let mut programs = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().expect("targets") {
            if !target["kind"]
                .as_array()
                .is_some_and(|k| k.contains(&"bin".into()))
            {
                continue;
            }
            let main = std::path::Path::new(target["src_path"].as_str().unwrap());
            // A program in a folder of its own (`src/bin/<name>/main.rs`)
            // is every file of that folder; any other, its own file.
            let files: Vec<std::path::PathBuf> = match main.file_name() {
                Some(name)
                    if name == "main.rs"
                        && main
                            .parent()
                            .and_then(|d| d.parent())
                            .is_some_and(|d| d.ends_with("src/bin")) =>
                {
                    let dir = main.parent().unwrap();
                    std::fs::read_dir(dir)
                        .unwrap()
                        .map(|e| e.unwrap().path())
                        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                        .collect()
                }
                _ => vec![main.to_owned()],
            };
            let tests = files
                .iter()
                .any(|f| has_tests(&std::fs::read_to_string(f).unwrap()));
            programs.push(Program {
                package: package["name"].as_str().unwrap().to_owned(),
                name: target["name"].as_str().unwrap().to_owned(),
                test: target["test"].as_bool().unwrap_or(true),
                bench: says_bench(
                    &std::fs::read_to_string(package["manifest_path"].as_str().unwrap()).unwrap(),
                    target["name"].as_str().unwrap(),
                ),
                has_tests: tests,
            });
        }
    }
    assert!(
        programs.len() > 10,
        "found only {} programs",
        programs.len()
    );
    check(
        "programs' `test` and `bench` flags disagree with their sources",
        harness_violations(&programs),
    );
}

#[test]
fn the_harness_rule_catches_what_it_should() {
    let p = |test: bool, bench: bool, has_tests: bool| Program {
        package: "a".into(),
        name: "prog".into(),
        test,
        bench,
        has_tests,
    };
    let fine = [
        p(false, false, false),
        p(true, true, true),
        p(true, false, true),
    ];
    assert!(harness_violations(&fine).is_empty());
    let v = harness_violations(&[
        p(true, false, false),
        p(false, true, false),
        p(false, false, true),
    ]);
    assert_eq!(v.len(), 3, "{v:#?}");
    assert!(v[0].contains("has no unit test"), "{v:#?}");
    assert!(v[1].contains("has no unit test"), "{v:#?}");
    assert!(v[2].contains("they never run"), "{v:#?}");
    let manifest = "[[bin]]\nname = \"a\"\ntest = false\nbench = false\n\n[[bin]]\nname = \"b\"\n\n[dependencies]\nbench = false\n";
    assert!(!says_bench(manifest, "a"));
    assert!(says_bench(manifest, "b"));
    assert!(says_bench(manifest, "c"));
    assert!(has_tests("#[cfg(test)]\nmod tests {}"));
    assert!(!has_tests("fn main() {}"));
}
