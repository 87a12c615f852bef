//! The module graph of one crate, read from its source text: which module
//! names which, through `use crate::…`, `use super::…`, relative `use`
//! paths and `crate::a::b`/`super::a`/`$crate::a` paths in code. Comments,
//! string literals and `#[cfg(test)]` items (and the files of `#[cfg(test)]`
//! modules) are left out. A path is followed through the `use` items of the
//! modules it passes: a path is an edge to the module it names and to the
//! one that defines what it names, if another (`crate::Server`, re-exported
//! at the root from `server`, is an edge to `server`;
//! `crate::protocol::PermissionMode` one to `protocol` and one to where
//! `protocol` has it from), so a re-export hides no dependency.

use std::collections::{BTreeMap, BTreeSet};

/// A module path inside its crate; the crate root is empty.
pub type Module = Vec<String>;

/// One module naming another: where (`file:line`) and the path as written.
#[derive(Debug, Clone)]
pub struct Edge {
    pub from: Module,
    pub to: Module,
    pub at: String,
    pub path: String,
}

/// The module of a source file, from its path relative to `src/`
/// (`a/b.rs` and `a/b/mod.rs` are `a::b`, `lib.rs` the root); `None` for
/// what is no module of the library (`main.rs`, `bin/`).
pub fn module_of(rel: &str) -> Option<Module> {
    let stem = rel.strip_suffix(".rs")?;
    if stem == "main" || stem.starts_with("bin/") {
        return None;
    }
    let mut parts: Module = stem.split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    Some(parts)
}

