//! ARCHITECTURE.md is a true map: it names modules, not files, so what it
//! claims is checked, not that it lists everything.
//!
//! - Its `## Code map` has a section `` ### `<crate>` `` for each crate with
//!   a `src/`, and that section names every top-level module of the crate:
//!   `name.rs` or `name/` (or a path inside `name/`) for each file or
//!   directory of `src/`, and `bin/name.rs` or `bin/name/` for each binary.
//! - Every path it names exists: in a crate's section, a backticked token
//!   ending in `.rs` or `/` is relative to the crate's `src/`; anywhere, a
//!   token starting at a top-level directory of the repository (`crates/`,
//!   `docs/`, `scripts/`, …) or naming a root Markdown file is relative to
//!   the root.
//! - Every test it names exists: a token `<path>.rs::<name>` names a
//!   function `name` with a test attribute in that file. Every invariant
//!   (an item `- **…` of `## Invariants`) names at least one.

use std::collections::BTreeSet;

use crate::support::repo::{check, files, read};

/// Top-level directories of the repository that map tokens may start at.
const ROOTS: [&str; 7] = [
    "crates/", "docs/", "scripts/", "bench/", "fuzz/", "api/", "release/",
];

/// A backticked token of `line`, each with nothing around it.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

/// Whether `token` could be a path: no spaces, placeholders or wildcards.
fn is_plain(token: &str) -> bool {
    !token.is_empty() && !token.contains([' ', '<', '>', '*', '…', '{', '"', '(', '='])
}

/// Whether `path` (relative to the root, a file or a directory ending in
/// `/`) is in `files`.
fn exists(files: &BTreeSet<&str>, path: &str) -> bool {
    match path.strip_suffix('/') {
        Some(dir) => files
            .range(format!("{dir}/").as_str()..)
            .next()
            .is_some_and(|f| f.starts_with(&format!("{dir}/"))),
        None => {
            files.contains(path)
                || files
                    .range(format!("{path}/").as_str()..)
                    .next()
                    .is_some_and(|f| f.starts_with(&format!("{path}/")))
        }
    }
}

/// The `## Code map` sections by crate: `(crate, [(line, token)])`.
fn code_map(text: &str) -> Vec<(String, Vec<(usize, String)>)> {
    let mut crates: Vec<(String, Vec<(usize, String)>)> = Vec::new();
    let mut in_map = false;
    let mut current: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(title) = line.strip_prefix("## ") {
            in_map = title.trim() == "Code map";
            current = None;
            continue;
        }
        if !in_map {
            continue;
        }
        if let Some(title) = line.strip_prefix("### ") {
            current = title
                .trim()
                .strip_prefix('`')
                .and_then(|t| t.strip_suffix('`'))
                .map(|name| {
                    crates.push((name.to_owned(), Vec::new()));
                    crates.len() - 1
                });
            continue;
        }
        if let Some(i) = current {
            crates[i]
                .1
                .extend(tokens(line).map(|t| (n + 1, t.to_owned())));
        }
    }
    crates
}

/// The top-level modules of each crate: `(crate, {"name.rs" | "name/" |
/// "bin/name.rs" | "bin/name/"})`.
fn modules(files: &[String]) -> Vec<(String, BTreeSet<String>)> {
    let mut crates: Vec<(String, BTreeSet<String>)> = Vec::new();
    for path in files {
        let Some((krate, rel)) = path
            .strip_prefix("crates/")
            .and_then(|rest| rest.split_once("/src/"))
        else {
            continue;
        };
        if krate.contains('/') || !rel.ends_with(".rs") {
            continue;
        }
        let parts: Vec<&str> = rel.split('/').collect();
        let module = match parts.as_slice() {
            ["bin", file] => format!("bin/{file}"),
            ["bin", dir, ..] => format!("bin/{dir}/"),
            [file] => (*file).to_owned(),
            [dir, ..] => format!("{dir}/"),
            [] => continue,
        };
        match crates.iter_mut().find(|(k, _)| k == krate) {
            Some((_, set)) => {
                set.insert(module);
            }
            None => crates.push((krate.to_owned(), BTreeSet::from([module]))),
        }
    }
    crates
}

/// Whether the map's `tokens` name `module` (`x.rs` or `x/`): as itself,
/// as the module's other form, or by a path inside its directory.
fn names(tokens: &[(usize, String)], module: &str) -> bool {
    let stem = module
        .strip_suffix(".rs")
        .or_else(|| module.strip_suffix('/'))
        .unwrap_or(module);
    tokens.iter().any(|(_, t)| {
        t == &format!("{stem}.rs") || t == &format!("{stem}/") || t.starts_with(&format!("{stem}/"))
    })
}

