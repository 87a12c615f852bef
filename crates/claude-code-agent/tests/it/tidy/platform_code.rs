//! Platform-specific code is in what the Windows check builds.
//!
//! `scripts/test` compile-checks the published crates' libraries for
//! Windows with the features of its `WINDOWS_FEATURES` only: those that
//! bring platform-specific code. The others are left out (their code is
//! the same on every platform, and building their dependencies for a
//! second target costs a minute of CPU). This rule keeps that true: every
//! library module with platform-specific code (`cfg(unix)`,
//! `cfg(windows)`, `cfg(target_os …)`, `std::os::…`) is compiled by that
//! check, through the crates' module trees as cargo resolves the features,
//! and none sits inside an item under a feature the check leaves out. Test
//! code (`cfg(test)`) is exempt: the tests are POSIX.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::repo::{cargo_stdout, check, files, read, repo_root};
use crate::tidy_layers::graph::blank_comments_and_strings;

/// The published crates, with their folders.
const CRATES: [(&str, &str); 3] = [
    ("claude-code-agent-mcp", "crates/claude-code-agent-mcp"),
    ("claude-code-agent", "crates/claude-code-agent"),
    (
        "claude-code-agent-testkit",
        "crates/claude-code-agent-testkit",
    ),
];

/// What a `cfg` predicate is, as far as this rule can tell.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Truth {
    No,
    /// Depends on the platform (or on something else the rule does not decide).
    Maybe,
    Yes,
}

impl Truth {
    fn not(self) -> Truth {
        match self {
            Truth::No => Truth::Yes,
            Truth::Maybe => Truth::Maybe,
            Truth::Yes => Truth::No,
        }
    }

    fn and(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::No, _) | (_, Truth::No) => Truth::No,
            (Truth::Yes, Truth::Yes) => Truth::Yes,
            _ => Truth::Maybe,
        }
    }

    fn or(self, other: Truth) -> Truth {
        self.not().and(other.not()).not()
    }
}

/// The words and strings of a `cfg(…)` predicate, and its `( ) , =`.
fn tokens(predicate: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = predicate.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' | ')' | ',' | '=' => out.push(c.to_string()),
            '"' => {
                let mut s = String::from('"');
                for c in chars.by_ref() {
                    s.push(c);
                    if c == '"' {
                        break;
                    }
                }
                out.push(s);
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut s = c.to_string();
                while let Some(&c) = chars.peek() {
                    if !(c.is_alphanumeric() || c == '_') {
                        break;
                    }
                    s.push(c);
                    chars.next();
                }
                out.push(s);
            }
            _ => {}
        }
    }
    out
}

/// Evaluates the predicate at `tokens[*at..]`, with `features` on, `test`
/// off and the platform undecided.
fn evaluate(tokens: &[String], at: &mut usize, features: &dyn Fn(&str) -> bool) -> Truth {
    let Some(word) = tokens.get(*at).cloned() else {
        return Truth::Maybe;
    };
    *at += 1;
    let next_is = |at: usize, s: &str| tokens.get(at).is_some_and(|t| t == s);
    if next_is(*at, "(") {
        *at += 1;
        let mut parts = Vec::new();
        while *at < tokens.len() && !next_is(*at, ")") {
            parts.push(evaluate(tokens, at, features));
            if next_is(*at, ",") {
                *at += 1;
            }
        }
        *at += 1;
        return match word.as_str() {
            "any" => parts.into_iter().fold(Truth::No, Truth::or),
            "all" => parts.into_iter().fold(Truth::Yes, Truth::and),
            "not" => parts.first().copied().unwrap_or(Truth::Maybe).not(),
            _ => Truth::Maybe,
        };
    }
    let value = if next_is(*at, "=") {
        *at += 1;
        let value = tokens.get(*at).cloned().unwrap_or_default();
        *at += 1;
        Some(value.trim_matches('"').to_owned())
    } else {
        None
    };
    match (word.as_str(), value) {
        ("feature", Some(name)) => {
            if features(&name) {
                Truth::Yes
            } else {
                Truth::No
            }
        }
        ("test" | "doctest" | "doc" | "docsrs", None) => Truth::No,
        _ => Truth::Maybe,
    }
}