/// `text` with comments, string and character literals blanked (each byte
/// a space, newlines kept: offsets and line numbers still hold).
pub(crate) fn blank_comments_and_strings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !ident_before && (b[i] == b'r' || b[i..].starts_with(b"br")) && {
            let k = i + if b[i] == b'b' { 2 } else { 1 };
            let hashes = b[k..].iter().take_while(|&&c| c == b'#').count();
            b.get(k + hashes) == Some(&b'"')
        } {
            // A raw string: r"…", r#"…"#, br"…".
            let k = i + if b[i] == b'b' { 2 } else { 1 };
            let hashes = b[k..].iter().take_while(|&&c| c == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let start = k + hashes + 1;
            let end = b[start..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| start + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}'), or a lifetime.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else {
                let len = text[i + 1..].chars().next().map_or(0, char::len_utf8);
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 2 + len)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

/// The end of the item starting at `from`: its `;`, or the `}` closing
/// its first block.
fn item_end(b: &[u8], from: usize) -> usize {
    let mut depth = 0i32;
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b';' if depth == 0 => return i + 1,
            b'{' if depth == 0 => {
                let mut braces = 0;
                for (j, &c) in b[i..].iter().enumerate() {
                    match c {
                        b'{' => braces += 1,
                        b'}' => {
                            braces -= 1;
                            if braces == 0 {
                                return i + j + 1;
                            }
                        }
                        _ => {}
                    }
                }
                return b.len();
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Whether `attr` (`#[cfg(…)]`) keeps its item to tests: `test`,
/// `feature = "__…"` or `any(test, feature = "__…")` (the internal
/// features, as `__fuzz`, that lend test code to the fuzz targets).
fn is_test_cfg(attr: &str) -> bool {
    let squeezed: String = attr.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(inner) = squeezed
        .strip_prefix("#[cfg(")
        .and_then(|s| s.strip_suffix(")]"))
    else {
        return false;
    };
    let hidden = |p: &str| p.starts_with("feature=\"__");
    inner == "test"
        || hidden(inner)
        || inner
            .strip_prefix("any(")
            .and_then(|s| s.strip_suffix(')'))
            .is_some_and(|parts| {
                let parts: Vec<&str> = parts.split(',').collect();
                parts.contains(&"test") && parts.iter().all(|p| *p == "test" || hidden(p))
            })
}

/// `clean` without its `#[cfg(test)]` items (and those of [`is_test_cfg`]), and the files those items
/// name as modules (`mod tests;` → `tests`, `#[path = "x.rs"]` → `x.rs`),
/// from `raw`, the text before cleaning (the same offsets).
fn blank_test_items(raw: &str, clean: &str) -> (String, Vec<String>) {
    let mut out = clean.as_bytes().to_vec();
    let mut test_files = Vec::new();
    let mut from = 0;
    while let Some(p) = clean[from..].find("#[cfg(") {
        let start = from + p;
        let attr_end = clean[start..]
            .find(")]")
            .map_or(clean.len(), |e| start + e + 2);
        if !is_test_cfg(&raw[start..attr_end]) {
            from = attr_end;
            continue;
        }
        let end = item_end(clean.as_bytes(), attr_end);
        let item = &clean[start..end];
        if let Some(path) = raw[start..end].split("#[path = \"").nth(1) {
            test_files.push(path.split('"').next().unwrap_or_default().to_owned());
        } else if let Some(name) = item.trim_end_matches(';').split_whitespace().last()
            && item.ends_with(';')
            && item.split_whitespace().any(|w| w == "mod")
        {
            test_files.push(name.to_owned());
        }
        for c in &mut out[start..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    (String::from_utf8(out).expect("ASCII blanks"), test_files)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(&'static str),
}

/// Tokens with their line numbers; what paths do not need is dropped.
fn tokens(clean: &str) -> Vec<(Tok, usize)> {
    let b = clean.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_alphabetic()
            || c == b'_'
            || (c == b'$' && b[i + 1..].starts_with(b"crate"))
        {
            let start = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(clean[start..i].to_owned()), line));
        } else if b[i..].starts_with(b"::") {
            out.push((Tok::Punct("::"), line));
            i += 2;
        } else {
            let p = match c {
                b'{' => "{",
                b'}' => "}",
                b',' => ",",
                b';' => ";",
                b'*' => "*",
                _ => ".",
            };
            if !c.is_ascii_whitespace() {
                out.push((Tok::Punct(p), line));
            }
            i += 1;
        }
    }
    out
}

/// One path of a `use` tree: its segments, the name it binds (`None` for
/// `*` and `_`), and its line.
type UsePath = (Vec<String>, Option<String>, usize);

/// Parses a `use` tree from `toks[*i..]` with `prefix`, up to `,`/`}`/`;`.
fn use_tree(toks: &[(Tok, usize)], i: &mut usize, prefix: &[String], out: &mut Vec<UsePath>) {
    let mut path = prefix.to_vec();
    let mut line = toks.get(*i).map_or(0, |t| t.1);
    loop {
        match toks.get(*i).map(|t| &t.0) {
            Some(Tok::Punct("::")) => *i += 1,
            Some(Tok::Punct("{")) => {
                *i += 1;
                while !matches!(toks.get(*i).map(|t| &t.0), None | Some(Tok::Punct("}"))) {
                    use_tree(toks, i, &path, out);
                    if toks.get(*i).map(|t| &t.0) == Some(&Tok::Punct(",")) {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            Some(Tok::Punct("*")) => {
                *i += 1;
                out.push((path, None, line));
                return;
            }
            Some(Tok::Ident(word)) if word == "as" => {
                *i += 1;
                let alias = match toks.get(*i).map(|t| &t.0) {
                    Some(Tok::Ident(a)) if a != "_" => Some(a.clone()),
                    _ => None,
                };
                *i += 1;
                out.push((path, alias, line));
                return;
            }
            Some(Tok::Ident(word)) => {
                line = toks[*i].1;
                if word != "self" || path.is_empty() {
                    path.push(word.clone());
                }
                *i += 1;
            }
            _ => {
                let name = path.last().cloned();
                out.push((path, name, line));
                return;
            }
        }
    }
}

/// What one file says: its `use` paths and the paths in its code, by the
/// module (the file's, or an inline `mod x { … }` in it) they are in.
#[derive(Default)]
struct FileUses {
    uses: Vec<(Module, UsePath)>,
    code: Vec<(Module, Vec<String>, usize)>,
    inline: Vec<Module>,
}

fn read_file(module: &Module, clean: &str) -> FileUses {
    let toks = tokens(clean);
    let mut found = FileUses::default();
    // Inline modules: (path, brace depth that closes them).
    let mut stack: Vec<(Module, usize)> = vec![(module.clone(), 0)];
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let current = stack.last().expect("the file's module").0.clone();
        match &toks[i].0 {
            Tok::Punct("{") => depth += 1,
            Tok::Punct("}") => {
                depth -= 1;
                if stack.len() > 1 && stack.last().is_some_and(|s| s.1 == depth) {
                    stack.pop();
                }
            }
            Tok::Ident(word) if word == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct("{"), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    let mut inner = current.clone();
                    inner.push(name.clone());
                    found.inline.push(inner.clone());
                    stack.push((inner, depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(word) if word == "use" => {
                i += 1;
                let mut paths = Vec::new();
                use_tree(&toks, &mut i, &[], &mut paths);
                found
                    .uses
                    .extend(paths.into_iter().map(|p| (current.clone(), p)));
                continue;
            }
            Tok::Ident(word)
                if matches!(word.as_str(), "crate" | "$crate" | "super" | "self")
                    && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Punct("::"))
                    && (i == 0 || toks[i - 1].0 != Tok::Punct("::")) =>
            {
                let line = toks[i].1;
                let mut path = vec![word.clone()];
                i += 1;
                while toks.get(i).map(|t| &t.0) == Some(&Tok::Punct("::")) {
                    match toks.get(i + 1).map(|t| &t.0) {
                        Some(Tok::Ident(seg)) => path.push(seg.clone()),
                        _ => break,
                    }
                    i += 2;
                }
                found.code.push((current, path, line));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The module graph of one crate, from `(path relative to src/, text)`
/// of its source files; `display` names a file in the edges' `at`.
pub fn edges(sources: &[(String, String)], display: impl Fn(&str) -> String) -> Vec<Edge> {
    let mut read = Vec::new();
    let mut test_files = BTreeSet::new();
    for (rel, raw) in sources {
        let Some(module) = module_of(rel) else {
            continue;
        };
        let clean = blank_comments_and_strings(raw);
        let (clean, tests) = blank_test_items(raw, &clean);
        // `mod x;` in `a/b.rs` or `a/b/mod.rs` is `a/b/x.rs`; `#[path]` is
        // relative to the file's directory (non-`mod.rs`: hub.rs's `hub_tests.rs`).
        let dir = rel.rsplit_once('/').map_or("", |d| d.0);
        for t in tests {
            if t.ends_with(".rs") {
                test_files.insert(if dir.is_empty() {
                    t
                } else {
                    format!("{dir}/{t}")
                });
            } else {
                let mut m = module.clone();
                m.push(t);
                test_files.insert(m.join("/"));
            }
        }
        read.push((rel.clone(), module, clean));
    }
    let is_test = |rel: &str, module: &Module| {
        test_files.contains(rel)
            || (1..=module.len()).any(|n| test_files.contains(&module[..n].join("/")))
    };
    let read: Vec<_> = read
        .into_iter()
        .filter(|(rel, m, _)| !is_test(rel, m))
        .collect();
    let files: Vec<(String, FileUses)> = read
        .iter()
        .map(|(rel, m, clean)| (rel.clone(), read_file(m, clean)))
        .collect();
    let mut modules: BTreeSet<Module> = read.iter().map(|(_, m, _)| m.clone()).collect();
    modules.extend(files.iter().flat_map(|(_, f)| f.inline.iter().cloned()));
    // A `use` path made absolute: its start (`crate`, `super`, `self`, a
    // child module) resolved against the module it is in.
    let absolute = |at: &Module, path: &[String]| -> Option<Vec<String>> {
        let first = path.first()?;
        let mut base: Vec<String> = at.clone();
        let mut rest = path;
        match first.as_str() {
            "crate" | "$crate" => {
                base.clear();
                rest = &path[1..];
            }
            "self" => rest = &path[1..],
            "super" => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            child => {
                let mut m = at.clone();
                m.push(child.to_owned());
                if !modules.contains(&m) {
                    return None; // another crate
                }
            }
        }
        base.extend(rest.iter().cloned());
        Some(base)
    };
    let mut bindings: BTreeMap<(Module, String), Vec<String>> = BTreeMap::new();
    for (_, f) in &files {
        for (at, (path, name, _)) in &f.uses {
            if let (Some(name), Some(abs)) = (name, absolute(at, path)) {
                bindings.entry((at.clone(), name.clone())).or_insert(abs);
            }
        }
    }
    // The module an absolute path ends in, through re-exports.
    let resolve = |path: &[String]| -> Module {
        let (mut module, mut rest, mut hops): (Module, Vec<String>, usize) =
            (Vec::new(), path.to_vec(), 0);
        while let Some(seg) = rest.first().cloned() {
            let mut child = module.clone();
            child.push(seg.clone());
            if modules.contains(&child) {
                module = child;
                rest.remove(0);
            } else if let Some(target) = bindings.get(&(module.clone(), seg)).filter(|_| hops < 16)
            {
                hops += 1;
                let mut next = target.clone();
                next.extend(rest.drain(1..));
                (module, rest) = (Vec::new(), next);
            } else {
                break;
            }
        }
        module
    };
    let mut out = Vec::new();
    for (rel, f) in &files {
        let written = f
            .uses
            .iter()
            .map(|(at, (p, _, l))| (at, p, *l))
            .chain(f.code.iter().map(|(at, p, l)| (at, p, *l)));
        for (at, path, line) in written {
            let Some(abs) = absolute(at, path) else {
                continue;
            };
            // The module the path names (`crate::protocol::X` names
            // `protocol`), and the one that defines X, if another.
            let named: Module = abs
                .iter()
                .scan(Vec::new(), |m: &mut Module, seg| {
                    m.push(seg.clone());
                    modules.contains(m).then(|| m.clone())
                })
                .last()
                .unwrap_or_default();
            let defines = resolve(&abs);
            for to in std::iter::once(named.clone()).chain((defines != named).then_some(defines)) {
                out.push(Edge {
                    from: at.clone(),
                    to,
                    at: format!("{}:{line}", display(rel)),
                    path: path.join("::"),
                });
            }
        }
    }
    out
}
