//! The parity tables (`docs/parity.md`, `docs/parity/*.md`) keep their
//! promise: every row that is not a "no" names tests, and each test named
//! exists; every "no" gives a reason, and "not yet" is not one.
//!
//! How a row's tests are read: the last column of a table is its test
//! column. In it, `file::name` (or `file::tests::name`, `dir/tests.rs::name`)
//! names a test function; `name_*` any function starting so; `file::…` and
//! a bare `file` (a test module of `crates/claude-code-agent/tests/it/`)
//! the file's tests. The tables' own shorthands are read as they define them:
//! `fixture::`, `cli::`, `unit::` (docs/parity/sessions.md), "captured" and
//! "decode" (docs/parity/messages.md), "same" (the row above's tests),
//! "as `X`" (row `X`'s tests), and a few phrases naming every real-CLI
//! test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::repo::repo_root;

/// Every `.rs` file below `dir`, with its text.
fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.push((path, text));
        }
    }
}

/// Whether `text` defines a function `name` (or, for `prefix*`, one
/// starting so).
fn defines(text: &str, name: &str) -> bool {
    match name.strip_suffix('*') {
        Some(prefix) => text.contains(&format!("fn {prefix}")),
        None => text
            .split(&format!("fn {name}"))
            .skip(1)
            .any(|rest| rest.starts_with('(') || rest.starts_with('<') || rest.starts_with(' ')),
    }
}

struct Code {
    root: PathBuf,
    files: Vec<(PathBuf, String)>,
}

impl Code {
    fn load() -> Code {
        let root = repo_root();
        let mut files = Vec::new();
        sources(&root.join("crates"), &mut files);
        Code { root, files }
    }

    /// The files a reference's file part may mean.
    fn scope(&self, file: &str) -> Vec<&(PathBuf, String)> {
        let tests = self.root.join("crates/claude-code-agent/tests/it");
        let in_dir = |dir: PathBuf| -> Vec<&(PathBuf, String)> {
            self.files
                .iter()
                .filter(|(p, _)| p.starts_with(&dir))
                .collect()
        };
        let file = match file {
            "fixture" => "sessions_fixture",
            "cli" => "cli_sessions",
            "unit" => return in_dir(self.root.join("crates/claude-code-agent/src/sessions")),
            other => other,
        };
        if file.ends_with(".rs") {
            let rel = file.trim_start_matches("src/");
            return self
                .files
                .iter()
                .filter(|(p, _)| p.ends_with(rel))
                .collect();
        }
        let test_file = tests.join(format!("{file}.rs"));
        if test_file.exists() {
            return self.files.iter().filter(|(p, _)| *p == test_file).collect();
        }
        // `module::tests::name`, `module::name`: a source module of that name.
        self.files
            .iter()
            .filter(|(p, _)| {
                p.file_stem().is_some_and(|s| s == file)
                    || p.parent().is_some_and(|d| d.ends_with(file))
            })
            .collect()
    }

    /// Why `reference` names nothing, if it does not.
    fn check(&self, reference: &str) -> Option<String> {
        let parts: Vec<&str> = reference.split("::").collect();
        let name = *parts.last()?;
        if parts.len() == 1 {
            // A whole test file.
            let path = self
                .root
                .join(format!("crates/claude-code-agent/tests/it/{name}.rs"));
            return (!path.exists()).then(|| format!("no test file {}", path.display()));
        }
        let scope = self.scope(parts[0]);
        if scope.is_empty() {
            return Some(format!("no file for `{}`", parts[0]));
        }
        if name == "…" {
            return None;
        }
        let found = scope.iter().any(|(_, text)| defines(text, name));
        (!found).then(|| format!("no function `{name}` in `{}`", parts[0]))
    }
}

/// The cells of a table row.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    // `\|` inside a cell is not a separator.
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    cells.into_iter().map(|c| c.trim().to_owned()).collect()
}

/// The backticked spans of a cell.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The test references of a cell: `a::b` spans, and bare spans that are
/// test files.
fn references(cell: &str, code: &Code) -> Vec<String> {
    code_spans(cell)
        .into_iter()
        .filter(|s| {
            s.contains("::")
                && !s.contains(' ')
                && !s.contains('(')
                && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                || code
                    .root
                    .join(format!("crates/claude-code-agent/tests/it/{s}.rs"))
                    .exists()
        })
        .map(str::to_owned)
        .collect()
}

