//! The built-in JSON Schema checker of tool arguments and structured
//! results: drafts 2020-12 (the default), 2019-09, 7 and 6, every keyword
//! that asserts something except those listed below, with `jsonschema`'s
//! wording of each failure; its only dependency is `regex-lite`.
//!
//! Left aside, reported as [`Problem::Unsupported`]:
//! - `$dynamicRef` and `$recursiveRef`;
//! - a `$ref` to anything outside the schema (other documents, the
//!   meta-schemas);
//! - draft 4 and unknown `$schema`s;
//! - a `pattern` (or `patternProperties` name) beyond `regex-lite`'s syntax:
//!   Unicode classes (`\p{L}`), look-around, back-references.
//!
//! `format` and `content*` are annotations, as in draft 2020-12 (where
//! `jsonschema` does not assert them either); draft 6 and 7 schemas that use
//! them on strings are unsupported when the `jsonschema` feature is on, so
//! that `jsonschema` asserts them there as before.
//!
//! With the `jsonschema` feature, the unsupported schemas go to
//! `jsonschema` (`super::validate`); without it they fail every call with a
//! message naming the feature. `tests::agrees_with_jsonschema` checks the
//! two agree on generated schemas and values.

mod check;
mod compile;
mod value;

#[cfg(test)]
mod tests;

use serde_json::Value;

/// The drafts this checker knows, oldest first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Draft {
    D6,
    D7,
    D2019,
    D2020,
}

impl Draft {
    fn from_uri(uri: &str) -> Option<Self> {
        let uri = uri.strip_suffix('#').unwrap_or(uri);
        let uri = uri
            .strip_prefix("https://")
            .or_else(|| uri.strip_prefix("http://"))?;
        Some(match uri {
            "json-schema.org/draft/2020-12/schema" => Self::D2020,
            "json-schema.org/draft/2019-09/schema" => Self::D2019,
            "json-schema.org/draft-07/schema" => Self::D7,
            "json-schema.org/draft-06/schema" => Self::D6,
            _ => return None,
        })
    }
}

/// Why a schema was not compiled.
#[derive(Debug)]
pub(crate) enum Problem {
    /// It is not a valid JSON schema.
    Invalid(String),
    /// It is valid, but uses something this checker leaves aside.
    Unsupported(String),
}

/// A compiled schema.
pub(crate) struct Schema {
    compiled: compile::Compiled,
}

impl Schema {
    /// Compiles `schema`. With `defer_assertions`, draft 6 and 7 schemas that
    /// use `format` on strings are [`Problem::Unsupported`] (for
    /// `jsonschema`, which asserts formats in those drafts).
    pub(crate) fn compile(schema: &Value, defer_assertions: bool) -> Result<Self, Problem> {
        let draft = match schema.get("$schema") {
            None => Draft::D2020,
            Some(Value::String(uri)) => Draft::from_uri(uri).ok_or_else(|| {
                Problem::Unsupported(format!(
                    "the $schema {uri:?} (draft 2020-12, 2019-09, 7 or 6 are built in)"
                ))
            })?,
            Some(other) => {
                return Err(Problem::Invalid(format!(
                    "$schema must be a string, not {other}"
                )));
            }
        };
        Ok(Self {
            compiled: compile::compile(schema, draft, defer_assertions)?,
        })
    }

    /// Whether `value` is valid.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.compiled.is_valid(value)
    }

    /// The failures of `value`: the first `limit` worded (`- at <pointer>:
    /// <message>`), and how many there are in all.
    pub(crate) fn errors(&self, value: &Value, limit: usize) -> (Vec<String>, usize) {
        let sink = self.compiled.errors(value, limit);
        (sink.listed, sink.count)
    }
}
