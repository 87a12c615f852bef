//! A validity check for the plain schemas most tools have, without
//! `jsonschema`.
//!
//! The schemas derived from Rust types, and most hand-written ones, use a
//! handful of keywords: `type`, `properties`, `required`,
//! `additionalProperties`, `items`, numeric bounds, `enum` of strings. For
//! those, this answers "is the value valid?" with a few comparisons, and a
//! session never touches `jsonschema` and its regex engines (about 2.5 MB of
//! code that would otherwise be paged in: the SDK's peak RSS drops from
//! ~8.3 MB to ~5.6 MB in the benchmark). Anything else — `$ref`, `pattern`,
//! string lengths, formats that could assert, another draft — is not
//! "simple" and goes to `jsonschema` as before.
//!
//! Only the yes/no answer comes from here: when a value is invalid, the
//! caller asks `jsonschema` for the messages, so they read the same either
//! way. `tests::agrees_with_jsonschema` checks the two agree on generated
//! schemas and values.

use serde_json::{Map, Number, Value};

/// A schema made only of the keywords this module understands.
#[derive(Debug, Default)]
pub(crate) struct SimpleSchema {
    /// `false`: nothing is valid.
    never: bool,
    /// `type`, as a bit set of [`JsonType`]s (`None`: any type).
    types: Option<u8>,
    properties: Vec<(String, SimpleSchema)>,
    required: Vec<String>,
    /// `additionalProperties` (`None`: anything goes).
    additional: Option<Box<SimpleSchema>>,
    items: Option<Box<SimpleSchema>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    /// `enum` / `const`: strings, booleans and null only.
    one_of_values: Option<Vec<Value>>,
    any_of: Vec<SimpleSchema>,
    one_of: Vec<SimpleSchema>,
    all_of: Vec<SimpleSchema>,
}

#[derive(Clone, Copy)]
enum JsonType {
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

/// Keywords that say nothing about validity.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// The drafts whose meaning of the keywords above is the same as 2020-12's.
const DRAFTS: &[&str] = &[
    "https://json-schema.org/draft/2020-12/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
];

/// Bounds beyond this are left to `jsonschema` (an `f64` comparison with
/// them could round).
const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53

impl SimpleSchema {
    /// The simple form of `schema`, or `None` if it uses anything else.
    pub(crate) fn parse(schema: &Value) -> Option<Self> {
        if let Some(draft) = schema.get("$schema")
            && !DRAFTS.contains(&draft.as_str()?)
        {
            return None;
        }
        Self::node(schema, true)
    }

    fn node(schema: &Value, root: bool) -> Option<Self> {
        let map = match schema {
            Value::Bool(true) => return Some(Self::default()),
            Value::Bool(false) => {
                return Some(Self {
                    never: true,
                    ..Self::default()
                });
            }
            Value::Object(map) => map,
            _ => return None,
        };
        let mut out = Self::default();
        let mut format = false;
        for (key, value) in map {
            match key.as_str() {
                "$schema" if root => {}
                "type" => out.types = Some(types(value)?),
                "properties" => {
                    for (name, sub) in value.as_object()? {
                        out.properties.push((name.clone(), Self::node(sub, false)?));
                    }
                }
                "required" => {
                    for name in value.as_array()? {
                        let name = name.as_str()?.to_owned();
                        // Repeated names make the schema invalid: jsonschema says so.
                        if out.required.contains(&name) {
                            return None;
                        }
                        out.required.push(name);
                    }
                }
                "additionalProperties" => {
                    out.additional = Some(Box::new(Self::node(value, false)?));
                }
                "items" => out.items = Some(Box::new(Self::node(value, false)?)),
                "minItems" => out.min_items = Some(value.as_u64()?),
                "maxItems" => out.max_items = Some(value.as_u64()?),
                "minimum" => out.minimum = Some(bound(value)?),
                "maximum" => out.maximum = Some(bound(value)?),
                "exclusiveMinimum" => out.exclusive_minimum = Some(bound(value)?),
                "exclusiveMaximum" => out.exclusive_maximum = Some(bound(value)?),
                "enum" => out.one_of_values = Some(scalars(value.as_array()?)?),
                "const" => out.one_of_values = Some(scalars(std::slice::from_ref(value))?),
                "anyOf" => out.any_of = list(value)?,
                "oneOf" => out.one_of = list(value)?,
                "allOf" => out.all_of = list(value)?,
                "format" => format = true,
                k if ANNOTATIONS.contains(&k) => {}
                _ => return None,
            }
        }
        // A `format` is only an annotation here, but whether `jsonschema`
        // asserts it depends on the draft and the format: keep it simple
        // only where it cannot apply (no strings allowed).
        if format && out.types.is_none_or(|t| t & JsonType::String as u8 != 0) {
            return None;
        }
        Some(out)
    }

