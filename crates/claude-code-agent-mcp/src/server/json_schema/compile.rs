//! A schema compiled into nodes: each keyword parsed once, each `$ref`
//! resolved to the node it names (so recursive schemas are cycles of
//! indices), anything this checker does not do reported as unsupported.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::value::{normalize, percent_decode, push_token, resolve_uri};
use super::{Draft, Problem};

/// An index into [`Compiled::nodes`].
pub(super) type Idx = u32;

/// A `pattern`, compiled.
pub(super) struct Pattern {
    pub regex: regex_lite::Regex,
    pub source: String,
}

/// One schema (object or boolean) with its keywords parsed.
#[derive(Default)]
pub(super) struct Node {
    /// The `false` schema.
    pub never: bool,
    /// `type`, as a bit set of [`JsonType`]s.
    pub types: Option<u8>,
    pub enum_values: Option<Vec<Value>>,
    pub const_value: Option<Value>,
    pub minimum: Option<Number>,
    pub maximum: Option<Number>,
    pub exclusive_minimum: Option<Number>,
    pub exclusive_maximum: Option<Number>,
    pub multiple_of: Option<Number>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<Box<Pattern>>,
    /// `prefixItems` (or draft 7's array form of `items`).
    pub prefix_items: Vec<Idx>,
    /// The items after the prefix (`items`, or `additionalItems` after an array).
    pub items: Option<Idx>,
    pub contains: Option<Idx>,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub unevaluated_items: Option<Idx>,
    pub properties: Vec<(String, Idx)>,
    pub pattern_properties: Vec<(Pattern, Idx)>,
    pub additional_properties: Option<Idx>,
    pub property_names: Option<Idx>,
    pub required: Vec<String>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub dependent_required: Vec<(String, Vec<String>)>,
    pub dependent_schemas: Vec<(String, Idx)>,
    pub unevaluated_properties: Option<Idx>,
    pub all_of: Vec<Idx>,
    pub any_of: Vec<Idx>,
    pub one_of: Vec<Idx>,
    /// `not`, and the schema as written (for the message).
    pub not: Option<(Idx, Value)>,
    pub if_then_else: Option<(Idx, Option<Idx>, Option<Idx>)>,
    pub reference: Option<Idx>,
    pub dynamic_reference: Option<Box<DynamicRef>>,
    /// The schema resource (an index into the document's resources: the
    /// root, or a subschema with an `$id`) this schema belongs to.
    pub resource: u32,
}

/// A `$dynamicRef`: where it points in the schema, and, when that target
/// has the `$dynamicAnchor` the reference names, the schemas with that
/// dynamic anchor by resource. The first resource of the dynamic scope
/// (the resources the check went through to get here) that has one is where
/// the reference goes; with none, it goes to `target`.
pub(super) struct DynamicRef {
    pub target: Idx,
    pub anchors: Vec<(u32, Idx)>,
}

impl Node {
    /// Whether this node needs to know which properties or items its
    /// in-place subschemas evaluated (`unevaluated*`).
    pub(super) fn tracks_evaluation(&self) -> bool {
        self.unevaluated_properties.is_some() || self.unevaluated_items.is_some()
    }
}

/// The JSON types, as bits of [`Node::types`].
#[derive(Clone, Copy)]
pub(super) enum JsonType {
    Null = 1,
    Boolean = 2,
    Integer = 4,
    Number = 8,
    String = 16,
    Array = 32,
    Object = 64,
}

impl JsonType {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "null" => Self::Null,
            "boolean" => Self::Boolean,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "string" => Self::String,
            "array" => Self::Array,
            "object" => Self::Object,
            _ => return None,
        })
    }
}

/// The nodes of one schema; the root is node 0.
pub(super) struct Compiled {
    pub nodes: Vec<Node>,
}

/// Where `$ref`s may point: the resources (`$id`) and anchors of the
/// document, and the base URI of every subschema.
struct Compiler<'a> {
    root: &'a Value,
    draft: Draft,
    /// Keywords whose meaning this checker leaves to `jsonschema` when that
    /// is compiled in (format assertions of draft 6 and 7).
    defer_assertions: bool,
    nodes: Vec<Node>,
    by_pointer: HashMap<String, Idx>,
    /// The schema resources by URI.
    resources: HashMap<String, Resource>,
    /// Anchors (`$anchor`, `$dynamicAnchor`, draft 7's `$id: "#name"`) by
    /// URI (`resource#name`), to the pointer of their schema.
    anchors: HashMap<String, String>,
    /// The `$dynamicAnchor`s: resource URI, name, pointer.
    dynamic_anchors: Vec<(String, String, String)>,
    bases: HashMap<String, String>,
}

