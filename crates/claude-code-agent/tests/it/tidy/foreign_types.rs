//! Our types at our boundary: the public API of the MCP crate and the SDK
//! (their listings in `api/`) names another crate only if its users hold
//! that crate already, so that a release of any other crate is not a
//! breaking release of ours; and the only other crate they re-export is
//! `schemars`. ARCHITECTURE.md's invariant lists the same crates.

use crate::support::repo::{check, read};

/// The listings checked.
const LISTINGS: [&str; 2] = ["api/claude-code-agent-mcp.txt", "api/claude-code-agent.txt"];

/// The crates of the listings' own paths: ours and the standard library.
const OURS: [&str; 5] = [
    "claude_code_agent",
    "claude_code_agent_mcp",
    "core",
    "alloc",
    "std",
];

/// The other crates the API may name, and why its users hold them.
const VOCABULARY: [(&str, &str); 9] = [
    ("serde_core", "serde's traits: MCP is JSON"),
    ("serde_json", "`Value` and its kin: MCP is JSON"),
    (
        "schemars",
        "`JsonSchema`, derived for tools' arguments (re-exported)",
    ),
    (
        "futures_core",
        "`BoxFuture` and `Stream`, the async vocabulary",
    ),
    ("tokio", "the runtime: its listener and IO traits"),
    (
        "tokio_util",
        "`CancellationToken`, the ecosystem's cancellation",
    ),
    (
        "bytes",
        "`Bytes`, the HTTP stack's buffer (an `EventStore`'s frames)",
    ),
    ("axum", "`Router`, to mount MCP into an axum application"),
    ("rmcp", "`ServerHandler`, what the feature `rmcp` serves"),
];

/// The crates re-exported (a listing shows a crate's re-export by its name
/// alone): `schemars`, for the derives, and the SDK's `mcp`, which is the
/// MCP crate, ours.
const RE_EXPORTED: [&str; 2] = ["schemars", "mcp"];

/// Names of primitive types, which start paths in the listings
/// (`usize::into_call_tool_result`) and are no crates.
const PRIMITIVES: [&str; 17] = [
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64", "bool", "char", "str",
];

/// The first segments of the paths in `line`: each identifier followed by
/// `::` and not itself after one.
fn path_roots(line: &str) -> Vec<&str> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut roots = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (start, is_ident(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                start = None;
                let after_path = line[..s].ends_with("::");
                if !after_path && line[i..].starts_with("::") {
                    roots.push(&line[s..i]);
                }
            }
            _ => {}
        }
    }
    roots
}

/// What in `listing` (the text of `path`) breaks the rule.
fn violations(path: &str, listing: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in listing.lines().enumerate() {
        for root in path_roots(line) {
            let known = OURS.contains(&root)
                || PRIMITIVES.contains(&root)
                || VOCABULARY.iter().any(|(name, _)| *name == root)
                || root.starts_with(char::is_uppercase);
            if !known {
                found.push(format!(
                    "{path}:{}: names the crate `{root}`: wrap it in a type of ours, or add it to VOCABULARY \
                     in this file and to ARCHITECTURE.md's invariant with why users hold it",
                    n + 1
                ));
            }
        }
        let re_exported = line
            .strip_prefix("pub use ")
            .and_then(|item| item.rsplit("::").next())
            .filter(|name| name.starts_with(char::is_lowercase) && !RE_EXPORTED.contains(name));
        if let Some(name) = re_exported {
            found.push(format!(
                "{path}:{}: re-exports `{name}`: let users depend on it themselves",
                n + 1
            ));
        }
    }
    found
}

#[test]
fn the_public_api_names_only_crates_its_users_hold() {
    let found = LISTINGS
        .iter()
        .flat_map(|path| violations(path, &read(path)))
        .collect();
    check(
        "the public API names a crate its users need not hold",
        found,
    );
}

#[test]
fn the_rule_catches_foreign_paths_and_re_exports() {
    let listing = "\
pub fn claude_code_agent_mcp::http_server::JwtVerifier::key(self, jsonwebtoken::decoding::DecodingKey) -> Self
pub fn usize::into_call_tool_result(self) -> claude_code_agent_mcp::CallToolResult
pub fn claude_code_agent_mcp::Tool::output_schema<O: schemars::JsonSchema + ?core::marker::Sized>(self) -> Self
pub fn <Self as core::iter::Iterator>::next(&mut self) -> Self::Item
pub use claude_code_agent_mcp::schemars
pub use claude_code_agent_mcp::rmcp_server::rmcp
pub use claude_code_agent::ShutdownTimeouts";
    let found = violations("api/x.txt", listing);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("api/x.txt:1: names the crate `jsonwebtoken`"));
    assert!(found[1].starts_with("api/x.txt:6: re-exports `rmcp`"));
    assert_eq!(path_roots("a::b::c(d::e, <f as g::H>::i)"), ["a", "d", "g"]);
}