/// Phrases that stand for tests the tables define in their text.
const SHORTHANDS: &[(&str, &[&str])] = &[
    (
        "captured",
        &[
            "messages_roundtrip::every_cli_line_maps_to_a_typed_variant",
            "messages_roundtrip::every_cli_line_round_trips",
        ],
    ),
    (
        "decode",
        &["parity_decode::message_kinds_beyond_the_conversation_decode_typed_and_round_trip"],
    ),
    ("every `cli_*` test", &["cli_tools"]),
    ("captures", &["messages_roundtrip"]),
];

#[test]
fn every_row_names_tests_that_exist_and_every_no_a_reason() {
    let code = Code::load();
    let root = &code.root;
    let mut docs = vec![root.join("docs/parity.md")];
    let mut parts: Vec<PathBuf> = std::fs::read_dir(root.join("docs/parity"))
        .expect("docs/parity")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    parts.sort();
    docs.extend(parts);

    let mut problems = Vec::new();
    let mut rows_checked = 0;
    let mut refs_checked = 0;
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        let rel = doc.strip_prefix(root).unwrap().display().to_string();
        let mut header: Option<Vec<String>> = None;
        let mut previous: Vec<String> = Vec::new();
        let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let at = format!("{rel}:{}", n + 1);
            if !line.trim_start().starts_with('|') {
                header = None;
                continue;
            }
            let row = cells(line);
            let Some(head) = &header else {
                header = Some(row);
                continue;
            };
            if row.iter().all(|c| c.chars().all(|c| c == '-' || c == ':')) {
                continue;
            }
            assert_eq!(
                row.len(),
                head.len(),
                "{at}: {} cells, header has {}",
                row.len(),
                head.len()
            );
            let test_cell = row.last().unwrap();
            let ours = head
                .iter()
                .position(|h| h.starts_with("ours"))
                .map(|i| row[i].as_str());
            let is_no =
                ours.is_some_and(|o| o == "no" || o.starts_with("no ") || o.starts_with("no("));
            if test_cell.contains("not yet") {
                problems.push(format!(
                    "{at}: \"not yet\" is no reason: say what the CLI or Rust imposes"
                ));
            }
            if is_no {
                if test_cell.is_empty() || test_cell == "—" {
                    problems.push(format!("{at}: a \"no\" without a reason"));
                }
                previous = Vec::new();
                continue;
            }
            rows_checked += 1;
            let mut refs = references(test_cell, &code);
            for (phrase, tests) in SHORTHANDS {
                if test_cell.contains(phrase) {
                    refs.extend(tests.iter().map(|t| t.to_string()));
                }
            }
            let lowered = test_cell.to_lowercase();
            if refs.is_empty()
                && (lowered.starts_with("same") || lowered == "all" || lowered.starts_with("all "))
            {
                refs = previous.clone();
            }
            if let Some(target) = test_cell
                .strip_prefix("as `")
                .and_then(|r| r.split('`').next())
            {
                match by_name
                    .iter()
                    .find(|(k, _)| k.contains(&format!("`{target}`")))
                {
                    Some((_, tests)) => refs.extend(tests.iter().cloned()),
                    None => problems.push(format!("{at}: \"as `{target}`\": no such row above")),
                }
            }
            if refs.is_empty() {
                problems.push(format!("{at}: names no test: {test_cell:?}"));
            }
            for reference in &refs {
                refs_checked += 1;
                if let Some(why) = code.check(reference) {
                    problems.push(format!("{at}: `{reference}`: {why}"));
                }
            }
            by_name.insert(row[0].clone(), refs.clone());
            previous = refs;
        }
    }
    assert!(
        rows_checked > 150,
        "only {rows_checked} rows read: is the parser right?"
    );
    assert!(
        refs_checked > rows_checked,
        "only {refs_checked} references read"
    );
    assert!(
        problems.is_empty(),
        "the parity tables promise tests they do not name or that do not exist:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_reader_finds_a_missing_test() {
    let code = Code::load();
    assert!(
        code.check("cli_dialogs::without_a_callback_an_elicitation_is_declined")
            .is_none()
    );
    assert!(code.check("cli_dialogs::no_such_test_here").is_some());
    assert!(code.check("no_such_file::x").is_some());
    assert!(
        code.check("command/tests.rs::equal_fallback_model_is_refused")
            .is_none()
    );
    assert!(code.check("unit::parallel_*").is_none());
    assert_eq!(
        cells(r"| a | `b \| c` | d |"),
        vec!["a".to_owned(), "`b | c`".to_owned(), "d".to_owned()]
    );
}
