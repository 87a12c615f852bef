//! The `[dependencies]` a user copies from the documentation work: every
//! line of a ```` ```toml ```` block in a Markdown file names a package this
//! workspace builds with (one of its published crates, or a crate in its lock
//! file such as tokio or serde), with a version requirement that this
//! package's version (the locked one) meets, and, for the workspace's crates,
//! features that exist. A block with no table header is read as dependency
//! lines; one under another table (`[package]`, `[features]`) is not.

use crate::support::repo::{check, files, read, repo_root};

/// One `name = ...` line of a snippet.
#[derive(Debug, PartialEq)]
struct Dependency {
    line: usize,
    name: String,
    /// `None` when the line gives no version (`path`, `git`, `workspace`).
    version: Option<String>,
    features: Vec<String>,
}

/// The dependency lines of the ```` ```toml ```` blocks of a Markdown text.
fn snippet_dependencies(markdown: &str) -> Vec<Dependency> {
    let mut found = Vec::new();
    let mut in_toml = false;
    let mut in_dependencies = true;
    for (n, line) in markdown.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(fence) = trimmed.strip_prefix("```") {
            in_toml = !in_toml && fence.trim() == "toml";
            in_dependencies = true;
            continue;
        }
        if !in_toml || trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(table) = trimmed.strip_prefix('[') {
            let table = table.trim_end_matches(']');
            in_dependencies = table.ends_with("dependencies");
            continue;
        }
        let Some((key, value)) = trimmed.split_once('=') else {
            continue;
        };
        if !in_dependencies {
            continue;
        }
        let (name, value) = (key.trim(), value.trim());
        // `name.workspace = true` and the like: a dotted key, no version.
        let (name, dotted) = name.split_once('.').unwrap_or((name, ""));
        let version = if !dotted.is_empty() {
            (dotted == "version").then(|| unquote(value))
        } else if value.starts_with('"') {
            Some(unquote(value))
        } else {
            inline_field(value, "version").map(unquote)
        };
        let features = inline_field(value, "features")
            .map(|list| {
                list.trim_start_matches('[')
                    .split(']')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(unquote)
                    .filter(|f| !f.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        found.push(Dependency {
            line: n + 1,
            name: name.trim_matches('"').to_owned(),
            version,
            features,
        });
    }
    found
}

fn unquote(value: &str) -> String {
    value.trim().trim_matches('"').to_owned()
}

/// The value of `field` in an inline table (`{ version = "1", features = [...] }`),
/// as written: a quoted string with its quotes, an array with its brackets.
fn inline_field<'a>(table: &'a str, field: &str) -> Option<&'a str> {
    let mut rest = table.strip_prefix('{')?;
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let (key, after) = rest.split_once('=')?;
        let after = after.trim_start();
        let end = match after.chars().next()? {
            '"' => after[1..].find('"')? + 2,
            '[' => after.find(']')? + 1,
            _ => after.find([',', '}']).unwrap_or(after.len()),
        };
        if key.trim() == field {
            return Some(&after[..end]);
        }
        rest = &after[end..];
    }
}

/// A version `major.minor.patch`.
fn parse_version(text: &str) -> Option<[u64; 3]> {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().ok());
    let version = [parts.next()??, parts.next()??, parts.next()??];
    parts.next().is_none().then_some(version)
}

/// Whether `version` meets a requirement as Cargo reads it: `1`, `0.3`,
/// `0.1.0` and `^0.1` are caret requirements, `~1.2` a tilde one, `=1.2.3`
/// an exact one. Anything else (ranges, wildcards) is `Err`: a snippet for
/// users shows a plain version.
fn meets(requirement: &str, version: [u64; 3]) -> Result<bool, String> {
    let (op, rest) = match requirement.chars().next() {
        Some(c @ ('^' | '~' | '=')) => (c, &requirement[1..]),
        _ => ('^', requirement),
    };
    let given: Vec<u64> = rest
        .split('.')
        .map(|p| p.trim().parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("`{requirement}` is not a plain version requirement"))?;
    if given.is_empty() || given.len() > 3 {
        return Err(format!(
            "`{requirement}` is not a plain version requirement"
        ));
    }
    let mut lower = [0; 3];
    lower[..given.len()].copy_from_slice(&given);
    // The parts that must be equal: all given for `=`, the first two for `~`,
    // up to the first non-zero one for `^` (all of them when all are zero).
    let fixed = match op {
        '=' => given.len(),
        '~' => given.len().min(2),
        _ => given
            .iter()
            .position(|&p| p != 0)
            .map_or(given.len(), |i| i + 1),
    };
    Ok(version[..fixed] == given[..fixed] && version >= lower)
}