    /// Whether `value` is valid.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        if self.never {
            return false;
        }
        if let Some(types) = self.types
            && !has_type(types, value)
        {
            return false;
        }
        if let Some(allowed) = &self.one_of_values
            && !allowed.contains(value)
        {
            return false;
        }
        let valid_here = match value {
            Value::Object(map) => self.object_is_valid(map),
            Value::Array(items) => self.array_is_valid(items),
            Value::Number(n) => self.number_is_valid(n),
            _ => true,
        };
        valid_here
            && self.all_of.iter().all(|s| s.is_valid(value))
            && (self.any_of.is_empty() || self.any_of.iter().any(|s| s.is_valid(value)))
            && (self.one_of.is_empty()
                || self.one_of.iter().filter(|s| s.is_valid(value)).count() == 1)
    }

    fn object_is_valid(&self, map: &Map<String, Value>) -> bool {
        // A small object is scanned: cheaper than hashing each name.
        let has = |name: &String| match map.len() {
            0..=8 => map.keys().any(|k| k == name),
            _ => map.contains_key(name),
        };
        if !self.required.iter().all(has) {
            return false;
        }
        for (name, value) in map {
            match self.properties.iter().find(|(n, _)| n == name) {
                Some((_, schema)) => {
                    if !schema.is_valid(value) {
                        return false;
                    }
                }
                None => {
                    if let Some(extra) = &self.additional
                        && !extra.is_valid(value)
                    {
                        return false;
                    }
                }
            }
        }
        true
    }

    fn array_is_valid(&self, items: &[Value]) -> bool {
        let n = items.len() as u64;
        self.min_items.is_none_or(|min| n >= min)
            && self.max_items.is_none_or(|max| n <= max)
            && self
                .items
                .as_ref()
                .is_none_or(|schema| items.iter().all(|v| schema.is_valid(v)))
    }

    fn number_is_valid(&self, n: &Number) -> bool {
        // Bounds are under 2^53, so they are exact as `f64`, and rounding a
        // bigger integer to `f64` cannot move it across one.
        let Some(x) = n.as_f64() else { return true };
        self.minimum.is_none_or(|b| x >= b)
            && self.maximum.is_none_or(|b| x <= b)
            && self.exclusive_minimum.is_none_or(|b| x > b)
            && self.exclusive_maximum.is_none_or(|b| x < b)
    }
}

fn types(value: &Value) -> Option<u8> {
    match value {
        Value::String(name) => Some(JsonType::parse(name)? as u8),
        Value::Array(names) if !names.is_empty() => names.iter().try_fold(0, |set, name| {
            let t = JsonType::parse(name.as_str()?)? as u8;
            // A repeated type makes the schema invalid: leave it to jsonschema.
            (set & t == 0).then_some(set | t)
        }),
        _ => None,
    }
}

fn has_type(types: u8, value: &Value) -> bool {
    let is = |t: JsonType| types & t as u8 != 0;
    match value {
        Value::Null => is(JsonType::Null),
        Value::Bool(_) => is(JsonType::Boolean),
        Value::Number(n) => {
            is(JsonType::Number)
                || (is(JsonType::Integer)
                    && (n.is_i64()
                        || n.is_u64()
                        || n.as_f64()
                            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)))
        }
        Value::String(_) => is(JsonType::String),
        Value::Array(_) => is(JsonType::Array),
        Value::Object(_) => is(JsonType::Object),
    }
}

fn bound(value: &Value) -> Option<f64> {
    let b = value.as_f64()?;
    (b.is_finite() && b.abs() < EXACT).then_some(b)
}

/// `enum` values, if all are strings, booleans or null (numbers compare by
/// value in JSON Schema, `1` equal to `1.0`, which `Value`'s `==` does not do).
fn scalars(values: &[Value]) -> Option<Vec<Value>> {
    values
        .iter()
        .all(|v| matches!(v, Value::String(_) | Value::Bool(_) | Value::Null))
        .then(|| values.to_vec())
}

