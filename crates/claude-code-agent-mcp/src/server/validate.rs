//! JSON-schema validation of tool arguments and structured output.
//!
//! Each schema is compiled once, when its tool is created; a call only runs
//! the compiled validator (a fast boolean check first, the error walk only
//! when the value is invalid). Plain schemas (see [`super::simple_schema`])
//! are checked without `jsonschema`, which then only words the errors.

use std::fmt::Write as _;

use std::sync::OnceLock;

use serde_json::Value;

use super::simple_schema::SimpleSchema;

/// How many validation errors a message lists before "and N more".
const MAX_LISTED_ERRORS: usize = 8;

/// A compiled JSON schema, or the reason it could not be compiled.
pub(crate) struct CompiledSchema {
    kind: Kind,
}

enum Kind {
    /// Plain keywords only: validity is checked without `jsonschema`, which
    /// is compiled (once) only to word the errors of an invalid value.
    Simple {
        check: Box<SimpleSchema>,
        schema: Value,
        full: OnceLock<Result<jsonschema::Validator, String>>,
    },
    Full(Result<jsonschema::Validator, String>),
}

impl CompiledSchema {
    /// Compiles `schema` (draft 2020-12 unless it names another `$schema`).
    ///
    /// An invalid schema is logged and kept as an error: every value then
    /// fails validation with a message saying the schema is broken.
    pub(crate) fn compile(schema: &Value, what: &str, tool: &str) -> Self {
        let kind = match SimpleSchema::parse(schema) {
            Some(check) => Kind::Simple {
                check: Box::new(check),
                schema: schema.clone(),
                full: OnceLock::new(),
            },
            None => Kind::Full(full(schema, what, tool)),
        };
        Self { kind }
    }

    /// Checks `instance`; on failure, one line per problem, each naming
    /// where in the value it is (a JSON pointer, `(root)` for the value itself).
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        let validator = match &self.kind {
            Kind::Simple { check, .. } if check.is_valid(instance) => return Ok(()),
            Kind::Simple {
                schema, full: f, ..
            } => f.get_or_init(|| full(schema, "schema", "")),
            Kind::Full(validator) => validator,
        };
        let validator = validator.as_ref().map_err(Clone::clone)?;
        if validator.is_valid(instance) {
            return Ok(());
        }
        let mut out = String::new();
        let mut count = 0usize;
        for error in validator.iter_errors(instance) {
            count += 1;
            if count > MAX_LISTED_ERRORS {
                continue;
            }
            let path = error.instance_path().as_str();
            let path = if path.is_empty() { "(root)" } else { path };
            if !out.is_empty() {
                out.push('\n');
            }
            let _ = write!(out, "- at {path}: {error}");
        }
        if count > MAX_LISTED_ERRORS {
            let _ = write!(out, "\n- and {} more", count - MAX_LISTED_ERRORS);
        }
        if out.is_empty() {
            out.push_str("- the value does not match the schema");
        }
        Err(out)
    }
}

/// `schema` compiled by `jsonschema`, or why it could not be.
fn full(schema: &Value, what: &str, tool: &str) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| {
        tracing::error!(tool, error = %e, "the tool's {what} is not a valid JSON schema");
        format!("the tool's {what} is not a valid JSON schema: {e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_offending_fields() {
        let schema = json!({
            "type":"object",
            "properties":{"a":{"type":"number"},"b":{"type":"number"}},
            "required":["a","b"]
        });
        let s = CompiledSchema::compile(&schema, "input schema", "t");
        assert!(s.check(&json!({"a":1,"b":2})).is_ok());
        let err = s.check(&json!({"a":"x"})).unwrap_err();
        assert!(err.contains("at /a:"), "{err}");
        assert!(err.contains("\"b\" is a required property"), "{err}");
        assert!(err.contains("at (root):"), "{err}");
    }

    #[test]
    fn a_broken_schema_fails_every_value_with_a_reason() {
        let s = CompiledSchema::compile(&json!({"type": 12}), "input schema", "t");
        let err = s.check(&json!({})).unwrap_err();
        assert!(err.contains("not a valid JSON schema"), "{err}");
    }
}
