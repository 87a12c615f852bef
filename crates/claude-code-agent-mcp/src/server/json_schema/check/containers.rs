//! The checks of arrays and objects, and of what no other keyword
//! evaluated (`unevaluatedItems`, `unevaluatedProperties`).

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::words::{JsonStr, Unexpected, plural, plural_y};
use super::{Evaluated, Scope, Sink};
use crate::server::json_schema::compile::{Compiled, Node};
use crate::server::json_schema::value::{json_eq, push_token};

impl Compiled {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn array(
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
    pub(super) fn object(
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
    pub(super) fn unevaluated(
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
