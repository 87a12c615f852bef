//! Checking a value against compiled nodes: a yes/no pass that stops at the
//! first failure (the common case: a valid value), and a pass that words
//! every failure the way `jsonschema` does, each at its JSON pointer.

use std::fmt;

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use super::compile::{Compiled, DynamicRef, Idx, JsonType, Node};
use super::value::{cmp_numbers, is_integer, is_multiple_of, json_eq, push_token};

/// How deep `$ref`s and subschemas may nest for one value: beyond it the
/// schema loops without consuming the value (`{"$ref": "#"}`).
const MAX_DEPTH: u32 = 512;

/// Where failures go: nowhere (the yes/no pass) or worded, the first
/// `limit` of them kept.
pub(super) struct Sink {
    collect: bool,
    limit: usize,
    /// How many failures were found.
    pub count: usize,
    /// The first `limit`, as `- at <pointer>: <message>`.
    pub listed: Vec<String>,
}

impl Sink {
    pub(super) fn quiet() -> Self {
        Self {
            collect: false,
            limit: 0,
            count: 0,
            listed: Vec::new(),
        }
    }

    pub(super) fn collecting(limit: usize) -> Self {
        Self {
            collect: true,
            ..Self::quiet()
        }
        .with_limit(limit)
    }

    fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    fn report(&mut self, path: &str, message: fmt::Arguments<'_>) {
        self.count += 1;
        if self.listed.len() < self.limit {
            let path = if path.is_empty() { "(root)" } else { path };
            self.listed.push(format!("- at {path}: {message}"));
        }
    }
}

/// What the in-place subschemas of a node evaluated, for `unevaluated*`.
#[derive(Default)]
struct Evaluated {
    properties: Vec<String>,
    /// Items `0..items_upto` were evaluated (`prefixItems`).
    items_upto: usize,
    /// Every item was (`items`).
    items_all: bool,
    /// Items `contains` matched.
    items: Vec<usize>,
}

impl Evaluated {
    fn merge(&mut self, other: Self) {
        self.properties.extend(other.properties);
        self.items_upto = self.items_upto.max(other.items_upto);
        self.items_all |= other.items_all;
        self.items.extend(other.items);
    }

    fn item(&self, i: usize) -> bool {
        self.items_all || i < self.items_upto || self.items.contains(&i)
    }
}

/// Records a failure; in the yes/no pass, ends the check at once.
macro_rules! fail {
    ($sink:expr, $path:expr, $ok:ident, $($message:tt)*) => {{
        if !$sink.collect {
            return false;
        }
        $sink.report($path, format_args!($($message)*));
        $ok = false;
    }};
}

/// Runs a sub-check; in the yes/no pass, a failure ends the check at once.
macro_rules! sub {
    ($sink:expr, $ok:ident, $check:expr) => {{
        if !$check {
            if !$sink.collect {
                return false;
            }
            $ok = false;
        }
    }};
}

// After the macros, which they use.
mod words;

use words::{EnumValues, JsonStr, TypeNames, Unexpected, plural, plural_y};

impl Compiled {
    /// Whether `value` is valid.
    pub(super) fn is_valid(&self, value: &Value) -> bool {
        let scope = self.root_scope();
        self.check(
            0,
            value,
            &mut String::new(),
            &mut Sink::quiet(),
            None,
            &scope,
        )
    }

    /// Every failure of `value`, the first `limit` worded.
    pub(super) fn errors(&self, value: &Value, limit: usize) -> Sink {
        let mut sink = Sink::collecting(limit);
        let scope = self.root_scope();
        if !self.check(0, value, &mut String::new(), &mut sink, None, &scope) && sink.count == 0 {
            sink.report("", format_args!("the value does not match the schema"));
        }
        sink
    }

