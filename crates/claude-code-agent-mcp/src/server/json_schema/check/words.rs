//! How failures are worded: the pieces of the messages, as `jsonschema`
//! words them.

use std::fmt::{self, Display};

use serde_json::Value;

pub(super) fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

pub(super) fn plural_y(n: u64) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}

/// A string as JSON writes it (quoted, escaped).
pub(super) struct JsonStr<'a>(pub(super) &'a str);

impl Display for JsonStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&serde_json::to_string(self.0).map_err(|_| fmt::Error)?)
    }
}

/// `type "number"` or `types "null", "integer"` (in `jsonschema`'s order).
pub(super) struct TypeNames(pub(super) u8);

impl Display for TypeNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [&str; 7] = [
            "null", "boolean", "integer", "number", "string", "array", "object",
        ];
        f.write_str(if self.0.count_ones() == 1 {
            "type "
        } else {
            "types "
        })?;
        let mut first = true;
        for (bit, name) in NAMES.iter().enumerate() {
            if self.0 & (1 << bit) != 0 {
                if !first {
                    f.write_str(", ")?;
                }
                first = false;
                write!(f, "\"{name}\"")?;
            }
        }
        Ok(())
    }
}

/// `"a", "b" or "c"`, or the first two `or N other candidates`.
pub(super) struct EnumValues<'a>(pub(super) &'a [Value]);

impl Display for EnumValues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 3;
        let values = self.0;
        if values.len() <= SHOWN {
            for (i, v) in values.iter().enumerate() {
                match i {
                    0 => write!(f, "{v}")?,
                    i if i == values.len() - 1 => write!(f, " or {v}")?,
                    _ => write!(f, ", {v}")?,
                }
            }
        } else {
            for (i, v) in values.iter().take(SHOWN - 1).enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v}")?;
            }
            write!(f, " or {} other candidates", values.len() - (SHOWN - 1))?;
        }
        Ok(())
    }
}

/// `'a', 'b' were unexpected`.
pub(super) struct Unexpected<'a>(pub(super) &'a [&'a str]);

impl Display for Unexpected<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "'{name}'")?;
        }
        f.write_str(if self.0.len() == 1 {
            " was unexpected"
        } else {
            " were unexpected"
        })
    }
}