/// What `cfg(<predicate>)` is with `features` on.
fn cfg_truth(predicate: &str, features: &dyn Fn(&str) -> bool) -> Truth {
    evaluate(&tokens(predicate), &mut 0, features)
}

/// The predicate of a `#[cfg(…)]` or `#![cfg(…)]` attribute.
fn cfg_predicate(attribute: &str) -> Option<&str> {
    let rest = attribute
        .strip_prefix("#![cfg(")
        .or_else(|| attribute.strip_prefix("#[cfg("))?;
    Some(rest.trim_end().strip_suffix(")]")?.trim())
}

/// Whether `line` is platform-specific code.
fn is_platform_code(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    if code.contains("std::os::") {
        return true;
    }
    if !["cfg(", "cfg!(", "cfg_attr("]
        .iter()
        .any(|c| code.contains(c))
    {
        return false;
    }
    let words = tokens(code);
    words.iter().any(|w| {
        matches!(
            w.as_str(),
            "unix" | "windows" | "target_os" | "target_family"
        )
    })
}

/// A line of a file, as this rule sees it.
enum Line<'a> {
    /// An attribute, its lines joined, trimmed, and its 0-based lines.
    Attribute(String, std::ops::Range<usize>),
    /// Code: its 0-based line and its text, trimmed.
    Item { line: usize, text: &'a str },
    /// Blank, a comment, or a further line of an attribute.
    Other,
}

/// The lines of `text`, with an attribute over several lines joined.
fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    // An attribute not closed yet, and its first line.
    let mut open: Option<(String, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some((attribute, _)) = open.as_mut() {
            attribute.push(' ');
            attribute.push_str(trimmed);
        } else if trimmed.starts_with("#[") || trimmed.starts_with("#![") {
            open = Some((trimmed.to_owned(), n));
        }
        if let Some((attribute, first)) = open.take() {
            if attribute.matches('[').count() > attribute.matches(']').count() {
                open = Some((attribute, first));
                out.push(Line::Other);
            } else {
                out.push(Line::Attribute(attribute, first..n + 1));
            }
        } else if trimmed.is_empty() || trimmed.starts_with("//") {
            out.push(Line::Other);
        } else {
            out.push(Line::Item {
                line: n,
                text: trimmed,
            });
        }
    }
    out
}

/// A module declared in a file: its name, the `cfg` predicates on it, its
/// `#[path]`.
struct Declared {
    name: String,
    cfgs: Vec<String>,
    path: Option<String>,
}

/// What a file says of its modules: its inner `#![cfg(…)]` predicates and
/// the modules it declares from files (`mod name;`), with the attributes
/// right above each.
#[derive(Default)]
struct Modules {
    inner: Vec<String>,
    declared: Vec<Declared>,
}

fn declarations(text: &str) -> Modules {
    let mut modules = Modules::default();
    let mut pending: Vec<String> = Vec::new();
    for line in lines(text) {
        let text = match line {
            Line::Attribute(attribute, _) if attribute.starts_with("#![") => {
                modules
                    .inner
                    .extend(cfg_predicate(&attribute).map(str::to_owned));
                continue;
            }
            Line::Attribute(attribute, _) => {
                pending.push(attribute);
                continue;
            }
            Line::Other => continue,
            Line::Item { text, .. } => text,
        };
        let attributes = std::mem::take(&mut pending);
        let item = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|p| text.strip_prefix(p))
            .unwrap_or(text);
        let Some(name) = item
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'))
        else {
            continue;
        };
        modules.declared.push(Declared {
            name: name.trim().to_owned(),
            cfgs: attributes
                .iter()
                .filter_map(|a| cfg_predicate(a).map(str::to_owned))
                .collect(),
            path: attributes.iter().find_map(|a| {
                let rest = a.strip_prefix("#[path = \"")?;
                Some(rest.split('"').next()?.to_owned())
            }),
        });
    }
    modules
}

