//! The layering of each published crate's modules (the reading of the
//! source is in `tidy_layers/graph.rs`):
//!
//! - The module graph is acyclic at every level: among the children of one
//!   module (the crate root's, `client`'s, …), none imports another that
//!   imports it back, directly or through others. An import of a module's
//!   descendant counts for the child it is under (`client/http/stream.rs`
//!   naming `crate::client::error` is `http` → `error` under `client`); a
//!   child naming its parent or its parent's items (`super::Error`) is no
//!   edge of its own, but a re-export is followed to what it re-exports
//!   (`super::Error` from `client/error.rs` is an edge to `error`).
//! - In `claude-code-agent-mcp`, `transport` (what every peer shares) is
//!   below `client` and `server`, and the wire types `types` and
//!   `jsonrpc` are below all three; the client names the server only in
//!   its in-process transport (`client/in_process.rs`).

pub(crate) mod graph;

use std::collections::{BTreeMap, BTreeSet};

use graph::{Edge, Module};

use crate::support::repo::{check, files, read};

/// The crates whose module graph is checked.
const CRATES: [&str; 3] = [
    "claude-code-agent-mcp",
    "claude-code-agent",
    "claude-code-agent-testkit",
];

/// `(crate, module, modules it must not import)`.
const BELOW: &[(&str, &str, &[&str])] = &[
    ("claude-code-agent-mcp", "transport", &["client", "server"]),
    (
        "claude-code-agent-mcp",
        "types",
        &["client", "server", "transport"],
    ),
    (
        "claude-code-agent-mcp",
        "jsonrpc",
        &["client", "server", "transport"],
    ),
];

/// `(crate, module, module it names, the only children of it that may)`.
const ONLY_IN: &[(&str, &str, &str, &[&str])] =
    &[("claude-code-agent-mcp", "client", "server", &["in_process"])];

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "the crate root".to_owned()
    } else {
        format!("`{}`", m.join("::"))
    }
}

/// One edge between siblings: their parent and the two children, when
/// `edge` joins two modules neither of which contains the other.
fn sibling_edge(edge: &Edge) -> Option<(Module, String, String)> {
    let common = edge
        .from
        .iter()
        .zip(&edge.to)
        .take_while(|(a, b)| a == b)
        .count();
    let a = edge.from.get(common)?;
    let b = edge.to.get(common)?;
    Some((edge.from[..common].to_vec(), a.clone(), b.clone()))
}

/// A shortest cycle through `start` inside `members`, as the nodes in order.
fn cycle_through(
    start: &str,
    members: &BTreeSet<&str>,
    next: &BTreeMap<&str, BTreeSet<&str>>,
) -> Vec<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &n in next.get(node).into_iter().flatten() {
            if !members.contains(n) {
                continue;
            }
            if n == start {
                let mut path = vec![node.to_owned()];
                let mut at = node;
                while at != start {
                    at = came_from[at];
                    path.push(at.to_owned());
                }
                path.reverse();
                return path;
            }
            if n != start && !came_from.contains_key(n) {
                came_from.insert(n, node);
                queue.push_back(n);
            }
        }
    }
    unreachable!("{start} is in a strongly connected component of more than one module")
}