/// A schema resource: the root, or a subschema with an `$id`.
struct Resource {
    pointer: String,
    /// Its index, as [`Node::resource`] names it.
    id: u32,
}

/// The base URI of a schema without `$id` (as `jsonschema` names it).
const DEFAULT_BASE: &str = "json-schema:///";

/// The keywords whose values are schemas, objects of schemas or arrays of
/// schemas: where `$id` and anchors are looked for.
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "items",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "$defs",
    "definitions",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
];
const SCHEMA_LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

pub(super) fn compile(
    schema: &Value,
    draft: Draft,
    defer_assertions: bool,
) -> Result<Compiled, Problem> {
    let mut c = Compiler {
        root: schema,
        draft,
        defer_assertions,
        nodes: Vec::new(),
        by_pointer: HashMap::new(),
        resources: HashMap::new(),
        anchors: HashMap::new(),
        dynamic_anchors: Vec::new(),
        bases: HashMap::new(),
    };
    c.add_resource(DEFAULT_BASE.to_owned(), String::new());
    c.scan(schema, String::new(), DEFAULT_BASE.to_owned());
    c.at_pointer("")?;
    Ok(Compiled { nodes: c.nodes })
}

fn invalid(message: impl Into<String>) -> Problem {
    Problem::invalid(message)
}

/// `pointer` with `tokens` appended.
fn pointer_to(pointer: &str, tokens: &[&str]) -> String {
    let mut at = pointer.to_owned();
    for token in tokens {
        push_token(&mut at, token);
    }
    at
}

/// What a node's keywords leave to be settled once all are read.
#[derive(Default)]
struct Pending {
    /// `items` was an array (before 2020-12): `additionalItems` applies.
    items_array: bool,
    additional_items: Option<Idx>,
    /// Where `format` or `content*` is, if either is.
    format: Option<String>,
}

