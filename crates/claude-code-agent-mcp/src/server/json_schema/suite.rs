//! The official JSON Schema Test Suite (draft 2020-12, its required tests;
//! `tests/fixtures/json-schema-test-suite/`) run against the built-in
//! checker. `docs/json-schema.md` lists the tests expected to fail, each
//! with its reason, and the pass rate of each file of the suite: a test
//! failing that is not listed (a regression), a listed one that passes, and
//! numbers on the page that are not those measured all fail here.
//!
//! A test passes when the schema compiles and both passes of the checker
//! (the yes/no one and the one that words failures) give the suite's answer.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::Schema;

/// The suite's files, relative to the crate.
const SUITE: &str = "tests/fixtures/json-schema-test-suite/tests/draft2020-12";
/// The page with the pass rates and the expected failures, in the
/// repository.
const DOC: &str = "docs/json-schema.md";
/// The header of the page's table of pass rates.
const RATES_HEADER: &str = "| file | passed | total |";
/// The header of the page's table of expected failures.
const FAILURES_HEADER: &str = "| file | case | test | why |";

/// One test of the suite: its file, its case's description and its own.
type TestId = (String, String, String);

/// What the suite measured.
struct Measured {
    /// Per file: the tests passed, and all of them.
    rates: BTreeMap<String, (usize, usize)>,
    /// The failing tests, and what the checker did instead.
    failed: BTreeMap<TestId, String>,
}

fn run_suite() -> Measured {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(SUITE);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut measured = Measured {
        rates: BTreeMap::new(),
        failed: BTreeMap::new(),
    };
    for path in files {
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 file name")
            .to_owned();
        let text = std::fs::read_to_string(&path).expect("a readable suite file");
        let cases: Vec<Value> = serde_json::from_str(&text).expect("a suite file is JSON");
        let (mut passed, mut total) = (0, 0);
        for case in &cases {
            let schema = Schema::compile(&case["schema"], false);
            for test in case["tests"].as_array().expect("a case has tests") {
                total += 1;
                let valid = test["valid"].as_bool().expect("a test says if it is valid");
                let failure = match &schema {
                    Err(problem) => Some(format!("refused: {problem}")),
                    Ok(s) => {
                        let quick = s.is_valid(&test["data"]);
                        let (_, count) = s.errors(&test["data"], 0);
                        (quick != valid || (count == 0) != valid).then(|| {
                            format!(
                                "answered valid: {quick} ({count} failures worded), \
                                 expected valid: {valid}"
                            )
                        })
                    }
                };
                match failure {
                    None => passed += 1,
                    Some(what) => {
                        let id = (
                            file.clone(),
                            description(case).to_owned(),
                            description(test).to_owned(),
                        );
                        measured.failed.insert(id, what);
                    }
                }
            }
        }
        measured.rates.insert(file, (passed, total));
    }
    measured
}

fn description(v: &Value) -> &str {
    v["description"].as_str().expect("a description")
}

/// What the page says.
struct Doc {
    /// `(file, passed, total)`, the last row `all`.
    rates: Vec<(String, usize, usize)>,
    /// The tests expected to fail, and why.
    failures: BTreeMap<TestId, String>,
    /// The reasons the page explains (`- **reason**: …`).
    reasons: BTreeSet<String>,
}

fn read_doc() -> Doc {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(DOC);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let number = |cell: &str| -> usize {
        cell.parse()
            .unwrap_or_else(|_| panic!("{DOC}: {cell:?} is not a number"))
    };
    let rates = table(&text, RATES_HEADER)
        .into_iter()
        .map(|row| (row[0].clone(), number(&row[1]), number(&row[2])))
        .collect();
    let mut failures = BTreeMap::new();
    for row in table(&text, FAILURES_HEADER) {
        let [file, case, test, why] = <[String; 4]>::try_from(row).expect("four cells");
        assert!(
            failures.insert((file, case, test), why).is_none(),
            "{DOC}: a failure is listed twice"
        );
    }
    let reasons = text
        .lines()
        .filter_map(|line| line.strip_prefix("- **"))
        .filter_map(|rest| rest.split_once("**:"))
        .map(|(reason, _)| reason.to_owned())
        .collect();
    Doc {
        rates,
        failures,
        reasons,
    }
}

/// The rows of the table under `header`, each cell without its Markdown
/// (backticks, bold).
fn table(text: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines().skip_while(|line| *line != header);
    assert!(lines.next().is_some(), "{DOC}: no table {header:?}");
    let columns = header.matches('|').count() - 1;
    lines
        .skip(1)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<String> = line
                .trim()
                .trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().trim_matches(['`', '*']).to_owned())
                .collect();
            assert_eq!(cells.len(), columns, "{DOC}: a row of {header:?}: {line}");
            cells
        })
        .collect()
}

/// The tests of `tests` (each with a note) that `keep` keeps; none, or the
/// test fails saying `what` they are.
fn expect_none(
    what: &str,
    tests: &BTreeMap<TestId, String>,
    keep: impl Fn(&TestId, &String) -> bool,
) {
    let mut found = String::new();
    for ((file, case, test), note) in tests.iter().filter(|(id, note)| keep(id, note)) {
        let _ = writeln!(found, "- {file} | {case} | {test}: {note}");
    }
    assert!(found.is_empty(), "{what}:\n{found}");
}

#[test]
fn the_suite_passes_but_for_the_failures_the_docs_list() {
    let measured = run_suite();
    let doc = read_doc();
    assert!(
        measured.rates.len() > 40 && measured.rates.values().map(|r| r.1).sum::<usize>() > 1000,
        "the suite is not all there: {:?}",
        measured.rates
    );
    expect_none(
        &format!("failing, and not listed in {DOC}"),
        &measured.failed,
        |id, _| !doc.failures.contains_key(id),
    );
    expect_none(
        &format!("listed as failing in {DOC}, but passing (or not in the suite)"),
        &doc.failures,
        |id, _| !measured.failed.contains_key(id),
    );
    // The checker answers right or refuses the schema: it never lets a
    // keyword it cannot honour pass silently.
    expect_none(
        "wrong answers, not refusals",
        &measured.failed,
        |_, what| !what.starts_with("refused: "),
    );
    expect_none(
        &format!("reasons {DOC} does not explain (as `- **reason**: …`)"),
        &doc.failures,
        |_, why| !doc.reasons.contains(why),
    );
    let used: BTreeSet<&String> = doc.failures.values().collect();
    let unused: Vec<_> = doc.reasons.iter().filter(|r| !used.contains(r)).collect();
    assert!(
        unused.is_empty(),
        "{DOC} explains reasons no failure has: {unused:?}"
    );
}

#[test]
fn the_pass_rates_in_the_docs_are_those_measured() {
    let measured = run_suite();
    let mut want: Vec<(String, usize, usize)> = measured
        .rates
        .iter()
        .map(|(file, &(passed, total))| (file.clone(), passed, total))
        .collect();
    let passed = want.iter().map(|r| r.1).sum();
    let total = want.iter().map(|r| r.2).sum();
    want.push(("all".to_owned(), passed, total));
    let found = read_doc().rates;
    if found != want {
        let mut rows = format!("{RATES_HEADER}\n|---|--:|--:|\n");
        for (file, passed, total) in &want[..want.len() - 1] {
            let _ = writeln!(rows, "| `{file}` | {passed} | {total} |");
        }
        let _ = writeln!(rows, "| **all** | **{passed}** | **{total}** |");
        panic!("the pass rates in {DOC} are not those measured; they are:\n{rows}");
    }
}