/// A package of the workspace: its version, whether it is published, its features.
struct Member {
    name: String,
    version: [u64; 3],
    published: bool,
    features: Vec<String>,
}

/// The workspace's packages, from their manifests (`crates/*/Cargo.toml`).
fn members(files: &[String]) -> Vec<Member> {
    let workspace_version = table_value(&read("Cargo.toml"), "workspace.package", "version")
        .and_then(|v| parse_version(&v))
        .expect("Cargo.toml: [workspace.package] version");
    files
        .iter()
        .filter(|f| f.starts_with("crates/") && f.ends_with("/Cargo.toml"))
        .filter_map(|f| {
            let manifest = read(f);
            let name = table_value(&manifest, "package", "name")?;
            let version = table_value(&manifest, "package", "version")
                .and_then(|v| parse_version(&v))
                .unwrap_or(workspace_version);
            let published =
                table_value(&manifest, "package", "publish").as_deref() != Some("false");
            let features = table_keys(&manifest, "features");
            Some(Member {
                name,
                version,
                published,
                features,
            })
        })
        .collect()
}

/// The `key = value` lines of a TOML table (`[features]`), in a manifest
/// written one key a line: `(key, value)`, the value without its comment.
fn table_entries<'a>(
    manifest: &'a str,
    table: &'a str,
) -> impl Iterator<Item = (&'a str, &'a str)> {
    let mut current = "";
    manifest.lines().map(str::trim).filter_map(move |line| {
        if let Some(header) = line.strip_prefix('[') {
            current = header.trim_end_matches(']');
            return None;
        }
        let (key, value) = line
            .split_once('=')
            .filter(|_| current == table && !line.starts_with('#'))?;
        Some((key.trim(), value.split('#').next().unwrap_or("").trim()))
    })
}

fn table_keys(manifest: &str, table: &str) -> Vec<String> {
    table_entries(manifest, table)
        .map(|(key, _)| key.to_owned())
        .collect()
}

/// A string or boolean value of a table's key (`version = "0.1.0"`).
fn table_value(manifest: &str, table: &str, key: &str) -> Option<String> {
    table_entries(manifest, table)
        .find(|(k, _)| *k == key)
        .map(|(_, v)| unquote(v))
}

/// `(name, version)` of every package in Cargo.lock that comes from a registry.
fn locked(lock: &str) -> Vec<(String, [u64; 3])> {
    lock.split("[[package]]")
        .skip(1)
        .filter_map(|package| {
            let package = format!("[p]\n{package}");
            table_value(&package, "p", "source")?;
            let version = parse_version(&table_value(&package, "p", "version")?)?;
            Some((table_value(&package, "p", "name")?, version))
        })
        .collect()
}

fn snippet_violations(
    path: &str,
    markdown: &str,
    members: &[Member],
    locked: &[(String, [u64; 3])],
) -> Vec<String> {
    let mut found = Vec::new();
    for dep in snippet_dependencies(markdown) {
        let at = format!("{path}:{}: `{}`", dep.line, dep.name);
        let Some(requirement) = &dep.version else {
            found.push(format!(
                "{at} gives no version: show the one users write, e.g. `\"0.1\"`"
            ));
            continue;
        };
        let versions: Vec<([u64; 3], Option<&Member>)> =
            match members.iter().find(|m| m.name == dep.name) {
                Some(member) if !member.published => {
                    found.push(format!(
                        "{at} is not published (`publish = false`): users cannot depend on it"
                    ));
                    continue;
                }
                Some(member) => vec![(member.version, Some(member))],
                None => locked
                    .iter()
                    .filter(|(n, _)| *n == dep.name)
                    .map(|(_, v)| (*v, None))
                    .collect(),
            };
        if versions.is_empty() {
            found.push(format!(
                "{at} is neither a package of this workspace nor in Cargo.lock: show only crates the \
                 workspace builds with (a typo, or a crate whose version nothing here tests?)"
            ));
            continue;
        }
        match versions
            .iter()
            .map(|(v, _)| meets(requirement, *v))
            .collect::<Result<Vec<_>, _>>()
        {
            Err(e) => found.push(format!("{at}: {e}")),
            Ok(ok) if !ok.contains(&true) => {
                let have: Vec<String> = versions
                    .iter()
                    .map(|(v, _)| format!("{}.{}.{}", v[0], v[1], v[2]))
                    .collect();
                found.push(format!(
                    "{at} = \"{requirement}\", but the workspace has {}: update the snippet",
                    have.join(", ")
                ));
            }
            Ok(_) => {}
        }
        if let Some((_, Some(member))) = versions.first() {
            for feature in dep.features.iter().filter(|f| !member.features.contains(f)) {
                found.push(format!("{at} has no feature `{feature}`"));
            }
        }
    }
    found
}