/// Modules the map does not name, sections it lacks, and paths it names
/// that do not exist.
fn code_map_violations(files: &[String], architecture: &str) -> Vec<String> {
    let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let map = code_map(architecture);
    let mut found = Vec::new();
    for (krate, modules) in modules(files) {
        let Some((_, tokens)) = map.iter().find(|(name, _)| *name == krate) else {
            found.push(format!(
                "ARCHITECTURE.md: the code map has no section \"### `{krate}`\" for crates/{krate}"
            ));
            continue;
        };
        for module in &modules {
            if !names(tokens, module) {
                found.push(format!(
                    "crates/{krate}/src/{module}: a module ARCHITECTURE.md's code map does not \
                     name; say what it is for under \"### `{krate}`\" (as `{module}`)"
                ));
            }
        }
    }
    for (krate, tokens) in &map {
        for (line, token) in tokens {
            let relative = is_plain(token)
                && !ROOTS.iter().any(|r| token.starts_with(r))
                && (token.ends_with(".rs") || token.ends_with('/'))
                && !token.contains("::");
            if relative && !exists(&set, &format!("crates/{krate}/src/{token}")) {
                found.push(format!(
                    "ARCHITECTURE.md:{line}: the code map names `{token}`, but \
                     crates/{krate}/src/{token} does not exist"
                ));
            }
        }
    }
    for (n, line) in architecture.lines().enumerate() {
        for token in tokens(line) {
            let path = token.split_once("::").map_or(token, |(p, _)| p);
            let rooted = ROOTS.iter().any(|r| path.starts_with(r))
                || (path.ends_with(".md") && !path.contains('/'));
            if rooted && is_plain(path) && !exists(&set, path) {
                found.push(format!(
                    "ARCHITECTURE.md:{}: names `{path}`, which does not exist",
                    n + 1
                ));
            }
        }
    }
    found
}

/// Whether `text` defines a function `name` under a test attribute
/// (`#[test]`, `#[tokio::test(…)]`, …, among the attributes right above it).
fn defines_test(text: &str, name: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    lines.iter().enumerate().any(|(i, line)| {
        let Some(rest) = line.split(&format!("fn {name}")).nth(1) else {
            return false;
        };
        let attributes = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim_start())
            .take_while(|l| l.starts_with("#[") || l.starts_with("//"));
        (rest.starts_with('(') || rest.starts_with('<'))
            && attributes
                .filter(|l| l.starts_with("#["))
                .any(|l| l.contains("test"))
    })
}

/// Ends the invariant being read; one that named no test is a violation.
fn close(invariant: &mut Option<(usize, bool)>, found: &mut Vec<String>) {
    if let Some((line, false)) = invariant.take() {
        found.push(format!(
            "ARCHITECTURE.md:{line}: an invariant that names no test (`<path>.rs::<test>`)"
        ));
    }
}

/// Tests the map names that do not exist, and invariants that name none.
fn test_violations(
    files: &[String],
    architecture: &str,
    read: impl Fn(&str) -> String,
) -> Vec<String> {
    let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let mut found = Vec::new();
    let mut section = "";
    // The invariant being read: (its line, whether it named a test).
    let mut invariant: Option<(usize, bool)> = None;
    for (n, line) in architecture.lines().enumerate() {
        if let Some(title) = line.strip_prefix("## ") {
            close(&mut invariant, &mut found);
            section = title.trim();
            continue;
        }
        if section == "Invariants" {
            if line.starts_with("- **") {
                close(&mut invariant, &mut found);
                invariant = Some((n + 1, false));
            } else if !line.starts_with("  ") {
                close(&mut invariant, &mut found);
            }
        }
        for token in tokens(line) {
            let Some((path, name)) = token.split_once(".rs::") else {
                continue;
            };
            let path = format!("{path}.rs");
            if !set.contains(path.as_str()) {
                found.push(format!(
                    "ARCHITECTURE.md:{}: names a test in {path}, which does not exist",
                    n + 1
                ));
            } else if !defines_test(&read(&path), name) {
                found.push(format!(
                    "ARCHITECTURE.md:{}: names the test `{name}`, but {path} has no test of that name",
                    n + 1
                ));
            } else if let Some((_, named)) = invariant.as_mut() {
                *named = true;
            }
        }
    }
    close(&mut invariant, &mut found);
    found
}

#[test]
fn the_code_map_names_every_module() {
    check(
        "ARCHITECTURE.md's code map and the source tree disagree",
        code_map_violations(&files(), &read("ARCHITECTURE.md")),
    );
}