    fn root_scope(&self) -> Scope<'static> {
        Scope {
            depth: 0,
            resource: self.node(0).resource,
            outer: None,
        }
    }

    fn node(&self, idx: Idx) -> &Node {
        &self.nodes[idx as usize]
    }

    /// The check of one node, from `outer`. `seen` (when the caller tracks
    /// evaluation) receives what this node evaluated, if it is valid.
    fn check(
        &self,
        idx: Idx,
        v: &Value,
        path: &mut String,
        sink: &mut Sink,
        seen: Option<&mut Evaluated>,
        outer: &Scope<'_>,
    ) -> bool {
        let n = self.node(idx);
        let mut ok = true;
        if outer.depth > MAX_DEPTH {
            fail!(
                sink,
                path,
                ok,
                "the schema nests deeper than {MAX_DEPTH} levels here"
            );
            return ok;
        }
        if n.never {
            fail!(sink, path, ok, "False schema does not allow {v}");
            return ok;
        }
        let scope = &outer.enter(n.resource);
        let mut local = (seen.is_some() || n.tracks_evaluation()).then(Evaluated::default);
        if let Some(r) = n.reference {
            sub!(
                sink,
                ok,
                self.check(r, v, path, sink, local.as_mut(), scope)
            );
        }
        if let Some(dynamic) = &n.dynamic_reference {
            let r = dynamic_target(dynamic, scope);
            sub!(
                sink,
                ok,
                self.check(r, v, path, sink, local.as_mut(), scope)
            );
        }
        if let Some(t) = n.types
            && !has_type(t, v)
        {
            fail!(sink, path, ok, "{v} is not of {}", TypeNames(t));
        }
        if let Some(values) = &n.enum_values
            && !values.iter().any(|e| json_eq(e, v))
        {
            fail!(sink, path, ok, "{v} is not one of {}", EnumValues(values));
        }
        if let Some(c) = &n.const_value
            && !json_eq(c, v)
        {
            fail!(sink, path, ok, "{c} was expected");
        }
        match v {
            Value::Number(x) => ok &= self.number(n, x, v, path, sink),
            Value::String(s) => ok &= self.string(n, s, v, path, sink),
            Value::Array(items) => {
                ok &= self.array(n, items, v, path, sink, local.as_mut(), scope);
            }
            Value::Object(map) => ok &= self.object(n, map, v, path, sink, local.as_mut(), scope),
            _ => {}
        }
        if !ok && !sink.collect {
            return false;
        }
        ok &= self.in_place(n, v, path, sink, &mut local, scope);
        if !ok && !sink.collect {
            return false;
        }
        if let Some(local) = &mut local {
            ok &= self.unevaluated(n, v, path, sink, local, scope);
        }
        if ok && let (Some(seen), Some(local)) = (seen, local) {
            seen.merge(local);
        }
        ok
    }

    fn number(&self, n: &Node, x: &Number, v: &Value, path: &str, sink: &mut Sink) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let mut ok = true;
        fn cmp<'b>(x: &Number, b: &'b Option<Number>) -> Option<(std::cmp::Ordering, &'b Number)> {
            b.as_ref().and_then(|b| Some((cmp_numbers(x, b)?, b)))
        }
        if let Some((Less, b)) = cmp(x, &n.minimum) {
            fail!(sink, path, ok, "{v} is less than the minimum of {b}");
        }
        if let Some((Greater, b)) = cmp(x, &n.maximum) {
            fail!(sink, path, ok, "{v} is greater than the maximum of {b}");
        }
        if let Some((Less | Equal, b)) = cmp(x, &n.exclusive_minimum) {
            fail!(
                sink,
                path,
                ok,
                "{v} is less than or equal to the minimum of {b}"
            );
        }
        if let Some((Greater | Equal, b)) = cmp(x, &n.exclusive_maximum) {
            fail!(
                sink,
                path,
                ok,
                "{v} is greater than or equal to the maximum of {b}"
            );
        }
        if let Some(m) = &n.multiple_of
            && !is_multiple_of(x, m)
        {
            fail!(sink, path, ok, "{v} is not a multiple of {m}");
        }
        ok
    }

    fn string(&self, n: &Node, s: &str, v: &Value, path: &str, sink: &mut Sink) -> bool {
        let mut ok = true;
        if n.min_length.is_some() || n.max_length.is_some() {
            let len = s.chars().count() as u64;
            if let Some(max) = n.max_length
                && len > max
            {
                fail!(
                    sink,
                    path,
                    ok,
                    "{v} is longer than {max} character{}",
                    plural(max)
                );
            }
            if let Some(min) = n.min_length
                && len < min
            {
                fail!(
                    sink,
                    path,
                    ok,
                    "{v} is shorter than {min} character{}",
                    plural(min)
                );
            }
        }
        if let Some(p) = &n.pattern
            && !p.regex.is_match(s)
        {
            fail!(sink, path, ok, "{v} does not match {}", JsonStr(&p.source));
        }
        ok
    }

    /// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`.
    fn in_place(
        &self,
        n: &Node,
        v: &Value,
        path: &mut String,
        sink: &mut Sink,
        seen: &mut Option<Evaluated>,
        scope: &Scope<'_>,
    ) -> bool {
        let mut ok = true;
        for &s in &n.all_of {
            sub!(sink, ok, self.check(s, v, path, sink, seen.as_mut(), scope));
        }
        if !n.any_of.is_empty() {
            let mut any = false;
            for &s in &n.any_of {
                any |= self.branch(s, v, seen, scope);
                if any && seen.is_none() {
                    break;
                }
            }
            if !any {
                fail!(
                    sink,
                    path,
                    ok,
                    "{v} is not valid under any of the schemas listed in the 'anyOf' keyword"
                );
            }
        }
        if !n.one_of.is_empty() {
            let mut valid = 0;
            let mut candidate = seen.is_some().then(Evaluated::default);
            for &s in &n.one_of {
                if self.branch(s, v, &mut candidate, scope) {
                    valid += 1;
                    if valid > 1 {
                        break;
                    }
                }
            }
            match valid {
                0 => fail!(
                    sink,
                    path,
                    ok,
                    "{v} is not valid under any of the schemas listed in the 'oneOf' keyword"
                ),
                1 => {
                    if let (Some(seen), Some(c)) = (seen.as_mut(), candidate) {
                        seen.merge(c);
                    }
                }
                _ => fail!(
                    sink,
                    path,
                    ok,
                    "{v} is valid under more than one of the schemas listed in the 'oneOf' keyword"
                ),
            }
        }
        if let Some((s, schema)) = &n.not
            && self.branch(*s, v, &mut None, scope)
        {
            fail!(sink, path, ok, "{schema} is not allowed for {v}");
        }
        if let Some((condition, then, otherwise)) = n.if_then_else {
            let next = if self.branch(condition, v, seen, scope) {
                then
            } else {
                otherwise
            };
            if let Some(s) = next {
                sub!(sink, ok, self.check(s, v, path, sink, seen.as_mut(), scope));
            }
        }
        ok
    }

    /// A yes/no check of an applicator's branch, whose evaluation counts
    /// only if it is valid.
    fn branch(&self, s: Idx, v: &Value, seen: &mut Option<Evaluated>, scope: &Scope<'_>) -> bool {
        let mut own = seen.is_some().then(Evaluated::default);
        let valid = self.check(
            s,
            v,
            &mut String::new(),
            &mut Sink::quiet(),
            own.as_mut(),
            scope,
        );
        if valid && let (Some(seen), Some(own)) = (seen.as_mut(), own) {
            seen.merge(own);
        }
        valid
    }
}