fn list(value: &Value) -> Option<Vec<SimpleSchema>> {
    let items = value.as_array()?;
    if items.is_empty() {
        return None;
    }
    items.iter().map(|s| SimpleSchema::node(s, false)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn derived_schemas_are_simple_and_others_are_not() {
        let derived = json!({"type":"object","description":"x","properties":{
            "a":{"type":"number"},"n":{"type":["integer","null"],"minimum":0},
            "tags":{"type":"array","items":{"type":"string"}},
            "mode":{"type":"string","enum":["fast","slow"]},
            "inner":{"anyOf":[{"type":"object","properties":{"x":{"type":"boolean"}},
                                "additionalProperties":false},{"type":"null"}]}},
            "required":["a"]});
        let s = SimpleSchema::parse(&derived).expect("simple");
        assert!(s.is_valid(&json!({"a":1.5,"n":3,"tags":["t"],"mode":"fast","inner":{"x":true}})));
        assert!(s.is_valid(&json!({"a":1,"n":2.0})));
        assert!(!s.is_valid(&json!({"n":1})), "a is required");
        assert!(!s.is_valid(&json!({"a":1,"n":-1})), "minimum");
        assert!(!s.is_valid(&json!({"a":1,"n":1.5})), "integer");
        assert!(!s.is_valid(&json!({"a":1,"mode":"medium"})), "enum");
        assert!(
            !s.is_valid(&json!({"a":1,"inner":{"y":1}})),
            "additionalProperties"
        );
        for other in [
            json!({"type":"string","pattern":"^a"}),
            json!({"$ref":"#/$defs/x"}),
            json!({"type":"string","format":"email"}),
            json!({"type":"integer","enum":[1,2]}),
            json!({"$schema":"http://json-schema.org/draft-04/schema#"}),
            json!({"type":"text"}),
            json!({"type":"number","minimum":1e300}),
        ] {
            assert!(SimpleSchema::parse(&other).is_none(), "{other}");
        }
    }

    /// Schemas made of the simple keywords, nested a few levels.
    fn schema() -> impl Strategy<Value = Value> {
        let type_name = prop::sample::select(vec![
            "null", "boolean", "integer", "number", "string", "array", "object",
        ]);
        let leaf = prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            type_name.clone().prop_map(|t| json!({"type": t})),
            prop::collection::vec(type_name.clone(), 1..3).prop_map(|mut ts| {
                ts.sort_unstable();
                ts.dedup();
                json!({"type": ts})
            }),
            (-5i64..5).prop_map(|m| json!({"type":"number","minimum": m})),
            (-5i64..5).prop_map(|m| json!({"exclusiveMaximum": m as f64 + 0.5})),
            Just(json!({"enum":["a","b",null,true]})),
            Just(json!({"const":"a"})),
            Just(json!({"type":"integer","format":"int32","description":"d"})),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                (
                    prop::collection::vec(("[abc]", inner.clone()), 0..3),
                    prop::collection::vec("[abcd]", 0..3),
                    prop::option::of(inner.clone()),
                )
                    .prop_map(|(props, mut required, additional)| {
                        required.sort();
                        required.dedup();
                        let mut o = json!({"type":"object",
                            "properties": props.into_iter().collect::<Map<_, _>>(),
                            "required": required});
                        if let Some(a) = additional {
                            o["additionalProperties"] = a;
                        }
                        o
                    }),
                (inner.clone(), 0u64..3).prop_map(|(i, n)| json!({"items": i, "minItems": n})),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"anyOf": v})),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"oneOf": v})),
                prop::collection::vec(inner, 1..3).prop_map(|v| json!({"allOf": v})),
            ]
        })
    }

    fn instance() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-6i64..6).prop_map(|n| json!(n)),
            (-6.0f64..6.0).prop_map(|f| json!(f)),
            Just(json!(2.0)),
            Just(json!(u64::MAX)),
            prop::sample::select(vec!["a", "b", "c", ""]).prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[abcd]", inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn agrees_with_jsonschema(schema in schema(), values in prop::collection::vec(instance(), 1..6)) {
            let simple = SimpleSchema::parse(&schema).expect("generated schemas are simple");
            let full = jsonschema::validator_for(&schema).expect("a valid schema");
            for value in &values {
                prop_assert_eq!(simple.is_valid(value), full.is_valid(value), "{} on {}", schema, value);
            }
        }
    }
}