impl Compiler<'_> {
    fn add_resource(&mut self, uri: String, pointer: String) {
        let next = u32::try_from(self.resources.len()).unwrap_or(u32::MAX);
        let resource = self.resources.entry(uri).or_insert(Resource {
            pointer: String::new(),
            id: next,
        });
        resource.pointer = pointer;
    }

    /// Records the resources, anchors and base URIs under `value`.
    fn scan(&mut self, value: &Value, pointer: String, mut base: String) {
        let Value::Object(map) = value else { return };
        if let Some(Value::String(id)) = map.get("$id") {
            if self.draft <= Draft::D7 && id.starts_with('#') {
                self.anchors.insert(format!("{base}{id}"), pointer.clone());
            } else {
                base = normalize(&resolve_uri(&base, id)).to_owned();
                self.add_resource(base.clone(), pointer.clone());
            }
        }
        if self.draft >= Draft::D2019 {
            for key in ["$anchor", "$dynamicAnchor"] {
                if let Some(Value::String(anchor)) = map.get(key) {
                    self.anchors
                        .insert(format!("{base}#{anchor}"), pointer.clone());
                }
            }
        }
        if self.draft >= Draft::D2020
            && let Some(Value::String(anchor)) = map.get("$dynamicAnchor")
        {
            self.dynamic_anchors
                .push((base.clone(), anchor.clone(), pointer.clone()));
        }
        for (key, sub) in map {
            let mut at = pointer.clone();
            push_token(&mut at, key);
            let key = key.as_str();
            if SCHEMA_KEYWORDS.contains(&key) && !sub.is_array() {
                self.scan(sub, at, base.clone());
            } else if SCHEMA_MAP_KEYWORDS.contains(&key) {
                for (name, s) in sub.as_object().into_iter().flatten() {
                    let mut at = at.clone();
                    push_token(&mut at, name);
                    self.scan(s, at, base.clone());
                }
            } else if SCHEMA_LIST_KEYWORDS.contains(&key) {
                for (i, s) in sub.as_array().into_iter().flatten().enumerate() {
                    let mut at = at.clone();
                    push_token(&mut at, &i.to_string());
                    self.scan(s, at, base.clone());
                }
            }
        }
        self.bases.insert(pointer, base);
    }

    /// The base URI in force at `pointer`.
    fn base_at(&self, pointer: &str) -> String {
        let mut p = pointer;
        loop {
            if let Some(base) = self.bases.get(p) {
                return base.clone();
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return DEFAULT_BASE.to_owned(),
            }
        }
    }

    /// The resource (its URI) and the schema (its pointer from the
    /// document's root) that the `$ref` (or `$dynamicRef`) `reference`
    /// names.
    fn resolve(
        &self,
        keyword: &str,
        reference: &str,
        base: &str,
    ) -> Result<(String, String), Problem> {
        let uri = resolve_uri(base, reference);
        let (doc, fragment) = uri.split_once('#').unwrap_or((&uri, ""));
        let Some(resource) = self.resources.get(doc) else {
            return Err(Problem::unsupported(format!(
                "the {keyword} {reference:?} points to another document (the built-in \
                 checker reads only the schema itself)"
            )));
        };
        let fragment = percent_decode(fragment)
            .ok_or_else(|| invalid(format!("the {keyword} {reference:?} is not UTF-8")))?;
        let pointer = if fragment.is_empty() {
            resource.pointer.clone()
        } else if fragment.starts_with('/') {
            format!("{}{fragment}", resource.pointer)
        } else {
            self.anchors
                .get(&format!("{doc}#{fragment}"))
                .cloned()
                .ok_or_else(|| invalid(format!("the {keyword} {reference:?} names no anchor")))?
        };
        if self.root.pointer(&pointer).is_none() {
            return Err(invalid(format!(
                "the {keyword} {reference:?} points at nothing"
            )));
        }
        Ok((doc.to_owned(), pointer))
    }

    /// A `$dynamicRef`: the `$ref` it starts as, and the dynamic anchors it
    /// may go to instead if its target has the dynamic anchor it names.
    fn dynamic_ref(&mut self, reference: &str, pointer: &str) -> Result<DynamicRef, Problem> {
        let (doc, target) = self.resolve("$dynamicRef", reference, &self.base_at(pointer))?;
        let name = reference.split_once('#').map_or("", |(_, f)| f);
        let bookended = !name.is_empty()
            && !name.starts_with('/')
            && self
                .dynamic_anchors
                .iter()
                .any(|(r, n, _)| *r == doc && n == name);
        let mut anchors = Vec::new();
        if bookended {
            let found: Vec<(String, String)> = self
                .dynamic_anchors
                .iter()
                .filter(|(_, n, _)| n == name)
                .map(|(r, _, p)| (r.clone(), p.clone()))
                .collect();
            for (resource, at) in found {
                let id = self.resources.get(&resource).map_or(0, |r| r.id);
                anchors.push((id, self.at_pointer(&at)?));
            }
        }
        Ok(DynamicRef {
            target: self.at_pointer(&target)?,
            anchors,
        })
    }

    /// The node of the schema at `pointer`, compiled on first use.
    fn at_pointer(&mut self, pointer: &str) -> Result<Idx, Problem> {
        if let Some(&idx) = self.by_pointer.get(pointer) {
            return Ok(idx);
        }
        let root = self.root;
        let value = root
            .pointer(pointer)
            .ok_or_else(|| invalid("no schema here").at(|| pointer.to_owned()))?;
        let idx = Idx::try_from(self.nodes.len()).map_err(|_| invalid("too many subschemas"))?;
        self.nodes.push(Node::default());
        self.by_pointer.insert(pointer.to_owned(), idx);
        let resource = self
            .resources
            .get(&self.base_at(pointer))
            .map_or(0, |r| r.id);
        let node = match value {
            Value::Bool(true) => Node {
                resource,
                ..Node::default()
            },
            Value::Bool(false) => Node {
                never: true,
                resource,
                ..Node::default()
            },
            Value::Object(map) => Node {
                resource,
                ..self.node(map, pointer)?
            },
            other => {
                return Err(invalid(format!("{other} is not a schema")).at(|| pointer.to_owned()));
            }
        };
        self.nodes[idx as usize] = node;
        Ok(idx)
    }

    fn sub(&mut self, pointer: &str, path: &[&str]) -> Result<Idx, Problem> {
        self.at_pointer(&pointer_to(pointer, path))
    }

    fn list(&mut self, pointer: &str, key: &str, value: &Value) -> Result<Vec<Idx>, Problem> {
        let items = value
            .as_array()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| invalid(format!("{key} must be a non-empty array of schemas")))?;
        (0..items.len())
            .map(|i| self.sub(pointer, &[key, &i.to_string()]))
            .collect()
    }

    fn map(
        &mut self,
        pointer: &str,
        key: &str,
        value: &Value,
    ) -> Result<Vec<(String, Idx)>, Problem> {
        let map = value
            .as_object()
            .ok_or_else(|| invalid(format!("{key} must be an object of schemas")))?;
        map.keys()
            .map(|name| Ok((name.clone(), self.sub(pointer, &[key, name])?)))
            .collect()
    }

    fn node(&mut self, map: &Map<String, Value>, pointer: &str) -> Result<Node, Problem> {
        let mut n = Node::default();
        let d = self.draft;
        if let Some(reference) = map.get("$ref") {
            let at = || pointer_to(pointer, &["$ref"]);
            let reference = reference
                .as_str()
                .ok_or_else(|| invalid("$ref must be a string").at(at))?;
            let (_, target) = self
                .resolve("$ref", reference, &self.base_at(pointer))
                .map_err(|e| e.at(at))?;
            n.reference = Some(self.at_pointer(&target)?);
            // Before 2019-09, the keywords beside a `$ref` are ignored.
            if d <= Draft::D7 {
                return Ok(n);
            }
        }
        let mut pending = Pending::default();
        for (key, value) in map {
            self.keyword(&mut n, &mut pending, map, pointer, key, value)
                .map_err(|e| e.at(|| pointer_to(pointer, &[key])))?;
        }
        if pending.items_array
            && let Some(rest) = pending.additional_items
        {
            n.items = Some(rest);
        }
        // `jsonschema` asserts formats (and contents) in drafts 6 and 7: with
        // it compiled in, such a schema is left to it.
        let strings_allowed = n.types.is_none_or(|t| t & JsonType::String as u8 != 0);
        if let Some(at) = pending.format
            && self.defer_assertions
            && d <= Draft::D7
            && strings_allowed
        {
            return Err(Problem::unsupported(
                "format assertions of drafts 6 and 7 are left to the `jsonschema` feature",
            )
            .at(|| at));
        }
        Ok(n)
    }

    /// Reads the keyword `key` of the schema at `pointer` into `n`.
    fn keyword(
        &mut self,
        n: &mut Node,
        pending: &mut Pending,
        map: &Map<String, Value>,
        pointer: &str,
        key: &str,
        value: &Value,
    ) -> Result<(), Problem> {
        let d = self.draft;
        let sub = |c: &mut Self| c.sub(pointer, &[key]);
        match key {
            "$dynamicRef" if d >= Draft::D2020 => {
                let reference = value
                    .as_str()
                    .ok_or_else(|| invalid("$dynamicRef must be a string"))?;
                n.dynamic_reference = Some(Box::new(self.dynamic_ref(reference, pointer)?));
            }
            "$dynamicRef" | "$recursiveRef" => {
                return Err(Problem::unsupported(format!(
                    "{key} is not built in for this draft"
                )));
            }
            "type" => n.types = Some(types(value)?),
            "enum" => {
                n.enum_values = Some(
                    value
                        .as_array()
                        .ok_or_else(|| invalid("enum must be an array"))?
                        .clone(),
                );
            }
            "const" => n.const_value = Some(value.clone()),
            "minimum" => n.minimum = Some(number(key, value)?),
            "maximum" => n.maximum = Some(number(key, value)?),
            "exclusiveMinimum" => n.exclusive_minimum = Some(number(key, value)?),
            "exclusiveMaximum" => n.exclusive_maximum = Some(number(key, value)?),
            "multipleOf" => {
                let m = number(key, value)?;
                if m.as_f64().is_none_or(|f| f <= 0.0) {
                    return Err(invalid("multipleOf must be greater than 0"));
                }
                n.multiple_of = Some(m);
            }
            "minLength" => n.min_length = Some(count(key, value)?),
            "maxLength" => n.max_length = Some(count(key, value)?),
            "minItems" => n.min_items = Some(count(key, value)?),
            "maxItems" => n.max_items = Some(count(key, value)?),
            "minProperties" => n.min_properties = Some(count(key, value)?),
            "maxProperties" => n.max_properties = Some(count(key, value)?),
            "minContains" if d >= Draft::D2019 => n.min_contains = Some(count(key, value)?),
            "maxContains" if d >= Draft::D2019 => n.max_contains = Some(count(key, value)?),
            "uniqueItems" => {
                n.unique_items = value
                    .as_bool()
                    .ok_or_else(|| invalid("uniqueItems must be a boolean"))?;
            }
            "pattern" => n.pattern = Some(Box::new(pattern(value)?)),
            "items" if d <= Draft::D2019 && value.is_array() => {
                pending.items_array = true;
                n.prefix_items = self.list(pointer, key, value)?;
            }
            "items" => n.items = Some(sub(self)?),
            "prefixItems" if d >= Draft::D2020 => {
                n.prefix_items = self.list(pointer, key, value)?;
            }
            "additionalItems" if d <= Draft::D2019 => pending.additional_items = Some(sub(self)?),
            "contains" => n.contains = Some(sub(self)?),
            "unevaluatedItems" if d >= Draft::D2019 => n.unevaluated_items = Some(sub(self)?),
            "properties" => n.properties = self.map(pointer, key, value)?,
            "patternProperties" => {
                for (name, idx) in self.map(pointer, key, value)? {
                    let p = pattern(&Value::String(name.clone()))
                        .map_err(|e| e.at(|| pointer_to(pointer, &[key, &name])))?;
                    n.pattern_properties.push((p, idx));
                }
            }
            "additionalProperties" => n.additional_properties = Some(sub(self)?),
            "unevaluatedProperties" if d >= Draft::D2019 => {
                n.unevaluated_properties = Some(sub(self)?);
            }
            "propertyNames" => n.property_names = Some(sub(self)?),
            "required" => n.required = strings(key, value)?,
            "dependentRequired" if d >= Draft::D2019 => {
                let map = value
                    .as_object()
                    .ok_or_else(|| invalid("dependentRequired must be an object"))?;
                for (name, names) in map {
                    n.dependent_required
                        .push((name.clone(), strings(key, names)?));
                }
            }
            "dependentSchemas" if d >= Draft::D2019 => {
                let schemas = self.map(pointer, key, value)?;
                n.dependent_schemas.extend(schemas);
            }
            // Split in two by 2019-09, but still honoured after, as
            // `jsonschema` does.
            "dependencies" => {
                let map = value
                    .as_object()
                    .ok_or_else(|| invalid("dependencies must be an object"))?;
                for (name, dep) in map {
                    if dep.is_array() {
                        n.dependent_required
                            .push((name.clone(), strings(key, dep)?));
                    } else {
                        let idx = self.sub(pointer, &[key, name])?;
                        n.dependent_schemas.push((name.clone(), idx));
                    }
                }
            }
            "allOf" => n.all_of = self.list(pointer, key, value)?,
            "anyOf" => n.any_of = self.list(pointer, key, value)?,
            "oneOf" => n.one_of = self.list(pointer, key, value)?,
            "not" => n.not = Some((sub(self)?, value.clone())),
            "if" if d >= Draft::D7 => {
                let then = match map.get("then") {
                    Some(_) => Some(self.sub(pointer, &["then"])?),
                    None => None,
                };
                let otherwise = match map.get("else") {
                    Some(_) => Some(self.sub(pointer, &["else"])?),
                    None => None,
                };
                n.if_then_else = Some((sub(self)?, then, otherwise));
            }
            "format" | "contentEncoding" | "contentMediaType" => {
                pending.format = Some(pointer_to(pointer, &[key]));
            }
            _ => {}
        }
        Ok(())
    }
}

