//! JSON schemas derived from Rust types, in the form the Claude Code CLI and
//! the Anthropic API accept for a tool.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON schema of `T`, shaped for a tool's `inputSchema` or `outputSchema`.
///
/// * the root is `"type": "object"` with `properties` — also for a unit or
///   field-less struct (whose schema would otherwise be `"type": "null"`);
/// * no root `$schema`, and no root `title` that merely repeats the type's name;
/// * sub-schemas are inlined: no `$ref`/`$defs` (except for recursive
///   types, which cannot be inlined);
/// * doc comments become `description`s;
/// * schemars' numeric `format`s (`double`, `uint32`, …), which are not JSON
///   Schema formats, are dropped (the bounds they imply stay as
///   `minimum`/`maximum`).
///
/// `T` should serialize as a JSON object: a struct with named fields, a map,
/// or an enum whose variants are all objects. For other types (a number, a
/// sequence) the schema is returned as generated and a warning is logged: a
/// tool's arguments are always an object.
///
/// ```
/// use claude_code_agent_mcp::server::tool_schema_for;
///
/// /// Two numbers.
/// #[derive(schemars::JsonSchema, serde::Deserialize)]
/// struct Add {
///     /// The first.
///     a: f64,
///     b: f64,
/// }
///
/// let schema = tool_schema_for::<Add>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["description"], "Two numbers.");
/// assert_eq!(schema["properties"]["a"]["description"], "The first.");
/// assert_eq!(schema["required"], serde_json::json!(["a", "b"]));
/// assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
/// ```
pub fn tool_schema_for<T: JsonSchema + ?Sized>() -> Value {
    generate::<T>().0
}

/// The schema, and whether `T`'s own schema was `"type": "null"` (a unit
/// type, which deserializes from `null` rather than from `{}`).
pub(crate) fn generate<T: JsonSchema + ?Sized>() -> (Value, bool) {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut schema = schema.to_value();
    strip_numeric_formats(&mut schema);
    normalize_root(schema, &T::schema_name())
}

/// The `format`s schemars gives Rust number types; not JSON Schema formats.
const NUMERIC_FORMATS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double",
];

fn strip_numeric_formats(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| NUMERIC_FORMATS.contains(&f))
            {
                map.remove("format");
            }
            map.values_mut().for_each(strip_numeric_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_numeric_formats),
        _ => {}
    }
}

fn normalize_root(schema: Value, type_name: &str) -> (Value, bool) {
    let mut map = match schema {
        Value::Object(map) => map,
        // `true` (anything) becomes an open object schema.
        _ => Map::new(),
    };
    map.remove("$schema");
    if map.get("title").and_then(Value::as_str) == Some(type_name) {
        map.remove("title");
    }
    let unit = map.get("type").and_then(Value::as_str) == Some("null");
    match map.get("type") {
        None => {
            map.insert("type".into(), "object".into());
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(Value::String(t)) if t == "null" => {
            map.insert("type".into(), "object".into());
        }
        Some(other) => {
            tracing::warn!(
                type_name,
                schema_type = %other,
                "a tool schema's root should be an object; this type's is not"
            );
            return (Value::Object(map), unit);
        }
    }
    if !map.contains_key("properties") {
        map.insert("properties".into(), Value::Object(Map::new()));
    }
    (Value::Object(map), unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(JsonSchema, Deserialize)]
    struct Inner {
        /// Deep.
        x: u32,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema, Deserialize)]
    struct Outer {
        inner: Inner,
        maybe: Option<Inner>,
        list: Vec<Inner>,
    }

    #[derive(JsonSchema, Deserialize)]
    struct Unit;

    #[derive(JsonSchema, Deserialize)]
    struct Empty {}

    fn contains_key(v: &Value, key: &str) -> bool {
        match v {
            Value::Object(m) => m.contains_key(key) || m.values().any(|v| contains_key(v, key)),
            Value::Array(a) => a.iter().any(|v| contains_key(v, key)),
            _ => false,
        }
    }

    #[test]
    fn sub_schemas_are_inlined() {
        let s = tool_schema_for::<Outer>();
        assert!(
            !contains_key(&s, "$ref") && !contains_key(&s, "$defs"),
            "{s}"
        );
        assert_eq!(
            s["properties"]["inner"]["properties"]["x"]["description"],
            "Deep."
        );
    }

    #[allow(dead_code)]
    #[derive(JsonSchema, Deserialize)]
    struct Numbers {
        small: u8,
        x: f64,
        list: Vec<i32>,
        when: String,
    }

    #[test]
    fn numeric_formats_are_dropped_bounds_kept() {
        let s = tool_schema_for::<Numbers>();
        assert!(!contains_key(&s, "format"), "{s}");
        assert_eq!(s["properties"]["small"]["maximum"], 255);
        assert_eq!(s["properties"]["list"]["items"]["type"], "integer");
        let mut with_date = json!({"type":"string","format":"date-time"});
        strip_numeric_formats(&mut with_date);
        assert_eq!(with_date["format"], "date-time");
    }

    #[test]
    fn unit_and_empty_types_are_empty_objects() {
        let (unit, is_unit) = generate::<Unit>();
        assert!(is_unit);
        assert_eq!(unit["type"], "object");
        assert_eq!(unit["properties"], json!({}));
        let (empty, is_unit) = generate::<Empty>();
        assert!(!is_unit);
        assert_eq!(empty["type"], "object");
        assert_eq!(empty["properties"], json!({}));
        let (unit, is_unit) = generate::<()>();
        assert!(is_unit);
        assert_eq!(unit, json!({"type":"object","properties":{}}));
    }
}
