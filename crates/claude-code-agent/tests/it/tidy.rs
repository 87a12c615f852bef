//! Repository rules that no compiler checks (rust-analyzer's `xtask/src/tidy.rs`
//! is the model). Each rule reads the files git knows about (tracked, or new and
//! not ignored) and fails with `file:line` and what to do (more in `tidy/`).
//!
//! - The repository stands alone: no file refers to material outside it.
//! - ARCHITECTURE.md is a true map: its code map names every module of each
//!   crate and only paths that exist, and the tests it names exist
//!   (`tidy/architecture.rs`).
//! - `claude-code-agent-mcp` knows nothing of the SDK: its manifest and code never
//!   name `claude-code-agent` or another crate of this workspace built on it. The
//!   exceptions are its tests': they use the testkit's task checker (a
//!   dev-dependency on the testkit *without* its `harness` feature, the part
//!   built on the SDK) and run programs of the tooling crate (the conformance
//!   programs, the interop server: `claude-code-agent-devtools`, built with
//!   cargo, not linked).
//! - The MCP server does not import the MCP client.
//! - The public API names other crates only where its users hold them
//!   (`tidy/foreign_types.rs`).
//! - Platform-specific code is in what the Windows check of `scripts/test`
//!   builds (`tidy/platform_code.rs`).
//! - Citations of `docs/protocol.md` name sections that exist.
//! - Each published crate's docs (`src/lib.rs`) name every feature of its
//!   manifest.
//!
//! The rules of the parity tables are in `tidy_parity`, the rule of the
//! test targets in `tidy_targets`.

mod architecture;
mod dependency_snippets;
mod foreign_types;
mod platform_code;
use std::collections::BTreeSet;

use crate::support::repo::{check, files, read};

// ---------------------------------------------------------------------------
// Nothing outside the repository

/// What marks a reference to the reference material kept beside the
/// repository. Built at run time so that this file does not match itself.
fn outside_markers() -> Vec<String> {
    let shared = ["sha", "red"].concat();
    let mut markers = vec![
        format!("../{shared}"),
        format!("{shared}/captures"),
        format!("{shared}/docs"),
        format!("{shared}/reference"),
        format!("/work/{shared}"),
    ];
    for doc in [
        ["claude-cli", "-protocol.md"],
        ["design", "-review.md"],
        ["lessons-from", "-peers.md"],
        ["mcp-test", "-peers.md"],
    ] {
        markers.push(doc.concat());
    }
    markers
}