/// Where a check is: how deep `$ref`s and subschemas nest, and the dynamic
/// scope (the schema resources the check went through) in which a
/// `$dynamicRef` resolves.
pub(super) struct Scope<'a> {
    depth: u32,
    /// The resource of the schema being checked.
    resource: u32,
    /// Where the check entered that resource: the next resource out.
    outer: Option<&'a Scope<'a>>,
}

impl Scope<'_> {
    /// The scope of a subschema of `resource`, one level deeper.
    fn enter(&self, resource: u32) -> Scope<'_> {
        Scope {
            depth: self.depth + 1,
            resource,
            outer: if resource == self.resource {
                self.outer
            } else {
                Some(self)
            },
        }
    }
}

/// Where a `$dynamicRef` goes from `scope`: the dynamic anchor of the
/// outermost resource that has one, else its static target.
fn dynamic_target(dynamic: &DynamicRef, scope: &Scope<'_>) -> Idx {
    let mut target = dynamic.target;
    if dynamic.anchors.is_empty() {
        return target;
    }
    let mut at = Some(scope);
    while let Some(s) = at {
        if let Some(&(_, idx)) = dynamic.anchors.iter().find(|(r, _)| *r == s.resource) {
            target = idx;
        }
        at = s.outer;
    }
    target
}