/// The lines (0-based) of the items of `text` under a `cfg` that is false
/// with `features` and true with every feature (so not test code): from an
/// item's first line to its closing brace, or its semicolon. Braces are
/// counted with comments and literals blanked (`"{"`, `"http://…"`).
fn lines_left_out(text: &str, features: &dyn Fn(&str) -> bool) -> BTreeSet<usize> {
    let every = |_: &str| true;
    let blanked = blank_comments_and_strings(text);
    let code_of: Vec<&str> = blanked.lines().map(str::trim).collect();
    let mut out = BTreeSet::new();
    let mut depth = 0usize;
    let mut gated = false;
    // The depth the gated item started at, and whether it opened a brace.
    let mut inside: Option<(usize, bool)> = None;
    for line in lines(text) {
        match line {
            Line::Attribute(attribute, lines) => {
                if inside.is_some() {
                    out.extend(lines);
                } else {
                    gated |= cfg_predicate(&attribute).is_some_and(|p| {
                        cfg_truth(p, features) == Truth::No && cfg_truth(p, &every) != Truth::No
                    });
                }
            }
            Line::Other => {}
            Line::Item { line, .. } => {
                if std::mem::take(&mut gated) && inside.is_none() {
                    inside = Some((depth, false));
                }
                let code = code_of.get(line).copied().unwrap_or("");
                let opens = code.matches('{').count();
                depth = (depth + opens).saturating_sub(code.matches('}').count());
                if let Some((start, opened)) = inside.as_mut() {
                    out.insert(line);
                    *opened |= opens > 0;
                    if depth <= *start && (*opened || code.ends_with(';')) {
                        inside = None;
                    }
                }
            }
        }
    }
    out
}

/// The file of module `child` declared in `parent` (paths relative to the
/// repository's root).
fn child_file(parent: &str, child: &Declared) -> Option<String> {
    let (dir, file) = parent.rsplit_once('/')?;
    if let Some(path) = &child.path {
        return Some(format!("{dir}/{path}"));
    }
    let base = match file {
        "lib.rs" | "main.rs" | "mod.rs" => dir.to_owned(),
        _ => format!("{dir}/{}", file.strip_suffix(".rs")?),
    };
    let root = repo_root();
    [
        format!("{base}/{}.rs", child.name),
        format!("{base}/{}/mod.rs", child.name),
    ]
    .into_iter()
    .find(|p| root.join(p).is_file())
}

/// Every module file of a crate with the `cfg` predicates on its way from
/// `src/lib.rs` (those of the declarations and the files' own).
fn module_files(dir: &str) -> BTreeMap<String, Vec<String>> {
    let mut found = BTreeMap::new();
    let mut todo = vec![(format!("{dir}/src/lib.rs"), Vec::new())];
    while let Some((file, mut cfgs)) = todo.pop() {
        let modules = declarations(&read(&file));
        cfgs.extend(modules.inner);
        for child in &modules.declared {
            if let Some(path) = child_file(&file, child) {
                let mut on_the_way = cfgs.clone();
                on_the_way.extend(child.cfgs.iter().cloned());
                todo.push((path, on_the_way));
            }
        }
        found.insert(file, cfgs);
    }
    found
}