fn outside_references(files: &[String]) -> Vec<String> {
    let markers = outside_markers();
    let mut found = Vec::new();
    for path in files {
        let text = read(path);
        for (n, line) in text.lines().enumerate() {
            for marker in &markers {
                if line.contains(marker.as_str()) {
                    found.push(format!(
                        "{path}:{}: refers to `{marker}`, which is outside the repository",
                        n + 1
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn nothing_refers_to_files_outside_the_repository() {
    check(
        "files refer to material outside the repository; put what is needed into the \
         repository (tests/fixtures, docs/protocol.md) and cite that",
        outside_references(&files()),
    );
}

// ---------------------------------------------------------------------------
// Layering

/// Whether `text` has `word` as a whole identifier (or crate name) at `at`.
fn is_whole(text: &str, at: usize, len: usize) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let before = text[..at].chars().next_back().is_none_or(|c| !ident(c));
    let after = text[at + len..].chars().next().is_none_or(|c| !ident(c));
    before && after
}

/// Names of the SDK crate and of every workspace crate built on it, in
/// `line`: `claude_code_agent`, `claude-code-agent`, `claude_code_agent_testkit`, … but not
/// `claude_code_agent_mcp` / `claude-code-agent-mcp` (the MCP crate itself).
fn sdk_crate_names(line: &str) -> Vec<String> {
    let mut names = Vec::new();
    for stem in ["claude_code_agent", "claude-code-agent"] {
        for (at, _) in line.match_indices(stem) {
            let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
            if line[..at].chars().next_back().is_some_and(ident) {
                continue;
            }
            let end = line[at..]
                .find(|c: char| !ident(c))
                .map_or(line.len(), |i| at + i);
            let name = &line[at..end];
            // `claude_code_agent_mcp::…`, `claude-code-agent-mcp-conformance`: the crate
            // itself and names it gives.
            let own = ["claude_code_agent_mcp", "claude-code-agent-mcp"]
                .iter()
                .any(|own| name.starts_with(own));
            // `claude-agent-rs` is the project, not a crate.
            if !own && name != "claude-agent-rs" {
                names.push(name.trim_end_matches('-').to_owned());
            }
        }
    }
    names
}

/// Whether naming `name` on `line` of `path` is an allowed use of the
/// workspace's test crates by the MCP crate: in its tests, the testkit and
/// the tooling crate (whose conformance programs they run); in its
/// manifest, the testkit as a dev-dependency without default features
/// (`section` is the manifest's current `[section]`).
fn mcp_may_name(path: &str, section: &str, line: &str, name: &str) -> bool {
    let testkit = matches!(
        name,
        "claude_code_agent_testkit" | "claude-code-agent-testkit"
    );
    if path.starts_with("crates/claude-code-agent-mcp/tests/") {
        return testkit || name == "claude-code-agent-devtools";
    }
    testkit
        && path.ends_with("Cargo.toml")
        && section == "[dev-dependencies]"
        && line.contains("default-features = false")
}

fn mcp_names_the_sdk(files: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for path in files {
        if !path.starts_with("crates/claude-code-agent-mcp/")
            || !(path.ends_with(".rs") || path.ends_with(".toml"))
        {
            continue;
        }
        let mut section = String::new();
        for (n, line) in read(path).lines().enumerate() {
            if path.ends_with(".toml") && line.trim_start().starts_with('[') {
                section = line.trim().to_owned();
            }
            for name in sdk_crate_names(line) {
                if mcp_may_name(path, &section, line, &name) {
                    continue;
                }
                found.push(format!(
                    "{path}:{}: names `{name}`; claude-code-agent-mcp must not know the SDK \
                     crates built on it",
                    n + 1
                ));
            }
        }
    }
    found
}

#[test]
fn the_mcp_crate_does_not_name_the_sdk() {
    check(
        "claude-code-agent-mcp names a crate built on it",
        mcp_names_the_sdk(&files()),
    );
}

/// `crate::client`, `super::super::client` and `crate::{…, client…}` in
/// `text`, as `(line, what)`.
fn client_imports(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // `crate :: client` is `crate::client` (spaces and tabs only, so that
    // line numbers hold).
    let squeezed: String = {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("::") {
            out.push_str(rest[..at].trim_end_matches([' ', '\t']));
            out.push_str("::");
            rest = rest[at + 2..].trim_start_matches([' ', '\t']);
        }
        out.push_str(rest);
        out
    };
    let lines: Vec<&str> = squeezed.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        for path in ["crate::client", "super::super::client"] {
            for (at, _) in line.match_indices(path) {
                if is_whole(line, at, path.len()) {
                    found.push((n + 1, path.to_owned()));
                }
            }
        }
    }
    // Groups: `use crate::{a, client::X, b::{c, d}}`, over several lines.
    for (at, _) in squeezed.match_indices("crate::{") {
        let start = at + "crate::{".len();
        let mut depth = 1;
        let mut end = start;
        for (i, c) in squeezed[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = start + i;
                break;
            }
        }
        // Only the group's top level names modules of the crate root.
        let mut depth = 0;
        let mut item_start = start;
        for (i, c) in squeezed[start..=end].char_indices() {
            let at = start + i;
            match c {
                '{' => depth += 1,
                '}' if depth > 0 => depth -= 1,
                ',' | '}' if depth == 0 => {
                    let raw = &squeezed[item_start..at];
                    let item = raw.trim();
                    if item == "client"
                        || item.starts_with("client::")
                        || item.starts_with("client ")
                    {
                        let item_at = item_start + (raw.len() - raw.trim_start().len());
                        let line = squeezed[..item_at].matches('\n').count() + 1;
                        found.push((line, format!("crate::{{{item}}}")));
                    }
                    item_start = at + 1;
                }
                _ => {}
            }
        }
    }
    found
}

fn server_imports_the_client(files: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for path in files {
        if !path.starts_with("crates/claude-code-agent-mcp/src/server/") || !path.ends_with(".rs") {
            continue;
        }
        for (line, what) in client_imports(&read(path)) {
            found.push(format!(
                "{path}:{line}: imports `{what}`; the MCP server must not depend on \
                 the MCP client (share code through `transport/`)"
            ));
        }
    }
    found
}

#[test]
fn the_mcp_server_does_not_import_the_client() {
    check(
        "the MCP server imports the MCP client",
        server_imports_the_client(&files()),
    );
}

// ---------------------------------------------------------------------------
// Citations of docs/protocol.md

/// Section numbers of `docs/protocol.md` (`1`, `1.1`, …) from its headings.
fn protocol_sections(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("## ").or_else(|| l.strip_prefix("### ")))
        .filter_map(|title| title.split_whitespace().next())
        .map(|number| number.trim_end_matches('.').to_owned())
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .collect()
}

fn protocol_citations(files: &[String]) -> Vec<String> {
    let sections = protocol_sections(&read("docs/protocol.md"));
    // Built at run time, like the markers above, so this file does not cite.
    let cite = ["protocol.md ", "\u{a7}"].concat();
    let mut found = Vec::new();
    for path in files {
        for (n, line) in read(path).lines().enumerate() {
            for (at, _) in line.match_indices(cite.as_str()) {
                let number: String = line[at + cite.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let number = number.trim_end_matches('.');
                if !sections.contains(number) {
                    found.push(format!(
                        "{path}:{}: cites section {number:?} of docs/protocol.md, which has no such section",
                        n + 1
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn citations_of_the_protocol_document_resolve() {
    check(
        "citations of docs/protocol.md name missing sections",
        protocol_citations(&files()),
    );
}

/// The features named by `feature = "…"` in `text`.
fn features_named(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("feature = \"") {
        rest = &rest[at + "feature = \"".len()..];
        if let Some(end) = rest.find('"') {
            found.push(rest[..end].to_owned());
        }
    }
    found
}

/// The SDK's features whose code `scripts/test` checks alone
/// (`SDK_OWN_FEATURES="…"`): its other features only switch on the MCP
/// crate's, which that crate's own runs check. The internal ones (`__fuzz`)
/// are not for users: the tests build with them (a dev-dependency of the
/// crate on itself), and clippy checks them there.
fn sdk_code_features_unchecked(files: &[String]) -> Vec<String> {
    let script = read("scripts/test");
    let Some(own) = script
        .lines()
        .find_map(|l| l.strip_prefix("SDK_OWN_FEATURES=\""))
        .and_then(|l| l.strip_suffix('"'))
    else {
        return vec!["scripts/test: no SDK_OWN_FEATURES=\"…\" line".to_owned()];
    };
    let own: Vec<&str> = own.split_whitespace().collect();
    let mut unchecked = Vec::new();
    for path in files
        .iter()
        .filter(|p| p.starts_with("crates/claude-code-agent/src/") && p.ends_with(".rs"))
    {
        for (n, line) in read(path).lines().enumerate() {
            if !line.contains("cfg") {
                continue;
            }
            for feature in features_named(line) {
                if !own.contains(&feature.as_str()) && !feature.starts_with("__") {
                    unchecked.push(format!(
                        "{path}:{}: code conditional on `{feature}`, which scripts/test \
                         does not check alone: add it to SDK_OWN_FEATURES",
                        n + 1
                    ));
                }
            }
        }
    }
    unchecked
}

#[test]
fn the_sdk_code_depends_only_on_the_features_checked_alone() {
    check(
        "the SDK's own code depends on a feature scripts/test does not check alone",
        sdk_code_features_unchecked(&files()),
    );
}

// ---------------------------------------------------------------------------
// The rules themselves, on made-up input

#[test]
fn the_rules_catch_what_they_should() {
    assert_eq!(
        features_named(r#"#[cfg(all(feature = "rmcp", feature = "http-client"))]"#),
        ["rmcp", "http-client"]
    );
    // SDK crate names, and the MCP crate's own name is not one.
    assert_eq!(
        sdk_crate_names("use claude_code_agent::Options;"),
        ["claude_code_agent"]
    );
    assert_eq!(
        sdk_crate_names("claude-code-agent = { path = \"../claude-code-agent\" }"),
        ["claude-code-agent", "claude-code-agent"]
    );
    assert_eq!(
        sdk_crate_names("use claude_code_agent_testkit::MockModel;"),
        ["claude_code_agent_testkit"]
    );
    assert!(sdk_crate_names("name = \"claude-code-agent-mcp\"").is_empty());
    assert!(sdk_crate_names("client: claude-code-agent-mcp-conformance").is_empty());
    assert!(sdk_crate_names("use claude_code_agent_mcp::Server; // my_claude_agent").is_empty());
    // The testkit without its harness, in the MCP crate's tests only.
    let dev = "claude-code-agent-testkit = { path = \"../claude-code-agent-testkit\", default-features = false }";
    let toml = "crates/claude-code-agent-mcp/Cargo.toml";
    assert!(mcp_may_name(
        toml,
        "[dev-dependencies]",
        dev,
        "claude-code-agent-testkit"
    ));
    assert!(!mcp_may_name(
        toml,
        "[dependencies]",
        dev,
        "claude-code-agent-testkit"
    ));
    let with_harness = "claude-code-agent-testkit = { path = \"../claude-code-agent-testkit\" }";
    assert!(!mcp_may_name(
        toml,
        "[dev-dependencies]",
        with_harness,
        "claude-code-agent-testkit"
    ));
    assert!(!mcp_may_name(
        toml,
        "[dev-dependencies]",
        dev,
        "claude-code-agent"
    ));
    let test = "crates/claude-code-agent-mcp/tests/a.rs";
    assert!(mcp_may_name(
        test,
        "",
        "use claude_code_agent_testkit::tasks;",
        "claude_code_agent_testkit"
    ));
    let src = "crates/claude-code-agent-mcp/src/a.rs";
    assert!(!mcp_may_name(
        src,
        "",
        "use claude_code_agent_testkit::tasks;",
        "claude_code_agent_testkit"
    ));
    assert!(mcp_may_name(
        test,
        "",
        "-p claude-code-agent-devtools",
        "claude-code-agent-devtools"
    ));
    assert!(!mcp_may_name(
        src,
        "",
        "-p claude-code-agent-devtools",
        "claude-code-agent-devtools"
    ));
    assert!(!mcp_may_name(
        test,
        "",
        "use claude_code_agent::Options;",
        "claude_code_agent"
    ));

    // Imports of the client, in every spelling.
    for text in [
        "use crate::client::Client;",
        "use super::super::client;",
        "use crate::{jsonrpc, client::lines::LineReader};",
        "use crate::{\n    client,\n    types::Tool,\n};",
        "let x = crate :: client::DEFAULT;",
    ] {
        assert!(!client_imports(text).is_empty(), "missed: {text}");
    }
    for text in [
        "use crate::server::client_info;",
        "use crate::{types::{client, Tool}};",
        "use crate::clients;",
    ] {
        assert!(client_imports(text).is_empty(), "false alarm: {text}");
    }
    assert_eq!(
        client_imports("use std::io;\nuse crate::{\n    jsonrpc,\n    client::X,\n};")[0].0,
        4
    );

    // The markers are not spelled out in this file.
    let me = read("crates/claude-code-agent/tests/it/tidy.rs");
    for marker in outside_markers() {
        assert!(!me.contains(&marker), "{marker}");
    }
}

// ---------------------------------------------------------------------------
// Every feature named in its crate's docs

/// The features a published crate's manifest declares (not `default`, not
/// the hidden `__*` ones), with their lines.
fn declared_features(manifest: &str) -> Vec<(usize, String)> {
    let mut in_features = false;
    let mut found = Vec::new();
    for (n, line) in manifest.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        let Some((name, _)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim();
        if in_features && !line.starts_with('#') && name != "default" && !name.starts_with("__") {
            found.push((n + 1, name.to_owned()));
        }
    }
    found
}

#[test]
fn every_feature_is_named_in_its_crate_docs() {
    let mut violations = Vec::new();
    for krate in [
        "claude-code-agent",
        "claude-code-agent-mcp",
        "claude-code-agent-testkit",
    ] {
        let manifest = format!("crates/{krate}/Cargo.toml");
        let docs = read(&format!("crates/{krate}/src/lib.rs"));
        let features = declared_features(&read(&manifest));
        assert!(!features.is_empty(), "{manifest}: no features read");
        for (line, feature) in features {
            if !docs.contains(&format!("`{feature}`")) {
                violations.push(format!(
                    "{manifest}:{line}: the feature `{feature}` is not named in crates/{krate}/src/lib.rs's docs: say what it brings"
                ));
            }
        }
    }
    check("features in the crate docs", violations);
}
