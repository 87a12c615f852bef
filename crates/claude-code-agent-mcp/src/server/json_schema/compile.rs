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
    resources: HashMap<String, String>,
    anchors: HashMap<String, String>,
    bases: HashMap<String, String>,
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
        bases: HashMap::new(),
    };
    c.resources.insert(DEFAULT_BASE.to_owned(), String::new());
    c.scan(schema, String::new(), DEFAULT_BASE.to_owned());
    c.at_pointer("")?;
    Ok(Compiled { nodes: c.nodes })
}

fn invalid(message: impl Into<String>) -> Problem {
    Problem::Invalid(message.into())
}

impl Compiler<'_> {
    /// Records the resources, anchors and base URIs under `value`.
    fn scan(&mut self, value: &Value, pointer: String, mut base: String) {
        let Value::Object(map) = value else { return };
        if let Some(Value::String(id)) = map.get("$id") {
            if self.draft <= Draft::D7 && id.starts_with('#') {
                self.anchors.insert(format!("{base}{id}"), pointer.clone());
            } else {
                base = normalize(&resolve_uri(&base, id)).to_owned();
                self.resources.insert(base.clone(), pointer.clone());
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

    /// The pointer (from the document's root) that `reference` names.
    fn resolve(&self, reference: &str, base: &str) -> Result<String, Problem> {
        let uri = resolve_uri(base, reference);
        let (doc, fragment) = uri.split_once('#').unwrap_or((&uri, ""));
        let Some(resource) = self.resources.get(doc) else {
            return Err(Problem::Unsupported(format!(
                "the $ref {reference:?} points outside the schema"
            )));
        };
        let fragment = percent_decode(fragment)
            .ok_or_else(|| invalid(format!("the $ref {reference:?} is not UTF-8")))?;
        if fragment.is_empty() {
            Ok(resource.clone())
        } else if fragment.starts_with('/') {
            Ok(format!("{resource}{fragment}"))
        } else {
            self.anchors
                .get(&format!("{doc}#{fragment}"))
                .cloned()
                .ok_or_else(|| invalid(format!("the $ref {reference:?} names no anchor")))
        }
    }

    /// The node of the schema at `pointer`, compiled on first use.
    fn at_pointer(&mut self, pointer: &str) -> Result<Idx, Problem> {
        if let Some(&idx) = self.by_pointer.get(pointer) {
            return Ok(idx);
        }
        let root = self.root;
        let value = root
            .pointer(pointer)
            .ok_or_else(|| invalid(format!("a $ref points at nothing ({pointer})")))?;
        let idx = Idx::try_from(self.nodes.len()).map_err(|_| invalid("too many subschemas"))?;
        self.nodes.push(Node::default());
        self.by_pointer.insert(pointer.to_owned(), idx);
        let node = match value {
            Value::Bool(true) => Node::default(),
            Value::Bool(false) => Node {
                never: true,
                ..Node::default()
            },
            Value::Object(map) => self.node(map, pointer)?,
            other => return Err(invalid(format!("{other} is not a schema"))),
        };
        self.nodes[idx as usize] = node;
        Ok(idx)
    }

    fn sub(&mut self, pointer: &str, path: &[&str]) -> Result<Idx, Problem> {
        let mut at = pointer.to_owned();
        for token in path {
            push_token(&mut at, token);
        }
        self.at_pointer(&at)
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
            let reference = reference
                .as_str()
                .ok_or_else(|| invalid("$ref must be a string"))?;
            let target = self.resolve(reference, &self.base_at(pointer))?;
            n.reference = Some(self.at_pointer(&target)?);
            // Before 2019-09, the keywords beside a `$ref` are ignored.
            if d <= Draft::D7 {
                return Ok(n);
            }
        }
        let mut items_array = false;
        let mut additional_items = None;
        let mut format = false;
        for (key, value) in map {
            let key = key.as_str();
            let sub = |c: &mut Self| c.sub(pointer, &[key]);
            match key {
                "$dynamicRef" | "$recursiveRef" => {
                    return Err(Problem::Unsupported(format!("{key} is not supported")));
                }
                "type" => {
                    n.types = Some(types(value)?);
                }
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
                    items_array = true;
                    n.prefix_items = self.list(pointer, key, value)?;
                }
                "items" => n.items = Some(sub(self)?),
                "prefixItems" if d >= Draft::D2020 => {
                    n.prefix_items = self.list(pointer, key, value)?;
                }
                "additionalItems" if d <= Draft::D2019 => additional_items = Some(sub(self)?),
                "contains" => n.contains = Some(sub(self)?),
                "unevaluatedItems" if d >= Draft::D2019 => n.unevaluated_items = Some(sub(self)?),
                "properties" => n.properties = self.map(pointer, key, value)?,
                "patternProperties" => {
                    for (name, idx) in self.map(pointer, key, value)? {
                        let p = pattern(&Value::String(name))?;
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
                    n.dependent_schemas = self.map(pointer, key, value)?;
                }
                "dependencies" if d <= Draft::D7 => {
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
                "format" | "contentEncoding" | "contentMediaType" => format = true,
                _ => {}
            }
        }
        if items_array && let Some(rest) = additional_items {
            n.items = Some(rest);
        }
        // `jsonschema` asserts formats (and contents) in drafts 6 and 7: with
        // it compiled in, such a schema is left to it.
        let strings_allowed = n.types.is_none_or(|t| t & JsonType::String as u8 != 0);
        if format && self.defer_assertions && d <= Draft::D7 && strings_allowed {
            return Err(Problem::Unsupported("format assertions".into()));
        }
        Ok(n)
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
        Err(e) => Err(Problem::Unsupported(format!(
            "the pattern {source:?} is beyond the built-in regular expressions ({e})"
        ))),
    }
}