fn has_type(types: u8, value: &Value) -> bool {
    let is = |t: JsonType| types & t as u8 != 0;
    match value {
        Value::Null => is(JsonType::Null),
        Value::Bool(_) => is(JsonType::Boolean),
        Value::Number(n) => is(JsonType::Number) || (is(JsonType::Integer) && is_integer(n)),
        Value::String(_) => is(JsonType::String),
        Value::Array(_) => is(JsonType::Array),
        Value::Object(_) => is(JsonType::Object),
    }
}

// ---------------------------------------------------------------------------
// The checks of arrays and objects, and of what no other keyword evaluated (`unevaluatedItems`, `unevaluatedProperties`).

impl Compiled {
    #[allow(clippy::too_many_arguments)]
    fn array(
        &self,
        n: &Node,
        items: &[Value],
        v: &Value,
        path: &mut String,
        sink: &mut Sink,
        mut seen: Option<&mut Evaluated>,
        scope: &Scope<'_>,
    ) -> bool {
        let mut ok = true;
        let len = items.len() as u64;
        if let Some(max) = n.max_items
            && len > max
        {
            fail!(
                sink,
                path,
                ok,
                "{v} has more than {max} item{}",
                plural(max)
            );
        }
        if let Some(min) = n.min_items
            && len < min
        {
            fail!(
                sink,
                path,
                ok,
                "{v} has less than {min} item{}",
                plural(min)
            );
        }
        if n.unique_items
            && items
                .iter()
                .enumerate()
                .any(|(i, a)| items[i + 1..].iter().any(|b| json_eq(a, b)))
        {
            fail!(sink, path, ok, "{v} has non-unique elements");
        }
        for (i, item) in items.iter().enumerate() {
            let schema = match n.prefix_items.get(i) {
                Some(&s) => s,
                None => match n.items {
                    Some(s) => s,
                    None => break,
                },
            };
            let len = path.len();
            if sink.collect {
                let _ = write!(path, "/{i}");
            }
            let valid = self.check(schema, item, path, sink, None, scope);
            path.truncate(len);
            sub!(sink, ok, valid);
        }
        if let Some(seen) = seen.as_deref_mut() {
            seen.items_upto = seen.items_upto.max(n.prefix_items.len().min(items.len()));
            seen.items_all |= n.items.is_some();
        }
        if let Some(contains) = n.contains {
            let mut matched = 0u64;
            for (i, item) in items.iter().enumerate() {
                if self.check(contains, item, path, &mut Sink::quiet(), None, scope) {
                    matched += 1;
                    if let Some(seen) = seen.as_deref_mut() {
                        seen.items.push(i);
                    }
                }
            }
            let min = n.min_contains.unwrap_or(1);
            if matched < min {
                if min == 1 {
                    fail!(
                        sink,
                        path,
                        ok,
                        "None of {v} are valid under the given schema"
                    );
                } else {
                    fail!(
                        sink,
                        path,
                        ok,
                        "{v} has fewer than {min} items valid under the given schema"
                    );
                }
            }
            if let Some(max) = n.max_contains
                && matched > max
            {
                fail!(
                    sink,
                    path,
                    ok,
                    "{v} has more than {max} item{} valid under the given schema",
                    plural(max)
                );
            }
        }
        ok
    }