#[test]
fn dependency_snippets_name_the_workspace_versions() {
    let files = files();
    let members = members(&files);
    let locked =
        locked(&std::fs::read_to_string(repo_root().join("Cargo.lock")).expect("Cargo.lock"));
    let mut found = Vec::new();
    let mut checked = 0;
    for path in files.iter().filter(|f| f.ends_with(".md")) {
        let text = read(path);
        checked += snippet_dependencies(&text).len();
        found.extend(snippet_violations(path, &text, &members, &locked));
    }
    check(
        "a `[dependencies]` snippet in the docs does not match the workspace; \
         fix the snippet (or the package it names)",
        found,
    );
    // The README shows the SDK's dependency: the rule reads what it should.
    assert!(
        checked >= 4,
        "only {checked} dependency lines found in the Markdown files"
    );
}

#[test]
fn the_snippet_rule_catches_what_it_should() {
    let v = |s| parse_version(s).unwrap();
    for (req, version, ok) in [
        ("0.1", "0.1.0", true),
        ("0.1", "0.1.7", true),
        ("0.1", "0.2.0", false),
        ("0.1.1", "0.1.0", false),
        ("1", "1.48.0", true),
        ("1", "2.0.0", false),
        ("3.11", "3.11.2", true),
        ("3.11", "3.10.9", false),
        ("0.0.3", "0.0.4", false),
        ("=0.1.0", "0.1.1", false),
        ("~1.2", "1.2.9", true),
        ("~1.2", "1.3.0", false),
        ("^0.3", "0.3.31", true),
    ] {
        assert_eq!(meets(req, v(version)), Ok(ok), "{req} against {version}");
    }
    assert!(meets(">=1, <2", v("1.0.0")).is_err());
    assert!(meets("*", v("1.0.0")).is_err());

    let markdown = "text\n```toml\n[dependencies]\nclaude-code-agent = { version = \"0.1\", features = [\"rmcp\", \"nope\"] }\n\
                    tokio = { version = \"1\", features = [\"macros\"] }\nserde = \"2\"\nanyhow = \"1\"\n\
                    claude-code-agent-fake-cli = \"0.1\"\nfutures.workspace = true\n\n[package]\nname = \"x\"\n```\n\
                    ```toml\nclaude-code-agent-mcp = \"0.2\"\n```\n```rust\nlet x = \"1\";\n```\n";
    let deps = snippet_dependencies(markdown);
    assert_eq!(
        deps[0],
        Dependency {
            line: 4,
            name: "claude-code-agent".into(),
            version: Some("0.1".into()),
            features: vec!["rmcp".into(), "nope".into()],
        }
    );
    assert_eq!(deps.len(), 7, "{deps:#?}");
    let member = |name: &str, published| Member {
        name: name.into(),
        version: [0, 1, 0],
        published,
        features: vec!["rmcp".into()],
    };
    let members = [
        member("claude-code-agent", true),
        member("claude-code-agent-mcp", true),
        member("claude-code-agent-fake-cli", false),
    ];
    let locked = [
        ("tokio".to_owned(), v("1.48.0")),
        ("serde".to_owned(), v("1.0.228")),
    ];
    let found = snippet_violations("a.md", markdown, &members, &locked);
    let expected = [
        "a.md:4: `claude-code-agent` has no feature `nope`",
        "a.md:6: `serde` = \"2\", but the workspace has 1.0.228",
        "a.md:7: `anyhow` is neither",
        "a.md:8: `claude-code-agent-fake-cli` is not published",
        "a.md:9: `futures` gives no version",
        "a.md:15: `claude-code-agent-mcp` = \"0.2\", but the workspace has 0.1.0",
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (found, expected) in found.iter().zip(expected) {
        assert!(
            found.starts_with(expected),
            "{found} does not start with {expected}"
        );
    }
}
