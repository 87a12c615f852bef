//! [`SkippedLine`]: the SDK's report of a line from the CLI it could not
//! hand on as a message.

use std::fmt;
use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};

/// `skipped_line`: a line the CLI wrote on stdout that the SDK had to skip,
/// so a message may be missing from the stream. Made by the SDK, never by
/// the CLI; the stream goes on after it.
///
/// A line is skipped when it is longer than
/// [`Options::max_line_bytes`](crate::Options::max_line_bytes)
/// ([`SkipReason::TooLong`]) or when it starts as a JSON object (`{`) but
/// does not parse: truncated JSON, invalid UTF-8 in a string, a number no
/// `f64` holds such as `1e999`, nesting past serde's limit
/// ([`SkipReason::Invalid`]). Lines that do not start with `{` (blank
/// lines, diagnostics such as `[SandboxDebug] …`) are not messages: they
/// are skipped with a `tracing` warning and no report. Each skipped line
/// is also logged with `tracing::warn!`.
///
/// A last line the CLI's output ended inside (the CLI died while writing
/// it) is reported before the session's error. When the SDK itself ended
/// the session (a session store that failed, a transcript past its limit,
/// messages not read past their budget) it killed the CLI and so cut that
/// line; then the error says what happened and no `SkippedLine` is made.
///
/// It is an [`Error`](std::error::Error) too (its
/// [`source`](std::error::Error::source) is the `serde_json::Error`, when
/// there is one), for a program that wants to stop on a lost message:
///
/// ```no_run
/// use claude_code_agent::{Message, Options, query};
/// use futures::StreamExt;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let mut stream = query("What is 2 + 2?", Options::new());
/// while let Some(message) = stream.next().await {
///     match message? {
///         Message::SkippedLine(skipped) => return Err(skipped.into()),
///         Message::Result(r) => println!("{}", r.result.unwrap_or_default()),
///         _ => {}
///     }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkippedLine {
    /// Why it was skipped.
    pub reason: SkipReason,
    /// The line's first bytes (at most [`EXCERPT_BYTES`](Self::EXCERPT_BYTES),
    /// cut on a character boundary, without surrounding whitespace), as text:
    /// bytes that are not UTF-8 become U+FFFD.
    pub excerpt: String,
    /// The whole line's length in bytes.
    pub len: usize,
}

/// Why the SDK skipped a line ([`SkippedLine::reason`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SkipReason {
    /// Longer than the cap, [`Options::max_line_bytes`](crate::Options::max_line_bytes):
    /// it was discarded as it arrived.
    TooLong {
        /// The cap, in bytes.
        limit: usize,
    },
    /// It starts as a JSON object but does not parse; serde says why.
    Invalid(Arc<serde_json::Error>),
}

impl SkippedLine {
    /// The most bytes of the line that [`excerpt`](Self::excerpt) keeps.
    pub const EXCERPT_BYTES: usize = 256;

    /// A report of `line` (the whole line, or its first bytes when it was too
    /// long), `len` bytes long in all.
    pub(crate) fn new(reason: SkipReason, line: &[u8], len: usize) -> Self {
        let line = line.trim_ascii();
        let mut cut = line.len().min(Self::EXCERPT_BYTES);
        // Back off to the start of a UTF-8 sequence, so no character is cut.
        while cut > 0 && cut < line.len() && (line[cut] & 0xC0) == 0x80 {
            cut -= 1;
        }
        Self {
            reason,
            excerpt: String::from_utf8_lossy(&line[..cut]).into_owned(),
            len,
        }
    }

    /// The bytes it costs in the queue of messages not read yet.
    pub(crate) fn queued_size(&self) -> usize {
        self.excerpt.len() + 64
    }
}

impl SkipReason {
    /// Serde's error, when the line did not parse.
    pub fn json_error(&self) -> Option<&serde_json::Error> {
        match self {
            Self::Invalid(e) => Some(e),
            Self::TooLong { .. } => None,
        }
    }
}

/// Two reasons are equal when they are the same kind with the same limit,
/// or serde errors with the same category, position and text.
impl PartialEq for SkipReason {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::TooLong { limit: a }, Self::TooLong { limit: b }) => a == b,
            (Self::Invalid(a), Self::Invalid(b)) => {
                Arc::ptr_eq(a, b)
                    || (a.classify() == b.classify()
                        && (a.line(), a.column()) == (b.line(), b.column())
                        && a.to_string() == b.to_string())
            }
            _ => false,
        }
    }
}