/// The `WINDOWS_FEATURES` of `scripts/test`.
fn windows_features_line() -> String {
    read("scripts/test")
        .lines()
        .find_map(|l| l.strip_prefix("WINDOWS_FEATURES=\""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("scripts/test: a WINDOWS_FEATURES=\"…\" line")
        .to_owned()
}

/// The features of each published crate that the Windows check builds,
/// as cargo resolves them (`cargo tree` of its command, for this machine's
/// target: no dependency of ours switches on a feature of our crates on one
/// platform only, and Windows' own dependencies need not be downloaded).
fn windows_features() -> BTreeMap<String, BTreeSet<String>> {
    let features_line = windows_features_line();
    let mut args = vec![
        "tree",
        "--offline",
        "-e",
        "normal",
        "--prefix",
        "none",
        "-f",
        "{p} [{f}]",
        "--no-default-features",
        "--features",
        &features_line,
    ];
    for (name, _) in CRATES {
        args.extend(["-p", name]);
    }
    let out = cargo_stdout(&args);
    let mut features: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out).lines() {
        let Some((name, _)) = line.split_once(' ') else {
            continue;
        };
        if !CRATES.iter().any(|(c, _)| *c == name) {
            continue;
        }
        let list = line
            .rsplit_once('[')
            .and_then(|(_, rest)| rest.split_once(']'))
            .map_or("", |(list, _)| list);
        features
            .entry(name.to_owned())
            .or_default()
            .extend(list.split(',').filter(|f| !f.is_empty()).map(str::to_owned));
    }
    features
}

/// The violations in one crate: its module files with their `cfg`
/// predicates, its files with platform-specific code, the features the
/// Windows check builds, and how to read a file.
fn misplaced(
    modules: &BTreeMap<String, Vec<String>>,
    platform_files: &[String],
    built: &BTreeSet<String>,
    read: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let windows = |f: &str| built.contains(f);
    let every = |_: &str| true;
    let mut found = Vec::new();
    for path in platform_files {
        let Some(cfgs) = modules.get(path) else {
            found.push(format!(
                "{path}: platform-specific code in a file not reached from lib.rs by \
                 `mod` declarations: tidy cannot tell whether the Windows check builds it"
            ));
            continue;
        };
        let on = |features: &dyn Fn(&str) -> bool| {
            cfgs.iter()
                .map(|c| cfg_truth(c, features))
                .fold(Truth::Yes, Truth::and)
        };
        if on(&every) == Truth::No {
            continue; // test code
        }
        if on(&windows) == Truth::No {
            found.push(format!(
                "{path}: platform-specific code in a module built only with features \
                 the Windows check leaves out ({}): add them to WINDOWS_FEATURES in \
                 scripts/test",
                cfgs.join("; ")
            ));
            continue;
        }
        let text = read(path);
        let left_out = lines_left_out(&text, &windows);
        for (n, line) in text.lines().enumerate() {
            if left_out.contains(&n) && is_platform_code(line) {
                found.push(format!(
                    "{path}:{}: platform-specific code in an item under a feature the \
                     Windows check leaves out: add the feature to WINDOWS_FEATURES in \
                     scripts/test",
                    n + 1
                ));
            }
        }
    }
    found
}

#[test]
fn platform_code_is_in_what_the_windows_check_builds() {
    let features = windows_features();
    let files = files();
    let mut violations = Vec::new();
    for (name, dir) in CRATES {
        let platform_files: Vec<String> = files
            .iter()
            .filter(|p| p.starts_with(&format!("{dir}/src/")) && p.ends_with(".rs"))
            .filter(|p| read(p).lines().any(is_platform_code))
            .cloned()
            .collect();
        let built = features.get(name).cloned().unwrap_or_default();
        violations.extend(misplaced(
            &module_files(dir),
            &platform_files,
            &built,
            &read,
        ));
    }
    check(
        "platform-specific code the Windows check of scripts/test does not build",
        violations,
    );
}

#[test]
fn the_platform_rule_catches_what_it_should() {
    let on = |f: &str| f == "harness";
    assert_eq!(cfg_truth(r#"feature = "redis""#, &on), Truth::No);
    assert_eq!(cfg_truth(r#"feature = "harness""#, &on), Truth::Yes);
    assert_eq!(cfg_truth("unix", &on), Truth::Maybe);
    assert_eq!(cfg_truth("test", &on), Truth::No);
    assert_eq!(cfg_truth("not(test)", &on), Truth::Yes);
    assert_eq!(
        cfg_truth(r#"any(feature = "redis", feature = "harness")"#, &on),
        Truth::Yes
    );
    assert_eq!(cfg_truth(r#"all(unix, feature = "redis")"#, &on), Truth::No);
    assert_eq!(
        cfg_truth(r#"all(target_os = "linux", not(feature = "redis"))"#, &on),
        Truth::Maybe
    );
    assert!(is_platform_code("#[cfg(unix)]"));
    assert!(is_platform_code(
        "    use std::os::unix::process::CommandExt;"
    ));
    assert!(is_platform_code(r#"if cfg!(target_os = "linux") {"#));
    assert!(is_platform_code("#[cfg_attr(windows, allow(unused))]"));
    assert!(!is_platform_code("// cfg(unix) in a comment"));
    assert!(!is_platform_code(r#"#[cfg(feature = "unix-ish")]"#));

    let modules = declarations(
        "#![cfg(feature = \"harness\")]\n\
         /// Docs.\n\
         #[cfg(any(\n    feature = \"redis\",\n    test\n))]\n\
         pub(crate) mod store;\n\
         #[path = \"imp/unix.rs\"]\n\
         #[cfg(unix)]\n\
         mod imp;\n\
         mod inline {\n}\n",
    );
    assert_eq!(modules.inner, [r#"feature = "harness""#]);
    assert_eq!(modules.declared.len(), 2);
    assert_eq!(modules.declared[0].name, "store");
    assert_eq!(
        modules.declared[0].cfgs,
        [r#"any( feature = "redis", test )"#]
    );
    assert_eq!(modules.declared[1].path.as_deref(), Some("imp/unix.rs"));
    assert_eq!(modules.declared[1].cfgs, ["unix"]);

    let left_out = lines_left_out(
        "#[cfg(feature = \"redis\")]\n\
         fn f() {\n\
         #[cfg(unix)]\n\
         g();\n\
         }\n\
         #[cfg(unix)]\n\
         fn h() {}\n\
         #[cfg(any(\n    feature = \"redis\",\n    feature = \"rmcp\"\n))]\n\
         use a::b;\n\
         #[cfg(all(test, feature = \"redis\"))]\n\
         mod tests {}\n",
        &on,
    );
    assert_eq!(left_out, BTreeSet::from([1, 2, 3, 4, 11]));
    // Braces and `//` inside literals and comments do not move an item's end.
    let left_out = lines_left_out(
        "#[cfg(feature = \"redis\")]\n\
         fn f() { let url = \"http://x/{\"; } // }\n\
         #[cfg(unix)]\n\
         fn h() {}\n",
        &on,
    );
    assert_eq!(left_out, BTreeSet::from([1]));

    // A module under a feature left out, test code, a file reached by no
    // declaration, and platform code inside an item under a feature left out.
    let modules = BTreeMap::from([
        ("a/src/lib.rs".to_owned(), vec![]),
        (
            "a/src/store.rs".to_owned(),
            vec![r#"feature = "redis""#.to_owned()],
        ),
        ("a/src/tests.rs".to_owned(), vec!["test".to_owned()]),
        ("a/src/unix.rs".to_owned(), vec!["unix".to_owned()]),
    ]);
    let built = BTreeSet::from(["harness".to_owned()]);
    let clean = |_: &str| "#[cfg(unix)]\nfn f() {}\n".to_owned();
    let mixed = |_: &str| {
        "#[cfg(feature = \"redis\")]\nfn f() {\n    #[cfg(unix)]\n    g();\n}\n".to_owned()
    };
    let one = |p: &str| vec![p.to_owned()];
    let store = misplaced(&modules, &one("a/src/store.rs"), &built, &clean);
    assert_eq!(store.len(), 1, "{store:?}");
    assert!(misplaced(&modules, &one("a/src/tests.rs"), &built, &clean).is_empty());
    assert!(misplaced(&modules, &one("a/src/unix.rs"), &built, &clean).is_empty());
    let orphan = misplaced(&modules, &one("a/src/orphan.rs"), &built, &clean);
    assert_eq!(orphan.len(), 1, "{orphan:?}");
    let gated = misplaced(&modules, &one("a/src/unix.rs"), &built, &mixed);
    assert!(
        gated.len() == 1 && gated[0].starts_with("a/src/unix.rs:3:"),
        "{gated:?}"
    );
}
