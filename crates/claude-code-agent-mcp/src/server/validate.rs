//! JSON-schema validation of tool arguments and structured output.
//!
//! Each schema is compiled once, when its tool is created; a call only runs
//! the compiled check (a yes/no pass first, the failures worded only when
//! the value is invalid). The built-in checker ([`super::json_schema`])
//! does it; with the `jsonschema` feature, `jsonschema` takes the schemas
//! the built-in one leaves aside; without it, those fail every value with a
//! message naming the feature.

use std::fmt::Write as _;

use serde_json::Value;

use super::json_schema::{ProblemKind, Schema};

/// How many validation errors a message lists before "and N more".
const MAX_LISTED_ERRORS: usize = 8;

/// A compiled JSON schema, or the reason it could not be compiled.
pub(crate) struct CompiledSchema {
    kind: Kind,
}

enum Kind {
    BuiltIn(Schema),
    #[cfg(feature = "jsonschema")]
    Full(Box<jsonschema::Validator>),
    /// Every value fails, with this message.
    Broken(String),
}

impl CompiledSchema {
    /// Compiles `schema` (draft 2020-12 unless it names another `$schema`).
    ///
    /// A schema that cannot be used is logged and kept as an error: every
    /// value then fails validation with a message saying why.
    pub(crate) fn compile(schema: &Value, what: &str, tool: &str) -> Self {
        let kind = match Schema::compile(schema, cfg!(feature = "jsonschema")) {
            Ok(s) => Kind::BuiltIn(s),
            Err(problem) if problem.kind == ProblemKind::Invalid => broken(
                what,
                tool,
                "is not a valid JSON schema",
                &problem.to_string(),
            ),
            #[cfg(feature = "jsonschema")]
            Err(problem) => {
                tracing::debug!(tool, reason = %problem, "the tool's {what} is checked by jsonschema");
                match jsonschema::validator_for(schema) {
                    Ok(v) => Kind::Full(Box::new(v)),
                    Err(e) => broken(what, tool, "is not a valid JSON schema", &e.to_string()),
                }
            }
            #[cfg(not(feature = "jsonschema"))]
            Err(problem) => broken(
                what,
                tool,
                "needs the `jsonschema` feature of claude-code-agent-mcp to be checked",
                &problem.to_string(),
            ),
        };
        Self { kind }
    }

    /// Checks `instance`; on failure, one line per problem, each naming
    /// where in the value it is (a JSON pointer, `(root)` for the value itself).
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        let (listed, count) = match &self.kind {
            Kind::BuiltIn(s) if s.is_valid(instance) => return Ok(()),
            Kind::BuiltIn(s) => s.errors(instance, MAX_LISTED_ERRORS),
            #[cfg(feature = "jsonschema")]
            Kind::Full(v) if v.is_valid(instance) => return Ok(()),
            #[cfg(feature = "jsonschema")]
            Kind::Full(v) => full_errors(v, instance),
            Kind::Broken(message) => return Err(message.clone()),
        };
        let mut out = listed.join("\n");
        if count > listed.len() {
            let _ = write!(out, "\n- and {} more", count - listed.len());
        }
        if out.is_empty() {
            out.push_str("- the value does not match the schema");
        }
        Err(out)
    }
}

fn broken(what: &str, tool: &str, problem: &str, reason: &str) -> Kind {
    tracing::error!(tool, error = %reason, "the tool's {what} {problem}");
    Kind::Broken(format!("the tool's {what} {problem}: {reason}"))
}

/// `jsonschema`'s failures, worded like the built-in checker's.
#[cfg(feature = "jsonschema")]
fn full_errors(validator: &jsonschema::Validator, instance: &Value) -> (Vec<String>, usize) {
    let mut listed = Vec::new();
    let mut count = 0usize;
    for error in validator.iter_errors(instance) {
        count += 1;
        if listed.len() < MAX_LISTED_ERRORS {
            let path = error.instance_path().as_str();
            let path = if path.is_empty() { "(root)" } else { path };
            listed.push(format!("- at {path}: {error}"));
        }
    }
    (listed, count)
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

    /// A pattern beyond the built-in checker: `jsonschema` checks it with
    /// the feature; without it, every value fails, naming the feature.
    #[test]
    fn what_the_built_in_checker_leaves_aside_needs_the_feature() {
        let schema =
            json!({"type":"object","properties":{"name":{"type":"string","pattern":"^\\p{L}+$"}}});
        let s = CompiledSchema::compile(&schema, "input schema", "t");
        if cfg!(feature = "jsonschema") {
            assert!(s.check(&json!({"name":"Zoë"})).is_ok());
            let err = s.check(&json!({"name":"Zoë1"})).unwrap_err();
            assert!(err.contains("at /name:"), "{err}");
        } else {
            let err = s.check(&json!({"name":"Zoë"})).unwrap_err();
            assert!(err.contains("needs the `jsonschema` feature"), "{err}");
            assert!(
                err.contains("at /properties/name/pattern: the pattern"),
                "{err}"
            );
        }
    }
}