impl fmt::Display for SkipReason {
    /// The reason in words; serde's error is the
    /// [`source`](std::error::Error::source) of the [`SkippedLine`], not
    /// part of this text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLong { limit } => write!(
                f,
                "it is longer than the limit of {limit} bytes (raise Options::max_line_bytes)"
            ),
            Self::Invalid(_) => f.write_str("it starts as a JSON object but does not parse"),
        }
    }
}

impl fmt::Display for SkippedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skipped a line of {} bytes from the CLI, {:?}: {}",
            self.len, self.excerpt, self.reason
        )
    }
}

impl std::error::Error for SkippedLine {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.reason {
            SkipReason::Invalid(e) => Some(&**e),
            SkipReason::TooLong { .. } => None,
        }
    }
}

/// As JSON, for logs: `{"type": "skipped_line", "reason": "too_long",
/// "limit": …, "len": …, "excerpt": …}`, or with `"reason": "invalid"` and
/// serde's `"error"` text. [`Message::from_value`](super::Message::from_value)
/// does not make it back (it is [`Message::Unknown`](super::Message::Unknown)).
impl Serialize for SkippedLine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(5))?;
        map.serialize_entry("type", "skipped_line")?;
        match &self.reason {
            SkipReason::TooLong { limit } => {
                map.serialize_entry("reason", "too_long")?;
                map.serialize_entry("limit", limit)?;
            }
            SkipReason::Invalid(e) => {
                map.serialize_entry("reason", "invalid")?;
                map.serialize_entry("error", &e.to_string())?;
            }
        }
        map.serialize_entry("len", &self.len)?;
        map.serialize_entry("excerpt", &self.excerpt)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use serde_json::json;

    fn invalid(line: &str) -> SkippedLine {
        let e = serde_json::from_str::<serde_json::Value>(line).unwrap_err();
        SkippedLine::new(
            SkipReason::Invalid(Arc::new(e)),
            line.as_bytes(),
            line.len(),
        )
    }

    #[test]
    fn the_excerpt_is_bounded_and_cut_on_a_character_boundary() {
        let line = format!("  {{\"text\":\"{}", "é".repeat(500));
        let skipped = invalid(&line);
        assert!(skipped.excerpt.len() <= SkippedLine::EXCERPT_BYTES);
        assert!(skipped.excerpt.len() >= SkippedLine::EXCERPT_BYTES - 1);
        assert!(skipped.excerpt.starts_with("{\"text\":\"éé"));
        assert_eq!(skipped.len, line.len());
        let short = invalid("{\"n\":1e999}\n");
        assert_eq!(short.excerpt, "{\"n\":1e999}");
        assert_eq!(
            short.to_string(),
            "skipped a line of 12 bytes from the CLI, \"{\\\"n\\\":1e999}\": it starts as a \
             JSON object but does not parse"
        );
    }

    #[test]
    fn serdes_error_is_reachable_as_the_source() {
        use std::error::Error as _;
        let skipped = invalid("{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te");
        let source = skipped.source().expect("a source");
        let serde = source
            .downcast_ref::<serde_json::Error>()
            .expect("serde_json::Error");
        assert!(serde.is_eof(), "{serde}");
        assert_eq!(
            skipped.reason.json_error().map(ToString::to_string),
            Some(serde.to_string())
        );
        let too_long = SkippedLine::new(SkipReason::TooLong { limit: 8 }, b"{\"a\":\"xx", 100);
        assert!(too_long.source().is_none());
        assert!(
            too_long.to_string().contains("limit of 8 bytes"),
            "{too_long}"
        );
    }

    #[test]
    fn reports_compare_by_what_they_say() {
        assert_eq!(invalid("{\"a\":"), invalid("{\"a\":"));
        assert_ne!(invalid("{\"a\":"), invalid("{\"a\":1e999}"));
        let too_long = |limit| SkipReason::TooLong { limit };
        assert_eq!(too_long(1), too_long(1));
        assert_ne!(too_long(1), too_long(2));
        assert_ne!(too_long(1), invalid("{").reason);
    }

    #[test]
    fn a_report_is_a_message_of_its_own() {
        let message = Message::SkippedLine(SkippedLine::new(
            SkipReason::TooLong { limit: 4 },
            b"{\"type\":\"assistant\"",
            1000,
        ));
        assert_eq!(message.message_type(), Some("skipped_line"));
        assert_eq!(message.session_id(), None);
        assert_eq!(
            message.to_value(),
            json!({"type": "skipped_line", "reason": "too_long", "limit": 4, "len": 1000,
                   "excerpt": "{\"type\":\"assistant\""})
        );
        assert!(matches!(
            Message::from_value(message.to_value()),
            Message::Unknown(_)
        ));
    }
}