    #[allow(clippy::too_many_arguments)]
    fn object(
        &self,
        n: &Node,
        map: &Map<String, Value>,
        v: &Value,
        path: &mut String,
        sink: &mut Sink,
        mut seen: Option<&mut Evaluated>,
        scope: &Scope<'_>,
    ) -> bool {
        let mut ok = true;
        // A small object is scanned: cheaper than hashing each name.
        let has = |name: &str| match map.len() {
            0..=8 => map.keys().any(|k| k == name),
            _ => map.contains_key(name),
        };
        for name in &n.required {
            if !has(name) {
                fail!(sink, path, ok, "{} is a required property", JsonStr(name));
            }
        }
        for (name, needs) in &n.dependent_required {
            if has(name) {
                for need in needs {
                    if !has(need) {
                        fail!(sink, path, ok, "{} is a required property", JsonStr(need));
                    }
                }
            }
        }
        let len = map.len() as u64;
        if let Some(max) = n.max_properties
            && len > max
        {
            fail!(
                sink,
                path,
                ok,
                "{v} has more than {max} propert{}",
                plural_y(max)
            );
        }
        if let Some(min) = n.min_properties
            && len < min
        {
            fail!(
                sink,
                path,
                ok,
                "{v} has less than {min} propert{}",
                plural_y(min)
            );
        }
        let additional_false = n.additional_properties.filter(|&a| self.node(a).never);
        let mut unexpected: Vec<&str> = Vec::new();
        for (key, value) in map {
            let mut schemas = n
                .properties
                .iter()
                .filter(|(name, _)| name == key)
                .map(|(_, s)| *s)
                .chain(
                    n.pattern_properties
                        .iter()
                        .filter(|(p, _)| p.regex.is_match(key))
                        .map(|(_, s)| *s),
                )
                .peekable();
            let matched = schemas.peek().is_some();
            let extra = if matched {
                None
            } else {
                n.additional_properties
            };
            if extra.is_some() && extra == additional_false {
                if !sink.collect {
                    return false;
                }
                unexpected.push(key);
                continue;
            }
            let len = path.len();
            if sink.collect {
                push_token(path, key);
            }
            for schema in schemas.chain(extra) {
                let valid = self.check(schema, value, path, sink, None, scope);
                if !valid && !sink.collect {
                    return false;
                }
                ok &= valid;
            }
            path.truncate(len);
            if (matched || extra.is_some())
                && let Some(seen) = seen.as_deref_mut()
            {
                seen.properties.push(key.clone());
            }
        }
        if !unexpected.is_empty() {
            fail!(
                sink,
                path,
                ok,
                "Additional properties are not allowed ({})",
                Unexpected(&unexpected)
            );
        }
        if let Some(names) = n.property_names {
            for key in map.keys() {
                let name = Value::String(key.clone());
                sub!(sink, ok, self.check(names, &name, path, sink, None, scope));
            }
        }
        for (name, schema) in &n.dependent_schemas {
            if has(name) {
                sub!(
                    sink,
                    ok,
                    self.check(*schema, v, path, sink, seen.as_deref_mut(), scope)
                );
            }
        }
        ok
    }

    /// `unevaluatedProperties` and `unevaluatedItems`, after everything else.
    fn unevaluated(
        &self,
        n: &Node,
        v: &Value,
        path: &mut String,
        sink: &mut Sink,
        seen: &mut Evaluated,
        scope: &Scope<'_>,
    ) -> bool {
        let mut ok = true;
        let mut unexpected: Vec<String> = Vec::new();
        match (v, n.unevaluated_properties, n.unevaluated_items) {
            (Value::Object(map), Some(schema), _) => {
                for (key, value) in map {
                    if seen.properties.iter().any(|p| p == key) {
                        continue;
                    }
                    if self.node(schema).never {
                        if !sink.collect {
                            return false;
                        }
                        ok = false;
                        unexpected.push(key.clone());
                        continue;
                    }
                    let len = path.len();
                    if sink.collect {
                        push_token(path, key);
                    }
                    let valid = self.check(schema, value, path, sink, None, scope);
                    path.truncate(len);
                    sub!(sink, ok, valid);
                    seen.properties.push(key.clone());
                }
                if !unexpected.is_empty() {
                    let names: Vec<&str> = unexpected.iter().map(String::as_str).collect();
                    sink.report(
                        path,
                        format_args!(
                            "Unevaluated properties are not allowed ({})",
                            Unexpected(&names)
                        ),
                    );
                }
            }
            (Value::Array(items), _, Some(schema)) => {
                for (i, item) in items.iter().enumerate() {
                    if seen.item(i) {
                        continue;
                    }
                    if self.node(schema).never {
                        if !sink.collect {
                            return false;
                        }
                        ok = false;
                        unexpected.push(item.to_string());
                        continue;
                    }
                    let len = path.len();
                    if sink.collect {
                        let _ = write!(path, "/{i}");
                    }
                    let valid = self.check(schema, item, path, sink, None, scope);
                    path.truncate(len);
                    sub!(sink, ok, valid);
                }
                seen.items_all = true;
                if !unexpected.is_empty() {
                    let names: Vec<&str> = unexpected.iter().map(String::as_str).collect();
                    sink.report(
                        path,
                        format_args!("Unevaluated items are not allowed ({})", Unexpected(&names)),
                    );
                }
            }
            _ => {}
        }
        ok
    }
}