fn types(value: &Value) -> Result<u8, Problem> {
    let bad = || {
        invalid(format!(
            "type must be a type name or an array of them, not {value}"
        ))
    };
    let names: Vec<&Value> = match value {
        Value::String(_) => vec![value],
        Value::Array(names) if !names.is_empty() => names.iter().collect(),
        _ => return Err(bad()),
    };
    let mut set = 0u8;
    for name in names {
        let t = name.as_str().and_then(JsonType::parse).ok_or_else(bad)?;
        if set & t as u8 != 0 {
            return Err(bad());
        }
        set |= t as u8;
    }
    Ok(set)
}

fn number(key: &str, value: &Value) -> Result<Number, Problem> {
    value
        .as_number()
        .cloned()
        .ok_or_else(|| invalid(format!("{key} must be a number, not {value}")))
}

/// A non-negative integer (`2.0` counts).
fn count(key: &str, value: &Value) -> Result<u64, Problem> {
    value
        .as_u64()
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
                .map(|f| f as u64)
        })
        .ok_or_else(|| invalid(format!("{key} must be a non-negative integer, not {value}")))
}

/// An array of distinct strings.
fn strings(key: &str, value: &Value) -> Result<Vec<String>, Problem> {
    let bad = || {
        invalid(format!(
            "{key} must be an array of distinct strings, not {value}"
        ))
    };
    let mut out: Vec<String> = Vec::new();
    for name in value.as_array().ok_or_else(bad)? {
        let name = name.as_str().ok_or_else(bad)?;
        if out.iter().any(|n| n == name) {
            return Err(bad());
        }
        out.push(name.to_owned());
    }
    Ok(out)
}

fn pattern(value: &Value) -> Result<Pattern, Problem> {
    let source = value
        .as_str()
        .ok_or_else(|| invalid(format!("a pattern must be a string, not {value}")))?;
    match regex_lite::Regex::new(source) {
        Ok(regex) => Ok(Pattern {
            regex,
            source: source.to_owned(),
        }),
        Err(e) => Err(Problem::unsupported(format!(
            "the pattern {source:?} is beyond the built-in regular expressions ({e})"
        ))),
    }
}
