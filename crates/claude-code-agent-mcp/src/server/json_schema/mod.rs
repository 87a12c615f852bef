//! The built-in JSON Schema checker of tool arguments and structured
//! results: drafts 2020-12 (the default), 2019-09, 7 and 6, every keyword
//! that asserts something except those listed below, with `jsonschema`'s
//! wording of each failure; its only dependency is `regex-lite`.
//! `suite` runs the official JSON Schema Test Suite (draft 2020-12) against
//! it; `docs/json-schema.md` shows how much passes.
//!
//! Left aside, reported as [`ProblemKind::Unsupported`] with the JSON
//! pointer of the keyword:
//! - `$recursiveRef` (2019-09), and `$dynamicRef` before 2020-12;
//! - a `$ref` or `$dynamicRef` to anything outside the schema (other
//!   documents, the meta-schemas);
//! - draft 4, and a `$schema` naming any other meta-schema;
//! - a `pattern` (or `patternProperties` name) beyond `regex-lite`'s syntax:
//!   Unicode classes (`\p{L}`), look-around, back-references.
//!
//! `format` and `content*` are annotations, as in draft 2020-12 (where
//! `jsonschema` does not assert them either); draft 6 and 7 schemas that use
//! them on strings are unsupported when the `jsonschema` feature is on, so
//! that `jsonschema` asserts them there as before. `dependencies` is
//! honoured in every draft, as `jsonschema` does.
//!
//! With the `jsonschema` feature, the unsupported schemas go to
//! `jsonschema` (`super::validate`); without it they fail every call with a
//! message naming the feature and where the schema needs it.
//! `tests::agrees_with_jsonschema` checks the two agree on generated schemas
//! and values.

mod check;
mod compile;
mod value;

#[cfg(test)]
mod suite;
#[cfg(test)]
mod tests;

use std::fmt;

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

/// Why a schema was not compiled: what is wrong, and where.
#[derive(Debug)]
pub(crate) struct Problem {
    pub(crate) kind: ProblemKind,
    /// A JSON pointer into the schema, at the keyword (or subschema) at
    /// fault; `None` until the compiler knows it.
    at: Option<String>,
    reason: String,
}

/// What kind of [`Problem`] a schema has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProblemKind {
    /// It is not a valid JSON schema.
    Invalid,
    /// It is valid, but uses something this checker leaves aside.
    Unsupported,
}

impl Problem {
    pub(crate) fn invalid(reason: impl Into<String>) -> Self {
        Self {
            kind: ProblemKind::Invalid,
            at: None,
            reason: reason.into(),
        }
    }

    pub(crate) fn unsupported(reason: impl Into<String>) -> Self {
        Self {
            kind: ProblemKind::Unsupported,
            at: None,
            reason: reason.into(),
        }
    }

    /// Places the problem at `pointer`, unless it already has a place (one
    /// found deeper in the schema).
    pub(crate) fn at(mut self, pointer: impl FnOnce() -> String) -> Self {
        if self.at.is_none() {
            self.at = Some(pointer());
        }
        self
    }
}

/// `at /properties/a/pattern: the pattern …`, `(root)` for the schema itself.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at.as_deref() {
            None | Some("") => write!(f, "at (root): {}", self.reason),
            Some(pointer) => write!(f, "at {pointer}: {}", self.reason),
        }
    }
}

/// A compiled schema.
pub(crate) struct Schema {
    compiled: compile::Compiled,
}

impl Schema {
    /// Compiles `schema`. With `defer_assertions`, draft 6 and 7 schemas that
    /// use `format` on strings are [`ProblemKind::Unsupported`] (for
    /// `jsonschema`, which asserts formats in those drafts).
    pub(crate) fn compile(schema: &Value, defer_assertions: bool) -> Result<Self, Problem> {
        let draft = match schema.get("$schema") {
            None => Draft::D2020,
            Some(Value::String(uri)) => Draft::from_uri(uri).ok_or_else(|| {
                Problem::unsupported(format!(
                    "the $schema {uri:?} is not built in (drafts 2020-12, 2019-09, 7 and 6 are)"
                ))
                .at(|| "/$schema".to_owned())
            })?,
            Some(other) => {
                return Err(
                    Problem::invalid(format!("$schema must be a string, not {other}"))
                        .at(|| "/$schema".to_owned()),
                );
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