/// A map, not a journal: rust-analyzer's, for a far larger project, is
/// about this long. Measurements go to docs/performance.md.
const MAX_WORDS: usize = 3_500;

/// The words of `text` as `wc -w` counts them, over the cap or not.
fn length_violations(text: &str) -> Vec<String> {
    let words = text.split_whitespace().count();
    if words <= MAX_WORDS {
        return Vec::new();
    }
    vec![format!(
        "ARCHITECTURE.md:1: {words} words, over the cap of {MAX_WORDS}: shorten it, or move detail into the modules' docs or docs/performance.md"
    )]
}

#[test]
fn the_map_stays_short() {
    check(
        "ARCHITECTURE.md is too long",
        length_violations(&read("ARCHITECTURE.md")),
    );
    assert!(length_violations(&"word ".repeat(MAX_WORDS)).is_empty());
    assert_eq!(length_violations(&"word ".repeat(MAX_WORDS + 1)).len(), 1);
}

#[test]
fn the_invariants_name_tests_that_exist() {
    check(
        "ARCHITECTURE.md names tests that do not exist, or an invariant names none",
        test_violations(&files(), &read("ARCHITECTURE.md"), read),
    );
}

#[test]
fn the_map_rules_catch_what_they_should() {
    let files: Vec<String> = [
        "crates/k/src/lib.rs",
        "crates/k/src/a.rs",
        "crates/k/src/d/e.rs",
        "crates/k/src/s/x.rs",
        "crates/k/src/s/y/z.rs",
        "crates/k/src/bin/tool/main.rs",
        "crates/k/src/bin/one.rs",
        "crates/k/tests/it/t.rs",
        "docs/x.md",
    ]
    .iter()
    .map(|f| (*f).to_owned())
    .collect();

    // Modules, not files: `s/x.rs` names `s/`, `bin/tool/` the binary; `d/`
    // and `bin/one.rs` are missing (a mention outside the map does not count),
    // and named paths that do not exist are reported.
    let map = "## Code map\n\n### `k`\n\n`lib.rs`, `a.rs`, `s/x.rs`, `bin/tool/`, `gone.rs`, \
               `s/nope/`, `docs/y.md`, `server::call`\n\n## Next\n`d/`\n";
    let v = code_map_violations(&files, map);
    assert_eq!(v.len(), 5, "{v:#?}");
    assert!(
        v[0].starts_with("crates/k/src/bin/one.rs: a module"),
        "{v:#?}"
    );
    assert!(v[1].starts_with("crates/k/src/d/: a module"), "{v:#?}");
    assert!(v[2].contains("names `gone.rs`"), "{v:#?}");
    assert!(v[3].contains("names `s/nope/`"), "{v:#?}");
    assert!(v[4].contains("names `docs/y.md`"), "{v:#?}");
    let whole = "## Code map\n\n### `k`\n\n`lib.rs`, `a.rs`, `d/`, `s/`, `bin/tool/main.rs`, \
                 `bin/one.rs`, `docs/x.md`\n";
    assert!(code_map_violations(&files, whole).is_empty());
    assert_eq!(code_map_violations(&files, "## Code map\n").len(), 1);

    // Tests: named tests must exist with a test attribute; an invariant
    // without one fails.
    let text = |path: &str| {
        match path {
        "crates/k/tests/it/t.rs" => {
            "#[test]\nfn kept() {}\n\n#[tokio::test(flavor = \"multi_thread\")]\nasync fn also() {}\n\nfn helper() {}\n"
                .to_owned()
        }
        other => panic!("read {other}"),
    }
    };
    let doc = "## Invariants\n\n- **One.**\n  `crates/k/tests/it/t.rs::kept`.\n- **Two**, \
               `crates/k/tests/it/t.rs::also`.\n- **Three.** None named.\n- **Four.**\n  \
               `crates/k/tests/it/t.rs::helper`, `crates/k/tests/it/gone.rs::x`.\n\n## Tests\n";
    let v = test_violations(&files, doc, text);
    assert_eq!(v.len(), 4, "{v:#?}");
    assert!(
        v[0].starts_with("ARCHITECTURE.md:6: an invariant that names no test"),
        "{v:#?}"
    );
    assert!(v[1].contains("no test of that name"), "{v:#?}");
    assert!(v[2].contains("gone.rs, which does not exist"), "{v:#?}");
    assert!(
        v[3].starts_with("ARCHITECTURE.md:7: an invariant"),
        "{v:#?}"
    );
}