/// Strongly connected components of more than one node (Tarjan).
fn components<'a>(next: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<BTreeSet<&'a str>> {
    struct State<'a, 'g> {
        next: &'g BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<BTreeSet<&'a str>>,
    }
    fn visit<'a>(s: &mut State<'a, '_>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        for &w in s.next.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                component.insert(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for &v in next.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

/// Every cycle among siblings, one message each: the cycle and, per edge,
/// one `file:line` that makes it.
fn cycles(krate: &str, edges: &[Edge]) -> Vec<String> {
    let mut by_parent: BTreeMap<Module, BTreeMap<(String, String), &Edge>> = BTreeMap::new();
    for edge in edges {
        if let Some((parent, a, b)) = sibling_edge(edge) {
            by_parent
                .entry(parent)
                .or_default()
                .entry((a, b))
                .or_insert(edge);
        }
    }
    let mut found = Vec::new();
    for (parent, pairs) in &by_parent {
        let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (a, b) in pairs.keys() {
            next.entry(a).or_default().insert(b);
            next.entry(b).or_default();
        }
        for members in components(&next) {
            let start = *members.first().expect("not empty");
            let cycle = cycle_through(start, &members, &next);
            let mut text = format!(
                "{krate}: the modules under {} import each other in a cycle: {} → {start}",
                show(parent),
                cycle.join(" → ")
            );
            if members.len() > cycle.len() {
                let all: Vec<&str> = members.iter().copied().collect();
                text.push_str(&format!(" (with more cycles among {})", all.join(", ")));
            }
            for (k, a) in cycle.iter().enumerate() {
                let b = &cycle[(k + 1) % cycle.len()];
                let edge = pairs[&(a.clone(), b.clone())];
                text.push_str(&format!(
                    "\n    {}: `{}` ({a} → {b}: {} names {})",
                    edge.at,
                    edge.path,
                    show(&edge.from),
                    show(&edge.to)
                ));
            }
            text.push_str(
                "\n  move what both need to the lower one, or into a module beneath both",
            );
            found.push(text);
        }
    }
    found
}

/// Imports against [`BELOW`].
fn layering(krate: &str, edges: &[Edge]) -> Vec<String> {
    // One message per path written: of its edges (to the module it names,
    // to the one defining the item), the last.
    let mut found = BTreeMap::new();
    for &(_, low, above) in BELOW.iter().filter(|(k, _, _)| *k == krate) {
        for edge in edges {
            let (Some(from), Some(to)) = (edge.from.first(), edge.to.first()) else {
                continue;
            };
            if from == low && above.contains(&to.as_str()) {
                let key = (edge.at.clone(), edge.path.clone());
                found.insert(
                    key,
                    format!(
                        "{}: `{}`: {} names {}, but `{low}` is below `{}`: move what both need \
                     into `{low}` (or lower)",
                        edge.at,
                        edge.path,
                        show(&edge.from),
                        show(&edge.to),
                        above.join("`, `")
                    ),
                );
            }
        }
    }
    found.into_values().collect()
}

/// Imports against [`ONLY_IN`].
fn confinement(krate: &str, edges: &[Edge]) -> Vec<String> {
    let mut found = BTreeMap::new();
    for &(_, module, named, only_in) in ONLY_IN.iter().filter(|(k, ..)| *k == krate) {
        for edge in edges {
            let (Some(from), Some(to)) = (edge.from.first(), edge.to.first()) else {
                continue;
            };
            let child = edge.from.get(1).map(String::as_str);
            if from == module && to == named && !child.is_some_and(|c| only_in.contains(&c)) {
                let key = (edge.at.clone(), edge.path.clone());
                found.insert(
                    key,
                    format!(
                        "{}: `{}`: {} names `{named}`, which `{module}` names only in `{}`",
                        edge.at,
                        edge.path,
                        show(&edge.from),
                        only_in
                            .iter()
                            .map(|c| format!("{module}::{c}"))
                            .collect::<Vec<_>>()
                            .join("`, `")
                    ),
                );
            }
        }
    }
    found.into_values().collect()
}

/// The graph of a crate of the workspace.
fn crate_edges(krate: &str) -> Vec<Edge> {
    let prefix = format!("crates/{krate}/src/");
    let sources: Vec<(String, String)> = files()
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(&prefix)?.to_owned();
            rel.ends_with(".rs").then(|| (rel, read(&path)))
        })
        .collect();
    assert!(!sources.is_empty(), "no sources under {prefix}");
    graph::edges(&sources, |rel| format!("{prefix}{rel}"))
}

#[test]
fn the_module_graph_of_each_crate_is_acyclic() {
    let found = CRATES
        .iter()
        .flat_map(|krate| cycles(krate, &crate_edges(krate)))
        .collect();
    check("modules import each other in a cycle", found);
}

#[test]
fn the_mcp_transport_is_below_the_client_and_the_server() {
    let krate = "claude-code-agent-mcp";
    check(
        "a lower layer of the MCP crate imports a higher one",
        layering(krate, &crate_edges(krate)),
    );
}

#[test]
fn the_mcp_client_names_the_server_only_in_its_in_process_transport() {
    let krate = "claude-code-agent-mcp";
    check(
        "the MCP client names the server outside its in-process transport",
        confinement(krate, &crate_edges(krate)),
    );
}

// ---------------------------------------------------------------------------
// The rules on made-up crates

fn made_up(files: &[(&str, &str)]) -> Vec<Edge> {
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect();
    graph::edges(&sources, str::to_owned)
}

const MCP_LIKE: &[(&str, &str)] = &[
    (
        "lib.rs",
        "pub mod client;\nmod transport;\npub use client::Client;\n",
    ),
    (
        "client/mod.rs",
        "mod error;\npub use error::Error;\nuse crate::transport::Lines;\npub struct Client;\n",
    ),
    (
        "client/error.rs",
        "use super::Client; // a child naming its parent\npub struct Error;\n",
    ),
    ("transport/mod.rs", "mod lines;\npub use lines::Lines;\n"),
];

#[test]
fn the_rules_catch_what_they_should() {
    // As it is: no cycle, transport below the client.
    let edges = made_up(MCP_LIKE);
    assert!(cycles("k", &edges).is_empty(), "{:#?}", cycles("k", &edges));
    let mut files = MCP_LIKE.to_vec();
    files.push(("transport/lines.rs", "pub struct Lines;\n"));
    assert!(layering("claude-code-agent-mcp", &made_up(&files)).is_empty());

    // A planted import of the client in the transport: a layering error
    // and a cycle (client → transport → client), each naming the line.
    for planted in [
        "use std::io;\n\nuse crate::client::Error;\n",
        "use std::io;\n\nuse crate::{client::{self, Error}};\n",
        "use std::io;\n\nfn f() -> crate::Client { todo!() }\n",
        "use std::io;\n\nuse super::super::client;\n",
    ] {
        files.pop();
        files.push(("transport/lines.rs", planted));
        let edges = made_up(&files);
        let v = layering("claude-code-agent-mcp", &edges);
        assert!(!v.is_empty(), "{planted}");
        assert!(
            v.iter().all(|v| v.starts_with("transport/lines.rs:3: ")),
            "{v:#?}"
        );
        let c = cycles("k", &edges);
        assert_eq!(c.len(), 1, "{planted}: {c:#?}");
        assert!(
            c[0].contains(
                "the crate root import each other in a cycle: client → transport → client"
            ),
            "{c:#?}"
        );
        assert!(c[0].contains("\n    transport/lines.rs:3: "), "{c:#?}");
        assert!(
            c[0].contains("\n    client/mod.rs:3: `crate::transport::Lines`"),
            "{c:#?}"
        );
    }

    // The same in a comment, a string, a doc comment or a test module is
    // no import.
    files.pop();
    files.push((
        "transport/lines.rs",
        "// use crate::client::Error;\n/// [`crate::client::Error`]\nconst S: &str = \"crate::client::Error\";\n\
         const R: &str = r#\"use crate::client::Error;\"#;\nconst C: char = '\"';\nfn f<'a>(x: &'a str) {}\n\
         #[cfg(test)]\nmod tests {\n    use crate::client::Error;\n}\n#[cfg(test)]\nmod more;\n\
         #[cfg(any(test, feature = \"__fuzz\"))]\npub mod fuzz;\n#[cfg(feature = \"__fuzz\")]\nmod probe;\n",
    ));
    files.push(("transport/lines/more.rs", "use crate::client::Error;\n"));
    files.push(("transport/lines/fuzz.rs", "use crate::client::Error;\n"));
    files.push(("transport/lines/probe.rs", "use crate::client::Error;\n"));
    let edges = made_up(&files);
    assert!(
        layering("claude-code-agent-mcp", &edges).is_empty(),
        "{edges:#?}"
    );
    assert!(cycles("k", &edges).is_empty());
    // Code of a feature is code.
    files.push((
        "transport/http.rs",
        "#[cfg(feature = \"http\")]\nuse crate::client::Error;\n",
    ));
    assert_eq!(layering("claude-code-agent-mcp", &made_up(&files)).len(), 1);

    // The client names the server in its in-process transport only: not
    // in another child, nor in itself, nor through a re-export at the root.
    let client_and_server = |client: &str, engine: &str| {
        made_up(&[
            (
                "lib.rs",
                "pub mod client;\nmod server;\npub use server::Server;\n",
            ),
            ("client/mod.rs", client),
            ("client/in_process.rs", "use crate::server::Server;\n"),
            ("client/engine.rs", engine),
            ("server/mod.rs", "pub struct Server;\n"),
        ])
    };
    let fine = client_and_server("mod engine;\nmod in_process;\n", "pub struct Inner;\n");
    assert!(confinement("claude-code-agent-mcp", &fine).is_empty());
    for (client, engine, at) in [
        (
            "mod engine;\nmod in_process;\n",
            "use crate::server::Server;\n",
            "client/engine.rs:1: ",
        ),
        (
            "mod engine;\nmod in_process;\nfn f(_: crate::Server) {}\n",
            "",
            "client/mod.rs:3: ",
        ),
    ] {
        let v = confinement("claude-code-agent-mcp", &client_and_server(client, engine));
        assert_eq!(v.len(), 1, "{v:#?}");
        assert!(v[0].starts_with(at), "{v:#?}");
    }

    // A 3-cycle among siblings, deeper down, through `super::` and a
    // path in code.
    let three = made_up(&[
        ("lib.rs", "mod a;\n"),
        ("a/mod.rs", "mod x;\nmod y;\nmod z;\n"),
        ("a/x.rs", "use super::y::Y;\npub struct X;\n"),
        ("a/y.rs", "pub struct Y(crate::a::z::Z);\n"),
        ("a/z/mod.rs", "mod deep;\npub struct Z;\n"),
        (
            "a/z/deep.rs",
            "use crate::a::x;\nfn f() -> x::X { todo!() }\n",
        ),
    ]);
    let c = cycles("k", &three);
    assert_eq!(c.len(), 1, "{c:#?}");
    assert!(
        c[0].starts_with("k: the modules under `a` import each other in a cycle: x → y → z → x"),
        "{c:#?}"
    );
    for at in [
        "a/x.rs:1: `super::y::Y`",
        "a/y.rs:1: `crate::a::z::Z`",
        "a/z/deep.rs:1: `crate::a::x`",
    ] {
        assert!(c[0].contains(at), "{at}: {c:#?}");
    }

    // A child importing its parent (and the parent its child) is no cycle;
    // a re-export is followed to the module that defines the item.
    let family = made_up(&[
        ("lib.rs", "mod p;\n"),
        ("p/mod.rs", "mod c;\nmod e;\npub use e::E;\nuse c::C;\n"),
        ("p/c.rs", "use super::{self, E};\npub struct C;\n"),
        ("p/e.rs", "pub struct E;\n"),
    ]);
    assert!(cycles("k", &family).is_empty());
    let to_e: Vec<&Module> = family
        .iter()
        .filter(|e| e.path == "super::E")
        .map(|e| &e.to)
        .collect();
    assert_eq!(
        to_e,
        [&vec!["p".to_owned()], &vec!["p".to_owned(), "e".to_owned()]]
    );
    // Naming an item through a module that re-exports it depends on both.
    let through = made_up(&[
        ("lib.rs", "mod a;\nmod b;\nmod shared;\n"),
        (
            "a.rs",
            "pub use crate::shared::S;\npub struct A(crate::b::B);\n",
        ),
        ("b.rs", "use crate::a::S;\npub struct B;\n"),
        ("shared.rs", "pub struct S;\n"),
    ]);
    let c = cycles("k", &through);
    assert_eq!(c.len(), 1, "{c:#?}");
    assert!(c[0].contains("b.rs:1: `crate::a::S` (b → a"), "{c:#?}");
    let back = made_up(&[
        ("lib.rs", "mod p;\n"),
        ("p/mod.rs", "mod c;\nmod e;\npub use e::E;\n"),
        ("p/c.rs", "use super::E;\npub struct C;\n"),
        ("p/e.rs", "use super::c::C;\npub struct E;\n"),
    ]);
    assert_eq!(cycles("k", &back).len(), 1);
}
